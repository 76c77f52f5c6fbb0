/* coll.c - collectives: chunking, phases, queues, streams; see coll.h. */
#include "coll.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo.h"
#include "custom.h"
#include "groups.h"
#include "net.h"
#include "ringorder.h"
#include "symmetry.h"

typedef struct plan {
  int n;
  phase_spec ph[2 * SIM_MAX_DIMS];
} plan;

/* One NPU's part of one collective; its chunks (streams) share the plan. */
typedef struct coll_inst {
  uint32_t rank;
  int streams_left;
  sim_fn done;
  void *obj;
  uint64_t arg;
  int n;                  /* phases: as many as the plan has (cache footprint) */
  phase_spec ph[];
} coll_inst;

typedef struct stream {
  coll_inst *coll;
  uint64_t tag;
  int cur;                /* index into coll->ph */
  int tree;               /* double binary tree of this chunk: 0 max, 1 min */
  algo_run run;
  struct stream *next;    /* queue link, or free list */
  struct stream *all;     /* every stream of the run, for coll_free() */
} stream;

typedef struct squeue {
  stream *wait_head;
  stream **wait_tail;      /* &last->next, or &wait_head when empty (NULL = not set yet) */
  uint32_t running;
  sym_mark tie;            /* reduced run: who queued streams this instant (symmetry.h) */
} squeue;

typedef struct sys_npu {
  squeue *queues;
  uint32_t *rr;          /* per dimension: all, first half, second half */
  uint64_t stream_ctr;
  uint32_t tree_ctr;
} sys_npu;

typedef struct sys {
  sys_npu *npu;
  stream *free_streams;   /* recycled: collectives create millions */
  stream *all;            /* every stream, running, waiting or recycled */
  uint32_t K, per_queue;
  uint64_t ep;
  custom_lib *custom;
  ro_table *order;        /* rings' agreed queue orders (ringorder.h) */
} sys;

/* ---- init ---- */

int coll_init(sim *s) {
  double ep = floor(s->sys_cfg.endpoint_delay * s->opt.injection_scale);
  if (!(ep <= 1e15))
    return chakra_error_set(s->err, CHAKRA_EINVAL,
                            "endpoint-delay x injection scale = %g ns is more than 10^15 ns (the time base is 64-bit ns)", ep);
  sys *y = calloc(1, sizeof *y);
  if (!y) return chakra_error_set(s->err, CHAKRA_ENOMEM, "out of memory");
  s->sys = y;
  y->K = s->opt.queues_per_dim ? s->opt.queues_per_dim : 1;
  y->per_queue = (s->sys_cfg.active_chunks + y->K - 1) / y->K;
  y->ep = (uint64_t)ep;
  y->npu = calloc(s->npus, sizeof *y->npu);
  if (!y->npu) return chakra_error_set(s->err, CHAKRA_ENOMEM, "out of memory");
  uint32_t nq = (uint32_t)s->dims * y->K;
  for (uint32_t r = 0; r < s->npus; r++) {
    y->npu[r].queues = calloc(nq, sizeof(squeue));
    y->npu[r].rr = calloc((size_t)s->dims * 3, sizeof(uint32_t));
    if (!y->npu[r].queues || !y->npu[r].rr) return chakra_error_set(s->err, CHAKRA_ENOMEM, "out of memory");
  }
  if (!(y->order = ro_new())) return chakra_error_set(s->err, CHAKRA_ENOMEM, "out of memory");
  return custom_lib_init(s, &y->custom);
}

void coll_free(sim *s) {
  sys *y = s->sys;
  if (!y) return;
  for (uint32_t r = 0; y->npu && r < s->npus; r++) { /* npu is NULL when init failed early */
    free(y->npu[r].queues);
    free(y->npu[r].rr);
  }
  for (stream *st = y->all, *nx; st; st = nx) {
    nx = st->all;
    algo_free(&st->run);
    free(st);
  }
  free(y->npu);
  custom_lib_free(y->custom);
  ro_free(y->order);
  free(y);
  s->sys = NULL;
}

/* ---- queues and streams ---- */

/* Waiting streams are served first come, first served. The reference
 * orders them by a per-collective priority from scheduling-policy (LIFO,
 * FIFO, or EXPLICIT's comm_priority), placing a stream after those of equal
 * or higher priority; but only one collective per NPU is ever in flight, so
 * all waiting streams share a priority and every policy gives this order. */
/* Constant time: a collective of 10^5 chunks appends 10^5 streams. */
static void queue_append(sim *s, squeue *q, stream *st) {
  if (s->sym) sym_once(s, &q->tie, "two events of one instant queued streams on one collective queue");
  if (!q->wait_head) q->wait_tail = &q->wait_head;
  st->next = NULL;
  *q->wait_tail = st;
  q->wait_tail = &st->next;
}

static void stream_phase_done(sim *s, void *obj, uint64_t arg);

static void stream_begin_phase(sim *s, stream *st) {
  const phase_spec *ph = &st->coll->ph[st->cur];
  algo_start(s, &st->run, ph, st->coll->rank, st->tag, st->tree, stream_phase_done, st);
}

static stream *stream_new(sim *s) {
  sys *y = s->sys;
  stream *st = y->free_streams;
  if (st) {
    y->free_streams = st->next;
    pkt *heap = st->run.heap; /* keeps its packet buffer */
    uint32_t heap_cap = st->run.heap_cap;
    stream *all = st->all;
    memset(st, 0, sizeof *st);
    st->all = all;
    st->run.heap = heap;
    st->run.heap_cap = heap_cap;
    return st;
  }
  st = calloc(1, sizeof *st);
  if (st) st->all = y->all, y->all = st;
  return st;
}

static void stream_recycle(sim *s, stream *st) {
  st->next = s->sys->free_streams;
  s->sys->free_streams = st;
}

/* Unlinks and returns the waiting stream at *link. */
static stream *queue_take(squeue *q, stream **link) {
  stream *st = *link;
  *link = st->next;
  if (q->wait_tail == &st->next) q->wait_tail = link;
  return st;
}

/* The stream q runs next: its first waiting one, or, where the ring keeps
 * one order (ringorder.h), the one the ring runs at this member's next
 * place; NULL while that one has not arrived. */
static stream *queue_next(sim *s, squeue *q) {
  const phase_spec *ph = &q->wait_head->coll->ph[q->wait_head->cur];
  /* A reduced run's rings have one simulated member (symmetry.h), always
   * the first at every place: it runs its first waiting stream. */
  if (!ph->agreed || s->sym) return queue_take(q, &q->wait_head);
  ro_log *l = ro_get(s->sys->order, ph->ring_key, ph->ring.n);
  uint64_t tag;
  int cur;
  stream **link = &q->wait_head;
  if (l && ro_next(l, ph->ring.idx, &tag, &cur))
    while (*link && ((*link)->tag != tag || (*link)->cur != cur)) link = &(*link)->next;
  if (!l || !*link) {
    if (!l) s->q.oom = 1;
    return NULL;
  }
  stream *st = queue_take(q, link);
  if (ro_ran(l, ph->ring.idx, st->tag, st->cur)) s->q.oom = 1;
  return st;
}

static void queue_pump(sim *s, uint32_t rank, int qi) {
  sys *y = s->sys;
  squeue *q = &y->npu[rank].queues[qi];
  while (q->wait_head && q->running < y->per_queue) {
    stream *st = queue_next(s, q);
    if (!st) return;
    q->running++;
    stream_begin_phase(s, st);
  }
}

static void coll_finished(sim *s, coll_inst *c) {
  eventq_npu_after(&s->q, c->rank, 0, c->done, c->obj, c->arg);
  live_release(&s->live, c);
}

/* An NPU's part of a custom collective is done. */
static void coll_custom_done(sim *s, void *obj, uint64_t arg) {
  (void)arg;
  coll_finished(s, obj);
}

/* The algorithm of st's current phase has finished on this NPU. */
static void stream_phase_done(sim *s, void *obj, uint64_t arg) {
  (void)arg;
  stream *st = obj;
  sys *y = s->sys;
  uint32_t rank = st->coll->rank;
  const coll_inst *p = st->coll;
  int old_q = p->ph[st->cur].queue;
  y->npu[rank].queues[old_q].running--;
  st->cur++;
  if (st->cur < p->n) {
    int new_q = p->ph[st->cur].queue;
    queue_append(s, &y->npu[rank].queues[new_q], st);
    queue_pump(s, rank, old_q);
    queue_pump(s, rank, new_q);
    return;
  }
  coll_inst *c = st->coll;
  stream_recycle(s, st);
  queue_pump(s, rank, old_q);
  if (--c->streams_left == 0) coll_finished(s, c);
}

/* ---- planning ---- */

static lring dim_ring(const sim *s, uint32_t rank, int d) {
  lring r;
  r.n = s->dim_npus[d];
  r.idx = sim_coord(s, rank, d);
  r.stride = s->offset[d];
  r.base = rank - r.idx * r.stride;
  r.members = NULL;
  return r;
}

/* Ring identities for ringorder.h's logs (the queue is added per phase):
 * a dimension's ring by its first member, the all-NPU ring, a group's. */
#define RING_DIM(base) ((uint64_t)(base))
#define RING_ALL (1ull << 62)
#define RING_GROUP(g) ((2ull << 62) | (uint32_t)(g))

static void add_phase(sim *s, uint32_t rank, plan *p, sim_algo a, int type, int dim, lring ring,
                      int half, int group_ring, uint64_t ring_id) {
  sys *y = s->sys;
  uint32_t *rr = &y->npu[rank].rr[dim * 3];
  uint32_t K = y->K, local;
  int dir;
  if (half == 0) { /* plain round robin */
    local = rr[0]++ % K;
    dir = K > 1 && local >= K / 2 ? -1 : 1;
  } else if (half == 1) { /* localBWAware RS/AR: first half, clockwise */
    uint32_t h = K / 2 ? K / 2 : 1;
    local = rr[1]++ % h;
    dir = 1;
  } else { /* localBWAware AG: second half, anticlockwise */
    local = K / 2 + rr[2]++ % (K - K / 2);
    dir = -1;
  }
  phase_spec *ph = &p->ph[p->n++];
  memset(ph, 0, sizeof *ph);
  ph->algo = a;
  ph->type = type;
  ph->dim = dim;
  ph->ring = ring;
  ph->queue = (int)(dim * K + local);
  ph->dir = dir;
  ph->ep = group_ring ? 10 : y->ep;
  ph->group_ring = group_ring;
  ph->ring_key = ring_id | (uint64_t)(ph->queue & 0x3fffffff) << 32;
}

/* Phases whose streams may reach their queue in an order timing decides,
 * differently on different members of the ring: a queue two phases share,
 * or any but the first phase when a queue runs several streams at once
 * (they finish the phase before it in any order). Those queues keep the
 * ring's one order (ringorder.h). */
static void mark_agreed(const sys *y, plan *p) {
  for (int i = 0; i < p->n; i++) {
    int shared = 0;
    for (int j = 0; j < p->n; j++) shared |= j != i && p->ph[j].queue == p->ph[i].queue;
    p->ph[i].agreed = shared || (i > 0 && y->per_queue > 1);
  }
}

/* A phase on the ring of dimension d through rank. */
static void dim_phase(sim *s, uint32_t rank, plan *p, sim_algo a, int type, int d, int half) {
  lring r = dim_ring(s, rank, d);
  add_phase(s, rank, p, a, type, d, r, half, 0, RING_DIM(r.base));
}

/* Phases of one chunk; sizes are filled in per chunk. */
static int plan_phases(sim *s, const coll_request *rq, int group, plan *p) {
  const sim_coll_impl *impl = &s->sys_cfg.impl[rq->type];
  p->n = 0;
  if (group >= 0) { /* proper subset: one flat ring in list order */
    const sim_group *g = &s->groups.v[group];
    lring r = {g->n, 0, 0, 0, g->members};
    while (r.idx < g->n && g->members[r.idx] != rq->rank) r.idx++;
    sim_algo a = impl->n == 1 ? impl->algo[0] : (sim_algo){ALGO_RING, 0, 0};
    if (g->n > 1) add_phase(s, rq->rank, p, a, rq->type, 0, r, 0, 1, RING_GROUP(group));
    return 0;
  }
  if (impl->algo[0].one) {
    lring r = {s->npus, rq->rank, 0, 1, NULL};
    if (s->npus > 1) add_phase(s, rq->rank, p, impl->algo[0], rq->type, 0, r, 0, 0, RING_ALL);
    return 0;
  }
  int active[SIM_MAX_DIMS], na = 0;
  for (int d = 0; d < impl->n; d++) {
    int inv = rq->n_involved == 0 || (d < rq->n_involved && ((rq->involved >> d) & 1));
    if (s->dim_npus[d] > 1 && inv) active[na++] = d;
  }
  if (rq->type == SIM_AR && s->sys_cfg.local_bw_aware && na > 0) {
    for (int k = 0; k < na - 1; k++)
      dim_phase(s, rq->rank, p, impl->algo[active[k]], SIM_RS, active[k], 1);
    dim_phase(s, rq->rank, p, impl->algo[active[na - 1]], SIM_AR, active[na - 1], 1);
    for (int k = na - 2; k >= 0; k--)
      dim_phase(s, rq->rank, p, impl->algo[active[k]], SIM_AG, active[k], 2);
    return 0;
  }
  for (int k = 0; k < na; k++) {
    int d = rq->type == SIM_AG ? active[na - 1 - k] : active[k];
    dim_phase(s, rq->rank, p, impl->algo[d], rq->type, d, 0);
  }
  return 0;
}

static int resolve_group(sim *s, const coll_request *rq, int *group) {
  *group = -1;
  if (rq->group >= 0 || rq->group == COLL_GROUP_ALL) {
    *group = rq->group;
    return 0;
  }
  sim_fail(s, CHAKRA_EINVAL, "rank %u: node %llu: this rank is not a member of group '%s'", rq->rank,
           (unsigned long long)rq->node_id, rq->pg_name);
  return -1;
}

const char *coll_custom_prefix(const sim *s, int type, uint64_t node_id) {
  const sim_sys_config *c = &s->sys_cfg;
  for (int i = 0; i < c->n_per_node; i++)
    if (c->per_node_ids[i] == node_id) return c->per_node_prefix[i];
  return c->impl[type].custom;
}

custom_lib *coll_custom_lib(sim *s) { return s->sys->custom; }

static int check_native(sim *s, const coll_request *rq) {
  static const char *const names[SIM_NCOLL] = {"all-reduce", "all-gather", "reduce-scatter", "all-to-all"};
  const sim_coll_impl *impl = &s->sys_cfg.impl[rq->type];
  if (impl->n == 0) {
    sim_fail(s, CHAKRA_EINVAL, "rank %u: node %llu: the system configuration has no \"%s-implementation\"",
             rq->rank, (unsigned long long)rq->node_id, names[rq->type]);
    return -1;
  }
  /* Shipped configs list every algorithm for every collective, so an
   * algorithm that cannot run is refused only when a collective needs it. */
  for (int d = 0; d < impl->n; d++) {
    const sim_algo *a = &impl->algo[d];
    uint32_t n = a->one ? s->npus : s->dim_npus[d];
    const char *why = NULL;
    if (a->kind == ALGO_DOUBLE_BINARY_TREE && rq->type != SIM_AR) why = "doubleBinaryTree exists only for all-reduce";
    else if (a->kind == ALGO_HALVING_DOUBLING && rq->type == SIM_A2A) why = "halvingDoubling does not exist for all-to-all";
    else if ((a->kind == ALGO_HALVING_DOUBLING || a->kind == ALGO_DOUBLE_BINARY_TREE) && n > 1 && (n & (n - 1)))
      why = "halvingDoubling and doubleBinaryTree need a power-of-two number of NPUs";
    if (why) {
      sim_fail(s, CHAKRA_EINVAL, "rank %u: node %llu: \"%s-implementation\"[%d]: %s (%u NPUs)", rq->rank,
               (unsigned long long)rq->node_id, names[rq->type], d, why, n);
      return -1;
    }
    if (a->one) break;
  }
  if (!s->sys_cfg.splits) {
    sim_fail(s, CHAKRA_EINVAL, "the system configuration has no \"preferred-dataset-splits\", needed by collectives");
    return -1;
  }
  return 0;
}

void coll_start(sim *s, const coll_request *rq) {
  sys *y = s->sys;
  int group;
  if (resolve_group(s, rq, &group)) return;
  const char *custom = coll_custom_prefix(s, rq->type, rq->node_id);
  plan p = {0};
  if (!custom) {
    if (check_native(s, rq)) return;
    plan_phases(s, rq, group, &p);
    mark_agreed(y, &p);
  }
  coll_inst *c = live_alloc(&s->live, sizeof *c + (size_t)p.n * sizeof p.ph[0]);
  if (!c) {
    s->q.oom = 1;
    return;
  }
  c->rank = rq->rank;
  c->done = rq->done;
  c->obj = rq->obj;
  c->arg = rq->arg;
  c->n = p.n;
  memcpy(c->ph, p.ph, (size_t)p.n * sizeof p.ph[0]);
  if (custom) {
    const uint32_t *members = group >= 0 ? groups_sorted(s, group) : NULL;
    uint32_t n = group >= 0 ? s->groups.v[group].n : s->npus;
    custom_run(s, y->custom, custom, rq, members, n, coll_custom_done, c);
    return;
  }
  if (c->n == 0) {
    coll_finished(s, c);
    return;
  }
  /* Chunking: every chunk is a full `chunk` bytes; the minimum chunk is N. */
  uint64_t S = rq->bytes, splits = s->sys_cfg.splits, N = s->npus;
  uint64_t chunk = S / splits;
  if (rq->type != SIM_AG && chunk < N) {
    chunk = N;
    S = splits * N;
  }
  if (chunk == 0) chunk = 1;
  uint64_t chunks = (S + chunk - 1) / chunk;
  if (chunks == 0) chunks = 1;
  sys_npu *np = &y->npu[rq->rank];
  c->streams_left = (int)chunks;
  uint64_t size = chunk;
  for (int i = 0; i < c->n; i++) {
    c->ph[i].in_bytes = size;
    size = algo_out_bytes(c->ph[i].type, size, c->ph[i].ring.n);
  }
  int dbt = c->ph[0].algo.kind == ALGO_DOUBLE_BINARY_TREE;
  int touched[2 * SIM_MAX_DIMS * 16], nt = 0;
  for (uint64_t k = 0; k < chunks; k++) {
    stream *st = stream_new(s);
    if (!st) {
      s->q.oom = 1;
      return;
    }
    st->coll = c;
    st->tag = NET_TAG_COLLECTIVE | (group >= 0 ? groups_next_stream(s, rq->rank, group) : ++np->stream_ctr);
    if (dbt) st->tree = (int)(np->tree_ctr++ & 1);
    queue_append(s, &np->queues[c->ph[0].queue], st);
    int seen = 0;
    for (int t = 0; t < nt; t++) seen |= touched[t] == c->ph[0].queue;
    if (!seen && nt < (int)(sizeof touched / sizeof *touched)) touched[nt++] = c->ph[0].queue;
  }
  for (int t = 0; t < nt; t++) queue_pump(s, rq->rank, touched[t]);
}


