/* deadlock.c - the untimed execution of a workload; see deadlock.h. */
#include "deadlock.h"

#include "../util/cmp.h"
#include "../util/toposort.h"
#include "slotorder.h"
#include "../util/vec.h"

#include <stdlib.h>
#include <string.h>

enum { ST_WAITING, ST_READY, ST_ISSUED, ST_DONE };

static const uint32_t NONE = UINT32_MAX;

int dl_rank_init(dl_rank *r, const chakra_graph *g, uint32_t (*group_of)(void *ctx, uint32_t i), void *ctx) {
  memset(r, 0, sizeof *r);
  uint32_t n = (uint32_t)g->n;
  size_t edges = g->child_off[n];
  r->n = n;
  r->id = malloc(n * sizeof *r->id);
  r->offset = malloc(n * sizeof *r->offset);
  r->size = malloc(n * sizeof *r->size);
  r->slot = malloc(n ? n : 1);
  r->kind = malloc(n ? n : 1);
  r->comm_type = malloc(n ? n : 1);
  r->key = calloc(n ? n : 1, sizeof *r->key);
  r->indeg = malloc(n * sizeof *r->indeg);
  r->child_off = malloc((n + 1) * sizeof *r->child_off);
  r->children = malloc((edges ? edges : 1) * sizeof *r->children);
  if (!r->id || !r->offset || !r->size || !r->slot || !r->kind || !r->comm_type || !r->key || !r->indeg ||
      !r->child_off || !r->children) {
    dl_rank_free(r);
    return -1;
  }
  memcpy(r->child_off, g->child_off, (n + 1) * sizeof *r->child_off);
  memcpy(r->children, g->children, edges * sizeof *r->children);
  for (uint32_t i = 0; i < n; i++) {
    const chakra_gnode *x = &g->nodes[i];
    r->id[i] = x->id;
    r->offset[i] = x->offset;
    r->size[i] = x->size;
    r->comm_type[i] = x->comm_type;
    r->indeg[i] = g->dep_off[i + 1] - g->dep_off[i];
    chakra_node_class c;
    chakra_node_classify(x, 0, 0, &c);
    /* Collectives the simulator runs as such; others (BROADCAST) are local. */
    int real_coll = c.kind == CHAKRA_KIND_COLL && c.coll >= 0;
    r->kind[i] = real_coll                    ? DL_COLL
                 : c.kind == CHAKRA_KIND_SEND ? DL_SEND
                 : c.kind == CHAKRA_KIND_RECV ? DL_RECV
                                              : DL_LOCAL;
    r->slot[i] = c.slot;
    if (real_coll) r->key[i] = group_of(ctx, i);
  }
  return 0;
}

void dl_rank_free(dl_rank *r) {
  free(r->id);
  free(r->offset);
  free(r->size);
  free(r->slot);
  free(r->kind);
  free(r->comm_type);
  free(r->key);
  free(r->indeg);
  free(r->child_off);
  free(r->children);
  memset(r, 0, sizeof *r);
}

/* ---- run-time state ----------------------------------------------------- */

typedef idheap heap;

typedef struct rstate {
  const dl_rank *g;
  uint8_t *st;             /* ST_* per node */
  uint32_t *rem;           /* unfinished dependencies per node */
  so_order slot_order;     /* communication-slot nodes that must finish first (slotorder.h) */
  uint32_t *slot_rem;      /* of those, unfinished per node */
  uint64_t *ord;           /* sends, receives, collectives: place in their key or group in every run (so_ordinals) */
  heap ready[DL_SLOTS];
  uint32_t *grp;           /* the groups its collectives use, ascending (a rank uses few of a job's many) */
  uint64_t *ordinal;       /* per group of grp: collectives issued so far */
  uint32_t *weight;        /* per group of grp: what this rank counts for in it (dl_group) */
  uint32_t n_grp;
  uint32_t done;
  int dirty;
} rstate;

/* A key's sends are all on its source rank and its receives on its
 * destination, so each waits in a heap ordered by that rank's ord[]. */
typedef struct keyq {
  heap recv;               /* receives waiting for their send */
  heap send;               /* rendezvous: sends waiting for their receive */
  int recv_rank, send_rank;
  uint64_t sends, recvs;   /* issued so far */
} keyq;

/* A collective issued and waiting for the rest of its group. */
typedef struct pending {
  uint64_t ordinal;
  int rank;
  uint32_t node;
} pending;

typedef struct counts {
  uint32_t *v;             /* members that issued each ordinal */
  uint64_t n;
  size_t cap;
  pending *wait;           /* issued, not yet complete */
  uint32_t n_wait, cap_wait;
} counts;

typedef struct run {
  rstate *r;
  int nr;
  keyq *keys;
  counts *groups;          /* per group: members that issued each ordinal */
  const dl_group *groups_of;     /* per group: its need, members and weights */
  int *work;               /* ranks to (re)issue */
  int n_work;
  int rendezvous;          /* a send finishes only once its receive is issued */
  int oom;
} run;

static int heap_push(heap *h, const uint64_t *id, uint32_t x) { return idheap_push(h, x, id, sizeof *id); }
static uint32_t heap_pop(heap *h, const uint64_t *id) { return idheap_pop(h, id, sizeof *id); }

static void mark(run *u, int r) {
  if (!u->r[r].dirty) {
    u->r[r].dirty = 1;
    u->work[u->n_work++] = r;
  }
}

static void make_ready(run *u, rstate *s, uint32_t c) {
  s->st[c] = ST_READY;
  if (heap_push(&s->ready[s->g->slot[c]], s->g->id, c)) u->oom = 1;
}

static void finish(run *u, int r, uint32_t i) {
  rstate *s = &u->r[r];
  const dl_rank *g = s->g;
  s->st[i] = ST_DONE;
  s->done++;
  for (uint32_t k = g->child_off[i]; k < g->child_off[i + 1]; k++) {
    uint32_t c = g->children[k];
    if (--s->rem[c] == 0 && s->slot_rem[c] == 0) make_ready(u, s, c);
  }
  const so_order *o = &s->slot_order;
  for (uint32_t k = o->off[i]; k < o->off[i + 1]; k++) {
    uint32_t c = o->after[k];
    if (--s->slot_rem[c] == 0 && s->rem[c] == 0) make_ready(u, s, c);
  }
  mark(u, r);
}

/* A receive whose key has had more sends issued than the receives that
 * go before it in every run finishes (and the same for a rendezvous send). */
static void deliver(run *u, keyq *q) {
  const uint64_t *ord = q->recv.n ? u->r[q->recv_rank].ord : NULL;
  while (q->recv.n && q->sends > ord[q->recv.v[0]]) finish(u, q->recv_rank, heap_pop(&q->recv, ord));
  ord = q->send.n ? u->r[q->send_rank].ord : NULL;
  while (q->send.n && q->recvs > ord[q->send.v[0]]) finish(u, q->send_rank, heap_pop(&q->send, ord));
}

/* The count of group gi's collectives rank s issued, or NULL when it has
 * none of that group. */
static uint64_t *ordinal_of(const rstate *s, uint32_t gi) {
  uint32_t lo = 0, hi = s->n_grp;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (s->grp[mid] < gi) lo = mid + 1;
    else hi = mid;
  }
  return lo < s->n_grp && s->grp[lo] == gi ? &s->ordinal[lo] : NULL;
}

/* What rank r counts for in group gr. */
static uint32_t weight_in(const dl_group *gr, int r) {
  if (!gr->weight) return 1;
  uint32_t lo = 0, hi = gr->n;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if ((gr->list ? gr->list[mid] : mid) < (uint32_t)r) lo = mid + 1;
    else hi = mid;
  }
  return lo < gr->n && (gr->list ? gr->list[lo] : lo) == (uint32_t)r ? gr->weight[lo] : 1;
}

/* grp, ordinal and weight of rank r: the groups of its collectives, counts at 0. */
static int rank_groups(rstate *s, const dl_group *groups, int r) {
  const dl_rank *g = s->g;
  uint32_t n = 0;
  for (uint32_t i = 0; i < g->n; i++) n += g->kind[i] == DL_COLL;
  s->grp = malloc((n ? n : 1) * sizeof *s->grp);
  if (!s->grp) return -1;
  n = 0;
  for (uint32_t i = 0; i < g->n; i++)
    if (g->kind[i] == DL_COLL) s->grp[n++] = g->key[i];
  qsort(s->grp, n, sizeof *s->grp, cmp_u32);
  uint32_t k = 0;
  for (uint32_t i = 0; i < n; i++)
    if (!k || s->grp[i] != s->grp[k - 1]) s->grp[k++] = s->grp[i];
  s->n_grp = k;
  s->ordinal = calloc(k ? k : 1, sizeof *s->ordinal);
  s->weight = malloc((k ? k : 1) * sizeof *s->weight);
  if (!s->ordinal || !s->weight) return -1;
  for (uint32_t j = 0; j < k; j++) s->weight[j] = weight_in(&groups[s->grp[j]], r);
  return 0;
}

/* Collective i is at least the ord[i]-th of its group on this rank in
 * every run, so it finishes once every member has issued more than ord[i]
 * of the group's collectives (its place in this untimed run, k, may be
 * later: timing decides the order of collectives nothing orders). */
static void issue_coll(run *u, int r, uint32_t i) {
  rstate *s = &u->r[r];
  uint32_t gi = s->g->key[i];
  uint64_t *issued = ordinal_of(s, gi), k = (*issued)++, a = s->ord[i];
  counts *c = &u->groups[gi];
  if (k >= c->cap) {
    size_t had = c->cap;
    if (VEC_RESERVE(c->v, c->cap, k + 1)) {
      u->oom = 1;
      return;
    }
    memset(c->v + had, 0, (c->cap - had) * sizeof *c->v);
  }
  if (VEC_ROOM(c->wait, c->n_wait, c->cap_wait, 1)) {
    u->oom = 1;
    return;
  }
  uint32_t need = u->groups_of[gi].need;
  int now = a < k && c->v[a] >= need;
  if (!now) c->wait[c->n_wait++] = (pending){a, r, i};
  if ((c->v[k] += s->weight[issued - s->ordinal]) >= need)
    for (uint32_t w = 0; w < c->n_wait;) {
      if (c->wait[w].ordinal != k) {
        w++;
        continue;
      }
      pending p = c->wait[w];
      c->wait[w] = c->wait[--c->n_wait];
      finish(u, p.rank, p.node);
    }
  if (now) finish(u, r, i);
}

static void issue(run *u, int r, uint32_t i) {
  rstate *s = &u->r[r];
  const dl_rank *g = s->g;
  s->st[i] = ST_ISSUED;
  switch (g->kind[i]) {
    case DL_LOCAL: finish(u, r, i); break;
    case DL_SEND: {
      keyq *q = &u->keys[g->key[i]];
      q->sends++;
      q->send_rank = r;
      if (!u->rendezvous) finish(u, r, i);
      else if (heap_push(&q->send, s->ord, i)) u->oom = 1;
      deliver(u, q);
      break;
    }
    case DL_RECV: {
      keyq *q = &u->keys[g->key[i]];
      q->recvs++;
      q->recv_rank = r;
      if (heap_push(&q->recv, s->ord, i)) u->oom = 1;
      deliver(u, q);
      break;
    }
    case DL_COLL: issue_coll(u, r, i); break;
  }
}

/* Issues a rank's ready nodes, lowest id first, until none is left. */
static void issue_ready(run *u, int r) {
  rstate *s = &u->r[r];
  s->dirty = 0;
  for (int progress = 1; progress && !u->oom;) {
    progress = 0;
    for (int c = 0; c < DL_SLOTS; c++) {
      if (!s->ready[c].n) continue;
      issue(u, r, heap_pop(&s->ready[c], s->g->id));
      progress = 1;
    }
  }
}

/* Fills x for node i of rank r, issued and waiting for another rank. */
static void waiting_for(const run *u, int r, uint32_t i, dl_stuck *x) {
  const dl_rank *g = u->r[r].g;
  x->node = i;
  x->kind = g->kind[i];
  x->key = g->key[i];
  x->ordinal = u->r[r].ord[i];
}

/* A node that only the communication slot keeps from being issued, and
 * the issued node that will not give the slot back; 0 if there is none. */
static int slot_holder(const rstate *s, uint32_t *holder, uint32_t *blocked) {
  const dl_rank *g = s->g;
  const so_order *o = &s->slot_order;
  int found = 0;
  for (uint32_t h = 0; h < g->n; h++) {
    if (s->st[h] != ST_ISSUED || (found && g->id[h] >= g->id[*holder])) continue;
    for (uint32_t k = o->off[h]; k < o->off[h + 1]; k++) {
      uint32_t w = o->after[k];
      if (s->st[w] == ST_WAITING && s->rem[w] == 0 && (!found || *holder != h || g->id[w] < g->id[*blocked]))
        *holder = h, *blocked = w, found = 1;
    }
  }
  return found;
}

static void report_rank(run *u, int r, dl_report_fn report, void *ctx) {
  rstate *s = &u->r[r];
  const dl_rank *g = s->g;
  dl_stuck x = {.rank = r, .node = NONE, .waiter = NONE, .kind = DL_LOCAL, .missing_rank = -1,
                .unfinished = g->n - s->done};
  uint32_t holder = NONE, blocked = NONE;
  if (slot_holder(s, &holder, &blocked)) {
    /* the slot is why: name the node that holds it and the one it blocks */
    waiting_for(u, r, holder, &x);
    x.waiter = blocked;
  } else {
    /* the lowest-id waiting collective, receive or (rendezvous) send */
    for (uint32_t i = 0; i < g->n; i++)
      if (s->st[i] == ST_ISSUED && g->kind[i] != DL_LOCAL && (x.node == NONE || g->id[i] < g->id[x.node]))
        waiting_for(u, r, i, &x);
  }
  const dl_group *gr = x.kind == DL_COLL ? &u->groups_of[x.key] : NULL;
  for (uint32_t j = 0; gr && j < gr->n && x.missing_rank < 0; j++) {
    int m = gr->list ? (int)gr->list[j] : (int)j;
    const uint64_t *o = ordinal_of(&u->r[m], x.key);
    if (!o || *o <= x.ordinal) x.missing_rank = m;
  }
  for (uint32_t i = 0; x.node == NONE && i < g->n; i++)
    if (s->st[i] != ST_DONE) x.node = i, x.kind = DL_LOCAL;
  report(ctx, &x);
}

static void run_free(run *u, uint32_t n_keys, uint32_t n_groups) {
  for (int r = 0; u->r && r < u->nr; r++) {
    free(u->r[r].st);
    free(u->r[r].rem);
    free(u->r[r].ordinal);
    free(u->r[r].weight);
    free(u->r[r].grp);
    free(u->r[r].slot_rem);
    free(u->r[r].ord);
    so_free(&u->r[r].slot_order);
    for (int c = 0; c < DL_SLOTS; c++) free(u->r[r].ready[c].v);
  }
  for (uint32_t k = 0; u->keys && k < n_keys; k++) {
    free(u->keys[k].recv.v);
    free(u->keys[k].send.v);
  }
  for (uint32_t k = 0; u->groups && k < n_groups; k++) {
    free(u->groups[k].v);
    free(u->groups[k].wait);
  }
  free(u->r);
  free(u->keys);
  free(u->groups);
  free(u->work);
}

/* Each send, receive and collective's lower bound on its place among its
 * key's receives (or, rendezvous, sends) or its group's collectives. */
static int place_bounds(rstate *s, int rendezvous, uint32_t n_keys, uint32_t n_groups) {
  const dl_rank *g = s->g;
  uint64_t *cls = malloc((g->n ? g->n : 1) * sizeof *cls);
  s->ord = malloc((g->n ? g->n : 1) * sizeof *s->ord);
  if (!cls || !s->ord) {
    free(cls);
    return -1;
  }
  for (uint32_t i = 0; i < g->n; i++)
    cls[i] = g->kind[i] == DL_COLL                 ? g->key[i]
             : g->kind[i] == DL_RECV               ? (uint64_t)n_groups + g->key[i]
             : g->kind[i] == DL_SEND && rendezvous ? (uint64_t)n_groups + n_keys + g->key[i]
                                                   : SO_NO_CLASS;
  int rc = so_ordinals(&s->slot_order, g->n, g->child_off, g->children, cls, s->ord);
  free(cls);
  return rc;
}

static int run_init(run *u, dl_rank *ranks, int n, uint32_t n_keys, uint32_t n_groups) {
  u->r = calloc((size_t)n, sizeof *u->r);
  u->keys = calloc(n_keys ? n_keys : 1, sizeof *u->keys);
  u->groups = calloc(n_groups ? n_groups : 1, sizeof *u->groups);
  u->work = malloc((size_t)n * sizeof *u->work);
  if (!u->r || !u->keys || !u->groups || !u->work) return -1;
  for (int r = 0; r < n; r++) {
    rstate *s = &u->r[r];
    const dl_rank *g = &ranks[r];
    s->g = g;
    s->st = calloc(g->n ? g->n : 1, 1);
    s->rem = malloc((g->n ? g->n : 1) * sizeof *s->rem);
    s->slot_rem = malloc((g->n ? g->n : 1) * sizeof *s->slot_rem);
    uint8_t *in_slot = malloc(g->n ? g->n : 1);
    if (!s->st || !s->rem || !s->slot_rem || !in_slot || rank_groups(s, u->groups_of, r)) {
      free(in_slot);
      return -1;
    }
    for (uint32_t i = 0; i < g->n; i++) in_slot[i] = g->slot[i] == DL_COMM;
    int rc = so_compute(&s->slot_order, g->n, g->id, g->child_off, g->children, in_slot);
    free(in_slot);
    if (rc || place_bounds(s, u->rendezvous, n_keys, n_groups)) return -1;
    memcpy(s->rem, g->indeg, g->n * sizeof *s->rem);
    memcpy(s->slot_rem, s->slot_order.count, g->n * sizeof *s->slot_rem);
    for (uint32_t i = 0; i < g->n; i++)
      if (!s->rem[i] && !s->slot_rem[i]) {
        s->st[i] = ST_READY;
        if (heap_push(&s->ready[g->slot[i]], g->id, i)) return -1;
      }
  }
  return 0;
}

int dl_run(dl_rank *ranks, int n, uint32_t n_keys, uint32_t n_groups, const dl_group *groups, int rendezvous,
           dl_report_fn report, void *ctx) {
  run u = {.nr = n, .groups_of = groups, .rendezvous = rendezvous};
  if (run_init(&u, ranks, n, n_keys, n_groups)) {
    run_free(&u, n_keys, n_groups);
    return -1;
  }
  for (int r = 0; r < n; r++) mark(&u, r);
  while (u.n_work && !u.oom) issue_ready(&u, u.work[--u.n_work]);
  int stuck = 0;
  for (int r = 0; r < n && !u.oom; r++)
    if (u.r[r].done < ranks[r].n) {
      stuck++;
      report_rank(&u, r, report, ctx);
    }
  int oom = u.oom;
  run_free(&u, n_keys, n_groups);
  return oom ? -1 : stuck;
}
