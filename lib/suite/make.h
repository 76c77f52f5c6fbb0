/* make.h - a suite folder's files (private to lib/suite): the workloads
 * written and hashed, the manifest written and read back. */
#ifndef CHAKRA_SUITE_MAKE_H
#define CHAKRA_SUITE_MAKE_H

#include "chakra/suite.h"

/* dir/name, malloc'd (NULL when out of memory). */
char *make_path(const char *dir, const char *name);

#endif
