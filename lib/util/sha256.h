/* sha256.h - SHA-256 (FIPS 180-4), streaming: the digest chakra coll
 * from-msccl stores instead of the whole XML, and the suite's hash of every
 * workload and configuration file. No Debian package the project already
 * uses provides it (tests/unit/test_sha256.c holds it to FIPS's vectors). */
#ifndef CHAKRA_UTIL_SHA256_H
#define CHAKRA_UTIL_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct sha256 {
  uint32_t h[8];
  uint64_t len;
  uint8_t buf[64];
  size_t n;
} sha256;

void sha256_init(sha256 *s);
void sha256_update(sha256 *s, const void *data, size_t len);
/* Writes the digest as 64 lowercase hex digits and a NUL into hex. */
void sha256_hex(sha256 *s, char hex[65]);

#endif
