/* fuzz_pack.c - libFuzzer target for the JSON reader (chakra_pack).
 *
 * The input is JSON in any layout. When pack accepts it, its output must be
 * a trace our reader accepts, and JSON is then a faithful view of it:
 * jsonize -> pack reproduces the packed bytes exactly. Crashes, sanitizer
 * reports and violated properties are findings. */
#include <stdio.h>
#include <stdlib.h>

#include "chakra/json.h"
#include "fuzz_common.h"

/* Formats every problem: chakra_problem_format() sees fuzzed text too. */
static void ignore_warn(void *ctx, const chakra_problem *p) {
  char line[256];
  (void)ctx;
  (void)chakra_problem_format(p, line, sizeof line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[64];
  int fd = fuzz_input_file(data, size, path, sizeof path);
  const char *out = fuzz_out("p.et"), *js = fuzz_out("p.jsonl"), *again = fuzz_out("p2.et");
  chakra_error err;
  if (chakra_pack(path, out, 0, NULL, ignore_warn, NULL, NULL, &err) == 0) {
    if (chakra_jsonize(out, js, CHAKRA_JSON_LINES, 0, NULL, ignore_warn, NULL, NULL, &err)) {
      fprintf(stderr, "fuzz property violated: pack wrote a trace jsonize refuses: %s\n", err.msg);
      abort();
    }
    if (chakra_pack(js, again, 0, NULL, ignore_warn, NULL, NULL, &err)) {
      fprintf(stderr, "fuzz property violated: pack refused jsonize output: %s\n", err.msg);
      abort();
    }
    fuzz_expect_same_file(out, again, "pack -> jsonize -> pack is not a fixed point");
  }
  close(fd);
  return 0;
}
