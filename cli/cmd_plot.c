/* cmd_plot.c - chakra plot: an SVG picture of a simulation report or of
 * workload statistics. */
#include <string.h>

#include "chakra/plot.h"
#include "cli.h"

static const char about[] =
    "Draws, recognised from the document:\n"
    "  a run report ('chakra sim --report', 'chakra replay --report'): per rank\n"
    "    where the time went (GPU compute, exposed communication, pipeline\n"
    "    bubble), compute/exposed/overlap/CPU, collective time by type;\n"
    "  two to six run reports side by side (chakra plot A.json B.json);\n"
    "  'chakra stats --json': nodes by type, collective bytes, volume per group;\n"
    "  a sweep table ('chakra sweep -o FILE.json'): each configuration's\n"
    "    iteration time, exposed communication and compute;\n"
    "  a link report ('chakra sim --link-report'): a heat map of link\n"
    "    utilisation, the busiest links, utilisation per dimension.\n"
    "SVG opens in any browser; every bar and cell carries its exact value in a\n"
    "data-value attribute. REPORT may be '-' (standard input); output goes to\n"
    "standard output unless -o.\n";

int cmd_plot(int argc, char **argv) {
  const char *out = "-";
  const cli_opt opts[] = {
      {.name = "output", .short_name = 'o', .kind = CLI_OPT_STRING, .dest = &out, .metavar = "FILE",
       .help = "output file, written atomically", .def = "standard output", .file = CLI_FILE_OUT},
      {0}};
  const cli_command cmd = {.name = "plot", .args = "REPORT.json [REPORT2.json ...]", .min_args = 1, .max_args = 6,
                           .about = about, .opts = opts, .args_file = CLI_FILE_IN};
  cli_args pos;
  int rc = cli_parse(&cmd, argc, argv, &pos);
  if (rc != CLI_PROCEED) return rc;
  chakra_error err = {0};
  if (chakra_plot_files((const char *const *)pos.v, (size_t)pos.n, out, NULL, &err)) {
    cli_error("%s", err.msg);
    return 2;
  }
  return 0;
}
