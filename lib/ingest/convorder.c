/* convorder.c - dangling dependencies, cycles and the output order of
 * chakra convert pytorch; see convorder.h. */
#include "convorder.h"

#include <stdlib.h>
#include <string.h>

#include "../util/bigmem.h"
#include "../util/toposort.h"
#include "convindex.h"

/* Each dependency's node index (CONV_NONE: not in the trace), laid out like
 * deps, so that the passes below look every id up once. */
static uint32_t *resolve_deps(const conv *c) {
  uint32_t *dix = bigmem_alloc((c->ndeps ? c->ndeps : 1) * sizeof *dix);
  if (!dix) return NULL;
  for (size_t k = 0; k < c->ndeps; k++) dix[k] = conv_find_id(c, c->deps[k]);
  return dix;
}

/* out: the selected nodes with a dependency either way. */
static int prune(conv *c, const uint32_t *dix) {
  size_t n = c->n;
  uint8_t *dependent = bigmem_calloc(n ? n : 1);
  if (!dependent) return conv_oom(c);
  for (size_t i = 0; i < n; i++) {
    if (!c->sel[i]) continue;
    for (uint32_t k = 0; k < c->dep_cnt[i]; k++) {
      uint32_t t = dix[c->dep_start[i] + k];
      if (t != CONV_NONE) dependent[t] = 1;
    }
  }
  for (size_t i = 0; i < n; i++) {
    if (!c->sel[i]) continue;
    if (c->dep_cnt[i] == 0 && !dependent[i]) c->rep->dangling_removed++;
    else c->out[i] = 1;
  }
  bigmem_free(dependent);
  /* the process root is always one; more means ops outside every thread */
  if (!c->compat && c->rep->dangling_removed > 1)
    conv_warnf(c, c->h->path, "%llu nodes are under no thread root and nothing depends on them: left out",
          (unsigned long long)c->rep->dangling_removed);
  return 0;
}

static void order_by_id(conv *c) {
  c->n_order = 0;
  for (size_t k = 0; k < c->n; k++)
    if (c->out[c->sidx[k]]) c->order[c->n_order++] = c->sidx[k];
}

/* The edges the order must respect, as a CSR over all nodes (util/topo):
 * data deps on written nodes, then (by default) the control dep to a
 * written parent. Nodes not written are skipped. */
static int dep_graph(conv *c, const uint32_t *dix, uint32_t **off_out, uint32_t **adj_out) {
  size_t n = c->n, m = 0;
  uint32_t *off = bigmem_alloc((n + 1) * sizeof *off);
  if (!off) return conv_oom(c);
  for (size_t i = 0; i < n; i++) {
    off[i] = (uint32_t)m;
    if (!c->out[i]) continue;
    for (uint32_t k = 0; k < c->dep_cnt[i]; k++) {
      uint32_t t = dix[c->dep_start[i] + k];
      m += t != CONV_NONE && c->out[t];
    }
    uint32_t p = c->parent[i];
    m += !c->compat && p != CONV_NONE && c->out[p];
  }
  off[n] = (uint32_t)m;
  uint32_t *adj = bigmem_alloc((m ? m : 1) * sizeof *adj);
  if (!adj) {
    bigmem_free(off);
    return conv_oom(c);
  }
  for (size_t i = 0, w = 0; i < n; i++) {
    if (!c->out[i]) continue;
    for (uint32_t k = 0; k < c->dep_cnt[i]; k++) {
      uint32_t t = dix[c->dep_start[i] + k];
      if (t != CONV_NONE && c->out[t]) adj[w++] = t;
    }
    uint32_t p = c->parent[i];
    if (!c->compat && p != CONV_NONE && c->out[p]) adj[w++] = p;
  }
  *off_out = off;
  *adj_out = adj;
  return 0;
}

/* 1 when every dependency points to a smaller id: no cycle is possible
 * and ascending id order is topological (the common case). */
static int id_order_ok(const conv *c, const uint32_t *dix) {
  for (size_t i = 0; i < c->n; i++) {
    if (!c->out[i]) continue;
    uint64_t me = c->h->nodes[i].id;
    for (uint32_t k = 0; k < c->dep_cnt[i]; k++) {
      uint32_t t = dix[c->dep_start[i] + k];
      if (t != CONV_NONE && c->out[t] && c->deps[c->dep_start[i] + k] >= me) return 0;
    }
    uint32_t p = c->parent[i];
    if (!c->compat && p != CONV_NONE && c->out[p] && c->h->nodes[p].id >= me) return 0;
  }
  return 1;
}

/* Cycle check (Kahn) over data deps and, by default, the control deps to
 * parents that are written; the order is Kahn's with ties by id, except
 * under --compat, which writes ascending id as the reference does. */
static int order_nodes(conv *c, const uint32_t *dix) {
  if (id_order_ok(c, dix)) {
    order_by_id(c);
    return 0;
  }
  size_t n = c->n;
  uint32_t *off = NULL, *adj = NULL;
  int rc = dep_graph(c, dix, &off, &adj);
  if (rc) return rc;
  uint32_t *indeg = bigmem_alloc((n ? n : 1) * sizeof *indeg);
  topo_graph g = {.n = n, .dep_off = off, .deps = adj,
                  .keys = &c->h->nodes[0].id, .stride = sizeof *c->h->nodes};
  uint8_t *skip = bigmem_alloc(n ? n : 1);
  size_t done = 0;
  if (!indeg || !skip) rc = conv_oom(c);
  for (size_t i = 0; i < n && !rc; i++) skip[i] = !c->out[i];
  g.skip = skip;
  if (!rc && topo_sort(&g, c->order, &done, indeg)) rc = conv_oom(c);
  if (!rc) {
    size_t total = 0;
    for (size_t i = 0; i < n; i++) total += c->out[i];
    c->n_order = done;
    if (done != total) {
      uint32_t at = 0;
      while (!(c->out[at] && indeg[at])) at++;
      rc = conv_node_err(c, topo_cycle_node(&g, indeg, at), "dependency cycle through this node");
    } else if (c->compat) {
      order_by_id(c);
    }
  }
  bigmem_free(indeg), bigmem_free(skip), bigmem_free(off), bigmem_free(adj);
  return rc;
}

int conv_prune_and_order(conv *c) {
  size_t n = c->n;
  c->out = bigmem_calloc(n ? n : 1);
  c->order = bigmem_alloc((n ? n : 1) * sizeof *c->order);
  uint32_t *dix = resolve_deps(c);
  int rc = c->out && c->order && dix ? prune(c, dix) : conv_oom(c);
  if (!rc) rc = order_nodes(c, dix);
  bigmem_free(dix);
  return rc;
}
