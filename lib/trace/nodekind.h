/* nodekind.h - the node vocabulary's part the graph loader shares (private
 * to lib/trace; the vocabulary itself is include/chakra/node.h). */
#ifndef CHAKRA_TRACE_NODEKIND_H
#define CHAKRA_TRACE_NODEKIND_H

#include "chakra/attr.h"
#include "chakra/graph.h"

/* A resolved node from a full one and its standard attributes: what
 * chakra_graph keeps per node (pg left 0). */
void nodekind_fill(chakra_gnode *n, const chakra_node *nd, const chakra_std_attrs *a, uint64_t offset, int bad_attrs);

#endif
