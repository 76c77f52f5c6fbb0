/* cmd_plot.c - chakra plot: an SVG picture of a simulation report or of
 * workload statistics. */
#include <string.h>

#include "chakra/plot.h"
#include "cli.h"

static const char about[] =
    "Draws bar charts of a 'chakra sim --report' file (per rank: GPU compute,\n"
    "exposed communication, overlap, CPU when present; collective time in\n"
    "flight by type) or of 'chakra stats --json' output (nodes by type,\n"
    "collective bytes by type, communication volume per group), recognised\n"
    "from the document. SVG opens in any browser; every bar carries its exact\n"
    "value in a data-value attribute. REPORT may be '-' (standard input);\n"
    "output goes to standard output unless -o.\n";

int cmd_plot(int argc, char **argv) {
  const char *out = "-";
  const cli_opt opts[] = {
      {.name = "output", .short_name = 'o', .kind = CLI_OPT_STRING, .dest = &out, .metavar = "FILE",
       .help = "output file, written atomically", .def = "standard output", .file = CLI_FILE_OUT},
      {0}};
  const cli_command cmd = {.name = "plot", .args = "REPORT.json", .min_args = 1, .max_args = 1, .about = about,
                           .opts = opts, .args_file = CLI_FILE_IN};
  cli_args pos;
  int rc = cli_parse(&cmd, argc, argv, &pos);
  if (rc != CLI_PROCEED) return rc;
  const char *in = pos.v[0];
  chakra_error err = {0};
  if (chakra_plot_file(in, out, NULL, &err)) {
    cli_error("%s", err.msg);
    return 2;
  }
  return 0;
}
