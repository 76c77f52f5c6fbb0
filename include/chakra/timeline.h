/* timeline.h - Chrome trace-event timelines (open in ui.perfetto.dev or
 * chrome://tracing), from a trace's own timing or from a simulation.
 *
 * The writer is the one place that knows the format: a process per rank, a
 * named track (thread) per resource, one complete ("X") event per node with
 * its name, type and id, times in microseconds as the format defines (with
 * nanosecond decimals). chakra_timeline_add_graph() builds a rank's events
 * from the trace itself: recorded start times where the producer wrote
 * them, otherwise as soon as the node's dependencies have finished, with
 * the recorded durations (no network model). */
#ifndef CHAKRA_TIMELINE_H
#define CHAKRA_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "chakra/error.h"
#include "chakra/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct chakra_timeline chakra_timeline;

/* Starts a timeline at path ("-" = standard output; ".gz" compresses).
 * Nothing appears at path until chakra_timeline_close(). */
CHAKRA_API int chakra_timeline_open(chakra_timeline **out, const char *path, chakra_error *err);

/* Names process pid ("rank 3") and track tid of process pid ("GPU compute").
 * Tracks are shown in tid order. */
CHAKRA_API void chakra_timeline_process(chakra_timeline *t, uint32_t pid, const char *name);
CHAKRA_API void chakra_timeline_track(chakra_timeline *t, uint32_t pid, uint32_t tid, const char *name);

/* One node's slice: name (name_len bytes, any UTF-8; escaped here), cat
 * (the node type name), start and duration in nanoseconds. Events of one
 * track must not overlap partially (the format nests them); the caller
 * chooses tracks accordingly. */
CHAKRA_API void chakra_timeline_slice(chakra_timeline *t, uint32_t pid, uint32_t tid, const char *name, size_t name_len,
                                      const char *cat, uint64_t start_ns, uint64_t dur_ns, uint64_t node_id);

/* Finishes the document and puts it in place; frees t whatever happens. */
CHAKRA_API int chakra_timeline_close(chakra_timeline *t, chakra_error *err);
/* Abandons the output (nothing is written); frees t. NULL is fine. */
CHAKRA_API void chakra_timeline_discard(chakra_timeline *t);

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
