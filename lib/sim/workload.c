/* workload.c - per-NPU DAG execution; see workload.h. */
#include "workload.h"

#include "chakra/build.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../trace/nodekind.h"
#include "../util/cmp.h"
#include "../util/bigmem.h"
#include "../util/tasks.h"
#include "../util/toposort.h"
#include "chakra/graph.h"
#include "chakra/set.h"
#include "net.h"
#include "coll.h"
#include "groups.h"
#include "remmem.h"
#include "../util/vec.h"

/* A node's kind as loaded; WK_COMP (GPU compute) becomes WK_ROOFLINE or
 * WK_DELAY by the configuration, and replay-only makes every node WK_DELAY
 * (wl_kind()). */
enum { WK_DELAY, WK_ROOFLINE, WK_COLL, WK_SEND, WK_RECV, WK_MEM, WK_NOOP, WK_COMP };
enum { WF_ROOFLINE_ATTRS = 1, WF_TENSOR_SIZE = 2, WF_STORE = 4 };
enum { SLOT_CPU = CHAKRA_SLOT_CPU, SLOT_GPU = CHAKRA_SLOT_GPU, SLOT_COMM = CHAKRA_SLOT_COMM, SLOT_NONE = CHAKRA_SLOT_NONE, SLOT_N };

typedef struct wl_node { /* 32 bytes: a 100k-node rank is 3 MiB of these */
  uint64_t id;
  uint64_t value;       /* DELAY: ns; COLL/SEND/RECV/MEM: bytes; COMP: tensor_size */
  union {
    uint64_t num_ops;                          /* ROOFLINE */
    struct { int32_t peer, tag; } p2p;         /* SEND, RECV */
    struct { uint32_t involved_dim, pg; } cl;  /* COLL; pg indexes the rank's pg_names (0 = all) */
  } u;
  uint32_t replay_us;   /* duration_micros (wl_replay_ns()) */
  unsigned kind : 3, slot : 2, cat : 3, coll : 2, n_involved : 4, flags : 3;
} wl_node;

/* One rank's trace as loaded: read-only while runs use it. */
typedef struct wl_rank {
  uint32_t n;
  wl_node *nodes;                          /* owns the block of all four (rank_arrays) */
  uint32_t *child_off, *children;
  uint64_t *replay_wide;                   /* replay ns per node, when a duration needs 64 bits; else NULL */
  char **pg_names;
  uint32_t n_pg;
  char *path;
  char **groups;                           /* METADATA process-group lists (JSON) */
  size_t n_groups;
  int comm_rc;                             /* a communication node could not be read: an error */
  chakra_error comm_err;                   /* for runs that are not replay-only */
} wl_rank;

struct chakra_sim_workload {
  uint32_t npus;
  wl_rank *rank;
  sim_groups groups;                       /* the trace set's communicator groups */
};

typedef idheap heap;

/* One NPU's state in one run. */
typedef struct wl_npu {
  uint32_t rank, n;
  const wl_node *nodes;                    /* the rank's, shared */
  const uint32_t *child_off, *children;
  const uint64_t *replay_wide;             /* the rank's, or NULL */
  uint32_t *indeg;                         /* owns the block of indeg, start, end */
  uint64_t *start, *end;
  heap ready[SLOT_N];
  int busy[SLOT_N];
  uint32_t in_flight, done;
  uint64_t gpu_time;
  int finished;
  uint64_t finish;
  uint64_t coll_ops[SIM_NCOLL], coll_bytes[SIM_NCOLL], coll_ns[SIM_NCOLL];
  uint64_t send_ops, send_bytes;
  int trace;                    /* record issues and completions */
  uint64_t rl_time, rl_bound;   /* compute node ns; of which compute bound */
  double rl_comp, rl_mem, rl_oi; /* sums of ns x compute, memory utilisation, intensity */
} wl_npu;

typedef struct wl {
  wl_npu *npu;
  wl_trace_ev *trace;
  size_t n_trace, cap_trace;
} wl;

/* The kind a node runs as under this run's configuration. */
static inline int wl_kind(const sim *s, const wl_node *n) {
  if (s->sys_cfg.replay_only) return WK_DELAY;
  if (n->kind == WK_COMP) return s->sys_cfg.roofline ? WK_ROOFLINE : WK_DELAY;
  return n->kind;
}

/* ---- ready heaps, ordered by node id ---- */

/* What node i of w takes when replayed: duration_micros x 1000, 0 -> 1. */
static inline uint64_t wl_replay_ns(const sim *s, const wl_npu *w, uint32_t i) {
  (void)s;
  if (w->replay_wide) return w->replay_wide[i];
  uint32_t us = w->nodes[i].replay_us;
  return us ? (uint64_t)us * 1000 : 1;
}

static int heap_push(heap *h, uint32_t v, const wl_node *nodes) { return idheap_push(h, v, &nodes[0].id, sizeof *nodes); }
static uint32_t heap_pop(heap *h, const wl_node *nodes) { return idheap_pop(h, &nodes[0].id, sizeof *nodes); }

/* ---- loading ---- */

/* One rank's load. Ranks load on several threads, so nothing here touches
 * the shared sim: warnings and process groups from METADATA nodes are kept
 * and applied in rank order afterwards, which keeps every message and
 * error exactly as a one-thread load gives them. */
typedef struct load_ctx {
  uint32_t npus;
  uint32_t rank;
  char *path;
  int rc;
  chakra_error err;
  char **warns, **groups; /* warnings; group lists (JSON) from METADATA nodes */
  size_t n_warns, n_groups;
  int oom;                /* a warning or group list could not be kept */
  int comm_rc;            /* the first communication node that cannot run, kept for */
  chakra_error comm_err;  /* runs that are not replay-only */
} load_ctx;

static void keep_string(load_ctx *L, char ***v, size_t *n, char *str) {
  char **p = str ? VEC_APPEND(*v, *n) : NULL;
  if (!p) {
    free(str);
    L->oom = 1;
    return;
  }
  *p = str;
}

static void load_warn(void *ctx, const char *msg) {
  load_ctx *L = ctx;
  keep_string(L, &L->warns, &L->n_warns, strdup(msg));
}

/* The graph loader's warnings, kept as lines like the others. */
static void load_diag(void *ctx, const chakra_problem *p) {
  char msg[1024];
  chakra_problem_format(p, msg, sizeof msg);
  load_warn(ctx, msg);
}

static int node_error(load_ctx *L, const chakra_gnode *g, const char *what) {
  return chakra_error_set(&L->err, CHAKRA_EINVAL, "%s: rank %u: node %llu: %s", L->path, L->rank,
                          (unsigned long long)g->id, what);
}

/* The node's first error in the vocabulary's words (chakra/node.h). */
static int node_problem(load_ctx *L, const chakra_gnode *g, uint32_t problems) {
  char msg[160];
  return node_error(L, g, chakra_node_problem_text(g, L->rank, L->npus, chakra_node_first_problem(problems & CHAKRA_NP_ERRORS), msg, sizeof msg));
}

/* Communication as the simulator runs it: four collectives natively,
 * BROADCAST replayed with its recorded duration, anything else refused. */
static int convert_comm(load_ctx *L, const chakra_gnode *g, const chakra_node_class *c, wl_node *n) {
  if (c->problems & CHAKRA_NP_ERRORS) return node_problem(L, g, c->problems);
  if (c->kind == CHAKRA_KIND_COLL) {
    if (c->comm_type == CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__BROADCAST) {
      n->kind = WK_DELAY;
      n->value = g->duration_micros ? g->duration_micros * 1000 : 1;
      return 0;
    }
    if (c->coll < 0) {
      char msg[160];
      snprintf(msg, sizeof msg, "unsupported collective comm type %s", chakra_comm_type_name(c->comm_type));
      return node_error(L, g, msg);
    }
    n->kind = WK_COLL;
    n->coll = (uint8_t)c->coll;
    n->value = g->size;
    n->u.cl.involved_dim = g->involved_dim;
    n->u.cl.pg = g->pg;
    n->n_involved = g->n_involved_dim < 15 ? g->n_involved_dim : 15; /* > any dimension count */
    return 0;
  }
  if (c->problems & CHAKRA_NP_NO_COMM_TAG) {
    char line[512];
    snprintf(line, sizeof line, "%s: node %llu: no comm_tag; using 0", L->path, (unsigned long long)g->id);
    load_warn(L, line);
  }
  n->kind = c->kind == CHAKRA_KIND_SEND ? WK_SEND : WK_RECV;
  n->u.p2p.peer = c->peer;
  n->u.p2p.tag = g->comm_tag;
  n->value = g->size;
  return 0;
}

/* Everything about a node that does not depend on the configuration;
 * what does is settled per run (wl_kind(), wl_check_rank()). */
static int read_metadata_groups(load_ctx *L, const chakra_graph *gr, uint32_t i);

static int convert_node(load_ctx *L, const chakra_graph *gr, uint32_t i, wl_node *n) {
  const chakra_gnode *g = &gr->nodes[i];
  const char *too_long = nodekind_duration_problem(g);
  if (too_long) return node_error(L, g, too_long);
  chakra_node_class c;
  nodekind_classify(g, L->rank, L->npus, &c); /* inline: millions of nodes */
  memset(n, 0, sizeof *n);
  n->id = g->id;
  n->slot = c.slot;
  n->cat = c.category;
  n->replay_us = g->duration_micros < UINT32_MAX ? (uint32_t)g->duration_micros : UINT32_MAX;
  if (g->present & CHAKRA_HAS_TENSOR_SIZE) n->flags |= WF_TENSOR_SIZE;
  switch (c.kind) {
    case CHAKRA_KIND_COMPUTE:
    case CHAKRA_KIND_CPU: {
      int cpu = c.kind == CHAKRA_KIND_CPU;
      n->kind = cpu ? WK_DELAY : WK_COMP;
      n->value = cpu ? (g->duration_micros ? g->duration_micros * 1000 : 1) : g->size;
      n->u.num_ops = g->num_ops;
      if (c.roofline) n->flags |= WF_ROOFLINE_ATTRS;
      return 0;
    }
    case CHAKRA_KIND_COLL:
    case CHAKRA_KIND_SEND:
    case CHAKRA_KIND_RECV:
      if (convert_comm(L, g, &c, n)) { /* an error only for runs that do not replay */
        if (!L->comm_rc) L->comm_rc = CHAKRA_EINVAL, L->comm_err = L->err;
        n->kind = WK_NOOP;
      }
      return 0;
    case CHAKRA_KIND_MEM_LOAD:
    case CHAKRA_KIND_MEM_STORE:
      n->kind = WK_MEM;
      n->value = g->size;
      if (c.kind == CHAKRA_KIND_MEM_STORE) n->flags |= WF_STORE;
      return 0;
    case CHAKRA_KIND_METADATA:
      n->kind = WK_NOOP;
      return read_metadata_groups(L, gr, i);
    case CHAKRA_KIND_NOOP:
      n->kind = WK_NOOP;
      return 0;
    default:
      return node_problem(L, g, c.problems);
  }
}

/* A rank's per-node arrays share one block: one huge-page mapping instead
 * of three, so a 100k-node rank faults a few times, not 1,000 (bigmem.h). */
static int rank_arrays(wl_rank *w, size_t n, size_t n_children) {
  size_t sz[] = {n * sizeof *w->nodes, (n + 1) * sizeof *w->child_off, (n_children ? n_children : 1) * sizeof *w->children};
  size_t off[3], total = 0;
  for (int k = 0; k < 3; k++) {
    off[k] = total;
    total += (sz[k] + 15) & ~(size_t)15;
  }
  char *b = bigmem_alloc(total);
  if (!b) return -1;
  w->nodes = (wl_node *)b;
  w->child_off = (uint32_t *)(b + off[1]);
  w->children = (uint32_t *)(b + off[2]);
  return 0;
}

static int load_rank(load_ctx *L, const chakra_set *set, wl_rank *w) {
  const char *path = L->path;
  chakra_graph_options opt = {.diag = load_diag, .diag_ctx = L};
  chakra_graph *g;
  int rc = chakra_set_load_rank(set, L->rank, &opt, &g, &L->err);
  if (rc) return rc;
  w->n = (uint32_t)g->n;
  size_t n = g->n ? g->n : 1;
  if (rank_arrays(w, n, g->child_off[g->n])) rc = chakra_error_set(&L->err, CHAKRA_ENOMEM, "%s: out of memory", path);
  for (uint32_t i = 0; i < g->n && !rc; i++) {
    rc = convert_node(L, g, i, &w->nodes[i]);
  }
  for (uint32_t i = 0; i < g->n && !rc && !w->replay_wide; i++) /* a duration of 2^32 us or more: keep them all */
    if (g->nodes[i].duration_micros >= UINT32_MAX) {
      if (!(w->replay_wide = malloc(n * sizeof *w->replay_wide))) rc = chakra_error_set(&L->err, CHAKRA_ENOMEM, "out of memory");
      for (uint32_t k = 0; !rc && k < g->n; k++)
        w->replay_wide[k] = g->nodes[k].duration_micros ? g->nodes[k].duration_micros * 1000 : 1;
    }
  if (!rc) {
    memcpy(w->child_off, g->child_off, (g->n + 1) * sizeof *w->child_off);
    memcpy(w->children, g->children, g->child_off[g->n] * sizeof *w->children);
    /* Keep the group names; the graph goes away. */
    w->n_pg = (uint32_t)g->n_pg_names;
    w->pg_names = calloc(g->n_pg_names + 1, sizeof *w->pg_names);
    for (size_t k = 1; w->pg_names && k < g->n_pg_names; k++) w->pg_names[k] = strdup(g->pg_names[k]);
    if (!w->pg_names) rc = chakra_error_set(&L->err, CHAKRA_ENOMEM, "out of memory");
  }
  chakra_graph_free(g);
  if (!rc && L->oom) rc = chakra_error_set(&L->err, CHAKRA_ENOMEM, "out of memory");
  return rc;
}

/* PyTorch METADATA nodes carry process groups, kept as text for
 * util/commgroups when a run applies them. */
static int read_metadata_groups(load_ctx *L, const chakra_graph *g, uint32_t i) {
  chakra_node *full;
  chakra_error e;
  if (chakra_graph_read_node(g, i, &full, &e)) return chakra_error_set(&L->err, e.code, "%s", e.msg);
  const char *v = chakra_node_process_groups(full);
  if (v) keep_string(L, &L->groups, &L->n_groups, strdup(v));
  chakra_node_free(full);
  return 0;
}

static void warn_line(chakra_diag_fn diag, void *ctx, const char *msg) {
  if (!diag) return;
  chakra_problem p = chakra_problem_make(CHAKRA_SEV_WARNING, msg);
  diag(ctx, &p);
}

/* What a one-thread load would have done after rank r's file: its
 * warnings, then its result. The rank keeps its path and group lists. */
static int finish_rank(load_ctx *L, wl_rank *w, chakra_diag_fn diag, void *ctx, chakra_error *err) {
  for (size_t k = 0; k < L->n_warns; k++) warn_line(diag, ctx, L->warns[k]);
  if (L->rc) {
    if (err) *err = L->err;
    return L->rc;
  }
  w->path = L->path, L->path = NULL;
  w->groups = L->groups, L->groups = NULL;
  w->n_groups = L->n_groups, L->n_groups = 0;
  w->comm_rc = L->comm_rc;
  w->comm_err = L->comm_err;
  return 0;
}

typedef struct load_pool {
  chakra_sim_workload *w;
  const chakra_set *set;
  load_ctx *ctx;
} load_pool;

static int load_job(void *arg, size_t r) {
  load_pool *p = arg;
  load_ctx *L = &p->ctx[r];
  L->rc = load_rank(L, p->set, &p->w->rank[r]);
  return L->rc;
}

static void free_ctx(load_ctx *L) {
  for (size_t k = 0; k < L->n_warns; k++) free(L->warns[k]);
  for (size_t k = 0; k < L->n_groups; k++) free(L->groups[k]);
  free(L->warns);
  free(L->groups);
  free(L->path);
}

/* Ranks are independent: on T threads the decoding, the largest part of a
 * load, takes about 1/T of the time. */
static uint32_t load_threads(uint32_t asked, uint32_t npus) {
  uint32_t t = asked ? asked : tasks_cpus();
  if (t > 64) t = 64;
  return t < npus ? t : npus;
}

static int load_all(chakra_sim_workload *w, const chakra_set *set, uint32_t threads, chakra_diag_fn diag, void *ctx,
                    chakra_error *err) {
  load_pool p = {.w = w, .set = set, .ctx = calloc(w->npus, sizeof(load_ctx))};
  if (!p.ctx) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  int rc = 0;
  for (uint32_t r = 0; r < w->npus && !rc; r++) {
    p.ctx[r] = (load_ctx){.npus = w->npus, .rank = r, .path = strdup(chakra_set_rank_name(set, r))};
    if (!p.ctx[r].path) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  /* a failed rank stops the ranks after it; the first failure is reported */
  if (!rc) tasks_run(w->npus, load_threads(threads, w->npus), load_job, &p, TASKS_STOP_ON_ERROR);
  for (uint32_t r = 0; r < w->npus && !rc; r++) rc = finish_rank(&p.ctx[r], &w->rank[r], diag, ctx, err);
  for (uint32_t r = 0; r < w->npus; r++) free_ctx(&p.ctx[r]);
  free(p.ctx);
  return rc;
}

/* The set's communicator groups, applied by every run before the METADATA
 * nodes' (after the configuration's). */
static int keep_set_groups(chakra_sim_workload *w, const chakra_set *set, chakra_error *err) {
  if (chakra_set_groups_origin(set) == CHAKRA_GROUPS_NONE) return 0;
  int rc = chakra_set_load_groups(set, err);
  for (size_t i = 0; !rc && i < chakra_set_group_count(set); i++) {
    uint32_t n;
    const uint32_t *m = chakra_set_group_members(set, i, &n);
    if (sim_groups_add(&w->groups, chakra_set_group_name(set, i), m, n)) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  return rc;
}

int chakra_sim_workload_load_set(chakra_sim_workload **out, const chakra_set *set, uint32_t threads,
                                 chakra_diag_fn diag, void *diag_ctx, chakra_error *err) {
  *out = NULL;
  uint32_t npus = chakra_set_ranks(set);
  chakra_sim_workload *w = calloc(1, sizeof *w);
  if (w) w->rank = calloc(npus, sizeof *w->rank);
  if (!w || !w->rank) {
    free(w);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  w->npus = npus;
  int rc = keep_set_groups(w, set, err);
  if (!rc) rc = load_all(w, set, threads, diag, diag_ctx, err);
  if (rc) chakra_sim_workload_free(w);
  else *out = w;
  return rc;
}

int chakra_sim_workload_load(chakra_sim_workload **out, const char *prefix, uint32_t npus, uint32_t threads,
                             chakra_diag_fn diag, void *diag_ctx, chakra_error *err) {
  *out = NULL;
  if (npus == 0) return chakra_error_set(err, CHAKRA_EINVAL, "workload: the NPU count must be at least 1");
  char why[64];
  snprintf(why, sizeof why, "the network has %u NPUs", npus);
  chakra_set_options so = {.ranks = npus, .ranks_reason = why, .first_ranks = 1, .no_default_groups = 1};
  chakra_set *set;
  int rc = chakra_set_open(&set, prefix, &so, err);
  if (rc) return rc;
  rc = chakra_sim_workload_load_set(out, set, threads, diag, diag_ctx, err);
  chakra_set_close(set);
  return rc;
}

uint32_t chakra_sim_workload_npus(const chakra_sim_workload *w) { return w->npus; }

void chakra_sim_workload_free(chakra_sim_workload *w) {
  if (!w) return;
  for (uint32_t r = 0; r < w->npus; r++) {
    wl_rank *k = &w->rank[r];
    bigmem_free(k->nodes);
    for (uint32_t i = 1; k->pg_names && i < k->n_pg; i++) free(k->pg_names[i]);
    free(k->pg_names);
    for (size_t i = 0; i < k->n_groups; i++) free(k->groups[i]);
    free(k->groups);
    free(k->path);
    free(k->replay_wide);
  }
  free(w->rank);
  sim_config_groups_free(&w->groups);
  free(w);
}

/* ---- a run's view of the workload ---- */

static int wl_node_error(const wl_rank *k, uint32_t rank, const wl_node *n, const char *what, chakra_error *err) {
  return chakra_error_set(err, CHAKRA_EINVAL, "%s: rank %u: node %llu: %s", k->path, rank, (unsigned long long)n->id, what);
}

/* The errors a configuration makes of a loaded rank, first in node order;
 * *untimed counts GPU compute nodes that have num_ops but no duration while
 * the roofline is off (each will take 1 ns). */
static int wl_check_rank(const sim *s, const wl_rank *k, uint32_t rank, uint64_t *untimed) {
  const sim_sys_config *c = &s->sys_cfg;
  if (c->replay_only) return 0;
  for (uint32_t i = 0; i < k->n; i++) {
    const wl_node *n = &k->nodes[i];
    if (n->kind == WK_COMP && !c->roofline && n->replay_us == 0 && n->u.num_ops) ++*untimed;
    if (n->kind == WK_COMP && c->roofline && !(n->flags & WF_ROOFLINE_ATTRS))
      return wl_node_error(k, rank, n, "roofline compute needs num_ops and tensor_size", s->err);
    if (n->kind == WK_MEM && s->mem_cfg.type == MEM_NONE)
      return wl_node_error(k, rank, n, "remote memory access, but the remote memory configuration has no memory expansion", s->err);
    if (n->kind == WK_MEM && !(n->flags & WF_TENSOR_SIZE)) {
      char msg[160];
      chakra_gnode g = {.id = n->id, .type = n->flags & WF_STORE ? CHAKRA_MEM_STORE_NODE : CHAKRA_MEM_LOAD_NODE};
      return wl_node_error(k, rank, n, chakra_node_problem_text(&g, rank, s->npus, CHAKRA_NP_NO_TENSOR_SIZE, msg, sizeof msg), s->err);
    }
  }
  if (k->comm_rc) *s->err = k->comm_err;
  return k->comm_rc;
}

/* Groups from METADATA nodes, then the check that every pg_name is known. */
static int wl_rank_groups(sim *s, const wl_rank *k, uint32_t rank) {
  for (size_t i = 0; i < k->n_groups; i++) {
    int rc = groups_add_pytorch(s, k->groups[i], k->path, rank, s->err);
    if (rc) return rc;
  }
  for (uint32_t i = 1; i < k->n_pg; i++)
    if (!groups_known(s, k->pg_names[i]))
      return chakra_error_set(s->err, CHAKRA_EINVAL,
                              "%s: rank %u: pg_name '%s' names no communicator group (give a comm-group configuration, or a METADATA node defining it)",
                              k->path, rank, k->pg_names[i]);
  return 0;
}

int wl_setup(sim *s, const chakra_sim_workload *wk) {
  if (wk->npus != s->npus)
    return chakra_error_set(s->err, CHAKRA_EINVAL, "the workload has %u ranks but the network has %u NPUs", wk->npus, s->npus);
  s->wk = wk;
  s->wl = calloc(1, sizeof *s->wl);
  if (!s->wl || !(s->wl->npu = calloc(s->npus, sizeof *s->wl->npu)))
    return chakra_error_set(s->err, CHAKRA_ENOMEM, "out of memory");
  for (int i = 0; i < wk->groups.n; i++) /* the configuration's groups come first */
    if (groups_find(s, wk->groups.v[i].name) < 0 && sim_groups_add(&s->groups, wk->groups.v[i].name, wk->groups.v[i].members, wk->groups.v[i].n))
      return chakra_error_set(s->err, CHAKRA_ENOMEM, "out of memory");
  uint64_t untimed = 0;
  for (uint32_t r = 0; r < s->npus; r++) {
    const wl_rank *k = &wk->rank[r];
    int rc = wl_check_rank(s, k, r, &untimed);
    if (!rc) rc = wl_rank_groups(s, k, r);
    if (rc) return rc;
    wl_npu *w = &s->wl->npu[r];
    w->rank = r;
    w->n = k->n;
    w->nodes = k->nodes;
    w->child_off = k->child_off;
    w->children = k->children;
    w->replay_wide = k->replay_wide;
    size_t n = k->n ? k->n : 1, a = (n * sizeof *w->indeg + 15) & ~(size_t)15;
    char *b = bigmem_alloc(a + 2 * n * sizeof(uint64_t));
    if (!b) return chakra_error_set(s->err, CHAKRA_ENOMEM, "out of memory");
    w->indeg = (uint32_t *)b;
    w->start = (uint64_t *)(b + a);
    w->end = w->start + n;
    memset(w->indeg, 0, k->n * sizeof *w->indeg); /* each dependency is one child entry */
    for (uint32_t c = 0; c < k->child_off[k->n]; c++) w->indeg[k->children[c]]++;
    memset(w->start, 0xff, n * sizeof *w->start); /* UINT64_MAX = not yet */
    memset(w->end, 0xff, n * sizeof *w->end);
  }
  if (untimed)
    sim_diag_warn(&s->diag, NULL,
                  "%llu GPU compute node(s) have num_ops but no duration_micros and run as 1 ns each; "
                  "\"roofline-enabled\": 1 in the system configuration times them from num_ops and tensor_size",
                  (unsigned long long)untimed);
  return 0;
}

void wl_free(sim *s) {
  if (!s->wl) return;
  for (uint32_t r = 0; s->wl->npu && r < s->npus; r++) {
    wl_npu *w = &s->wl->npu[r];
    bigmem_free(w->indeg);
    for (int c = 0; c < SLOT_N; c++) free(w->ready[c].v);
  }
  free(s->wl->trace);
  free(s->wl->npu);
  free(s->wl);
  s->wl = NULL;
}

const char *wl_pg_name(const sim *s, uint32_t rank, uint32_t pg) {
  return pg ? s->wk->rank[rank].pg_names[pg] : NULL;
}

const char *wl_path(const sim *s, uint32_t rank) { return s->wk->rank[rank].path; }

/* ---- execution ---- */

static void wl_on_complete(sim *s, void *obj, uint64_t idx);
static void wl_issue_ready(sim *s, wl_npu *w);

/* FLOP/s a roofline node attains; *oi receives its operation intensity. */
static double roofline_perf(const sim *s, const wl_node *n, double *oi) {
  *oi = (double)n->u.num_ops / (double)n->value;
  double bw = s->sys_cfg.local_mem_bw * 1e9, peak = s->sys_cfg.peak_perf * 1e12;
  return bw * *oi < peak ? bw * *oi : peak;
}

static uint64_t roofline_ns(const sim *s, const wl_node *n) {
  if (n->u.num_ops == 0) return 1; /* the reference divides 0 by 0 */
  double oi, perf = roofline_perf(s, n, &oi);
  return (uint64_t)floor((double)n->u.num_ops / perf * 1e9);
}

/* Every compute node weighs in with its duration; only roofline-timed ones
 * carry utilisation and intensity (replayed ones have none to report).
 * Zero-length nodes are left out: their intensity may be infinite. */
static void roofline_account(const sim *s, wl_npu *w, const wl_node *n, uint64_t ns) {
  w->rl_time += ns;
  if (wl_kind(s, n) != WK_ROOFLINE || ns == 0 || n->u.num_ops == 0) return; /* no ops: memory bound, all zero */
  double oi, perf = roofline_perf(s, n, &oi), d = (double)ns;
  double bw = s->sys_cfg.local_mem_bw * 1e9, peak = s->sys_cfg.peak_perf * 1e12;
  if (perf >= peak) w->rl_bound += ns; /* bandwidth x intensity is not the smaller term */
  w->rl_comp += d * (perf / peak);
  w->rl_mem += d * (perf / oi / bw);
  w->rl_oi += d * oi;
}

/* Out of line: tracing is rare, and the hot paths keep only the test. */
__attribute__((noinline, cold)) static void trace_event(sim *s, const wl_npu *w, uint32_t i, uint32_t done) {
  wl *t = s->wl;
  if (t->n_trace == t->cap_trace &&
      vec_room_by(&t->trace, &t->cap_trace, t->n_trace, 1, sizeof *t->trace, 4096, SIZE_MAX, realloc)) {
    s->q.oom = 1;
    return;
  }
  t->trace[t->n_trace++] = (wl_trace_ev){s->q.now, w->rank | done, i};
}

/* Marks node i finished: frees its slot and readies its children. */
static void wl_finish_node(sim *s, wl_npu *w, uint32_t i) {
  const wl_node *n = &w->nodes[i];
  w->end[i] = s->q.now;
  if (n->slot != SLOT_NONE) w->busy[n->slot] = 0;
  if (w->trace) trace_event(s, w, i, WL_TRACE_DONE);
  if ((n->cat == CAT_GPU || n->cat == CAT_CPU) && s->sys_cfg.roofline)
    roofline_account(s, w, n, s->q.now - w->start[i]);
  int kind = wl_kind(s, n);
  if (kind == WK_COLL) {
    w->coll_ops[n->coll]++;
    w->coll_bytes[n->coll] += n->value;
    w->coll_ns[n->coll] += s->q.now - w->start[i];
  } else if (kind == WK_SEND) {
    w->send_ops++;
    w->send_bytes += n->value;
  }
  w->in_flight--;
  w->done++;
  for (uint32_t k = w->child_off[i]; k < w->child_off[i + 1]; k++) {
    uint32_t c = w->children[k];
    if (--w->indeg[c] == 0 && heap_push(&w->ready[w->nodes[c].slot], c, w->nodes)) s->q.oom = 1;
  }
}

static void wl_issue(sim *s, wl_npu *w, uint32_t i) {
  const wl_node *n = &w->nodes[i];
  w->start[i] = s->q.now;
  if (n->slot != SLOT_NONE) w->busy[n->slot] = 1;
  if (w->trace) trace_event(s, w, i, 0);
  w->in_flight++;
  uint64_t ns;
  int kind = wl_kind(s, n);
  switch (kind) {
    case WK_DELAY:
      ns = n->kind == WK_DELAY ? n->value : wl_replay_ns(s, w, i);
      if (n->cat == CAT_GPU) w->gpu_time += ns;
      eventq_npu_after(&s->q, w->rank, ns, wl_on_complete, w, i);
      return;
    case WK_ROOFLINE:
      if (n->value == 0) { /* tensor_size 0: skipped, takes no time */
        wl_finish_node(s, w, i);
        return;
      }
      ns = roofline_ns(s, n);
      w->gpu_time += ns;
      eventq_npu_after(&s->q, w->rank, ns, wl_on_complete, w, i);
      return;
    case WK_NOOP:
      wl_finish_node(s, w, i);
      return;
    case WK_SEND:
      net_send(s, w->rank, (uint32_t)n->u.p2p.peer, n->value, NET_TAG_NATIVE | (uint32_t)n->u.p2p.tag, wl_on_complete, w, i);
      return;
    case WK_RECV:
      net_recv(s, w->rank, (uint32_t)n->u.p2p.peer, n->value, NET_TAG_NATIVE | (uint32_t)n->u.p2p.tag, wl_on_complete, w, i);
      return;
    case WK_MEM:
      remmem_access(s, w->rank, n->value, wl_on_complete, w, i);
      return;
    case WK_COLL: {
      coll_request rq = {w->rank, n->coll, n->value, n->u.cl.involved_dim, n->n_involved,
                         wl_pg_name(s, w->rank, n->u.cl.pg), n->id, wl_on_complete, w, i};
      coll_start(s, &rq);
      return;
    }
  }
}

/* Issues ready nodes in ascending id order while their slots are free. */
static void wl_issue_ready(sim *s, wl_npu *w) {
  for (;;) {
    int best = -1;
    for (int c = 0; c < SLOT_N; c++) {
      if (!w->ready[c].n || (c != SLOT_NONE && w->busy[c])) continue;
      if (best < 0 || w->nodes[w->ready[c].v[0]].id < w->nodes[w->ready[best].v[0]].id) best = c;
    }
    if (best < 0) break;
    wl_issue(s, w, heap_pop(&w->ready[best], w->nodes));
  }
  if (!w->finished && w->in_flight == 0 && w->done == w->n) {
    w->finished = 1;
    w->finish = s->q.now;
  }
}

static void wl_on_complete(sim *s, void *obj, uint64_t idx) {
  wl_npu *w = obj;
  wl_finish_node(s, w, (uint32_t)idx);
  wl_issue_ready(s, w);
}

void wl_start(sim *s) {
  for (uint32_t r = 0; r < s->npus; r++) {
    wl_npu *w = &s->wl->npu[r];
    for (uint32_t i = 0; i < w->n; i++)
      if (w->indeg[i] == 0 && heap_push(&w->ready[w->nodes[i].slot], i, w->nodes)) s->q.oom = 1;
    wl_issue_ready(s, w);
  }
}

/* Length of the union of [start, end) over the nodes of one category. */
static uint64_t busy_union(const wl_npu *w, int cat) {
  uint32_t m = 0;
  for (uint32_t i = 0; i < w->n; i++) m += w->nodes[i].cat == cat && w->end[i] != UINT64_MAX;
  uint64_t *iv = malloc((m ? m : 1) * 2 * sizeof *iv);
  if (!iv) return 0;
  uint32_t k = 0;
  for (uint32_t i = 0; i < w->n; i++)
    if (w->nodes[i].cat == cat && w->end[i] != UINT64_MAX) iv[2 * k] = w->start[i], iv[2 * k + 1] = w->end[i], k++;
  uint32_t sorted = 1;
  while (sorted < k && iv[2 * sorted] >= iv[2 * sorted - 2]) sorted++;
  if (sorted < k) qsort(iv, k, 2 * sizeof *iv, cmp_u64); /* chains come sorted */
  uint64_t total = 0, a = 0, b = 0;
  for (uint32_t j = 0; j < k; j++) {
    if (j == 0 || iv[2 * j] > b) {
      total += b - a;
      a = iv[2 * j];
      b = iv[2 * j + 1];
    } else if (iv[2 * j + 1] > b) {
      b = iv[2 * j + 1];
    }
  }
  total += b - a;
  free(iv);
  return total;
}

void wl_result(const sim *s, uint32_t rank, wl_rank_result *out) {
  const wl_npu *w = &s->wl->npu[rank];
  memset(out, 0, sizeof *out);
  out->finished = w->finished;
  out->finish = w->finish;
  out->gpu_time = w->gpu_time;
  out->nodes = w->n;
  out->done = w->done;
  for (int c = 0; c < CAT_N; c++) out->busy[c] = busy_union(w, c);
  for (int c = 0; c < SIM_NCOLL; c++) {
    out->coll_ops[c] = w->coll_ops[c];
    out->coll_bytes[c] = w->coll_bytes[c];
    out->coll_ns[c] = w->coll_ns[c];
  }
  out->send_ops = w->send_ops;
  out->send_bytes = w->send_bytes;
  double total = 1.0 + (double)w->rl_time; /* the reference starts the sum at 1 tick */
  out->compute_bound = (double)w->rl_bound / total;
  out->compute_util = w->rl_comp / total;
  out->mem_util = w->rl_mem / total;
  out->op_intensity = w->rl_oi / total;
}

void wl_trace_on(sim *s) {
  for (uint32_t r = 0; r < s->npus; r++) s->wl->npu[r].trace = 1;
}

const wl_trace_ev *wl_trace_events(const sim *s, size_t *n) {
  *n = s->wl->n_trace;
  return s->wl->trace;
}

uint32_t wl_nodes(const sim *s, uint32_t rank) { return s->wl->npu[rank].n; }
int wl_finished(const sim *s, uint32_t rank) { return s->wl->npu[rank].finished; }

void wl_node_at(const sim *s, uint32_t rank, uint32_t i, wl_node_view *out) {
  const wl_npu *w = &s->wl->npu[rank];
  out->id = w->nodes[i].id;
  out->start = w->start[i];
  out->end = w->end[i];
  out->track = w->nodes[i].slot;
  out->cat = w->nodes[i].cat;
}

void wl_report_stuck(const sim *s, void (*line)(void *ctx, const char *msg), void *ctx) {
  char msg[512];
  for (uint32_t r = 0; r < s->npus; r++) {
    const wl_npu *w = &s->wl->npu[r];
    if (w->finished) continue;
    int len = snprintf(msg, sizeof msg, "rank %u did not finish: %u of %u nodes done; in flight:", r, w->done, w->n);
    int shown = 0;
    for (uint32_t i = 0; i < w->n && shown < 8; i++)
      if (w->start[i] != UINT64_MAX && w->end[i] == UINT64_MAX && len < (int)sizeof msg - 24)
        len += snprintf(msg + len, sizeof msg - (size_t)len, " %llu", (unsigned long long)w->nodes[i].id), shown++;
    if (!shown) len += snprintf(msg + len, sizeof msg - (size_t)len, " (none recorded)");
    line(ctx, msg);
  }
}
