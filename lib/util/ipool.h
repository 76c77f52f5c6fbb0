/* ipool.h - growth of index-addressed pools (private to libchakra).
 *
 * The simulator keeps messages, posted receives and batched callbacks in
 * arrays addressed by 32-bit index (index 0 meaning "none") with a free
 * list threaded through the elements; this is the one place that grows
 * such an array. */
#ifndef CHAKRA_IPOOL_H
#define CHAKRA_IPOOL_H

#include <stdint.h>
#include <stdlib.h>
#include "vec.h"

/* Returns arr with room for index n (capacity doubling from 1024), or NULL
 * when out of memory, in which case arr and *cap are unchanged. */
static inline void *ipool_reserve(void *arr, uint32_t *cap, uint32_t n, size_t elem) {
  if (n < *cap) return arr;
  size_t c = *cap;
  if (vec_room_by(&arr, &c, n, 1, elem, 1024, UINT32_MAX, realloc)) return NULL;
  *cap = (uint32_t)c;
  return arr;
}

#endif
