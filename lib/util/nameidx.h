/* nameidx.h - an index from names to record numbers over the caller's
 * array of records (private to libchakra): util/hmap keyed by the name
 * each record holds.
 *
 * Communicator groups are looked up by name once per collective, and a job
 * of 32,768 ranks has thousands of them: a scan per lookup made reading a
 * groups file, planning `coll expand` and validating quadratic in the rank
 * count. The records stay where the caller keeps them (the index holds
 * record numbers only), each record's name being the `const char *` at
 * offset `off` of it; the caller passes the array again at every call, so
 * it may grow between calls. Several records of one name: the lowest
 * number is found, as a scan from the front would (only the first record
 * of a name is indexed). */
#ifndef CHAKRA_UTIL_NAMEIDX_H
#define CHAKRA_UTIL_NAMEIDX_H

#include <stddef.h>
#include <stdint.h>

#include "hmap.h"

typedef struct nameidx {
  hmap map;  /* hash of a name -> its first record's number */
  size_t n;  /* records 0..n-1 are indexed */
} nameidx;

/* Where the records are: name of record i = *(const char **)(base + i * stride + off). */
typedef struct nameidx_recs {
  const void *base;
  size_t stride, off;
} nameidx_recs;

/* Indexes records x->n..count-1 (after the caller appended them). Returns
 * 0, or -1 when out of memory (the index then still covers what it did). */
int nameidx_sync(nameidx *x, nameidx_recs r, size_t count);
/* The lowest record number of that name among the indexed ones, or -1. */
long nameidx_find(const nameidx *x, nameidx_recs r, const char *name);
/* Forgets every record (after the caller removed or reordered them). */
void nameidx_clear(nameidx *x);
void nameidx_free(nameidx *x);

#endif
