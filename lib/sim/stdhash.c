/* stdhash.c - libstdc++'s unordered-container order; see stdhash.h. */
#include "stdhash.h"

#include "../util/vec.h"

#include <stdlib.h>
#include <string.h>

/* The bucket counts a libstdc++ set passes through as it grows one
 * insertion at a time (13 at the first insertion, then the prime after
 * twice the count), as measured with g++ 12. */
static const uint32_t grow[] = {13, 29, 59, 127, 257, 541, 1109, 2357, 5087, 10273, 20753, 42043, 85229,
                                172933, 351061, 712697, 1447153, 2938679, 5967347, 12117689, 24607243,
                                49969847};

void stdhash_init(stdhash *h) {
  memset(h, 0, sizeof *h);
  h->first = h->free_ = STDHASH_NONE;
  h->nb = 1;
}

void stdhash_free(stdhash *h) {
  free(h->key);
  free(h->val);
  free(h->next);
  free(h->bucket);
  stdhash_init(h);
}

/* The successor link of e, where e may be the list head. */
static uint32_t *succ(stdhash *h, uint32_t e) { return e == STDHASH_HEAD ? &h->first : &h->next[e]; }

static uint32_t bucket_of(const stdhash *h, uint32_t e) { return (uint32_t)(h->key[e] % h->nb); }

static int rehash(stdhash *h, uint32_t nb) {
  uint32_t *b = malloc((size_t)nb * sizeof *b);
  if (!b) return -1;
  memset(b, 0xff, (size_t)nb * sizeof *b);
  uint32_t p = h->first, bbegin = 0;
  free(h->bucket);
  h->bucket = b;
  h->nb = nb;
  h->first = STDHASH_NONE;
  while (p != STDHASH_NONE) {
    uint32_t nx = h->next[p], k = bucket_of(h, p);
    if (b[k] == STDHASH_NONE) {
      h->next[p] = h->first;
      h->first = p;
      b[k] = STDHASH_HEAD;
      if (h->next[p] != STDHASH_NONE) b[bbegin] = p;
      bbegin = k;
    } else {
      uint32_t *l = succ(h, b[k]);
      h->next[p] = *l;
      *l = p;
    }
    p = nx;
  }
  return 0;
}

static uint32_t find(stdhash *h, uint64_t key, uint32_t *before) {
  if (!h->bucket) return STDHASH_NONE;
  uint32_t k = (uint32_t)(key % h->nb), prev = h->bucket[k];
  if (prev == STDHASH_NONE) return STDHASH_NONE;
  for (uint32_t e = *succ(h, prev); e != STDHASH_NONE && bucket_of(h, e) == k; prev = e, e = h->next[e])
    if (h->key[e] == key) {
      if (before) *before = prev;
      return e;
    }
  return STDHASH_NONE;
}

/* libstdc++'s _M_need_rehash with maximum load factor 1. */
static int grow_if_needed(stdhash *h) {
  if (h->n + 1 <= h->next_resize) return 0;
  uint64_t min = h->n + 1 > (h->next_resize ? 0u : 11u) ? h->n + 1 : 11;
  if (min < h->nb) {
    h->next_resize = h->nb;
    return 0;
  }
  size_t i = 0;
  while (i + 1 < sizeof grow / sizeof *grow && grow[i] <= h->nb) i++;
  h->next_resize = grow[i];
  return rehash(h, grow[i]);
}

static uint32_t slot_new(stdhash *h) {
  if (h->free_ != STDHASH_NONE) {
    uint32_t e = h->free_;
    h->free_ = h->next[e];
    return e;
  }
  if (h->n == h->cap) { /* key, val and next share one capacity */
    size_t nc = vec_next_cap(h->cap, (size_t)h->cap + 1, VEC_MIN_CAP, sizeof *h->key, STDHASH_NONE - 1);
    if (!nc || vec_resize(&h->key, nc, sizeof *h->key) || vec_resize(&h->val, nc, sizeof *h->val) ||
        vec_resize(&h->next, nc, sizeof *h->next))
      return STDHASH_NONE;
    h->cap = (uint32_t)nc;
  }
  return h->n; /* no free slot: every slot below n is live */
}

int stdhash_insert(stdhash *h, uint64_t key, uint32_t val) {
  if (find(h, key, NULL) != STDHASH_NONE) return 0;
  if (grow_if_needed(h)) return -1;
  uint32_t e = slot_new(h);
  if (e == STDHASH_NONE) return -1;
  h->key[e] = key;
  h->val[e] = val;
  h->n++;
  uint32_t k = bucket_of(h, e);
  if (h->bucket[k] != STDHASH_NONE) { /* front of its bucket */
    uint32_t *l = succ(h, h->bucket[k]);
    h->next[e] = *l;
    *l = e;
  } else { /* an empty bucket's key goes to the front of the list */
    h->next[e] = h->first;
    h->first = e;
    if (h->next[e] != STDHASH_NONE) h->bucket[bucket_of(h, h->next[e])] = e;
    h->bucket[k] = STDHASH_HEAD;
  }
  return 0;
}

void stdhash_erase(stdhash *h, uint64_t key) {
  uint32_t prev = STDHASH_NONE, e = find(h, key, &prev);
  if (e == STDHASH_NONE) return;
  uint32_t k = bucket_of(h, e), nx = h->next[e];
  uint32_t nk = nx != STDHASH_NONE ? bucket_of(h, nx) : 0;
  if (prev == h->bucket[k]) {
    if (nx == STDHASH_NONE || nk != k) { /* the bucket is now empty */
      if (nx != STDHASH_NONE) h->bucket[nk] = h->bucket[k];
      h->bucket[k] = STDHASH_NONE;
    }
  } else if (nx != STDHASH_NONE && nk != k) {
    h->bucket[nk] = prev;
  }
  *succ(h, prev) = nx;
  h->next[e] = h->free_;
  h->free_ = e;
  h->n--;
}
