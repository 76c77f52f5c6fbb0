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

#include "chakra/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { CHAKRA_PROBLEM_WARNING = 1, CHAKRA_PROBLEM_ERROR = 2, CHAKRA_PROBLEM_UNREADABLE = 3 };

typedef struct chakra_problem {
  int severity;          /* CHAKRA_PROBLEM_* */
  const char *file;
  int has_node;
  uint64_t node_id;
  uint64_t offset;       /* of the node (or of the defect for framing) */
  const char *what;
} chakra_problem;

typedef void (*chakra_problem_fn)(void *ctx, const chakra_problem *p);

typedef struct chakra_validate_summary {
  int files, unreadable;
  uint64_t nodes, errors, warnings;
} chakra_validate_summary;

/* paths[r] is rank r's file. Cross-rank checks run when n > 1.
 * Returns CHAKRA_OK (problems are reported, not returned) or an error for
 * allocation failure. */
int chakra_validate(char *const *paths, int n, chakra_problem_fn fn, void *ctx,
                    chakra_validate_summary *sum, chakra_error *err);

#ifdef __cplusplus
}
#endif
#endif
