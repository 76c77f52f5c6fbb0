/* timeline_writer.h - the Chrome trace-event writer (open in
 * ui.perfetto.dev or chrome://tracing): the one place that knows the
 * format, used by every timeline chakra writes (a simulation's, a replay's
 * and a trace's own, chakra/timeline.h).
 *
 * A process per rank, a named track (thread) per resource, one complete
 * ("X") event per node with its name, type and id, times in microseconds as
 * the format defines (with nanosecond decimals). */
#ifndef CHAKRA_TIMELINE_WRITER_H
#define CHAKRA_TIMELINE_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "chakra/error.h"
#include "chakra/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct chakra_timeline chakra_timeline;

/* Starts a timeline at path ("-" = standard output; ".gz" compresses).
 * Nothing appears at path until chakra_timeline_close(). */
CHAKRA_API int chakra_timeline_open(chakra_timeline **out, const char *path, chakra_error *err);

/* The same timeline drawn as an SVG picture instead (for those without a
 * browser that opens trace events; chakra timeline --svg): a lane per
 * track labelled "PROCESS: TRACK", in process and track order, slices
 * coloured by node type on a time axis, slices closer than a pixel drawn
 * as one. At most 2,000 tracks (close fails naming the count). Nothing is
 * written until chakra_timeline_close(). */
CHAKRA_API int chakra_timeline_open_svg(chakra_timeline **out, const char *path, chakra_error *err);

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

#ifdef __cplusplus
}
#endif
#endif
