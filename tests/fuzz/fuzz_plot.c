/* fuzz_plot.c - libFuzzer target for the report readers and SVG writers of
 * chakra plot and chakra compare.
 *
 * The input is any bytes claimed to be a sim report, a replay report,
 * stats JSON, a sweep table or a link report. Refusing is fine; crashes
 * and sanitizer reports are findings, and every SVG written (plot's, and
 * compare's of the input against itself) must be a well-formed XML
 * document (checked with expat). */
#include <expat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chakra/compare.h"
#include "chakra/plot.h"
#include "fuzz_common.h"

static void expect_well_formed(const char *path, const char *what) {
  size_t n = 0;
  uint8_t *text = fuzz_slurp(path, &n);
  XML_Parser p = XML_ParserCreate(NULL);
  int ok = text && p && XML_Parse(p, (const char *)text, (int)n, 1) == XML_STATUS_OK;
  if (!ok) {
    fprintf(stderr, "fuzz property violated: %s accepted the input but wrote no well-formed SVG (%s at line %lu)\n",
            what, p ? XML_ErrorString(XML_GetErrorCode(p)) : "no parser", p ? XML_GetCurrentLineNumber(p) : 0ul);
    abort();
  }
  XML_ParserFree(p);
  free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *out = fuzz_out("p.svg");
  chakra_error err;
  if (chakra_plot_json((const char *)data, size, "fuzz", out, NULL, &err) == 0) expect_well_formed(out, "plot");
  char in[64];
  int fd = fuzz_input_file(data, size, in, sizeof in);
  chakra_compare c;
  if (chakra_compare_reports(in, in, &c, &err) == 0) {
    out = fuzz_out("c.svg");
    if (chakra_compare_write_svg(&c, out, &err) == 0) expect_well_formed(out, "compare");
    chakra_compare_free(&c);
  }
  close(fd);
  return 0;
}
