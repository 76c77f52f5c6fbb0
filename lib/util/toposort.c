/* toposort.c - Kahn's algorithm with an id heap, and the cycle finder; see toposort.h. */
#include "toposort.h"

#include <string.h>

/* The reverse CSR of g's dependencies. */
static int reverse(const topo_graph *g, uint32_t **off_out, uint32_t **adj_out) {
  size_t n = g->n, m = g->dep_off[n];
  uint32_t *off = calloc(n + 1, sizeof *off), *adj = malloc((m ? m : 1) * sizeof *adj);
  uint32_t *fill = malloc((n ? n : 1) * sizeof *fill);
  if (!off || !adj || !fill) {
    free(off), free(adj), free(fill);
    return -1;
  }
  for (size_t k = 0; k < m; k++) off[g->deps[k] + 1]++;
  for (size_t i = 0; i < n; i++) off[i + 1] += off[i];
  memcpy(fill, off, n * sizeof *fill);
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t k = g->dep_off[i]; k < g->dep_off[i + 1]; k++) adj[fill[g->deps[k]]++] = i;
  free(fill);
  *off_out = off;
  *adj_out = adj;
  return 0;
}

int topo_sort(const topo_graph *g, uint32_t *order, size_t *done, uint32_t *remaining) {
  size_t n = g->n;
  *done = 0;
  const uint32_t *coff = g->child_off, *ch = g->children;
  uint32_t *own_off = NULL, *own_adj = NULL;
  if (!coff) {
    if (reverse(g, &own_off, &own_adj)) return -1;
    coff = own_off;
    ch = own_adj;
  }
  uint32_t *indeg = remaining ? remaining : malloc((n ? n : 1) * sizeof *indeg);
  idheap h = {malloc((n ? n : 1) * sizeof *h.v), 0, (uint32_t)(n ? n : 1)};
  if (!indeg || !h.v) {
    if (indeg != remaining) free(indeg);
    free(h.v), free(own_off), free(own_adj);
    return -1;
  }
  /* the heap holds each node once at most: it never grows */
  for (uint32_t i = 0; i < n; i++) {
    indeg[i] = g->skip && g->skip[i] ? 0 : g->dep_off[i + 1] - g->dep_off[i];
    if (!indeg[i] && !(g->skip && g->skip[i])) idheap_push(&h, i, g->keys, g->stride);
  }
  size_t k = 0;
  while (h.n) {
    uint32_t v = idheap_pop(&h, g->keys, g->stride);
    order[k++] = v;
    for (uint32_t e = coff[v]; e < coff[v + 1]; e++)
      if (--indeg[ch[e]] == 0) idheap_push(&h, ch[e], g->keys, g->stride);
  }
  *done = k;
  if (indeg != remaining) free(indeg);
  free(h.v), free(own_off), free(own_adj);
  return 0;
}

uint32_t topo_cycle_node(const topo_graph *g, const uint32_t *remaining, uint32_t start) {
  uint8_t *seen = calloc(g->n ? g->n : 1, 1);
  if (!seen) return start;
  uint32_t v = start;
  for (;;) {
    if (seen[v]) break;
    seen[v] = 1;
    uint32_t next = v;
    for (uint32_t k = g->dep_off[v]; k < g->dep_off[v + 1]; k++)
      if (remaining[g->deps[k]] > 0) {
        next = g->deps[k];
        break;
      }
    if (next == v) break;
    v = next;
  }
  free(seen);
  return v;
}
