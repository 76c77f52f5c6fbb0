/* fuzz_jsonize.c - libFuzzer target for the JSON views of .et input.
 *
 * The input is a .et file. Whenever chakra_jsonize() accepts it, JSON must
 * be a faithful view, checked as properties: every layout jsonizes,
 * packing the JSON Lines, the document and the compat output gives the same
 * bytes, and jsonizing those again gives the same JSON Lines (a fixed
 * point). Crashes, sanitizer reports and violated properties are findings. */
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

static void json_properties(const char *path) {
  const char *lines = fuzz_out("t.jsonl"), *doc = fuzz_out("t.json"), *compat = fuzz_out("t.compat");
  chakra_error err;
  if (chakra_jsonize(path, lines, CHAKRA_JSON_LINES, 0, NULL, ignore_warn, NULL, NULL, &err)) return;
  if (chakra_jsonize(path, doc, CHAKRA_JSON_DOCUMENT, 0, NULL, ignore_warn, NULL, NULL, &err) ||
      chakra_jsonize(path, compat, CHAKRA_JSON_COMPAT, 0, NULL, ignore_warn, NULL, NULL, &err)) {
    fprintf(stderr, "fuzz property violated: JSON Lines worked but another layout failed: %s\n", err.msg);
    abort();
  }
  const char *a = fuzz_out("a.et"), *b = fuzz_out("b.et");
  const char *inputs[] = {lines, doc, compat};
  for (int i = 0; i < 3; i++) {
    if (chakra_pack(inputs[i], i ? b : a, 0, NULL, ignore_warn, NULL, NULL, &err)) {
      fprintf(stderr, "fuzz property violated: pack refused jsonize output (layout %d): %s\n", i, err.msg);
      abort();
    }
    if (i) fuzz_expect_same_file(a, b, "pack of the three layouts differs");
  }
  const char *again = fuzz_out("again.jsonl");
  if (chakra_jsonize(a, again, CHAKRA_JSON_LINES, 0, NULL, ignore_warn, NULL, NULL, &err)) {
    fprintf(stderr, "fuzz property violated: packed output does not jsonize: %s\n", err.msg);
    abort();
  }
  fuzz_expect_same_file(lines, again, "jsonize -> pack -> jsonize is not a fixed point");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[64];
  int fd = fuzz_input_file(data, size, path, sizeof path);
  json_properties(path);
  close(fd);
  return 0;
}
