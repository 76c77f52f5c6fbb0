/* common.c - helpers shared by the subcommands; see cli.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"

void cli_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("chakra: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

void cli_warn(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("chakra: warning: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

void cli_warn_cb(void *ctx, const char *msg) {
  (void)ctx;
  cli_warn("%s", msg);
}

void cli_diag(void *ctx, const chakra_problem *p) {
  (void)ctx;
  char line[2048];
  chakra_problem_format(p, line, sizeof line);
  fprintf(stderr, "chakra: %s: %s\n", chakra_severity_name(p->severity), line);
}

/* Phases are contiguous, so each one's time is measured from its start. */
int cli_timing(void *ctx, const char *phase, uint64_t done, uint64_t total) {
  cli_timer *t = ctx;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  double now = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
  if (done == 0) t->start = now;
  else if (done == total) fprintf(stderr, "chakra: timing: %-8s %.3f s\n", phase, now - t->start);
  return 0;
}

int cli_timing_wanted(int flag) {
  const char *env = getenv("CHAKRA_TIMING");
  return flag || (env && *env && strcmp(env, "0") != 0);
}

int cli_fail(const chakra_error *err) {
  cli_error("%s", err->msg);
  return err->code == CHAKRA_EFORMAT || err->code == CHAKRA_EIO ? 2 : 1;
}

int cli_is_help(const char *arg) {
  return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

int cli_parse_size(const char *s, unsigned long long *out) {
  char *end;
  errno = 0;
  if (!*s || *s == '-') return -1;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s) return -1;
  unsigned long long mul = 1;
  if (*end == 'K' || *end == 'k') mul = 1ull << 10, end++;
  else if (*end == 'M' || *end == 'm') mul = 1ull << 20, end++;
  else if (*end == 'G' || *end == 'g') mul = 1ull << 30, end++;
  if (*end == 'i') end++;
  if (*end == 'B') end++;
  if (*end) return -1;
  if (v > ~0ull / mul) return -1;
  *out = v * mul;
  return 0;
}

/* Anything but a directory: pipes and process substitution are traces too. */
static int is_file(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && !S_ISDIR(st.st_mode);
}

int cli_expand_traces(int argc, char **argv, char ***out) {
  size_t cap = 16, n = 0;
  char **paths = malloc(cap * sizeof *paths);
  if (!paths) return -1;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "-") == 0 || is_file(argv[i])) {
      if (n == cap) paths = realloc(paths, (cap *= 2) * sizeof *paths);
      paths[n++] = strdup(argv[i]);
      continue;
    }
    size_t found = 0;
    for (;; found++) {
      size_t len = strlen(argv[i]) + 32;
      char *p = malloc(len);
      snprintf(p, len, "%s.%zu.et", argv[i], found);
      if (!is_file(p)) {
        free(p);
        break;
      }
      if (n == cap) paths = realloc(paths, (cap *= 2) * sizeof *paths);
      paths[n++] = p;
    }
    if (!found) {
      cli_error("%s: no such file, and no %s.0.et for a rank prefix", argv[i], argv[i]);
      cli_free_paths(paths, (int)n);
      return -1;
    }
  }
  *out = paths;
  return (int)n;
}

void cli_free_paths(char **paths, int n) {
  for (int i = 0; i < n; i++) free(paths[i]);
  free(paths);
}
