/* cmd_jsonize.c - chakra jsonize: a .et trace as JSON. */
#include <string.h>

#include "chakra/json.h"
#include "cli.h"
#include "progress.h"

static const char about[] =
    "Writes the trace as JSON in the protobuf JSON mapping (64-bit integers as\n"
    "strings, enums by name, schema field names). FILE may be gzip-compressed\n"
    "or '-' for standard input. The default layout is JSON Lines: the\n"
    "GlobalMetadata, then one Node per line.\n";

int cmd_jsonize(int argc, char **argv) {
  const char *out = "-";
  int layout = CHAKRA_JSON_LINES, gzip = 0, quiet = 0;
  const cli_opt opts[] = {
      {.name = "document", .kind = CLI_OPT_FLAG, .dest = &layout, .value = CHAKRA_JSON_DOCUMENT,
       .help = "one JSON document {\"global_metadata\": ..., \"nodes\": [...]}"},
      {.name = "compat", .kind = CLI_OPT_FLAG, .dest = &layout, .value = CHAKRA_JSON_COMPAT,
       .help = "the reference jsonizer's layout, byte for byte (indented, lowerCamelCase, objects "
               "concatenated)"},
      {.name = "gzip", .kind = CLI_OPT_FLAG, .dest = &gzip, .help = "compress the output (implied by OUT ending in .gz)"},
      {.name = "output", .short_name = 'o', .kind = CLI_OPT_STRING, .dest = &out, .metavar = "OUT",
       .help = "output file, written atomically", .def = "standard output", .file = CLI_FILE_OUT},
      {.name = "quiet", .short_name = 'q', .kind = CLI_OPT_FLAG, .dest = &quiet, .help = "no progress line"},
      {0}};
  const cli_command cmd = {.name = "jsonize", .args = "FILE.et", .min_args = 1, .max_args = 1, .about = about,
                           .opts = opts, .args_file = CLI_FILE_IN};
  cli_args pos;
  int st = cli_parse(&cmd, argc, argv, &pos);
  if (st != CLI_PROCEED) return st;
  size_t len = strlen(out);
  if (len > 3 && strcmp(out + len - 3, ".gz") == 0) gzip = 1;
  chakra_error err = {0};
  chakra_json_stats st_json;
  cli_progress bar;
  chakra_json_options jopt = {0};
  jopt.progress = cli_progress_start(&bar, quiet, "bytes", &jopt.progress_ctx);
  int rc = chakra_jsonize(pos.v[0], out, layout, gzip, &st_json, cli_diag, NULL, &jopt, &err);
  cli_progress_end(&bar);
  return rc ? cli_fail(&err) : 0;
}
