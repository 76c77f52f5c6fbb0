/* hmap.h - the hash map of libchakra (private): open addressing with
 * linear probing, mapping a key to a 32-bit value (an index into the
 * owner's records, as ids, names and groups are kept).
 *
 * The table holds each entry's full 64-bit hash beside its value, so it
 * grows without looking at keys and compares hashes before keys. Integer
 * keys need nothing else: their hash (hmap_mix) is a bijection, so equal
 * hashes are equal keys and the table is the whole map. Other keys stay in
 * the owner's records; lookups take an equality test on a candidate value
 * (for strings: where the string of a value is; hmap_find_str). Load is at
 * most 3/4; the table has a power-of-two number of slots. */
#ifndef CHAKRA_HMAP_H
#define CHAKRA_HMAP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define HMAP_NONE UINT32_MAX /* no value; also what marks an empty slot */

typedef struct hmap {
  uint64_t *hash;
  uint32_t *val; /* HMAP_NONE in an empty slot */
  size_t mask;   /* slots - 1; 0 before the first insertion */
  size_t n;      /* entries */
} hmap;

/* A zeroed hmap is an empty map. */
void hmap_free(hmap *m);
/* Removes every entry, keeping the table's room. */
void hmap_clear(hmap *m);
/* Room for n entries without growing; -1 when out of memory. */
int hmap_reserve(hmap *m, size_t n);
/* Bytes held by the table. */
size_t hmap_memory(const hmap *m);

/* A bijective mix of a 64-bit integer (splitmix64's finaliser). */
static inline uint64_t hmap_mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

/* A fast hash of n bytes (not for adversarial input). */
uint64_t hmap_hash_bytes(const void *s, size_t n);

/* Adds val under hash h without looking for an equal key (the caller
 * has). -1 when out of memory, or for val HMAP_NONE (no value can be). */
int hmap_add(hmap *m, uint64_t h, uint32_t val);

/* The first slot probed for h; hmap_next walks on from slot i. */
static inline size_t hmap_slot(const hmap *m, uint64_t h) { return (size_t)h & m->mask; }
static inline size_t hmap_next(const hmap *m, size_t i) { return (i + 1) & m->mask; }

/* The value under hash h for which eq(ctx, value) is nonzero, or
 * HMAP_NONE. */
typedef int (*hmap_eq_fn)(const void *ctx, uint32_t val);
static inline uint32_t hmap_find(const hmap *m, uint64_t h, hmap_eq_fn eq, const void *ctx) {
  if (!m->val) return HMAP_NONE;
  for (size_t i = hmap_slot(m, h);; i = hmap_next(m, i)) {
    uint32_t v = m->val[i];
    if (v == HMAP_NONE) return HMAP_NONE;
    if (m->hash[i] == h && eq(ctx, v)) return v;
  }
}

/* ---- integer keys ---- */

static inline uint32_t hmap_get_u64(const hmap *m, uint64_t key) {
  if (!m->val) return HMAP_NONE;
  uint64_t h = hmap_mix(key);
  for (size_t i = hmap_slot(m, h);; i = hmap_next(m, i)) {
    uint32_t v = m->val[i];
    if (v == HMAP_NONE || m->hash[i] == h) return v;
  }
}

/* The value already under key, or HMAP_NONE after adding val under it;
 * *oom is set when out of memory (nothing added). */
uint32_t hmap_put_u64(hmap *m, uint64_t key, uint32_t val, int *oom);
/* The same, but val replaces the value already under key (which is
 * returned). */
uint32_t hmap_set_u64(hmap *m, uint64_t key, uint32_t val, int *oom);

/* ---- string keys ----
 * key(ctx, val, &len) returns the bytes of the key of val and their
 * number. */
typedef const char *(*hmap_key_fn)(const void *ctx, uint32_t val, size_t *len);

static inline uint64_t hmap_hash_str(const char *s, size_t n) { return hmap_hash_bytes(s, n); }

/* The value whose key is the n bytes at s (h = hmap_hash_str(s, n),
 * computed by the caller so that an insertion after a miss reuses it). */
static inline uint32_t hmap_find_str(const hmap *m, uint64_t h, const char *s, size_t n, hmap_key_fn key,
                                     const void *ctx) {
  if (!m->val) return HMAP_NONE;
  for (size_t i = hmap_slot(m, h);; i = hmap_next(m, i)) {
    uint32_t v = m->val[i];
    if (v == HMAP_NONE) return HMAP_NONE;
    if (m->hash[i] == h) {
      size_t len;
      const char *k = key(ctx, v, &len);
      if (len == n && memcmp(k, s, n) == 0) return v;
    }
  }
}

#endif
