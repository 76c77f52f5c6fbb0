/* cmd_timeline.c - chakra timeline: a Chrome/Perfetto timeline from a
 * trace's own timing. */
#include <stdlib.h>
#include <string.h>

#include "chakra/timeline.h"
#include "cli.h"
#include "viewargs.h"

static const char usage[] =
    "usage: chakra timeline [--ignore-ctrl-deps] [-q] FILE.et... | PREFIX [-o OUT.json]\n"
    "\n"
    "Writes a Chrome trace-event timeline (open in ui.perfetto.dev or\n"
    "chrome://tracing) from the traces' own timing: each node at its recorded\n"
    "start time when the producer wrote one, otherwise as soon as its\n"
    "dependencies have finished, for its recorded duration_micros (no network\n"
    "model: 'chakra sim --timeline' simulates one). One process per rank (file),\n"
    "one track per resource kind (CPU, GPU compute, GPU communication, receives,\n"
    "remote memory, other), more lanes where a kind's nodes overlap. Times are\n"
    "microseconds, as the format defines. PREFIX means PREFIX.0.et, PREFIX.1.et,\n"
    "...; output goes to standard output unless -o (.gz compresses).\n"
    "\n"
    "  --ignore-ctrl-deps  schedule by data dependencies only\n"
    "  -q, --quiet         no summary line on standard error\n"
    "  -o, --output FILE   output file, written atomically\n";

int cmd_timeline(int argc, char **argv) {
  const char *out = "-", *v;
  int ignore_ctrl = 0, quiet = 0, nargs = 0, got;
  char **args = calloc((size_t)argc, sizeof *args);
  if (!args) return 2;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (cli_is_help(a)) {
      fputs(usage, stdout);
      free(args);
      return 0;
    } else if (strcmp(a, "--ignore-ctrl-deps") == 0) {
      ignore_ctrl = 1;
    } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
      quiet = 1;
    } else if ((got = viewargs_value(argc, argv, &i, "--output", &v)) != 0 ||
               (got = viewargs_value(argc, argv, &i, "-o", &v)) != 0) {
      if (got < 0) {
        free(args);
        return 2;
      }
      out = v;
    } else if (a[0] == '-' && a[1]) {
      cli_error("timeline: unknown option '%s'\n%s", a, usage);
      free(args);
      return 2;
    } else {
      args[nargs++] = argv[i];
    }
  }
  if (!nargs) {
    free(args);
    cli_error("timeline: no input\n%s", usage);
    return 2;
  }
  char **paths;
  int n = cli_expand_traces(nargs, args, &paths);
  free(args);
  if (n < 0) return 2;
  chakra_error err = {0};
  chakra_timeline *t;
  int rc = chakra_timeline_open(&t, out, &err) ? cli_fail(&err) : 0;
  uint64_t nodes = 0, recorded = 0, end = 0;
  for (int r = 0; r < n && !rc; r++) {
    chakra_graph *g;
    if ((rc = viewargs_load(paths[r], ignore_ctrl, &g)) != 0) break;
    chakra_timeline_rank_info info;
    if (chakra_timeline_add_graph(t, (uint32_t)r, g, &info, &err)) rc = cli_fail(&err);
    nodes += info.nodes, recorded += info.recorded;
    if (info.end_ns > end) end = info.end_ns;
    chakra_graph_free(g);
  }
  if (rc) chakra_timeline_discard(t);
  else if (chakra_timeline_close(t, &err)) rc = cli_fail(&err);
  if (!rc && !quiet)
    fprintf(stderr, "chakra: timeline of %d rank(s), %llu nodes (%llu at recorded start times), ends at %.3f us\n",
            n, (unsigned long long)nodes, (unsigned long long)recorded, end / 1000.0);
  cli_free_paths(paths, n);
  return rc;
}
