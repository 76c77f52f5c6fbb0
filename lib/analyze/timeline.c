/* timeline.c - a trace's own schedule as a timeline (chakra timeline); see
 * include/chakra/timeline.h. The writer is lib/report/timeline.c. */
#include "chakra/timeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra/attr.h"
#include "chakra/node.h"
#include "nodescan.h"
#include "../util/vec.h"

/* ---- a trace's own schedule ---- */

static const char *const kind_names[CHAKRA_TL_KINDS] = {"CPU", "GPU compute", "GPU communication",
                                                         "receives", "remote memory", "other"};

typedef struct rank_sched {
  const chakra_graph *g;
  uint64_t *start, *end;   /* ns */
  uint8_t *recorded;       /* start came from the file */
  char *names;             /* every name back to back */
  size_t *name_off;        /* n + 1 */
  size_t names_len, names_cap;
  uint32_t *lane;
  uint8_t *kind;
} rank_sched;

static int kind_of(const chakra_gnode *n) {
  chakra_node_class c;
  chakra_node_classify(n, 0, 0, &c);
  switch (c.kind) {
    case CHAKRA_KIND_CPU: return CHAKRA_TL_CPU;
    case CHAKRA_KIND_COMPUTE: return CHAKRA_TL_GPU;
    case CHAKRA_KIND_COLL:
    case CHAKRA_KIND_SEND: return CHAKRA_TL_COMM;
    case CHAKRA_KIND_RECV: return CHAKRA_TL_RECV;
    case CHAKRA_KIND_MEM_LOAD:
    case CHAKRA_KIND_MEM_STORE: return CHAKRA_TL_MEM;
    default: return CHAKRA_TL_OTHER;
  }
}

static int collect(void *ctx, uint32_t i, const nodescan *n, const uint8_t *raw, size_t len) {
  (void)raw, (void)len;
  rank_sched *s = ctx;
  if (i >= s->g->n) return 0;
  s->start[i] = n->start_time * 1000;
  s->recorded[i] = n->start_time != 0;
  if (VEC_ROOM(s->names, s->names_len, s->names_cap, n->name_len)) return CHAKRA_ENOMEM;
  if (n->name_len) memcpy(s->names + s->names_len, n->name, n->name_len);
  s->name_off[i] = s->names_len;
  s->names_len += n->name_len;
  s->name_off[i + 1] = s->names_len;
  return 0;
}

/* Recorded starts where present, else as soon as every dependency ended;
 * roots at the earliest recorded start. */
static void schedule(rank_sched *s, chakra_timeline_rank_info *info) {
  const chakra_graph *g = s->g;
  uint64_t base = UINT64_MAX;
  for (uint32_t i = 0; i < g->n; i++)
    if (s->recorded[i] && s->start[i] < base) base = s->start[i];
  if (base == UINT64_MAX) base = 0;
  memset(s->end, 0, g->n * sizeof *s->end);
  for (size_t t = 0; t < g->n; t++) {
    uint32_t x = g->topo[t];
    if (!s->recorded[x]) {
      uint64_t at = base;
      for (uint32_t k = g->dep_off[x]; k < g->dep_off[x + 1]; k++)
        if (s->end[g->deps[k]] > at) at = s->end[g->deps[k]];
      s->start[x] = at;
    }
    s->end[x] = s->start[x] + g->nodes[x].duration_micros * 1000;
    info->recorded += s->recorded[x];
    if (s->end[x] > info->end_ns) info->end_ns = s->end[x];
  }
}

/* Min-heap of lanes by the end of their last slice. */
typedef struct lane_heap {
  uint64_t *end;
  uint32_t *id;
  size_t n;
} lane_heap;

static void heap_sift_down(lane_heap *h, size_t i) {
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= h->n) return;
    if (c + 1 < h->n && h->end[c + 1] < h->end[c]) c++;
    if (h->end[i] <= h->end[c]) return;
    uint64_t e = h->end[i];
    uint32_t d = h->id[i];
    h->end[i] = h->end[c], h->id[i] = h->id[c];
    h->end[c] = e, h->id[c] = d;
    i = c;
  }
}

static void heap_push(lane_heap *h, uint64_t end, uint32_t id) {
  size_t i = h->n++;
  while (i > 0 && h->end[(i - 1) / 2] > end) {
    h->end[i] = h->end[(i - 1) / 2], h->id[i] = h->id[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h->end[i] = end, h->id[i] = id;
}

/* Start order; of slices starting together the longer first, so that a
 * parent comes before the children it contains. */
static int by_start(const void *a, const void *b, void *ctx) {
  const rank_sched *s = ctx;
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  if (s->start[x] != s->start[y]) return s->start[x] < s->start[y] ? -1 : 1;
  if (s->end[x] != s->end[y]) return s->end[x] > s->end[y] ? -1 : 1;
  return x < y ? -1 : x > y;
}

#define NONE UINT32_MAX

/* Interval partitioning, in start order: a slice with a recorded start
 * nests in the lane used last when it lies inside that lane's innermost
 * open slice, recorded too (host ops contain the ops they call; scheduled
 * slices never nest, which would suggest a call that is not there); else it takes the lane that freed up
 * first if that is free by then; else a new lane. Without nesting this
 * uses as few lanes as any assignment can (the most slices overlapping at
 * one time). Each lane's open slices form a stack linked through up[]. */
static int assign_lanes(rank_sched *s, chakra_timeline_rank_info *info) {
  const chakra_graph *g = s->g;
  size_t n = g->n ? g->n : 1;
  uint32_t *order = malloc(n * sizeof *order), *up = malloc(n * sizeof *up), *top = malloc(n * sizeof *top);
  lane_heap h = {malloc(n * sizeof *h.end), malloc(n * sizeof *h.id), 0};
  if (!order || !up || !top || !h.end || !h.id) {
    free(order), free(up), free(top), free(h.end), free(h.id);
    return CHAKRA_ENOMEM;
  }
  for (uint32_t i = 0; i < g->n; i++) order[i] = i;
  qsort_r(order, g->n, sizeof *order, by_start, s);
  for (int k = 0; k < CHAKRA_TL_KINDS; k++) {
    h.n = 0;
    uint32_t lanes = 0, last = NONE;
    for (size_t j = 0; j < g->n; j++) {
      uint32_t x = order[j];
      if (s->kind[x] != k) continue;
      up[x] = NONE;
      uint32_t t = last == NONE ? NONE : top[last];
      while (t != NONE && s->end[t] <= s->start[x]) t = up[t];
      if (last != NONE) top[last] = t;
      if (t != NONE && s->end[t] >= s->end[x] && s->recorded[t] && s->recorded[x]) {
        up[x] = t;
        s->lane[x] = last;
      } else if (h.n && h.end[0] <= s->start[x]) {
        s->lane[x] = h.id[0];
        h.end[0] = s->end[x];
        heap_sift_down(&h, 0);
      } else {
        s->lane[x] = lanes;
        heap_push(&h, s->end[x], lanes++);
      }
      top[s->lane[x]] = x;
      last = s->lane[x];
    }
    info->lanes[k] = lanes;
  }
  free(order), free(up), free(top), free(h.end), free(h.id);
  return 0;
}

/* Tracks are numbered kind by kind, lanes in order, so tid order is kind
 * order. */
static void emit(chakra_timeline *t, uint32_t pid, const rank_sched *s, const chakra_timeline_rank_info *info) {
  char name[64];
  uint32_t base[CHAKRA_TL_KINDS], tid = 0;
  snprintf(name, sizeof name, "rank %u", pid);
  chakra_timeline_process(t, pid, name);
  for (int k = 0; k < CHAKRA_TL_KINDS; k++) {
    base[k] = tid;
    for (uint32_t l = 0; l < info->lanes[k]; l++) {
      if (l) snprintf(name, sizeof name, "%s %u", kind_names[k], l + 1);
      chakra_timeline_track(t, pid, tid++, l ? name : kind_names[k]);
    }
  }
  for (uint32_t i = 0; i < s->g->n; i++) {
    const chakra_gnode *n = &s->g->nodes[i];
    const char *type = chakra_node_type_name(n->type);
    chakra_timeline_slice(t, pid, base[s->kind[i]] + s->lane[i], s->names + s->name_off[i],
                          s->name_off[i + 1] - s->name_off[i], type ? type : "UNKNOWN", s->start[i],
                          s->end[i] - s->start[i], n->id);
  }
}

static void sched_free(rank_sched *s) {
  free(s->start), free(s->end), free(s->recorded), free(s->names), free(s->name_off), free(s->lane), free(s->kind);
}

int chakra_timeline_add_graph(chakra_timeline *t, uint32_t pid, const chakra_graph *g,
                              chakra_timeline_rank_info *info, chakra_error *err) {
  chakra_timeline_rank_info local;
  if (!info) info = &local;
  memset(info, 0, sizeof *info);
  size_t n = g->n ? g->n : 1;
  rank_sched s = {.g = g};
  s.start = calloc(n, sizeof *s.start);
  s.end = malloc(n * sizeof *s.end);
  s.recorded = calloc(n, 1);
  s.name_off = calloc(n + 1, sizeof *s.name_off);
  s.lane = malloc(n * sizeof *s.lane);
  s.kind = malloc(n);
  s.names = malloc(s.names_cap = 1 << 16);
  int rc = !s.start || !s.end || !s.recorded || !s.name_off || !s.lane || !s.kind || !s.names ? CHAKRA_ENOMEM : 0;
  if (!rc) rc = nodescan_graph(g, 0, collect, &s, err);
  if (!rc) {
    for (uint32_t i = 0; i < g->n; i++) s.kind[i] = (uint8_t)kind_of(&g->nodes[i]);
    schedule(&s, info);
    rc = assign_lanes(&s, info);
  }
  if (!rc) {
    info->nodes = g->n;
    emit(t, pid, &s, info);
  }
  sched_free(&s);
  if (rc == CHAKRA_ENOMEM) chakra_error_set(err, rc, "%s: out of memory", g->path);
  return rc;
}
