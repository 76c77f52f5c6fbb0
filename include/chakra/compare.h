/* compare.h - a simulation's prediction against a replay's measurement.
 *
 * Reads two reports in the schema of `chakra sim --report` (one from
 * chakra sim, one from chakra replay, which writes the same fields) and
 * pairs their figures: per rank the finish time and the exposed
 * communication, per collective type the time in flight summed over the
 * ranks. The error of a row is (predicted - measured) / measured. */
#ifndef CHAKRA_COMPARE_H
#define CHAKRA_COMPARE_H

#include <stddef.h>

#include "chakra/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct chakra_compare_row {
  char what[64];          /* label, cut to 63 bytes (before 0.2 the only name) */
  double predicted_ns, measured_ns;
  char *label;            /* "rank 3 finish", "ALL_REDUCE time": the whole name as one printable line (a
                             collective's line breaks, control characters, quotes and backslashes escaped
                             as in messages: \n, \x1b, \", \\), so distinct collectives are distinct rows */
} chakra_compare_row;

typedef struct chakra_compare {
  chakra_compare_row *rows;
  size_t n;
  unsigned ranks;
} chakra_compare;

/* Both reports must describe the same number of ranks. */
CHAKRA_API int chakra_compare_reports(const char *predicted, const char *measured, chakra_compare *out,
                                      chakra_error *err);
/* A bar chart of every row (predicted and measured side by side) as SVG,
 * written atomically. */
CHAKRA_API int chakra_compare_write_svg(const chakra_compare *c, const char *path, chakra_error *err);
CHAKRA_API void chakra_compare_free(chakra_compare *c);

#ifdef __cplusplus
}
#endif
#endif
