/* core.h - the state every simulator module shares (private).
 *
 * struct sim is one run: it owns the clock and one state block per layer
 * (workload: per-NPU DAG state; collectives, groups, remote memory;
 * network) and borrows, read-only, the configuration (chakra_sim_config)
 * and the loaded traces (chakra_sim_workload). Data flows one way: the
 * workload issues nodes to the collective, memory or network layer, each
 * of which calls back the function it was handed when the work completes;
 * errors and warnings go through diag.h. The event queue is the first
 * member so that event callbacks can reach it from a struct sim pointer. */
#ifndef CHAKRA_SIM_CORE_H
#define CHAKRA_SIM_CORE_H

#include <stdint.h>

#include "chakra/json.h"
#include "chakra/sim.h"
#include "chakra/topo.h"
#include "config.h"
#include "diag.h"
#include "eventq.h"
#include "live.h"

struct net;
struct wl;
struct sys;
struct mem;
struct sym;
typedef struct groups_state groups_state;

typedef struct sim_options_ {
  int aware;               /* congestion-aware network */
  uint32_t queues_per_dim;
  double injection_scale;
  int rendezvous;
  int multidim_full;       /* charge every differing dimension (unaware) */
  int custom_as_is;        /* custom collectives unscaled (chakra_sim_params) */
} sim_options_;

typedef struct sim {
  eventq q;                /* must stay first */
  const chakra_topo *topo;  /* the network (owned by the configuration) */
  sim_sys_config sys_cfg;
  sim_mem_config mem_cfg;
  sim_groups groups;
  sim_options_ opt;
  uint32_t npus;
  int dims;                /* copied from topo: coordinates are computed inline */
  uint32_t dim_npus[CHAKRA_TOPO_MAX_DIMS];
  uint32_t offset[CHAKRA_TOPO_MAX_DIMS]; /* id = sum coord_d * offset_d */
  struct net *net;
  const chakra_sim_workload *wk; /* the loaded traces (read only) */
  struct wl *wl;           /* the run's state over them */
  struct sys *sys;
  struct mem *mem;
  groups_state *grp;       /* groups.c */
  struct sym *sym;         /* symmetry.h: a reduced run's tables; NULL when every NPU runs */
  live_list live;          /* objects in flight between an issue and its completion (live.h) */
  sim_diag diag;           /* errors and warnings (diag.h) */
  chakra_progress_fn progress; /* may be NULL */
  void *progress_ctx;
  int cancelled;           /* the progress callback stopped the run */
  chakra_error *err;       /* = diag.err */
  uint64_t messages;
} sim;

static inline uint32_t sim_coord(const sim *s, uint32_t id, int d) {
  return (id / s->offset[d]) % s->dim_npus[d];
}

/* Shorthands for the run's diag.h reporting. */
#define sim_fail(s, ...) sim_diag_fail(&(s)->diag, __VA_ARGS__)
#define sim_warn(s, ...) sim_diag_warn(&(s)->diag, NULL, __VA_ARGS__)

#endif
