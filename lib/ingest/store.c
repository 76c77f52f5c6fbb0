/* store.c - byte pool and string interning; see store.h. */
#include "store.h"

#include <stdlib.h>
#include <string.h>

#include "../util/bigmem.h"

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

uint64_t store_hash(const void *s, size_t n) {
  const unsigned char *p = s;
  uint64_t h = 0x243f6a8885a308d3ull ^ (n * 0x9e3779b97f4a7c15ull);
  while (n >= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
    p += 8;
    n -= 8;
  }
  uint64_t w = 0;
  for (size_t i = 0; i < n; i++) w |= (uint64_t)p[i] << (8 * i);
  h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
  h ^= h >> 31;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 32;
  return h;
}

void strtab_init(strtab *t) { memset(t, 0, sizeof *t); }

static int rehash(strtab *t, size_t nslots) {
  uint32_t *s = calloc(nslots, sizeof *s);
  if (!s) return -1;
  for (uint32_t id = 1; id <= t->n; id++) {
    size_t i = t->hash[id] & (nslots - 1);
    while (s[i]) i = (i + 1) & (nslots - 1);
    s[i] = id;
  }
  free(t->slots);
  t->slots = s;
  t->mask = nslots - 1;
  return 0;
}

uint32_t strtab_find(const strtab *t, const char *s, size_t n) {
  if (!t->slots) return STRTAB_NONE;
  uint64_t h = store_hash(s, n);
  for (size_t i = h & t->mask;; i = (i + 1) & t->mask) {
    uint32_t id = t->slots[i];
    if (!id) return STRTAB_NONE;
    if (t->hash[id] == h && t->len[id] == n && memcmp(t->str[id], s, n) == 0) return id;
  }
}

uint32_t strtab_intern(strtab *t, const char *s, size_t n) {
  if (n > UINT32_MAX - 1) return STRTAB_OOM;
  uint64_t h = store_hash(s, n);
  if (t->slots) {
    for (size_t i = h & t->mask;; i = (i + 1) & t->mask) {
      uint32_t id = t->slots[i];
      if (!id) break;
      if (t->hash[id] == h && t->len[id] == n && memcmp(t->str[id], s, n) == 0) return id;
    }
  }
  if (t->n + 1 >= t->cap) {
    uint32_t cap = t->cap ? t->cap * 2 : 256;
    const char **str = realloc(t->str, cap * sizeof *str);
    if (str) t->str = str;
    uint32_t *len = realloc(t->len, cap * sizeof *len);
    if (len) t->len = len;
    uint64_t *hash = realloc(t->hash, cap * sizeof *hash);
    if (hash) t->hash = hash;
    if (!str || !len || !hash) return STRTAB_OOM;
    t->cap = cap;
  }
  if (!t->slots || (size_t)(t->n + 1) * 4 > (t->mask + 1) * 3) {
    if (rehash(t, t->slots ? (t->mask + 1) * 2 : 512)) return STRTAB_OOM;
  }
  char *copy = bpool_alloc(&t->pool, n + 1);
  if (!copy) return STRTAB_OOM;
  memcpy(copy, s, n);
  copy[n] = 0;
  uint32_t id = ++t->n;
  t->str[id] = copy;
  t->len[id] = (uint32_t)n;
  t->hash[id] = h;
  size_t i = h & t->mask;
  while (t->slots[i]) i = (i + 1) & t->mask;
  t->slots[i] = id;
  return id;
}

size_t strtab_memory(const strtab *t) {
  return t->pool.bytes + (t->slots ? (t->mask + 1) * sizeof *t->slots : 0) +
         (size_t)t->cap * (sizeof *t->str + sizeof *t->len + sizeof *t->hash);
}

void strtab_free(strtab *t) {
  free(t->slots);
  free(t->str);
  free(t->len);
  free(t->hash);
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
