/* nameidx.c - names to record numbers; see nameidx.h. */
#include "nameidx.h"

#include <stdlib.h>
#include <string.h>

uint64_t nameidx_hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static const char *rec_name(nameidx_recs r, size_t i) {
  const char *p;
  memcpy(&p, (const char *)r.base + i * r.stride + r.off, sizeof p);
  return p;
}

/* Record i into its slot; records are put in ascending order, so among
 * equal names the lowest number comes first on every probe sequence. */
static void put(uint32_t *slot, size_t cap, nameidx_recs r, size_t i) {
  size_t k = (size_t)nameidx_hash(rec_name(r, i)) & (cap - 1);
  while (slot[k]) k = (k + 1) & (cap - 1);
  slot[k] = (uint32_t)i + 1;
}

int nameidx_sync(nameidx *x, nameidx_recs r, size_t count) {
  if (count <= x->n) return 0;
  if (count >= UINT32_MAX) return -1;
  if (2 * count > x->cap) {
    size_t cap = 16;
    while (cap < 2 * count) cap *= 2;
    uint32_t *slot = calloc(cap, sizeof *slot);
    if (!slot) return -1;
    for (size_t i = 0; i < x->n; i++) put(slot, cap, r, i);
    free(x->slot);
    x->slot = slot, x->cap = cap;
  }
  for (; x->n < count; x->n++) put(x->slot, x->cap, r, x->n);
  return 0;
}

long nameidx_find(const nameidx *x, nameidx_recs r, const char *name) {
  if (!x->cap) return -1;
  for (size_t k = (size_t)nameidx_hash(name) & (x->cap - 1); x->slot[k]; k = (k + 1) & (x->cap - 1)) {
    size_t i = x->slot[k] - 1;
    if (strcmp(rec_name(r, i), name) == 0) return (long)i;
  }
  return -1;
}

void nameidx_clear(nameidx *x) {
  if (x->cap) memset(x->slot, 0, x->cap * sizeof *x->slot);
  x->n = 0;
}

void nameidx_free(nameidx *x) {
  free(x->slot);
  memset(x, 0, sizeof *x);
}
