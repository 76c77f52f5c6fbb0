/* keyhash.h - 64-bit hashes of byte strings (private to lib/analyze).
 *
 * Two kinds, for two jobs: SipHash-2-4, a keyed pseudo-random function, for
 * obfuscation, where a reader of the output must not be able to recover or
 * test guesses of a name without the key; and a fast unkeyed hash for
 * fingerprints (diff), where only accidental collisions matter. */
#ifndef CHAKRA_KEYHASH_H
#define CHAKRA_KEYHASH_H

#include <stddef.h>
#include <stdint.h>

/* SipHash-2-4 of data under the 16-byte key. */
uint64_t keyhash_sip(const uint8_t key[16], const void *data, size_t len);

/* A fast 64-bit hash of data, seeded; not for adversarial input. */
uint64_t keyhash_fast(const void *data, size_t len, uint64_t seed);

/* Mixes one 64-bit value into a well-distributed one (a bijection). */
static inline uint64_t keyhash_mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

#endif
