/* tlsvg.h - a timeline drawn as SVG (private to libchakra): what
 * chakra_timeline_open_svg() collects instead of writing trace events,
 * drawn as a gantt chart through the one SVG writer (svgplot) when the
 * timeline closes. A lane per track, labelled by its process and track
 * names, in process then track order; slices coloured by node type. */
#ifndef CHAKRA_REPORT_TLSVG_H
#define CHAKRA_REPORT_TLSVG_H

#include <stdint.h>

#include "chakra/error.h"

/* The most lanes drawn: a picture of more is no use (open the JSON
 * timeline in Perfetto instead). */
#define TLSVG_MAX_LANES 2000

typedef struct tlsvg tlsvg;

tlsvg *tlsvg_new(void);
void tlsvg_process(tlsvg *v, uint32_t pid, const char *name);
void tlsvg_track(tlsvg *v, uint32_t pid, uint32_t tid, const char *name);
void tlsvg_slice(tlsvg *v, uint32_t pid, uint32_t tid, const char *cat, uint64_t start_ns, uint64_t dur_ns);
/* Draws what was collected into path; frees v whatever happens. */
int tlsvg_write(tlsvg *v, const char *path, chakra_error *err);
void tlsvg_free(tlsvg *v);

#endif
