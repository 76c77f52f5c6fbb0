/* convdeps.c - the dependencies chakra convert pytorch gives each node;
 * see convdeps.h. */
#include "convdeps.h"

#include <stdlib.h>
#include <string.h>

#include "../util/bigmem.h"
#include "convindex.h"

static int dep_push(conv *c, uint64_t id) {
  if (BIGMEM_ROOM(c->deps, c->ndeps, c->capdeps, 1)) return -1;
  c->deps[c->ndeps++] = id;
  return 0;
}

/* Adds id to node i's list unless present (the list is the tail of deps). */
static int dep_add(conv *c, uint32_t i, uint64_t id) {
  for (uint32_t k = 0; k < c->dep_cnt[i]; k++)
    if (c->deps[c->dep_start[i] + k] == id) return 0;
  if (dep_push(c, id)) return conv_oom(c);
  c->dep_cnt[i]++;
  return 0;
}

static int is_thread_root(const conv *c, uint32_t i) { return (c->h->nodes[i].flags & HT_THREAD_ROOT) != 0; }

/* The reference's traversal: per thread root, depth-first in ascending id;
 * a host op depends on its inter_thread_dep and on the previous host op, a
 * device op on the op visited just before it. */
int conv_deps_compat(conv *c) {
  size_t n = c->n;
  uint32_t *stack = bigmem_alloc((n ? n : 1) * sizeof *stack);
  uint8_t *visited = bigmem_calloc(n ? n : 1);
  if (!stack || !visited) {
    bigmem_free(stack), bigmem_free(visited);
    return conv_oom(c);
  }
  int rc = 0;
  /* roots in conversion order: non-device nodes in file order */
  for (size_t r = 0; r < n && !rc; r++) {
    if (!c->sel[r] || c->gpu[r] || !is_thread_root(c, (uint32_t)r)) continue;
    size_t sp = 0;
    stack[sp++] = (uint32_t)r;
    uint32_t last_cpu = CONV_NONE, last_any = CONV_NONE;
    while (sp && !rc) {
      uint32_t i = stack[--sp];
      if (visited[i]) continue;
      visited[i] = 1;
      const ht_node *x = &c->h->nodes[i];
      c->dep_start[i] = (uint32_t)c->ndeps;
      if (c->gpu[i]) {
        if (last_any != CONV_NONE) rc = dep_add(c, i, c->h->nodes[last_any].id);
        last_any = last_cpu;
      } else {
        if (x->flags & HT_ITD) rc = dep_add(c, i, (uint64_t)x->itd);
        if (!rc && last_cpu != CONV_NONE) rc = dep_add(c, i, c->h->nodes[last_cpu].id);
        last_cpu = last_any = i;
      }
      /* sync deps: the reference compares start times it never sets, so none */
      for (uint32_t k = c->child_off[i + 1]; k > c->child_off[i]; k--) {
        uint32_t ch = c->children[k - 1];
        if (c->sel[ch] && !visited[ch]) stack[sp++] = ch;
      }
    }
  }
  bigmem_free(stack);
  bigmem_free(visited);
  return rc;
}

typedef struct tsk {
  double ts;
  uint64_t id;
  uint32_t idx;
  int64_t dev, stream;
} tsk;

static int cmp_ts(const void *a, const void *b) {
  const tsk *x = a, *y = b;
  if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_stream(const void *a, const void *b) {
  const tsk *x = a, *y = b;
  if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
  if (x->stream != y->stream) return x->stream < y->stream ? -1 : 1;
  return cmp_ts(a, b);
}

/* chakra-c's rules (spec section 5). Each node's deps are appended in one
 * go so that its list stays contiguous. */
int conv_deps_default(conv *c) {
  size_t n = c->n;
  const ht_node *nodes = c->h->nodes;
  int rc = 0;
  /* 1. the host chains: per thread root, its subtree's host ops in replay
   *    order (ascending id, which is start order; by ts when all have one) */
  uint32_t *stack = bigmem_alloc((n ? n : 1) * sizeof *stack);
  tsk *chain = bigmem_alloc((n ? n : 1) * sizeof *chain);
  uint32_t *prev = bigmem_alloc((n ? n : 1) * sizeof *prev);
  if (!stack || !chain || !prev) {
    bigmem_free(stack), bigmem_free(chain), bigmem_free(prev);
    return conv_oom(c);
  }
  for (size_t i = 0; i < n; i++) prev[i] = CONV_NONE;
  for (size_t r = 0; r < n; r++) {
    if (!c->sel[r] || c->gpu[r] || !is_thread_root(c, (uint32_t)r)) continue;
    size_t sp = 0, m = 0;
    int all_ts = 1, sorted = 1;
    stack[sp++] = (uint32_t)r;
    while (sp) {
      uint32_t i = stack[--sp];
      if (!c->gpu[i]) {
        chain[m].ts = nodes[i].ts;
        chain[m].id = nodes[i].id;
        chain[m].idx = i;
        if (i != r && !(nodes[i].flags & HT_TS)) all_ts = 0;
        if (m > 1 && cmp_ts(&chain[m - 1], &chain[m]) > 0) sorted = 0;
        m++;
      }
      for (uint32_t k = c->child_off[i + 1]; k > c->child_off[i]; k--) {
        uint32_t ch = c->children[k - 1];
        if (c->sel[ch] && !c->gpu[ch]) stack[sp++] = ch;
      }
    }
    /* the thread root has no ts: it stays first */
    if (all_ts && !sorted && m > 2) qsort(chain + 1, m - 1, sizeof *chain, cmp_ts);
    for (size_t k = 1; k < m; k++) prev[chain[k].idx] = chain[k - 1].idx;
  }
  /* 2. device ops: previous op on the same (device, stream) */
  uint32_t *sprev = bigmem_alloc((n ? n : 1) * sizeof *sprev);
  if (!sprev) {
    bigmem_free(stack), bigmem_free(chain), bigmem_free(prev);
    return conv_oom(c);
  }
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    sprev[i] = CONV_NONE;
    if (!c->sel[i] || !c->gpu[i]) continue;
    chain[m].ts = (nodes[i].flags & HT_TS) ? nodes[i].ts : 0;
    chain[m].id = nodes[i].id;
    chain[m].idx = (uint32_t)i;
    chain[m].dev = nodes[i].device;
    chain[m].stream = nodes[i].stream;
    m++;
  }
  qsort(chain, m, sizeof *chain, cmp_stream);
  for (size_t k = 1; k < m; k++)
    if (chain[k].dev == chain[k - 1].dev && chain[k].stream == chain[k - 1].stream)
      sprev[chain[k].idx] = chain[k - 1].idx;
  /* 3. the lists */
  for (size_t k = 0; k < c->n && !rc; k++) {
    uint32_t i = c->sidx[k];
    if (!c->sel[i]) continue;
    const ht_node *x = &nodes[i];
    c->dep_start[i] = (uint32_t)c->ndeps;
    if (c->gpu[i]) {
      rc = dep_add(c, i, nodes[c->parent[i]].id);
      if (!rc && sprev[i] != CONV_NONE) {
        rc = dep_add(c, i, nodes[sprev[i]].id);
        c->rep->stream_deps++;
      }
      continue;
    }
    if (x->flags & HT_ITD) {
      uint32_t t = conv_find_id(c, (uint64_t)x->itd);
      if (t != CONV_NONE && c->sel[t] && t != i) rc = dep_add(c, i, (uint64_t)x->itd);
      else c->rep->itd_skipped++;
    }
    if (!rc && prev[i] != CONV_NONE) rc = dep_add(c, i, nodes[prev[i]].id);
    if (!rc && x->side != UINT32_MAX && c->h->side[x->side].n_sync) {
      const ht_side *s = &c->h->side[x->side];
      for (uint32_t j = 0; j < s->n_sync && !rc; j++) {
        uint32_t t = conv_find_id(c, s->sync[j]);
        /* a sync dep is kept when the device op started before this op, the
         * condition the reference meant to apply (its start times are 0) */
        if (t != CONV_NONE && c->sel[t] && c->gpu[t] && (nodes[t].flags & HT_TS) && (x->flags & HT_TS) &&
            nodes[t].ts < x->ts) {
          size_t before = c->dep_cnt[i];
          rc = dep_add(c, i, s->sync[j]);
          if (c->dep_cnt[i] > before) c->rep->sync_deps++;
        } else {
          c->rep->sync_skipped++;
        }
      }
    }
  }
  bigmem_free(stack), bigmem_free(chain), bigmem_free(prev), bigmem_free(sprev);
  if (!rc && c->rep->itd_skipped)
    conv_warnf(c, c->h->path, "%llu inter_thread_dep ids name no converted node; ignored",
          (unsigned long long)c->rep->itd_skipped);
  if (!rc && c->rep->sync_skipped)
    conv_warnf(c, c->h->path, "%llu sync_dep entries do not name a device op that started earlier; ignored",
          (unsigned long long)c->rep->sync_skipped);
  return rc;
}
