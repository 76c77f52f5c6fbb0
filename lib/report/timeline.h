/* timeline.h - the Chrome/Perfetto timeline of a run (private to
 * libchakra). The writer itself is public (include/chakra/timeline_writer.h) and
 * lives in timeline.c; this is the layout the simulator and replay share:
 * a process per rank ("rank R"), a track per hardware slot (CPU, GPU
 * compute, GPU communication, receives), one slice per node that ran,
 * named and typed from the rank's trace. */
#ifndef CHAKRA_REPORT_TIMELINE_H
#define CHAKRA_REPORT_TIMELINE_H

#include "chakra/timeline_writer.h"
#include "chakra/trace.h"

/* Where node i of a rank ran. */
typedef struct timeline_span {
  uint64_t id;           /* the node id shown */
  uint64_t start, end;   /* ns */
  uint32_t track;        /* 0 CPU, 1 GPU compute, 2 GPU communication, 3 receives */
} timeline_span;

/* Fills *out for node i (n: that node as read from the trace); returns 0
 * when the node never ran (no slice). */
typedef int (*timeline_span_fn)(void *ctx, uint32_t i, const chakra_node *n, timeline_span *out);

/* Adds rank pid: its process and tracks, then the slices of the first
 * count nodes of rd, in file order. A trace with fewer nodes (changed
 * since it ran) is an error naming it. */
int timeline_slot_rank(chakra_timeline *t, uint32_t pid, chakra_reader *rd, uint32_t count, timeline_span_fn fn,
                       void *ctx, chakra_error *err);

#endif
