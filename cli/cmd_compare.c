/* cmd_compare.c - chakra compare: a simulation's report against a replay's. */
#include <stdio.h>

#include "chakra/compare.h"
#include "cli.h"

static const char about[] =
    "Pairs the figures of two reports in chakra sim's schema (chakra sim --report\n"
    "and chakra replay --report): per rank the finish time and the exposed\n"
    "communication, per collective type the time in flight summed over the ranks,\n"
    "and prints predicted and measured microseconds with the error\n"
    "(predicted - measured) / measured.\n";

int cmd_compare(int argc, char **argv) {
  const char *svg = NULL;
  const cli_opt opts[] = {{.name = "output", .short_name = 'o', .kind = CLI_OPT_STRING, .dest = &svg,
                           .metavar = "PLOT.svg", .help = "also draw the rows as a bar chart (SVG)",
                           .file = CLI_FILE_OUT},
                          {0}};
  const cli_command cmd = {.name = "compare", .args = "SIM.json REPLAY.json", .min_args = 2, .max_args = 2,
                           .about = about, .opts = opts, .args_file = CLI_FILE_IN};
  cli_args pos;
  int st = cli_parse(&cmd, argc, argv, &pos);
  if (st != CLI_PROCEED) return st;
  chakra_compare c;
  chakra_error err = {0};
  if (chakra_compare_reports(pos.v[0], pos.v[1], &c, &err)) {
    cli_error("%s", err.msg);
    return 2;
  }
  printf("%-28s %14s %14s %9s\n", "", "predicted_us", "measured_us", "error");
  for (size_t i = 0; i < c.n; i++) {
    const chakra_compare_row *r = &c.rows[i];
    printf("%-28s %14.3f %14.3f", r->label, r->predicted_ns / 1000.0, r->measured_ns / 1000.0);
    if (r->measured_ns > 0) printf(" %+8.1f%%\n", 100.0 * (r->predicted_ns - r->measured_ns) / r->measured_ns);
    else printf(" %9s\n", "-");
  }
  int status = 0;
  if (svg && chakra_compare_write_svg(&c, svg, &err)) {
    cli_error("%s", err.msg);
    status = 2;
  }
  chakra_compare_free(&c);
  return status;
}
