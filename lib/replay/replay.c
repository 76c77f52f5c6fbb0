/* replay.c - chakra_replay_run(): setup, iterations, gathering on rank 0;
 * see chakra/replay.h. Every step that can fail on some rank is followed
 * by agree(), so all ranks stop together with the same message and none
 * is left waiting in a collective the others never reach. */
#include "chakra/replay.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "chakra/set.h"
#include "chakra/validate.h"
#include "comms.h"
#include "engine.h"
#include "measure.h"
#include "plan.h"
#include "pool.h"
#include "timeline.h"

int chakra_replay_init(int *argc, char ***argv, chakra_error *err) {
  if (MPI_Init(argc, argv) != MPI_SUCCESS) return chakra_error_set(err, CHAKRA_EIO, "MPI_Init failed");
  /* Failures come back as codes, so that a rank reports which node failed. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  return 0;
}

void chakra_replay_finalize(void) { MPI_Finalize(); }

int chakra_replay_world_rank(void) {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int chakra_replay_world_size(void) {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

void chakra_replay_abort(const chakra_replay_result *r, int status) {
  if (!r || r->rank == 0) MPI_Abort(MPI_COMM_WORLD, status);
  for (;;) pause(); /* rank 0's abort ends this process too */
}

/* The lowest failing rank's error, on every rank. */
static int agree(MPI_Comm comm, int rc, chakra_error *err) {
  int me, size, first;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &size);
  int mine = rc ? me : size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return 0;
  chakra_error m = {0};
  if (me == first && err) m = *err;
  if (me == first && !m.code) m.code = rc;
  MPI_Bcast(&m, (int)sizeof m, MPI_BYTE, first, comm);
  if (err) *err = m;
  return m.code ? m.code : CHAKRA_EINVAL;
}

/* ---- the trace set ---- */

/* Every process opens the set (probing PREFIX.<r>.et, the groups file
 * given or found beside the traces); rank 0 judges it against the job's
 * size and says so, the others just stop. */
static int open_set(const chakra_replay_options *o, int me, int size, chakra_set **set, int *quiet, chakra_error *err) {
  chakra_set_options so = {.comm_groups = o->comm_groups};
  int rc = chakra_set_open(set, o->workload, &so, err);
  int files = rc ? 0 : (int)chakra_set_ranks(*set);
  if (!rc && files != size)
    rc = chakra_error_set(err, CHAKRA_EINVAL,
                          "%s: the trace set has %d ranks (%s.0.et .. %s.%d.et) but the job has %d processes; run "
                          "mpirun -np %d",
                          o->workload, files, o->workload, o->workload, files - 1, size, files);
  rc = agree(MPI_COMM_WORLD, rc, err);
  *quiet = rc && me != 0; /* rank 0 says it; the others just stop */
  return rc;
}

typedef struct vctx {
  chakra_diag_fn warn;
  void *warn_ctx;
  uint64_t errors;
  char first[1024];
} vctx;

static void on_problem(void *ctx, const chakra_problem *p) {
  vctx *v = ctx;
  if (p->severity == CHAKRA_SEV_WARNING || p->severity == CHAKRA_SEV_NOTE) {
    if (v->warn) v->warn(v->warn_ctx, p);
    return;
  }
  if (v->errors++ == 0) chakra_problem_format(p, v->first, sizeof v->first);
}

/* Rank 0 runs the cross-rank validation; its verdict is everyone's. */
static int validate(const chakra_set *set, int me, chakra_diag_fn warn, void *ctx, chakra_error *err) {
  int rc = 0;
  if (me == 0) {
    vctx v = {.warn = warn, .warn_ctx = ctx};
    chakra_validate_summary sum;
    rc = chakra_validate_set(set, NULL, on_problem, &v, &sum, err);
    if (!rc && v.errors)
      rc = chakra_error_set(err, CHAKRA_EGRAPH, "%s: the trace set cannot be replayed: %s%s", chakra_set_prefix(set),
                            v.first, v.errors > 1 ? " (and more: see chakra validate)" : "");
  }
  return agree(MPI_COMM_WORLD, rc, err);
}

/* Rank 0 says where the groups came from when nobody named the file. */
static void note_groups(const chakra_set *set, int me, chakra_diag_fn warn, void *ctx) {
  if (me != 0 || !warn || chakra_set_groups_origin(set) != CHAKRA_GROUPS_BESIDE) return;
  char what[4400];
  snprintf(what, sizeof what, "communicator groups from %s, found beside the traces (--comm-group-configuration "
           "names another file)", chakra_set_groups_path(set));
  chakra_problem p = chakra_problem_make(CHAKRA_SEV_NOTE, what);
  warn(ctx, &p);
}

/* ---- setup ---- */

typedef struct job {
  int me, size;
  rp_plan plan;
  rp_comms comms;
  rp_pool pool;
  rp_engine eng;
  rp_measure meas;
  MPI_Comm sync, abrt;  /* iteration ends; the stuck report */
  chakra_diag_fn warn;
  void *warn_ctx;
} job;

/* The graph loader's warnings, with this rank named. */
static void load_warn(void *ctx, const chakra_problem *in) {
  job *j = ctx;
  if (!j->warn) return;
  chakra_problem p = *in;
  p.rank = j->me;
  j->warn(j->warn_ctx, &p);
}

static uint64_t largest_message(const job *j) {
  uint64_t max = 0;
  for (uint32_t i = 0; i < j->plan.n; i++) {
    const rp_node *n = &j->plan.nodes[i];
    uint64_t b = rp_node_bytes(n, n->kind == RP_COLL ? j->comms.size[n->tag] : 1);
    if (b > max) max = b;
    if (n->value > max && n->kind != RP_COMPUTE) max = n->value; /* the send side reads this much */
  }
  return max;
}

/* More ranks on this machine than cores: a rank that spins keeps the one
 * it waits for off the CPU, so idle polls sleep briefly instead. */
static int oversubscribed(const job *j) {
  MPI_Comm local;
  int n = 1;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, j->me, MPI_INFO_NULL, &local) != MPI_SUCCESS) return 0;
  MPI_Comm_size(local, &n);
  MPI_Comm_free(&local);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return cores > 0 && n > cores;
}

static int setup(job *j, const chakra_set *set, const chakra_replay_options *o, chakra_error *err) {
  MPI_Comm w = MPI_COMM_WORLD;
  int rc = rp_plan_load(&j->plan, set, (uint32_t)j->me, load_warn, j, err);
  if ((rc = agree(w, rc, err))) return rc;
  rc = rp_comms_local(&j->comms, &j->plan, set, err);
  if ((rc = agree(w, rc, err))) return rc;
  rc = rp_comms_exchange(&j->comms, w, err);
  if (!rc) rc = rp_comms_resolve(&j->comms, &j->plan, err);
  if ((rc = agree(w, rc, err))) return rc;
  rc = rp_comms_build(&j->comms, &j->plan, w, err);
  if ((rc = agree(w, rc, err))) return rc;
  rc = rp_tags_assign(&j->plan, w, err);
  if ((rc = agree(w, rc, err))) return rc;
  uint64_t max = largest_message(j);
  if (rp_pool_init(&j->pool, max))
    rc = chakra_error_set(err, CHAKRA_ENOMEM, "rank %d: cannot allocate message buffers of %llu bytes", j->me,
                          (unsigned long long)max);
  int mode = o->compute == CHAKRA_REPLAY_SLEEP ? RP_RUN_SLEEP : o->compute == CHAKRA_REPLAY_SKIP ? RP_RUN_SKIP : RP_RUN_WAIT;
  uint64_t stall = (uint64_t)(o->timeout_s * 1e9);
  if (!rc) rc = rp_engine_init(&j->eng, &j->plan, &j->comms, &j->pool, mode, o->compute_scale > 0 ? o->compute_scale : 1.0,
                               stall, err);
  if (!rc) j->eng.idle_sleep_ns = oversubscribed(j) ? 20000 : 0;
  uint32_t iters = o->iterations ? o->iterations : 1;
  if (!rc && rp_measure_init(&j->meas, &j->plan, iters)) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  if (!rc && (MPI_Comm_dup(w, &j->sync) != MPI_SUCCESS || MPI_Comm_dup(w, &j->abrt) != MPI_SUCCESS))
    rc = chakra_error_set(err, CHAKRA_EIO, "rank %d: MPI_Comm_dup failed", j->me);
  return agree(w, rc, err);
}

/* ---- iterations ---- */

enum { ST_OK = 0, ST_STALLED = 1, ST_FAILED = 2 };

/* Every rank's status and the latest finish; waits without blocking the
 * loop's own requests (they may still be posted). */
static void exchange_status(job *j, uint64_t mine[2], uint64_t all[2]) {
  MPI_Request r;
  MPI_Iallreduce(mine, all, 2, MPI_UINT64_T, MPI_MAX, j->sync, &r);
  int done = 0;
  struct timespec nap = {0, (long)j->eng.idle_sleep_ns};
  for (MPI_Test(&r, &done, MPI_STATUS_IGNORE); !done; MPI_Test(&r, &done, MPI_STATUS_IGNORE))
    if (nap.tv_nsec) nanosleep(&nap, NULL); /* a finished rank leaves the core to those still running */
}

/* Rank 0 gets one line per rank saying how it stopped. */
static int gather_lines(job *j, const char *line, chakra_replay_result *res) {
  int len = (int)strlen(line) + 1, *lens = NULL, *dsp = NULL;
  char *all = NULL;
  if (j->me == 0) {
    lens = malloc((size_t)j->size * sizeof *lens);
    dsp = malloc((size_t)j->size * sizeof *dsp);
  }
  MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, j->abrt);
  size_t total = 0;
  for (int r = 0; j->me == 0 && lens && dsp && r < j->size; r++) dsp[r] = (int)total, total += (size_t)lens[r];
  if (j->me == 0) all = malloc(total ? total : 1);
  MPI_Gatherv(line, len, MPI_CHAR, all, lens, dsp, MPI_CHAR, 0, j->abrt);
  int rc = 0;
  if (j->me == 0) {
    res->stuck = calloc((size_t)j->size, sizeof *res->stuck);
    if (!res->stuck || !all || !lens) rc = -1;
    for (int r = 0; !rc && r < j->size; r++)
      if ((res->stuck[r] = strdup(all + dsp[r]))) res->n_stuck++;
  }
  free(lens);
  free(dsp);
  free(all);
  return rc;
}

static int report_stop(job *j, int status, const chakra_error *failure, chakra_replay_result *res) {
  char *line = NULL;
  if (status == ST_STALLED) line = rp_engine_stuck_line(&j->eng);
  else if (status == ST_FAILED) line = strdup(failure->msg);
  else if (asprintf(&line, "rank %d: finished; waited for the others", j->me) < 0) line = NULL;
  int rc = gather_lines(j, line ? line : "(out of memory)", res);
  free(line);
  res->must_abort = 1;
  return rc;
}

static int iterate(job *j, const chakra_replay_options *o, chakra_replay_result *res, uint64_t *makespan) {
  uint32_t total = o->warmup + (o->iterations ? o->iterations : 1);
  for (uint32_t it = 0; it < total; it++) {
    MPI_Barrier(j->sync); /* a common start */
    chakra_error failure = {0};
    int rc = rp_engine_run(&j->eng, &failure);
    uint64_t mine[2] = {rc == 0 ? ST_OK : rc == 1 ? ST_STALLED : ST_FAILED, 0}, all[2];
    if (rc == 0 && it >= o->warmup && rp_measure_record(&j->meas, &j->eng)) mine[0] = ST_FAILED;
    if (rc == 0) mine[1] = j->meas.last.finish_ns;
    exchange_status(j, mine, all);
    if (all[0] != ST_OK) return report_stop(j, (int)mine[0], &failure, res);
    if (it >= o->warmup) makespan[it - o->warmup] = all[1];
  }
  return 0;
}

/* ---- gathering on rank 0 ---- */

static int gather_results(job *j, chakra_replay_result *res) {
  rp_measure_spread(&j->meas);
  if (j->me == 0) res->ranks = calloc((size_t)j->size, sizeof *res->ranks);
  MPI_Gather(&j->meas.last, (int)sizeof j->meas.last, MPI_BYTE, res->ranks, (int)sizeof j->meas.last, MPI_BYTE, 0,
             j->sync);
  chakra_replay_instance *mine = rp_measure_instances(&j->meas, &j->eng);
  int bytes = mine ? (int)(j->meas.n_inst * sizeof *mine) : 0, *lens = NULL, *dsp = NULL;
  if (j->me == 0) {
    lens = calloc((size_t)j->size, sizeof *lens);
    dsp = calloc((size_t)j->size, sizeof *dsp);
  }
  MPI_Gather(&bytes, 1, MPI_INT, lens, 1, MPI_INT, 0, j->sync);
  size_t total = 0;
  for (int r = 0; lens && dsp && r < j->size; r++) dsp[r] = (int)total, total += (size_t)lens[r];
  if (j->me == 0) res->instances = malloc(total ? total : 1);
  MPI_Gatherv(mine, bytes, MPI_BYTE, res->instances, lens, dsp, MPI_BYTE, 0, j->sync);
  res->n_instances = total / sizeof *mine;
  uint64_t sums[2] = {j->plan.n, j->eng.messages}, tot[2] = {0, 0};
  MPI_Reduce(sums, tot, 2, MPI_UINT64_T, MPI_SUM, 0, j->sync);
  res->nodes = tot[0];
  res->messages = tot[1];
  int ok = j->me != 0 || (res->ranks && res->instances && lens && dsp);
  free(mine);
  free(lens);
  free(dsp);
  return ok ? 0 : -1;
}

static int keep_group_names(const job *j, chakra_replay_result *res) {
  if (j->me != 0 || !j->comms.n_groups) return 0;
  res->groups = calloc(j->comms.n_groups, sizeof *res->groups);
  if (!res->groups) return -1;
  res->n_groups = j->comms.n_groups;
  for (uint32_t g = 0; g < res->n_groups; g++)
    if (!(res->groups[g] = strdup(j->comms.groups[g].name))) return -1;
  return 0;
}

static void free_job(job *j) {
  rp_measure_free(&j->meas);
  rp_engine_free(&j->eng);
  rp_pool_free(&j->pool);
  rp_comms_free(&j->comms);
  rp_plan_free(&j->plan);
}

static int run_job(job *j, const chakra_set *set, const chakra_replay_options *o, chakra_replay_result *res,
                   chakra_error *err) {
  int rc = setup(j, set, o, err);
  if (rc) return rc;
  res->iterations = o->iterations ? o->iterations : 1;
  res->makespan_ns = calloc(res->iterations, sizeof *res->makespan_ns);
  rc = agree(MPI_COMM_WORLD, res->makespan_ns ? 0 : chakra_error_set(err, CHAKRA_ENOMEM, "out of memory"), err);
  if (rc) return rc;
  uint64_t t0 = rp_now_ns();
  if (iterate(j, o, res, res->makespan_ns)) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  res->wall_seconds = (double)(rp_now_ns() - t0) / 1e9;
  if (res->must_abort) return 0;
  if (gather_results(j, res) || keep_group_names(j, res)) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  res->npus = (uint32_t)j->size;
  if (o->timeline) return rp_timeline(&j->eng, set, o->timeline, j->sync, err);
  return 0;
}

int chakra_replay_run(const chakra_replay_options *o, chakra_replay_result *res, chakra_diag_fn warn, void *warn_ctx,
                      chakra_error *err) {
  memset(res, 0, sizeof *res);
  job j = {.warn = warn, .warn_ctx = warn_ctx};
  MPI_Comm_rank(MPI_COMM_WORLD, &j.me);
  MPI_Comm_size(MPI_COMM_WORLD, &j.size);
  res->rank = j.me;
  res->size = j.size;
  res->warmup = o->warmup;
  res->compute = o->compute;
  res->compute_scale = o->compute_scale > 0 ? o->compute_scale : 1.0;
  int quiet = 0;
  chakra_set *set = NULL;
  int rc = open_set(o, j.me, j.size, &set, &quiet, err);
  if (!rc && !o->no_validate) rc = validate(set, j.me, warn, warn_ctx, err);
  if (!rc) note_groups(set, j.me, warn, warn_ctx);
  if (!rc) rc = run_job(&j, set, o, res, err);
  if (!res->must_abort) free_job(&j);
  chakra_set_close(set);
  if (rc && quiet && err) err->msg[0] = 0; /* the job-size error is rank 0's to print */
  return rc;
}

void chakra_replay_result_free(chakra_replay_result *r) {
  free(r->ranks);
  free(r->instances);
  for (uint32_t g = 0; g < r->n_groups; g++) free(r->groups[g]);
  free(r->groups);
  free(r->makespan_ns);
  for (uint32_t i = 0; i < r->n_stuck; i++) free(r->stuck[i]);
  free(r->stuck);
  memset(r, 0, sizeof *r);
}
