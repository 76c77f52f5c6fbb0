/* fuzz_msccl.c - libFuzzer target for the MSCCL-IR XML reader and converter.
 *
 * The input is an XML file. It is converted with chakra_coll_from_msccl()
 * in the default, --embed-xml and --compat modes; whenever a conversion
 * succeeds, the rank files it wrote must load and be checkable
 * (chakra_coll_check() returns 0, whatever problems it finds). And every
 * input is converted both whole (one thread) and cut into parts parsed on
 * four threads (the split threshold lowered to 0): the outcome, the error
 * message and every file must be the same. Crashes, sanitizer reports, a
 * failed check load and a difference are findings. */
#include <stdio.h>
#include <stdlib.h>

#include "../../lib/coll/msccl.h"
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

static void whole_and_parts(const char *path) {
  size_t saved = msccl_split_min;
  msccl_split_min = 0;
  const char *whole = fuzz_out("whole"), *parts = fuzz_out("parts");
  chakra_coll_msccl_options o = {.size = 1 << 20, .reduce_bw = 50, .threads = 1};
  chakra_error e1 = {0}, e2 = {0};
  int r1 = chakra_coll_from_msccl(path, whole, &o, &e1);
  o.threads = 4;
  int r2 = chakra_coll_from_msccl(path, parts, &o, &e2);
  msccl_split_min = saved;
  if ((r1 == 0) != (r2 == 0) || (r1 && strcmp(e1.msg, e2.msg) != 0)) {
    fprintf(stderr, "fuzz property violated: whole parse (%d: %s) and parts (%d: %s) differ\n", r1, e1.msg, r2, e2.msg);
    abort();
  }
  size_t len = strlen(whole) + strlen(parts) + 32;
  char *a = malloc(len), *b = malloc(len);
  for (uint32_t r = 0; !r1 && a && b; r++) {
    snprintf(a, len, "%s.%u.et", whole, r);
    snprintf(b, len, "%s.%u.et", parts, r);
    if (access(a, R_OK) != 0) break;
    fuzz_expect_same_file(a, b, "a rank file of the whole parse and of the parts");
    unlink(a);
    unlink(b);
  }
  free(a);
  free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[64];
  int fd = fuzz_input_file(data, size, path, sizeof path);
  convert(path, 0, 0);
  convert(path, 0, 1);
  convert(path, 1, 0);
  whole_and_parts(path);
  close(fd);
  return 0;
}
