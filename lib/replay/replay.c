/* replay.c - chakra_replay_run(): setup, iterations, gathering on rank 0;
 * see chakra/replay.h. Every step that can fail on some rank is followed
 * by rp_agree() before the next collective call, so all ranks stop
 * together with the same message and none is left waiting in a collective
 * the others never reach; every wait for the others is bounded
 * (agree.h). */
#include "chakra/replay.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agree.h"
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

int chakra_replay_share_status(int *status, double timeout_s, const char *waiting_for, chakra_error *err) {
  rp_peers world;
  rp_peers_init(&world, MPI_COMM_WORLD, timeout_s);
  MPI_Request r;
  if (MPI_Ibcast(status, 1, MPI_INT, 0, MPI_COMM_WORLD, &r) != MPI_SUCCESS)
    return chakra_error_set(err, CHAKRA_EIO, "rank %d: MPI_Ibcast failed", world.me);
  return rp_wait(&world, &r, waiting_for, err);
}

void chakra_replay_abort(const chakra_replay_result *r, int status) {
  if (!r || r->rank == 0 || r->must_abort == CHAKRA_REPLAY_ABORT_ALONE) MPI_Abort(MPI_COMM_WORLD, status);
  for (;;) pause(); /* rank 0's abort ends this process too */
}

/* ---- the trace set ---- */

/* Every process opens the set (probing PREFIX.<r>.et, the groups file
 * given or found beside the traces) and judges it against the job's size;
 * the ranks agree (a bounded wait), so the lowest failing rank's message
 * is the job's, rank 0's to print. */
static int open_set(const chakra_replay_options *o, rp_peers *w, chakra_set **set, chakra_error *err) {
  chakra_set_options so = {.comm_groups = o->comm_groups};
  int rc = chakra_set_open(set, o->workload, &so, err);
  int files = rc ? 0 : (int)chakra_set_ranks(*set), size = w->size;
  if (!rc && files != size)
    rc = chakra_error_set(err, CHAKRA_EINVAL,
                          "%s: the trace set has %d ranks (%s.0.et .. %s.%d.et) but the job has %d processes; run "
                          "mpirun -np %d",
                          o->workload, files, o->workload, o->workload, files - 1, size, files);
  return rp_agree(w, rc, "the other ranks to open the trace set", err);
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

/* Rank 0 runs the cross-rank validation, with the set's groups; its
 * verdict is everyone's. */
static int validate(const chakra_set *set, rp_peers *w, chakra_diag_fn warn, void *ctx, chakra_error *err) {
  int rc = 0;
  if (w->me == 0) {
    vctx v = {.warn = warn, .warn_ctx = ctx};
    chakra_validate_summary sum;
    rc = chakra_validate_set(set, NULL, on_problem, &v, &sum, err);
    if (!rc && v.errors)
      rc = chakra_error_set(err, CHAKRA_EGRAPH, "%s: the trace set cannot be replayed: %s%s", chakra_set_prefix(set),
                            v.first, v.errors > 1 ? " (and more: see chakra validate)" : "");
  }
  return rp_agree(w, rc, "rank 0 to validate the trace set (--no-validate skips it)", err);
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
  rp_peers *world;
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

/* The largest message or copy, and the node (index) that needs it. */
static uint64_t largest_message(const job *j, uint32_t *which) {
  uint64_t max = 0;
  *which = RP_NONE;
  for (uint32_t i = 0; i < j->plan.n; i++) {
    const rp_node *n = &j->plan.nodes[i];
    uint64_t b = rp_node_bytes(n, n->kind == RP_COLL ? j->comms.size[n->tag] : 1);
    if (n->kind != RP_COMPUTE && n->value > b) b = n->value; /* the send side reads this much */
    if (b > max) max = b, *which = i;
  }
  return max;
}

static int make_pool(job *j, chakra_error *err) {
  uint32_t at;
  uint64_t max = largest_message(j, &at);
  if (!rp_pool_init(&j->pool, max)) return 0;
  return chakra_error_set(err, CHAKRA_ENOMEM, "%s: rank %d: node %llu: cannot allocate %llu bytes of message buffers",
                          j->plan.path, j->me, (unsigned long long)j->plan.nodes[at].id, (unsigned long long)max);
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

#define WAIT_SETUP "the other ranks to load their traces"

/* The end of a setup step: every rank learns whether any failed (unless
 * this one gave up waiting, and must end the job alone). */
static int step_end(rp_peers *w, int rc, const char *waiting_for, chakra_error *err) {
  return w->timed_out ? rc : rp_agree(w, rc, waiting_for, err);
}

static int setup(job *j, const chakra_set *set, const chakra_replay_options *o, chakra_error *err) {
  rp_peers *w = j->world;
  /* Rank 0's validation has said what loading would warn of: once is enough. */
  chakra_diag_fn warn = o->no_validate ? load_warn : NULL;
  int rc = rp_plan_load(&j->plan, set, (uint32_t)j->me, warn, j, err);
  if ((rc = step_end(w, rc, WAIT_SETUP, err))) return rc;
  rc = rp_comms_local(&j->comms, &j->plan, set, err);
  if ((rc = step_end(w, rc, WAIT_SETUP, err))) return rc;
  rc = rp_comms_exchange(&j->comms, w, err);
  if (!rc) rc = rp_comms_resolve(&j->comms, &j->plan, err);
  if ((rc = step_end(w, rc, WAIT_SETUP, err))) return rc;
  rc = rp_comms_build(&j->comms, &j->plan, w, err);
  if ((rc = step_end(w, rc, WAIT_SETUP, err))) return rc;
  rc = rp_tags_assign(&j->plan, w, err);
  if ((rc = step_end(w, rc, WAIT_SETUP, err))) return rc;
  rc = make_pool(j, err);
  int mode = o->compute == CHAKRA_REPLAY_SLEEP ? RP_RUN_SLEEP : o->compute == CHAKRA_REPLAY_SKIP ? RP_RUN_SKIP : RP_RUN_WAIT;
  if (!rc) rc = rp_engine_init(&j->eng, &j->plan, &j->comms, &j->pool, mode, o->compute_scale > 0 ? o->compute_scale : 1.0,
                               w->timeout_ns, err);
  uint32_t iters = o->iterations ? o->iterations : 1;
  if (!rc && rp_measure_init(&j->meas, &j->plan, iters)) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  if ((rc = step_end(w, rc, "the other ranks to allocate their buffers", err))) return rc;
  j->eng.idle_sleep_ns = oversubscribed(j) ? 20000 : 0;
  int a = MPI_Comm_dup(w->comm, &j->sync), b = MPI_Comm_dup(w->comm, &j->abrt);
  if (a != MPI_SUCCESS || b != MPI_SUCCESS) rc = chakra_error_set(err, CHAKRA_EIO, "rank %d: MPI_Comm_dup failed", j->me);
  return step_end(w, rc, WAIT_SETUP, err);
}

/* ---- iterations ---- */

enum { ST_OK = 0, ST_STALLED = 1, ST_FAILED = 2 };

/* Every rank's status and the latest finish; waits without blocking the
 * loop's own requests (they may still be posted). What this rank waits
 * with goes into the message if the others never come. */
static int exchange_status(job *j, uint32_t it, uint64_t mine[2], uint64_t all[2], const char *state,
                           chakra_error *err) {
  MPI_Request r;
  MPI_Iallreduce(mine, all, 2, MPI_UINT64_T, MPI_MAX, j->sync, &r);
  char what[1400];
  snprintf(what, sizeof what, "the other ranks to end iteration %u%s%s", it + 1, state ? "; this rank: " : "",
           state ? state : "");
  return rp_wait(j->world, &r, what, err);
}

/* Rank 0 gets one line per rank saying how it stopped. */
static int gather_lines(job *j, const char *line, chakra_replay_result *res, chakra_error *err) {
  static const char what[] = "the other ranks to report how the run stopped";
  int len = (int)strlen(line) + 1, *lens = NULL, *dsp = NULL;
  char *all = NULL;
  if (j->me == 0) {
    lens = calloc((size_t)j->size, sizeof *lens);
    dsp = calloc((size_t)j->size, sizeof *dsp);
  }
  MPI_Request r;
  MPI_Igather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, j->abrt, &r);
  int rc = rp_wait(j->world, &r, what, err);
  if (rc) return rc;
  size_t total = 0;
  for (int k = 0; j->me == 0 && lens && dsp && k < j->size; k++) dsp[k] = (int)total, total += (size_t)lens[k];
  if (j->me == 0) all = malloc(total ? total : 1);
  MPI_Igatherv(line, len, MPI_CHAR, all, lens, dsp, MPI_CHAR, 0, j->abrt, &r);
  rc = rp_wait(j->world, &r, what, err);
  if (!rc && j->me == 0) {
    if (!all || !lens) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    for (int k = 0; !rc && k < j->size; k++) rc = chakra_run_add_stuck(&res->run, all + dsp[k], err);
  }
  free(lens);
  free(dsp);
  free(all);
  return rc;
}

static int report_stop(job *j, const char *line, chakra_replay_result *res, chakra_error *err) {
  res->must_abort = CHAKRA_REPLAY_ABORT_BY_RANK0;
  return gather_lines(j, line, res, err);
}

/* How this rank's run ended, in one line (malloc'd, or NULL). */
static char *state_line(job *j, int status, const chakra_error *failure) {
  char *line = NULL;
  if (status == ST_STALLED) line = rp_engine_stuck_line(&j->eng);
  else if (status == ST_FAILED) line = strdup(failure->msg[0] ? failure->msg : "out of memory");
  else if (asprintf(&line, "rank %d: finished; waited for the others", j->me) < 0) line = NULL;
  return line;
}

static int iterate(job *j, const chakra_replay_options *o, chakra_replay_result *res, uint64_t *makespan,
                   chakra_error *err) {
  uint32_t total = o->warmup + (o->iterations ? o->iterations : 1);
  for (uint32_t it = 0; it < total; it++) {
    MPI_Request start;
    MPI_Ibarrier(j->sync, &start); /* a common start */
    int rc = rp_wait(j->world, &start, "the other ranks to start the next iteration", err);
    if (rc) return rc;
    chakra_error failure = {0};
    rc = rp_engine_run(&j->eng, &failure);
    uint64_t mine[2] = {rc == 0 ? ST_OK : rc == 1 ? ST_STALLED : ST_FAILED, 0}, all[2];
    if (rc == 0 && it >= o->warmup && rp_measure_record(&j->meas, &j->eng)) mine[0] = ST_FAILED;
    if (rc == 0) mine[1] = j->meas.last.finish_ns;
    char *line = state_line(j, (int)mine[0], &failure);
    rc = exchange_status(j, it, mine, all, mine[0] == ST_OK ? NULL : line ? line : "out of memory", err);
    if (!rc && all[0] != ST_OK) rc = report_stop(j, line ? line : "(out of memory)", res, err);
    free(line);
    if (rc || all[0] != ST_OK) return rc;
    if (it >= o->warmup) makespan[it - o->warmup] = all[1];
  }
  return 0;
}

/* ---- gathering on rank 0 ---- */

/* The status of every rank that took part in *r's collective. */
static int gathered(job *j, MPI_Request *r, chakra_error *err) {
  return rp_wait(j->world, r, "the other ranks to send their measurements", err);
}

static int gather_results(job *j, chakra_replay_result *res, chakra_error *err) {
  MPI_Request r;
  rp_measure_spread(&j->meas);
  chakra_run_record *run = &res->run;
  if (j->me == 0) run->ranks = calloc((size_t)j->size, sizeof *run->ranks);
  MPI_Igather(&j->meas.last, (int)sizeof j->meas.last, MPI_BYTE, run->ranks, (int)sizeof j->meas.last, MPI_BYTE, 0,
              j->sync, &r);
  int rc = gathered(j, &r, err);
  chakra_run_instance *mine = rp_measure_instances(&j->meas, &j->eng);
  int bytes = mine ? (int)(j->meas.n_inst * sizeof *mine) : 0, *lens = NULL, *dsp = NULL;
  if (j->me == 0) {
    lens = calloc((size_t)j->size, sizeof *lens);
    dsp = calloc((size_t)j->size, sizeof *dsp);
  }
  if (!rc) {
    MPI_Igather(&bytes, 1, MPI_INT, lens, 1, MPI_INT, 0, j->sync, &r);
    rc = gathered(j, &r, err);
  }
  size_t total = 0;
  for (int k = 0; lens && dsp && k < j->size; k++) dsp[k] = (int)total, total += (size_t)lens[k];
  if (j->me == 0) run->instances = malloc(total ? total : 1);
  if (!rc) {
    MPI_Igatherv(mine, bytes, MPI_BYTE, run->instances, lens, dsp, MPI_BYTE, 0, j->sync, &r);
    rc = gathered(j, &r, err);
  }
  run->n_instances = total / sizeof *mine;
  uint64_t sums[2] = {j->plan.n, j->eng.messages}, tot[2] = {0, 0};
  if (!rc) {
    MPI_Ireduce(sums, tot, 2, MPI_UINT64_T, MPI_SUM, 0, j->sync, &r);
    rc = gathered(j, &r, err);
  }
  run->events = tot[0];
  run->messages = tot[1];
  if (!rc && j->me == 0 && (!run->ranks || !run->instances || !lens || !dsp))
    rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  free(mine);
  free(lens);
  free(dsp);
  return rc;
}

static int keep_group_names(const job *j, chakra_run_record *run) {
  if (j->me != 0 || !j->comms.n_groups) return 0;
  run->groups = calloc(j->comms.n_groups, sizeof *run->groups);
  if (!run->groups) return -1;
  run->n_groups = j->comms.n_groups;
  for (uint32_t g = 0; g < run->n_groups; g++)
    if (!(run->groups[g] = strdup(j->comms.groups[g].name))) return -1;
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
  chakra_run_record *run = &res->run;
  run->iterations = o->iterations ? o->iterations : 1;
  run->makespan_ns = calloc(run->iterations, sizeof *run->makespan_ns);
  rc = rp_agree(j->world, run->makespan_ns ? 0 : chakra_error_set(err, CHAKRA_ENOMEM, "out of memory"), WAIT_SETUP,
                err);
  if (rc) return rc;
  j->world->nap_ns = j->eng.idle_sleep_ns; /* a finished rank leaves the core to those still running */
  uint64_t t0 = rp_now_ns();
  if ((rc = iterate(j, o, res, run->makespan_ns, err))) return rc;
  run->wall_seconds = (double)(rp_now_ns() - t0) / 1e9;
  if (res->must_abort) return 0;
  if ((rc = gather_results(j, res, err))) return rc;
  if (keep_group_names(j, run)) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  if (j->me == 0) run->npus = (uint32_t)j->size;
  if (o->timeline) return rp_timeline(&j->eng, set, o->timeline, j->sync, err);
  return 0;
}

int chakra_replay_run(const chakra_replay_options *o, chakra_replay_result *res, chakra_diag_fn warn, void *warn_ctx,
                      chakra_error *err) {
  memset(res, 0, sizeof *res);
  rp_peers world;
  rp_peers_init(&world, MPI_COMM_WORLD, o->timeout_s);
  job j = {.warn = warn, .warn_ctx = warn_ctx, .world = &world, .me = world.me, .size = world.size};
  res->rank = j.me;
  res->size = j.size;
  res->run.source = CHAKRA_RUN_REPLAY;
  res->run.warmup = o->warmup;
  res->run.compute = o->compute;
  res->run.compute_scale = o->compute_scale > 0 ? o->compute_scale : 1.0;
  chakra_set *set = NULL;
  int rc = open_set(o, &world, &set, err);
  if (!rc && !o->no_validate) rc = validate(set, &world, warn, warn_ctx, err);
  if (!rc) note_groups(set, j.me, warn, warn_ctx);
  if (!rc) rc = run_job(&j, set, o, res, err);
  if (world.timed_out) res->must_abort = CHAKRA_REPLAY_ABORT_ALONE;
  if (!res->must_abort) free_job(&j);
  chakra_set_close(set);
  /* An error all ranks agreed on is rank 0's to print. */
  if (rc && !world.timed_out && world.agreed && j.me != 0 && err) err->msg[0] = 0;
  return rc;
}

void chakra_replay_result_free(chakra_replay_result *r) {
  chakra_run_record_free(&r->run);
  memset(r, 0, sizeof *r);
}
