/* vec.h - growable arrays (private to libchakra): the one place that
 * grows an array kept as a pointer, a count and a capacity.
 *
 * Arrays stay plain C arrays in their owners' structs (T *v; n; cap), so
 * indexing and the code that reads them are unchanged; only growth comes
 * here. Capacity doubles (amortised O(1) appends) from VEC_MIN_CAP, every
 * size is checked for overflow, and a failure leaves the array and its
 * capacity as they were, so the owner still frees what it had. The
 * capacity may be a size_t or a uint32_t (most index-addressed tables
 * keep 32-bit counts); a uint32_t capacity never exceeds UINT32_MAX. */
#ifndef CHAKRA_VEC_H
#define CHAKRA_VEC_H

#include <stddef.h>
#include <stdint.h>

#define VEC_MIN_CAP 16

/* The capacity to grow cap to so that it holds need elements of elem
 * bytes: cap itself when it does, else doubled from max(cap, min) until it
 * does. 0 when that is more than max elements or SIZE_MAX bytes. */
size_t vec_next_cap(size_t cap, size_t need, size_t min, size_t elem, size_t max);

/* Reallocates the array whose pointer is at parr (any T **, passed as a
 * void *) to exactly cap elements of elem bytes; -1, the array unchanged,
 * when out of memory or when the size overflows. */
int vec_resize(void *parr, size_t cap, size_t elem);

/* Grows the array at parr so it holds n + k elements; 0, or -1 with the
 * array and capacity unchanged. Use the macros below. */
int vec_room_z(void *parr, size_t *cap, size_t n, size_t k, size_t elem);
int vec_room_u32(void *parr, uint32_t *cap, size_t n, size_t k, size_t elem);

/* The same with a capacity from min to max elements and another
 * allocator (re as realloc: NULL on failure, the block unchanged). */
int vec_room_by(void *parr, size_t *cap, size_t n, size_t k, size_t elem, size_t min, size_t max,
                void *(*re)(void *, size_t));

#define VEC_ROOM_(arr, cap, n, k) \
  _Generic(&(cap), size_t *: vec_room_z, uint32_t *: vec_room_u32)(&(arr), &(cap), (n), (k), sizeof *(arr))

/* The macros test for room inline (appends in hot loops pay no call) and
 * evaluate their arguments more than once: pass plain lvalues. */

/* Room for need elements in arr (cap its capacity): 0, or -1 when out of
 * memory (arr and cap unchanged). */
#define VEC_RESERVE(arr, cap, need) ((size_t)(need) <= (size_t)(cap) ? 0 : VEC_ROOM_(arr, cap, 0, (size_t)(need)))

/* Room for k more elements after the n in use (n + k overflowing fails). */
#define VEC_ROOM(arr, n, cap, k) \
  ((size_t)(cap) - (size_t)(n) >= (size_t)(k) ? 0 : VEC_ROOM_(arr, cap, (size_t)(n), (size_t)(k)))

/* A pointer to a new last element (n is incremented; the element is not
 * initialised), or NULL when out of memory (nothing changed). */
#define VEC_PUSH(arr, n, cap) (VEC_ROOM(arr, n, cap, 1) ? NULL : &(arr)[(n)++])

/* For arrays whose owner keeps no capacity (a public struct's list, a
 * list grown in one place only): the capacity is implied by the count,
 * the smallest power of two >= max(n, VEC_MIN_CAP), so an array must only
 * ever grow through these. Room for one more after the n in use: 0 or
 * -1 (nothing changed). */
int vec_room_implied(void *parr, size_t n, size_t elem);
#define VEC_APPEND(arr, n) (vec_room_implied(&(arr), (size_t)(n), sizeof *(arr)) ? NULL : &(arr)[(n)++])

#endif
