/* cmd_validate.c - chakra validate: check traces, one line per problem. */
#include <stdlib.h>
#include <string.h>

#include "chakra/validate.h"
#include "cli.h"

static const char usage[] =
    "usage: chakra validate [--max-errors N] [--strict] FILE.et... | PREFIX\n"
    "\n"
    "Checks each file: framing and decoding, duplicate node ids, dependencies\n"
    "on absent ids, cycles, attribute kinds, and the attributes each node type\n"
    "requires. With several ranks (PREFIX means PREFIX.0.et, PREFIX.1.et, ...;\n"
    "files given one by one are ranks 0, 1, ... in order) it also checks that\n"
    "every send has exactly one receive with the same src, dst, tag and size,\n"
    "and that collectives of each group agree in order, type and size.\n"
    "\n"
    "Prints one line per problem (file, node id, offset, problem) and a summary.\n"
    "Exit status: 0 clean (warnings allowed), 1 problems found, 2 unreadable input.\n"
    "\n"
    "  --max-errors N  print at most N problem lines (default 100; 0 = all)\n"
    "  --strict        warnings count as problems for the exit status\n"
    "  -q, --quiet     print only the summary\n";

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
  char **args = calloc((size_t)argc, sizeof *args);
  int nargs = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (cli_is_help(a)) {
      fputs(usage, stdout);
      free(args);
      return 0;
    } else if (strcmp(a, "--max-errors") == 0 && i + 1 < argc) {
      if (cli_parse_size(argv[++i], &o.limit)) {
        cli_error("validate: --max-errors '%s': expected a number", argv[i]);
        free(args);
        return 2;
      }
    } else if (strcmp(a, "--strict") == 0) {
      strict = 1;
    } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
      o.quiet = 1;
    } else if (a[0] == '-' && a[1]) {
      cli_error("validate: unknown option '%s'\n%s", a, usage);
      free(args);
      return 2;
    } else {
      args[nargs++] = argv[i];
    }
  }
  if (nargs == 0) {
    cli_error("validate: no input\n%s", usage);
    free(args);
    return 2;
  }
  char **paths;
  int n = cli_expand_traces(nargs, args, &paths);
  free(args);
  if (n < 0) return 2;
  chakra_validate_summary sum;
  chakra_error err = {0};
  int rc = chakra_validate(paths, n, print_problem, &o, &sum, &err);
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
