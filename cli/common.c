/* common.c - helpers shared by the subcommands; see cli.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "chakra/output.h"
#include "cli.h"

/* "chakra CMD: " once a subcommand runs, "chakra: " before. */
static void put_prefix(void) {
  const char *name = cli_command_name();
  if (name[0]) fprintf(stderr, "chakra %s: ", name);
  else fputs("chakra: ", stderr);
}

void cli_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  put_prefix();
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

void cli_warn(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  put_prefix();
  fputs("warning: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

void cli_warn_cb(void *ctx, const char *msg) {
  (void)ctx;
  cli_warn("%s", msg);
}

int cli_fail(const chakra_error *err) {
  cli_error("%s", err->msg);
  return CLI_EXIT_ERROR;
}

int cli_check_outputs(const char *const *outputs, size_t n_out, const char *const *inputs, size_t n_in) {
  for (size_t i = 0; i < n_out; i++) {
    chakra_error err = {0};
    if (outputs[i] && chakra_output_check(outputs[i], inputs, n_in, &err)) return cli_fail(&err);
  }
  return 0;
}

int cli_is_help(const char *arg) {
  return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
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
