/* tlsvg.c - a timeline drawn as SVG; see tlsvg.h. */
#include "tlsvg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/vec.h"
#include "svgplot.h"

typedef struct tl_name {
  uint32_t pid, tid;
  char *name;
} tl_name;

typedef struct tl_names {
  tl_name *v;
  size_t n, cap;
} tl_names;

struct tlsvg {
  tl_names procs, lanes;   /* procs: tid unused */
  svgplot_chart chart;     /* slices on lane indices in order of appearance */
  int oom;
};

/* Node types by colour: the legend's series. */
static const char *const kinds[] = {"compute", "collective", "send", "receive", "memory", "other"};

static uint32_t colour_of(const char *cat) {
  static const char *const prefix[] = {"COMP_", "COMM_COLL", "COMM_SEND", "COMM_RECV", "MEM_"};
  for (uint32_t i = 0; i < 5; i++)
    if (strncmp(cat, prefix[i], strlen(prefix[i])) == 0) return i;
  return 5;
}

tlsvg *tlsvg_new(void) {
  tlsvg *v = calloc(1, sizeof *v);
  if (!v) return NULL;
  v->chart = (svgplot_chart){.kind = SVGPLOT_GANTT, .title = "Timeline: a lane per rank and track", .axis = "time",
                             .unit = "s", .display = 1e-9, .n_series = 6};
  memcpy(v->chart.series, kinds, sizeof kinds);
  return v;
}

/* The entry of (pid, tid), searched from the newest: a rank's slices come
 * right after its tracks. */
static tl_name *find(tl_names *t, uint32_t pid, uint32_t tid) {
  for (size_t i = t->n; i-- > 0;)
    if (t->v[i].pid == pid && t->v[i].tid == tid) return &t->v[i];
  return NULL;
}

static tl_name *add(tlsvg *v, tl_names *t, uint32_t pid, uint32_t tid, const char *name) {
  if (VEC_ROOM(t->v, t->n, t->cap, 1)) return v->oom = 1, NULL;
  char *copy = strdup(name);
  if (!copy) return v->oom = 1, NULL;
  t->v[t->n] = (tl_name){pid, tid, copy};
  return &t->v[t->n++];
}

static void rename_or_add(tlsvg *v, tl_names *t, uint32_t pid, uint32_t tid, const char *name) {
  tl_name *e = find(t, pid, tid);
  if (!e) {
    add(v, t, pid, tid, name);
    return;
  }
  char *copy = strdup(name);
  if (!copy) v->oom = 1;
  else free(e->name), e->name = copy;
}

void tlsvg_process(tlsvg *v, uint32_t pid, const char *name) { rename_or_add(v, &v->procs, pid, 0, name); }
void tlsvg_track(tlsvg *v, uint32_t pid, uint32_t tid, const char *name) {
  rename_or_add(v, &v->lanes, pid, tid, name);
}

void tlsvg_slice(tlsvg *v, uint32_t pid, uint32_t tid, const char *cat, uint64_t start_ns, uint64_t dur_ns) {
  tl_name *lane = find(&v->lanes, pid, tid);
  if (!lane) {
    char name[32];
    snprintf(name, sizeof name, "track %u", tid);
    if (!(lane = add(v, &v->lanes, pid, tid, name))) return;
  }
  uint32_t index = (uint32_t)(lane - v->lanes.v);
  if (svgplot_slice_add(&v->chart, index, colour_of(cat), (double)start_ns, (double)start_ns + (double)dur_ns))
    v->oom = 1;
}

static int lane_cmp(const void *a, const void *b) {
  const tl_name *x = *(tl_name *const *)a, *y = *(tl_name *const *)b;
  if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
  return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The lanes in process and track order as the chart's groups; slices
 * renumbered to match. */
static int order_lanes(tlsvg *v) {
  size_t n = v->lanes.n;
  tl_name **order = malloc((n ? n : 1) * sizeof *order);
  uint32_t *rank = malloc((n ? n : 1) * sizeof *rank);
  int rc = !order || !rank;
  for (size_t i = 0; !rc && i < n; i++) order[i] = &v->lanes.v[i];
  if (!rc) qsort(order, n, sizeof *order, lane_cmp);
  for (size_t i = 0; !rc && i < n; i++) {
    rank[order[i] - v->lanes.v] = (uint32_t)i;
    tl_name *proc = find(&v->procs, order[i]->pid, 0);
    char label[512];
    if (proc) snprintf(label, sizeof label, "%s: %s", proc->name, order[i]->name);
    else snprintf(label, sizeof label, "process %u: %s", order[i]->pid, order[i]->name);
    rc = !svgplot_add(&v->chart, label);
  }
  for (size_t s = 0; !rc && s < v->chart.n_slices; s++) v->chart.slices[s].lane = rank[v->chart.slices[s].lane];
  free(order);
  free(rank);
  return rc;
}

int tlsvg_write(tlsvg *v, const char *path, chakra_error *err) {
  int rc = 0;
  if (v->oom) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  else if (v->lanes.n > TLSVG_MAX_LANES) /* refused before the lanes are sorted and labelled */
    rc = chakra_error_set(err, CHAKRA_EINVAL,
                          "%s: an SVG timeline draws at most %d tracks and this one has %zu: name fewer ranks, or "
                          "write the JSON timeline and open it in ui.perfetto.dev", path, TLSVG_MAX_LANES,
                          v->lanes.n);
  else if (order_lanes(v)) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  else rc = svgplot_write(path, "chakra timeline", &v->chart, 1, err);
  tlsvg_free(v);
  return rc;
}

void tlsvg_free(tlsvg *v) {
  if (!v) return;
  for (size_t i = 0; i < v->procs.n; i++) free(v->procs.v[i].name);
  for (size_t i = 0; i < v->lanes.n; i++) free(v->lanes.v[i].name);
  free(v->procs.v);
  free(v->lanes.v);
  svgplot_chart_free(&v->chart);
  free(v);
}
