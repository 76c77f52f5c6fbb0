/* fuzz_suiteresult.c - libFuzzer target for the suite's result reader
 * (chakra_suite_result_read: what suite score, check and board read).
 *
 * The input is a result file in any shape. Refusals are one line; an
 * accepted result of a known suite version is written back and that file
 * is accepted too. Crashes, sanitizer reports and violated properties are
 * findings. */
#include <stdio.h>
#include <stdlib.h>

#include "chakra/suite.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[64];
  int fd = fuzz_input_file(data, size, path, sizeof path);
  const char *out = fuzz_out("r.json");
  chakra_suite_result r = {0}, again = {0};
  chakra_error err;
  if (chakra_suite_result_read(&r, path, &err) == 0) {
    const chakra_suite_version *v = r.suite_version ? chakra_suite_version_find(r.suite_version) : NULL;
    if (v && chakra_suite_result_write(&r, v, out, &err) == 0 && chakra_suite_result_read(&again, out, &err)) {
      fprintf(stderr, "fuzz property violated: a result written back is refused: %s\n", err.msg);
      abort();
    }
  } else if (strchr(err.msg, '\n')) {
    fprintf(stderr, "fuzz property violated: a refusal of more than one line: %s\n", err.msg);
    abort();
  }
  chakra_suite_result_free(&r);
  chakra_suite_result_free(&again);
  close(fd);
  return 0;
}
