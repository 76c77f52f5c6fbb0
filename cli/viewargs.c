/* viewargs.c - options and loading for the view commands; see viewargs.h. */
#include "viewargs.h"

#include "chakra/build.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

int viewargs_value(int argc, char **argv, int *i, const char *name, const char **value) {
  const char *a = argv[*i];
  size_t n = strlen(name);
  if (strncmp(a, name, n) != 0) return 0;
  if (a[n] == '=') {
    *value = a + n + 1;
    return 1;
  }
  if (a[n]) return 0;
  if (*i + 1 >= argc) {
    cli_error("%s needs a value", name);
    return -1;
  }
  *value = argv[++*i];
  return 1;
}

int viewargs_u64(const char *opt, const char *s, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (!*s || *s == '-' || *end || errno) {
    cli_error("%s: '%s' is not a non-negative whole number", opt, s);
    return -1;
  }
  *out = v;
  return 0;
}

int viewargs_double(const char *opt, const char *s, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (!*s || *end || errno || v != v) {
    cli_error("%s: '%s' is not a number", opt, s);
    return -1;
  }
  *out = v;
  return 0;
}

typedef struct load_problems {
  uint64_t errors, warnings;
  char first[700];
} load_problems;

static void note_problem(void *ctx, const chakra_problem *pr) {
  load_problems *p = ctx;
  if (pr->severity >= CHAKRA_SEV_ERROR && !p->errors++)
    snprintf(p->first, sizeof p->first, "node %llu at offset %llu: %s", (unsigned long long)pr->node_id,
             (unsigned long long)pr->offset, pr->what);
  else if (pr->severity < CHAKRA_SEV_ERROR)
    p->warnings++;
}

int viewargs_load(const char *path, int ignore_ctrl_deps, chakra_graph **out) {
  if (strcmp(path, "-") == 0) {
    /* names are read back from the file in a second pass */
    cli_error("standard input cannot be used here: the trace is read twice; give a file name");
    return 2;
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

char *viewargs_rank_path(const char *arg, uint64_t rank) {
  struct stat st;
  if (strcmp(arg, "-") == 0 || (stat(arg, &st) == 0 && !S_ISDIR(st.st_mode))) return strdup(arg);
  size_t n = strlen(arg) + 32;
  char *p = malloc(n);
  if (p) chakra_rank_path(p, n, arg, (uint32_t)rank);
  return p;
}
