/* cmd_diff.c - chakra diff: what changed between two traces. */
#include <stdlib.h>
#include <string.h>

#include "chakra/diff.h"
#include "cli.h"
#include "viewargs.h"

static const char usage[] =
    "usage: chakra diff [--by-name] [--json] [--limit N] [--ignore-ctrl-deps] [-q]\n"
    "                   A B [-o OUT]\n"
    "\n"
    "Compares two traces, rank by rank: A and B are each a FILE.et or a PREFIX\n"
    "(PREFIX.0.et, PREFIX.1.et, ...). Nodes are matched by id, or with --by-name\n"
    "by name and position (the k-th node of a name in topological order), and\n"
    "reported as added (+), removed (-) or changed (~: type, name, duration,\n"
    "start, attributes, inputs/outputs, data or control dependencies). Summary\n"
    "differences follow: counts by type, collective ops and bytes by type and\n"
    "group, point-to-point, compute, dependencies, critical path.\n"
    "Exit status: 0 equal, 1 different, 2 error (as diff).\n"
    "\n"
    "  --by-name           match nodes by name and position instead of id\n"
    "  --json              one JSON document instead of text\n"
    "  --limit N           node changes listed per rank (default 20; 0 = all)\n"
    "  --ignore-ctrl-deps  statistics and positions from data deps only\n"
    "  -q, --quiet         print nothing; the exit status says it\n"
    "  -o, --output FILE   write the report there instead of standard output\n";

static int expand_one(const char *arg, char ***paths) {
  char *one[] = {(char *)arg};
  return cli_expand_traces(1, one, paths);
}

int cmd_diff(int argc, char **argv) {
  chakra_diff_options opt = {.max_listed = 20};
  const char *in[2] = {NULL, NULL}, *out = "-", *v;
  int json = 0, quiet = 0, nin = 0, got;
  uint64_t limit;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (cli_is_help(a)) {
      fputs(usage, stdout);
      return 0;
    } else if (strcmp(a, "--by-name") == 0) {
      opt.by_name = 1;
    } else if (strcmp(a, "--json") == 0) {
      json = 1;
    } else if (strcmp(a, "--ignore-ctrl-deps") == 0) {
      opt.ignore_ctrl_deps = 1;
    } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
      quiet = 1;
    } else if ((got = viewargs_value(argc, argv, &i, "--limit", &v)) != 0) {
      if (got < 0 || viewargs_u64("--limit", v, &limit)) return 2;
      opt.max_listed = (size_t)limit;
    } else if ((got = viewargs_value(argc, argv, &i, "--output", &v)) != 0 ||
               (got = viewargs_value(argc, argv, &i, "-o", &v)) != 0) {
      if (got < 0) return 2;
      out = v;
    } else if (a[0] == '-' && a[1]) {
      cli_error("diff: unknown option '%s'\n%s", a, usage);
      return 2;
    } else if (nin < 2) {
      in[nin++] = a;
    } else {
      cli_error("diff: two inputs only ('%s')", a);
      return 2;
    }
  }
  if (nin != 2) {
    cli_error("diff: needs two inputs, A and B\n%s", usage);
    return 2;
  }
  if (strcmp(in[0], "-") == 0 || strcmp(in[1], "-") == 0) {
    cli_error("diff: standard input cannot be used: each trace is read twice; give file names");
    return 2;
  }
  chakra_diff_set set = {.by_name = opt.by_name};
  int na = expand_one(in[0], &set.paths_a);
  if (na < 0) return 2;
  int nb = expand_one(in[1], &set.paths_b);
  if (nb < 0) {
    cli_free_paths(set.paths_a, na);
    return 2;
  }
  set.ranks_a = (size_t)na, set.ranks_b = (size_t)nb;
  size_t n = set.ranks_a < set.ranks_b ? set.ranks_a : set.ranks_b;
  set.ranks = calloc(n ? n : 1, sizeof *set.ranks);
  chakra_error err = {0};
  int rc = set.ranks ? 0 : 2;
  size_t done = 0;
  for (; done < n && !rc; done++)
    if (chakra_diff_files(set.paths_a[done], set.paths_b[done], &opt, &set.ranks[done], &err)) {
      rc = 2;
      cli_error("%s", err.msg);
      break;
    }
  if (!rc && !quiet && chakra_diff_write(&set, out, json, &err)) {
    cli_error("%s", err.msg);
    rc = 2;
  }
  if (!rc) rc = chakra_diff_set_equal(&set) ? 0 : 1;
  for (size_t r = 0; r < done && set.ranks; r++) chakra_diff_rank_free(&set.ranks[r]);
  free(set.ranks);
  cli_free_paths(set.paths_a, na);
  cli_free_paths(set.paths_b, nb);
  return rc;
}
