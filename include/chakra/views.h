/* views.h - pictures of one rank's graph: Graphviz DOT and GraphML.
 *
 * Real traces are too large for a layout program (dot did not finish in
 * 300 s on 3,664 nodes), so a view first chooses what to draw: a node's
 * neighbourhood, the critical path and its immediate neighbours, or the
 * whole graph with each run of compute between communication nodes folded
 * into one box, and refuses to write more than max_nodes. Rendering is left
 * to Graphviz (`dot -Tsvg`) or to graph tools that read GraphML (networkx,
 * Gephi). */
#ifndef CHAKRA_VIEWS_H
#define CHAKRA_VIEWS_H

#include <stdint.h>

#include "chakra/error.h"
#include "chakra/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { CHAKRA_VIEW_DOT = 0, CHAKRA_VIEW_GRAPHML = 1 };

#define CHAKRA_VIEW_DEFAULT_MAX_NODES 1000

typedef struct chakra_view_options {
  int format;              /* CHAKRA_VIEW_DOT or CHAKRA_VIEW_GRAPHML */
  int around;              /* draw around_id's neighbourhood only */
  uint64_t around_id;
  uint32_t depth;          /* hops up (dependencies) and down (dependents) */
  int critical_path;       /* the critical path and its immediate neighbours */
  int collapse;            /* fold runs of compute between communication nodes */
  uint64_t max_nodes;      /* 0 = no limit */
  const char *title;       /* graph label; NULL = the trace's path */
} chakra_view_options;

/* What a written view holds. */
typedef struct chakra_view_info {
  uint64_t nodes, edges;   /* drawn */
  uint64_t graph_nodes;    /* selected from the graph (before folding) */
  uint64_t boxes;          /* folded boxes among nodes */
  uint64_t critical_us;    /* length of the critical path when drawn */
} chakra_view_info;

/* Writes the view of g to out_path ("-" = standard output) as chosen by
 * opt. Names are read back from g's file. Fails without writing anything
 * (CHAKRA_EINVAL, with a message that says how to narrow the view) when
 * the view has more than opt->max_nodes nodes, when around_id is not in
 * the graph, or when the critical path is asked for on a graph with
 * dependency cycles. info may be NULL. */
CHAKRA_API int chakra_view_write(const chakra_graph *g, const char *out_path, const chakra_view_options *opt,
                                 chakra_view_info *info, chakra_error *err);

#ifdef __cplusplus
}
#endif
#endif
