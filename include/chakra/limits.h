/* limits.h - process-wide limits that protect against inflated inputs.
 *
 * A gzip file of a few hundred kilobytes can expand to gigabytes (a
 * "decompression bomb"); every reader of the library (.et, JSON, host ET,
 * Kineto) stops with a clear error when the data it has inflated exceeds
 * both 1 MiB and max_ratio times the compressed bytes read so far. Real
 * traces compress far less than the default 100:1 (Chakra ETs 3-20:1,
 * JSON traces up to about 40:1). */
#ifndef CHAKRA_LIMITS_H
#define CHAKRA_LIMITS_H

#include <stdint.h>

#include "chakra/export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CHAKRA_DEFAULT_GZIP_RATIO 100u

/* Sets the largest accepted expansion ratio of gzip input (0 = no limit).
 * Takes effect for streams opened afterwards; safe from any thread. */
CHAKRA_API void chakra_limits_set_gzip_ratio(uint32_t max_ratio);
/* The ratio in force (CHAKRA_DEFAULT_GZIP_RATIO until set). */
CHAKRA_API uint32_t chakra_limits_gzip_ratio(void);

#ifdef __cplusplus
}
#endif
#endif
