/* pool.c - message buffers by size class; see pool.h. */
#include "pool.h"
#include "../util/vec.h"

#include <stdlib.h>
#include <string.h>

static unsigned size_class(uint64_t bytes) {
  return bytes <= 64 ? 6 : 64u - (unsigned)__builtin_clzll(bytes - 1);
}

int rp_pool_init(rp_pool *p, uint64_t max_bytes) {
  memset(p, 0, sizeof *p);
  p->max_bytes = max_bytes;
  /* Written, not calloc'd: untouched zeroed memory is the kernel's one
   * shared zero page, and sends read from it at cache speed, which made a
   * fresh replay's large messages up to 2x faster than the same messages
   * from real memory (a calibration's later runs measured the latter). */
  p->source = malloc(max_bytes ? max_bytes : 1);
  if (!p->source) return -1;
  memset(p->source, 0x5a, max_bytes ? max_bytes : 1);
  if (!max_bytes) return 0;
  void *big = rp_pool_get(p, max_bytes); /* the largest message never waits for malloc */
  if (!big) return -1;
  memset(big, 0, max_bytes);              /* nor for the kernel's first touch */
  rp_pool_put(p, big, max_bytes);
  return p->n_free[size_class(max_bytes)] ? 0 : -1;
}

void *rp_pool_get(rp_pool *p, uint64_t bytes) {
  if (!bytes) return p->source;
  unsigned c = size_class(bytes);
  if (p->n_free[c]) return p->free_[c][--p->n_free[c]];
  void *b = malloc((size_t)1 << c);
  if (b) p->allocated += (uint64_t)1 << c;
  return b;
}

void rp_pool_put(rp_pool *p, void *block, uint64_t bytes) {
  if (!bytes || !block) return;
  unsigned c = size_class(bytes);
  if (VEC_ROOM(p->free_[c], p->n_free[c], p->cap_free[c], 1)) { /* cannot keep it: give it back to the system */
    free(block);
    p->allocated -= (uint64_t)1 << c;
    return;
  }
  p->free_[c][p->n_free[c]++] = block;
}

void rp_pool_free(rp_pool *p) {
  for (int c = 0; c < 64; c++) {
    for (uint32_t i = 0; i < p->n_free[c]; i++) free(p->free_[c][i]);
    free(p->free_[c]);
  }
  free(p->source);
  memset(p, 0, sizeof *p);
}
