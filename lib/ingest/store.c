/* store.c - byte pool and string interning; see store.h. */
#include "store.h"

#include <stdlib.h>
#include <string.h>

#include "../util/bigmem.h"
#include "../util/vec.h"

#define CHUNK ((2u << 20) - 128)

struct bpool_chunk {
  bpool_chunk *next;
  char data[];
};

char *bpool_alloc(bpool *p, size_t n) {
  if (p->cur && (size_t)(p->lim - p->cur) >= n) {
    char *r = p->cur;
    p->cur += n;
    return r;
  }
  if (p->oom) return NULL;
  /* Small pools stay small: chunks double from 64 KiB up to CHUNK. Big
   * objects get a chunk of their own behind the current one, so the space
   * left in the current chunk is not wasted. */
  if (!p->next_size) p->next_size = (64u << 10) - 128;
  int big = n > p->next_size / 4;
  size_t size = big ? n : p->next_size;
  if (!big && p->next_size < CHUNK) p->next_size = p->next_size * 2 + 128 > CHUNK ? CHUNK : p->next_size * 2 + 128;
  bpool_chunk *c = bigmem_alloc(sizeof *c + size);
  if (!c) {
    p->oom = 1;
    return NULL;
  }
  p->bytes += sizeof *c + size;
  if (big && p->head) {
    c->next = p->head->next;
    p->head->next = c;
    return c->data;
  }
  c->next = p->head;
  p->head = c;
  p->cur = c->data + n;
  p->lim = c->data + size;
  return c->data;
}

void *bpool_alloc8(bpool *p, size_t n) {
  if (n > SIZE_MAX - 7) return NULL;
  char *r = bpool_alloc(p, n + 7);
  return r ? (void *)(((uintptr_t)r + 7) & ~(uintptr_t)7) : NULL;
}

void bpool_free(bpool *p) {
  for (bpool_chunk *c = p->head; c;) {
    bpool_chunk *next = c->next;
    bigmem_free(c);
    c = next;
  }
  memset(p, 0, sizeof *p);
}

void strtab_init(strtab *t) { memset(t, 0, sizeof *t); }

static const char *key_of(const void *ctx, uint32_t id, size_t *len) {
  const strtab *t = ctx;
  *len = t->len[id];
  return t->str[id];
}

static uint32_t find(const strtab *t, uint64_t h, const char *s, size_t n) {
  uint32_t id = hmap_find_str(&t->ids, h, s, n, key_of, t);
  return id == HMAP_NONE ? STRTAB_NONE : id;
}

uint32_t strtab_find(const strtab *t, const char *s, size_t n) { return find(t, hmap_hash_str(s, n), s, n); }

uint32_t strtab_intern(strtab *t, const char *s, size_t n) {
  if (n > UINT32_MAX - 1) return STRTAB_OOM;
  uint64_t h = hmap_hash_str(s, n);
  uint32_t id = find(t, h, s, n);
  if (id != STRTAB_NONE) return id;
  if (t->n + 1 >= t->cap) { /* ids start at 1 */
    size_t cap = vec_next_cap(t->cap, (size_t)t->n + 2, 256, sizeof *t->str, UINT32_MAX - 1);
    if (!cap || vec_resize(&t->str, cap, sizeof *t->str) || vec_resize(&t->len, cap, sizeof *t->len))
      return STRTAB_OOM;
    t->cap = (uint32_t)cap;
  }
  char *copy = bpool_alloc(&t->pool, n + 1);
  if (!copy || hmap_add(&t->ids, h, t->n + 1)) return STRTAB_OOM;
  memcpy(copy, s, n);
  copy[n] = 0;
  id = ++t->n;
  t->str[id] = copy;
  t->len[id] = (uint32_t)n;
  return id;
}

size_t strtab_memory(const strtab *t) {
  return t->pool.bytes + hmap_memory(&t->ids) + (size_t)t->cap * (sizeof *t->str + sizeof *t->len);
}

void strtab_free(strtab *t) {
  hmap_free(&t->ids);
  free(t->str);
  free(t->len);
  bpool_free(&t->pool);
  memset(t, 0, sizeof *t);
}

int store_sort_kv(store_kv *a, size_t n) {
  if (n < 2) return 0;
  uint64_t or_ = 0, and_ = ~0ull;
  for (size_t i = 0; i < n; i++) or_ |= a[i].k, and_ &= a[i].k;
  uint64_t diff = or_ ^ and_;
  store_kv *tmp = bigmem_alloc(n * sizeof *tmp);
  if (!tmp) return -1;
  store_kv *src = a, *dst = tmp;
  uint32_t cnt[2048];
  for (int shift = 0; shift < 64; shift += 11) {
    if (!((diff >> shift) & 2047)) continue;
    memset(cnt, 0, sizeof cnt);
    for (size_t i = 0; i < n; i++) cnt[(src[i].k >> shift) & 2047]++;
    uint32_t sum = 0;
    for (int d = 0; d < 2048; d++) {
      uint32_t t = cnt[d];
      cnt[d] = sum;
      sum += t;
    }
    for (size_t i = 0; i < n; i++) dst[cnt[(src[i].k >> shift) & 2047]++] = src[i];
    store_kv *t = src;
    src = dst;
    dst = t;
  }
  if (src != a) memcpy(a, src, n * sizeof *a);
  bigmem_free(tmp);
  return 0;
}

size_t store_kv_lower_bound(const store_kv *a, size_t m, uint64_t key) {
  size_t lo = 0, hi = m;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (a[mid].k < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

int store_kv_find(const store_kv *a, size_t m, uint64_t key, uint32_t *v) {
  size_t lo = store_kv_lower_bound(a, m, key);
  if (lo < m && a[lo].k == key) {
    *v = a[lo].v;
    return 1;
  }
  return 0;
}
