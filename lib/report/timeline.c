/* timeline.c - the Chrome trace-event writer, the one place that knows
 * the format (include/chakra/timeline_writer.h), and the slot layout of the
 * simulator's and replay's timelines (timeline.h). */
#include "timeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/textout.h"
#include "tlsvg.h"
#include "chakra/attr.h"

struct chakra_timeline {
  textout t;
  jsonw *w;    /* &t.w */
  int first;   /* no event written yet */
  tlsvg *svg;  /* chakra_timeline_open_svg(): collected, drawn at close */
  char *path;  /* its output */
};

int chakra_timeline_open_svg(chakra_timeline **out, const char *path, chakra_error *err) {
  *out = NULL;
  chakra_timeline *t = calloc(1, sizeof *t);
  if (t && (!(t->svg = tlsvg_new()) || !(t->path = strdup(path)))) {
    tlsvg_free(t->svg);
    free(t);
    t = NULL;
  }
  if (!t) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  *out = t;
  return 0;
}

int chakra_timeline_open(chakra_timeline **out, const char *path, chakra_error *err) {
  *out = NULL;
  chakra_timeline *t = calloc(1, sizeof *t);
  if (!t) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  int rc = textout_open(&t->t, path, err);
  if (rc) {
    free(t);
    return rc;
  }
  t->w = &t->t.w;
  t->first = 1;
  jsonw_lit(t->w, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
  *out = t;
  return 0;
}

static void next_event(chakra_timeline *t) {
  jsonw_lit(t->w, t->first ? "\n" : ",\n");
  t->first = 0;
}

/* Microseconds with nanosecond decimals: 12345 ns -> 12.345 */
static void put_us(jsonw *w, uint64_t ns) {
  jsonw_u64(w, ns / 1000);
  char frac[4] = {'.', (char)('0' + ns / 100 % 10), (char)('0' + ns / 10 % 10), (char)('0' + ns % 10)};
  jsonw_raw(w, frac, 4);
}

static void meta(chakra_timeline *t, const char *what, uint32_t pid, int64_t tid, const char *name) {
  next_event(t);
  jsonw_lit(t->w, "{\"ph\":\"M\",\"name\":\"");
  jsonw_lit(t->w, what);
  jsonw_lit(t->w, "\",\"pid\":");
  jsonw_u64(t->w, pid);
  if (tid >= 0) {
    jsonw_lit(t->w, ",\"tid\":");
    jsonw_u64(t->w, (uint64_t)tid);
  }
  jsonw_lit(t->w, ",\"args\":{\"name\":");
  jsonw_string(t->w, name, strlen(name));
  jsonw_lit(t->w, "}}");
}

void chakra_timeline_process(chakra_timeline *t, uint32_t pid, const char *name) {
  if (t->svg) {
    tlsvg_process(t->svg, pid, name);
    return;
  }
  meta(t, "process_name", pid, -1, name);
}

void chakra_timeline_track(chakra_timeline *t, uint32_t pid, uint32_t tid, const char *name) {
  if (t->svg) {
    tlsvg_track(t->svg, pid, tid, name);
    return;
  }
  meta(t, "thread_name", pid, tid, name);
}

void chakra_timeline_slice(chakra_timeline *t, uint32_t pid, uint32_t tid, const char *name, size_t name_len,
                           const char *cat, uint64_t start_ns, uint64_t dur_ns, uint64_t node_id) {
  if (t->svg) {
    tlsvg_slice(t->svg, pid, tid, cat, start_ns, dur_ns);
    return;
  }
  jsonw *w = t->w;
  next_event(t);
  jsonw_lit(w, "{\"ph\":\"X\",\"name\":");
  jsonw_string(w, name ? name : "", name ? name_len : 0);
  jsonw_lit(w, ",\"cat\":\"");
  jsonw_lit(w, cat);
  jsonw_lit(w, "\",\"pid\":");
  jsonw_u64(w, pid);
  jsonw_lit(w, ",\"tid\":");
  jsonw_u64(w, tid);
  jsonw_lit(w, ",\"ts\":");
  put_us(w, start_ns);
  jsonw_lit(w, ",\"dur\":");
  put_us(w, dur_ns);
  jsonw_lit(w, ",\"args\":{\"node_id\":");
  jsonw_u64(w, node_id);
  jsonw_lit(w, "}}");
}

int chakra_timeline_close(chakra_timeline *t, chakra_error *err) {
  if (t->svg) {
    int rc = tlsvg_write(t->svg, t->path, err);
    free(t->path);
    free(t);
    return rc;
  }
  jsonw_lit(t->w, "\n]}\n");
  int rc = textout_close(&t->t, 0, err);
  free(t);
  return rc;
}

void chakra_timeline_discard(chakra_timeline *t) {
  if (!t) return;
  if (t->svg) {
    tlsvg_free(t->svg);
    free(t->path);
    free(t);
    return;
  }
  textout_close(&t->t, CHAKRA_ECANCELED, NULL);
  free(t);
}

/* ---- the simulator's and replay's layout ---- */

static const char *const slot_tracks[] = {"CPU", "GPU compute", "GPU communication", "receives"};

int timeline_slot_rank(chakra_timeline *t, uint32_t pid, chakra_reader *rd, uint32_t count, timeline_span_fn fn,
                       void *ctx, chakra_error *err) {
  char pname[32];
  snprintf(pname, sizeof pname, "rank %u", pid);
  chakra_timeline_process(t, pid, pname);
  for (uint32_t k = 0; k < 4; k++) chakra_timeline_track(t, pid, k, slot_tracks[k]);
  for (uint32_t i = 0; i < count; i++) {
    chakra_node *n;
    int rc = chakra_reader_next(rd, &n, err);
    if (rc < 0) return rc;
    if (rc == 0)
      return chakra_error_set(err, CHAKRA_EFORMAT, "%s: has %u nodes, fewer than when it ran (%u)",
                              chakra_reader_path(rd), i, count);
    timeline_span sp;
    if (!fn(ctx, i, n, &sp)) continue;
    const char *type = chakra_node_type_name(n->type);
    chakra_timeline_slice(t, pid, sp.track, n->name ? n->name : "", n->name ? strlen(n->name) : 0,
                          type ? type : "UNKNOWN", sp.start, sp.end - sp.start, sp.id);
  }
  return 0;
}
