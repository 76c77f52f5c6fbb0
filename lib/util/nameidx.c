/* nameidx.c - names to record numbers; see nameidx.h. */
#include "nameidx.h"

#include <stdlib.h>
#include <string.h>

static const char *rec_name(nameidx_recs r, size_t i) {
  const char *p;
  memcpy(&p, (const char *)r.base + i * r.stride + r.off, sizeof p);
  return p;
}

typedef struct probe {
  nameidx_recs r;
  const char *name;
} probe;

static int same_name(const void *ctx, uint32_t val) {
  const probe *p = ctx;
  return strcmp(rec_name(p->r, val), p->name) == 0;
}

static uint32_t find(const nameidx *x, nameidx_recs r, const char *name, uint64_t h) {
  probe p = {r, name};
  return hmap_find(&x->map, h, same_name, &p);
}

int nameidx_sync(nameidx *x, nameidx_recs r, size_t count) {
  if (count <= x->n) return 0;
  if (count >= UINT32_MAX || hmap_reserve(&x->map, x->map.n + (count - x->n))) return -1;
  for (; x->n < count; x->n++) {
    const char *name = rec_name(r, x->n);
    uint64_t h = hmap_hash_str(name, strlen(name));
    if (find(x, r, name, h) == HMAP_NONE && hmap_add(&x->map, h, (uint32_t)x->n)) return -1;
  }
  return 0;
}

long nameidx_find(const nameidx *x, nameidx_recs r, const char *name) {
  uint32_t i = find(x, r, name, hmap_hash_str(name, strlen(name)));
  return i == HMAP_NONE ? -1 : (long)i;
}

void nameidx_clear(nameidx *x) {
  hmap_clear(&x->map);
  x->n = 0;
}

void nameidx_free(nameidx *x) {
  hmap_free(&x->map);
  x->n = 0;
}
