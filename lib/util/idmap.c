/* idmap.c - see idmap.h. */
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
  m->direct = 0;
  m->min = 0;
  size_t cap;
  uint64_t lo = UINT64_MAX, hi = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t id = idmap_id(m, (uint32_t)i);
    if (id < lo) lo = id;
    if (id > hi) hi = id;
  }
  if (n > 0 && hi - lo < 2 * (uint64_t)n + n / 2) {
    m->direct = 1;
    m->min = lo;
    m->mask = (size_t)(hi - lo);
    cap = m->mask + 1;
  } else {
    cap = 16;
    while (cap < n + n / 3 + 1) cap <<= 1;
    m->mask = cap - 1;
  }
  m->slots = malloc(cap * sizeof *m->slots);
  if (!m->slots) return -1;
  memset(m->slots, 0xff, cap * sizeof *m->slots);
  return 0;
}

uint32_t idmap_insert(idmap *m, uint32_t idx) {
  uint64_t id = idmap_id(m, idx);
  if (m->direct) {
    uint32_t *s = &m->slots[id - m->min];
    if (*s != IDMAP_NONE) return *s;
    *s = idx;
    return IDMAP_NONE;
  }
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
  if (m->direct) return id - m->min <= m->mask ? m->slots[id - m->min] : IDMAP_NONE;
  for (size_t h = idmap_hash(id) & m->mask;; h = (h + 1) & m->mask) {
    uint32_t s = m->slots[h];
    if (s == IDMAP_NONE || idmap_id(m, s) == id) return s;
  }
}

size_t idmap_memory(const idmap *m) { return (m->mask + 1) * sizeof *m->slots; }

void idmap_free(idmap *m) {
  free(m->slots);
  m->slots = NULL;
}
