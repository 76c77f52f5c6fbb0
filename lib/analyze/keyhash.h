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

#include "../util/hmap.h" /* hmap_mix: the bijective mix of one 64-bit value */

/* SipHash-2-4 of data under the 16-byte key. */
uint64_t keyhash_sip(const uint8_t key[16], const void *data, size_t len);

/* A fast 64-bit hash of data, seeded; not for adversarial input. */
uint64_t keyhash_fast(const void *data, size_t len, uint64_t seed);

#endif
