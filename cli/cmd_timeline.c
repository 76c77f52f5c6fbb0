/* cmd_timeline.c - chakra timeline: a Chrome/Perfetto timeline from a
 * trace's own timing. */
#include <stdlib.h>
#include <string.h>

#include "chakra/timeline.h"
#include "cli.h"
#include "progress.h"

static const char about[] =
    "Writes a Chrome trace-event timeline (open in ui.perfetto.dev or\n"
    "chrome://tracing) from the traces' own timing: each node at its recorded\n"
    "start time when the producer wrote one, otherwise as soon as its\n"
    "dependencies have finished, for its recorded duration_micros (no network\n"
    "model: 'chakra sim --timeline' simulates one). One process per rank (file),\n"
    "one track per resource kind (CPU, GPU compute, GPU communication, receives,\n"
    "remote memory, other), more lanes where a kind's nodes overlap. Times are\n"
    "microseconds, as the format defines. PREFIX means PREFIX.0.et, PREFIX.1.et,\n"
    "... (or a shared set, PREFIX.set.json); output goes to standard output\n"
    "unless -o (.gz compresses). --svg draws the same timeline as an SVG\n"
    "picture instead (no browser or Perfetto needed; at most 2,000 tracks).\n";

int cmd_timeline(int argc, char **argv) {
  const char *out = "-";
  int ignore_ctrl = 0, quiet = 0, svg = 0;
  const cli_opt opts[] = {
      {.name = "ignore-ctrl-deps", .kind = CLI_OPT_FLAG, .dest = &ignore_ctrl,
       .help = "schedule by data dependencies only"},
      {.name = "svg", .kind = CLI_OPT_FLAG, .dest = &svg,
       .help = "an SVG picture (a lane per rank and track, slices coloured by node type on a time axis) instead of "
               "trace events"},
      {.name = "quiet", .short_name = 'q', .kind = CLI_OPT_FLAG, .dest = &quiet,
       .help = "no summary line and no progress line on standard error"},
      {.name = "output", .short_name = 'o', .kind = CLI_OPT_STRING, .dest = &out, .metavar = "FILE",
       .help = "output file, written atomically", .def = "standard output", .file = CLI_FILE_OUT},
      {0}};
  const cli_command cmd = {.name = "timeline", .args = "FILE.et... | PREFIX", .min_args = 1, .max_args = -1,
                           .about = about, .opts = opts, .args_file = CLI_FILE_TRACES};
  cli_args pos;
  int st = cli_parse(&cmd, argc, argv, &pos);
  if (st != CLI_PROCEED) return st;
  chakra_set *set = cli_open_set(pos.n, pos.v, NULL);
  if (!set) return 2;
  int n = (int)chakra_set_ranks(set);
  chakra_error err = {0};
  chakra_timeline *t;
  int rc = (svg ? chakra_timeline_open_svg(&t, out, &err) : chakra_timeline_open(&t, out, &err)) ? cli_fail(&err) : 0;
  uint64_t nodes = 0, recorded = 0, end = 0;
  cli_progress bar;
  cli_progress_init(&bar, quiet, "ranks");
  for (int r = 0; r < n && !rc; r++) {
    cli_progress_report(&bar, "add", (uint64_t)r, (uint64_t)n);
    chakra_graph *g;
    if ((rc = cli_load_tolerant(set, (uint32_t)r, ignore_ctrl, &g)) != 0) break;
    chakra_timeline_rank_info info;
    if (chakra_timeline_add_graph(t, (uint32_t)r, g, &info, &err)) rc = cli_fail(&err);
    nodes += info.nodes, recorded += info.recorded;
    if (info.end_ns > end) end = info.end_ns;
    chakra_graph_free(g);
  }
  cli_progress_end(&bar);
  if (rc) chakra_timeline_discard(t);
  else if (chakra_timeline_close(t, &err)) rc = cli_fail(&err);
  if (!rc && !quiet)
    cli_summary("timeline of %d rank(s), %llu nodes (%llu at recorded start times), ends at %.3f us", n,
                (unsigned long long)nodes, (unsigned long long)recorded, end / 1000.0);
  chakra_set_close(set);
  return rc;
}
