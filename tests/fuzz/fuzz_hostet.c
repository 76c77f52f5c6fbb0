/* fuzz_hostet.c - libFuzzer target for the PyTorch host execution trace
 * reader and converter (chakra_convert_pytorch, host ET only).
 *
 * The input is host ET JSON of any schema version. Whatever the converter
 * accepts must be a Chakra trace that our own reader and graph loader
 * accept: a converter that writes what it cannot read back is a finding,
 * like a crash or a sanitizer report. */
#include <stdio.h>
#include <stdlib.h>

#include "chakra/graph.h"
#include "chakra/ingest.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[64];
  int fd = fuzz_input_file(data, size, path, sizeof path);
  const char *out = fuzz_out("h.et");
  chakra_convert_options opt = {.threads = 1, .p2p_missing = CHAKRA_P2P_MISSING_DROP};
  chakra_convert_report rep;
  chakra_error err;
  if (chakra_convert_pytorch(path, NULL, out, &opt, &rep, &err) == 0) {
    chakra_graph *g;
    if (chakra_graph_load(&g, out, NULL, &err)) {
      fprintf(stderr, "fuzz property violated: convert wrote a trace the graph loader refuses: %s\n", err.msg);
      abort();
    }
    chakra_graph_free(g);
  }
  close(fd);
  return 0;
}
