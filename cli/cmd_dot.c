/* cmd_dot.c - chakra dot: a Graphviz (or GraphML) view of one rank. */
#include <stdlib.h>
#include <string.h>

#include "chakra/views.h"
#include "cli.h"
#include "viewargs.h"

static const char usage[] =
    "usage: chakra dot [options] FILE.et | PREFIX [-o OUT.dot]\n"
    "\n"
    "Writes one rank's graph as Graphviz DOT (render with 'dot -Tsvg OUT.dot >\n"
    "OUT.svg'): nodes coloured by type, data edges solid, control edges dashed.\n"
    "PREFIX means PREFIX.<rank>.et. Output goes to standard output unless -o.\n"
    "\n"
    "  --around ID         only the neighbourhood of node ID\n"
    "  --depth K           hops up and down from ID (default 2)\n"
    "  --critical-path     the critical path (red) and its immediate neighbours\n"
    "  --collapse          fold each run of compute between communication nodes\n"
    "                      into one box with its node count and total time\n"
    "  --max-nodes N       refuse views of more than N nodes (default 1000;\n"
    "                      0 = no limit)\n"
    "  --graphml           GraphML instead of DOT (networkx, Gephi, yEd)\n"
    "  --rank R            the rank to draw when given a PREFIX (default 0)\n"
    "  --ignore-ctrl-deps  use data dependencies only\n"
    "  --title TEXT        the drawing's title (default: the file name)\n"
    "  -o, --output FILE   output file, written atomically\n";

int cmd_dot(int argc, char **argv) {
  chakra_view_options opt = {.depth = 2, .max_nodes = CHAKRA_VIEW_DEFAULT_MAX_NODES};
  const char *in = NULL, *out = "-", *v;
  uint64_t rank = 0, n;
  int ignore_ctrl = 0, got;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (cli_is_help(a)) {
      fputs(usage, stdout);
      return 0;
    } else if (strcmp(a, "--critical-path") == 0) {
      opt.critical_path = 1;
    } else if (strcmp(a, "--collapse") == 0) {
      opt.collapse = 1;
    } else if (strcmp(a, "--graphml") == 0) {
      opt.format = CHAKRA_VIEW_GRAPHML;
    } else if (strcmp(a, "--ignore-ctrl-deps") == 0) {
      ignore_ctrl = 1;
    } else if ((got = viewargs_value(argc, argv, &i, "--around", &v)) != 0) {
      if (got < 0 || viewargs_u64("--around", v, &opt.around_id)) return 2;
      opt.around = 1;
    } else if ((got = viewargs_value(argc, argv, &i, "--depth", &v)) != 0) {
      if (got < 0 || viewargs_u64("--depth", v, &n)) return 2;
      opt.depth = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
    } else if ((got = viewargs_value(argc, argv, &i, "--max-nodes", &v)) != 0) {
      if (got < 0 || viewargs_u64("--max-nodes", v, &opt.max_nodes)) return 2;
    } else if ((got = viewargs_value(argc, argv, &i, "--rank", &v)) != 0) {
      if (got < 0 || viewargs_u64("--rank", v, &rank)) return 2;
    } else if ((got = viewargs_value(argc, argv, &i, "--title", &v)) != 0) {
      if (got < 0) return 2;
      opt.title = v;
    } else if ((got = viewargs_value(argc, argv, &i, "--output", &v)) != 0 ||
               (got = viewargs_value(argc, argv, &i, "-o", &v)) != 0) {
      if (got < 0) return 2;
      out = v;
    } else if (a[0] == '-' && a[1]) {
      cli_error("dot: unknown option '%s'\n%s", a, usage);
      return 2;
    } else if (!in) {
      in = a;
    } else {
      cli_error("dot: one trace only ('%s'); it draws one rank", a);
      return 2;
    }
  }
  if (!in) {
    cli_error("dot: no input\n%s", usage);
    return 2;
  }
  char *path = viewargs_rank_path(in, rank);
  chakra_graph *g = NULL;
  int rc = path ? viewargs_load(path, ignore_ctrl, &g) : 2;
  free(path);
  if (rc) return rc;
  chakra_error err = {0};
  rc = chakra_view_write(g, out, &opt, NULL, &err) ? cli_fail(&err) : 0;
  chakra_graph_free(g);
  return rc;
}
