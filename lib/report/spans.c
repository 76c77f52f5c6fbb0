/* spans.c - busy time from node intervals; see spans.h. */
#include "spans.h"

#include <stdlib.h>

static int cmp_start(const void *a, const void *b) {
  const uint64_t *x = a, *y = b;
  return x[0] < y[0] ? -1 : x[0] > y[0];
}

uint64_t spans_union(uint64_t *v, uint32_t k) {
  uint32_t sorted = 1;
  while (sorted < k && v[2 * sorted] >= v[2 * sorted - 2]) sorted++;
  if (sorted < k) qsort(v, k, 2 * sizeof *v, cmp_start); /* chains come sorted */
  uint64_t total = 0, lo = 0, hi = 0;
  for (uint32_t j = 0; j < k; j++) {
    uint64_t s = v[2 * j], t = v[2 * j + 1];
    if (j == 0 || s > hi) {
      total += hi - lo;
      lo = s;
      hi = t;
    } else if (t > hi) {
      hi = t;
    }
  }
  return total + (hi - lo);
}
