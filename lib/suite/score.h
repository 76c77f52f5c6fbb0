/* score.h - scores (private to lib/suite): speedups over a baseline, the
 * geometric means of classes and overall (chakra/suite.h). */
#ifndef CHAKRA_SUITE_SCORE_H
#define CHAKRA_SUITE_SCORE_H

#include "chakra/suite.h"

/* The metrics of workload w (table index) in r, or NULL. */
const chakra_suite_metrics *score_find(const chakra_suite_result *r, size_t w);

#endif
