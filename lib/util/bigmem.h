/* bigmem.h - large arrays backed by transparent huge pages (private).
 *
 * On the virtual machines chakra-c is measured on, touching a fresh 4 KiB
 * page costs several microseconds, so loading a large trace used to be
 * dominated by page faults: per-node tables of 100k-node ranks fault
 * 25,000 times per 100 MB. From 1 MiB on, these arrays are mapped directly
 * and marked for huge pages (50 faults per 100 MB); smaller ones come from
 * malloc. bigmem_calloc() memory is zeroed. Free with bigmem_free(). */
#ifndef CHAKRA_BIGMEM_H
#define CHAKRA_BIGMEM_H

#include <stddef.h>
#include <stdint.h>

#include "vec.h"

void *bigmem_alloc(size_t n);
void *bigmem_calloc(size_t n);
/* Grows or shrinks p (NULL: allocates); NULL on failure, p unchanged. */
void *bigmem_realloc(void *p, size_t n);
void bigmem_free(void *p);

/* vec.h's VEC_ROOM for an array held in bigmem (a size_t capacity):
 * room for k more elements after the n in use, capacity doubling from
 * 1024; -1 when out of memory (the array and cap unchanged). */
#define BIGMEM_ROOM(arr, n, cap, k) \
  ((cap) - (n) >= (k) ? 0 : vec_room_by(&(arr), &(cap), (n), (k), sizeof *(arr), 1024, SIZE_MAX, bigmem_realloc))

#endif
