/* cmd_jsonize.c - chakra jsonize: a .et trace as JSON. */
#include <string.h>

#include "chakra/json.h"
#include "cli.h"

static const char usage[] =
    "usage: chakra jsonize [--document | --compat] [--gzip] FILE.et [-o OUT]\n"
    "\n"
    "Writes the trace as JSON in the protobuf JSON mapping (64-bit integers as\n"
    "strings, enums by name, schema field names). FILE may be gzip-compressed\n"
    "or '-' for standard input; OUT defaults to standard output.\n"
    "\n"
    "  (default)     JSON Lines: the GlobalMetadata, then one Node per line\n"
    "  --document    one JSON document {\"global_metadata\": ..., \"nodes\": [...]}\n"
    "  --compat      the reference jsonizer's layout, byte for byte (indented,\n"
    "                lowerCamelCase, objects concatenated)\n"
    "  --gzip        compress the output (implied by OUT ending in .gz)\n"
    "  -o, --output  output file, written atomically\n";

int cmd_jsonize(int argc, char **argv) {
  const char *in = NULL, *out = "-";
  int layout = CHAKRA_JSON_LINES, gzip = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (cli_is_help(a)) {
      fputs(usage, stdout);
      return 0;
    } else if (strcmp(a, "--document") == 0) {
      layout = CHAKRA_JSON_DOCUMENT;
    } else if (strcmp(a, "--compat") == 0) {
      layout = CHAKRA_JSON_COMPAT;
    } else if (strcmp(a, "--gzip") == 0) {
      gzip = 1;
    } else if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && i + 1 < argc) {
      out = argv[++i];
    } else if (a[0] == '-' && a[1]) {
      cli_error("jsonize: unknown option '%s'\n%s", a, usage);
      return 2;
    } else if (!in) {
      in = a;
    } else {
      cli_error("jsonize: one input file only ('%s')", a);
      return 2;
    }
  }
  if (!in) {
    cli_error("jsonize: no input file\n%s", usage);
    return 2;
  }
  size_t len = strlen(out);
  if (len > 3 && strcmp(out + len - 3, ".gz") == 0) gzip = 1;
  chakra_error err = {0};
  chakra_json_stats st;
  if (chakra_jsonize(in, out, layout, gzip, &st, cli_diag, NULL, &err)) return cli_fail(&err);
  return 0;
}
