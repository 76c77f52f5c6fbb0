/* fuzz_textwl.c - libFuzzer target for ASTRA-sim 1.0 text workloads
 * (chakra_convert_text), in both our layout and --compat.
 *
 * Whatever the converter accepts must be written as rank files that our
 * reader accepts, node by node. */
#include <stdio.h>
#include <stdlib.h>

#include "chakra/ingest.h"
#include "chakra/trace.h"
#include "fuzz_common.h"

static void expect_readable(const char *path) {
  chakra_reader *r;
  chakra_error err;
  if (chakra_reader_open(&r, path, NULL, &err)) {
    fprintf(stderr, "fuzz property violated: convert text wrote %s, which the reader refuses: %s\n", path, err.msg);
    abort();
  }
  chakra_node *n;
  int rc;
  while ((rc = chakra_reader_next(r, &n, &err)) == 1) {
  }
  if (rc) {
    fprintf(stderr, "fuzz property violated: %s: %s\n", path, err.msg);
    abort();
  }
  chakra_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[64];
  int fd = fuzz_input_file(data, size, path, sizeof path);
  for (int compat = 0; compat < 2; compat++) {
    const char *prefix = fuzz_out(compat ? "tc" : "t");
    chakra_text_options opt = {.npus = 2, .passes = 1, .compat = compat};
    chakra_text_report rep;
    chakra_error err;
    if (chakra_convert_text(path, prefix, &opt, &rep, &err) == 0) {
      char rank[700];
      for (int r = 0; r < 2; r++) {
        if (snprintf(rank, sizeof rank, "%s.%d.et", prefix, r) >= (int)sizeof rank) abort();
        expect_readable(rank);
      }
    }
  }
  close(fd);
  return 0;
}
