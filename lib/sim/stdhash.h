/* stdhash.h - the iteration order of ASTRA-sim's std::unordered_set and
 * std::unordered_map over integer node ids (private).
 *
 * The reference issues a custom collective's dependency-free nodes in the
 * order it walks a std::unordered_set (built from a walk of a
 * std::unordered_map), and that order decides which message enters a
 * congested link first. It is not ascending, nor descending once a set has
 * grown past a rehash: libstdc++ puts a key at the front of its bucket, an
 * empty bucket's key at the front of the whole list, and a rehash walks the
 * list re-inserting each key the same way. This module keeps that list for
 * a set of integer keys (identity hash, maximum load factor 1, the bucket
 * counts libstdc++ grows through), nothing more: lookups are by walking a
 * bucket, which is fine for the small sets custom collectives have. */
#ifndef CHAKRA_SIM_STDHASH_H
#define CHAKRA_SIM_STDHASH_H

#include <stdint.h>

typedef struct stdhash {
  uint64_t *key;          /* per entry */
  uint32_t *val;          /* per entry: the caller's value (a node index) */
  uint32_t *next;         /* per entry: next in iteration order */
  uint32_t *bucket;       /* per bucket: entry before its first, or STDHASH_HEAD; STDHASH_NONE = empty */
  uint32_t first;         /* first entry in iteration order */
  uint32_t n, cap, free_; /* live entries, slots, free list of slots */
  uint32_t nb;            /* buckets (1 until the first insertion, as libstdc++) */
  uint64_t next_resize;
} stdhash;

#define STDHASH_NONE UINT32_MAX
#define STDHASH_HEAD (UINT32_MAX - 1)

void stdhash_init(stdhash *h);
void stdhash_free(stdhash *h);
/* Inserts key (with val) unless present. Returns 0, or -1 when out of memory. */
int stdhash_insert(stdhash *h, uint64_t key, uint32_t val);
/* Removes key if present. */
void stdhash_erase(stdhash *h, uint64_t key);
/* Iteration: for (uint32_t e = h->first; e != STDHASH_NONE; e = h->next[e]) ... h->key[e], h->val[e] */

#endif
