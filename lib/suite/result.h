/* result.h - result files (private to lib/suite): the JSON a run writes
 * and score, check and board read. */
#ifndef CHAKRA_SUITE_RESULT_H
#define CHAKRA_SUITE_RESULT_H

#include "chakra/suite.h"

/* The name a result stands for the reference system by. */
#define RESULT_REFERENCE "reference"

#endif
