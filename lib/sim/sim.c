/* sim.c - setting up and running a simulation; see include/chakra/sim.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "chakra/sim.h"
#include "core.h"
#include "net.h"
#include "report.h"
#include "sys.h"
#include "workload.h"

void sim_fail(sim *s, int code, const char *fmt, ...) {
  if (s->failed) return;
  s->failed = 1;
  s->q.oom = 1; /* stops the event loop */
  va_list ap;
  va_start(ap, fmt);
  char msg[sizeof s->err->msg];
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  chakra_error_set(s->err, code, "%s", msg);
}

void sim_warn(sim *s, const char *fmt, ...) {
  if (!s->warn) return;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  s->warn(s->warn_ctx, msg);
}

/* Called every 2^20 events: simulated time and ranks done so far. */
static void progress_line(sim *s) {
  uint32_t done = 0;
  for (uint32_t r = 0; r < s->npus; r++) {
    done += (uint32_t)wl_finished(s, r);
  }
  fprintf(stderr, "\rchakra sim: %llu ns simulated, %llu M events, %u/%u ranks done\033[K",
          (unsigned long long)s->q.now, (unsigned long long)(s->q.fired >> 20), done, s->npus);
}

/* The configuration files, checked, and the warnings they call for. */
static int setup_config(sim *s, const chakra_sim_options *o) {
  int rc = chakra_topo_load(&s->owned_topo, o->network, s->err);
  s->topo = s->owned_topo;
  if (!rc) rc = sim_config_system(o->system, &s->sys_cfg, s->warn, s->warn_ctx, s->err);
  if (!rc) rc = sim_config_memory(o->remote_memory, &s->mem_cfg, s->err);
  if (rc) return rc;
  s->npus = chakra_topo_npus(s->topo);
  s->dims = chakra_topo_dims(s->topo);
  rc = sim_config_groups(o->comm_groups, s->npus, &s->groups, s->err);
  if (rc) return rc;
  for (int d = 0, off = 1; d < s->dims; d++) {
    s->dim_npus[d] = chakra_topo_dim_at(s->topo, d)->npus;
    s->offset[d] = (uint32_t)off;
    off *= (int)s->dim_npus[d];
  }
  if (s->sys_cfg.track_local_mem)
    sim_warn(s, "%s: \"track-local-mem\" is not implemented by chakra sim; ignored", o->system);
  if (s->sys_cfg.trace_enabled && !o->logging_folder)
    sim_warn(s, "%s: \"trace-enabled\": the per-node issue/callback lines go only to <logging folder>/log.log; give --logging-folder (or use --timeline)", o->system);
  if (s->opt.aware && s->dims > 1)
    sim_warn(s, "the congestion-aware model on a %d-dimensional network is a chakra-c extension (ASTRA-sim supports 1-D only): dimension-ordered routing, no reference numbers",
             s->dims);
  for (int t = 0; t < SIM_NCOLL; t++) {
    const sim_coll_impl *im = &s->sys_cfg.impl[t];
    if (im->n > s->dims && !im->algo[0].one)
      return chakra_error_set(s->err, CHAKRA_EINVAL, "%s: an implementation list has %d entries but the network has %d dimensions",
                              o->system, im->n, s->dims);
  }
  return 0;
}

/* The layers' state and the traces. */
static int setup_run(sim *s, const chakra_sim_options *o) {
  if (net_init(s)) return chakra_error_set(s->err, CHAKRA_ENOMEM, "out of memory");
  if (eventq_init(&s->q, s->npus)) return chakra_error_set(s->err, CHAKRA_ENOMEM, "out of memory");
  int rc = sys_init(s);
  char *prefix = rc ? NULL : sim_config_resolve_prefix(o->workload, NULL);
  if (!rc) rc = prefix ? wl_load(s, prefix) : chakra_error_set(s->err, CHAKRA_ENOMEM, "out of memory");
  free(prefix);
  return rc;
}

/* The log folder is opened between the two: a bad folder fails before the
 * traces load, and a bad configuration creates no folder. */
static int setup(sim *s, const chakra_sim_options *o, report_log **log) {
  int rc = setup_config(s, o);
  if (!rc && o->logging_folder) rc = report_log_open(log, o->logging_folder, s->err);
  if (!rc) rc = setup_run(s, o);
  if (!rc && *log && s->sys_cfg.trace_enabled) wl_trace_on(s);
  return rc;
}

static void teardown(sim *s) {
  wl_free(s);
  sys_free(s);
  net_free(s);
  eventq_free(&s->q);
  sim_config_system_free(&s->sys_cfg);
  sim_config_groups_free(&s->groups);
  chakra_topo_free(s->owned_topo);
}

typedef struct stuck_lines {
  chakra_sim_result *r;
} stuck_lines;

static void add_stuck(void *ctx, const char *msg) {
  chakra_sim_result *r = ctx;
  char **v = realloc(r->stuck, (r->n_stuck + 1) * sizeof *v);
  if (!v) return;
  r->stuck = v;
  if ((v[r->n_stuck] = strdup(msg))) r->n_stuck++;
}

static int unmatched_line(void *ctx, int is_send, uint32_t src, uint32_t dst, uint64_t bytes, uint64_t tag) {
  char msg[256];
  snprintf(msg, sizeof msg, "unmatched %s: %u -> %u, %llu bytes, tag %llu%s", is_send ? "message" : "receive", src, dst,
           (unsigned long long)bytes, (unsigned long long)(tag & ((1ull << 40) - 1)),
           tag >= NET_TAG_COLLECTIVE ? " (collective stream)" : "");
  add_stuck(ctx, msg);
  return 0;
}

static int collect(sim *s, chakra_sim_result *r) {
  r->npus = s->npus;
  r->roofline = s->sys_cfg.roofline != 0;
  r->ranks = calloc(s->npus, sizeof *r->ranks);
  if (!r->ranks) return chakra_error_set(s->err, CHAKRA_ENOMEM, "out of memory");
  r->events = s->q.fired;
  r->messages = s->messages;
  int all = 1;
  for (uint32_t k = 0; k < s->npus; k++) {
    wl_rank_result w;
    wl_result(s, k, &w);
    chakra_sim_rank *o = &r->ranks[k];
    o->finished = w.finished;
    o->finish_ns = w.finish;
    o->exposed_comm_ns = w.finish - w.gpu_time;
    for (int c = 0; c < CAT_N; c++) o->busy_ns[c] = w.busy[c];
    for (int c = 0; c < SIM_NCOLL; c++) {
      o->coll_ops[c] = w.coll_ops[c];
      o->coll_bytes[c] = w.coll_bytes[c];
      o->coll_ns[c] = w.coll_ns[c];
    }
    o->send_ops = w.send_ops;
    o->send_bytes = w.send_bytes;
    o->wall_ns = w.finish;
    o->compute_bound_pct = w.compute_bound * 100;
    o->compute_util_pct = w.compute_util * 100;
    o->memory_util_pct = w.mem_util * 100;
    o->op_intensity = w.op_intensity;
    o->nodes = w.nodes;
    o->nodes_done = w.done;
    all &= w.finished;
  }
  if (!all) {
    wl_report_stuck(s, add_stuck, r);
    net_pending(s, unmatched_line, r);
  }
  return 0;
}

int chakra_sim_run(const chakra_sim_options *o, chakra_sim_result *r, chakra_warn_fn warn, void *warn_ctx,
                   chakra_error *err) {
  memset(r, 0, sizeof *r);
  chakra_error local = {0};
  sim *s = calloc(1, sizeof *s);
  if (!s) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  s->err = err ? err : &local;
  s->warn = warn;
  s->warn_ctx = warn_ctx;
  s->opt.aware = o->network_model == CHAKRA_NET_AWARE;
  s->opt.queues_per_dim = o->queues_per_dim ? o->queues_per_dim : 1;
  s->opt.injection_scale = o->injection_scale > 0 ? o->injection_scale : 1;
  s->opt.rendezvous = o->rendezvous;
  s->opt.multidim_full = o->multidim_full;
  s->opt.load_threads = o->load_threads;
  report_log *log = NULL;
  int rc = setup(s, o, &log);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  if (!rc) {
    wl_start(s);
    eventq_run(&s->q, s, o->progress ? progress_line : NULL);
    if (o->progress) fputs("\r\033[K", stderr);
    if (s->failed) rc = s->err->code ? s->err->code : CHAKRA_EINVAL;
    else if (s->q.oom) rc = chakra_error_set(s->err, CHAKRA_ENOMEM, "out of memory during the simulation");
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (!rc) rc = collect(s, r);
  r->wall_seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  if (!rc && o->timeline) rc = report_timeline(s, o->workload, o->timeline);
  if (!rc && log) {
    rc = report_log_commit(log, s, r, o->workload);
    log = NULL;
  }
  report_log_discard(log);
  teardown(s);
  free(s);
  return rc;
}

void chakra_sim_result_free(chakra_sim_result *r) {
  for (uint32_t i = 0; i < r->n_stuck; i++) free(r->stuck[i]);
  free(r->stuck);
  free(r->ranks);
  memset(r, 0, sizeof *r);
}
