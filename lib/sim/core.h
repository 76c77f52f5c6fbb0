/* core.h - the state every simulator module shares (private).
 *
 * struct sim owns the clock, the configuration and one state block per
 * layer: workload (per-NPU DAGs), system (collectives), network. Data flows
 * one way: the workload issues nodes to the system or network layer, which
 * call back when work completes. The event queue is the first member so
 * that event callbacks can reach it from a struct sim pointer. */
#ifndef CHAKRA_SIM_CORE_H
#define CHAKRA_SIM_CORE_H

#include <stdint.h>

#include "chakra/json.h"
#include "chakra/topo.h"
#include "config.h"
#include "eventq.h"

struct net;
struct wl;
struct sys;
struct mem;

typedef struct sim_options_ {
  int aware;               /* congestion-aware network */
  uint32_t queues_per_dim;
  double injection_scale;
  int rendezvous;
  int multidim_full;       /* charge every differing dimension (unaware) */
  uint32_t load_threads;   /* threads loading rank files; 0 = one per CPU */
} sim_options_;

typedef struct sim {
  eventq q;                /* must stay first */
  const chakra_topo *topo;  /* the network (owned by the configuration) */
  chakra_topo *owned_topo;
  sim_sys_config sys_cfg;
  sim_mem_config mem_cfg;
  sim_groups groups;
  sim_options_ opt;
  uint32_t npus;
  int dims;                /* copied from topo: coordinates are computed inline */
  uint32_t dim_npus[CHAKRA_TOPO_MAX_DIMS];
  uint32_t offset[CHAKRA_TOPO_MAX_DIMS]; /* id = sum coord_d * offset_d */
  struct net *net;
  struct wl *wl;
  struct sys *sys;
  struct mem *mem;
  chakra_warn_fn warn;
  void *warn_ctx;
  chakra_error *err;
  int failed;              /* an error was recorded; the loop stops */
  uint64_t messages;
} sim;

static inline uint32_t sim_coord(const sim *s, uint32_t id, int d) {
  return (id / s->offset[d]) % s->dim_npus[d];
}

/* Records a run-time error (first one wins) and stops the event loop. */
void sim_fail(sim *s, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void sim_warn(sim *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
