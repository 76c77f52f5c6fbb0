/* symmetry.c - whether a run can be reduced to one NPU per class, and the
 * reduced run's keys and checks; see symmetry.h. */
#include "symmetry.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/hmap.h"
#include "coll.h"
#include "custom.h"
#include "groups.h"
#include "net.h"
#include "wkload.h"
#include "workload.h"

/* Signatures compared along rings at most this many times in all: beyond,
 * proving the symmetry would cost more than the run it saves. */
#define SYM_WORK (64ull << 20)
/* Receive keys one instant may post before the check gives up (half the
 * table, so that probes stay short). */
#define SYM_RX (1u << 14)

typedef struct plan_ctx {
  sim *s;
  struct sym *y;
  char *why;
  size_t wn;
  uint64_t work;
  const chakra_sim_workload *wk;
} plan_ctx;

static int no(plan_ctx *P, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int no(plan_ctx *P, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(P->why, P->wn, fmt, ap);
  va_end(ap);
  return 0;
}

static uint32_t cls_of(const plan_ctx *P, uint32_t r) { return P->wk->cls_of[r]; }
static net_sig sig(plan_ctx *P, uint32_t a, uint32_t b) { return net_signature(P->s, a, b); }

/* ---- point to point ---- */

/* (rank, peer) -> the rank's role for that peer, over every rank. */
typedef hmap role_index;

static int ri_build(role_index *x, const chakra_sim_workload *wk) {
  int oom = 0;
  if (hmap_reserve(x, wk->peer_off[wk->npus])) return -1;
  for (uint32_t r = 0; r < wk->npus && !oom; r++) {
    const int32_t *pv = wk_peers(wk, r);
    for (uint32_t i = 0; i < wk_class(wk, r)->n_peer && !oom; i++)
      hmap_put_u64(x, (uint64_t)r << 32 | (uint32_t)pv[i], i, &oom); /* keeps the first role for a value */
  }
  return oom ? -1 : 0;
}

/* Rank r's role for peer p, or -1. */
static int64_t ri_find(const role_index *x, uint32_t r, uint32_t p) {
  uint32_t role = hmap_get_u64(x, (uint64_t)r << 32 | p);
  return role == HMAP_NONE ? -1 : (int64_t)role;
}

enum { USE_SEND = 1, USE_RECV = 2 };

/* How each class's peer roles are used (send, receive), one array per class. */
static uint8_t **role_uses(plan_ctx *P) {
  const chakra_sim_workload *wk = P->wk;
  uint8_t **u = calloc(wk->n_cls, sizeof *u);
  for (uint32_t c = 0; u && c < wk->n_cls; c++) {
    const wl_class *k = &wk->cls[c];
    if (!(u[c] = calloc(k->n_peer ? k->n_peer : 1, 1))) return u;
    for (uint32_t i = 0; i < k->n; i++) {
      const wl_node *n = &k->nodes[i];
      if (n->kind == WK_SEND || n->kind == WK_RECV)
        u[c][n->u.p2p.role] |= P->s->opt.rendezvous ? USE_SEND | USE_RECV : n->kind == WK_SEND ? USE_SEND : USE_RECV;
    }
  }
  return u;
}

/* Rank r's peers against its representative's. */
static int p2p_rank(plan_ctx *P, const role_index *x, uint8_t *const *uses, uint32_t *stamp, uint32_t r) {
  const chakra_sim_workload *wk = P->wk;
  const wl_class *k = wk_class(wk, r);
  uint32_t rho = k->rep, c = cls_of(P, r);
  const int32_t *pv = wk_peers(wk, r), *p0 = wk_peers(wk, rho);
  for (uint32_t i = 0; i < k->n_peer; i++) {
    uint32_t v = (uint32_t)pv[i], v0 = (uint32_t)p0[i];
    if (stamp[v] == r + 1) return no(P, "rank %u talks to rank %u in two roles of its class's template", r, v);
    stamp[v] = r + 1;
    if (!uses[c][i]) continue;
    if (cls_of(P, v) != cls_of(P, v0))
      return no(P, "rank %u's peer %u is not in the class of its representative %u's peer %u", r, v, rho, v0);
    if ((v == r) != (v0 == rho)) return no(P, "rank %u and its representative %u differ in talking to themselves", r, rho);
    if ((uses[c][i] & USE_SEND) && !net_sig_eq(sig(P, r, v), sig(P, rho, v0)))
      return no(P, "messages from rank %u to %u take other times than from its representative %u to %u", r, v, rho, v0);
    if ((uses[c][i] & USE_RECV) && !net_sig_eq(sig(P, v, r), sig(P, v0, rho)))
      return no(P, "messages from rank %u to %u take other times than from %u to its representative %u", v, r, v0, rho);
    int64_t back = ri_find(x, v, r), back0 = ri_find(x, v0, rho);
    if (back < 0 || back != back0)
      return no(P, "rank %u answers rank %u in another role than %u answers its representative %u", v, r, v0, rho);
  }
  return 1;
}

/* For each class and peer role: the key of the representative's message
 * to that peer, which stands for the one the peer's representative gets. */
static int p2p_keys(plan_ctx *P, const role_index *x) {
  const chakra_sim_workload *wk = P->wk;
  struct sym *y = P->y;
  uint64_t total = 0;
  y->koff = malloc(((size_t)wk->n_cls + 1) * sizeof *y->koff);
  for (uint32_t c = 0; y->koff && c < wk->n_cls; c++) y->koff[c] = (uint32_t)total, total += wk->cls[c].n_peer;
  y->ksrc = malloc((total ? total : 1) * sizeof *y->ksrc);
  y->kdst = malloc((total ? total : 1) * sizeof *y->kdst);
  if (!y->koff || !y->ksrc || !y->kdst) return -1;
  for (uint32_t c = 0; c < wk->n_cls; c++) {
    uint32_t rho = wk->cls[c].rep;
    const int32_t *p0 = wk_peers(wk, rho);
    for (uint32_t i = 0; i < wk->cls[c].n_peer; i++) {
      uint32_t v0 = (uint32_t)p0[i], rho_a = wk_class(wk, v0)->rep;
      int64_t back = ri_find(x, v0, rho);
      uint32_t kk = y->koff[c] + i;
      y->ksrc[kk] = back >= 0 ? (uint32_t)wk_peers(wk, rho_a)[back] : rho;
      y->kdst[kk] = back >= 0 ? rho_a : v0;
    }
  }
  return 0;
}

static int p2p_check(plan_ctx *P) {
  const chakra_sim_workload *wk = P->wk;
  if (P->s->sys_cfg.replay_only) return 1; /* every node replays its duration: no message */
  role_index x = {0};
  uint8_t **uses = role_uses(P);
  uint32_t *stamp = calloc(wk->npus, sizeof *stamp);
  int ok = -1;
  if (uses && stamp && !ri_build(&x, wk)) {
    ok = 1;
    for (uint32_t r = 0; r < wk->npus && ok == 1; r++) ok = p2p_rank(P, &x, uses, stamp, r);
    if (ok == 1 && p2p_keys(P, &x)) ok = -1;
  }
  for (uint32_t c = 0; uses && c < wk->n_cls; c++) free(uses[c]);
  free(uses);
  free(stamp);
  hmap_free(&x);
  return ok;
}

/* ---- collectives ---- */

/* The NPUs of one ring: members[k], or base + k * stride. */
typedef struct ring {
  const uint32_t *members;
  uint32_t n, base, stride;
} ring;

static uint32_t ring_at(const ring *g, uint64_t k) {
  k %= g->n;
  return g->members ? g->members[k] : g->base + (uint32_t)k * g->stride;
}

/* Offsets (positions ahead) an algorithm's phase sends to on a ring of n;
 * the ones it receives from are the same offsets behind. */
static int algo_offsets(plan_ctx *P, const sim_algo *a, uint32_t n, uint8_t *off) {
  memset(off, 0, n);
  switch (a->kind) {
    case ALGO_RING: off[1 % n] = off[(n - 1) % n] = 1; return 1;
    case ALGO_DIRECT: memset(off + 1, 1, n - 1); return 1;
    case ALGO_HALVING_DOUBLING:
      for (uint64_t d = 1; d < n; d *= 2) off[d % n] = off[(n - d % n) % n] = 1;
      return 1;
    default: return no(P, "the double binary tree gives the members of a ring different roles");
  }
}

/* Every member of g sends and receives at each offset with one
 * signature; sigs receives them, two per offset (to, from). */
static int ring_uniform(plan_ctx *P, const ring *g, const uint8_t *off, net_sig *sigs, const char *what) {
  for (uint32_t k = 1; k < g->n; k++) {
    if (!off[k]) continue;
    if ((P->work += g->n) > SYM_WORK) return no(P, "the rings are too large to check their symmetry");
    net_sig to = sig(P, ring_at(g, 0), ring_at(g, k)), from = sig(P, ring_at(g, k), ring_at(g, 0));
    for (uint32_t i = 1; i < g->n; i++)
      if (!net_sig_eq(sig(P, ring_at(g, i), ring_at(g, i + k)), to) || !net_sig_eq(sig(P, ring_at(g, i + k), ring_at(g, i)), from))
        return no(P, "on %s, members %u apart do not all take the same time (as from NPU %u to %u)", what, k,
                  ring_at(g, i), ring_at(g, i + k));
    sigs[2 * k] = to;
    sigs[2 * k + 1] = from;
  }
  return 1;
}

/* A custom algorithm on a ring of members (positions in its order): at
 * every node every position talks to its peer with one signature each way
 * (sigs: two per node, 2 * nodes of them). */
static int custom_uniform(plan_ctx *P, const ring *g, const char *prefix, net_sig **sigs, uint32_t *n_sigs) {
  const custom_sym *y = custom_symmetry(P->s, coll_custom_lib(P->s), prefix, g->n);
  if (!y) return -1;
  if (!y->ok) return no(P, "%s", y->why);
  if ((P->work += (uint64_t)g->n * y->nodes) > SYM_WORK) return no(P, "custom algorithm %s: too large to check", prefix);
  *n_sigs = 2 * y->nodes;
  if (!(*sigs = calloc(*n_sigs ? *n_sigs : 1, sizeof **sigs))) return -1;
  for (uint32_t j = 0; j < y->nodes; j++) {
    if (y->peer[j] == UINT32_MAX) continue; /* compute: at every position */
    net_sig to = sig(P, ring_at(g, 0), ring_at(g, y->peer[j])), from = sig(P, ring_at(g, y->peer[j]), ring_at(g, 0));
    for (uint32_t p = 1; p < g->n; p++) {
      uint32_t q = y->peer[(size_t)p * y->nodes + j];
      if (!net_sig_eq(sig(P, ring_at(g, p), ring_at(g, q)), to) || !net_sig_eq(sig(P, ring_at(g, q), ring_at(g, p)), from))
        return no(P, "custom algorithm %s: positions %u and %u talk at other times than positions 0 and %u", prefix, p, q,
                  y->peer[j]);
    }
    (*sigs)[2 * j] = to;
    (*sigs)[2 * j + 1] = from;
  }
  return 1;
}

/* One group's pattern under one algorithm (or custom prefix), computed once. */
typedef struct gpat {
  struct gpat *next;
  int kind;                /* algorithm kind, or -1 with prefix */
  const char *prefix;
  int ok;
  net_sig *sigs;           /* built-in: two per offset (to, from); custom: two per node */
  uint32_t n_sigs;
  const struct gpat *alike; /* a pattern found equal to this one (every rank of a group compares the same two) */
} gpat;

typedef struct group_cache {
  gpat **pat;              /* per group */
  int32_t *cls;            /* per group: its members' class, -1 mixed, -2 not computed */
} group_cache;

static const sim_algo *group_algo(const sim *s, int type) {
  static const sim_algo ring_algo = {ALGO_RING, 0, 0};
  const sim_coll_impl *im = &s->sys_cfg.impl[type];
  return im->n == 1 ? &im->algo[0] : &ring_algo;
}

/* A ring's pattern: a built-in algorithm's offsets, or a custom one's nodes. */
static int ring_pattern(plan_ctx *P, const ring *g, const char *prefix, const sim_algo *a, net_sig **sigs,
                        uint32_t *n_sigs, const char *what) {
  if (prefix) return custom_uniform(P, g, prefix, sigs, n_sigs);
  uint8_t *off = calloc(g->n ? g->n : 1, 1);
  *n_sigs = 2 * g->n;
  *sigs = calloc(*n_sigs ? *n_sigs : 1, sizeof **sigs);
  int rc = off && *sigs ? algo_offsets(P, a, g->n, off) && ring_uniform(P, g, off, *sigs, what) : -1;
  free(off);
  return rc;
}

static gpat *group_pattern(plan_ctx *P, group_cache *gc, int g, const char *prefix, const sim_algo *a) {
  int kind = prefix ? -1 : a->kind;
  for (gpat *p = gc->pat[g]; p; p = p->next)
    if (p->kind == kind && p->prefix == prefix) return p;
  const sim_group *sg = &P->s->groups.v[g];
  gpat *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->kind = kind;
  p->prefix = prefix;
  p->next = gc->pat[g];
  gc->pat[g] = p;
  /* custom collectives number a group's members in sorted order; the
   * built-in ring takes them as listed */
  ring rg = {prefix ? groups_sorted(P->s, g) : sg->members, sg->n, 0, 0};
  char what[200];
  snprintf(what, sizeof what, "group '%s'", sg->name);
  p->ok = ring_pattern(P, &rg, prefix, a, &p->sigs, &p->n_sigs, what);
  return p->ok < 0 ? NULL : p;
}

static int32_t group_class(plan_ctx *P, group_cache *gc, int g) {
  if (gc->cls[g] != -2) return gc->cls[g];
  const sim_group *sg = &P->s->groups.v[g];
  int32_t c = sg->n ? (int32_t)cls_of(P, sg->members[0]) : -1;
  for (uint32_t i = 1; i < sg->n && c >= 0; i++)
    if ((int32_t)cls_of(P, sg->members[i]) != c) c = -1;
  return gc->cls[g] = c;
}

/* A collective on a proper group, for rank r against its representative. */
static int group_coll(plan_ctx *P, group_cache *gc, int g, int g0, uint32_t r, const char *prefix, const sim_algo *a) {
  const sim_group *sg = &P->s->groups.v[g], *s0 = &P->s->groups.v[g0];
  if (sg->n != s0->n)
    return no(P, "rank %u's group '%s' has %u members, its representative's '%s' %u", r, sg->name, sg->n, s0->name, s0->n);
  if (group_class(P, gc, g) != (int32_t)cls_of(P, r))
    return no(P, "group '%s' has members of other classes than its rank %u's", sg->name, r);
  gpat *p = group_pattern(P, gc, g, prefix, a), *p0 = group_pattern(P, gc, g0, prefix, a);
  if (!p || !p0) return -1;
  if (!p->ok || !p0->ok) return 0; /* why is set */
  if (p == p0 || p->alike == p0) return 1;
  for (uint32_t k = 0; k < p->n_sigs; k++)
    if (!net_sig_eq(p->sigs[k], p0->sigs[k]))
      return no(P, "group '%s' (rank %u) takes other times than its representative's group '%s'", sg->name, r, s0->name);
  p->alike = p0;
  return 1;
}

/* The global plan: every NPU in one class along each dimension a phase
 * runs on, and each dimension's rings alike at their algorithm's offsets. */
typedef struct global_cache {
  int8_t dim_ok[SIM_MAX_DIMS][4]; /* per dimension and algorithm kind: 0 unknown, 1 yes, -1 no */
  int8_t dim_cls[SIM_MAX_DIMS];   /* classes constant along the dimension */
} global_cache;

static int dim_classes(plan_ctx *P, global_cache *gcl, int d) {
  if (gcl->dim_cls[d]) return gcl->dim_cls[d] > 0;
  const sim *s = P->s;
  gcl->dim_cls[d] = 1;
  for (uint32_t x = 0; x < s->npus; x++)
    if (sim_coord(s, x, d) + 1 < s->dim_npus[d] && cls_of(P, x) != cls_of(P, x + s->offset[d])) {
      gcl->dim_cls[d] = -1;
      return no(P, "NPUs %u and %u are neighbours along dimension %d but in different classes", x, x + s->offset[d], d);
    }
  return 1;
}

static int global_dim(plan_ctx *P, global_cache *gcl, int d, const sim_algo *a) {
  if (!dim_classes(P, gcl, d)) return 0;
  int8_t *ok = &gcl->dim_ok[d][a->kind & 3];
  if (*ok) return *ok > 0 ? 1 : 0;
  uint32_t n = P->s->dim_npus[d];
  uint8_t *off = calloc(n, 1);
  net_sig *sigs = calloc(2 * (size_t)n, sizeof *sigs);
  int rc = -1;
  if (off && sigs) {
    char what[64];
    snprintf(what, sizeof what, "dimension %d", d);
    ring rg = {NULL, n, 0, P->s->offset[d]};
    rc = algo_offsets(P, a, n, off) && ring_uniform(P, &rg, off, sigs, what);
    *ok = rc ? 1 : -1;
  }
  free(off);
  free(sigs);
  return rc;
}

/* Every NPU in order: one ring of them all (custom without a group, or
 * the one* algorithms); needs a single class. */
static int global_ring(plan_ctx *P, const char *prefix, const sim_algo *a) {
  if (P->wk->n_cls != 1) return no(P, "a collective over every NPU in one ring needs every rank in one class");
  ring rg = {NULL, P->s->npus, 0, 1};
  net_sig *sigs = NULL;
  uint32_t n_sigs;
  int rc = ring_pattern(P, &rg, prefix, a, &sigs, &n_sigs, "the ring of every NPU");
  free(sigs);
  return rc;
}

/* What makes two collective nodes of a template need the same checks. */
typedef struct coll_kind {
  uint32_t coll, pg, involved, n_involved;
  const char *prefix;
} coll_kind;

static int global_coll(plan_ctx *P, global_cache *gcl, const coll_kind *ck) {
  const sim *s = P->s;
  const sim_coll_impl *im = &s->sys_cfg.impl[ck->coll];
  if (ck->prefix || (im->n && im->algo[0].one)) return global_ring(P, ck->prefix, &im->algo[0]);
  for (int d = 0; d < im->n; d++) {
    int inv = ck->n_involved == 0 || (d < (int)ck->n_involved && ((ck->involved >> d) & 1));
    if (s->dim_npus[d] < 2 || !inv) continue;
    int rc = global_dim(P, gcl, d, &im->algo[d]);
    if (rc <= 0) return rc;
  }
  return 1;
}

static int kind_eq(const coll_kind *a, const coll_kind *b) {
  return a->coll == b->coll && a->pg == b->pg && a->involved == b->involved && a->n_involved == b->n_involved &&
         a->prefix == b->prefix;
}

typedef struct kind_key {
  const coll_kind *v, *ck;
} kind_key;

static int kind_seen(const void *ctx, uint32_t i) {
  const kind_key *q = ctx;
  return kind_eq(&q->v[i], q->ck);
}

/* The distinct kinds of a template's collectives, in node order; NULL
 * when out of memory. */
static coll_kind *coll_kinds(plan_ctx *P, const wl_class *k, uint32_t *count) {
  uint32_t colls = 0, n = 0;
  for (uint32_t i = 0; i < k->n; i++) colls += k->nodes[i].kind == WK_COLL;
  coll_kind *v = malloc((colls ? colls : 1) * sizeof *v);
  hmap seen = {0}; /* hash -> kind */
  if (v && hmap_reserve(&seen, colls)) free(v), v = NULL;
  for (uint32_t i = 0; v && i < k->n; i++) {
    const wl_node *x = &k->nodes[i];
    if (x->kind != WK_COLL) continue;
    coll_kind ck = {x->coll, x->u.cl.pg, x->u.cl.involved_dim, x->n_involved, coll_custom_prefix(P->s, x->coll, x->id)};
    uint64_t h = hmap_mix((((uint64_t)ck.coll * 31 + ck.pg) * 131 + ck.involved) ^ (uintptr_t)ck.prefix ^ (uint64_t)ck.n_involved << 48);
    if (hmap_find(&seen, h, kind_seen, &(kind_key){v, &ck}) != HMAP_NONE) continue;
    v[n] = ck;
    if (hmap_add(&seen, h, n++)) free(v), v = NULL; /* reserved: cannot fail */
  }
  hmap_free(&seen);
  *count = n;
  return v;
}

/* A class's collectives, one of each kind, for every rank of the class. */
static int class_colls(plan_ctx *P, group_cache *gc, global_cache *gcl, uint32_t c, const uint32_t *members, uint32_t nm) {
  const wl_class *k = &P->wk->cls[c];
  uint32_t nk;
  coll_kind *kinds = coll_kinds(P, k, &nk);
  if (!kinds) return -1;
  int rc = 1;
  for (uint32_t i = 0; i < nk && rc == 1; i++) {
    const coll_kind *ck = &kinds[i];
    const sim_algo *a = group_algo(P->s, (int)ck->coll);
    int32_t g0 = wl_group(P->s, k->rep, ck->pg);
    for (uint32_t m = 0; m < nm && rc == 1; m++) {
      uint32_t r = members[m];
      int32_t g = wl_group(P->s, r, ck->pg);
      if (g <= COLL_NOT_MEMBER || g0 <= COLL_NOT_MEMBER) {
        uint32_t who = g <= COLL_NOT_MEMBER ? r : k->rep;
        rc = no(P, "rank %u is not a member of its group '%s'", who, wl_pg_name(P->s, who, ck->pg));
      } else if ((g == COLL_GROUP_ALL) != (g0 == COLL_GROUP_ALL)) {
        rc = no(P, "rank %u's group '%s' spans every NPU and its representative's does not, or the other way", r,
                wl_pg_name(P->s, r, ck->pg));
      } else if (g == COLL_GROUP_ALL) {
        rc = m ? 1 : global_coll(P, gcl, ck); /* the same for every rank */
      } else {
        rc = group_coll(P, gc, g, g0, r, ck->prefix, a);
      }
    }
  }
  free(kinds);
  return rc;
}

static int coll_check(plan_ctx *P) {
  const chakra_sim_workload *wk = P->wk;
  if (P->s->sys_cfg.replay_only) return 1; /* no collective runs */
  size_t ng = (size_t)P->s->groups.n;
  group_cache gc = {calloc(ng ? ng : 1, sizeof *gc.pat), malloc((ng ? ng : 1) * sizeof *gc.cls)};
  global_cache gcl;
  memset(&gcl, 0, sizeof gcl);
  /* the ranks of each class, in rank order */
  uint32_t *start = calloc((size_t)wk->n_cls + 1, sizeof *start), *members = malloc(wk->npus * sizeof *members);
  int ok = -1;
  if (gc.pat && gc.cls && start && members) {
    for (size_t g = 0; g < ng; g++) gc.cls[g] = -2;
    for (uint32_t r = 0; r < wk->npus; r++) start[cls_of(P, r) + 1]++;
    for (uint32_t c = 0; c < wk->n_cls; c++) start[c + 1] += start[c];
    for (uint32_t r = 0; r < wk->npus; r++) members[start[cls_of(P, r)]++] = r;
    for (uint32_t c = wk->n_cls; c > 0; c--) start[c] = start[c - 1];
    start[0] = 0;
    ok = 1;
    for (uint32_t c = 0; c < wk->n_cls && ok == 1; c++) ok = class_colls(P, &gc, &gcl, c, members + start[c], start[c + 1] - start[c]);
  }
  for (size_t g = 0; gc.pat && g < ng; g++)
    for (gpat *p = gc.pat[g], *nx; p; p = nx) {
      nx = p->next;
      free(p->sigs);
      free(p);
    }
  free(gc.pat);
  free(gc.cls);
  free(start);
  free(members);
  return ok;
}

/* ---- the plan ---- */

static int configuration_allows(plan_ctx *P, int mode, int logs_events) {
  const sim *s = P->s;
  if (mode == SYM_OFF) return no(P, "--symmetry=off");
  if (P->wk->n_cls == s->npus) return no(P, "every rank is a class of its own");
  if (s->opt.aware) return no(P, "the congestion-aware model: links are shared by all NPUs (not shown symmetric)");
  if (s->mem_cfg.type == MEM_POOL || s->mem_cfg.type == MEM_PER_NODE) return no(P, "remote memory is shared between NPUs");
  if (logs_events) return no(P, "trace-enabled: the log holds every rank's events");
  return 1;
}

int sym_plan(sim *s, int mode, int logs_events, char *why, size_t n) {
  plan_ctx P = {s, NULL, why, n, 0, s->wk};
  int ok = configuration_allows(&P, mode, logs_events);
  if (ok <= 0) return ok;
  struct sym *y = calloc(1, sizeof *y);
  if (!y || !(y->rep = malloc(s->npus * sizeof *y->rep))) {
    free(y);
    return chakra_error_set(s->err, CHAKRA_ENOMEM, "out of memory");
  }
  P.y = y;
  for (uint32_t r = 0; r < s->npus; r++) y->rep[r] = wk_class(s->wk, r)->rep;
  y->rx_mask = SYM_RX - 1;
  if (!(y->rx = calloc(SYM_RX, sizeof *y->rx))) ok = -1;
  if (ok == 1) ok = p2p_check(&P);
  if (ok == 1) ok = coll_check(&P);
  if (ok == 1) {
    s->sym = y;
    snprintf(why, n, "%u NPUs simulated, one per rank class, for %u ranks", s->wk->n_cls, s->npus);
    return 1;
  }
  s->sym = y;
  sym_free(s);
  return ok < 0 ? chakra_error_set(s->err, CHAKRA_ENOMEM, "out of memory") : 0;
}

void sym_free(sim *s) {
  struct sym *y = s->sym;
  if (!y) return;
  free(y->rep);
  free(y->rx);
  free(y->koff);
  free(y->ksrc);
  free(y->kdst);
  free(y);
  s->sym = NULL;
}

void sym_p2p_keys(const sim *s, uint32_t rank, const uint32_t **ksrc, const uint32_t **kdst) {
  *ksrc = *kdst = NULL;
  if (!s->sym || !s->sym->ksrc) return;
  uint32_t off = s->sym->koff[s->wk->cls_of[rank]];
  *ksrc = s->sym->ksrc + off;
  *kdst = s->sym->kdst + off;
}

/* ---- during the run ---- */

void sym_abandon(sim *s, const char *fmt, ...) {
  struct sym *y = s->sym;
  if (y->abandoned) return;
  y->abandoned = 1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(y->why, sizeof y->why, fmt, ap);
  va_end(ap);
  s->q.oom = 1; /* stops the loop; the run is redone with every NPU */
}

void sym_tie(sim *s, const char *what) { sym_abandon(s, "at %llu ns %s", (unsigned long long)s->q.now, what); }

void sym_check_delay(sim *s, uint64_t got, uint64_t want, uint32_t src, uint32_t dst, uint32_t ksrc, uint32_t kdst) {
  if (got != want)
    sym_abandon(s, "a message from %u to %u takes %llu ns, the one it stands for (%u to %u) %llu ns", src, dst,
                (unsigned long long)got, ksrc, kdst, (unsigned long long)want);
}

void sym_recv_posted(sim *s, uint32_t dst, uint32_t src, uint64_t tag, uint64_t bytes) {
  struct sym *y = s->sym;
  uint64_t t1 = s->q.now + 1, h = (((uint64_t)dst << 32 | src) * 0x9e3779b97f4a7c15ull) ^ (tag * 0xc2b2ae3d27d4eb4full) ^ bytes;
  if (y->rx_t1 != t1) y->rx_t1 = t1, y->rx_n = 0;
  /* this instant's entries were each placed past ones of this instant
   * only, so a probe ends at the first entry of another instant */
  size_t at = (size_t)(h >> 17) & y->rx_mask;
  for (; y->rx[at].t1 == t1; at = (at + 1) & y->rx_mask)
    if (y->rx[at].h == h) {
      /* equal hashes of two keys only make the check stricter */
      if (y->rx[at].u != s->q.unit) sym_tie(s, "two events of one instant posted receives of one key");
      return;
    }
  if (++y->rx_n > SYM_RX / 2) {
    sym_abandon(s, "at %llu ns more than %u receive keys were posted at one instant", (unsigned long long)s->q.now, SYM_RX / 2);
    return;
  }
  y->rx[at] = (sym_rx){h, t1, s->q.unit};
}
