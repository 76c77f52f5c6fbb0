/* cmd_suiterun.c - chakra suite run and check: the workloads of a suite
 * folder simulated on a system under test (on local cores, or dealt out
 * over mpirun's processes as sweep deals points, rank 0 writing the
 * result), and a result verified: hashes, rules, and a sample of its
 * numbers reproduced by simulating again. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chakra/suite.h"
#include "cli.h"
#include "mpijob.h"
#include "suitecli.h"

static void print_problem(void *ctx, const chakra_problem *p) {
  const cli_job *j = ctx;
  if (j && j->rank != 0) return; /* every process reads the same files */
  char line[2048];
  chakra_problem_format(p, line, sizeof line);
  cli_warn("%s", line);
}

static int print_progress(void *ctx, const char *phase, uint64_t done, uint64_t total) {
  (void)ctx;
  fprintf(stderr, "\rchakra suite: %s: %llu of %llu workloads\033[K", phase, (unsigned long long)done,
          (unsigned long long)total);
  return 0;
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
  int quiet;
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
       .help = "the submission's name", .def = "reference without --system/--network"},
      {.name = "class", .kind = CLI_OPT_STRING, .dest = &a->cls, .metavar = "C", .help = "only this class's workloads",
       .def = "all in DIR"},
      {.name = "threads", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&a->threads), .min = 1, .max = 1024,
       .help = "workloads simulated at once in each process", .def = "CPUs; 1 per process under mpirun"},
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

/* Rank 0: the result with every process's metrics in table order. */
static int write_result(const run_args *a, const chakra_suite_dir *d, chakra_suite_metrics *all, size_t n) {
  chakra_error err = {0};
  chakra_suite_result r;
  memset(&r, 0, sizeof r);
  qsort(all, n, sizeof *all, cmp_metrics);
  int rc = chakra_suite_result_describe(&r, d->version, d->path, a->name, a->system, a->network,
                                        (const char *const *)a->algo.items, a->algo.n, &err);
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

static int run_mine(const run_args *a, const cli_job *j, const chakra_suite_dir *d, chakra_suite_metrics **mine,
                    size_t *n, size_t *total, chakra_error *err) {
  size_t *jobs = calloc(d->n ? d->n : 1, sizeof *jobs);
  *mine = calloc(d->n ? d->n : 1, sizeof **mine);
  if (!jobs || !*mine) return free(jobs), chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  *n = select_jobs(d, a->cls, j, jobs, total);
  char *scratch = a->algo.n ? make_scratch(d->path) : NULL;
  int rc = a->algo.n && !scratch ? chakra_error_set(err, CHAKRA_EIO, "%s: cannot make a scratch folder", d->path) : 0;
  int tty = !a->quiet && j->rank == 0 && isatty(2);
  chakra_suite_run_options o = {.system = a->system, .network = a->network,
                                .rules = (const char *const *)a->algo.items, .n_rules = a->algo.n,
                                .scratch = scratch, .threads = a->threads ? a->threads : j->mpi ? 1 : 0,
                                .diag = print_problem, .diag_ctx = (void *)j,
                                .progress = tty ? print_progress : NULL};
  if (!rc) rc = chakra_suite_run(d, &o, jobs, *n, *mine, err);
  if (tty) fputs("\r\033[K", stderr);
  remove_scratch(scratch);
  free(scratch);
  free(jobs);
  return rc;
}

static int run_job(const run_args *a, const cli_job *j, const char *dirpath) {
  chakra_error err = {0};
  chakra_suite_dir d;
  uint64_t problems = 0;
  int rc = chakra_suite_dir_open(&d, dirpath, print_problem, (void *)j, &problems, &err);
  if (!rc && problems)
    rc = chakra_error_set(&err, CHAKRA_EINVAL, "%s: %llu file problem(s): the folder is not the suite's workloads",
                          dirpath, (unsigned long long)problems);
  if (!rc && a->cls && !chakra_suite_has_class(d.version, a->cls))
    rc = chakra_error_set(&err, CHAKRA_EINVAL, "--class: suite %s has no class \"%s\"", d.version->name, a->cls);
  chakra_suite_metrics *mine = NULL;
  size_t n = 0, total = 0;
  if (!rc) rc = run_mine(a, j, &d, &mine, &n, &total, &err);
  int rank0_failed = cli_job_rank0(j, rc ? 1 : 0);
  if (rc && (j->rank == 0 || !rank0_failed)) cli_error("%s", err.msg);
  int st = cli_job_agree(j, rc ? 1 : 0) ? CLI_EXIT_ERROR : 0;
  void *all = NULL;
  size_t got = 0;
  if (!st && cli_job_gather(j, mine, n, sizeof *mine, &all, &got)) st = (cli_error("out of memory"), 2);
  if (!st && j->rank == 0) st = write_result(a, &d, all, got);
  free(all);
  free(mine);
  if (!rc || d.path) chakra_suite_dir_free(&d);
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
    int started = cli_job_start(&j, &argc, &argv, "built without MPI: every process runs every workload");
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
