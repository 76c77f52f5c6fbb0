/* convdeps.h - the dependencies chakra convert pytorch gives each node
 * (private to lib/ingest): the reference converter's traversal (--compat)
 * or chakra-c's rules (spec section 5: GPU ops ordered per stream,
 * synchronisation honoured, order-independent control deps). */
#ifndef CHAKRA_INGEST_CONVDEPS_H
#define CHAKRA_INGEST_CONVDEPS_H

#include "convert.h"

/* Fill c->deps (each node's contiguous, dep_start/dep_cnt). */
int conv_deps_compat(conv *c);
int conv_deps_default(conv *c);

#endif
