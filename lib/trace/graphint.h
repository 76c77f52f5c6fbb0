/* graphint.h - loading a graph through a binding (private to libchakra):
 * a rank of a shared trace set is its class template with the rank's
 * group names and peers (bind.h), and so are the nodes the graph re-reads
 * later (chakra_graph_read_node()). */
#ifndef CHAKRA_TRACE_GRAPHINT_H
#define CHAKRA_TRACE_GRAPHINT_H

#include "bind.h"
#include "chakra/graph.h"

/* chakra_graph_load_input() with every node bound by bind (retained by
 * the graph; NULL: none). */
int graph_load_bound(chakra_graph **out, const chakra_input *in, const chakra_graph_options *opt, bind_ref *bind,
                     chakra_error *err);

/* A reader over g's input from its first node, bound as g is: what views
 * that re-read a graph's nodes scan (the path alone would be the class
 * template's, unbound, or no file at all). */
int graph_open_reader(const chakra_graph *g, chakra_reader **r, chakra_error *err);

#endif
