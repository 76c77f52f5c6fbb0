/* common.c - helpers shared by the subcommands; see cli.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "chakra/build.h"
#include "chakra/run.h"
#include "chakra/sim.h"
#include "cli.h"
#include "progress.h"

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

/* "chakra CMD: " (and what follows) once a subcommand runs, "chakra: "
 * before; the message on the same line. */
static void put_line(const char *what, const char *fmt, va_list ap) {
  char head[256], who[160];
  snprintf(head, sizeof head, "%s: %s", cli_who(cli_command_name(), who, sizeof who), what);
  if (!held) cli_progress_clear(); /* a message never continues a progress line */
  cli_vline(cli_messages(), head, fmt, ap);
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  put_line("", fmt, ap);
  va_end(ap);
}

void cli_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  put_line("", fmt, ap);
  va_end(ap);
}

void cli_summary(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  put_line("", fmt, ap);
  va_end(ap);
}

void cli_warn(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  put_line("warning: ", fmt, ap);
  va_end(ap);
}

void cli_note(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  put_line("note: ", fmt, ap);
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
  say("%s: %s", chakra_severity_name(p->severity), line);
}

/* Phases are contiguous, so each one's time is measured from its start. */
int cli_timing(void *ctx, const char *phase, uint64_t done, uint64_t total) {
  cli_timer *t = ctx;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  double now = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
  if (done == 0) t->start = now;
  else if (done == total) {
    say("timing: %-8s %.3f s", phase, now - t->start);
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

const cli_choice cli_scaling_choices[] = {{"scale", 0}, {"as-is", 1}, {NULL, 0}};
const cli_choice cli_symmetry_choices[] = {
    {"auto", CHAKRA_SIM_SYMMETRY_AUTO}, {"off", CHAKRA_SIM_SYMMETRY_OFF}, {NULL, 0}};
const cli_choice cli_report_formats[] = {{"json", CHAKRA_RUN_JSON}, {"csv", CHAKRA_RUN_CSV}, {NULL, 0}};

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

chakra_set *cli_open_set(int argc, char **argv, const chakra_set_options *opt) {
  chakra_set *s;
  chakra_error err = {0};
  if (chakra_set_open_args(&s, (const char *const *)argv, (uint32_t)argc, opt, &err)) {
    cli_fail(&err);
    return NULL;
  }
  return s;
}

void cli_note_groups(const chakra_set *s) {
  if (chakra_set_groups_origin(s) == CHAKRA_GROUPS_BESIDE)
    cli_note("communicator groups from %s, found beside the traces (--comm-group-configuration names another file)",
             chakra_set_groups_path(s));
}

/* A shared set's manifest, PREFIX.set.json, names the set as its PREFIX does. */
int cli_names_prefix(const char *arg) {
  size_t n = strlen(arg);
  return strcmp(arg, "-") != 0 && (!is_file(arg) || (n > 9 && strcmp(arg + n - 9, ".set.json") == 0));
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

int cli_load_tolerant(const chakra_set *s, uint32_t rank, int ignore_ctrl_deps, chakra_graph **out) {
  const char *path = chakra_set_rank_name(s, rank);
  if (strcmp(path, "-") == 0) {
    /* names are read back from the file in a second pass */
    cli_error("standard input cannot be used here: the trace is read twice; give a file name");
    return CLI_EXIT_ERROR;
  }
  load_problems p = {0};
  chakra_graph_options opt = {.ignore_ctrl_deps = ignore_ctrl_deps, .tolerant = 1, .diag = note_problem, .diag_ctx = &p};
  chakra_error err = {0};
  if (chakra_set_load_rank(s, rank, &opt, out, &err)) return cli_fail(&err);
  if (p.errors)
    cli_warn("%s: %llu problem(s) while loading, worked around (first: %s); 'chakra validate' lists them",
             path, (unsigned long long)p.errors, p.first);
  return 0;
}
