/* cmd_suiterun.c - chakra suite run and check: the workloads of a suite
 * folder simulated on a system under test (on local cores, or dealt out
 * over mpirun's processes as sweep deals points, rank 0 writing the
 * result), and a result verified: hashes, rules, and a sample of its
 * numbers reproduced by simulating again. */
#include <dirent.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chakra/suite.h"
#include "cli.h"
#include "progress.h"
#include "mpijob.h"
#include "suitecli.h"

/* Workloads report from several threads, and every workload on a
 * multi-dimensional network gets the simulator's same warning: one line
 * each, and each warning once. */
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;
static char *warned[32];

static int seen_before(const char *line) {
  size_t i = 0;
  for (; i < sizeof warned / sizeof *warned && warned[i]; i++)
    if (strcmp(warned[i], line) == 0) return 1;
  if (i < sizeof warned / sizeof *warned) warned[i] = strdup(line);
  return 0;
}

static void print_problem(void *ctx, const chakra_problem *p) {
  const cli_job *j = ctx;
  if (j && j->rank != 0) return; /* every process reads the same files */
  char line[2048];
  chakra_problem_format(p, line, sizeof line);
  pthread_mutex_lock(&print_lock);
  if (p->severity >= CHAKRA_SEV_ERROR) cli_error("%s", line);
  else if (!seen_before(line)) cli_warn("%s", line);
  pthread_mutex_unlock(&print_lock);
}

/* A scratch folder for expanded workloads inside the suite folder. */
static char *make_scratch(const char *dir) {
  size_t n = strlen(dir) + 32;
  char *p = malloc(n);
  if (!p) return NULL;
  snprintf(p, n, "%s/.run-XXXXXX", dir);
  if (!mkdtemp(p)) return free(p), NULL;
  return p;
}

/* Removes the scratch folder and what the expansion left in it. */
static void remove_scratch(const char *scratch) {
  if (!scratch) return;
  DIR *d = opendir(scratch);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d)))
      if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
        size_t n = strlen(scratch) + strlen(e->d_name) + 2;
        char *p = malloc(n);
        if (p) snprintf(p, n, "%s/%s", scratch, e->d_name), unlink(p);
        free(p);
      }
    closedir(d);
  }
  rmdir(scratch);
}

/* ---- run ---- */

typedef struct run_args {
  const char *system, *network, *output, *name, *cls;
  cli_list algo;
  uint32_t threads;
  int quiet, replay;
} run_args;

static int parse_run(run_args *a, int argc, char **argv, cli_args *pos) {
  const cli_opt opts[] = {
      {.name = "system", .kind = CLI_OPT_STRING, .dest = &a->system, .metavar = "S",
       .help = "system JSON (chakra sim's)", .def = "the reference system", .file = CLI_FILE_IN},
      {.name = "network", .kind = CLI_OPT_STRING, .dest = &a->network, .metavar = "N",
       .help = "network YAML or inline topology; its outer dimension scales to each workload",
       .def = "the reference network", .file = CLI_FILE_IN},
      {.name = "algo", .kind = CLI_OPT_LIST, .dest = &a->algo, .metavar = "RULES",
       .help = "coll expand rules ([COLL][:MIN-MAX][@PG]=ALGO|PREFIX, repeatable): the open division"},
      {.name = "output", .short_name = 'o', .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED, .dest = &a->output,
       .metavar = "RESULT.json", .help = "the result file (rank 0 writes it)", .file = CLI_FILE_OUT},
      {.name = "name", .kind = CLI_OPT_STRING, .dest = &a->name, .metavar = "NAME",
       .help = "the submission's name (scores and the board name results by it)",
       .def = "reference without --system, --network and --algo, else unnamed"},
      {.name = "class", .kind = CLI_OPT_STRING, .dest = &a->cls, .metavar = "C", .help = "only this class's workloads",
       .def = "all in DIR"},
      {.name = "threads", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&a->threads), .min = 1, .max = 1024,
       .help = "workloads simulated at once in each process", .def = "CPUs; 1 per process under mpirun"},
      {.name = "replay", .kind = CLI_OPT_FLAG, .dest = &a->replay,
       .help = "under mpirun -np N: replay the workloads of N ranks on this machine (one rank a process) and "
               "record what was measured"},
      {.name = "quiet", .short_name = 'q', .kind = CLI_OPT_FLAG, .dest = &a->quiet, .help = "no progress line"},
      {0}};
  const cli_command cmd = {
      .name = "suite run", .args = "DIR", .min_args = 1, .max_args = 1, .opts = opts,
      .about = "Checks the workloads of the suite folder DIR against its manifest and the\n"
               "suite version's hashes, then validates and simulates each one in-process\n"
               "(several at once on the local cores; under mpirun dealt out over the\n"
               "processes) on the system under test, whose network's outer dimension is\n"
               "scaled to each workload's rank count, and writes the result: suite and tool\n"
               "versions, the hashes of the workloads and configurations, the division, and\n"
               "per workload the iteration or collective time, exposed communication share,\n"
               "achieved bus bandwidth and compute utilisation (docs/suite.md).",
      .footer = "Exit status: 0 every workload ran; 1 some workload failed (its entry says why;\n"
                "the result is written); 2 bad options, a folder whose files are not the\n"
                "suite's, unreadable configurations."};
  return cli_parse(&cmd, argc, argv, pos);
}

/* This process's share of the selected workloads: positions r, r+K, ... */
static size_t select_jobs(const chakra_suite_dir *d, const char *cls, const cli_job *j, size_t *jobs, size_t *all) {
  size_t n = 0, k = 0;
  for (size_t i = 0; i < d->n; i++) {
    if (cls && strcmp(d->version->workloads[d->index[i]].cls, cls) != 0) continue;
    if (k++ % (size_t)j->size == (size_t)j->rank) jobs[n++] = i;
  }
  *all = k;
  return n;
}

static int cmp_metrics(const void *a, const void *b) {
  const chakra_suite_metrics *x = a, *y = b;
  return (x->workload > y->workload) - (x->workload < y->workload);
}

/* A replayed run's system: this machine, as text. */
static int describe_machine(chakra_suite_result *r, chakra_error *err) {
  char host[256] = "this machine", text[400], hex[65];
  gethostname(host, sizeof host - 1);
  host[sizeof host - 1] = 0;
  snprintf(text, sizeof text, "replayed on %s by mpirun, one rank a process", host);
  chakra_suite_sha256(text, strlen(text), hex);
  char **f[] = {&r->system_path, &r->system_sha256, &r->system_text, &r->network_path, &r->network_sha256,
                &r->network_text, &r->mode, &r->declared_network};
  const char *v[] = {"replay", hex, text, "replay", hex, text, "replay", "measured"};
  for (size_t i = 0; i < sizeof f / sizeof *f; i++) {
    free(*f[i]);
    if (!(*f[i] = strdup(v[i]))) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  r->peak_tflops = 0;
  return CHAKRA_OK;
}

/* Rank 0: the result with every process's metrics in table order. */
static int write_result(const run_args *a, const chakra_suite_dir *d, const chakra_suite_sut *sut,
                        chakra_suite_metrics *all, size_t n) {
  chakra_error err = {0};
  chakra_suite_result r;
  memset(&r, 0, sizeof r);
  qsort(all, n, sizeof *all, cmp_metrics);
  int rc = chakra_suite_result_describe_sut(&r, d->version, d->path, a->name, sut,
                                            (const char *const *)a->algo.items, a->algo.n, &err);
  if (!rc && a->replay) rc = describe_machine(&r, &err);
  r.m = all;
  r.n = n;
  if (!rc) rc = chakra_suite_result_write(&r, d->version, a->output, &err);
  r.m = NULL, r.n = 0;
  chakra_suite_result_free(&r);
  if (rc) return cli_fail(&err);
  size_t failed = 0, first = 0;
  for (size_t i = n; i-- > 0;)
    if (!all[i].ok) failed++, first = i;
  if (!failed) return 0;
  cli_error("%zu of %zu workloads did not run; the first, %s: %s", failed, n,
            d->version->workloads[all[first].workload].name, all[first].error);
  return 1;
}

static int run_mine(const run_args *a, const cli_job *j, const chakra_suite_dir *d, const chakra_suite_sut *sut,
                    chakra_suite_metrics **mine, size_t *n, size_t *total, chakra_error *err) {
  size_t *jobs = calloc(d->n ? d->n : 1, sizeof *jobs);
  *mine = calloc(d->n ? d->n : 1, sizeof **mine);
  if (!jobs || !*mine) return free(jobs), chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  *n = select_jobs(d, a->cls, j, jobs, total);
  char *scratch = a->algo.n ? make_scratch(d->path) : NULL;
  int rc = a->algo.n && !scratch ? chakra_error_set(err, CHAKRA_EIO, "%s: cannot make a scratch folder", d->path) : 0;
  cli_progress bar; /* rank 0 draws it */
  chakra_suite_run_options o = {.rules = (const char *const *)a->algo.items, .n_rules = a->algo.n,
                                .scratch = scratch, .threads = a->threads ? a->threads : j->mpi ? 1 : 0,
                                .diag = print_problem, .diag_ctx = (void *)j};
  o.progress = cli_progress_start(&bar, a->quiet || j->rank != 0, "workloads", &o.progress_ctx);
  if (!rc) rc = chakra_suite_run_sut(d, sut, &o, jobs, *n, *mine, err);
  cli_progress_end(&bar);
  remove_scratch(scratch);
  free(scratch);
  free(jobs);
  return rc;
}

static int run_job(const run_args *a, const cli_job *j, const char *dirpath) {
  chakra_error err = {0};
  chakra_suite_dir d;
  memset(&d, 0, sizeof d);
  uint64_t problems = 0;
  /* the configuration read once, first: a bad file is named before any
   * work, and what is simulated is what the result records */
  chakra_suite_sut *sut = NULL;
  int rc = chakra_suite_sut_open(&sut, a->system, a->network, &err);
  if (!rc) rc = chakra_suite_dir_open(&d, dirpath, print_problem, (void *)j, &problems, &err);
  if (!rc && problems)
    rc = chakra_error_set(&err, CHAKRA_EINVAL, "%s: %llu file problem(s): the folder is not the suite's workloads",
                          dirpath, (unsigned long long)problems);
  if (!rc && a->cls && !chakra_suite_has_class(d.version, a->cls))
    rc = chakra_error_set(&err, CHAKRA_EINVAL, "--class: suite %s has no class \"%s\"", d.version->name, a->cls);
  chakra_suite_metrics *mine = NULL;
  size_t n = 0, total = 0;
  if (!rc && a->replay) {
    if (!(mine = calloc(d.n ? d.n : 1, sizeof *mine))) rc = chakra_error_set(&err, CHAKRA_ENOMEM, "out of memory");
    else if (suitecli_replay(&d, a->cls, j, mine, &n)) rc = CHAKRA_EINVAL; /* its lines are printed */
    if (j->rank != 0) n = 0;
  } else if (!rc)
    rc = run_mine(a, j, &d, sut, &mine, &n, &total, &err);
  int rank0_failed = cli_job_rank0(j, rc ? 1 : 0);
  if (rc && err.msg[0] && (j->rank == 0 || !rank0_failed)) cli_error("%s", err.msg);
  int st = cli_job_agree(j, rc ? 1 : 0) ? CLI_EXIT_ERROR : 0;
  void *all = NULL;
  size_t got = 0;
  if (!st && cli_job_gather(j, mine, n, sizeof *mine, &all, &got)) st = (cli_error("out of memory"), 2);
  if (!st && j->rank == 0) st = write_result(a, &d, sut, all, got);
  free(all);
  free(mine);
  chakra_suite_dir_free(&d);
  chakra_suite_sut_free(sut);
  return st;
}

int suitecli_run(int argc, char **argv) {
  run_args a;
  memset(&a, 0, sizeof a);
  int mpi = cli_under_mpirun();
  if (mpi) cli_messages_hold();
  cli_args pos;
  int st = parse_run(&a, argc, argv, &pos);
  cli_job j;
  if (mpi || st == CLI_PROCEED) {
    if (st == CLI_PROCEED && a.replay && (a.system || a.network || a.algo.n)) {
      cli_error("--replay: measures this machine; --system, --network and --algo describe a simulated one");
      st = CLI_EXIT_ERROR;
    }
    if (st == CLI_PROCEED && a.replay && !mpi) {
      cli_error("--replay: start it under mpirun -np N (it replays the workloads of N ranks)");
      st = CLI_EXIT_ERROR;
    }
    int started = st == CLI_PROCEED && a.replay
                      ? suitecli_replay_start(&j, &argc, &argv)
                      : cli_job_start(&j, &argc, &argv, "built without MPI: every process runs every workload");
    if (started) {
      cli_messages_release(1);
      st = started;
    } else {
      if (mpi) st = cli_job_settle(&j, st);
      if (st == CLI_PROCEED) st = cli_job_agree(&j, run_job(&a, &j, pos.v[0]));
      cli_job_end(&j);
    }
  }
  cli_list_free(&a.algo);
  return st;
}

/* ---- check ---- */

typedef struct checker {
  const chakra_suite_result *r;
  uint64_t problems;
} checker;

static void problem(checker *c, const char *field, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void problem(checker *c, const char *field, const char *fmt, ...) {
  char what[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  chakra_problem p = chakra_problem_make(CHAKRA_SEV_ERROR, what);
  p.file = c->r->path;
  p.field = field;
  print_problem(NULL, &p);
  c->problems++;
}

static void count_problem(void *ctx, const chakra_problem *p) {
  print_problem(NULL, p);
  ((checker *)ctx)->problems++;
}

/* A configuration file against the hash and text the result recorded. */
static void check_file(checker *c, const char *key, const char *path, const char *sha, const char *text,
                       const char *builtin) {
  char field[32], hex[65];
  snprintf(field, sizeof field, "%s.sha256", key);
  chakra_suite_sha256(text, strlen(text), hex);
  if (strcmp(hex, sha) != 0) problem(c, field, "%s, but the recorded text hashes to %s", sha, hex);
  if (strcmp(path, CHAKRA_SUITE_REFERENCE) == 0) {
    if (strcmp(text, builtin) != 0) problem(c, field, "named the reference, but the text is not the reference's");
    return;
  }
  chakra_error err = {0};
  if (strcmp(key, "network") == 0 && strcmp(path, text) == 0 && access(path, F_OK) != 0) return; /* inline */
  if (chakra_suite_sha256_file(path, hex, &err)) problem(c, field, "%s", err.msg);
  else if (strcmp(hex, sha) != 0) problem(c, field, "%s, but %s now hashes to %s: changed since the run", sha, path, hex);
}

static const char *config_path(const char *path) { return strcmp(path, CHAKRA_SUITE_REFERENCE) == 0 ? NULL : path; }

static void check_rules(checker *c) {
  const chakra_suite_result *r = c->r;
  if (strcmp(r->division, "closed") != 0) return;
  if (r->n_rules) problem(c, "rules", "the closed division runs no collective rules (--algo makes a result open)");
  chakra_error err = {0};
  uint64_t broken = 0;
  if (chakra_suite_rules_closed(config_path(r->system_path), config_path(r->network_path), count_problem, c, &broken,
                                &err))
    problem(c, "system", "%s", err.msg);
}

/* Whether a workload of class cls was taken in round `round`. */
static int class_taken(const chakra_suite_result *r, const chakra_suite_version *v, const int *round_of,
                       const char *cls, int round) {
  for (size_t k = 0; k < r->n; k++)
    if (round_of[k] == round && strcmp(v->workloads[r->m[k].workload].cls, cls) == 0) return 1;
  return 0;
}

/* Up to `want` workloads: in each round the smallest not yet taken of
 * every class (ties by table order), so a sample costs little and covers
 * the classes. */
static size_t pick_sample(const chakra_suite_result *r, const chakra_suite_dir *d, size_t want, size_t *jobs) {
  const chakra_suite_version *v = d->version;
  int *round_of = calloc(r->n ? r->n : 1, sizeof *round_of); /* 0: not taken */
  size_t n = 0;
  for (int round = 1, more = round_of != NULL; more && n < want; round++) {
    more = 0;
    for (size_t i = 0; i < r->n && n < want; i++) {
      const char *cls = v->workloads[r->m[i].workload].cls;
      if (class_taken(r, v, round_of, cls, round)) continue;
      size_t best = r->n;
      for (size_t k = 0; k < r->n; k++) {
        const chakra_suite_workload *w = &v->workloads[r->m[k].workload];
        if (round_of[k] || strcmp(w->cls, cls) != 0) continue;
        if (best == r->n || w->ranks < v->workloads[r->m[best].workload].ranks) best = k;
      }
      if (best == r->n) continue;
      round_of[best] = round, more = 1;
      for (size_t p = 0; p < d->n; p++)
        if (d->index[p] == r->m[best].workload) jobs[n++] = p;
    }
  }
  free(round_of);
  return n;
}

static int resimulate(checker *c, const chakra_suite_dir *d, size_t sample, uint32_t threads, int quiet) {
  const chakra_suite_result *r = c->r;
  size_t *jobs = calloc(r->n ? r->n : 1, sizeof *jobs);
  chakra_suite_metrics *m = calloc(r->n ? r->n : 1, sizeof *m);
  chakra_error err = {0};
  int rc = jobs && m ? 0 : chakra_error_set(&err, CHAKRA_ENOMEM, "out of memory");
  size_t n = rc ? 0 : pick_sample(r, d, sample ? sample : r->n, jobs);
  char *scratch = !rc && r->n_rules ? make_scratch(d->path) : NULL;
  if (!rc && r->n_rules && !scratch) rc = chakra_error_set(&err, CHAKRA_EIO, "%s: cannot make a scratch folder", d->path);
  chakra_suite_run_options o = {.system = config_path(r->system_path), .network = config_path(r->network_path),
                                .rules = (const char *const *)r->rules, .n_rules = r->n_rules, .scratch = scratch,
                                .threads = threads};
  if (!rc) rc = chakra_suite_run(d, &o, jobs, n, m, &err);
  for (size_t i = 0; !rc && i < n; i++)
    for (size_t k = 0; k < r->n; k++)
      if (r->m[k].workload == m[i].workload) {
        char where[48];
        snprintf(where, sizeof where, "workloads[%zu]", k);
        chakra_suite_metrics_compare(&r->m[k], &m[i], r->path, where, count_problem, c);
      }
  if (!rc && !quiet) cli_summary("%zu workload(s) re-simulated", n);
  remove_scratch(scratch);
  free(scratch);
  free(jobs);
  free(m);
  return rc ? cli_fail(&err) : 0;
}

static int check_workloads(checker *c, const chakra_suite_dir *d) {
  const chakra_suite_result *r = c->r;
  if (strcmp(d->version->name, r->suite_version) != 0)
    problem(c, "suite_version", "%s, but the folder %s holds suite %s", r->suite_version, d->path, d->version->name);
  for (size_t i = 0; i < r->n; i++) {
    const chakra_suite_workload *w = &d->version->workloads[r->m[i].workload];
    char where[48];
    snprintf(where, sizeof where, "workloads[%zu].sha256", i);
    if (!w->sha256 || strcmp(w->sha256, r->wl_sha256[i]) != 0)
      problem(c, where, "%s is not suite %s's %s for %s", r->wl_sha256[i], d->version->name, w->sha256, w->name);
    int found = 0;
    for (size_t p = 0; p < d->n; p++) found |= d->index[p] == r->m[i].workload;
    if (!found) problem(c, where, "%s is not in the folder %s", w->name, d->path);
  }
  return 0;
}

int suitecli_check(int argc, char **argv) {
  uint32_t sample = 3, threads = 0;
  int quiet = 0;
  const cli_opt opts[] = {
      {.name = "sample", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&sample), .min = 0, .max = 1 << 20,
       .help = "workloads re-simulated (the smallest of each class first); 0 = all", .def = "3"},
      {.name = "threads", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&threads), .min = 1, .max = 1024,
       .help = "workloads re-simulated at once", .def = "CPUs"},
      {.name = "quiet", .short_name = 'q', .kind = CLI_OPT_FLAG, .dest = &quiet, .help = "no summary line"},
      {0}};
  const cli_command cmd = {
      .name = "suite check", .args = "RESULT.json", .min_args = 1, .max_args = 1, .opts = opts,
      .args_file = CLI_FILE_IN,
      .about = "Verifies a result: its system and network files against the hashes and texts\n"
               "it recorded, the closed division's rules when it claims that division, every\n"
               "workload of its suite folder against the manifest and the suite version's\n"
               "hashes, and re-simulates a sample of its workloads, whose numbers must be\n"
               "reproduced exactly.",
      .footer = "Exit status: 0 the result holds; 1 problems found (each one line: a changed\n"
                "file, a broken rule, a number not reproduced); 2 an unreadable or invalid\n"
                "result, or a suite folder that cannot be read."};
  cli_args pos;
  int st = cli_parse(&cmd, argc, argv, &pos);
  if (st != CLI_PROCEED) return st;
  chakra_suite_result r;
  chakra_error err = {0};
  if (chakra_suite_result_read(&r, pos.v[0], &err)) return cli_fail(&err);
  checker c = {&r, 0};
  int replayed = strcmp(r.mode, "replay") == 0;
  if (!replayed) {
    check_file(&c, "system", r.system_path, r.system_sha256, r.system_text, chakra_suite_reference_system());
    check_file(&c, "network", r.network_path, r.network_sha256, r.network_text, chakra_suite_reference_network());
    check_rules(&c);
  }
  chakra_suite_dir d;
  uint64_t file_problems = 0;
  if (chakra_suite_dir_open(&d, r.dir, print_problem, NULL, &file_problems, &err)) {
    chakra_suite_result_free(&r);
    return cli_fail(&err);
  }
  c.problems += file_problems;
  check_workloads(&c, &d);
  if (replayed && !quiet) cli_note("a replayed result: its numbers were measured, so nothing is re-simulated");
  st = !c.problems && !replayed ? resimulate(&c, &d, sample, threads, quiet) : 0;
  if (!st && c.problems) cli_error("%s: %llu problem(s)", pos.v[0], (unsigned long long)c.problems), st = 1;
  chakra_suite_dir_free(&d);
  chakra_suite_result_free(&r);
  return st;
}
