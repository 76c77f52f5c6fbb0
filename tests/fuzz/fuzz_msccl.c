/* fuzz_msccl.c - libFuzzer target for the MSCCL-IR XML reader and converter.
 *
 * The input is an XML file. It is converted with chakra_coll_from_msccl()
 * in the default, --embed-xml and --compat modes; whenever a conversion
 * succeeds, the rank files it wrote must load and be checkable
 * (chakra_coll_check() returns 0, whatever problems it finds). Crashes,
 * sanitizer reports and a failed check load are findings. */
#include <stdio.h>
#include <stdlib.h>

#include "chakra/coll.h"
#include "fuzz_common.h"

static void ignore(void *ctx, const chakra_problem *p) { (void)ctx, (void)p; }

static void convert(const char *path, int compat, int embed) {
  const char *prefix = fuzz_out("m");
  chakra_coll_msccl_options o = {.size = 1 << 20, .reduce_bw = 50, .compat = compat, .embed_xml = embed};
  chakra_error err;
  if (chakra_coll_from_msccl(path, prefix, &o, &err)) return;
  /* the files exist: count them and check the set */
  char *paths[64];
  uint32_t n = 0;
  for (; n < 64; n++) {
    size_t len = strlen(prefix) + 16;
    paths[n] = malloc(len);
    snprintf(paths[n], len, "%s.%u.et", prefix, n);
    if (access(paths[n], R_OK) != 0) {
      free(paths[n]);
      break;
    }
  }
  uint64_t problems;
  if (n && chakra_coll_check(paths, n, ignore, NULL, &problems, &err)) {
    fprintf(stderr, "fuzz property violated: converted set does not load: %s\n", err.msg);
    abort();
  }
  for (uint32_t i = 0; i < n; i++) {
    unlink(paths[i]);
    free(paths[i]);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[64];
  int fd = fuzz_input_file(data, size, path, sizeof path);
  convert(path, 0, 0);
  convert(path, 0, 1);
  convert(path, 1, 0);
  close(fd);
  return 0;
}
