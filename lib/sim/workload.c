/* workload.c - per-NPU DAG execution; see workload.h. */
#include "workload.h"

#include "chakra/build.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../report/spans.h"
#include "../trace/nodekind.h"
#include "../util/bigmem.h"
#include "../util/cmp.h"
#include "../util/toposort.h"
#include "../util/vec.h"
#include "net.h"
#include "coll.h"
#include "groups.h"
#include "remmem.h"
#include "symmetry.h"
#include "wkload.h"

typedef idheap heap;

/* One NPU's state in one run. */
typedef struct wl_npu {
  uint32_t rank, n;
  const wl_node *nodes;                    /* its class template's, shared */
  const uint32_t *child_off, *children;
  const uint64_t *replay_wide;             /* the template's, or NULL */
  const int32_t *peer;                     /* per peer role: this rank's peer */
  const int32_t *grp;                      /* per group of the template (index - 1): run_group() */
  const uint32_t *ksrc, *kdst;             /* reduced run: per peer role, the key of a message to it (symmetry.h) */
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
  sym_slots ties;               /* reduced run: each slot's state this instant (symmetry.h) */
  uint64_t *rdy;                /* reduced run: per node, the instant + 1 and the unit that readied it */
} wl_npu;

typedef struct wl {
  wl_npu *npu;
  int32_t *grp;                 /* every rank's groups (wl_npu.grp points in) */
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

/* ---- a run's view of the workload ---- */

static int wl_node_error(const sim *s, uint32_t rank, const wl_node *n, const char *what, chakra_error *err) {
  return chakra_error_set(err, CHAKRA_EINVAL, "%s: rank %u: node %llu: %s", s->wk->name[rank], rank, (unsigned long long)n->id, what);
}

/* The errors a configuration makes of a loaded class, first in node order,
 * for its first rank; *untimed counts GPU compute nodes of its ranks that
 * have num_ops but no duration while the roofline is off (each will take
 * 1 ns). */
static int wl_check_class(const sim *s, const wl_class *k, uint32_t rank, uint64_t *untimed) {
  const sim_sys_config *c = &s->sys_cfg;
  if (c->replay_only) return 0;
  for (uint32_t i = 0; i < k->n; i++) {
    const wl_node *n = &k->nodes[i];
    if (n->kind == WK_COMP && !c->roofline && n->replay_us == 0 && n->u.num_ops) *untimed += k->members;
    if (n->kind == WK_COMP && c->roofline && !(n->flags & WF_ROOFLINE_ATTRS))
      return wl_node_error(s, rank, n, "roofline compute needs num_ops and tensor_size", s->err);
    if (n->kind == WK_MEM && s->mem_cfg.type == MEM_NONE)
      return wl_node_error(s, rank, n, "remote memory access, but the remote memory configuration has no memory expansion", s->err);
    if (n->kind == WK_MEM && !(n->flags & WF_TENSOR_SIZE)) {
      char msg[160];
      chakra_gnode g = {.id = n->id, .type = n->flags & WF_STORE ? CHAKRA_MEM_STORE_NODE : CHAKRA_MEM_LOAD_NODE};
      return wl_node_error(s, rank, n, chakra_node_problem_text(&g, rank, s->npus, CHAKRA_NP_NO_TENSOR_SIZE, msg, sizeof msg), s->err);
    }
  }
  if (k->comm_rc) *s->err = k->comm_err;
  return k->comm_rc;
}

/* Groups from METADATA nodes (a class's once, at its first rank: its
 * other ranks carry the same lists), then the check that every group the
 * rank names is known. */
static int wl_rank_groups(sim *s, const wl_class *k, uint32_t rank) {
  const chakra_sim_workload *wk = s->wk;
  for (size_t i = 0; rank == k->rep && i < k->groups.n; i++) {
    int rc = groups_add_pytorch(s, k->groups.v[i], wk->name[rank], rank, s->err);
    if (rc) return rc;
  }
  for (uint32_t i = 1; i < k->n_pg; i++)
    if (!groups_known(s, wk_pg(wk, rank, i)))
      return chakra_error_set(s->err, CHAKRA_EINVAL,
                              "%s: rank %u: pg_name '%s' names no communicator group (give a comm-group configuration, or a METADATA node defining it)",
                              wk->name[rank], rank, wk_pg(wk, rank, i));
  return 0;
}

/* What a collective on group `name` of rank runs on (coll.h's
 * coll_request.group), resolved once per rank and group. */
static int32_t run_group(sim *s, uint32_t rank, const char *name) {
  if (groups_is_all(name)) return COLL_GROUP_ALL;
  int g = groups_find(s, name);
  if (s->groups.v[g].n == s->npus) return COLL_GROUP_ALL; /* the whole world: global plan */
  return groups_is_member(s, g, rank) ? g : COLL_NOT_MEMBER - g;
}

static int wl_resolve_groups(sim *s) {
  const chakra_sim_workload *wk = s->wk;
  if (groups_ready(s)) return chakra_error_set(s->err, CHAKRA_ENOMEM, "out of memory");
  uint64_t total = wk->pg_off[wk->npus];
  s->wl->grp = malloc((total ? total : 1) * sizeof *s->wl->grp);
  if (!s->wl->grp) return chakra_error_set(s->err, CHAKRA_ENOMEM, "out of memory");
  for (uint32_t r = 0; r < s->npus; r++) {
    const wl_class *k = wk_class(wk, r);
    int32_t *g = s->wl->grp + wk->pg_off[r];
    for (uint32_t i = 1; i < k->n_pg; i++) g[i - 1] = run_group(s, r, wk_pg(wk, r, i));
    s->wl->npu[r].grp = g;
  }
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
    const wl_class *k = wk_class(wk, r);
    int rc = r == k->rep ? wl_check_class(s, k, r, &untimed) : 0;
    if (!rc) rc = wl_rank_groups(s, k, r);
    if (rc) return rc;
    wl_npu *w = &s->wl->npu[r];
    w->rank = r;
    w->nodes = k->nodes;
    w->child_off = k->child_off;
    w->children = k->children;
    w->replay_wide = k->replay_wide;
    w->peer = wk_peers(wk, r);
  }
  if (untimed)
    sim_diag_warn(&s->diag, NULL,
                  "%llu GPU compute node(s) have num_ops but no duration_micros and run as 1 ns each; "
                  "\"roofline-enabled\": 1 in the system configuration times them from num_ops and tensor_size",
                  (unsigned long long)untimed);
  return wl_resolve_groups(s);
}

/* The run state of the NPUs that run: every one, or in a reduced run the
 * classes' representatives. */
int wl_alloc(sim *s) {
  for (uint32_t r = 0; r < s->npus; r++) {
    if (!sym_runs(s, r)) continue;
    wl_npu *w = &s->wl->npu[r];
    const wl_class *k = wk_class(s->wk, r);
    w->n = k->n;
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
    sym_p2p_keys(s, r, &w->ksrc, &w->kdst);
    if (s->sym && !(w->rdy = calloc(2 * n, sizeof *w->rdy))) return chakra_error_set(s->err, CHAKRA_ENOMEM, "out of memory");
  }
  return 0;
}

void wl_free(sim *s) {
  if (!s->wl) return;
  for (uint32_t r = 0; s->wl->npu && r < s->npus; r++) {
    wl_npu *w = &s->wl->npu[r];
    bigmem_free(w->indeg);
    free(w->rdy);
    for (int c = 0; c < SLOT_N; c++) free(w->ready[c].v);
  }
  free(s->wl->grp);
  free(s->wl->trace);
  free(s->wl->npu);
  free(s->wl);
  s->wl = NULL;
}

int32_t wl_group(const sim *s, uint32_t rank, uint32_t pg) { return pg ? s->wl->npu[rank].grp[pg - 1] : COLL_GROUP_ALL; }

const char *wl_pg_name(const sim *s, uint32_t rank, uint32_t pg) {
  return pg ? wk_pg(s->wk, rank, pg) : NULL;
}

const char *wl_path(const sim *s, uint32_t rank) { return s->wk->name[rank]; }
const char *wl_names_path(const sim *s, uint32_t rank) { return s->wk->names_path[rank]; }

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

/* Reduced run: node c was readied by the piece of work now running. */
static void wl_sym_ready(sim *s, wl_npu *w, uint32_t c) {
  w->rdy[2 * (size_t)c] = s->q.now + 1;
  w->rdy[2 * (size_t)c + 1] = s->q.unit;
  if (w->nodes[c].slot != SLOT_NONE) sym_ready(s, &w->ties, w->nodes[c].slot, w->nodes[c].id);
}

/* Marks node i finished: frees its slot and readies its children. */
static void wl_finish_node(sim *s, wl_npu *w, uint32_t i) {
  const wl_node *n = &w->nodes[i];
  w->end[i] = s->q.now;
  int ties = s->sym != NULL;
  if (n->slot != SLOT_NONE) {
    w->busy[n->slot] = 0;
    if (ties) sym_free_slot(s, &w->ties, n->slot);
  }
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
    if (--w->indeg[c] != 0) continue;
    if (heap_push(&w->ready[w->nodes[c].slot], c, w->nodes)) s->q.oom = 1;
    if (ties) wl_sym_ready(s, w, c);
  }
}

static void wl_issue(sim *s, wl_npu *w, uint32_t i) {
  const wl_node *n = &w->nodes[i];
  w->start[i] = s->q.now;
  if (n->slot != SLOT_NONE) {
    w->busy[n->slot] = 1;
    if (s->sym) {
      int by_other = w->rdy[2 * (size_t)i] == s->q.now + 1 && w->rdy[2 * (size_t)i + 1] != s->q.unit;
      sym_issue(s, &w->ties, n->slot, n->id, by_other, w->ready[n->slot].n != 0);
    }
  }
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
    case WK_RECV: {
      /* key: of a message from this rank to the peer (the data, or a
       * receive's rendezvous invitation); a reduced run's mirrors it */
      uint32_t role = n->u.p2p.role, peer = (uint32_t)w->peer[role];
      uint32_t ks = w->ksrc ? w->ksrc[role] : w->rank, kd = w->kdst ? w->kdst[role] : peer;
      uint64_t tag = NET_TAG_NATIVE | (uint32_t)n->u.p2p.tag;
      if (kind == WK_SEND) net_send(s, w->rank, peer, ks, kd, n->value, tag, wl_on_complete, w, i);
      else net_recv(s, w->rank, peer, ks, kd, n->value, tag, wl_on_complete, w, i);
      return;
    }
    case WK_MEM:
      remmem_access(s, w->rank, n->value, wl_on_complete, w, i);
      return;
    case WK_COLL: {
      coll_request rq = {w->rank, n->coll, n->value, n->u.cl.involved_dim, n->n_involved,
                         n->u.cl.pg ? w->grp[n->u.cl.pg - 1] : COLL_GROUP_ALL,
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
    if (!sym_runs(s, r)) continue;
    s->q.unit++; /* each NPU's start is its own piece of work */
    wl_npu *w = &s->wl->npu[r];
    for (uint32_t i = 0; i < w->n; i++) {
      if (w->indeg[i] != 0) continue;
      if (heap_push(&w->ready[w->nodes[i].slot], i, w->nodes)) s->q.oom = 1;
      if (s->sym) wl_sym_ready(s, w, i);
    }
    wl_issue_ready(s, w);
  }
}

/* The intervals of rank w's finished nodes of category cat (or, with cat
 * < 0, those that keep it out of the pipeline bubble) into iv; how many. */
static uint32_t node_spans(const wl_npu *w, int cat, uint64_t *iv) {
  uint32_t k = 0;
  for (uint32_t i = 0; i < w->n; i++) {
    const wl_node *n = &w->nodes[i];
    if (w->end[i] == UINT64_MAX || (cat >= 0 ? n->cat != cat : !spans_not_bubble(n->slot, n->cat))) continue;
    iv[2 * k] = w->start[i], iv[2 * k + 1] = w->end[i], k++;
  }
  return k;
}

/* Busy time per category and of compute or communication together. */
static void busy_times(const wl_npu *w, wl_rank_result *out) {
  uint64_t *iv = malloc((w->n ? w->n : 1) * 2 * sizeof *iv);
  if (!iv) return;
  for (int c = 0; c < CAT_N; c++) out->busy[c] = spans_union(iv, node_spans(w, c, iv));
  out->gpu_or_comm = spans_union(iv, node_spans(w, -1, iv));
  free(iv);
}

void wl_result(const sim *s, uint32_t rank, wl_rank_result *out) {
  const wl_npu *w = &s->wl->npu[sym_rep(s, rank)];
  memset(out, 0, sizeof *out);
  out->finished = w->finished;
  out->finish = w->finish;
  out->gpu_time = w->gpu_time;
  out->nodes = w->n;
  out->done = w->done;
  busy_times(w, out);
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

uint32_t wl_nodes(const sim *s, uint32_t rank) { return s->wl->npu[sym_rep(s, rank)].n; }
int wl_finished(const sim *s, uint32_t rank) { return s->wl->npu[sym_rep(s, rank)].finished; }

/* Nodes completed of all, over the NPUs the run simulates. */
void wl_progress(const sim *s, uint64_t *done, uint64_t *total) {
  *done = *total = 0;
  for (uint32_t r = 0; r < s->npus; r++) {
    if (!sym_runs(s, r)) continue;
    *done += s->wl->npu[r].done;
    *total += s->wl->npu[r].n;
  }
}

void wl_node_at(const sim *s, uint32_t rank, uint32_t i, wl_node_view *out) {
  const wl_npu *w = &s->wl->npu[sym_rep(s, rank)];
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
