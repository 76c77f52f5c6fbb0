/* cmd_pack.c - chakra pack: JSON back into a .et trace. */
#include <string.h>

#include "chakra/json.h"
#include "chakra/trace.h"
#include "cli.h"

static const char usage[] =
    "usage: chakra pack FILE.json[l] -o OUT.et [--gzip]\n"
    "\n"
    "Reads JSON in any layout 'chakra jsonize' writes (JSON Lines, one document,\n"
    "or the reference jsonizer's concatenated objects), with field names in\n"
    "either spelling (ctrl_deps or ctrlDeps) and 64-bit integers as strings or\n"
    "numbers, and writes a length-delimited .et. FILE may be gzip-compressed or\n"
    "'-'. Strings that are not valid UTF-8 are written with U+FFFD and a warning.\n"
    "\n"
    "  -o, --output  output .et (required; '-' for standard output), written\n"
    "                atomically\n"
    "  --gzip        compress the output (implied by OUT ending in .gz)\n";

int cmd_pack(int argc, char **argv) {
  const char *in = NULL, *out = NULL;
  int flags = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (cli_is_help(a)) {
      fputs(usage, stdout);
      return 0;
    } else if (strcmp(a, "--gzip") == 0) {
      flags |= CHAKRA_WRITE_GZIP;
    } else if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && i + 1 < argc) {
      out = argv[++i];
    } else if (a[0] == '-' && a[1]) {
      cli_error("pack: unknown option '%s'\n%s", a, usage);
      return 2;
    } else if (!in) {
      in = a;
    } else {
      cli_error("pack: one input file only ('%s')", a);
      return 2;
    }
  }
  if (!in || !out) {
    cli_error("pack: %s\n%s", in ? "no output file (-o OUT.et)" : "no input file", usage);
    return 2;
  }
  chakra_error err = {0};
  chakra_json_stats st;
  if (chakra_pack(in, out, flags, &st, cli_diag, NULL, &err)) return cli_fail(&err);
  return 0;
}
