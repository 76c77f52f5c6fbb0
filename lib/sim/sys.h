/* sys.h - the system layer: collectives on the modelled system (private).
 *
 * A collective is split into chunks (streams); each stream runs one phase
 * per active network dimension with the configured algorithm, queued per
 * dimension so that at most active-chunks-per-dimension streams run at
 * once. Custom collectives (per-rank algorithm ETs) replace the built-in
 * algorithms where configured. The workload layer only sees "start this
 * collective, call me when this NPU's part is done". */
#ifndef CHAKRA_SIM_SYS_H
#define CHAKRA_SIM_SYS_H

#include "core.h"

typedef struct coll_request {
  uint32_t rank;
  int type;               /* SIM_AR, SIM_AG, SIM_RS, SIM_A2A */
  uint64_t bytes;         /* per-rank size (all-gather: input) */
  uint32_t involved;      /* dimension mask */
  int n_involved;         /* 0 = attribute absent: all dimensions */
  const char *pg_name;    /* NULL or "" or "0" = all NPUs */
  uint64_t node_id;       /* for per-node custom implementations and errors */
  sim_fn done;
  void *obj;
  uint64_t arg;
} coll_request;

int sys_init(sim *s);
void sys_free(sim *s);
/* Starts rq on its NPU; errors stop the run through sim_fail(). */
void sys_collective(sim *s, const coll_request *rq);
/* Checks before the run that every group name used is known (for clear
 * errors before any simulated time passes). */
int sys_group_known(const sim *s, const char *pg_name);
/* Registers the PyTorch process groups of a METADATA node: json is the
 * list [{"pg_name": ..., "ranks": [...]}, ...]; empty ranks = all NPUs. */
int sys_parse_pg_json(sim *s, const char *json, uint32_t rank, chakra_error *err);

/* Remote memory: one access of bytes from rank; done runs when it ends. */
void mem_access(sim *s, uint32_t rank, uint64_t bytes, sim_fn done, void *obj, uint64_t arg);

#endif
