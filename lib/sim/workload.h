/* workload.h - the workload layer: each NPU's Chakra DAG and its issue
 * rules (private).
 *
 * A node is issued when all its deps are done and its hardware slot is
 * free: one CPU slot (is_cpu_op), one GPU compute slot, one GPU
 * communication slot (collectives, sends, memory, no-op nodes); receives
 * take no slot. Ready nodes issue in ascending id order. Compute is
 * replayed (duration_micros) or timed by the roofline; communication goes
 * to the system or network layer; remote memory to the memory model. */
#ifndef CHAKRA_SIM_WORKLOAD_H
#define CHAKRA_SIM_WORKLOAD_H

#include "core.h"

/* Statistics categories: the public numbering (results are indexed by it). */
enum {
  CAT_GPU = CHAKRA_CAT_GPU,
  CAT_CPU = CHAKRA_CAT_CPU,
  CAT_COMM = CHAKRA_CAT_COMM,
  CAT_MEM = CHAKRA_CAT_MEM,
  CAT_INVALID = CHAKRA_CAT_INVALID,
  CAT_N = CHAKRA_CAT_N
};

typedef struct wl_rank_result {
  int finished;
  uint64_t finish, gpu_time;
  uint64_t busy[CAT_N];       /* union of node intervals per category */
  uint64_t nodes, issued, done;
  uint64_t coll_ops[SIM_NCOLL], coll_bytes[SIM_NCOLL], coll_ns[SIM_NCOLL];
  uint64_t send_ops, send_bytes;
  /* Roofline statistics over the compute nodes, weighted by duration over
   * 1 + their total duration: fractions of time compute bound, of peak
   * compute and of memory bandwidth used, and the operation intensity. */
  double compute_bound, compute_util, mem_util, op_intensity;
} wl_rank_result;

/* One node issue or completion, recorded while tracing (trace-enabled). */
typedef struct wl_trace_ev {
  uint64_t tick;
  uint32_t rank;   /* | WL_TRACE_DONE for a completion */
  uint32_t node;   /* index in the rank's file */
} wl_trace_ev;
#define WL_TRACE_DONE 0x80000000u

/* Track of a node in timelines: 0 CPU, 1 GPU compute, 2 GPU communication,
 * 3 receives (no slot). */
typedef struct wl_node_view {
  uint64_t id, start, end;   /* start/end UINT64_MAX if never issued/finished */
  int track, cat;
} wl_node_view;

uint32_t wl_nodes(const sim *s, uint32_t rank);
int wl_finished(const sim *s, uint32_t rank);
void wl_node_at(const sim *s, uint32_t rank, uint32_t i, wl_node_view *out);

/* The run's view of the loaded ranks (chakra_sim_workload, read only):
 * the checks this configuration makes of them, their METADATA process
 * groups, each rank's groups resolved. Errors go to s->err. */
int wl_setup(sim *s, const chakra_sim_workload *wk);
/* Per-NPU run arrays of the NPUs that run (symmetry.h decides which). */
int wl_alloc(sim *s);
void wl_free(sim *s);
/* What messages call rank's trace; the file its node names are read
 * from (NULL when there is none). */
const char *wl_path(const sim *s, uint32_t rank);
const char *wl_names_path(const sim *s, uint32_t rank);
/* Issues every running NPU's initial nodes (t = 0, rank order). */
void wl_start(sim *s);
void wl_result(const sim *s, uint32_t rank, wl_rank_result *out);
/* From now on records every issue and completion (call before wl_start). */
void wl_trace_on(sim *s);
/* The recorded events in the order they happened. */
const wl_trace_ev *wl_trace_events(const sim *s, size_t *n);
/* Name of group index pg of rank's template, bound to the rank (NULL for "all"). */
const char *wl_pg_name(const sim *s, uint32_t rank, uint32_t pg);
/* What a collective on that group runs on (coll.h's coll_request.group). */
int32_t wl_group(const sim *s, uint32_t rank, uint32_t pg);
/* Reports nodes issued but never finished, up to max per rank. */
void wl_report_stuck(const sim *s, void (*line)(void *ctx, const char *msg), void *ctx);

#endif
