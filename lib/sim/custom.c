/* custom.c - algorithm ETs as collectives; see custom.h. */
#include "custom.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../coll/dag.h"
#include "../coll/madefor.h"
#include "chakra/build.h"
#include "chakra/coll.h"
#include "chakra/graph.h"
#include "chakra/node.h"
#include "net.h"
#include "stdhash.h"
#include "../util/vec.h"
#include "symmetry.h"

enum { CK_SEND, CK_RECV, CK_COMP };

typedef struct calgo {   /* one algorithm file, as loaded */
  char *prefix;
  uint32_t pos, n;
  uint32_t n_members;    /* the group size its peers were checked against */
  uint8_t *kind;
  uint64_t *id;          /* node ids */
  uint32_t *peer;        /* algorithm rank */
  uint64_t *value;       /* bytes or ns */
  int32_t *tag;
  uint32_t *indeg, *child_off, *children; /* children in the reference's issue order */
  uint32_t *roots, n_roots;               /* dependency-free nodes, in that order */
  coll_madefor made;     /* the collective and size its metadata says it was made for */
} calgo;

typedef struct used {    /* an (algorithm, collective, size) the run has met */
  const char *prefix;
  int type;
  uint64_t size;
} used;

struct custom_lib {
  calgo **v;             /* one allocation each: running collectives point at them */
  custom_sym *syms;      /* symmetry.h: per algorithm and group size */
  size_t n, cap;
  struct crun *running;  /* runs not yet finished (freed with the library) */
  used *used;            /* each checked against what the algorithm was made for, once */
  size_t n_used, cap_used;
};

typedef struct crun {    /* one NPU's run of one collective */
  struct crun *prev, *next; /* custom_lib.running */
  custom_lib *lib;
  const calgo *a;
  uint32_t rank, left;
  uint64_t num, den;     /* every message and compute time scaled by num / den */
  const uint32_t *members;
  uint32_t pos, n_members;  /* this NPU's algorithm rank, of how many */
  const custom_sym *sym;  /* reduced run: who talks to whom at each node (symmetry.h) */
  uint32_t *indeg;
  stdhash ready;         /* the reference's set of dependency-free nodes */
  sym_mark rx;           /* reduced run: who posted receives this instant (symmetry.h) */
  sim_fn done;           /* called when every node has finished */
  void *obj;
  uint64_t arg;
} crun;

int custom_lib_init(sim *s, custom_lib **out) {
  *out = calloc(1, sizeof **out);
  return *out ? 0 : chakra_error_set(s->err, CHAKRA_ENOMEM, "out of memory");
}

static void crun_free(crun *r);

void custom_lib_free(custom_lib *lib) {
  if (!lib) return;
  while (lib->running) crun_free(lib->running);
  for (size_t i = 0; i < lib->n; i++) {
    calgo *a = lib->v[i];
    free(a->prefix), free(a->kind), free(a->id), free(a->peer), free(a->value), free(a->tag);
    free(a->indeg), free(a->child_off), free(a->children), free(a->roots);
    free(a);
  }
  free(lib->v);
  free(lib->used);
  for (custom_sym *y = lib->syms, *nx; y; y = nx) {
    nx = y->next;
    free(y->prefix), free(y->peer), free(y->inv), free(y);
  }
  free(lib);
}

/* The reference's order (stdhash.h): its dependency map gets each node's
 * id, then its dependencies' ids, in file order; the dependency-free nodes
 * are collected by walking that map. Each node's dependants form a set
 * filled in file order, walked when the node finishes. */
static int calgo_order(calgo *a, const chakra_graph *g) {
  stdhash h;
  stdhash_init(&h);
  int rc = 0;
  for (uint32_t i = 0; i < g->n && !rc; i++) {
    rc = stdhash_insert(&h, g->nodes[i].id, i);
    for (uint32_t k = g->dep_off[i]; k < g->dep_off[i + 1] && !rc; k++)
      rc = stdhash_insert(&h, g->nodes[g->deps[k]].id, g->deps[k]);
  }
  a->roots = malloc((g->n ? g->n : 1) * sizeof *a->roots);
  if (!a->roots) rc = -1;
  for (uint32_t e = h.first; !rc && e != STDHASH_NONE; e = h.next[e])
    if (a->indeg[h.val[e]] == 0) a->roots[a->n_roots++] = h.val[e];
  stdhash_free(&h);
  for (uint32_t i = 0; i < g->n && !rc; i++) {
    uint32_t *c = &a->children[a->child_off[i]], nc = a->child_off[i + 1] - a->child_off[i];
    if (nc < 2) continue;
    stdhash_init(&h);
    for (uint32_t j = 0, last = 0; j < nc && !rc; j++) { /* dependants in file order */
      uint32_t next = UINT32_MAX;
      for (uint32_t k = 0; k < nc; k++)
        if ((j == 0 || c[k] > last) && c[k] < next) next = c[k];
      last = next;
      rc = stdhash_insert(&h, g->nodes[next].id, next);
    }
    uint32_t k = 0;
    for (uint32_t e = h.first; !rc && e != STDHASH_NONE; e = h.next[e]) c[k++] = h.val[e];
    stdhash_free(&h);
  }
  return rc;
}

static int calgo_fill(sim *s, calgo *a, const chakra_graph *g, const char *path, uint32_t n_members) {
  a->n = (uint32_t)g->n;
  size_t n = g->n ? g->n : 1, m = g->child_off[g->n] ? g->child_off[g->n] : 1;
  a->kind = malloc(n);
  a->id = malloc(n * sizeof *a->id);
  a->peer = malloc(n * sizeof *a->peer);
  a->value = malloc(n * sizeof *a->value);
  a->tag = malloc(n * sizeof *a->tag);
  a->indeg = malloc(n * sizeof *a->indeg);
  a->child_off = malloc((n + 1) * sizeof *a->child_off);
  a->children = malloc(m * sizeof *a->children);
  if (!a->kind || !a->id || !a->peer || !a->value || !a->tag || !a->indeg || !a->child_off || !a->children)
    return chakra_error_set(s->err, CHAKRA_ENOMEM, "out of memory");
  for (uint32_t i = 0; i < g->n; i++) {
    const chakra_gnode *x = &g->nodes[i];
    a->indeg[i] = g->dep_off[i + 1] - g->dep_off[i];
    a->id[i] = x->id;
    a->tag[i] = x->comm_tag;
    a->value[i] = x->size;
    a->peer[i] = 0;
    chakra_node_class c;
    chakra_node_classify(x, 0, n_members, &c); /* rank unknown here: NOT_OWN is not used */
    if (c.kind == CHAKRA_KIND_COMPUTE || c.kind == CHAKRA_KIND_CPU) {
      a->kind[i] = CK_COMP;
      a->value[i] = x->duration_micros ? x->duration_micros * 1000 : 1;
      continue;
    }
    int send = c.kind == CHAKRA_KIND_SEND;
    if (!send && c.kind != CHAKRA_KIND_RECV)
      return chakra_error_set(s->err, CHAKRA_EINVAL, "%s: node %llu: custom collectives may hold only send, receive and compute nodes",
                              path, (unsigned long long)x->id);
    int32_t peer = c.peer;
    if (c.problems & (CHAKRA_NP_NO_PEER | CHAKRA_NP_NO_COMM_SIZE | CHAKRA_NP_PEER_RANGE))
      return chakra_error_set(s->err, CHAKRA_EINVAL, "%s: node %llu: %s and comm_size must name an algorithm rank in 0..%u and a size",
                              path, (unsigned long long)x->id, send ? "comm_dst" : "comm_src", n_members - 1);
    a->kind[i] = send ? CK_SEND : CK_RECV;
    a->peer[i] = (uint32_t)peer;
  }
  memcpy(a->child_off, g->child_off, (g->n + 1) * sizeof *a->child_off);
  memcpy(a->children, g->children, g->child_off[g->n] * sizeof *a->children);
  return calgo_order(a, g) ? chakra_error_set(s->err, CHAKRA_ENOMEM, "out of memory") : 0;
}

static const calgo *calgo_get(sim *s, custom_lib *lib, const char *prefix, uint32_t pos, uint32_t n_members) {
  /* the same file run by groups of another size is checked again: its
   * peers must be positions of that group */
  for (size_t i = 0; i < lib->n; i++)
    if (lib->v[i]->pos == pos && lib->v[i]->n_members == n_members && strcmp(lib->v[i]->prefix, prefix) == 0)
      return lib->v[i];
  if (VEC_ROOM(lib->v, lib->n, lib->cap, 1)) return NULL;
  size_t plen = strlen(prefix) + 24;
  char *path = malloc(plen);
  calgo *a = calloc(1, sizeof *a);
  if (!path || !a) return free(path), free(a), NULL;
  chakra_rank_path(path, plen, prefix, pos);
  chakra_graph *g;
  int rc = chakra_graph_load(&g, path, NULL, s->err);
  if (rc) {
    chakra_error_prefix(s->err, "custom collective: ");
    free(path);
    free(a);
    return NULL;
  }
  lib->v[lib->n++] = a; /* kept even on error so that it is freed */
  a->prefix = strdup(prefix);
  a->pos = pos;
  a->n_members = n_members;
  coll_madefor_read(g->metadata, &a->made);
  rc = calgo_fill(s, a, g, path, n_members);
  chakra_graph_free(g);
  free(path);
  return rc || !a->prefix ? NULL : a;
}

static void crun_issue(sim *s, crun *r, uint32_t i);

/* Issues every node in the ready set, in its order, emptying it (the
 * reference walks a copy and takes each node out of the set). */
static void crun_issue_ready(sim *s, crun *r) {
  uint32_t n = 0, buf[64], *v = r->ready.n <= 64 ? buf : malloc(r->ready.n * sizeof *v);
  if (!v) {
    s->q.oom = 1;
    return;
  }
  for (uint32_t e = r->ready.first; e != STDHASH_NONE; e = r->ready.next[e]) v[n++] = r->ready.val[e];
  for (uint32_t k = 0; k < n; k++) {
    stdhash_erase(&r->ready, r->a->id[v[k]]);
    crun_issue(s, r, v[k]);
  }
  if (v != buf) free(v);
}

static void crun_free(crun *r) {
  if (r->prev) r->prev->next = r->next;
  else if (r->lib) r->lib->running = r->next;
  if (r->next) r->next->prev = r->prev;
  stdhash_free(&r->ready);
  free(r->indeg);
  free(r);
}

static void crun_node_done(sim *s, void *obj, uint64_t i) {
  crun *r = obj;
  const calgo *a = r->a;
  for (uint32_t k = a->child_off[i]; k < a->child_off[i + 1]; k++)
    if (--r->indeg[a->children[k]] == 0 && stdhash_insert(&r->ready, a->id[a->children[k]], a->children[k])) s->q.oom = 1;
  crun_issue_ready(s, r);
  if (--r->left == 0) {
    sim_fn done = r->done;
    void *o = r->obj;
    uint64_t arg = r->arg;
    crun_free(r);
    done(s, o, arg);
  }
}

static uint32_t crun_npu(const crun *r, uint32_t algo_rank) { return r->members ? r->members[algo_rank] : algo_rank; }

static void crun_issue(sim *s, crun *r, uint32_t i) {
  const calgo *a = r->a;
  uint64_t v = r->num == r->den ? a->value[i] : coll_muldiv(a->value[i], r->num, r->den);
  if (a->kind[i] == CK_COMP) {
    eventq_npu_after(&s->q, r->rank, v ? v : 1, crun_node_done, r, i); /* 1 ns at least, as unscaled */
    return;
  }
  uint32_t peer = crun_npu(r, a->peer[i]);
  /* key of a message to the peer; in a reduced run (symmetry.h: every
   * position runs one ET but for its peers) the one this NPU gets at this
   * node, from the position whose peer it is there */
  uint32_t ks = r->rank, kd = peer;
  if (r->sym) ks = crun_npu(r, r->sym->inv[(size_t)i * r->n_members + r->pos]), kd = r->rank;
  if (a->kind[i] == CK_SEND) {
    net_send(s, r->rank, peer, ks, kd, v, NET_TAG_NATIVE | (uint32_t)a->tag[i], crun_node_done, r, i);
    return;
  }
  if (s->sym) sym_touch_custom(s, &r->rx);
  net_recv(s, r->rank, peer, ks, kd, v, NET_TAG_NATIVE | (uint32_t)a->tag[i], crun_node_done, r, i);
}

/* One warning per (algorithm, collective type, size) that differs from
 * what the algorithm was made for. */
static void warn_made_for(sim *s, custom_lib *lib, const calgo *a, const coll_request *rq) {
  static const int coll_of[SIM_NCOLL] = {CHAKRA_COLL_ALLREDUCE, CHAKRA_COLL_ALLGATHER, CHAKRA_COLL_REDUCESCATTER,
                                         CHAKRA_COLL_ALLTOALL};
  uint64_t other = 0; /* another size it ran */
  for (size_t k = 0; k < lib->n_used; k++) {
    const used *u = &lib->used[k];
    if (strcmp(u->prefix, a->prefix) != 0) continue;
    if (u->type == rq->type && u->size == rq->bytes) return;
    if (!other && u->size != rq->bytes) other = u->size;
  }
  used *v = coll_grow(lib->used, lib->n_used, &lib->cap_used, sizeof *v);
  if (!v) {
    s->q.oom = 1;
    return;
  }
  lib->used = v;
  v[lib->n_used++] = (used){a->prefix, rq->type, rq->bytes};
  char note[320];
  if (!coll_madefor_note(&a->made, coll_of[rq->type], rq->bytes, other, s->opt.custom_as_is, note, sizeof note))
    return;
  sim_warn(s, "%s of %llu bytes (node %llu of rank %u) runs the custom algorithm %s, %s",
           chakra_coll_type_name((chakra_coll_type)coll_of[rq->type]),
           (unsigned long long)rq->bytes, (unsigned long long)rq->node_id, rq->rank, a->prefix, note);
}

void custom_run(sim *s, custom_lib *lib, const char *prefix, const coll_request *rq, const uint32_t *members,
                uint32_t n_members, sim_fn done, void *obj) {
  uint32_t rank = rq->rank, pos = rank;
  uint64_t node_id = rq->node_id, arg = 0;
  if (members) {
    pos = 0;
    while (pos < n_members && members[pos] != rank) pos++;
  }
  const calgo *a = calgo_get(s, lib, prefix, pos, n_members);
  if (!a) {
    if (!s->diag.failed) { /* s->err holds the loader's message; keep it, add the node */
      char why[sizeof s->err->msg];
      snprintf(why, sizeof why, "%s", s->err->msg[0] ? s->err->msg : "out of memory");
      sim_fail(s, s->err->code ? s->err->code : CHAKRA_ENOMEM, "%s (collective node %llu)", why,
               (unsigned long long)node_id);
    }
    return;
  }
  crun *r = calloc(1, sizeof *r);
  uint32_t *indeg = r ? malloc((a->n ? a->n : 1) * sizeof *indeg) : NULL;
  if (!indeg) {
    free(r);
    s->q.oom = 1;
    return;
  }
  memcpy(indeg, a->indeg, a->n * sizeof *indeg);
  *r = (crun){.lib = lib, .next = lib->running, .a = a, .rank = rank, .left = a->n, .members = members,
              .pos = pos, .n_members = n_members, .indeg = indeg, .done = done, .obj = obj, .arg = arg};
  coll_madefor_factor(&a->made, rq->bytes, s->opt.custom_as_is, &r->num, &r->den);
  if (s->sym && (!(r->sym = custom_symmetry(s, lib, prefix, n_members)) || !r->sym->ok)) {
    sym_abandon(s, "custom algorithm %s on %u ranks was not checked", prefix, n_members);
    r->sym = NULL;
  }
  warn_made_for(s, lib, a, rq);
  if (lib->running) lib->running->prev = r;
  lib->running = r;
  stdhash_init(&r->ready);
  if (a->n == 0) {
    crun_free(r);
    done(s, obj, arg);
    return;
  }
  for (uint32_t k = 0; k < a->n_roots; k++)
    if (stdhash_insert(&r->ready, a->id[a->roots[k]], a->roots[k])) s->q.oom = 1;
  crun_issue_ready(s, r);
}

/* ---- symmetry ---- */

/* Whether position p's algorithm is position 0's but for its peers: the
 * same nodes, order, sizes, tags and dependencies. */
static int calgo_alike(const calgo *a, const calgo *b) {
  if (a->n != b->n || a->n_roots != b->n_roots || a->made.coll != b->made.coll || a->made.size != b->made.size) return 0;
  size_t nc = a->child_off[a->n];
  return !memcmp(a->kind, b->kind, a->n) && !memcmp(a->id, b->id, a->n * sizeof *a->id) &&
         !memcmp(a->value, b->value, a->n * sizeof *a->value) && !memcmp(a->tag, b->tag, a->n * sizeof *a->tag) &&
         !memcmp(a->indeg, b->indeg, a->n * sizeof *a->indeg) &&
         !memcmp(a->child_off, b->child_off, (a->n + 1) * sizeof *a->child_off) &&
         !memcmp(a->children, b->children, nc * sizeof *a->children) &&
         !memcmp(a->roots, b->roots, a->n_roots * sizeof *a->roots);
}

/* Position p's ET, or NULL with why set. */
static const calgo *sym_position(sim *s, custom_lib *lib, custom_sym *y, uint32_t p) {
  const calgo *a = calgo_get(s, lib, y->prefix, p, y->n);
  if (!a) snprintf(y->why, sizeof y->why, "custom algorithm %.100s: %.200s", y->prefix, s->err->msg);
  return a;
}

/* Fills y: every position's ET alike, and at every node the positions'
 * peers a permutation of the positions. */
static int sym_fill(sim *s, custom_lib *lib, custom_sym *y) {
  const calgo *a0 = sym_position(s, lib, y, 0);
  if (!a0) return 0;
  y->nodes = a0->n;
  if ((uint64_t)y->nodes * y->n > CUSTOM_SYM_MAX)
    return snprintf(y->why, sizeof y->why, "custom algorithm %s: too large to check its symmetry", y->prefix), 0;
  size_t cells = (size_t)y->nodes * y->n;
  y->peer = malloc((cells ? cells : 1) * sizeof *y->peer);
  y->inv = malloc((cells ? cells : 1) * sizeof *y->inv);
  if (!y->peer || !y->inv) return -1;
  memset(y->inv, 0xff, cells * sizeof *y->inv);
  for (uint32_t p = 0; p < y->n; p++) {
    const calgo *a = sym_position(s, lib, y, p);
    if (!a) return 0;
    if (!calgo_alike(a0, a))
      return snprintf(y->why, sizeof y->why, "custom algorithm %s: position %u's ET is not position 0's but for its peers",
                      y->prefix, p), 0;
    for (uint32_t j = 0; j < y->nodes; j++) {
      uint32_t q = a->kind[j] == CK_COMP ? UINT32_MAX : a->peer[j];
      y->peer[(size_t)p * y->nodes + j] = q;
      if (q == UINT32_MAX) continue;
      uint32_t *inv = &y->inv[(size_t)j * y->n + q];
      if (*inv != UINT32_MAX)
        return snprintf(y->why, sizeof y->why, "custom algorithm %s: at node %llu two positions talk to position %u",
                        y->prefix, (unsigned long long)a->id[j], q), 0;
      *inv = p;
    }
  }
  return 1;
}

const custom_sym *custom_symmetry(sim *s, custom_lib *lib, const char *prefix, uint32_t n) {
  for (custom_sym *y = lib->syms; y; y = y->next)
    if (y->n == n && strcmp(y->prefix, prefix) == 0) return y;
  custom_sym *y = calloc(1, sizeof *y);
  if (!y || !(y->prefix = strdup(prefix))) return free(y), NULL;
  y->n = n;
  y->next = lib->syms;
  lib->syms = y;
  int rc = sym_fill(s, lib, y);
  if (rc < 0) return NULL;
  y->ok = rc;
  return y;
}
