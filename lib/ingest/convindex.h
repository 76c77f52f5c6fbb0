/* convindex.h - the id index, the parent tree and the selection of the
 * nodes chakra convert pytorch writes (private to lib/ingest). */
#ifndef CHAKRA_INGEST_CONVINDEX_H
#define CHAKRA_INGEST_CONVINDEX_H

#include "convert.h"

/* Node index of id, or CONV_NONE. */
uint32_t conv_find_id(const conv *c, uint64_t id);
/* The id index; a repeated id is an error. */
int conv_build_index(conv *c);
/* Parents and children (ascending id); a parent cycle is an error. */
int conv_build_tree(conv *c);
/* The nodes to convert (c->sel). */
int conv_select(conv *c);

#endif
