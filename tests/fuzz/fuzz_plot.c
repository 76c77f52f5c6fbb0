/* fuzz_plot.c - libFuzzer target for chakra plot's report reader.
 *
 * The input is any bytes claimed to be a sim report or stats JSON. Refusing
 * is fine; crashes and sanitizer reports are findings, and an accepted
 * input must give a complete SVG document. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra/plot.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *out = fuzz_out("p.svg");
  chakra_error err;
  if (chakra_plot_json((const char *)data, size, "fuzz", out, NULL, &err) == 0) {
    FILE *f = fopen(out, "rb");
    char head[6] = {0}, tail[8] = {0};
    if (!f || fread(head, 1, 5, f) != 5 || fseek(f, -7, SEEK_END) || fread(tail, 1, 7, f) != 7 ||
        strcmp(head, "<?xml") != 0 || strcmp(tail, "</svg>\n") != 0) {
      fprintf(stderr, "fuzz property violated: plot accepted the input but wrote no complete SVG\n");
      abort();
    }
    fclose(f);
  }
  return 0;
}
