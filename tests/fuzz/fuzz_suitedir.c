/* fuzz_suitedir.c - libFuzzer target for a suite folder's manifest
 * (chakra_suite_dir_open: what suite run and suite check read first).
 *
 * Once, a real suite folder is made in the scratch directory (suite
 * tiny-1.0, class microbench: a few small files); each input is written
 * as its suite.json and the folder opened. Refusals and problems are one
 * line; an opened folder lists distinct workloads of its version; the
 * manifest make wrote opens with no problem. CHAKRA_FUZZ_VERBOSE=1 says
 * what each input did. Crashes, sanitizer reports
 * and violated properties are findings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra/suite.h"
#include "fuzz_common.h"

static void fail(const char *what, const char *detail) {
  fprintf(stderr, "fuzz property violated: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
  abort();
}

static void on_problem(void *ctx, const chakra_problem *p) {
  if (p->what && strchr(p->what, '\n')) fail("a problem of more than one line", p->what);
  ++*(uint64_t *)ctx;
}

/* The scratch directory holding a made suite; its manifest's bytes. */
static const char *made_suite(uint8_t **manifest, size_t *n) {
  static char dir[600];
  static uint8_t *made;
  static size_t made_n;
  if (!dir[0]) {
    const char *m = fuzz_out("suite.json");
    snprintf(dir, sizeof dir, "%.*s", (int)(strrchr(m, '/') - m), m);
    chakra_error err;
    if (chakra_suite_make(chakra_suite_version_find("tiny-1.0"), "microbench", dir, 1, NULL, NULL, &err))
      fail("the seed suite cannot be made", err.msg);
    if (!(made = fuzz_slurp(m, &made_n))) fail("the made manifest cannot be read", m);
  }
  *manifest = made, *n = made_n;
  return dir;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *made;
  size_t made_n;
  const char *dir = made_suite(&made, &made_n), *mpath = fuzz_out("suite.json");
  FILE *f = fopen(mpath, "wb");
  if (!f || fwrite(data, 1, size, f) != size || fclose(f)) fail("cannot write the manifest", mpath);
  chakra_suite_dir d;
  uint64_t problems = 0, seen = 0;
  chakra_error err;
  if (chakra_suite_dir_open(&d, dir, on_problem, &seen, &problems, &err) == 0) {
    if (!d.version || !d.n) fail("a folder opened without a version or a workload", NULL);
    for (size_t i = 0; i < d.n; i++) {
      if (d.index[i] >= d.version->n) fail("a workload index past the version's table", NULL);
      for (size_t k = 0; k < i; k++)
        if (d.index[k] == d.index[i]) fail("a workload listed twice", d.version->workloads[d.index[i]].name);
    }
    if (problems != seen) fail("problems counted and reported differ", NULL);
    if (getenv("CHAKRA_FUZZ_VERBOSE")) fprintf(stderr, "fuzz_suitedir: %zu workload(s), %llu problem(s)\n", d.n,
                                               (unsigned long long)problems);
    if (size == made_n && memcmp(data, made, size) == 0 && problems)
      fail("the manifest make wrote opens with problems", NULL);
    chakra_suite_dir_free(&d);
  } else {
    if (strchr(err.msg, '\n')) fail("a refusal of more than one line", err.msg);
    if (getenv("CHAKRA_FUZZ_VERBOSE")) fprintf(stderr, "fuzz_suitedir: refused: %s\n", err.msg);
    if (size == made_n && memcmp(data, made, size) == 0) fail("the manifest make wrote is refused", err.msg);
  }
  return 0;
}
