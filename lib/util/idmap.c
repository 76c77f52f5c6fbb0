/* idmap.c - see idmap.h. Linear probing at load factor <= 1/2. */
#include "idmap.h"

#include <stdlib.h>
#include <string.h>

static inline size_t idmap_hash(uint64_t id) {
  id ^= id >> 33;
  id *= 0xff51afd7ed558ccdull;
  id ^= id >> 33;
  return (size_t)id;
}

static inline uint64_t idmap_id(const idmap *m, uint32_t idx) {
  uint64_t id;
  memcpy(&id, m->base + (size_t)idx * m->stride, sizeof id);
  return id;
}

int idmap_init(idmap *m, size_t n, const void *base, size_t stride) {
  m->base = base;
  m->stride = stride;
  size_t cap = 16;
  while (cap < 2 * n) cap <<= 1;
  m->slots = malloc(cap * sizeof *m->slots);
  if (!m->slots) return -1;
  memset(m->slots, 0xff, cap * sizeof *m->slots);
  m->mask = cap - 1;
  return 0;
}

uint32_t idmap_insert(idmap *m, uint32_t idx) {
  uint64_t id = idmap_id(m, idx);
  for (size_t h = idmap_hash(id) & m->mask;; h = (h + 1) & m->mask) {
    uint32_t s = m->slots[h];
    if (s == IDMAP_NONE) {
      m->slots[h] = idx;
      return IDMAP_NONE;
    }
    if (idmap_id(m, s) == id) return s;
  }
}

uint32_t idmap_find(const idmap *m, uint64_t id) {
  for (size_t h = idmap_hash(id) & m->mask;; h = (h + 1) & m->mask) {
    uint32_t s = m->slots[h];
    if (s == IDMAP_NONE || idmap_id(m, s) == id) return s;
  }
}

void idmap_free(idmap *m) {
  free(m->slots);
  m->slots = NULL;
}
