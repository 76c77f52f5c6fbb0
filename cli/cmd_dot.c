/* cmd_dot.c - chakra dot: a Graphviz (or GraphML) view of one rank. */
#include <stdlib.h>

#include "chakra/views.h"
#include "cli.h"

static const char about[] =
    "Writes one rank's graph as Graphviz DOT (render with 'dot -Tsvg OUT.dot >\n"
    "OUT.svg'): nodes coloured by type, data edges solid, control edges dashed.\n"
    "PREFIX means PREFIX.<rank>.et (or a shared set's rank, PREFIX.set.json).\n"
    "Output goes to standard output unless -o.\n";

/* --around's "not given": every id from 0 up is a node id a user may ask for. */
#define DOT_NO_AROUND UINT64_MAX

int cmd_dot(int argc, char **argv) {
  chakra_view_options opt = {.depth = 2, .max_nodes = CHAKRA_VIEW_DEFAULT_MAX_NODES, .around_id = DOT_NO_AROUND};
  const char *out = "-";
  uint32_t rank = 0;
  int ignore_ctrl = 0, graphml = 0;
  const cli_opt opts[] = {
      {.name = "around", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&opt.around_id), .max = DOT_NO_AROUND - 1,
       .metavar = "ID", .help = "only the neighbourhood of node ID"},
      {.name = "depth", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&opt.depth), .metavar = "K",
       .help = "hops up and down from ID", .def = "2"},
      {.name = "critical-path", .kind = CLI_OPT_FLAG, .dest = &opt.critical_path,
       .help = "the critical path (red) and its immediate neighbours"},
      {.name = "collapse", .kind = CLI_OPT_FLAG, .dest = &opt.collapse,
       .help = "fold each run of compute between communication nodes into one box with its node count and "
               "total time"},
      {.name = "max-nodes", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&opt.max_nodes),
       .help = "refuse views of more than N nodes (0 = no limit)", .def = "1000"},
      {.name = "graphml", .kind = CLI_OPT_FLAG, .dest = &graphml, .help = "GraphML instead of DOT (networkx, Gephi, yEd)"},
      {.name = "rank", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&rank), .metavar = "R",
       .help = "the rank to draw when given a PREFIX", .def = "0"},
      {.name = "ignore-ctrl-deps", .kind = CLI_OPT_FLAG, .dest = &ignore_ctrl, .help = "use data dependencies only"},
      {.name = "title", .kind = CLI_OPT_STRING, .dest = &opt.title, .metavar = "TEXT",
       .help = "the drawing's title", .def = "the file name"},
      {.name = "output", .short_name = 'o', .kind = CLI_OPT_STRING, .dest = &out, .metavar = "FILE",
       .help = "output file, written atomically", .def = "standard output", .file = CLI_FILE_OUT},
      {0}};
  const cli_command cmd = {.name = "dot", .args = "FILE.et | PREFIX", .min_args = 1, .max_args = 1, .about = about,
                           .opts = opts, .args_file = CLI_FILE_TRACES};
  cli_args pos;
  int rc = cli_parse(&cmd, argc, argv, &pos);
  if (rc != CLI_PROCEED) return rc;
  opt.around = opt.around_id != DOT_NO_AROUND;
  if (graphml) opt.format = CHAKRA_VIEW_GRAPHML;
  chakra_set *set = cli_open_set(1, pos.v, NULL);
  if (!set) return CLI_EXIT_ERROR;
  chakra_graph *g = NULL;
  /* a file is its own rank 0 whatever --rank says */
  uint32_t r = chakra_set_prefix(set) ? (uint32_t)rank : 0;
  if (r >= chakra_set_ranks(set)) {
    cli_error("%s: --rank %u, but the set has ranks 0..%u", pos.v[0], r, chakra_set_ranks(set) - 1);
    rc = CLI_EXIT_ERROR;
  } else {
    rc = cli_load_tolerant(set, r, ignore_ctrl, &g);
  }
  chakra_set_close(set);
  if (rc) return rc;
  chakra_error err = {0};
  rc = chakra_view_write(g, out, &opt, NULL, &err) ? cli_fail(&err) : 0;
  chakra_graph_free(g);
  return rc;
}
