/* fuzz_driver.c - runs a fuzz target's LLVMFuzzerTestOneInput() over files
 * without libFuzzer, so every build (including the ASan/UBSan CI build)
 * replays the seed corpus and past findings as a plain regression test.
 *
 *   fuzz_<target>_regress FILE|DIR...
 *
 * Files whose name ends in ".hex" hold the input as hex digits (whitespace
 * and '#' comments ignored), so binary regressions stay reviewable text. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t unhex(uint8_t *p, size_t n) {
  size_t o = 0;
  int hi = -1, comment = 0;
  for (size_t i = 0; i < n; i++) {
    int c = p[i], v;
    if (comment) {
      comment = c != '\n';
      continue;
    }
    if (c == '#') {
      comment = 1;
      continue;
    }
    if (c >= '0' && c <= '9') v = c - '0';
    else if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
    else continue;
    if (hi < 0) hi = v;
    else p[o++] = (uint8_t)(hi << 4 | v), hi = -1;
  }
  return o;
}

static int run_file(const char *path) {
  size_t n;
  uint8_t *data = fuzz_slurp(path, &n);
  if (!data) {
    fprintf(stderr, "cannot read %s\n", path);
    return 1;
  }
  size_t len = strlen(path);
  if (len > 4 && strcmp(path + len - 4, ".hex") == 0) n = unhex(data, n);
  LLVMFuzzerTestOneInput(data, n);
  free(data);
  return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int run(const char *path, int *count) {
  struct stat st;
  if (stat(path, &st) != 0) {
    fprintf(stderr, "cannot stat %s\n", path);
    return 1;
  }
  if (!S_ISDIR(st.st_mode)) {
    ++*count;
    return run_file(path);
  }
  DIR *d = opendir(path);
  if (!d) return 1;
  char **names = NULL;
  size_t k = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.' || strcmp(e->d_name, "README.md") == 0) continue;
    names = realloc(names, (k + 1) * sizeof *names);
    size_t len = strlen(path) + strlen(e->d_name) + 2;
    names[k] = malloc(len);
    snprintf(names[k++], len, "%s/%s", path, e->d_name);
  }
  closedir(d);
  qsort(names, k, sizeof *names, cmp_str);
  int rc = 0;
  for (size_t i = 0; i < k; i++) {
    rc |= run(names[i], count);
    free(names[i]);
  }
  free(names);
  return rc;
}

int main(int argc, char **argv) {
  int rc = 0, count = 0;
  for (int i = 1; i < argc; i++) rc |= run(argv[i], &count);
  printf("%s: %d inputs replayed\n", argv[0], count);
  return rc || count == 0;
}
