/* test_roundtrip_shared.c - pins that JSON is a lossless view of real
 * traces: every .et under ../shared/data (traces/ and reference/), written
 * by the reference tools and others, goes through chakra_jsonize() in each
 * of the three layouts and back through chakra_pack(), and the result is
 * byte-identical to the input. These are the library calls behind
 * `chakra jsonize` / `chakra pack` (cli_roundtrip.sh runs the CLI itself on
 * a sample; starting a process per file is too slow under ASan).
 * Files with identical bytes are checked once, by one worker thread per
 * CPU (the library keeps no global state). Skips (exit 77) when the
 * shared folder is absent. */
#include <ftw.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "chakra/json.h"
#include "testutil.h"

typedef struct seen {
  uint32_t crc;
  size_t size;
  uint8_t *bytes;
} seen;

static char **g_files;
static size_t g_n, g_cap;

static int collect(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)ftw;
  size_t n = strlen(path);
  if (flag == FTW_F && n > 3 && strcmp(path + n - 3, ".et") == 0) {
    if (g_n == g_cap) g_files = realloc(g_files, (g_cap = g_cap ? g_cap * 2 : 256) * sizeof *g_files);
    g_files[g_n++] = strdup(path);
  }
  return 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int same_bytes(const char *a, const char *b, uint64_t *first_diff) {
  FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
  int same = fa && fb;
  uint64_t off = 0;
  while (same) {
    int ca = getc(fa), cb = getc(fb);
    if (ca != cb) same = 0;
    else if (ca == EOF) break;
    else off++;
  }
  if (fa) fclose(fa);
  if (fb) fclose(fb);
  *first_diff = off;
  return same;
}

typedef struct work {
  char **files;       /* distinct files to check */
  size_t n;
  _Atomic size_t next;
  _Atomic size_t failures;
  _Atomic int warnings;
  const char *dir;
} work;

static void warn_count(void *ctx, const chakra_problem *p) {
  work *w = ctx;
  char line[1024];
  w->warnings++;
  chakra_problem_format(p, line, sizeof line);
  fprintf(stderr, "warning: %s\n", line);
}

/* One worker: takes files until none are left, with its own scratch names. */
static void *worker(void *arg) {
  work *w = arg;
  static _Atomic int ids;
  int id = ids++;
  char json[4300], back[4300];
  snprintf(json, sizeof json, "%s/trace.%d.json", w->dir, id);
  snprintf(back, sizeof back, "%s/back.%d.et", w->dir, id);
  const int layouts[] = {CHAKRA_JSON_LINES, CHAKRA_JSON_DOCUMENT, CHAKRA_JSON_COMPAT};
  const char *names[] = {"lines", "document", "compat"};
  for (size_t i; (i = w->next++) < w->n;) {
    const char *in = w->files[i];
    for (int l = 0; l < 3; l++) {
      chakra_error err = {0};
      int rc = chakra_jsonize(in, json, layouts[l], 0, NULL, warn_count, w, NULL, &err);
      if (!rc) rc = chakra_pack(json, back, 0, NULL, warn_count, w, NULL, &err);
      uint64_t diff = 0;
      if (rc) {
        fprintf(stderr, "FAIL %s (%s): %s\n", in, names[l], err.msg);
        w->failures++;
      } else if (!same_bytes(in, back, &diff)) {
        fprintf(stderr, "FAIL %s (%s): packed output differs from the input at byte %llu\n", in,
                names[l], (unsigned long long)diff);
        w->failures++;
      }
    }
  }
  return NULL;
}

int main(void) {
  const char *shared = tu_shared_dir();
  if (!shared) {
    printf("SKIP: shared folder not found (set CHAKRA_SHARED or provide ../shared)\n");
    return TU_SKIP;
  }
  char root[4200];
  snprintf(root, sizeof root, "%s/data", shared);
  if (nftw(root, collect, 16, FTW_PHYS) != 0) {
    fprintf(stderr, "cannot walk %s\n", root);
    return 1;
  }
  qsort(g_files, g_n, sizeof *g_files, cmp_str);
  /* Identical files (many ranks are byte-identical) are checked once. */
  seen *done = calloc(g_n + 1, sizeof *done);
  char **distinct = calloc(g_n + 1, sizeof *distinct);
  size_t n_done = 0;
  for (size_t i = 0; i < g_n; i++) {
    size_t len;
    uint8_t *bytes = tu_read_file(g_files[i], &len);
    uint32_t crc = (uint32_t)crc32(0, bytes, (uInt)len);
    int dup = 0;
    for (size_t k = 0; k < n_done && !dup; k++)
      dup = done[k].crc == crc && done[k].size == len && memcmp(done[k].bytes, bytes, len) == 0;
    if (dup) {
      free(bytes);
      continue;
    }
    distinct[n_done] = g_files[i];
    done[n_done++] = (seen){crc, len, bytes};
  }
  char *dir = tu_mkdtemp();
  work w = {.files = distinct, .n = n_done, .dir = dir};
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  int nthreads = cpus < 1 ? 1 : cpus > 8 ? 8 : (int)cpus;
  pthread_t th[8];
  for (int t = 0; t < nthreads; t++) pthread_create(&th[t], NULL, worker, &w);
  for (int t = 0; t < nthreads; t++) pthread_join(th[t], NULL);
  size_t failures = w.failures;
  int warnings = w.warnings;
  printf("%zu .et files (%zu distinct) x 3 layouts: %zu failures, %d warnings\n", g_n, n_done,
         failures, warnings);
  for (size_t i = 0; i < g_n; i++) free(g_files[i]);
  free(g_files);
  for (size_t k = 0; k < n_done; k++) free(done[k].bytes);
  free(done);
  free(distinct);
  tu_rmtree(dir);
  free(dir);
  return failures || warnings || g_n == 0 ? 1 : 0;
}
