/* vec.c - see vec.h. */
#include "vec.h"

#include <stdlib.h>
#include <string.h>

size_t vec_next_cap(size_t cap, size_t need, size_t min, size_t elem, size_t max) {
  if (need <= cap) return cap;
  size_t lim = elem ? SIZE_MAX / elem : SIZE_MAX;
  if (max < lim) lim = max;
  if (need > lim) return 0;
  size_t c = cap > min ? cap : min;
  if (c == 0) c = 1;
  while (c < need) c = c > lim / 2 ? lim : c * 2;
  return c;
}

int vec_resize(void *parr, size_t cap, size_t elem) {
  if (elem && cap > SIZE_MAX / elem) return -1;
  void *p;
  memcpy(&p, parr, sizeof p);
  size_t bytes = cap * elem;
  void *q = realloc(p, bytes ? bytes : 1);
  if (!q) return -1;
  memcpy(parr, &q, sizeof q);
  return 0;
}

int vec_room_by(void *parr, size_t *cap, size_t n, size_t k, size_t elem, size_t min, size_t max,
                void *(*re)(void *, size_t)) {
  if (k > SIZE_MAX - n) return -1;
  size_t need = n + k;
  if (need <= *cap) return 0;
  size_t c = vec_next_cap(*cap, need, min, elem, max);
  void *p;
  memcpy(&p, parr, sizeof p);
  void *q = c ? re(p, c * elem) : NULL; /* vec_next_cap kept c * elem in range */
  if (!q) return -1;
  memcpy(parr, &q, sizeof q);
  *cap = c;
  return 0;
}

int vec_room_z(void *parr, size_t *cap, size_t n, size_t k, size_t elem) {
  return vec_room_by(parr, cap, n, k, elem, VEC_MIN_CAP, SIZE_MAX, realloc);
}

int vec_room_u32(void *parr, uint32_t *cap, size_t n, size_t k, size_t elem) {
  size_t c = *cap;
  if (vec_room_by(parr, &c, n, k, elem, VEC_MIN_CAP, UINT32_MAX, realloc)) return -1;
  *cap = (uint32_t)c;
  return 0;
}

int vec_room_implied(void *parr, size_t n, size_t elem) {
  if (n && (n < VEC_MIN_CAP || (n & (n - 1)))) return 0; /* below the implied capacity */
  size_t cap = n;
  return vec_room_by(parr, &cap, n, 1, elem, VEC_MIN_CAP, SIZE_MAX, realloc);
}
