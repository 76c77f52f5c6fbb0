/* jsonize_batch.c - test helper: jsonizes many traces in one process.
 *
 *   jsonize_batch lines|document|compat OUTDIR FILE...
 *
 * writes OUTDIR/<i>.json for the i-th FILE with chakra_jsonize(), the call
 * behind `chakra jsonize`, so that decode_check.py can compare hundreds of
 * files without starting hundreds of (sanitized, slow to start) processes. */
#include <stdio.h>
#include <string.h>

#include "chakra/json.h"

static void warn_print(void *ctx, const chakra_problem *p) {
  char line[1024];
  (void)ctx;
  chakra_problem_format(p, line, sizeof line);
  fprintf(stderr, "warning: %s\n", line);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: jsonize_batch lines|document|compat OUTDIR FILE...\n");
    return 2;
  }
  int layout = strcmp(argv[1], "document") == 0 ? CHAKRA_JSON_DOCUMENT
               : strcmp(argv[1], "compat") == 0 ? CHAKRA_JSON_COMPAT
                                                 : CHAKRA_JSON_LINES;
  for (int i = 3; i < argc; i++) {
    char out[4096];
    snprintf(out, sizeof out, "%s/%d.json", argv[2], i - 3);
    chakra_error err = {0};
    if (chakra_jsonize(argv[i], out, layout, 0, NULL, warn_print, NULL, NULL, &err)) {
      fprintf(stderr, "jsonize_batch: %s\n", err.msg);
      return 1;
    }
  }
  return 0;
}
