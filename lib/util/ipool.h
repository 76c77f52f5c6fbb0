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
#include <string.h>
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

/* An index of the pool at parr (any T **, passed as a void *) to use:
 * the head of the free list *free_head (which moves on to the uint32_t
 * at offset next_off of that element), else index *n, the array grown
 * for it; 0 ("none") when out of memory, nothing changed. */
static inline uint32_t ipool_take(void *parr, uint32_t *n, uint32_t *cap, uint32_t *free_head, size_t elem,
                                  size_t next_off) {
  char *arr;
  memcpy(&arr, parr, sizeof arr);
  uint32_t i = *free_head;
  if (i) {
    memcpy(free_head, arr + (size_t)i * elem + next_off, sizeof *free_head);
    return i;
  }
  void *grown = ipool_reserve(arr, cap, *n, elem);
  if (!grown) return 0;
  memcpy(parr, &grown, sizeof grown);
  return (*n)++;
}

#endif
