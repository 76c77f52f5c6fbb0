/* timeline.h - Chrome trace-event timelines (open in ui.perfetto.dev or
 * chrome://tracing) of a trace's own timing, through the one writer
 * (chakra/timeline_writer.h, included here).
 *
 * chakra_timeline_add_graph() builds a rank's events from the trace itself:
 * recorded start times where the producer wrote them, otherwise as soon as
 * the node's dependencies have finished, with the recorded durations (no
 * network model). */
#ifndef CHAKRA_TIMELINE_H
#define CHAKRA_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "chakra/error.h"
#include "chakra/graph.h"
#include "chakra/timeline_writer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A simulator's issue/callback log, lines
 *   issue,ANY=NPU,ANY=CYCLE,ANY=NODE_ID,ANY=NODE_NAME
 *   callback,ANY=NPU,ANY=CYCLE,ANY=NODE_ID,ANY=NODE_NAME
 * (other lines, those holding neither word, skipped), written as the
 * reference timeline visualizer (mlcommons/chakra chakra_timeline_visualizer)
 * writes it: {"meta_user": "aras", "traceEvents": [...], "meta_cpu_count":
 * npus}, one "X" event per node called back, pid its NPU, tid its kind by
 * name (1 local memory, 2 remote memory, 3 compute, 4 communication), ts
 * and dur the cycles over npu_mhz MHz in milliseconds, as Python's
 * json.dump spells them. A malformed line, an NPU outside 0..npus-1, a
 * callback of a node not issued, or a name of no kind is an error naming
 * the line; nothing is written then. */
typedef struct chakra_issue_log_options {
  uint32_t npus;
  double npu_mhz;
} chakra_issue_log_options;
CHAKRA_API int chakra_timeline_from_issue_log(const char *in_path, const char *out_path,
                                              const chakra_issue_log_options *o, chakra_error *err);

/* Resource kinds of a trace's own timeline, each a track (or several
 * lanes of it when its nodes overlap). */
enum {
  CHAKRA_TL_CPU,        /* is_cpu_op nodes */
  CHAKRA_TL_GPU,        /* other compute */
  CHAKRA_TL_COMM,       /* collectives and sends */
  CHAKRA_TL_RECV,       /* receives */
  CHAKRA_TL_MEM,        /* remote memory loads and stores */
  CHAKRA_TL_OTHER,      /* metadata, invalid and unknown types */
  CHAKRA_TL_KINDS
};

typedef struct chakra_timeline_rank_info {
  uint64_t nodes;
  uint64_t recorded;     /* nodes placed at their recorded start time */
  uint64_t end_ns;       /* the last node's end */
  uint32_t lanes[CHAKRA_TL_KINDS];  /* lanes used per kind */
} chakra_timeline_rank_info;

/* Adds rank pid from its graph g: names are read back from g's file.
 * Nodes without a recorded start begin when their last dependency ends,
 * roots at the rank's earliest recorded start (0 when none is recorded).
 * Overlapping nodes of one kind go to further lanes ("GPU compute 2", ...).
 * info may be NULL. */
CHAKRA_API int chakra_timeline_add_graph(chakra_timeline *t, uint32_t pid, const chakra_graph *g,
                                         chakra_timeline_rank_info *info, chakra_error *err);

#ifdef __cplusplus
}
#endif
#endif
