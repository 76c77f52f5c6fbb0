/* pool.h - the replayer's message buffers (private to lib/replay).
 *
 * The bytes of a replayed message mean nothing, so every send reads one
 * shared source block (filled, so it is real memory) as large as the largest message (MPI allows
 * any number of pending sends from one buffer). What is written - receive
 * buffers, collective results, memory copies - comes from free lists by
 * power-of-two size class, so a run allocates only as many blocks as it
 * ever has in flight at once, never one per node. The largest class is
 * allocated up front. */
#ifndef CHAKRA_REPLAY_POOL_H
#define CHAKRA_REPLAY_POOL_H

#include <stddef.h>
#include <stdint.h>

typedef struct rp_pool {
  void *source;         /* max_bytes zeroed bytes, read-only by convention */
  uint64_t max_bytes;
  void **free_[64];     /* per class: blocks not in use */
  uint32_t n_free[64], cap_free[64];
  uint64_t allocated;   /* bytes of blocks ever allocated */
} rp_pool;

/* Returns 0, or -1 when out of memory. */
int rp_pool_init(rp_pool *p, uint64_t max_bytes);
/* A block of at least bytes (NULL when out of memory); give it back with
 * rp_pool_put and the same size. Zero bytes gives the source block. */
void *rp_pool_get(rp_pool *p, uint64_t bytes);
void rp_pool_put(rp_pool *p, void *block, uint64_t bytes);
void rp_pool_free(rp_pool *p);

#endif
