/* measure.h - what a replayed iteration measured, per rank (private to
 * lib/replay): the simulator's report figures from the nodes' start and
 * end times, and the time of every collective in every measured iteration
 * for the spread. */
#ifndef CHAKRA_REPLAY_MEASURE_H
#define CHAKRA_REPLAY_MEASURE_H

#include "chakra/run.h"
#include "comms.h"
#include "engine.h"

typedef struct rp_measure {
  uint32_t iters, k;          /* measured iterations; how many are recorded */
  uint64_t *finish;           /* per iteration */
  uint32_t n_inst;
  uint32_t *inst_node;        /* node index of each collective */
  uint64_t *inst_ns;          /* n_inst x iters */
  chakra_run_rank last;       /* the last recorded iteration */
} rp_measure;

int rp_measure_init(rp_measure *m, const rp_plan *p, uint32_t iters);
/* Records the iteration e just ran. Returns 0 or -1 when out of memory. */
int rp_measure_record(rp_measure *m, const rp_engine *e);
/* Fills the finish spread of m->last. */
void rp_measure_spread(rp_measure *m);
/* This rank's collective instances (malloc'd, m->n_inst of them). */
chakra_run_instance *rp_measure_instances(const rp_measure *m, const rp_engine *e);
void rp_measure_free(rp_measure *m);

#endif
