/* keyhash.c - SipHash-2-4 and a fast fingerprint hash; see keyhash.h. */
#include "keyhash.h"

#include <string.h>

static inline uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

static inline uint64_t load64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

#define SIPROUND()                                                   \
  do {                                                               \
    v0 += v1, v1 = rotl(v1, 13), v1 ^= v0, v0 = rotl(v0, 32);        \
    v2 += v3, v3 = rotl(v3, 16), v3 ^= v2;                           \
    v0 += v3, v3 = rotl(v3, 21), v3 ^= v0;                           \
    v2 += v1, v1 = rotl(v1, 17), v1 ^= v2, v2 = rotl(v2, 32);        \
  } while (0)

uint64_t keyhash_sip(const uint8_t key[16], const void *data, size_t len) {
  const uint8_t *p = data;
  uint64_t k0 = load64(key), k1 = load64(key + 8);
  uint64_t v0 = 0x736f6d6570736575ull ^ k0, v1 = 0x646f72616e646f6dull ^ k1;
  uint64_t v2 = 0x6c7967656e657261ull ^ k0, v3 = 0x7465646279746573ull ^ k1;
  size_t full = len & ~(size_t)7;
  for (size_t i = 0; i < full; i += 8) {
    uint64_t m = load64(p + i);
    v3 ^= m;
    SIPROUND();
    SIPROUND();
    v0 ^= m;
  }
  uint64_t b = (uint64_t)len << 56;
  for (size_t i = 0; i < (len & 7); i++) b |= (uint64_t)p[full + i] << (8 * i);
  v3 ^= b;
  SIPROUND();
  SIPROUND();
  v0 ^= b;
  v2 ^= 0xff;
  SIPROUND();
  SIPROUND();
  SIPROUND();
  SIPROUND();
  return v0 ^ v1 ^ v2 ^ v3;
}

uint64_t keyhash_fast(const void *data, size_t len, uint64_t seed) {
  const uint8_t *p = data;
  uint64_t h = seed ^ (len * 0x9e3779b97f4a7c15ull);
  size_t i = 0;
  for (; i + 8 <= len; i += 8) h = hmap_mix(h ^ load64(p + i)) + 0x9e3779b97f4a7c15ull;
  uint64_t tail = 0;
  for (size_t k = 0; i + k < len; k++) tail |= (uint64_t)p[i + k] << (8 * k);
  return hmap_mix(h ^ tail ^ 0x5851f42d4c957f2dull);
}
