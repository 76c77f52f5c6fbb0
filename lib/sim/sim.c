/* sim.c - setting up and running a simulation; see include/chakra/sim.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../report/spans.h"
#include "chakra/sim.h"
#include "core.h"
#include "net.h"
#include "report.h"
#include "simconfig.h"
#include "coll.h"
#include "groups.h"
#include "remmem.h"
#include "symmetry.h"
#include "wkload.h"
#include "workload.h"
#include "../trace/nodekind.h"

/* Called every 2^20 events: hands the simulated time ("run", no total)
 * and the nodes completed of all ranks' nodes ("nodes") to the caller's
 * progress callback, which may stop the run. */
static void progress_tick(sim *s) {
  uint64_t done, total;
  wl_progress(s, &done, &total);
  if (s->progress(s->progress_ctx, "run", s->q.now, 0) || s->progress(s->progress_ctx, "nodes", done, total)) {
    s->cancelled = 1;
    s->q.oom = 1; /* stops the loop; the run reports the cancellation */
  }
}

/* The run's copy of the configuration and the warnings it calls for. */
static int setup_config(sim *s, const chakra_sim_config *c, const chakra_sim_run_options *o) {
  const char *sysf = c->system_file ? c->system_file : "configuration";
  s->topo = c->topo;
  s->sys_cfg = c->sys; /* shallow: the strings stay the configuration's */
  s->mem_cfg = c->mem;
  s->npus = chakra_topo_npus(s->topo);
  s->dims = chakra_topo_dims(s->topo);
  const chakra_sim_params *p = &c->params;
  s->opt.aware = p->network_model == CHAKRA_NET_AWARE;
  s->opt.queues_per_dim = p->queues_per_dim ? p->queues_per_dim : 1;
  s->opt.injection_scale = p->injection_scale > 0 ? p->injection_scale : 1;
  s->opt.rendezvous = p->rendezvous;
  s->opt.multidim_full = p->multidim_full;
  s->opt.custom_as_is = p->custom_as_is;
  s->opt.link_stats = o->link_report != NULL;
  if (o->link_report && !s->opt.aware)
    return chakra_error_set(s->err, CHAKRA_EINVAL, "%s: a link report needs the congestion-aware network model "
                            "(--network-model=aware): the congestion-unaware one has no links", o->link_report);
  if (sim_groups_copy(&s->groups, &c->groups)) return chakra_error_set(s->err, CHAKRA_ENOMEM, "out of memory");
  for (int d = 0, off = 1; d < s->dims; d++) {
    s->dim_npus[d] = chakra_topo_dim_at(s->topo, d)->npus;
    s->offset[d] = (uint32_t)off;
    off *= (int)s->dim_npus[d];
  }
  if (sim_config_memory_check(c->system_file ? "remote memory configuration" : "configuration", &s->mem_cfg, s->err))
    return s->err->code;
  if (s->sys_cfg.roofline && (s->sys_cfg.local_mem_bw <= 0 || s->sys_cfg.peak_perf <= 0))
    return chakra_error_set(s->err, CHAKRA_EINVAL, "%s: roofline-enabled needs \"local-mem-bw\" and \"peak-perf\" above 0", sysf);
  if (s->sys_cfg.track_local_mem)
    sim_diag_warn(&s->diag, sysf, "\"track-local-mem\" is not implemented by chakra sim; ignored");
  if (s->sys_cfg.trace_enabled && !o->logging_folder)
    sim_diag_warn(&s->diag, sysf, "\"trace-enabled\": the per-node issue/callback lines go only to <logging folder>/log.log; set a logging folder (or write a timeline)");
  if (s->opt.aware && s->dims > 1)
    sim_warn(s, "the congestion-aware model on a %d-dimensional network is a chakra-c extension (ASTRA-sim supports 1-D only): dimension-ordered routing, no reference numbers",
             s->dims);
  for (int t = 0; t < SIM_NCOLL; t++) {
    const sim_coll_impl *im = &s->sys_cfg.impl[t];
    if (im->n > s->dims && !im->algo[0].one)
      return chakra_error_set(s->err, CHAKRA_EINVAL, "%s: an implementation list has %d entries but the network has %d dimensions",
                              sysf, im->n, s->dims);
  }
  return 0;
}

/* The layers' state over the loaded traces; whether the run is reduced
 * (symmetry.h) is settled before the per-NPU arrays are made. */
static int setup_run(sim *s, const chakra_sim_workload *w, int mode, int logs_events, char *why, size_t wn) {
  if (net_init(s)) return chakra_error_set(s->err, CHAKRA_ENOMEM, "out of memory");
  if (eventq_init(&s->q, s->npus)) return chakra_error_set(s->err, CHAKRA_ENOMEM, "out of memory");
  int rc = coll_init(s);
  if (!rc) rc = wl_setup(s, w);
  if (!rc && (rc = sym_plan(s, mode, logs_events, why, wn)) > 0) rc = 0;
  if (!rc) rc = wl_alloc(s);
  return rc;
}

static void teardown(sim *s) {
  sym_free(s);
  wl_free(s);
  coll_free(s);
  groups_free(s);
  remmem_free(s);
  live_free_all(&s->live);
  net_free(s);
  eventq_free(&s->q);
  sim_config_groups_free(&s->groups);
}

static void add_stuck(void *ctx, const char *msg) {
  chakra_run_add_stuck(ctx, msg, NULL); /* a line lost to memory: the rank is still reported unfinished */
}

static int unmatched_line(void *ctx, int is_send, uint32_t src, uint32_t dst, uint64_t bytes, uint64_t tag) {
  char msg[256];
  snprintf(msg, sizeof msg, "unmatched %s: %u -> %u, %llu bytes, tag %llu%s", is_send ? "message" : "receive", src, dst,
           (unsigned long long)bytes, (unsigned long long)(tag & ((1ull << 40) - 1)),
           tag >= NET_TAG_COLLECTIVE ? " (collective stream)" : "");
  add_stuck(ctx, msg);
  return 0;
}

static void collect_rank(const sim *s, uint32_t k, chakra_run_rank *o) {
  wl_rank_result w;
  wl_result(s, k, &w);
  o->finished = w.finished != 0;
  o->finish_ns = w.finish;
  o->exposed_comm_ns = w.finish - w.gpu_time;
  for (int c = 0; c < CAT_N; c++) o->busy_ns[c] = w.busy[c];
  o->bubble_ns = spans_bubble(o->exposed_comm_ns, w.busy[CAT_GPU], w.gpu_or_comm);
  for (int c = 0; c < SIM_NCOLL; c++) /* the report numbers them as the record does (CollectiveCommType) */
    o->coll[nodekind_comm_type(c)] = (chakra_run_coll){w.coll_ops[c], w.coll_bytes[c], w.coll_ns[c]};
  o->send_ops = w.send_ops;
  o->send_bytes = w.send_bytes;
  o->wall_ns = w.finish;
  o->compute_bound_pct = w.compute_bound * 100;
  o->compute_util_pct = w.compute_util * 100;
  o->memory_util_pct = w.mem_util * 100;
  o->op_intensity = w.op_intensity;
  o->nodes = w.nodes;
  o->nodes_done = w.done;
}

static int collect(sim *s, chakra_run_record *r) {
  if (chakra_run_record_init(r, CHAKRA_RUN_SIM, s->npus, s->err)) return s->err->code;
  r->roofline = s->sys_cfg.roofline != 0;
  r->events = s->q.fired;
  r->messages = s->messages;
  int all = 1;
  for (uint32_t k = 0; k < s->npus; k++) {
    uint32_t rep = sym_rep(s, k);
    if (rep != k) {
      r->ranks[k] = r->ranks[rep]; /* the representative is the lowest rank of its class */
      continue;
    }
    collect_rank(s, k, &r->ranks[k]);
    all &= r->ranks[k].finished != 0;
  }
  if (!all) {
    wl_report_stuck(s, add_stuck, r);
    net_pending(s, unmatched_line, r);
  }
  return 0;
}

/* Warnings of a run that may be redone are held until it is kept. */
typedef struct held {
  chakra_diag_fn fn;
  void *ctx;
  sim_lines lines;
} held;

static void hold(void *ctx, const chakra_problem *p) {
  held *h = ctx;
  char msg[2048];
  chakra_problem_format(p, msg, sizeof msg);
  (void)sim_lines_add(&h->lines, msg); /* out of memory: the warning is lost, not the run */
}

/* Passes the held warnings on (pass) or drops them. */
static void release(held *h, int pass) {
  if (pass) sim_lines_pass(&h->lines, h->fn, h->ctx);
  sim_lines_free(&h->lines);
}

/* The loop's end: what stopped it, as the run's result code. */
static int run_status(sim *s) {
  if (s->diag.failed) return s->err->code ? s->err->code : CHAKRA_EINVAL;
  if (s->cancelled)
    return chakra_error_set(s->err, CHAKRA_ECANCELED, "the simulation was stopped at %llu ns", (unsigned long long)s->q.now);
  if (s->q.overflow)
    return chakra_error_set(s->err, CHAKRA_EINVAL,
                            "simulated time would pass 2^64 ns (584 years): a delay of %llu ns was asked for at "
                            "%llu ns; a duration, latency, bandwidth or scale in the inputs is out of range",
                            (unsigned long long)s->q.overflow, (unsigned long long)s->q.now);
  if (s->q.oom) return chakra_error_set(s->err, CHAKRA_ENOMEM, "out of memory during the simulation");
  return 0;
}

/* Why a reduced run is not kept (NULL: it is): every representative must
 * finish with nothing left unmatched, and nothing may have failed (the
 * full run then reports it exactly). A cancelled run stays cancelled. */
static const char *reduced_failed(sim *s, int rc) {
  if (s->sym->abandoned) return s->sym->why;
  if (rc == CHAKRA_ECANCELED) return NULL;
  if (rc) return "it failed";
  for (uint32_t k = 0; k < s->npus; k++)
    if (sym_runs(s, k) && !wl_finished(s, k)) return "a representative did not finish";
  if (net_pending(s, NULL, NULL)) return "a message was left unmatched";
  return NULL;
}

typedef struct attempt {
  int mode;                /* SYM_AUTO or SYM_OFF */
  report_log *log;         /* opened by the first attempt */
  char why[512];           /* why reduced, or why not */
  int redo;                /* the reduced run failed: do it again with every NPU */
} attempt;

static int run_once(const chakra_sim_config *c, const chakra_sim_workload *w, const chakra_sim_run_options *o,
                    attempt *at, chakra_run_record *r, chakra_error *err) {
  memset(r, 0, sizeof *r);
  sim *s = calloc(1, sizeof *s);
  if (!s) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  held h = {o->diag, o->diag_ctx, {0}};
  s->err = err;
  /* a run that may be redone holds its warnings until it is kept */
  int may_redo = at->mode == SYM_AUTO;
  s->diag = (sim_diag){.fn = may_redo ? hold : o->diag, .ctx = may_redo ? (void *)&h : o->diag_ctx, .err = s->err,
                       .stop = &s->q.oom};
  s->progress = o->progress;
  s->progress_ctx = o->progress_ctx;
  /* the log folder is opened before the run: a bad folder fails before
   * any simulated time passes, a bad configuration creates no folder */
  int rc = setup_config(s, c, o);
  if (!rc && o->logging_folder && !at->log) rc = report_log_open(&at->log, o->logging_folder, s->err);
  int logs_events = at->log && s->sys_cfg.trace_enabled;
  char why[sizeof at->why - 32];
  if (!rc) rc = setup_run(s, w, at->mode, logs_events, why, sizeof why);
  if (!rc && logs_events) wl_trace_on(s);
  if (!s->sym && may_redo) { /* a full run: its warnings go out as they come */
    release(&h, 1);
    s->diag.fn = o->diag;
    s->diag.ctx = o->diag_ctx;
  }
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  if (!rc) {
    wl_start(s);
    eventq_run(&s->q, s, s->progress ? progress_tick : NULL);
    rc = s->sym && s->sym->abandoned ? 0 : run_status(s);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  const char *failed = s->sym ? reduced_failed(s, rc) : NULL;
  if (failed) {
    snprintf(at->why, sizeof at->why, "every NPU simulated: the reduced run was given up (%s)", failed);
    at->redo = 1;
    release(&h, 0);
    teardown(s);
    free(s);
    return 0;
  }
  release(&h, 1);
  if (!rc) {
    snprintf(at->why, sizeof at->why, "%s%s", s->sym ? "reduced: " : "every NPU simulated: ", why);
    rc = collect(s, r);
  }
  r->wall_seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  r->classes = w->n_cls;
  r->simulated = s->sym ? w->n_cls : s->npus;
  if (!rc && !(r->symmetry = strdup(at->why))) rc = chakra_error_set(s->err, CHAKRA_ENOMEM, "out of memory");
  if (!rc && o->timeline) rc = report_timeline(s, o->timeline);
  if (!rc && o->link_report) rc = report_links(s, r, o->link_report);
  if (!rc && at->log) {
    rc = report_log_commit(at->log, s, r);
    at->log = NULL;
  }
  teardown(s);
  free(s);
  return rc;
}

int chakra_sim_run(const chakra_sim_config *c, const chakra_sim_workload *w, const chakra_sim_run_options *opt,
                   chakra_run_record *r, chakra_error *err) {
  static const chakra_sim_run_options none;
  const chakra_sim_run_options *o = opt ? opt : &none;
  chakra_error local = {0};
  if (!err) err = &local;
  attempt at = {.mode = c->params.symmetry == CHAKRA_SIM_SYMMETRY_OFF ? SYM_OFF : SYM_AUTO};
  int rc = run_once(c, w, o, &at, r, err);
  if (!rc && at.redo) {
    char why[sizeof at.why];
    memcpy(why, at.why, sizeof why);
    at.mode = SYM_OFF;
    at.redo = 0;
    rc = run_once(c, w, o, &at, r, err);
    free(r->symmetry);
    r->symmetry = rc ? NULL : strdup(why);
    if (!rc && !r->symmetry) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  report_log_discard(at.log);
  if (rc) chakra_run_record_free(r);
  return rc;
}

