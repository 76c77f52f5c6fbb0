/* fuzz_issuelog.c - libFuzzer target for the issue/callback log reader
 * (chakra_timeline_from_issue_log, chakra_timeline_visualizer).
 *
 * The input is a simulator's log in any shape. Refusals are one line; an
 * accepted log gives a timeline file. Crashes and sanitizer reports are
 * findings. */
#include <stdio.h>
#include <stdlib.h>

#include "chakra/timeline.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[64];
  int fd = fuzz_input_file(data, size, path, sizeof path);
  const char *out = fuzz_out("t.json");
  chakra_issue_log_options o = {.npus = 4, .npu_mhz = 1000};
  chakra_error err;
  if (chakra_timeline_from_issue_log(path, out, &o, &err) == 0) {
    FILE *f = fopen(out, "rb");
    if (!f) {
      fprintf(stderr, "fuzz property violated: an accepted log wrote no timeline\n");
      abort();
    }
    fclose(f);
  } else if (strchr(err.msg, '\n')) {
    fprintf(stderr, "fuzz property violated: a refusal of more than one line: %s\n", err.msg);
    abort();
  }
  close(fd);
  return 0;
}
