/* cmd_plot.c - chakra plot: an SVG picture of a simulation report or of
 * workload statistics. */
#include <string.h>

#include "chakra/plot.h"
#include "cli.h"
#include "viewargs.h"

static const char usage[] =
    "usage: chakra plot REPORT.json [-o OUT.svg]\n"
    "\n"
    "Draws bar charts of a 'chakra sim --report' file (per rank: GPU compute,\n"
    "exposed communication, overlap, CPU when present; collective time in\n"
    "flight by type) or of 'chakra stats --json' output (nodes by type,\n"
    "collective bytes by type, communication volume per group), recognised\n"
    "from the document. SVG opens in any browser; every bar carries its exact\n"
    "value in a data-value attribute. REPORT may be '-' (standard input);\n"
    "output goes to standard output unless -o.\n"
    "\n"
    "  -o, --output FILE   output file, written atomically\n";

int cmd_plot(int argc, char **argv) {
  const char *in = NULL, *out = "-", *v;
  int got;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (cli_is_help(a)) {
      fputs(usage, stdout);
      return 0;
    } else if ((got = viewargs_value(argc, argv, &i, "--output", &v)) != 0 ||
               (got = viewargs_value(argc, argv, &i, "-o", &v)) != 0) {
      if (got < 0) return 2;
      out = v;
    } else if (a[0] == '-' && a[1]) {
      cli_error("plot: unknown option '%s'\n%s", a, usage);
      return 2;
    } else if (!in) {
      in = a;
    } else {
      cli_error("plot: one report only ('%s')", a);
      return 2;
    }
  }
  if (!in) {
    cli_error("plot: no input\n%s", usage);
    return 2;
  }
  chakra_error err = {0};
  if (chakra_plot_file(in, out, NULL, &err)) {
    cli_error("%s", err.msg);
    return 2;
  }
  return 0;
}
