/* common.c - helpers shared by the subcommands; see cli.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "chakra/build.h"
#include "cli.h"

/* Where messages go: stderr, or a buffer while they are held. */
static FILE *held;
static char *held_text;
static size_t held_len;

FILE *cli_messages(void) { return held ? held : stderr; }

void cli_messages_hold(void) {
  if (!held) held = open_memstream(&held_text, &held_len);
}

void cli_messages_release(int print) {
  if (!held) return;
  fclose(held);
  held = NULL;
  if (print && held_text) fputs(held_text, stderr);
  free(held_text);
  held_text = NULL;
}

/* "chakra CMD: " once a subcommand runs, "chakra: " before. */
static void put_prefix(void) {
  const char *name = cli_command_name();
  if (name[0]) fprintf(cli_messages(), "chakra %s: ", name);
  else fputs("chakra: ", cli_messages());
}

void cli_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  put_prefix();
  vfprintf(cli_messages(), fmt, ap);
  fputc('\n', cli_messages());
  va_end(ap);
}

void cli_warn(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  put_prefix();
  fputs("warning: ", cli_messages());
  vfprintf(cli_messages(), fmt, ap);
  fputc('\n', cli_messages());
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
  put_prefix();
  fprintf(cli_messages(), "%s: %s\n", chakra_severity_name(p->severity), line);
}

/* Phases are contiguous, so each one's time is measured from its start. */
int cli_timing(void *ctx, const char *phase, uint64_t done, uint64_t total) {
  cli_timer *t = ctx;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  double now = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
  if (done == 0) t->start = now;
  else if (done == total) {
    put_prefix();
    fprintf(cli_messages(), "timing: %-8s %.3f s\n", phase, now - t->start);
  }
  return 0;
}

int cli_timing_wanted(int flag) {
  const char *env = getenv("CHAKRA_TIMING");
  return flag || (env && *env && strcmp(env, "0") != 0);
}

int cli_stdout_end(int status) {
  errno = 0;
  int failed = fflush(stdout) != 0, e = errno;
  if (!failed && !ferror(stdout)) return status;
  if (status != CLI_EXIT_ERROR) cli_error("standard output: write failed%s%s", e ? ": " : "", e ? strerror(e) : "");
  return CLI_EXIT_ERROR;
}

int cli_fail(const chakra_error *err) {
  cli_error("%s", err->msg);
  return CLI_EXIT_ERROR;
}

int cli_is_help(const char *arg) {
  return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

/* Anything but a directory: pipes and process substitution are traces too. */
static int is_file(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && !S_ISDIR(st.st_mode);
}

static int push_path(char ***paths, size_t *n, size_t *cap, char *p) {
  if (!p) return -1;
  if (*n == *cap) {
    char **q = realloc(*paths, (*cap *= 2) * sizeof *q);
    if (!q) {
      free(p);
      return -1;
    }
    *paths = q;
  }
  (*paths)[(*n)++] = p;
  return 0;
}

/* Rank files PREFIX.<r>.et beyond the `found` contiguous ones, by a scan
 * of the prefix's folder: a set cut short by a gap (0, 1, 16, 63) must not
 * quietly become a 2-rank workload. Returns how many there are and the
 * lowest such rank in *first (UINT64_MAX when none). */
static size_t ranks_after_gap(const char *prefix, size_t found, uint64_t *first) {
  const char *slash = strrchr(prefix, '/');
  char dir[4096];
  snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - prefix) : 1, slash ? prefix : ".");
  if (slash == prefix) snprintf(dir, sizeof dir, "/");
  const char *base = slash ? slash + 1 : prefix;
  size_t blen = strlen(base), extra = 0;
  *first = UINT64_MAX;
  DIR *d = opendir(dir);
  if (!d) return 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    const char *nm = e->d_name;
    if (strncmp(nm, base, blen) != 0 || nm[blen] != '.') continue;
    const char *q = nm + blen + 1;
    char *end;
    if (*q < '0' || *q > '9') continue;
    unsigned long long r = strtoull(q, &end, 10);
    if (strcmp(end, ".et") != 0 || r < found) continue;
    extra++;
    if (r < *first) *first = r;
  }
  closedir(d);
  return extra;
}

int cli_expand_traces(int argc, char **argv, char ***out) {
  size_t cap = 16, n = 0;
  char **paths = malloc(cap * sizeof *paths);
  if (!paths) return -1;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "-") == 0 || is_file(argv[i])) {
      if (push_path(&paths, &n, &cap, strdup(argv[i]))) goto oom;
      continue;
    }
    size_t found = 0;
    for (;; found++) {
      size_t len = strlen(argv[i]) + 32;
      char *p = malloc(len);
      if (!p) goto oom;
      chakra_rank_path(p, len, argv[i], (uint32_t)found);
      if (!is_file(p)) {
        free(p);
        break;
      }
      if (push_path(&paths, &n, &cap, p)) goto oom;
    }
    if (!found) {
      cli_error("%s: no such file, and no %s.0.et for a rank prefix", argv[i], argv[i]);
      cli_free_paths(paths, (int)n);
      return -1;
    }
    uint64_t first;
    size_t extra = ranks_after_gap(argv[i], found, &first);
    if (extra) {
      cli_error("%s: ranks 0..%zu exist, then %s.%zu.et is missing but %zu later rank file(s) exist (first: "
                "%s.%llu.et); a workload's ranks must be numbered without gaps",
                argv[i], found - 1, argv[i], found, extra, argv[i], (unsigned long long)first);
      cli_free_paths(paths, (int)n);
      return -1;
    }
  }
  *out = paths;
  return (int)n;
oom:
  cli_error("out of memory");
  cli_free_paths(paths, (int)n);
  return -1;
}

void cli_free_paths(char **paths, int n) {
  for (int i = 0; i < n; i++) free(paths[i]);
  free(paths);
}

int cli_names_prefix(const char *arg) { return strcmp(arg, "-") != 0 && !is_file(arg); }

char *cli_rank_path(const char *arg, uint32_t rank) {
  if (strcmp(arg, "-") == 0 || is_file(arg)) return strdup(arg);
  size_t n = strlen(arg) + 32;
  char *p = malloc(n);
  if (p) chakra_rank_path(p, n, arg, rank);
  return p;
}

typedef struct load_problems {
  uint64_t errors;
  char first[700];
} load_problems;

static void note_problem(void *ctx, const chakra_problem *pr) {
  load_problems *p = ctx;
  if (pr->severity >= CHAKRA_SEV_ERROR && !p->errors++)
    snprintf(p->first, sizeof p->first, "node %llu at offset %llu: %s", (unsigned long long)pr->node_id,
             (unsigned long long)pr->offset, pr->what);
}

int cli_load_tolerant(const char *path, int ignore_ctrl_deps, chakra_graph **out) {
  if (strcmp(path, "-") == 0) {
    /* names are read back from the file in a second pass */
    cli_error("standard input cannot be used here: the trace is read twice; give a file name");
    return CLI_EXIT_ERROR;
  }
  load_problems p = {0};
  chakra_graph_options opt = {.ignore_ctrl_deps = ignore_ctrl_deps, .tolerant = 1, .diag = note_problem, .diag_ctx = &p};
  chakra_error err = {0};
  if (chakra_graph_load(out, path, &opt, &err)) return cli_fail(&err);
  if (p.errors)
    cli_warn("%s: %llu problem(s) while loading, worked around (first: %s); 'chakra validate' lists them",
             path, (unsigned long long)p.errors, p.first);
  return 0;
}
