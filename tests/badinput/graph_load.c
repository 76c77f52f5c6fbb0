/* graph_load.c - test helper: loads one trace with chakra_graph_load() the
 * way a graph-consuming subcommand does (default options: ctrl deps
 * honoured, missing data deps fatal) and reports like the CLI: on failure
 * one line "chakra: <error>" on stderr and exit 1; on success the node
 * count on stdout. bad_inputs.py runs it on the graph-level cases of the
 * bad-input corpus (cycles, dangling data deps, duplicate ids). */
#include <stdio.h>

#include "chakra/graph.h"

static void warn(void *ctx, const chakra_problem *p) {
  char line[1024];
  (void)ctx;
  chakra_problem_format(p, line, sizeof line);
  fprintf(stderr, "chakra: %s: %s\n", chakra_severity_name(p->severity), line);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: graph_load FILE.et\n");
    return 2;
  }
  chakra_graph_options opt = {.diag = warn};
  chakra_graph *g;
  chakra_error err = {0};
  if (chakra_graph_load(&g, argv[1], &opt, &err)) {
    fprintf(stderr, "chakra: %s\n", err.msg);
    return 1;
  }
  printf("%zu nodes\n", g->n);
  chakra_graph_free(g);
  return 0;
}
