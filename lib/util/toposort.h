/* toposort.h - id-ordered topological order and cycle finding (private to
 * libchakra).
 *
 * Chakra's canonical node order is Kahn's algorithm with ties broken by
 * ascending node id: the graph loader, the PyTorch converter and the
 * simulator's ready queues all need it, so the min-heap keyed by id and the
 * sort built on it live here once. Node ids are read in place from the
 * caller's node array: the id of node i is the uint64_t at byte offset
 * i * stride from keys. */
#ifndef CHAKRA_UTIL_TOPOSORT_H
#define CHAKRA_UTIL_TOPOSORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include "vec.h"

/* A growable min-heap of node indexes ordered by id. */
typedef struct idheap {
  uint32_t *v;
  uint32_t n, cap;
} idheap;

static inline uint64_t idheap_key(const void *keys, size_t stride, uint32_t v) {
  return *(const uint64_t *)(const void *)((const char *)keys + (size_t)v * stride);
}

/* Adds v; -1 when the heap cannot grow (h unchanged). */
static inline int idheap_push(idheap *h, uint32_t v, const void *keys, size_t stride) {
  if (VEC_ROOM(h->v, h->n, h->cap, 1)) return -1;
  uint64_t k = idheap_key(keys, stride, v);
  uint32_t i = h->n++;
  while (i > 0) {
    uint32_t p = (i - 1) / 2;
    if (idheap_key(keys, stride, h->v[p]) <= k) break;
    h->v[i] = h->v[p];
    i = p;
  }
  h->v[i] = v;
  return 0;
}

/* Removes and returns the node with the smallest id (h->n > 0). */
static inline uint32_t idheap_pop(idheap *h, const void *keys, size_t stride) {
  uint32_t top = h->v[0], last = h->v[--h->n], i = 0;
  uint64_t kl = idheap_key(keys, stride, last);
  for (;;) {
    uint32_t c = 2 * i + 1;
    if (c >= h->n) break;
    if (c + 1 < h->n && idheap_key(keys, stride, h->v[c + 1]) < idheap_key(keys, stride, h->v[c])) c++;
    if (kl <= idheap_key(keys, stride, h->v[c])) break;
    h->v[i] = h->v[c];
    i = c;
  }
  if (h->n) h->v[i] = last;
  return top;
}

/* A dependency graph over nodes 0..n-1 in CSR form: node i depends on
 * deps[dep_off[i] .. dep_off[i+1]). children/child_off is the reverse
 * relation (NULL: topo_sort builds it). Nodes with skip[i] != 0 (skip may
 * be NULL) are left out of the order; no edge may touch them. */
typedef struct topo_graph {
  size_t n;
  const uint32_t *dep_off, *deps;
  const uint32_t *child_off, *children;
  const uint8_t *skip;
  const void *keys; /* id of node i: see the top of this file */
  size_t stride;
} topo_graph;

/* Writes the nodes in Kahn order with ties by ascending id to order (room
 * for n) and their number to *done. remaining (n entries, or NULL)
 * receives each node's in-degree left at the end: nonzero exactly for
 * the nodes on or behind a cycle, which are then missing from order.
 * Returns 0, or -1 when out of memory. */
int topo_sort(const topo_graph *g, uint32_t *order, size_t *done, uint32_t *remaining);

/* A node on a cycle: from start (a node with remaining[start] > 0), follows
 * the first dependency with remaining > 0 until a node repeats, and
 * returns that node. Without memory for its marks it returns start. */
uint32_t topo_cycle_node(const topo_graph *g, const uint32_t *remaining, uint32_t start);

#endif
