/* cmd_pack.c - chakra pack: JSON back into a .et trace. */
#include <string.h>

#include "chakra/json.h"
#include "chakra/trace.h"
#include "cli.h"
#include "progress.h"

static const char about[] =
    "Reads JSON in any layout 'chakra jsonize' writes (JSON Lines, one document,\n"
    "or the reference jsonizer's concatenated objects), with field names in\n"
    "either spelling (ctrl_deps or ctrlDeps) and 64-bit integers as strings or\n"
    "numbers, and writes a length-delimited .et. FILE may be gzip-compressed or\n"
    "'-'. Strings that are not valid UTF-8 are written with U+FFFD and a warning.\n";

int cmd_pack(int argc, char **argv) {
  const char *out = NULL;
  int gzip = 0, quiet = 0;
  const cli_opt opts[] = {
      {.name = "output", .short_name = 'o', .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED, .dest = &out,
       .metavar = "OUT.et", .help = "output .et ('-' for standard output), written atomically",
       .file = CLI_FILE_OUT},
      {.name = "gzip", .kind = CLI_OPT_FLAG, .dest = &gzip, .help = "compress the output (implied by OUT ending in .gz)"},
      {.name = "quiet", .short_name = 'q', .kind = CLI_OPT_FLAG, .dest = &quiet, .help = "no progress line"},
      {0}};
  const cli_command cmd = {.name = "pack", .args = "FILE.json[l]", .min_args = 1, .max_args = 1, .about = about,
                           .opts = opts, .args_file = CLI_FILE_IN};
  cli_args pos;
  int st = cli_parse(&cmd, argc, argv, &pos);
  if (st != CLI_PROCEED) return st;
  chakra_error err = {0};
  chakra_json_stats st_json;
  cli_progress bar;
  chakra_json_options jopt = {0};
  jopt.progress = cli_progress_start(&bar, quiet, "bytes", &jopt.progress_ctx);
  int rc = chakra_pack(pos.v[0], out, gzip ? CHAKRA_WRITE_GZIP : 0, &st_json, cli_diag, NULL, &jopt, &err);
  cli_progress_end(&bar);
  return rc ? cli_fail(&err) : 0;
}
