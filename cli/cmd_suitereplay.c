/* cmd_suitereplay.c - chakra suite run --replay: under mpirun -np N, the
 * suite folder's workloads of exactly N ranks replayed on this machine
 * (chakra/replay.h: each process one rank), measured into the same metrics
 * a simulated run records. Only with MPI. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "suitecli.h"
#ifdef CHAKRA_HAVE_MPI
#include "chakra/replay.h"

int suitecli_replay_start(cli_job *j, int *argc, char ***argv) {
  memset(j, 0, sizeof *j);
  chakra_error err = {0};
  if (chakra_replay_init(argc, argv, &err)) return cli_fail(&err);
  j->mpi = 1;
  j->rank = chakra_replay_world_rank();
  j->size = chakra_replay_world_size();
  return 0;
}

static void on_warning(void *ctx, const chakra_problem *p) {
  (void)ctx;
  if (chakra_replay_world_rank() != 0) return;
  char line[2048];
  chakra_problem_format(p, line, sizeof line);
  cli_warn("%s", line);
}

static int replay_one(const chakra_suite_dir *d, size_t pos, chakra_suite_metrics *m) {
  const chakra_suite_workload *w = &d->version->workloads[d->index[pos]];
  size_t len = strlen(d->path) + strlen(w->name) + 2;
  char *prefix = malloc(len);
  if (!prefix) return cli_error("out of memory"), CLI_EXIT_ERROR;
  snprintf(prefix, len, "%s/%s", d->path, w->name);
  chakra_replay_options o = {.workload = prefix, .compute = CHAKRA_REPLAY_WAIT, .iterations = 1, .timeout_s = 300};
  chakra_replay_result res;
  chakra_error err = {0};
  memset(m, 0, sizeof *m);
  m->workload = (uint32_t)d->index[pos];
  int rc = chakra_replay_run(&o, &res, on_warning, NULL, &err);
  free(prefix);
  if (rc || res.must_abort) {
    if (err.msg[0]) cli_error("%s: %s", w->name, err.msg);
    for (uint32_t i = 0; res.rank == 0 && i < res.run.n_stuck; i++) cli_error("%s: %s", w->name, res.run.stuck[i]);
    if (res.must_abort) chakra_replay_abort(&res, 2);
    chakra_replay_result_free(&res);
    return CLI_EXIT_ERROR;
  }
  if (res.rank == 0) { /* the last measured iteration */
    chakra_suite_take_metrics(w, &res.run, m);
    m->ok = res.run.n_stuck == 0;
  }
  chakra_replay_result_free(&res);
  return 0;
}

int suitecli_replay(const chakra_suite_dir *d, const char *cls, const cli_job *j, chakra_suite_metrics *out,
                    size_t *n) {
  *n = 0;
  for (size_t i = 0; i < d->n; i++) {
    const chakra_suite_workload *w = &d->version->workloads[d->index[i]];
    if ((cls && strcmp(w->cls, cls) != 0) || w->ranks != (uint32_t)j->size) continue;
    int st = replay_one(d, i, &out[*n]);
    if (st) return st;
    ++*n;
  }
  if (!*n && j->rank == 0) {
    cli_error("--replay: the folder has no workload of %d ranks (the job's processes)%s%s", j->size,
              cls ? " in class " : "", cls ? cls : "");
    return CLI_EXIT_ERROR;
  }
  return 0;
}
#else
int suitecli_replay_start(cli_job *j, int *argc, char ***argv) {
  (void)j, (void)argc, (void)argv;
  cli_error("--replay: this chakra was built without MPI (scripts/install-deps.sh installs Open MPI)");
  return CLI_EXIT_ERROR;
}

int suitecli_replay(const chakra_suite_dir *d, const char *cls, const cli_job *j, chakra_suite_metrics *out,
                    size_t *n) {
  (void)d, (void)cls, (void)j, (void)out, (void)n;
  return CLI_EXIT_ERROR;
}
#endif
