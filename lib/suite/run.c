/* run.c - `chakra suite run`: each workload of a suite folder opened as a
 * trace set, its collectives expanded by the open division's rules when
 * there are any, validated and simulated through chakra_validate_set_sim()
 * on the system under test scaled to its ranks, and its metrics taken from
 * the simulator's result (docs/suite.md, "Metrics"). Workloads run on
 * util/tasks threads, each with its own configuration and result. */
#include "run.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra/coll.h"
#include "chakra/set.h"
#include "chakra/validate.h"
#include "make.h"
#include "suitesys.h"
#include "../util/outset.h"
#include "../util/tasks.h"

/* The first error of a workload's checks, forwarded to the caller's diag. */
typedef struct first_error {
  const chakra_suite_run_options *o;
  char *text;
  size_t size;
} first_error;

static void catch_problem(void *ctx, const chakra_problem *p) {
  first_error *f = ctx;
  if (p->severity >= CHAKRA_SEV_ERROR && !f->text[0]) chakra_problem_format(p, f->text, f->size);
  if (f->o->diag) f->o->diag(f->o->diag_ctx, p);
}

/* NCCL's bus bandwidth (its PERFORMANCE.md): the algorithm bandwidth times
 * 2(n-1)/n for all-reduce and (n-1)/n for the others, over the whole
 * buffer (an all-gather's is n times the per-rank input). */
static double nccl_bus_bandwidth(const chakra_suite_workload *w, uint64_t time_ns) {
  double n = w->ranks, bytes = (double)w->size;
  if (w->coll == CHAKRA_COLL_ALLGATHER) bytes *= n;
  double factor = w->coll == CHAKRA_COLL_ALLREDUCE ? 2 * (n - 1) / n : (n - 1) / n;
  return time_ns ? bytes / (double)time_ns * factor : 0;
}

static int is_collective(const chakra_suite_workload *w) {
  return w->gen == CHAKRA_SUITE_MICRO || w->gen == CHAKRA_SUITE_COLL_GEN || w->gen == CHAKRA_SUITE_COLL_SYNTH;
}

double chakra_suite_bus_bandwidth(const chakra_suite_workload *w, uint64_t time_ns, uint64_t comm_bytes,
                                  double comm_busy_ns) {
  if (is_collective(w)) return nccl_bus_bandwidth(w, time_ns);
  return comm_busy_ns > 0 ? (double)comm_bytes / comm_busy_ns : 0;
}

void chakra_suite_take_metrics(const chakra_suite_workload *w, const chakra_run_record *r, chakra_suite_metrics *m) {
  chakra_run_summary s;
  chakra_run_summarise(r, &s);
  m->time_ns = s.max_finish_ns;
  m->exposed_ns = s.mean_exposed_comm_ns;
  m->compute_ns = s.mean_compute_ns;
  m->events = r->events;
  m->sim_seconds = r->wall_seconds;
  m->exposed_share = s.mean_finish_ns ? (double)s.mean_exposed_comm_ns / (double)s.mean_finish_ns : 0;
  double comm_busy = 0, attained = 0, finish = 0;
  for (uint32_t k = 0; k < r->npus; k++) {
    const chakra_run_rank *rk = &r->ranks[k];
    for (int c = 0; c < CHAKRA_RUN_COLLS; c++) m->comm_bytes += rk->coll[c].bytes;
    m->comm_bytes += rk->send_bytes;
    comm_busy += (double)rk->busy_ns[CHAKRA_CAT_COMM];
    double gpu = (double)rk->busy_ns[CHAKRA_CAT_GPU];
    attained += r->roofline ? gpu * rk->compute_util_pct / 100.0 : gpu;
    finish += (double)rk->finish_ns;
  }
  m->bus_bw_gbps = chakra_suite_bus_bandwidth(w, m->time_ns, m->comm_bytes, comm_busy);
  m->compute_util = finish > 0 ? attained / finish : 0;
}

/* The rules applied: the workload expanded into the scratch folder. */
static int expand(const chakra_set *in, const chakra_suite_workload *w, const chakra_suite_run_options *o,
                  char **out_prefix, chakra_error *err) {
  chakra_coll_rule *rules = calloc(o->n_rules, sizeof *rules);
  if (!rules) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  int rc = CHAKRA_OK;
  for (size_t i = 0; !rc && i < o->n_rules; i++) rc = chakra_coll_rule_parse(o->rules[i], &rules[i], err);
  if (!rc && !(*out_prefix = make_path(o->scratch, w->name))) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  chakra_coll_expand_options eo = {.rules = rules, .n_rules = o->n_rules, .reduce_bw = 50, .threads = 1};
  /* read back at once and removed: no output of the program's (one thread,
   * so the thread's scratch scope covers every write) */
  outset_scratch_begin();
  if (!rc) rc = chakra_coll_expand_set(in, *out_prefix, &eo, NULL, err);
  outset_scratch_end();
  free(rules);
  return rc;
}

static int open_set(const char *prefix, uint32_t ranks, chakra_set **set, chakra_error *err) {
  chakra_set_options so = {.ranks = ranks, .ranks_reason = "the suite's workload has that many"};
  return chakra_set_open(set, prefix, &so, err);
}

static int simulate(const chakra_suite_version *v, const chakra_suite_workload *w, const chakra_set *set,
                    const chakra_suite_sut *s, const chakra_suite_run_options *o, chakra_suite_metrics *m,
                    chakra_error *err) {
  chakra_sim_config *cfg = NULL;
  int rc = suitesys_config(&cfg, s, w->ranks, err);
  if (!rc) chakra_sim_config_params(cfg)->network_model = v->network_model; /* the version's methodology */
  chakra_run_record res;
  memset(&res, 0, sizeof res);
  first_error fe = {o, m->error, sizeof m->error};
  chakra_validate_sim vs = {.diag = o->diag, .diag_ctx = o->diag_ctx};
  chakra_validate_summary sum = {0};
  if (!rc) rc = chakra_validate_set_sim_on(set, NULL, &vs, cfg, &res, catch_problem, &fe, &sum, err);
  if (!rc && (sum.errors || sum.unreadable)) {
    if (!m->error[0]) snprintf(m->error, sizeof m->error, "%llu problem(s)", (unsigned long long)sum.errors);
  } else if (!rc) {
    chakra_suite_take_metrics(w, &res, m);
    m->ok = 1;
  }
  chakra_run_record_free(&res);
  chakra_sim_config_free(cfg);
  return rc;
}

void run_workload(const chakra_suite_version *v, const chakra_suite_workload *w, const char *dir,
                  const chakra_suite_sut *s, const chakra_suite_run_options *o, chakra_suite_metrics *m) {
  chakra_error err = {0};
  char *prefix = make_path(dir, w->name), *expanded = NULL;
  chakra_set *set = NULL, *ex = NULL;
  int rc = prefix ? open_set(prefix, w->ranks, &set, &err) : chakra_error_set(&err, CHAKRA_ENOMEM, "out of memory");
  if (!rc && o->n_rules) {
    rc = expand(set, w, o, &expanded, &err);
    if (!rc) rc = open_set(expanded, w->ranks, &ex, &err);
  }
  if (!rc) rc = simulate(v, w, ex ? ex : set, s, o, m, &err);
  if (rc) snprintf(m->error, sizeof m->error, "%.470s", err.msg);
  chakra_set_close(ex);
  chakra_set_close(set);
  free(expanded);
  free(prefix);
}

typedef struct run_ctx {
  const chakra_suite_dir *d;
  const chakra_suite_sut *s;
  const chakra_suite_run_options *o;
  const size_t *jobs;
  chakra_suite_metrics *out;
  pthread_mutex_t lock;    /* progress is reported one call at a time, as chakra_progress_fn expects */
  size_t done, n;
  int canceled;            /* the progress callback asked to stop: the workloads not started are skipped */
} run_ctx;

static int run_job(void *ctx, size_t i) {
  run_ctx *c = ctx;
  chakra_suite_metrics *m = &c->out[i];
  memset(m, 0, sizeof *m);
  m->workload = (uint32_t)c->d->index[c->jobs[i]];
  pthread_mutex_lock(&c->lock);
  int canceled = c->canceled;
  pthread_mutex_unlock(&c->lock);
  if (canceled) return 0;
  run_workload(c->d->version, &c->d->version->workloads[m->workload], c->d->path, c->s, c->o, m);
  pthread_mutex_lock(&c->lock);
  c->done++;
  if (c->o->progress && c->o->progress(c->o->progress_ctx, "run", c->done, c->n)) c->canceled = 1;
  pthread_mutex_unlock(&c->lock);
  return 0;
}

int chakra_suite_run_sut(const chakra_suite_dir *d, const chakra_suite_sut *s, const chakra_suite_run_options *o,
                         const size_t *jobs, size_t n, chakra_suite_metrics *out, chakra_error *err) {
  for (size_t i = 0; i < n; i++)
    if (jobs[i] >= d->n) return chakra_error_set(err, CHAKRA_EINVAL, "workload %zu: the folder has %zu", jobs[i], d->n);
  if (o->n_rules && !o->scratch)
    return chakra_error_set(err, CHAKRA_EINVAL, "collective rules need a scratch folder for the expanded workloads");
  run_ctx c = {.d = d, .s = s, .o = o, .jobs = jobs, .out = out, .lock = PTHREAD_MUTEX_INITIALIZER, .n = n};
  if (tasks_run(n, o->threads, run_job, &c, 0)) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  return c.canceled ? chakra_error_set(err, CHAKRA_ECANCELED, "stopped after %zu of %zu workloads", c.done, n) : 0;
}

int chakra_suite_run(const chakra_suite_dir *d, const chakra_suite_run_options *o, const size_t *jobs, size_t n,
                     chakra_suite_metrics *out, chakra_error *err) {
  chakra_suite_sut *s = NULL;
  int rc = chakra_suite_sut_open(&s, o->system, o->network, err);
  if (!rc) rc = chakra_suite_run_sut(d, s, o, jobs, n, out, err);
  chakra_suite_sut_free(s);
  return rc;
}
