/* convindex.c - the id index, the parent tree and the selection of the
 * nodes chakra convert pytorch writes; see convindex.h. */
#include "convindex.h"

#include <stdlib.h>
#include <string.h>

#include "../util/bigmem.h"

uint32_t conv_find_id(const conv *c, uint64_t id) {
  if (c->direct) {
    if (id < c->id_min || id - c->id_min >= c->direct_n) return CONV_NONE;
    return c->direct[id - c->id_min];
  }
  size_t lo = 0, hi = c->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (c->sid[mid] < id) lo = mid + 1;
    else hi = mid;
  }
  return lo < c->n && c->sid[lo] == id ? c->sidx[lo] : CONV_NONE;
}

static int dup_error(conv *c, uint32_t a, uint32_t b) {
  uint32_t x = a < b ? a : b, y = a < b ? b : a;
  return chakra_error_set(c->err, CHAKRA_EFORMAT, "%s: duplicate node id %llu (bytes %llu and %llu)", c->h->path,
                          (unsigned long long)c->h->nodes[x].id, (unsigned long long)c->h->nodes[x].offset,
                          (unsigned long long)c->h->nodes[y].offset);
}

/* ids in ascending order (sidx) and id -> index: a direct table when the
 * ids are dense, as PyTorch numbers them (no sort needed), else a sorted
 * array searched by bisection. */
int conv_build_index(conv *c) {
  size_t n = c->n;
  const ht_node *nodes = c->h->nodes;
  c->sidx = bigmem_alloc((n ? n : 1) * sizeof *c->sidx);
  if (!c->sidx) return conv_oom(c);
  uint64_t lo = UINT64_MAX, hi = 0;
  for (size_t i = 0; i < n; i++) {
    if (nodes[i].id < lo) lo = nodes[i].id;
    if (nodes[i].id > hi) hi = nodes[i].id;
  }
  if (n && hi - lo < 4 * (uint64_t)n + 64) {
    c->id_min = lo;
    c->direct_n = (size_t)(hi - lo + 1);
    c->direct = bigmem_alloc(c->direct_n * sizeof *c->direct);
    if (!c->direct) return conv_oom(c);
    memset(c->direct, 0xff, c->direct_n * sizeof *c->direct);
    for (size_t i = 0; i < n; i++) {
      uint32_t *slot = &c->direct[nodes[i].id - lo];
      if (*slot != CONV_NONE) return dup_error(c, *slot, (uint32_t)i);
      *slot = (uint32_t)i;
    }
    size_t k = 0;
    for (size_t d = 0; d < c->direct_n; d++)
      if (c->direct[d] != CONV_NONE) c->sidx[k++] = c->direct[d];
    return 0;
  }
  store_kv *a = bigmem_alloc((n ? n : 1) * sizeof *a);
  c->sid = bigmem_alloc((n ? n : 1) * sizeof *c->sid);
  if (!a || !c->sid) {
    bigmem_free(a);
    return conv_oom(c);
  }
  for (size_t i = 0; i < n; i++) a[i].k = nodes[i].id, a[i].v = (uint32_t)i;
  if (store_sort_kv(a, n)) {
    bigmem_free(a);
    return conv_oom(c);
  }
  for (size_t i = 0; i < n; i++) {
    if (i && a[i].k == a[i - 1].k) {
      int rc = dup_error(c, a[i - 1].v, a[i].v);
      bigmem_free(a);
      return rc;
    }
    c->sid[i] = a[i].k;
    c->sidx[i] = a[i].v;
  }
  bigmem_free(a);
  return 0;
}

/* ------------------------------------------------------------- the tree */

/* A parent chain that comes back to itself has no root: every traversal
 * from a thread root would run forever. Each chain is walked once (state 1
 * = on the chain being walked, 2 = known to reach a root). */
static int parent_cycle_check(conv *c) {
  size_t n = c->n;
  uint8_t *state = bigmem_calloc(n ? n : 1);
  if (!state) return conv_oom(c);
  int rc = 0;
  for (size_t s = 0; s < n && !rc; s++) {
    uint32_t i = (uint32_t)s;
    while (i != CONV_NONE && state[i] == 0) {
      state[i] = 1;
      i = c->parent[i];
    }
    if (i != CONV_NONE && state[i] == 1)
      rc = chakra_error_set(c->err, CHAKRA_EGRAPH, "%s: node id %llu: its parent chain comes back to itself (a cycle)",
                            c->h->path, (unsigned long long)c->h->nodes[i].id);
    for (uint32_t k = (uint32_t)s; k != CONV_NONE && state[k] == 1; k = c->parent[k]) state[k] = 2;
  }
  bigmem_free(state);
  return rc;
}

int conv_build_tree(conv *c) {
  size_t n = c->n;
  c->parent = bigmem_alloc((n ? n : 1) * sizeof *c->parent);
  c->child_off = bigmem_calloc((n + 1) * sizeof *c->child_off);
  c->children = bigmem_alloc((n ? n : 1) * sizeof *c->children);
  if (!c->parent || !c->child_off || !c->children) return conv_oom(c);
  for (size_t i = 0; i < n; i++) {
    const ht_node *x = &c->h->nodes[i];
    uint32_t p = (x->flags & HT_PARENT) ? conv_find_id(c, x->parent) : CONV_NONE;
    if (p == i) p = CONV_NONE; /* the process root names itself */
    c->parent[i] = p;
    if (p != CONV_NONE) c->child_off[p + 1]++;
  }
  for (size_t i = 0; i < n; i++) c->child_off[i + 1] += c->child_off[i];
  uint32_t *fill = bigmem_alloc((n ? n : 1) * sizeof *fill);
  if (!fill) return conv_oom(c);
  memcpy(fill, c->child_off, n * sizeof *fill);
  for (size_t k = 0; k < n; k++) { /* ascending id: children lists come out sorted */
    uint32_t i = c->sidx[k], p = c->parent[i];
    if (p != CONV_NONE) c->children[fill[p]++] = i;
  }
  bigmem_free(fill);
  return parent_cycle_check(c);
}

/* ----------------------------------------------------------- selection */

int conv_select(conv *c) {
  size_t n = c->n;
  c->sel = bigmem_calloc(n ? n : 1);
  c->gpu = bigmem_calloc(n ? n : 1);
  if (!c->sel || !c->gpu) return conv_oom(c);
  for (size_t i = 0; i < n; i++) {
    const ht_node *x = &c->h->nodes[i];
    c->gpu[i] = (x->flags & HT_GPU) && !(x->flags & HT_META);
    if (x->flags & HT_GPU) c->rep->gpu_ops++;
  }
  /* Non-device nodes are converted; a device op only as the device child of
   * a converted non-device node. */
  for (size_t i = 0; i < n; i++) {
    if (!c->gpu[i]) {
      c->sel[i] = 1;
    } else {
      uint32_t p = c->parent[i];
      if (p != CONV_NONE && !c->gpu[p]) c->sel[i] = 1;
      else c->rep->gpu_dropped++;
    }
  }
  if (c->rep->gpu_dropped && !c->compat)
    conv_warnf(c, c->h->path, "%llu device ops have no host op as parent and are left out",
          (unsigned long long)c->rep->gpu_dropped);
  return 0;
}
