/* schedule.h - one stage's node order and pipeline schedule (private to
 * libchakra).
 *
 * The schedule is a sequence of work units (a micro-batch's forward or
 * backward on this stage): GPipe runs all forwards then all backwards,
 * 1F1B warms up with (stages - stage - 1) forwards, then alternates. Each
 * unit's first nodes get control dependencies on the previous unit's last
 * nodes; sends and receives stay free so neighbours never wait on a
 * barrier. Ids are then assigned in topological order, ties by creation,
 * or by given keys. */
#ifndef CHAKRA_SYNTH_SCHEDULE_H
#define CHAKRA_SYNTH_SCHEDULE_H

#include "chakra/synth.h"
#include "sgraph.h"

typedef struct sched_stage {
  uint32_t n;
  int32_t *order;     /* id -> graph node */
  uint32_t *ctrl_off; /* per id, into ctrl (n + 1 entries) */
  uint32_t *ctrl;     /* ids */
} sched_stage;

/* local must hold g->nn entries (scratch shared across stages); on return
 * local[node] is the node's id for nodes of this stage. keys (per graph
 * node, or NULL): number by ascending key, ties by creation, instead of in
 * topological order (--order stage; ids are then not topological). */
int sched_build(const sg_graph *g, int32_t stage, chakra_synth_schedule kind, int32_t *local, const uint64_t *keys,
                sched_stage *out, chakra_error *err);
void sched_free(sched_stage *s);

#endif
