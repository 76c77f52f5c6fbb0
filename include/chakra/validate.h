/* validate.h - checking traces before anyone trusts them.
 *
 * Per file: framing and decoding, duplicate ids, dependencies on absent
 * ids, cycles, attribute kinds, and the attributes each node type needs.
 * Across the ranks of a workload: every send has exactly one receive with
 * the same (src, dst, tag, size), and the collectives of each group agree
 * in order, type and size on every member. Problems are handed to a
 * callback one at a time, so output streams and memory stays per rank. */
#ifndef CHAKRA_VALIDATE_H
#define CHAKRA_VALIDATE_H

#include <stdint.h>

#include "chakra/export.h"
#include "chakra/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct chakra_validate_summary {
  int files, unreadable;
  uint64_t nodes, errors, warnings;
} chakra_validate_summary;

/* paths[r] is rank r's file. Cross-rank checks run when n > 1. Each
 * finding goes to fn (NULL: only the summary is wanted) with file set to
 * paths[r] as given;
 * severities are WARNING, ERROR, or UNREADABLE for a file that could not be
 * loaded at all (its other checks are skipped). sum (required) is filled
 * in. Returns CHAKRA_OK (problems are reported, not returned) or an error
 * for allocation failure. Nothing is kept: paths stay the caller's. */
CHAKRA_API int chakra_validate(char *const *paths, int n, chakra_diag_fn fn, void *ctx,
                               chakra_validate_summary *sum, chakra_error *err);

#ifdef __cplusplus
}
#endif
#endif
