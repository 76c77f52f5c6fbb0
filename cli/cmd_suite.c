/* cmd_suite.c - chakra suite: the benchmark suite's commands (list, make,
 * run, score, check, board) over the library's chakra/suite.h; run's MPI
 * spread is in cmd_suiterun.c. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chakra/suite.h"
#include "cli.h"
#include "suitecli.h"

/* ---- list ---- */

static int print_progress(void *ctx, const char *phase, uint64_t done, uint64_t total) {
  (void)ctx;
  fprintf(stderr, "\rchakra suite: %s %llu of %llu\033[K", phase, (unsigned long long)done, (unsigned long long)total);
  return 0;
}

const chakra_suite_version *suitecli_version(const char *name) {
  const chakra_suite_version *v = chakra_suite_version_find(name);
  if (!v) {
    size_t n;
    const chakra_suite_version *all = chakra_suite_versions(&n);
    char known[256] = "";
    for (size_t i = 0; i < n; i++) {
      strncat(known, i ? ", " : "", sizeof known - strlen(known) - 1);
      strncat(known, all[i].name, sizeof known - strlen(known) - 1);
    }
    cli_error("--suite-version: \"%s\" is not a version of this tool (expected one of %s)", name, known);
  }
  return v;
}

static int suite_list(int argc, char **argv) {
  const char *version = NULL, *cls = NULL;
  int verbose = 0;
  const cli_opt opts[] = {
      {.name = "suite-version", .kind = CLI_OPT_STRING, .dest = &version, .metavar = "V",
       .help = "the suite version", .def = "the newest: 1.0"},
      {.name = "class", .kind = CLI_OPT_STRING, .dest = &cls, .metavar = "C", .help = "only this class"},
      {.name = "verbose", .short_name = 'v', .kind = CLI_OPT_FLAG, .dest = &verbose,
       .help = "each workload's command line and pinned SHA-256 too"},
      {0}};
  const cli_command cmd = {
      .name = "suite list", .max_args = 0, .opts = opts,
      .about = "Prints the suite's workloads by class: name, ranks, what it is (with -v the\n"
               "equivalent command line and the SHA-256 its files hash to), and the suite\n"
               "versions this tool knows (docs/suite.md)."};
  cli_args pos;
  int st = cli_parse(&cmd, argc, argv, &pos);
  if (st != CLI_PROCEED) return st;
  const chakra_suite_version *v = suitecli_version(version);
  if (!v) return CLI_EXIT_ERROR;
  if (cls && !chakra_suite_has_class(v, cls)) {
    cli_error("--class: suite %s has no class \"%s\"", v->name, cls);
    return CLI_EXIT_ERROR;
  }
  printf("suite %s: %s\n", v->name, v->about);
  const char *last = "";
  for (size_t i = 0; i < v->n; i++) {
    const chakra_suite_workload *w = &v->workloads[i];
    if (cls && strcmp(cls, w->cls) != 0) continue;
    if (strcmp(last, w->cls) != 0) printf("\nclass %s\n", last = w->cls);
    printf("  %-24s %6u ranks  %s\n", w->name, w->ranks, w->what);
    if (verbose) {
      char line[1024];
      chakra_suite_command(w, line, sizeof line);
      printf("      %s\n      sha256 %s\n", line, w->sha256 ? w->sha256 : "(not pinned)");
    }
  }
  size_t n;
  const chakra_suite_version *all = chakra_suite_versions(&n);
  printf("\nversions:");
  for (size_t i = 0; i < n; i++) printf(" %s", all[i].name);
  printf("\n");
  return cli_stdout_end(0);
}

/* ---- make ---- */

static int suite_make(int argc, char **argv) {
  const char *version = NULL, *cls = NULL, *dir = NULL;
  uint32_t threads = 0;
  int quiet = 0;
  const cli_opt opts[] = {
      {.name = "suite-version", .kind = CLI_OPT_STRING, .dest = &version, .metavar = "V",
       .help = "the suite version", .def = "the newest: 1.0"},
      {.name = "class", .kind = CLI_OPT_STRING, .dest = &cls, .metavar = "C", .help = "only this class",
       .def = "every class"},
      {.name = "output", .short_name = 'o', .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED, .dest = &dir,
       .metavar = "DIR", .help = "the suite folder (created when missing)"},
      {.name = "threads", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&threads), .min = 1, .max = 1024,
       .help = "threads of each generator", .def = "CPUs, at most 8"},
      {.name = "quiet", .short_name = 'q', .kind = CLI_OPT_FLAG, .dest = &quiet, .help = "no progress line"},
      {0}};
  const cli_command cmd = {
      .name = "suite make", .max_args = 0, .opts = opts, .check_later = 1,
      .about = "Writes the suite's workloads (or one class's) into DIR, each by its\n"
               "generator's library call (synth --shared, gen dlrm, gen microbench then\n"
               "share, coll gen, coll synth), hashes every file, holds each workload's hash\n"
               "to the version's pinned one, and writes DIR/suite.json, the manifest, last:\n"
               "a folder without it is an unfinished make.",
      .footer = "Exit status: 0 done; 2 bad options, a file that cannot be written, or\n"
                "workloads whose bytes are not the version's."};
  cli_args pos;
  int st = cli_parse(&cmd, argc, argv, &pos);
  if (st != CLI_PROCEED) return st;
  const chakra_suite_version *v = suitecli_version(version);
  if (!v) return CLI_EXIT_ERROR;
  if (cls && !chakra_suite_has_class(v, cls)) {
    cli_error("--class: suite %s has no class \"%s\"", v->name, cls);
    return CLI_EXIT_ERROR;
  }
  chakra_error err = {0};
  int tty = !quiet && isatty(2);
  int rc = chakra_suite_make(v, cls, dir, threads, tty ? print_progress : NULL, NULL, &err);
  if (tty) fputs("\r\033[K", stderr);
  if (rc) return cli_fail(&err);
  if (!quiet) cli_summary("suite %s%s%s written to %s (manifest %s/%s)", v->name, cls ? ", class " : "",
                          cls ? cls : "", dir, dir, CHAKRA_SUITE_MANIFEST);
  return 0;
}

int cmd_suite(int argc, char **argv) {
  static const cli_mode modes[] = {{"list", suite_list}, {"make", suite_make}, {"run", suitecli_run}};
  return cli_run_mode("suite", modes, sizeof modes / sizeof *modes, argc, argv);
}
