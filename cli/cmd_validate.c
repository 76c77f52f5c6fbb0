/* cmd_validate.c - chakra validate: check traces, one line per problem. */
#include <stdlib.h>
#include <string.h>

#include "chakra/validate.h"
#include "cli.h"

static const char about[] =
    "Checks each file: framing and decoding, duplicate node ids, dependencies\n"
    "on absent ids, cycles, attribute kinds, and the attributes each node type\n"
    "requires. With several ranks (PREFIX means PREFIX.0.et, PREFIX.1.et, ...;\n"
    "files given one by one are ranks 0, 1, ... in order) it also checks that\n"
    "every send has exactly one receive with the same src, dst, tag and size,\n"
    "that the collectives of each communicator group agree in order, type and\n"
    "size on every member and are issued only by members, and that the ranks\n"
    "cannot deadlock (an untimed run of the send/receive and collective order,\n"
    "with the orders the one communication slot per NPU imposes in every timing).\n"
    "Groups come from --comm-group-configuration and METADATA nodes, as in sim.\n"
    "\n"
    "Prints one line per problem (file, node id, offset, problem) and a summary.\n";

static const char footer[] = "Exit status: 0 clean (warnings allowed), 1 problems found, 2 unreadable input.\n";

typedef struct out_state {
  unsigned long long printed, limit;
  int quiet;
} out_state;

static void print_problem(void *ctx, const chakra_problem *p) {
  out_state *o = ctx;
  if (o->quiet || (o->limit && o->printed >= o->limit)) return;
  o->printed++;
  const char *sev = p->severity == CHAKRA_SEV_WARNING ? "warning" : "error";
  if (p->has_node)
    printf("%s: node %llu (offset %llu): %s: %s\n", p->file, (unsigned long long)p->node_id,
           (unsigned long long)p->offset, sev, p->what);
  else
    printf("%s: %s: %s\n", p->file, sev, p->what);
}

int cmd_validate(int argc, char **argv) {
  out_state o = {0, 100, 0};
  int strict = 0;
  chakra_validate_options vopt = {0};
  static const cli_choice bools[] = {{"true", 1}, {"false", 0}, {"1", 1}, {"0", 0}, {NULL, 0}};
  const cli_opt opts[] = {
      {.name = "max-errors", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&o.limit),
       .help = "print at most N problem lines (0 = all)", .def = "100"},
      {.name = "strict", .kind = CLI_OPT_FLAG, .dest = &strict, .help = "warnings count as problems for the exit status"},
      {.name = "quiet", .short_name = 'q', .kind = CLI_OPT_FLAG, .dest = &o.quiet, .help = "print only the summary"},
      {.name = "comm-group-configuration", .alias = "comm-groups", .kind = CLI_OPT_STRING, .dest = &vopt.comm_groups,
       .metavar = "FILE",
       .help = "communicator groups ({\"1\": [0, 1], ...}, as for chakra sim)"},
      {.name = "rendezvous-protocol", .kind = CLI_OPT_CHOICE, .dest = &vopt.rendezvous, .choices = bools,
       .metavar = "BOOL",
       .help = "true|false: check deadlocks as chakra sim --rendezvous-protocol=true runs (a send waits for its "
               "receive)",
       .def = "false"},
      {0}};
  const cli_command cmd = {.name = "validate", .args = "FILE.et... | PREFIX", .min_args = 1, .max_args = -1,
                           .about = about, .footer = footer, .opts = opts};
  cli_args pos;
  int st = cli_parse(&cmd, argc, argv, &pos);
  if (st != CLI_PROCEED) return st;
  char **paths;
  int n = cli_expand_traces(pos.n, pos.v, &paths);
  if (n < 0) return 2;
  chakra_validate_summary sum;
  chakra_error err = {0};
  int rc = chakra_validate_with(paths, n, &vopt, print_problem, &o, &sum, &err);
  cli_free_paths(paths, n);
  if (rc) return cli_fail(&err);
  if (o.limit && sum.errors + sum.warnings > o.printed && !o.quiet)
    printf("... %llu more problem line(s) not shown (--max-errors)\n",
           (unsigned long long)(sum.errors + sum.warnings - o.printed));
  printf("%d file(s), %llu node(s): %llu error(s), %llu warning(s)%s\n", sum.files,
         (unsigned long long)sum.nodes, (unsigned long long)sum.errors,
         (unsigned long long)sum.warnings, sum.unreadable ? ", unreadable input" : "");
  if (sum.unreadable) return 2;
  return sum.errors || (strict && sum.warnings) ? 1 : 0;
}
