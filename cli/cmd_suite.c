/* cmd_suite.c - chakra suite: the benchmark suite's commands (list, make,
 * run, score, check, board) over the library's chakra/suite.h; run's MPI
 * spread is in cmd_suiterun.c. */
#include <stdlib.h>
#include <string.h>

#include "chakra/sim.h"
#include "chakra/suite.h"
#include "cli.h"
#include "progress.h"
#include "suitecli.h"

/* ---- list ---- */

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

/* The version named by --suite-version, which must have the --class given
 * (NULL: any); NULL after the message. */
static const chakra_suite_version *version_with_class(const char *version, const char *cls) {
  const chakra_suite_version *v = suitecli_version(version);
  if (v && cls && !chakra_suite_has_class(v, cls)) {
    cli_error("--class: suite %s has no class \"%s\"", v->name, cls);
    return NULL;
  }
  return v;
}

static int suite_list(int argc, char **argv) {
  const char *version = NULL, *cls = NULL;
  int verbose = 0;
  const cli_opt opts[] = {
      {.name = "suite-version", .kind = CLI_OPT_STRING, .dest = &version, .metavar = "V",
       .help = "the suite version", .def = "the newest: 1.1"},
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
  const chakra_suite_version *v = version_with_class(version, cls);
  if (!v) return CLI_EXIT_ERROR;
  printf("suite %s: %s\n", v->name, v->about);
  printf("simulated on the congestion-%s network model\n", v->network_model == CHAKRA_NET_UNAWARE ? "unaware" : "aware");
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
       .help = "the suite version", .def = "the newest: 1.1"},
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
               "generator's library call (synth --shared, gen dlrm, gen microbench in the\n"
               "shared form, coll gen, coll synth), hashes every file, holds each workload's\n"
               "hash to the version's pinned one, and writes DIR/suite.json, the manifest,\n"
               "last: a folder without it is an unfinished make. An existing DIR/suite.json\n"
               "is removed before anything is written, so a make that fails leaves none.",
      .footer = "Exit status: 0 done; 2 bad options, a file that cannot be written, or\n"
                "workloads whose bytes are not the version's."};
  cli_args pos;
  int st = cli_parse(&cmd, argc, argv, &pos);
  if (st != CLI_PROCEED) return st;
  const chakra_suite_version *v = version_with_class(version, cls);
  if (!v) return CLI_EXIT_ERROR;
  chakra_error err = {0};
  cli_progress bar;
  void *bar_ctx;
  chakra_progress_fn progress = cli_progress_start(&bar, quiet, "workloads", &bar_ctx);
  int rc = chakra_suite_make(v, cls, dir, threads, progress, bar_ctx, &err);
  cli_progress_end(&bar);
  if (rc) return cli_fail(&err);
  if (!quiet) cli_summary("suite %s%s%s written to %s (manifest %s/%s)", v->name, cls ? ", class " : "",
                          cls ? cls : "", dir, dir, CHAKRA_SUITE_MANIFEST);
  return 0;
}


/* ---- score and board: results read and scored ---- */

typedef struct scored {
  chakra_suite_result *r;
  size_t n;
  chakra_suite_score s;
} scored;

static void scored_free(scored *x) {
  for (size_t i = 0; i < x->n; i++) chakra_suite_result_free(&x->r[i]);
  free(x->r);
  chakra_suite_score_free(&x->s);
}

/* Reads the results and scores them against the one named baseline (by
 * default the reference system's); 0 or an exit status after one line. */
static int read_and_score(scored *x, char **paths, int n, const char *baseline) {
  memset(x, 0, sizeof *x);
  if (!(x->r = calloc((size_t)n, sizeof *x->r))) return cli_error("out of memory"), CLI_EXIT_ERROR;
  chakra_error err = {0};
  for (int i = 0; i < n; i++, x->n++)
    if (chakra_suite_result_read(&x->r[i], paths[i], &err)) return cli_fail(&err);
  const char *want = baseline ? baseline : CHAKRA_SUITE_REFERENCE;
  size_t base = x->n;
  for (size_t i = 0; i < x->n; i++) {
    for (size_t k = 0; k < i; k++)
      if (strcmp(x->r[i].name, x->r[k].name) == 0) {
        cli_error("%s: name \"%s\" is also %s's: each result needs its own name (suite run --name)", x->r[i].path,
                  x->r[i].name, x->r[k].path);
        return CLI_EXIT_ERROR;
      }
    if (strcmp(x->r[i].name, want) == 0) base = i;
  }
  if (base == x->n) {
    cli_error("%s: no result of that name among the %zu given (%s)", baseline ? "--baseline" : "baseline", x->n,
              baseline ? "names come from suite run --name"
                       : "run the reference system too: chakra suite run DIR -o reference.json");
    return CLI_EXIT_ERROR;
  }
  if (chakra_suite_score_compute(&x->s, x->r, x->n, base, &err)) return cli_fail(&err);
  return 0;
}

static void print_json_string(const char *s) {
  putchar('"');
  for (; *s; s++)
    if (*s == '"' || *s == '\\') printf("\\%c", *s);
    else if ((unsigned char)*s < 0x20) printf("\\u%04x", (unsigned char)*s);
    else putchar(*s);
  putchar('"');
}

static void print_score_json(const scored *x) {
  const chakra_suite_score *s = &x->s;
  printf("{\"suite_version\": ");
  print_json_string(s->version->name);
  printf(", \"baseline\": ");
  print_json_string(x->r[s->baseline].name);
  printf(",\n \"results\": [");
  for (size_t k = 0; k < x->n; k++) {
    printf("%s\n  {\"name\": ", k ? "," : "");
    print_json_string(x->r[k].name);
    printf(", \"file\": ");
    print_json_string(x->r[k].path);
    printf(", \"division\": \"%s\", \"overall\": %.17g, \"classes\": {", x->r[k].division, s->overall[k]);
    for (size_t c = 0, first = 1; c < s->n_classes; c++) {
      double v = s->class_score[k * s->n_classes + c];
      if (v <= 0) continue;
      printf("%s\"%s\": %.17g", first ? "" : ", ", s->classes[c], v);
      first = 0;
    }
    printf("}, \"workloads\": {");
    for (size_t w = 0, first = 1; w < s->n_workloads; w++) {
      double v = s->speedup[k * s->n_workloads + w];
      if (v <= 0) continue;
      printf("%s\"%s\": %.17g", first ? "" : ", ", s->version->workloads[w].name, v);
      first = 0;
    }
    printf("}}");
  }
  printf("\n]}\n");
}

static void print_cell(double v) {
  if (v > 0) printf(" %12.4f", v);
  else printf(" %12s", "-");
}

static void print_score_table(const scored *x) {
  const chakra_suite_score *s = &x->s;
  printf("suite %s, baseline %s (score 1 by definition); speedup = baseline time / time\n\n%-26s",
         s->version->name, x->r[s->baseline].name, "");
  for (size_t k = 0; k < x->n; k++) printf(" %12.12s", x->r[k].name);
  printf("\n%-26s", "division");
  for (size_t k = 0; k < x->n; k++) printf(" %12s", x->r[k].division);
  printf("\n");
  for (size_t w = 0; w < s->n_workloads; w++) {
    int any = 0;
    for (size_t k = 0; k < x->n; k++) any |= s->speedup[k * s->n_workloads + w] > 0;
    if (!any) continue;
    printf("  %-24s", s->version->workloads[w].name);
    for (size_t k = 0; k < x->n; k++) print_cell(s->speedup[k * s->n_workloads + w]);
    printf("\n");
  }
  printf("\n");
  for (size_t c = 0; c < s->n_classes; c++) {
    int any = 0;
    for (size_t k = 0; k < x->n; k++) any |= s->class_score[k * s->n_classes + c] > 0;
    if (!any) continue;
    printf("class %-20s", s->classes[c]);
    for (size_t k = 0; k < x->n; k++) print_cell(s->class_score[k * s->n_classes + c]);
    printf("\n");
  }
  printf("%-26s", "overall");
  for (size_t k = 0; k < x->n; k++) print_cell(s->overall[k]);
  printf("\n");
}

static int suite_score(int argc, char **argv) {
  const char *baseline = NULL;
  int json = 0;
  const cli_opt opts[] = {
      {.name = "baseline", .kind = CLI_OPT_STRING, .dest = &baseline, .metavar = "NAME",
       .help = "the result (by its name) the others are compared with", .def = CHAKRA_SUITE_REFERENCE},
      {.name = "json", .kind = CLI_OPT_FLAG, .dest = &json, .help = "the scores as JSON"},
      {0}};
  const cli_command cmd = {
      .name = "suite score", .args = "RESULT.json...", .min_args = 1, .max_args = -1, .opts = opts,
      .args_file = CLI_FILE_IN,
      .about = "Scores results of one suite version against a baseline: per workload the\n"
               "speedup (baseline time / time), per class the geometric mean of its\n"
               "workloads' speedups, overall the geometric mean of the class scores. The\n"
               "baseline scores 1 by definition.",
      .footer = "Exit status: 0 done; 2 unreadable or invalid results, no baseline."};
  cli_args pos;
  int st = cli_parse(&cmd, argc, argv, &pos);
  if (st != CLI_PROCEED) return st;
  scored x;
  st = read_and_score(&x, pos.v, pos.n, baseline);
  if (!st) {
    if (json) print_score_json(&x);
    else print_score_table(&x);
  }
  scored_free(&x);
  return st ? st : cli_stdout_end(0);
}

static int suite_board(int argc, char **argv) {
  const char *baseline = NULL, *out = NULL;
  const cli_opt opts[] = {
      {.name = "baseline", .kind = CLI_OPT_STRING, .dest = &baseline, .metavar = "NAME",
       .help = "the result (by its name) the others are compared with", .def = CHAKRA_SUITE_REFERENCE},
      {.name = "output", .short_name = 'o', .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED, .dest = &out,
       .metavar = "board.html", .help = "the page", .file = CLI_FILE_OUT},
      {0}};
  const cli_command cmd = {
      .name = "suite board", .args = "RESULT.json...", .min_args = 1, .max_args = -1, .opts = opts,
      .args_file = CLI_FILE_IN,
      .about = "Writes the leaderboard of results of one suite version: one self-contained\n"
               "HTML page (inline CSS, SVG bar charts, sortable tables overall and per class,\n"
               "each entry linking its configuration: division, versions, rules, declared\n"
               "quantities, the system and network files). Scores as suite score's.",
      .footer = "Exit status: 0 done; 2 unreadable or invalid results, no baseline, an\n"
                "output that cannot be written."};
  cli_args pos;
  int st = cli_parse(&cmd, argc, argv, &pos);
  if (st != CLI_PROCEED) return st;
  scored x;
  st = read_and_score(&x, pos.v, pos.n, baseline);
  chakra_error err = {0};
  if (!st && chakra_suite_board_write(&x.s, x.r, out, &err)) st = cli_fail(&err);
  scored_free(&x);
  return st;
}

int cmd_suite(int argc, char **argv) {
  static const cli_mode modes[] = {{"list", suite_list},   {"make", suite_make}, {"run", suitecli_run},
                                   {"score", suite_score}, {"check", suitecli_check}, {"board", suite_board}};
  return cli_run_mode("suite", modes, sizeof modes / sizeof *modes, argc, argv);
}
