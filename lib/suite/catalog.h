/* catalog.h - the suite versions compiled in (private to lib/suite): the
 * workload tables chakra/suite.h exposes, and the short names of the
 * collectives the microbenchmark names use. */
#ifndef CHAKRA_SUITE_CATALOG_H
#define CHAKRA_SUITE_CATALOG_H

#include "chakra/suite.h"

/* "all-reduce" ... for a chakra_coll_type. */
const char *catalog_coll_label(int coll);

#endif
