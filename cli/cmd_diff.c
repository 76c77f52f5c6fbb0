/* cmd_diff.c - chakra diff: what changed between two traces. */
#include <stdlib.h>
#include <string.h>

#include "chakra/diff.h"
#include "cli.h"
#include "progress.h"

static const char about[] =
    "Compares two traces, rank by rank: A and B are each a FILE.et or a PREFIX\n"
    "(PREFIX.0.et, PREFIX.1.et, ..., or a shared set's PREFIX.set.json). Nodes\n"
    "are matched by id, or with --by-name by name and position (the k-th node\n"
    "of a name in topological order), and\n"
    "reported as added (+), removed (-) or changed (~: type, name, duration,\n"
    "start, attributes, inputs/outputs, data or control dependencies). Summary\n"
    "differences follow: counts by type, collective ops and bytes by type and\n"
    "group, point-to-point, compute, dependencies, critical path.\n"
    "Exit status: 0 equal, 1 different, 2 error (as diff).\n";

/* The ranks of one side (a FILE or a PREFIX, in either form of a set),
 * through the trace-set source; the names point into the set. */
static int open_side(char *arg, chakra_set **set, char ***paths) {
  if (!(*set = cli_open_set(1, &arg, NULL))) return -1;
  uint32_t n = chakra_set_ranks(*set);
  if (!(*paths = malloc(n * sizeof **paths))) {
    cli_error("out of memory");
    return -1;
  }
  for (uint32_t r = 0; r < n; r++) (*paths)[r] = (char *)chakra_set_rank_name(*set, r);
  return (int)n;
}

int cmd_diff(int argc, char **argv) {
  chakra_diff_options opt = {.max_listed = 20};
  const char *out = "-";
  int json = 0, quiet = 0;
  const cli_opt opts[] = {
      {.name = "by-name", .kind = CLI_OPT_FLAG, .dest = &opt.by_name,
       .help = "match nodes by name and position instead of id"},
      {.name = "json", .kind = CLI_OPT_FLAG, .dest = &json, .help = "one JSON document instead of text"},
      {.name = "limit", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&opt.max_listed),
       .help = "node changes listed per rank (0 = all)", .def = "20"},
      {.name = "ignore-ctrl-deps", .kind = CLI_OPT_FLAG, .dest = &opt.ignore_ctrl_deps,
       .help = "statistics and positions from data deps only"},
      {.name = "quiet", .short_name = 'q', .kind = CLI_OPT_FLAG, .dest = &quiet,
       .help = "print nothing (no progress line either); the exit status says it"},
      {.name = "output", .short_name = 'o', .kind = CLI_OPT_STRING, .dest = &out, .metavar = "FILE",
       .help = "write the report there", .def = "standard output", .file = CLI_FILE_OUT},
      {0}};
  const cli_command cmd = {.name = "diff", .args = "A B", .min_args = 2, .max_args = 2, .about = about,
                           .opts = opts, .args_file = CLI_FILE_TRACES};
  cli_args pos;
  int st = cli_parse(&cmd, argc, argv, &pos);
  if (st != CLI_PROCEED) return st;
  const char *in[2] = {pos.v[0], pos.v[1]};
  if (strcmp(in[0], "-") == 0 || strcmp(in[1], "-") == 0) {
    cli_error("standard input cannot be used: each trace is read twice; give file names");
    return 2;
  }
  chakra_diff_set set = {.by_name = opt.by_name};
  chakra_set *sa = NULL, *sb = NULL;
  int na = open_side(pos.v[0], &sa, &set.paths_a), nb = na < 0 ? -1 : open_side(pos.v[1], &sb, &set.paths_b);
  if (na < 0 || nb < 0) {
    free(set.paths_a), free(set.paths_b);
    chakra_set_close(sa), chakra_set_close(sb);
    return 2;
  }
  set.ranks_a = (size_t)na, set.ranks_b = (size_t)nb;
  size_t n = set.ranks_a < set.ranks_b ? set.ranks_a : set.ranks_b;
  set.ranks = calloc(n ? n : 1, sizeof *set.ranks);
  chakra_error err = {0};
  int rc = set.ranks ? 0 : 2;
  size_t done = 0;
  cli_progress bar;
  cli_progress_init(&bar, quiet, "ranks");
  for (; done < n && !rc; done++) {
    cli_progress_report(&bar, "compare", done, n);
    if (chakra_diff_ranks(sa, (uint32_t)done, sb, (uint32_t)done, &opt, &set.ranks[done], &err)) {
      rc = 2;
      cli_error("%s", err.msg);
      break;
    }
  }
  cli_progress_end(&bar);
  if (!rc && !quiet && chakra_diff_write(&set, out, json, &err)) {
    cli_error("%s", err.msg);
    rc = 2;
  }
  if (!rc) rc = chakra_diff_set_equal(&set) ? 0 : 1;
  for (size_t r = 0; r < done && set.ranks; r++) chakra_diff_rank_free(&set.ranks[r]);
  free(set.ranks);
  free(set.paths_a), free(set.paths_b);
  chakra_set_close(sa), chakra_set_close(sb);
  return rc;
}
