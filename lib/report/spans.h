/* spans.h - how long a rank was busy, from the intervals its nodes ran in
 * (private to libchakra): the one computation behind a run record's busy
 * times and the split of its exposed time, for the simulator and replay.
 *
 * Exposed time (finish minus GPU compute, ASTRA-sim's "exposed
 * communication") splits in two: communication, while a collective or a
 * send is in flight and no GPU compute runs; and the pipeline bubble, the
 * rest (waiting for a receive, an activation from another pipeline stage,
 * with nothing else to do, or idle). */
#ifndef CHAKRA_REPORT_SPANS_H
#define CHAKRA_REPORT_SPANS_H

#include <stdint.h>

#include "chakra/node.h"

/* The length of the union of the intervals [v[2i], v[2i + 1]), i < k;
 * sorts v by start unless it is sorted already. */
uint64_t spans_union(uint64_t *v, uint32_t k);

/* Whether a node of this slot and category keeps its rank out of the
 * bubble: GPU compute, or a collective or send on the communication slot. */
static inline int spans_not_bubble(int slot, int cat) {
  return slot == CHAKRA_SLOT_GPU || (slot == CHAKRA_SLOT_COMM && cat == CHAKRA_CAT_COMM);
}

/* The bubble: exposed time less the time communication was exposed,
 * (union of compute and communication) - compute. */
static inline uint64_t spans_bubble(uint64_t exposed_ns, uint64_t gpu_ns, uint64_t gpu_or_comm_ns) {
  uint64_t comm = gpu_or_comm_ns > gpu_ns ? gpu_or_comm_ns - gpu_ns : 0;
  return exposed_ns > comm ? exposed_ns - comm : 0;
}

#endif
