/* schedule.c - stage node order and pipeline schedule; see schedule.h. */
#include "schedule.h"

#include <stdlib.h>
#include <string.h>

/* Position of each unit (mb, phase) in the stage's schedule. */
static void unit_sequence(chakra_synth_schedule kind, uint32_t nmb, uint32_t pp, uint32_t stage, uint32_t *seq) {
  uint32_t k = 0;
  if (kind == CHAKRA_SYNTH_SCHEDULE_GPIPE) {
    for (uint32_t m = 0; m < nmb; m++) seq[k++] = m * 2;
    for (uint32_t m = 0; m < nmb; m++) seq[k++] = m * 2 + 1;
    return;
  }
  uint32_t warm = pp - stage - 1 < nmb ? pp - stage - 1 : nmb;
  for (uint32_t m = 0; m < warm; m++) seq[k++] = m * 2;
  for (uint32_t i = 0; i + warm < nmb; i++) seq[k++] = (warm + i) * 2, seq[k++] = i * 2 + 1;
  for (uint32_t m = nmb - warm; m < nmb; m++) seq[k++] = m * 2 + 1;
}

static int is_unit_node(const sg_node *n) {
  return n->mb >= 0 && n->phase != SG_UPDATE && n->kind != SN_SEND && n->kind != SN_RECV;
}

/* Control edges (pairs of local indices) for the schedule. */
static int schedule_edges(const sg_graph *g, const int32_t *nodes, uint32_t n, const int32_t *local,
                          chakra_synth_schedule kind, int32_t stage, uint32_t **edges, uint32_t *nedges) {
  uint32_t nunits = g->cfg.nmb * 2;
  uint32_t *seq = malloc(nunits * sizeof *seq), *pos = malloc(nunits * sizeof *pos);
  int32_t *unit = malloc(n * sizeof *unit);
  uint8_t *succ = calloc(n, 1), *pred = calloc(n, 1);
  int rc = seq && pos && unit && succ && pred ? 0 : -1;
  *edges = NULL, *nedges = 0;
  if (!rc) {
    unit_sequence(kind, g->cfg.nmb, g->cfg.pp, (uint32_t)stage, seq);
    for (uint32_t k = 0; k < nunits; k++) pos[seq[k]] = k;
    for (uint32_t i = 0; i < n; i++) {
      const sg_node *nd = &g->nodes[nodes[i]];
      unit[i] = is_unit_node(nd) ? (int32_t)pos[(uint32_t)nd->mb * 2 + (nd->phase == SG_BWD)] : -1;
    }
    for (uint32_t i = 0; i < n; i++) {
      const sg_node *nd = &g->nodes[nodes[i]];
      for (uint32_t k = 0; k < nd->ndep; k++) {
        int32_t d = local[g->deps[nd->dep_off + k]];
        if (unit[i] >= 0 && unit[d] == unit[i]) succ[d] = 1, pred[i] = 1;
      }
    }
    /* Count, then fill: roots of unit k depend on sinks of unit k-1. */
    uint32_t *nroot = calloc(nunits, sizeof *nroot), *nsink = calloc(nunits, sizeof *nsink);
    if (!nroot || !nsink) rc = -1;
    for (uint32_t i = 0; !rc && i < n; i++)
      if (unit[i] >= 0) nroot[unit[i]] += !pred[i], nsink[unit[i]] += !succ[i];
    /* A unit follows the last unit before it that has nodes: an inference
     * step has no backward units, and its forwards still run in order. */
    uint32_t *prev = malloc(nunits * sizeof *prev);
    if (!prev) rc = -1;
    for (uint32_t k = 0, last = UINT32_MAX; !rc && k < nunits; k++) {
      prev[k] = last;
      if (nsink[k]) last = k;
    }
    uint64_t total = 0;
    for (uint32_t k = 1; !rc && k < nunits; k++)
      if (prev[k] != UINT32_MAX) total += (uint64_t)nroot[k] * nsink[prev[k]];
    if (!rc && total) {
      *edges = malloc(total * 2 * sizeof **edges);
      uint32_t **sinks = calloc(nunits, sizeof *sinks);
      uint32_t *fill = calloc(nunits, sizeof *fill);
      if (!*edges || !sinks || !fill) rc = -1;
      for (uint32_t k = 0; !rc && k < nunits; k++)
        if (!(sinks[k] = malloc((nsink[k] + 1) * sizeof **sinks))) rc = -1;
      for (uint32_t i = 0; !rc && i < n; i++)
        if (unit[i] >= 0 && !succ[i]) sinks[unit[i]][fill[unit[i]]++] = i;
      for (uint32_t i = 0; !rc && i < n; i++) {
        if (unit[i] <= 0 || pred[i] || prev[unit[i]] == UINT32_MAX) continue;
        uint32_t p = prev[unit[i]];
        const sg_node *nd = &g->nodes[nodes[i]];
        for (uint32_t s = 0; s < nsink[p]; s++) {
          int data = 0; /* already a data dependency: no control edge */
          for (uint32_t k = 0; k < nd->ndep && !data; k++) data = (uint32_t)local[g->deps[nd->dep_off + k]] == sinks[p][s];
          if (data) continue;
          (*edges)[*nedges * 2] = i;
          (*edges)[*nedges * 2 + 1] = sinks[p][s];
          ++*nedges;
        }
      }
      for (uint32_t k = 0; sinks && k < nunits; k++) free(sinks[k]);
      free(sinks), free(fill);
    }
    free(nroot), free(nsink), free(prev);
  }
  free(seq), free(pos), free(unit), free(succ), free(pred);
  return rc;
}

/* Binary min-heap of local indices. */
static void heap_push(uint32_t *h, uint32_t *n, uint32_t v) {
  uint32_t i = (*n)++;
  while (i && h[(i - 1) / 2] > v) h[i] = h[(i - 1) / 2], i = (i - 1) / 2;
  h[i] = v;
}
static uint32_t heap_pop(uint32_t *h, uint32_t *n) {
  uint32_t top = h[0], v = h[--*n], i = 0;
  for (;;) {
    uint32_t c = 2 * i + 1;
    if (c >= *n) break;
    if (c + 1 < *n && h[c + 1] < h[c]) c++;
    if (h[c] >= v) break;
    h[i] = h[c], i = c;
  }
  h[i] = v;
  return top;
}

/* Ids by ascending key, ties by creation (local index). */
typedef struct keyed {
  uint64_t key;
  uint32_t i;
} keyed;

static int by_key(const void *a, const void *b) {
  const keyed *x = a, *y = b;
  return x->key < y->key ? -1 : x->key > y->key ? 1 : x->i < y->i ? -1 : x->i > y->i;
}

static int number_by_key(const int32_t *nodes, uint32_t n, const uint64_t *keys, uint32_t *id, int32_t *order) {
  keyed *v = malloc((n + 1) * sizeof *v);
  if (!v) return -1;
  for (uint32_t i = 0; i < n; i++) v[i].key = keys[nodes[i]], v[i].i = i;
  qsort(v, n, sizeof *v, by_key);
  for (uint32_t k = 0; k < n; k++) id[v[k].i] = k, order[k] = nodes[v[k].i];
  free(v);
  return 0;
}

int sched_build(const sg_graph *g, int32_t stage, chakra_synth_schedule kind, int32_t *local, const uint64_t *keys,
                sched_stage *out, chakra_error *err) {
  memset(out, 0, sizeof *out);
  uint32_t n = 0;
  for (uint32_t i = 0; i < g->nn; i++) n += g->nodes[i].stage == stage;
  int32_t *nodes = malloc((n + 1) * sizeof *nodes);
  if (!nodes) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  n = 0;
  for (uint32_t i = 0; i < g->nn; i++)
    if (g->nodes[i].stage == stage) local[i] = (int32_t)n, nodes[n++] = (int32_t)i;
  uint32_t *edges = NULL, nedges = 0;
  int rc = kind == CHAKRA_SYNTH_SCHEDULE_NONE ? 0 : schedule_edges(g, nodes, n, local, kind, stage, &edges, &nedges);
  /* Successor lists over data and control edges, for Kahn's algorithm. */
  uint32_t *indeg = calloc(n + 1, sizeof *indeg), *soff = calloc(n + 2, sizeof *soff);
  uint32_t *coff = calloc(n + 2, sizeof *coff);
  uint64_t ndata = 0;
  for (uint32_t i = 0; i < n; i++) ndata += g->nodes[nodes[i]].ndep;
  uint32_t *succ = malloc((ndata + nedges + 1) * sizeof *succ), *ctrl = malloc((nedges + 1) * sizeof *ctrl);
  uint32_t *heap = malloc((n + 1) * sizeof *heap), *id = malloc((n + 1) * sizeof *id);
  if (rc || !indeg || !soff || !coff || !succ || !ctrl || !heap || !id) {
    rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    goto done;
  }
  for (uint32_t i = 0; i < n; i++) {
    const sg_node *nd = &g->nodes[nodes[i]];
    for (uint32_t k = 0; k < nd->ndep; k++) {
      int32_t d = g->deps[nd->dep_off + k];
      if (g->nodes[d].stage != stage) {
        rc = chakra_error_set(err, CHAKRA_EINVAL, "internal: dependency across stages");
        goto done;
      }
      soff[local[d] + 1]++, indeg[i]++;
    }
  }
  for (uint32_t e = 0; e < nedges; e++) soff[edges[2 * e + 1] + 1]++, indeg[edges[2 * e]]++, coff[edges[2 * e] + 1]++;
  for (uint32_t i = 0; i < n; i++) soff[i + 1] += soff[i], coff[i + 1] += coff[i];
  {
    uint32_t *fill = calloc(n + 1, sizeof *fill), *cfill = calloc(n + 1, sizeof *cfill);
    if (!fill || !cfill) {
      free(fill), free(cfill);
      rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
      goto done;
    }
    for (uint32_t i = 0; i < n; i++) {
      const sg_node *nd = &g->nodes[nodes[i]];
      for (uint32_t k = 0; k < nd->ndep; k++) {
        uint32_t d = (uint32_t)local[g->deps[nd->dep_off + k]];
        succ[soff[d] + fill[d]++] = i;
      }
    }
    for (uint32_t e = 0; e < nedges; e++) {
      uint32_t a = edges[2 * e], b = edges[2 * e + 1];
      succ[soff[b] + fill[b]++] = a;
      ctrl[coff[a] + cfill[a]++] = b;
    }
    free(fill), free(cfill);
  }
  uint32_t hn = 0, done_n = 0;
  for (uint32_t i = 0; i < n; i++)
    if (!indeg[i]) heap_push(heap, &hn, i);
  out->order = malloc((n + 1) * sizeof *out->order);
  if (!out->order) {
    rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    goto done;
  }
  while (hn) {
    uint32_t v = heap_pop(heap, &hn);
    id[v] = done_n;
    out->order[done_n++] = nodes[v];
    for (uint32_t k = soff[v]; k < soff[v + 1]; k++)
      if (--indeg[succ[k]] == 0) heap_push(heap, &hn, succ[k]);
  }
  if (keys && done_n == n && number_by_key(nodes, n, keys, id, out->order)) { /* acyclic: checked below */
    rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    goto done;
  }
  if (done_n != n) {
    rc = chakra_error_set(err, CHAKRA_EINVAL, "internal: the stage %d graph has a cycle", stage);
    goto done;
  }
  /* Control deps by id, in id order of their owners. */
  out->ctrl_off = calloc(n + 1, sizeof *out->ctrl_off);
  out->ctrl = malloc((nedges + 1) * sizeof *out->ctrl);
  if (!out->ctrl_off || !out->ctrl) {
    rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    goto done;
  }
  for (uint32_t v = 0; v < n; v++) out->ctrl_off[id[v] + 1] = coff[v + 1] - coff[v];
  for (uint32_t i = 0; i < n; i++) out->ctrl_off[i + 1] += out->ctrl_off[i];
  for (uint32_t v = 0; v < n; v++)
    for (uint32_t k = coff[v]; k < coff[v + 1]; k++)
      out->ctrl[out->ctrl_off[id[v]] + (k - coff[v])] = id[ctrl[k]];
  for (uint32_t i = 0; i < n; i++) local[nodes[i]] = (int32_t)id[i];
  out->n = n;
done:
  free(nodes), free(edges), free(indeg), free(soff), free(coff), free(succ), free(ctrl), free(heap), free(id);
  if (rc) sched_free(out);
  return rc;
}

void sched_free(sched_stage *s) {
  free(s->order), free(s->ctrl_off), free(s->ctrl);
  memset(s, 0, sizeof *s);
}
