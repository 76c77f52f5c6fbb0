/* coll.h - the system layer: collectives on the modelled system (private).
 *
 * A collective is split into chunks (streams); each stream runs one phase
 * per active network dimension with the configured algorithm, queued per
 * dimension so that at most active-chunks-per-dimension streams run at
 * once. Custom collectives (per-rank algorithm ETs) replace the built-in
 * algorithms where configured. The workload layer only sees "start this
 * collective, call me when this NPU's part is done". */
#ifndef CHAKRA_SIM_COLL_H
#define CHAKRA_SIM_COLL_H

#include "core.h"

/* coll_request.group: every NPU (the global plan), a group index the
 * rank is a member of, or COLL_NOT_MEMBER - g for group g it is not in. */
#define COLL_GROUP_ALL (-1)
#define COLL_NOT_MEMBER (-2)

typedef struct coll_request {
  uint32_t rank;
  int type;               /* SIM_AR, SIM_AG, SIM_RS, SIM_A2A */
  uint64_t bytes;         /* per-rank size (all-gather: input) */
  uint32_t involved;      /* dimension mask */
  int n_involved;         /* 0 = attribute absent: all dimensions */
  int32_t group;          /* see above: resolved once per rank (workload.c) */
  const char *pg_name;    /* its name, for messages */
  uint64_t node_id;       /* for per-node custom implementations and errors */
  sim_fn done;
  void *obj;
  uint64_t arg;
} coll_request;

/* The custom algorithm (prefix) a collective of this type and node id
 * runs, or NULL for the built-in ones; the run's loaded algorithms. */
const char *coll_custom_prefix(const sim *s, int type, uint64_t node_id);
struct custom_lib *coll_custom_lib(sim *s);

int coll_init(sim *s);
void coll_free(sim *s);
/* Starts rq on its NPU; errors stop the run through sim_fail(). */
void coll_start(sim *s, const coll_request *rq);

#endif
