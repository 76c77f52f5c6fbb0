/* fuzz_flat.c - libFuzzer target for the columns reader (chakra_flat_read,
 * flatscan's decoder of its own, what python/chakra_c reads through).
 *
 * The input is an ET file. When the columns reader accepts it, writing the
 * columns back must succeed, and reading that file gives columns that write
 * the same bytes again (a fixed point). Crashes, sanitizer reports and
 * violated properties are findings. */
#include <stdio.h>
#include <stdlib.h>

#include "chakra/flat.h"
#include "fuzz_common.h"

static void ignore_warn(void *ctx, const chakra_problem *p) {
  char line[256];
  (void)ctx;
  (void)chakra_problem_format(p, line, sizeof line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[64];
  int fd = fuzz_input_file(data, size, path, sizeof path);
  const char *once = fuzz_out("f1.et"), *twice = fuzz_out("f2.et");
  chakra_flat_options o = {.flags = CHAKRA_FLAT_STD, .diag = ignore_warn};
  chakra_flat *f = NULL, *g = NULL;
  chakra_error err;
  if (chakra_flat_read(&f, path, &o, &err) == 0) {
    if (chakra_flat_write(f, once, &err)) {
      fprintf(stderr, "fuzz property violated: columns read could not be written back: %s\n", err.msg);
      abort();
    }
    if (chakra_flat_read(&g, once, &o, &err) || chakra_flat_write(g, twice, &err)) {
      fprintf(stderr, "fuzz property violated: columns written could not be read and written again: %s\n", err.msg);
      abort();
    }
    fuzz_expect_same_file(once, twice, "flat read -> write is not a fixed point");
  }
  chakra_flat_free(f);
  chakra_flat_free(g);
  close(fd);
  return 0;
}
