/* convert.c - PyTorch host ET or linked trace -> Chakra ET (chakra convert
 * pytorch); see include/chakra/ingest.h and docs/convert.md.
 *
 * The node table comes from hostet.c (one record per JSON node, the
 * inputs/outputs kept as their Python-repr texts). Everything here works
 * on index arrays: the id index, the parent/children tree, the dependency
 * lists (one append-only array, each node's deps contiguous), the
 * topological order. No recursion: trees and chains of any depth are fine.
 *
 * Two policies share the code: --compat reproduces the reference converter
 * (mlcommons/chakra) byte for byte, including its dependency rules; the
 * default applies the fixes of spec section 5 (GPU ops ordered per stream,
 * synchronisation honoured, send/recv peers and tags, order-independent
 * control deps, stream only on device ops). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "../util/bigmem.h"
#include "../util/outfile.h"
#include "../util/outset.h"
#include "../util/commgroups.h"
#include "../util/tasks.h"
#include "../util/toposort.h"
#include "chakra/build.h"
#include "chakra/et_def.pb-c.h"
#include "chakra/ingest.h"
#include "hostet.h"
#include "ibuf.h"
#include "pyrepr.h"

#define NONE UINT32_MAX

enum { T_INVALID = 0, T_METADATA = 1, T_COMP = 4, T_SEND = 5, T_RECV = 6, T_COLL = 7 };

/* one process group from a "## process_group:init ##" node */
typedef struct pgroup {
  char *name;
  int64_t backend_id;
  int has_backend_id;
  int64_t *ranks; /* NULL: all ranks */
  size_t n_ranks;
  int64_t size;   /* group_size */
} pgroup;

typedef struct conv {
  const chakra_convert_options *opt;
  chakra_convert_report *rep;
  chakra_error *err;
  hostet *h;
  size_t n;
  int compat;
  /* ids */
  uint64_t *sid;     /* ids in ascending order */
  uint32_t *sidx;    /* their node indexes */
  uint32_t *direct;  /* dense ids: index of id - id_min, or NONE */
  uint64_t id_min;
  size_t direct_n;
  /* tree */
  uint32_t *parent;
  uint32_t *child_off, *children; /* children of i in ascending id order */
  /* selection and typing */
  uint8_t *sel;      /* converted (before dangling removal) */
  uint8_t *out;      /* written */
  uint8_t *gpu;      /* a device op (cat present, not METADATA) */
  uint8_t *type;
  int8_t *comm_type;
  int32_t *peer;     /* SEND: comm_dst, RECV: comm_src */
  int32_t *tag;
  uint32_t *pg;      /* pg_name string id for comm nodes (0 = none) */
  /* deps */
  uint32_t *dep_start, *dep_cnt;
  uint64_t *deps;
  size_t ndeps, capdeps;
  uint32_t *order;   /* output order (indexes) */
  size_t n_order;
  /* process groups */
  pgroup *pgs;
  size_t n_pgs;
} conv;

/* A warning about file. */
static void warnf(conv *c, const char *file, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void warnf(conv *c, const char *file, const char *fmt, ...) {
  if (!c->opt->diag) return;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  chakra_problem p = chakra_problem_make(CHAKRA_SEV_WARNING, msg);
  p.file = file;
  c->opt->diag(c->opt->diag_ctx, &p);
}

static const char *nname(const conv *c, uint32_t i) { return strtab_str(&c->h->strings, c->h->nodes[i].name); }

static int node_err(conv *c, uint32_t i, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int node_err(conv *c, uint32_t i, const char *fmt, ...) {
  char msg[800];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  char where[96];
  hostet_where(c->h, i, where, sizeof where);
  return chakra_error_set(c->err, CHAKRA_EFORMAT, "%s: %s '%.200s': %s", c->h->path, where, nname(c, i), msg);
}

static int oom(conv *c) { return chakra_error_set(c->err, CHAKRA_ENOMEM, "out of memory"); }

/* ------------------------------------------------------------ id index */

static uint32_t find_id(const conv *c, uint64_t id) {
  if (c->direct) {
    if (id < c->id_min || id - c->id_min >= c->direct_n) return NONE;
    return c->direct[id - c->id_min];
  }
  size_t lo = 0, hi = c->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (c->sid[mid] < id) lo = mid + 1;
    else hi = mid;
  }
  return lo < c->n && c->sid[lo] == id ? c->sidx[lo] : NONE;
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
static int build_index(conv *c) {
  size_t n = c->n;
  const ht_node *nodes = c->h->nodes;
  c->sidx = bigmem_alloc((n ? n : 1) * sizeof *c->sidx);
  if (!c->sidx) return oom(c);
  uint64_t lo = UINT64_MAX, hi = 0;
  for (size_t i = 0; i < n; i++) {
    if (nodes[i].id < lo) lo = nodes[i].id;
    if (nodes[i].id > hi) hi = nodes[i].id;
  }
  if (n && hi - lo < 4 * (uint64_t)n + 64) {
    c->id_min = lo;
    c->direct_n = (size_t)(hi - lo + 1);
    c->direct = bigmem_alloc(c->direct_n * sizeof *c->direct);
    if (!c->direct) return oom(c);
    memset(c->direct, 0xff, c->direct_n * sizeof *c->direct);
    for (size_t i = 0; i < n; i++) {
      uint32_t *slot = &c->direct[nodes[i].id - lo];
      if (*slot != NONE) return dup_error(c, *slot, (uint32_t)i);
      *slot = (uint32_t)i;
    }
    size_t k = 0;
    for (size_t d = 0; d < c->direct_n; d++)
      if (c->direct[d] != NONE) c->sidx[k++] = c->direct[d];
    return 0;
  }
  store_kv *a = bigmem_alloc((n ? n : 1) * sizeof *a);
  c->sid = bigmem_alloc((n ? n : 1) * sizeof *c->sid);
  if (!a || !c->sid) {
    bigmem_free(a);
    return oom(c);
  }
  for (size_t i = 0; i < n; i++) a[i].k = nodes[i].id, a[i].v = (uint32_t)i;
  if (store_sort_kv(a, n)) {
    bigmem_free(a);
    return oom(c);
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
  if (!state) return oom(c);
  int rc = 0;
  for (size_t s = 0; s < n && !rc; s++) {
    uint32_t i = (uint32_t)s;
    while (i != NONE && state[i] == 0) {
      state[i] = 1;
      i = c->parent[i];
    }
    if (i != NONE && state[i] == 1)
      rc = chakra_error_set(c->err, CHAKRA_EGRAPH, "%s: node id %llu: its parent chain comes back to itself (a cycle)",
                            c->h->path, (unsigned long long)c->h->nodes[i].id);
    for (uint32_t k = (uint32_t)s; k != NONE && state[k] == 1; k = c->parent[k]) state[k] = 2;
  }
  bigmem_free(state);
  return rc;
}

static int build_tree(conv *c) {
  size_t n = c->n;
  c->parent = bigmem_alloc((n ? n : 1) * sizeof *c->parent);
  c->child_off = bigmem_calloc((n + 1) * sizeof *c->child_off);
  c->children = bigmem_alloc((n ? n : 1) * sizeof *c->children);
  if (!c->parent || !c->child_off || !c->children) return oom(c);
  for (size_t i = 0; i < n; i++) {
    const ht_node *x = &c->h->nodes[i];
    uint32_t p = (x->flags & HT_PARENT) ? find_id(c, x->parent) : NONE;
    if (p == i) p = NONE; /* the process root names itself */
    c->parent[i] = p;
    if (p != NONE) c->child_off[p + 1]++;
  }
  for (size_t i = 0; i < n; i++) c->child_off[i + 1] += c->child_off[i];
  uint32_t *fill = bigmem_alloc((n ? n : 1) * sizeof *fill);
  if (!fill) return oom(c);
  memcpy(fill, c->child_off, n * sizeof *fill);
  for (size_t k = 0; k < n; k++) { /* ascending id: children lists come out sorted */
    uint32_t i = c->sidx[k], p = c->parent[i];
    if (p != NONE) c->children[fill[p]++] = i;
  }
  bigmem_free(fill);
  return parent_cycle_check(c);
}

/* ----------------------------------------------------------- selection */

static int select_nodes(conv *c) {
  size_t n = c->n;
  c->sel = bigmem_calloc(n ? n : 1);
  c->gpu = bigmem_calloc(n ? n : 1);
  if (!c->sel || !c->gpu) return oom(c);
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
      if (p != NONE && !c->gpu[p]) c->sel[i] = 1;
      else c->rep->gpu_dropped++;
    }
  }
  if (c->rep->gpu_dropped && !c->compat)
    warnf(c, c->h->path, "%llu device ops have no host op as parent and are left out",
          (unsigned long long)c->rep->gpu_dropped);
  return 0;
}

/* --------------------------------------------------------- dependencies */

static int dep_push(conv *c, uint64_t id) {
  if (c->ndeps == c->capdeps) {
    size_t cap = c->capdeps ? c->capdeps * 2 : 1024;
    uint64_t *d = bigmem_realloc(c->deps, cap * sizeof *d);
    if (!d) return -1;
    c->deps = d;
    c->capdeps = cap;
  }
  c->deps[c->ndeps++] = id;
  return 0;
}

/* Adds id to node i's list unless present (the list is the tail of deps). */
static int dep_add(conv *c, uint32_t i, uint64_t id) {
  for (uint32_t k = 0; k < c->dep_cnt[i]; k++)
    if (c->deps[c->dep_start[i] + k] == id) return 0;
  if (dep_push(c, id)) return oom(c);
  c->dep_cnt[i]++;
  return 0;
}

static int is_thread_root(const conv *c, uint32_t i) { return (c->h->nodes[i].flags & HT_THREAD_ROOT) != 0; }

/* The reference's traversal: per thread root, depth-first in ascending id;
 * a host op depends on its inter_thread_dep and on the previous host op, a
 * device op on the op visited just before it. */
static int deps_compat(conv *c) {
  size_t n = c->n;
  uint32_t *stack = bigmem_alloc((n ? n : 1) * sizeof *stack);
  uint8_t *visited = bigmem_calloc(n ? n : 1);
  if (!stack || !visited) {
    bigmem_free(stack), bigmem_free(visited);
    return oom(c);
  }
  int rc = 0;
  /* roots in conversion order: non-device nodes in file order */
  for (size_t r = 0; r < n && !rc; r++) {
    if (!c->sel[r] || c->gpu[r] || !is_thread_root(c, (uint32_t)r)) continue;
    size_t sp = 0;
    stack[sp++] = (uint32_t)r;
    uint32_t last_cpu = NONE, last_any = NONE;
    while (sp && !rc) {
      uint32_t i = stack[--sp];
      if (visited[i]) continue;
      visited[i] = 1;
      const ht_node *x = &c->h->nodes[i];
      c->dep_start[i] = (uint32_t)c->ndeps;
      if (c->gpu[i]) {
        if (last_any != NONE) rc = dep_add(c, i, c->h->nodes[last_any].id);
        last_any = last_cpu;
      } else {
        if (x->flags & HT_ITD) rc = dep_add(c, i, (uint64_t)x->itd);
        if (!rc && last_cpu != NONE) rc = dep_add(c, i, c->h->nodes[last_cpu].id);
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
static int deps_default(conv *c) {
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
    return oom(c);
  }
  for (size_t i = 0; i < n; i++) prev[i] = NONE;
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
    return oom(c);
  }
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    sprev[i] = NONE;
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
      if (!rc && sprev[i] != NONE) {
        rc = dep_add(c, i, nodes[sprev[i]].id);
        c->rep->stream_deps++;
      }
      continue;
    }
    if (x->flags & HT_ITD) {
      uint32_t t = find_id(c, (uint64_t)x->itd);
      if (t != NONE && c->sel[t] && t != i) rc = dep_add(c, i, (uint64_t)x->itd);
      else c->rep->itd_skipped++;
    }
    if (!rc && prev[i] != NONE) rc = dep_add(c, i, nodes[prev[i]].id);
    if (!rc && x->side != UINT32_MAX && c->h->side[x->side].n_sync) {
      const ht_side *s = &c->h->side[x->side];
      for (uint32_t j = 0; j < s->n_sync && !rc; j++) {
        uint32_t t = find_id(c, s->sync[j]);
        /* a sync dep is kept when the device op started before this op, the
         * condition the reference meant to apply (its start times are 0) */
        if (t != NONE && c->sel[t] && c->gpu[t] && (nodes[t].flags & HT_TS) && (x->flags & HT_TS) &&
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
    warnf(c, c->h->path, "%llu inter_thread_dep ids name no converted node; ignored",
          (unsigned long long)c->rep->itd_skipped);
  if (!rc && c->rep->sync_skipped)
    warnf(c, c->h->path, "%llu sync_dep entries do not name a device op that started earlier; ignored",
          (unsigned long long)c->rep->sync_skipped);
  return rc;
}

/* ------------------------------------------------------ process groups */

static pgroup *pg_by_name(const conv *c, const char *name) {
  for (size_t j = 0; j < c->n_pgs; j++)
    if (strcmp(c->pgs[j].name, name) == 0) return &c->pgs[j];
  return NULL;
}

/* Applies one entry of a process-group list; 1 = stop reading (compat). */
static int apply_group(conv *c, uint32_t i, size_t k, const cg_pg_entry *e) {
  if (!e->name) return c->compat ? 0 : node_err(c, i, "process group #%zu has no pg_name", k);
  if (e->bad_rank) {
    if (c->compat) return 1;
    return node_err(c, i, "process group '%s' lists a rank that is not a non-negative integer", e->name);
  }
  pgroup *slot = pg_by_name(c, e->name);
  if (!slot) {
    pgroup *p = realloc(c->pgs, (c->n_pgs + 1) * sizeof *p);
    if (!p) return oom(c);
    c->pgs = p;
    slot = &c->pgs[c->n_pgs++];
    memset(slot, 0, sizeof *slot);
    if (!(slot->name = strdup(e->name))) return oom(c);
  } else {
    free(slot->ranks);
    slot->ranks = NULL;
    slot->n_ranks = 0;
  }
  if (e->has_backend_id) slot->backend_id = e->backend_id, slot->has_backend_id = 1;
  if (e->has_size) slot->size = e->size;
  if (e->n_ranks) {
    if (!(slot->ranks = malloc(e->n_ranks * sizeof *slot->ranks))) return oom(c);
    memcpy(slot->ranks, e->ranks, e->n_ranks * sizeof *slot->ranks);
    slot->n_ranks = e->n_ranks;
  }
  return 0;
}

static int parse_groups(conv *c) {
  for (size_t s = 0; s < c->h->n_side; s++) {
    const ht_side *sd = &c->h->side[s];
    if (!sd->pg_json) continue;
    uint32_t i = sd->node;
    char why[256] = "";
    cg_pg_list l;
    int rc = cg_pg_parse(sd->pg_json, &l, why, sizeof why);
    if (rc == CG_PG_ENOMEM) {
      cg_pg_free(&l);
      return oom(c);
    }
    if (rc == CG_PG_ENOTLIST) {
      cg_pg_free(&l);
      if (c->compat) continue; /* the reference does not look inside */
      return node_err(c, i, "the process-group list is not a JSON list%s%s", why[0] ? ": " : "", why);
    }
    for (size_t k = 0; k < l.n && !rc; k++) rc = apply_group(c, i, k, &l.v[k]);
    cg_pg_free(&l);
    if (rc == 1) return 0;
    if (rc) return rc;
  }
  c->rep->process_groups = c->n_pgs;
  return 0;
}

static const pgroup *pg_by_backend(const conv *c, int64_t id) {
  for (size_t j = 0; j < c->n_pgs; j++)
    if (c->pgs[j].has_backend_id && c->pgs[j].backend_id == id) return &c->pgs[j];
  return NULL;
}

static int write_groups(conv *c, const char *path) {
  outfile *f;
  int rc = outfile_open(&f, path, outfile_name_is_gzip(path), c->err);
  if (rc) return rc;
  ibuf b = {0};
  ibuf_putc(&b, '{');
  int first = 1;
  for (size_t j = 0; j < c->n_pgs; j++) {
    const pgroup *g = &c->pgs[j];
    /* "0" (and "") is the default group: ASTRA-sim takes it as all ranks
     * and group ids in this file must be > 0 */
    if (!g->name[0] || strcmp(g->name, "0") == 0) continue;
    char *end;
    errno = 0;
    long long num = strtoll(g->name, &end, 10);
    if (*end || errno || num <= 0)
      warnf(c, c->h->path, "process group '%s' is not a positive number: ASTRA-sim cannot read it from %s (chakra sim can)",
            g->name, path);
    if (!first) ibuf_put(&b, ", ", 2);
    first = 0;
    json_str(&b, (const unsigned char *)g->name, strlen(g->name));
    ibuf_put(&b, ": [", 3);
    size_t cnt = g->ranks ? g->n_ranks : (size_t)(g->size > 0 ? g->size : 0);
    for (size_t r = 0; r < cnt; r++) {
      if (r) ibuf_put(&b, ", ", 2);
      ibuf_i64(&b, g->ranks ? g->ranks[r] : (int64_t)r);
    }
    ibuf_putc(&b, ']');
  }
  ibuf_put(&b, "}\n", 2);
  if (b.oom) rc = oom(c);
  if (!rc) rc = outfile_write(f, b.p, b.n, c->err);
  ibuf_free(&b);
  if (rc) {
    outfile_discard(f);
    return rc;
  }
  return outfile_commit(f, c->err);
}

/* --------------------------------------------------------------- typing */

static int has(const char *s, const char *needle) { return strstr(s, needle) != NULL; }

/* CollectiveCommType from a kernel name, as the reference: lower case, '_'
 * and '-' removed, first known word; -1 if none. */
static int coll_from_name(const char *name) {
  size_t n = strlen(name);
  char *t = malloc(n + 1);
  if (!t) return -2;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    char ch = name[i];
    if (ch == '_' || ch == '-') continue;
    t[k++] = ch >= 'A' && ch <= 'Z' ? (char)(ch + 32) : ch;
  }
  t[k] = 0;
  int r = -1;
  static const struct { const char *w; int t; } words[] = {
      {"allreduce", CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_REDUCE},
      {"alltoall", CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_TO_ALL},
      {"allgather", CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_GATHER},
      {"reducescatter", CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__REDUCE_SCATTER},
      {"broadcast", CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__BROADCAST}};
  for (size_t w = 0; w < sizeof words / sizeof *words && r < 0; w++)
    if (strstr(t, words[w].w)) r = words[w].t;
  free(t);
  if (r < 0 && strstr(name, "ncclDevKernel_SendRecv")) r = CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_TO_ALL;
  return r;
}

/* "nccl:send 0->1" / "nccl:recv 1<-0": the peer after the arrow, or -1. */
static int64_t peer_from_name(const char *s) {
  const char *p = strstr(s, "nccl:send ");
  const char *arrow = "->";
  if (!p) {
    p = strstr(s, "nccl:recv ");
    arrow = "<-";
  }
  if (!p) return -1;
  const char *a = strstr(p, arrow);
  if (!a) return -1;
  char *end;
  long long v = strtoll(a + 2, &end, 10);
  return end == a + 2 || v < 0 ? -1 : v;
}

/* A send/recv's peer (global rank) and process group (default mode). */
static int resolve_p2p(conv *c, uint32_t g, int64_t *peer_out, uint32_t *pg_out) {
  const ht_node *nodes = c->h->nodes;
  uint32_t rpc = NONE;
  int64_t peer = -1;
  for (uint32_t a = c->parent[g], depth = 0; a != NONE && depth < 8; a = c->parent[a], depth++) {
    if (peer < 0) peer = peer_from_name(nname(c, a));
    if (rpc == NONE && (nodes[a].flags & HT_RPC) && nodes[a].side != UINT32_MAX &&
        c->h->side[nodes[a].side].coll_name)
      rpc = a;
    if (rpc != NONE && peer >= 0) break;
  }
  const ht_side *rs = rpc != NONE ? &c->h->side[nodes[rpc].side] : NULL;
  if (rs && rs->n_rpc_int >= 1 && rs->rpc_int[0] >= 0) peer = rs->rpc_int[0];
  if (peer < 0) return -1;
  /* the process group */
  const pgroup *pg = NULL;
  uint32_t pgname = nodes[g].pg_name;
  if (!pgname && rpc != NONE) pgname = nodes[rpc].pg_name;
  if (pgname) pg = pg_by_name(c, strtab_str(&c->h->strings, pgname));
  if (!pg && rs && rs->n_rpc_int >= 2) {
    pg = pg_by_backend(c, rs->rpc_int[1]);
    if (pg && !pgname) {
      uint32_t id = strtab_intern(&c->h->strings, pg->name, strlen(pg->name));
      if (id != STRTAB_OOM) pgname = id;
    }
  }
  int64_t global = peer;
  if (pg && pg->ranks) {
    if ((uint64_t)peer >= pg->n_ranks) return -2;
    global = pg->ranks[peer];
  } else if (rs && rs->has_grs) {
    global = rs->grs + peer * (rs->has_grstride ? rs->grstride : 1);
  }
  if (global > INT32_MAX) return -2;
  *peer_out = global;
  *pg_out = pgname;
  return 0;
}

/* pg_name of a collective: its own, else the enclosing record_param_comms'
 * (by attribute, or by the process-group id among its arguments). */
static uint32_t coll_pg(conv *c, uint32_t g) {
  const ht_node *nodes = c->h->nodes;
  if (nodes[g].pg_name) return nodes[g].pg_name;
  for (uint32_t a = c->parent[g], depth = 0; a != NONE && depth < 8; a = c->parent[a], depth++) {
    if (!(nodes[a].flags & HT_RPC)) continue;
    if (nodes[a].pg_name) return nodes[a].pg_name;
    if (nodes[a].side != UINT32_MAX) {
      const ht_side *s = &c->h->side[nodes[a].side];
      if (s->n_rpc_int >= 2) {
        const pgroup *pg = pg_by_backend(c, s->rpc_int[1]);
        if (pg) {
          uint32_t id = strtab_intern(&c->h->strings, pg->name, strlen(pg->name));
          return id == STRTAB_OOM ? 0 : id;
        }
      }
    }
    break;
  }
  return 0;
}

static int type_nodes(conv *c) {
  size_t n = c->n;
  const ht_node *nodes = c->h->nodes;
  c->type = bigmem_calloc(n ? n : 1);
  c->comm_type = bigmem_alloc(n ? n : 1);
  c->peer = bigmem_alloc((n ? n : 1) * sizeof *c->peer);
  c->tag = bigmem_alloc((n ? n : 1) * sizeof *c->tag);
  c->pg = bigmem_calloc((n ? n : 1) * sizeof *c->pg);
  if (!c->type || !c->comm_type || !c->peer || !c->tag || !c->pg) return oom(c);
  for (size_t i = 0; i < n; i++) {
    c->comm_type[i] = -1;
    c->peer[i] = -1;
    c->tag[i] = 0;
    if (!c->sel[i]) continue;
    const ht_node *x = &nodes[i];
    if (x->flags & HT_META) {
      c->type[i] = T_METADATA;
      continue;
    }
    c->type[i] = T_COMP;
    if (!c->gpu[i]) continue;
    const char *name = nname(c, (uint32_t)i);
    uint32_t p = c->parent[i];
    if (has(name, "ncclDevKernel_SendRecv")) {
      const char *keyword = nname(c, p);
      if (strcmp(keyword, "record_param_comms") == 0) {
        uint32_t gp = c->parent[p];
        if (gp == NONE) {
          if (c->compat)
            return node_err(c, (uint32_t)i, "its launcher record_param_comms has no parent in the trace "
                                            "(the reference converter fails here)");
          keyword = "";
        } else {
          keyword = nname(c, gp);
        }
        if (c->compat && nodes[p].pg_name) c->pg[i] = nodes[p].pg_name;
      }
      if (has(keyword, "send")) c->type[i] = T_SEND;
      else if (has(keyword, "recv")) c->type[i] = T_RECV;
      else c->type[i] = T_COLL; /* a SendRecv kernel is an NCCL kernel, nccl:all_to_all or not */
    } else if (has(name, "ncclKernel") || has(name, "ncclDevKernel")) {
      c->type[i] = T_COLL;
    }
    if (c->compat) {
      if (!c->pg[i]) c->pg[i] = x->pg_name;
    } else if (c->type[i] == T_COLL) {
      c->pg[i] = coll_pg(c, (uint32_t)i);
    }
    if (c->type[i] == T_COLL) {
      int t = coll_from_name(name);
      if (t == -2) return oom(c);
      if (t < 0) {
        if (c->compat || c->opt->unknown_coll != CHAKRA_UNKNOWN_COLL_COMP)
          return node_err(c, (uint32_t)i, "cannot tell which collective this NCCL kernel runs (no allreduce, "
                                          "alltoall, allgather, reducescatter or broadcast in its name)%s",
                          c->compat ? "" : "; option unknown_coll = comp converts such kernels to compute nodes");
        c->type[i] = T_COMP;
        c->rep->unknown_colls++;
        warnf(c, c->h->path, "node %llu '%.100s': unknown collective kernel converted to a compute node",
              (unsigned long long)x->id, name);
        continue;
      }
      c->comm_type[i] = (int8_t)t;
    } else if ((c->type[i] == T_SEND || c->type[i] == T_RECV) && !c->compat) {
      int64_t peer;
      uint32_t pg = 0;
      int r = resolve_p2p(c, (uint32_t)i, &peer, &pg);
      if (r) {
        if (c->opt->p2p_missing == CHAKRA_P2P_MISSING_DROP) {
          c->type[i] = T_COMP;
          c->rep->p2p_dropped++;
          continue;
        }
        return node_err(c, (uint32_t)i,
                        r == -2 ? "the peer rank of this %s lies outside its process group"
                                : "cannot tell the peer rank of this %s: no record_param_comms with a rank "
                                  "argument and no 'nccl:send a->b' name among its launcher's ancestors "
                                  "(option p2p_missing = drop converts it to a compute node)",
                        c->type[i] == T_SEND ? "send" : "receive");
      }
      c->peer[i] = (int32_t)peer;
      c->pg[i] = pg ? pg : x->pg_name;
    }
  }
  if (c->rep->p2p_dropped)
    warnf(c, c->h->path, "%llu send/recv kernels without a known peer converted to compute nodes",
          (unsigned long long)c->rep->p2p_dropped);
  if (c->compat) return 0;
  /* comm_tag: the index of the message among those of the same (group,
   * direction, peer), in program order on both sides */
  typedef struct tagkey { uint32_t pg; int send; int32_t peer; int32_t next; } tagkey;
  tagkey *keys = NULL;
  size_t nk = 0, ck = 0;
  for (size_t k = 0; k < n; k++) {
    uint32_t i = c->sidx[k];
    if (c->type[i] != T_SEND && c->type[i] != T_RECV) continue;
    int snd = c->type[i] == T_SEND;
    size_t j = 0;
    for (; j < nk; j++)
      if (keys[j].pg == c->pg[i] && keys[j].send == snd && keys[j].peer == c->peer[i]) break;
    if (j == nk) {
      if (nk == ck) {
        ck = ck ? ck * 2 : 16;
        tagkey *t = realloc(keys, ck * sizeof *t);
        if (!t) {
          free(keys);
          return oom(c);
        }
        keys = t;
      }
      keys[nk++] = (tagkey){c->pg[i], snd, c->peer[i], 0};
    }
    c->tag[i] = keys[j].next++;
  }
  free(keys);
  return 0;
}

/* ------------------------------------------------- dangling and cycles */

/* Each dependency's node index (NONE: not in the trace), laid out like
 * deps, so that the passes below look every id up once. */
static uint32_t *resolve_deps(const conv *c) {
  uint32_t *dix = bigmem_alloc((c->ndeps ? c->ndeps : 1) * sizeof *dix);
  if (!dix) return NULL;
  for (size_t k = 0; k < c->ndeps; k++) dix[k] = find_id(c, c->deps[k]);
  return dix;
}

/* out: the selected nodes with a dependency either way. */
static int prune(conv *c, const uint32_t *dix) {
  size_t n = c->n;
  uint8_t *dependent = bigmem_calloc(n ? n : 1);
  if (!dependent) return oom(c);
  for (size_t i = 0; i < n; i++) {
    if (!c->sel[i]) continue;
    for (uint32_t k = 0; k < c->dep_cnt[i]; k++) {
      uint32_t t = dix[c->dep_start[i] + k];
      if (t != NONE) dependent[t] = 1;
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
    warnf(c, c->h->path, "%llu nodes are under no thread root and nothing depends on them: left out",
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
  if (!off) return oom(c);
  for (size_t i = 0; i < n; i++) {
    off[i] = (uint32_t)m;
    if (!c->out[i]) continue;
    for (uint32_t k = 0; k < c->dep_cnt[i]; k++) {
      uint32_t t = dix[c->dep_start[i] + k];
      m += t != NONE && c->out[t];
    }
    uint32_t p = c->parent[i];
    m += !c->compat && p != NONE && c->out[p];
  }
  off[n] = (uint32_t)m;
  uint32_t *adj = bigmem_alloc((m ? m : 1) * sizeof *adj);
  if (!adj) {
    bigmem_free(off);
    return oom(c);
  }
  for (size_t i = 0, w = 0; i < n; i++) {
    if (!c->out[i]) continue;
    for (uint32_t k = 0; k < c->dep_cnt[i]; k++) {
      uint32_t t = dix[c->dep_start[i] + k];
      if (t != NONE && c->out[t]) adj[w++] = t;
    }
    uint32_t p = c->parent[i];
    if (!c->compat && p != NONE && c->out[p]) adj[w++] = p;
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
      if (t != NONE && c->out[t] && c->deps[c->dep_start[i] + k] >= me) return 0;
    }
    uint32_t p = c->parent[i];
    if (!c->compat && p != NONE && c->out[p] && c->h->nodes[p].id >= me) return 0;
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
  if (!indeg || !skip) rc = oom(c);
  for (size_t i = 0; i < n && !rc; i++) skip[i] = !c->out[i];
  g.skip = skip;
  if (!rc && topo_sort(&g, c->order, &done, indeg)) rc = oom(c);
  if (!rc) {
    size_t total = 0;
    for (size_t i = 0; i < n; i++) total += c->out[i];
    c->n_order = done;
    if (done != total) {
      uint32_t at = 0;
      while (!(c->out[at] && indeg[at])) at++;
      rc = node_err(c, topo_cycle_node(&g, indeg, at), "dependency cycle through this node");
    } else if (c->compat) {
      order_by_id(c);
    }
  }
  bigmem_free(indeg), bigmem_free(skip), bigmem_free(off), bigmem_free(adj);
  return rc;
}

static int prune_and_order(conv *c) {
  size_t n = c->n;
  c->out = bigmem_calloc(n ? n : 1);
  c->order = bigmem_alloc((n ? n : 1) * sizeof *c->order);
  uint32_t *dix = resolve_deps(c);
  int rc = c->out && c->order && dix ? prune(c, dix) : oom(c);
  if (!rc) rc = order_nodes(c, dix);
  bigmem_free(dix);
  return rc;
}

/* ---------------------------------------------------------------- write */

static int put_meta(conv *c, chakra_builder *b) {
  const hostet *h = c->h;
  chakra_builder_metadata(b, c->compat ? NULL : "1.0.0");
  chakra_builder_string(b, "schema", h->schema);
  if (h->has_pid) chakra_builder_uint64(b, "pid", (uint64_t)h->pid);
  if (h->has_time) chakra_builder_string(b, "time", h->time);
  if (h->has_start_ts) chakra_builder_uint64(b, "start_ts", (uint64_t)h->start_ts);
  if (h->has_finish_ts) chakra_builder_uint64(b, "finish_ts", (uint64_t)h->finish_ts);
  if (!c->compat) chakra_builder_string(b, "producer", "chakra-c " CHAKRA_VERSION " convert pytorch");
  return chakra_builder_put(b, c->err);
}

/* Phases are reported to opt->progress as they begin (done 0) and end
 * (done = total = 1); the CLI times them with it. A nonzero answer when a
 * phase begins cancels the conversion; once the output is written (the
 * "free" phase) it no longer can be. */
static int phase(const chakra_convert_options *opt, const char *name, uint64_t done, chakra_error *err) {
  if (!opt->progress || !opt->progress(opt->progress_ctx, name, done, 1) || done || strcmp(name, "free") == 0)
    return 0;
  return chakra_error_set(err, CHAKRA_ECANCELED, "conversion canceled before its %s phase", name);
}

/* duration_micros, shared by the node and its --log line so that they agree:
 * the reference truncates exclusive_dur and zeroes Optimizer.step. */
static uint64_t node_dur(const conv *c, uint32_t i) {
  const ht_node *x = &c->h->nodes[i];
  if (x->excl <= 0 || has(nname(c, i), "Optimizer.step")) return 0;
  return (uint64_t)x->excl;
}

typedef struct wcount {
  uint64_t ctrl, data, nodes, meta, coll, send, recv, comp;
} wcount;

/* Everything of node i but its inputs/outputs and attributes. */
static void node_head(conv *c, uint32_t i, chakra_builder *b, wcount *w) {
  const ht_node *x = &c->h->nodes[i];
  chakra_builder_node(b, x->id, nname(c, i), c->type[i]);
  uint32_t p = c->parent[i];
  if (p != NONE && c->sel[p]) {
    int write;
    if (c->compat) {
      /* only if the parent was converted earlier in the reference's pass:
       * non-device nodes in file order, each followed by its device ops */
      write = c->gpu[i] ? !c->gpu[p] : (!c->gpu[p] ? p < i : (c->parent[p] != NONE && c->parent[p] < i));
    } else {
      write = c->out[p];
    }
    if (write) {
      chakra_builder_ctrl_deps(b, &c->h->nodes[p].id, 1);
      w->ctrl++;
    }
  }
  chakra_builder_data_deps(b, c->deps + c->dep_start[i], c->dep_cnt[i]);
  w->data += c->dep_cnt[i];
  if (!c->compat && (x->flags & HT_TS) && x->ts >= 1) chakra_builder_start_time(b, (uint64_t)x->ts);
  chakra_builder_duration(b, node_dur(c, i));
  w->nodes++;
  switch (c->type[i]) {
    case T_METADATA: w->meta++; break;
    case T_COLL: w->coll++; break;
    case T_SEND: w->send++; break;
    case T_RECV: w->recv++; break;
    default: w->comp++; break;
  }
}

/* The inputs and outputs from the node's texts (hostet.h), borrowed. */
static void node_io(const ht_node *x, chakra_builder *b) {
  const char *t[HT_IO_N];
  const char *s = (const char *)x->blob;
  for (int k = 0; k < HT_IO_N; k++) {
    t[k] = s;
    s += strlen(s) + 1;
  }
  for (int w = 0; w < 2; w++) chakra_builder_io(b, w, t[3 * w], t[3 * w + 1], t[3 * w + 2]);
}

/* The attributes the parser kept for the output. */
static void extra_attrs(const ht_node *x, chakra_builder *b) {
  for (uint32_t k = 0; k < x->n_extra; k++) {
    const ht_extra *e = &x->extra[k];
    switch (e->kind) {
      case HT_X_INT64: chakra_builder_int64(b, e->name, e->v.i); break;
      case HT_X_UINT64: chakra_builder_uint64(b, e->name, e->v.u); break;
      case HT_X_DOUBLE: chakra_builder_double(b, e->name, e->v.d); break;
      case HT_X_BOOL: chakra_builder_bool(b, e->name, e->v.b); break;
      default: chakra_builder_string(b, e->name, e->v.s); break;
    }
  }
}

/* The standard attributes, then (except --compat) the extra ones. */
static void node_attrs(conv *c, uint32_t i, chakra_builder *b) {
  const ht_node *x = &c->h->nodes[i];
  for (int k = 0; k < HT_NATTR; k++)
    if (c->compat || (x->flags & (HT_ATTR0 << k))) chakra_builder_int64(b, ht_attr_names[k], x->a[k]);
  if (c->compat || (x->flags & HT_SCHEMA))
    chakra_builder_string(b, "op_schema", strtab_str(&c->h->strings, x->op_schema));
  chakra_builder_bool(b, "is_cpu_op", !(x->flags & HT_GPU));
  if (c->compat || c->gpu[i]) chakra_builder_int64(b, "stream", x->stream);
  int t = c->type[i];
  const char *pgn = strtab_str(&c->h->strings, c->pg[i]);
  int has_pg = strtab_len(&c->h->strings, c->pg[i]) != 0;
  if (t == T_COLL) {
    chakra_builder_int64(b, "comm_type", c->comm_type[i]);
    chakra_builder_int64(b, "comm_size", (int64_t)x->comm_bytes);
    if (has_pg) chakra_builder_string(b, "pg_name", pgn);
  } else if (t == T_SEND || t == T_RECV) {
    if (!c->compat) chakra_builder_int32(b, t == T_SEND ? "comm_dst" : "comm_src", c->peer[i]);
    chakra_builder_int64(b, "comm_size", (int64_t)x->comm_bytes);
    if (!c->compat) chakra_builder_int32(b, "comm_tag", c->tag[i]);
    if (has_pg) chakra_builder_string(b, "pg_name", pgn);
  }
  if (!c->compat && (x->flags & HT_EXCL) && x->excl >= 0)
    chakra_builder_uint64(b, "duration_ns", (uint64_t)llround(x->excl * 1000.0));
  if (!c->compat) extra_attrs(x, b);
}

/* Node i, packed at the end of b's buffer. */
static int put_node(conv *c, uint32_t i, chakra_builder *b, wcount *w, chakra_error *err) {
  node_head(c, i, b, w);
  node_io(&c->h->nodes[i], b);
  node_attrs(c, i, b);
  return chakra_builder_put(b, err);
}

static void add_counts(chakra_convert_report *r, const wcount *w) {
  r->ctrl_deps += w->ctrl, r->data_deps += w->data, r->nodes_out += w->nodes;
  r->metadata += w->meta, r->coll += w->coll, r->send += w->send, r->recv += w->recv, r->comp += w->comp;
}

static void log_line(conv *c, ibuf *lb, uint32_t i) {
  static const char *const tn[] = {"INVALID", "METADATA", "MEM_LOAD", "MEM_STORE", "COMP", "SEND", "RECV", "COLL"};
  const ht_node *x = &c->h->nodes[i];
  ibuf_puts(lb, "node ");
  ibuf_u64(lb, x->id);
  ibuf_putc(lb, ' ');
  ibuf_puts(lb, tn[c->type[i] & 7]);
  ibuf_putc(lb, ' ');
  const char *nm = nname(c, i);
  json_str(lb, (const unsigned char *)nm, strlen(nm));
  ibuf_puts(lb, " data_deps [");
  for (uint32_t d = 0; d < c->dep_cnt[i]; d++) {
    if (d) ibuf_putc(lb, ' ');
    ibuf_u64(lb, c->deps[c->dep_start[i] + d]);
  }
  ibuf_puts(lb, "] duration_micros ");
  ibuf_u64(lb, node_dur(c, i));
  ibuf_putc(lb, '\n');
}

/* Packing is most of the cost of writing (protobuf-c visits every field
 * of the descriptor), so the nodes are packed in rounds: each of several
 * jobs packs a run of consecutive nodes into its own builder, while one
 * more job hands the builders of the round before to the writer, in
 * order. Each part has two builders, used in alternate rounds. */
#define WRITE_RUN 1024    /* nodes per job and round */
#define WRITE_THREADS 8

typedef struct wpart {
  const uint32_t *idx; /* node indexes, in output order */
  size_t n;
  chakra_builder *b[2];
  wcount w;
  chakra_error err;
} wpart;

typedef struct wround {
  conv *c;
  wpart *parts;
  int np;                    /* packing jobs this round */
  int set;                   /* the builders they fill */
  int prev_np;               /* parts of the round before, still to write */
  chakra_workload_writer *w;
  chakra_error werr;
} wround;

/* Writes the previous round's builders in part order. */
static int write_prev(wround *r) {
  int rc = 0;
  for (int t = 0; t < r->prev_np && !rc; t++)
    rc = chakra_workload_writer_put_built(r->w, 0, r->parts[t].b[r->set ^ 1], &r->werr);
  return rc;
}

static int round_job(void *ctx, size_t job) {
  wround *r = ctx;
  if ((int)job == r->np) return write_prev(r);
  wpart *p = &r->parts[job];
  chakra_builder *b = p->b[r->set];
  chakra_builder_clear(b);
  int rc = 0;
  for (size_t k = 0; k < p->n && !rc; k++) rc = put_node(r->c, p->idx[k], b, &p->w, &p->err);
  return rc;
}

/* Packs nodes idx[0..n) into builders `set` of parts[0..np) while the
 * writer takes the round before; the first error goes to c->err. */
static int run_round(conv *c, wround *r, const uint32_t *idx, size_t n) {
  for (int t = 0; t < r->np; t++) {
    size_t lo = n * (size_t)t / (size_t)r->np, hi = n * (size_t)(t + 1) / (size_t)r->np;
    r->parts[t].idx = idx + lo;
    r->parts[t].n = hi - lo;
    r->parts[t].err.code = 0;
  }
  r->werr.code = 0;
  size_t jobs = (size_t)r->np + (r->prev_np > 0);
  int rc = tasks_run(jobs, (unsigned)jobs, round_job, r, 0);
  if (!rc) return 0;
  for (int t = 0; t < r->np; t++)
    if (r->parts[t].err.code) {
      *c->err = r->parts[t].err;
      return rc;
    }
  *c->err = r->werr;
  return rc;
}

/* Packs the nodes in output order and hands them to w (see wpart). */
static int write_nodes(conv *c, chakra_workload_writer *w, wpart *parts, int threads, outfile *logf) {
  ibuf lb = {0};
  int rc = 0;
  size_t round = (size_t)threads * WRITE_RUN;
  wround r = {.c = c, .parts = parts, .w = w};
  for (size_t k = 0; k < c->n_order && !rc; k += round) {
    size_t n = c->n_order - k < round ? c->n_order - k : round;
    r.np = (int)((n + WRITE_RUN - 1) / WRITE_RUN);
    rc = run_round(c, &r, c->order + k, n);
    r.prev_np = r.np;
    r.set ^= 1;
    for (size_t j = k; j < k + n && logf && !rc; j++) {
      lb.n = 0;
      log_line(c, &lb, c->order[j]);
      rc = lb.oom ? oom(c) : outfile_write(logf, lb.p, lb.n, c->err);
    }
  }
  if (!rc && write_prev(&r)) *c->err = r.werr, rc = r.werr.code ? r.werr.code : CHAKRA_EIO;
  ibuf_free(&lb);
  return rc;
}

/* The output (atomic, gzip) and the --log file. */
static int open_outputs(conv *c, const char *out_path, chakra_workload_writer **w, outfile **logf) {
  *logf = NULL;
  int rc = chakra_workload_writer_open_paths(w, &out_path, 1, NULL, c->err);
  if (rc || !c->opt->log_path) return rc;
  rc = outfile_open(logf, c->opt->log_path, outfile_name_is_gzip(c->opt->log_path), c->err);
  if (rc) chakra_workload_writer_discard(*w);
  return rc;
}

/* Renames both into place after success (rc 0), else removes them. */
static int close_outputs(chakra_workload_writer *w, outfile *logf, int rc, chakra_error *err) {
  if (rc) {
    chakra_workload_writer_discard(w);
    if (logf) outfile_discard(logf);
    return rc;
  }
  rc = chakra_workload_writer_commit(w, err);
  if (logf) {
    if (rc) outfile_discard(logf);
    else rc = outfile_commit(logf, err);
  }
  return rc;
}

/* Metadata, then the nodes in order. */
static int write_et(conv *c, const char *out_path) {
  int threads = c->opt->threads > 0 ? c->opt->threads : (int)tasks_cpus();
  chakra_workload_writer *w;
  outfile *logf;
  int rc = open_outputs(c, out_path, &w, &logf);
  if (rc) return rc;
  int np = threads < WRITE_THREADS ? threads : WRITE_THREADS;
  wpart *parts = calloc((size_t)np, sizeof *parts);
  for (int t = 0; t < np && parts && !rc; t++)
    if (chakra_builder_new(&parts[t].b[0]) || chakra_builder_new(&parts[t].b[1])) rc = oom(c);
  if (!parts) rc = oom(c);
  if (!rc) rc = put_meta(c, parts[0].b[0]);
  if (!rc) rc = chakra_workload_writer_put_built(w, 0, parts[0].b[0], c->err);
  if (!rc) rc = write_nodes(c, w, parts, np, logf);
  rc = close_outputs(w, logf, rc, c->err);
  for (int t = 0; t < np && parts; t++) {
    add_counts(c->rep, &parts[t].w);
    chakra_builder_free(parts[t].b[0]);
    chakra_builder_free(parts[t].b[1]);
  }
  free(parts);
  return rc;
}

/* --------------------------------------------------------------- checks */

/* --compat refuses what the reference would crash on, with an error. */
static int compat_checks(conv *c) {
  const hostet *h = c->h;
  const char *miss = !h->has_pid ? "pid" : !h->has_time ? "time" : !h->has_start_ts ? "start_ts"
                     : !h->has_finish_ts ? "finish_ts" : NULL;
  if (miss)
    return chakra_error_set(c->err, CHAKRA_EFORMAT,
                            "%s: no top-level '%s' (the reference converter requires schema, pid, time, "
                            "start_ts and finish_ts)", h->path, miss);
  if (h->pid < 0 || h->start_ts < 0 || h->finish_ts < 0)
    return chakra_error_set(c->err, CHAKRA_EFORMAT, "%s: pid, start_ts and finish_ts must not be negative", h->path);
  for (size_t i = 0; i < c->n; i++) {
    if (!c->sel[i]) continue;
    const ht_node *x = &h->nodes[i];
    for (int k = 0; k < HT_NATTR; k++)
      if (!(x->flags & (HT_ATTR0 << k)))
        return node_err(c, (uint32_t)i, "no attribute '%s' (the reference converter requires rf_id, fw_parent, "
                                        "seq_id, scope, tid, fw_tid and op_schema)", ht_attr_names[k]);
    if (!(x->flags & HT_SCHEMA)) return node_err(c, (uint32_t)i, "no attribute 'op_schema'");
    if (x->excl < 0) return node_err(c, (uint32_t)i, "negative exclusive_dur");
  }
  return 0;
}

static void conv_free(conv *c) {
  bigmem_free(c->sid), bigmem_free(c->sidx), bigmem_free(c->direct), bigmem_free(c->parent), bigmem_free(c->child_off);
  bigmem_free(c->children), bigmem_free(c->sel), bigmem_free(c->out), bigmem_free(c->gpu), bigmem_free(c->type);
  bigmem_free(c->comm_type), bigmem_free(c->peer), bigmem_free(c->tag), bigmem_free(c->pg), bigmem_free(c->dep_start);
  bigmem_free(c->dep_cnt), bigmem_free(c->deps), bigmem_free(c->order);
  for (size_t j = 0; j < c->n_pgs; j++) free(c->pgs[j].name), free(c->pgs[j].ranks);
  free(c->pgs);
}

static int convert_loaded(conv *c, const char *out_path) {
  int rc = phase(c->opt, "index", 0, c->err);
  if (!rc) rc = build_index(c);
  if (!rc) rc = build_tree(c);
  if (!rc) rc = select_nodes(c);
  if (!rc && c->compat) rc = compat_checks(c);
  if (!rc) rc = parse_groups(c);
  if (!rc) {
    c->dep_start = bigmem_calloc((c->n ? c->n : 1) * sizeof *c->dep_start);
    c->dep_cnt = bigmem_calloc((c->n ? c->n : 1) * sizeof *c->dep_cnt);
    if (!c->dep_start || !c->dep_cnt) rc = oom(c);
  }
  if (!rc) rc = phase(c->opt, "index", 1, c->err);
  if (!rc) rc = phase(c->opt, "deps", 0, c->err);
  if (!rc) rc = type_nodes(c);
  if (!rc) rc = c->compat ? deps_compat(c) : deps_default(c);
  if (!rc) rc = prune_and_order(c);
  if (!rc) rc = phase(c->opt, "deps", 1, c->err);
  if (!rc) rc = phase(c->opt, "write", 0, c->err);
  if (!rc) rc = write_et(c, out_path);
  if (!rc && c->opt->comm_groups_path) rc = write_groups(c, c->opt->comm_groups_path);
  if (!rc) rc = phase(c->opt, "write", 1, c->err);
  return rc;
}

int chakra_convert_pytorch(const char *in_path, const char *kineto_path, const char *out_path,
                           const chakra_convert_options *opt, chakra_convert_report *rep, chakra_error *err) {
  chakra_convert_options defaults = {0};
  chakra_convert_report local;
  chakra_error err_local; /* the readers and writers below copy messages through err */
  if (!err) err = &err_local;
  if (!opt) opt = &defaults;
  if (!rep) rep = &local;
  memset(rep, 0, sizeof *rep);
  outfile *linked = NULL;
  if (kineto_path) {
    /* link into a scratch file beside the output, then convert it: read
     * back at once, never one of the program's outputs, removed on every
     * way out (an interrupt included) */
    chakra_link_options lo = {.rank = -1, .threads = opt->threads, .diag = opt->diag, .diag_ctx = opt->diag_ctx};
    int rc = outfile_scratch(&linked, out_path, err);
    if (!rc) rc = phase(opt, "link", 0, err);
    outset_scratch_begin();
    if (!rc) rc = chakra_link(in_path, kineto_path, outfile_path(linked), &lo, NULL, err);
    outset_scratch_end();
    if (!rc) rc = phase(opt, "link", 1, err);
    if (rc) {
      outfile_discard(linked);
      return rc;
    }
    in_path = outfile_path(linked);
  }
  hostet_options ho = {.mode = HT_MODE_CONVERT,
                       .versions = opt->compat ? HT_VERSIONS_REFERENCE : HT_VERSIONS_NEWER_OK,
                       .threads = opt->threads,
                       .diag = opt->diag,
                       .diag_ctx = opt->diag_ctx};
  hostet *h = NULL;
  int rc = phase(opt, "parse", 0, err);
  if (!rc) rc = hostet_read(&h, in_path, &ho, err);
  if (!rc) rc = phase(opt, "parse", 1, err);
  if (!rc) {
    conv c = {.opt = opt, .rep = rep, .err = err, .h = h, .n = h->n, .compat = opt->compat};
    rep->nodes_in = h->n;
    rc = convert_loaded(&c, out_path);
    rep->node_table_bytes = hostet_memory(h);
    if (!rc) phase(opt, "free", 0, err);
    conv_free(&c);
  }
  hostet_free(h);
  if (!rc) phase(opt, "free", 1, err);
  outfile_discard(linked);
  return rc;
}
