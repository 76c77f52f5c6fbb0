/* cmp.c - see cmp.h. */
#include "cmp.h"

#include <stdint.h>
#include <string.h>

#define CMP(T)                  \
  T x, y;                       \
  memcpy(&x, a, sizeof x);      \
  memcpy(&y, b, sizeof y);      \
  return (x > y) - (x < y)

int cmp_u32(const void *a, const void *b) { CMP(uint32_t); }
int cmp_u64(const void *a, const void *b) { CMP(uint64_t); }
int cmp_i64(const void *a, const void *b) { CMP(int64_t); }
int cmp_double(const void *a, const void *b) { CMP(double); }

int cmp_u64_pair(const void *a, const void *b) {
  int c = cmp_u64(a, b);
  return c ? c : cmp_u64((const uint64_t *)a + 1, (const uint64_t *)b + 1);
}
