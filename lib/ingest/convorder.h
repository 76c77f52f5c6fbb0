/* convorder.h - dangling dependencies, cycles and the output order of
 * chakra convert pytorch (private to lib/ingest). */
#ifndef CHAKRA_INGEST_CONVORDER_H
#define CHAKRA_INGEST_CONVORDER_H

#include "convert.h"

/* Drops dependencies on nodes not written, refuses cycles and fills
 * c->order: ascending id when that is topological, else Kahn's order. */
int conv_prune_and_order(conv *c);

#endif
