/* suitesys.h - the system under test (private to lib/suite): files read
 * and hashed, the reference system, a system file's keys as JSON values. */
#ifndef CHAKRA_SUITE_SUITESYS_H
#define CHAKRA_SUITE_SUITESYS_H

#include <stddef.h>

#include "chakra/error.h"

/* The whole file as a NUL-terminated malloc'd text (at most 16 MiB), its
 * length in *len (may be NULL). */
int suitesys_read(const char *path, char **text, size_t *len, chakra_error *err);
/* The SHA-256 of a file's bytes as 64 hex digits. */
int suitesys_hash_file(const char *path, char hex[65], chakra_error *err);
/* The SHA-256 of a buffer. */
void suitesys_hash(const void *data, size_t len, char hex[65]);
/* A system file's peak-perf (TFLOP/s; 0 when absent). */
int suitesys_peak(const char *system, double *tflops, chakra_error *err);
/* A network as text for the declared quantities: "Switch 8 x 400 GB/s
 * 936.25 ns; Switch N x 50 GB/s 3000 ns" (the outer count as N). */
int suitesys_network_text(const char *network, char **out, chakra_error *err);

#endif
