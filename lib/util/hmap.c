/* hmap.c - see hmap.h. */
#include "hmap.h"

#include <stdlib.h>

void hmap_free(hmap *m) {
  free(m->hash);
  free(m->val);
  memset(m, 0, sizeof *m);
}

void hmap_clear(hmap *m) {
  if (m->val) memset(m->val, 0xff, (m->mask + 1) * sizeof *m->val);
  m->n = 0;
}

size_t hmap_memory(const hmap *m) {
  return m->val ? (m->mask + 1) * (sizeof *m->hash + sizeof *m->val) : 0;
}

uint64_t hmap_hash_bytes(const void *s, size_t n) {
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

static void place(uint64_t *hash, uint32_t *val, size_t mask, uint64_t h, uint32_t v) {
  size_t i = (size_t)h & mask;
  while (val[i] != HMAP_NONE) i = (i + 1) & mask;
  hash[i] = h;
  val[i] = v;
}

static int rehash(hmap *m, size_t slots) {
  if (slots > SIZE_MAX / sizeof(uint64_t)) return -1;
  uint64_t *hash = malloc(slots * sizeof *hash);
  uint32_t *val = malloc(slots * sizeof *val);
  if (!hash || !val) {
    free(hash);
    free(val);
    return -1;
  }
  memset(val, 0xff, slots * sizeof *val);
  if (m->val)
    for (size_t i = 0; i <= m->mask; i++)
      if (m->val[i] != HMAP_NONE) place(hash, val, slots - 1, m->hash[i], m->val[i]);
  free(m->hash);
  free(m->val);
  m->hash = hash;
  m->val = val;
  m->mask = slots - 1;
  return 0;
}

int hmap_reserve(hmap *m, size_t n) {
  size_t slots = m->val ? m->mask + 1 : 16;
  while (n > slots / 4 * 3) {
    if (slots > SIZE_MAX / 2) return -1;
    slots *= 2;
  }
  return m->val && slots == m->mask + 1 ? 0 : rehash(m, slots);
}

int hmap_add(hmap *m, uint64_t h, uint32_t val) {
  if (val == HMAP_NONE || hmap_reserve(m, m->n + 1)) return -1; /* HMAP_NONE marks empty slots */
  place(m->hash, m->val, m->mask, h, val);
  m->n++;
  return 0;
}

static uint32_t put(hmap *m, uint64_t key, uint32_t val, int *oom, int replace) {
  uint64_t h = hmap_mix(key);
  for (size_t i = hmap_slot(m, h); m->val && m->val[i] != HMAP_NONE; i = hmap_next(m, i)) {
    if (m->hash[i] != h) continue;
    uint32_t had = m->val[i];
    if (replace) m->val[i] = val;
    return had;
  }
  if (hmap_add(m, h, val)) *oom = 1;
  return HMAP_NONE;
}

uint32_t hmap_put_u64(hmap *m, uint64_t key, uint32_t val, int *oom) { return put(m, key, val, oom, 0); }

uint32_t hmap_set_u64(hmap *m, uint64_t key, uint32_t val, int *oom) { return put(m, key, val, oom, 1); }
