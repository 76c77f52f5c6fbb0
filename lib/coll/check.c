/* check.c - is a set of algorithm ETs sound? (collectives.md section 1);
 * see chakra_coll_check() in include/chakra/coll.h.
 *
 * Each file is loaded, boiled down to kinds, message keys and children,
 * and freed, so a 1,024-rank set costs a few bytes per node. Messages are
 * keyed by (src, dst, tag, size); per key the sends must equal the
 * receives. Completion is a dataflow run with unlimited resources: a send
 * completes once issued, a receive once issued and some issued send of its
 * key is still unclaimed. With equal counts per key, which send a receive
 * claims cannot change whether the set completes, so no timing is needed. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra/coll.h"
#include "chakra/graph.h"
#include "chakra/node.h"
#include "chakra/set.h"
#include "dag.h"
#include "../util/diag.h"
#include "../util/hmap.h"
#include "../util/vec.h"

typedef struct mkey {
  int32_t src, dst, tag;
  uint64_t size;
} mkey;

typedef struct keytab {
  hmap map; /* key -> its index */
  mkey *keys;
  uint32_t *sends, *recvs, *pool;
  size_t n, kcap;
} keytab;

static uint64_t key_hash(const mkey *k) {
  uint64_t h = (uint64_t)(uint32_t)k->src * 0x9e3779b97f4a7c15ull;
  h ^= (uint64_t)(uint32_t)k->dst * 0xc2b2ae3d27d4eb4full + (h << 6);
  h ^= (uint64_t)(uint32_t)k->tag * 0x165667b19e3779f9ull + (h >> 3);
  h ^= k->size * 0x27d4eb2f165667c5ull;
  return h ^ (h >> 29);
}

static int key_eq(const mkey *a, const mkey *b) {
  return a->src == b->src && a->dst == b->dst && a->tag == b->tag && a->size == b->size;
}

typedef struct probe {
  const keytab *t;
  const mkey *k;
} probe;

static int is_key(const void *ctx, uint32_t i) {
  const probe *q = ctx;
  return key_eq(&q->t->keys[i], q->k);
}

/* Index of k, added if new; UINT32_MAX when out of memory. */
static uint32_t keytab_get(keytab *t, const mkey *k) {
  uint64_t h = key_hash(k);
  probe q = {t, k};
  uint32_t i = hmap_find(&t->map, h, is_key, &q);
  if (i != HMAP_NONE) return i;
  if (t->n == t->kcap) {
    size_t kc = vec_next_cap(t->kcap, t->n + 1, 1024, sizeof *t->keys, UINT32_MAX - 1);
    if (!kc || vec_resize(&t->keys, kc, sizeof *t->keys) || vec_resize(&t->sends, kc, sizeof *t->sends) ||
        vec_resize(&t->recvs, kc, sizeof *t->recvs))
      return UINT32_MAX;
    t->kcap = kc;
  }
  i = (uint32_t)t->n;
  if (hmap_add(&t->map, h, i)) return UINT32_MAX;
  t->n++;
  t->keys[i] = *k;
  t->sends[i] = t->recvs[i] = 0;
  return i;
}

static void keytab_free(keytab *t) {
  hmap_free(&t->map), free(t->keys), free(t->sends), free(t->recvs), free(t->pool);
}

typedef struct crank {   /* one file, boiled down */
  uint32_t n;
  uint8_t *kind;         /* COLL_SEND, COLL_RECV, COLL_REDUCE (any COMP) */
  uint32_t *key;         /* messages: key index */
  uint64_t *id;
  uint32_t *indeg, *child_off, *children;
} crank;

static void crank_free(crank *c) {
  free(c->kind), free(c->key), free(c->id), free(c->indeg), free(c->child_off), free(c->children);
}

typedef struct cctx {
  const chakra_set *set;
  uint32_t n;
  chakra_diag_fn diag;
  void *ctx;
  uint32_t cur;          /* the file being loaded */
  uint64_t problems;
  keytab keys;
  crank *ranks;
} cctx;

static void report(cctx *c, uint32_t r, int has_node, uint64_t id, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static void report(cctx *c, uint32_t r, int has_node, uint64_t id, const char *fmt, ...) {
  c->problems++;
  chakra_problem p = chakra_diag_on(CHAKRA_SEV_ERROR, chakra_set_rank_name(c->set, r));
  p.has_node = has_node;
  p.node_id = id;
  va_list ap;
  va_start(ap, fmt);
  chakra_diag_emitv(c->diag, c->ctx, p, fmt, ap);
  va_end(ap);
}

/* The graph loader's findings (validate's graph checks: duplicate ids,
 * deps on absent ids or on the node itself, cycles, unreadable attributes),
 * named by the path as given; an error makes the set unsound. */
static void graph_problem(void *ctx, const chakra_problem *gp) {
  cctx *c = ctx;
  chakra_problem p = *gp;
  p.file = chakra_set_rank_name(c->set, c->cur);
  if (p.severity >= CHAKRA_SEV_ERROR) c->problems++;
  if (c->diag) c->diag(c->ctx, &p);
}

/* Loads file r into c->ranks[r], reporting bad nodes (cycles and the other
 * graph defects come from the loader). */
static int load_rank(cctx *c, uint32_t r, chakra_error *err) {
  chakra_graph *g;
  chakra_graph_options go = {.tolerant = 1, .diag = graph_problem, .diag_ctx = c};
  c->cur = r;
  int rc = chakra_set_load_rank(c->set, r, &go, &g, err);
  if (rc) return rc;
  crank *k = &c->ranks[r];
  size_t n = g->n ? g->n : 1, m = g->child_off[g->n] ? g->child_off[g->n] : 1;
  k->n = (uint32_t)g->n;
  k->kind = malloc(n);
  k->key = malloc(n * sizeof *k->key);
  k->id = malloc(n * sizeof *k->id);
  k->indeg = malloc(n * sizeof *k->indeg);
  k->child_off = malloc((n + 1) * sizeof *k->child_off);
  k->children = malloc(m * sizeof *k->children);
  if (!k->kind || !k->key || !k->id || !k->indeg || !k->child_off || !k->children) {
    chakra_graph_free(g);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  for (uint32_t i = 0; i < g->n; i++) {
    const chakra_gnode *x = &g->nodes[i];
    k->id[i] = x->id;
    k->indeg[i] = g->dep_off[i + 1] - g->dep_off[i];
    k->key[i] = UINT32_MAX;
    chakra_node_class cl;
    chakra_node_classify(x, r, c->n, &cl);
    if (cl.kind == CHAKRA_KIND_COMPUTE || cl.kind == CHAKRA_KIND_CPU) {
      k->kind[i] = COLL_REDUCE;
      continue;
    }
    int send = cl.kind == CHAKRA_KIND_SEND;
    if (!send && cl.kind != CHAKRA_KIND_RECV) {
      k->kind[i] = COLL_REDUCE; /* reported; treated as local work */
      report(c, r, 1, x->id, "node type %d: algorithm ETs hold only COMM_SEND, COMM_RECV and COMP nodes", x->type);
      continue;
    }
    k->kind[i] = send ? COLL_SEND : COLL_RECV;
    int32_t peer = send ? x->comm_dst : x->comm_src;
    const char *what = send ? "send" : "receive", *field = send ? "comm_dst" : "comm_src";
    if (cl.problems & CHAKRA_NP_NO_PEER) {
      report(c, r, 1, x->id, "%s without %s", what, field);
      continue;
    }
    if (cl.problems & CHAKRA_NP_NO_COMM_SIZE) {
      report(c, r, 1, x->id, "%s without comm_size", what);
      continue;
    }
    if ((cl.problems & CHAKRA_NP_PEER_RANGE) || (uint32_t)peer == r) {
      report(c, r, 1, x->id, "%s %s %d: expected a rank in 0..%u other than %u", what, field, peer, c->n - 1, r);
      continue;
    }
    mkey key = {send ? (int32_t)r : peer, send ? peer : (int32_t)r, x->comm_tag, x->size};
    uint32_t ki = keytab_get(&c->keys, &key);
    if (ki == UINT32_MAX) {
      chakra_graph_free(g);
      return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    }
    k->key[i] = ki;
    if (send) c->keys.sends[ki]++;
    else c->keys.recvs[ki]++;
  }
  memcpy(k->child_off, g->child_off, (g->n + 1) * sizeof *k->child_off);
  if (g->child_off[g->n]) memcpy(k->children, g->children, g->child_off[g->n] * sizeof *k->children);
  chakra_graph_free(g);
  return 0;
}

/* Names every send or receive beyond its key's counterpart count. */
static void report_unmatched(cctx *c) {
  keytab *t = &c->keys;
  uint32_t *seen_s = calloc(t->n ? t->n : 1, sizeof *seen_s), *seen_r = calloc(t->n ? t->n : 1, sizeof *seen_r);
  if (!seen_s || !seen_r) {
    free(seen_s), free(seen_r);
    report(c, 0, 0, 0, "out of memory naming the unmatched messages");
    return;
  }
  for (uint32_t r = 0; r < c->n; r++) {
    const crank *k = &c->ranks[r];
    for (uint32_t i = 0; i < k->n; i++) {
      uint32_t ki = k->key[i];
      if (ki == UINT32_MAX) continue;
      const mkey *m = &t->keys[ki];
      if (k->kind[i] == COLL_SEND && seen_s[ki]++ >= t->recvs[ki])
        report(c, r, 1, k->id[i], "send (src %d, dst %d, tag %d, %llu B) has no matching receive on rank %d",
               m->src, m->dst, m->tag, (unsigned long long)m->size, m->dst);
      else if (k->kind[i] == COLL_RECV && seen_r[ki]++ >= t->sends[ki])
        report(c, r, 1, k->id[i], "receive (src %d, dst %d, tag %d, %llu B) has no matching send on rank %d",
               m->src, m->dst, m->tag, (unsigned long long)m->size, m->src);
    }
  }
  free(seen_s), free(seen_r);
}

typedef struct wnode { uint32_t r, i; } wnode;

/* The dataflow run; reports the receives every rank is left waiting on. */
static int run_to_completion(cctx *c, chakra_error *err) {
  keytab *t = &c->keys;
  size_t total = 0;
  for (uint32_t r = 0; r < c->n; r++) total += c->ranks[r].n;
  wnode *stack = malloc((total ? total : 1) * sizeof *stack);
  /* parked receives, one list per key (head index into park_next) */
  uint32_t *head = malloc((t->n ? t->n : 1) * sizeof *head);
  wnode *parked = malloc((total ? total : 1) * sizeof *parked);
  uint32_t *park_next = malloc((total ? total : 1) * sizeof *park_next);
  t->pool = calloc(t->n ? t->n : 1, sizeof *t->pool);
  uint8_t *done = NULL;
  size_t *base = malloc((c->n + 1) * sizeof *base);
  if (base) {
    base[0] = 0;
    for (uint32_t r = 0; r < c->n; r++) base[r + 1] = base[r] + c->ranks[r].n;
    done = calloc(total ? total : 1, 1);
  }
  int rc = 0;
  if (!stack || !head || !parked || !park_next || !t->pool || !base || !done) {
    rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    goto out;
  }
  for (size_t k = 0; k < t->n; k++) head[k] = UINT32_MAX;
  size_t sp = 0, np = 0, n_done = 0;
  for (uint32_t r = 0; r < c->n; r++)
    for (uint32_t i = 0; i < c->ranks[r].n; i++)
      if (c->ranks[r].indeg[i] == 0) stack[sp++] = (wnode){r, i};
  while (sp) {
    wnode w = stack[--sp];
    crank *k = &c->ranks[w.r];
    uint32_t ki = k->key[w.i];
    if (k->kind[w.i] == COLL_RECV && ki != UINT32_MAX) {
      if (t->pool[ki] == 0) { /* park until a send of its key */
        parked[np] = w;
        park_next[np] = head[ki];
        head[ki] = (uint32_t)np++;
        continue;
      }
      t->pool[ki]--;
    }
    if (k->kind[w.i] == COLL_SEND && ki != UINT32_MAX) {
      if (head[ki] != UINT32_MAX) { /* hand it straight to a parked receive */
        uint32_t p = head[ki];
        head[ki] = park_next[p];
        t->pool[ki]++;
        stack[sp++] = parked[p];
      } else {
        t->pool[ki]++;
      }
    }
    done[base[w.r] + w.i] = 1;
    n_done++;
    for (uint32_t x = k->child_off[w.i]; x < k->child_off[w.i + 1]; x++)
      if (--k->indeg[k->children[x]] == 0) stack[sp++] = (wnode){w.r, k->children[x]};
  }
  if (n_done < total) {
    uint64_t shown = 0;
    for (uint32_t r = 0; r < c->n; r++) {
      const crank *k = &c->ranks[r];
      for (uint32_t i = 0; i < k->n; i++) {
        if (done[base[r] + i] || k->indeg[i] != 0 || k->kind[i] != COLL_RECV || k->key[i] == UINT32_MAX) continue;
        const mkey *m = &t->keys[k->key[i]];
        report(c, r, 1, k->id[i], "deadlock: receive (src %d, tag %d, %llu B) waits for a send that never issues",
               m->src, m->tag, (unsigned long long)m->size);
        shown++;
      }
    }
    if (!shown) report(c, 0, 0, 0, "deadlock: %zu of %zu nodes never run", total - n_done, total);
  }
out:
  free(stack), free(head), free(parked), free(park_next), free(base), free(done);
  return rc;
}

int chakra_coll_check(char *const *paths, uint32_t n, chakra_diag_fn diag, void *ctx, uint64_t *problems,
                      chakra_error *err) {
  if (problems) *problems = 0;
  if (n == 0) return chakra_error_set(err, CHAKRA_EINVAL, "no algorithm files");
  chakra_set *set;
  int rc = chakra_set_open_files(&set, (const char *const *)paths, n, NULL, err);
  if (rc) return rc;
  rc = chakra_coll_check_set(set, diag, ctx, problems, err);
  chakra_set_close(set);
  return rc;
}

int chakra_coll_check_set(const chakra_set *set, chakra_diag_fn diag, void *ctx, uint64_t *problems,
                          chakra_error *err) {
  uint32_t n = chakra_set_ranks(set);
  cctx c = {.set = set, .n = n, .diag = diag, .ctx = ctx};
  if (problems) *problems = 0;
  c.ranks = calloc(n, sizeof *c.ranks);
  if (!c.ranks) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  int rc = 0;
  for (uint32_t r = 0; !rc && r < n; r++) rc = load_rank(&c, r, err);
  if (!rc) {
    report_unmatched(&c);
    /* a run is only meaningful once the DAGs and the message counts are */
    if (c.problems == 0) rc = run_to_completion(&c, err);
  }
  for (uint32_t r = 0; r < n; r++) crank_free(&c.ranks[r]);
  free(c.ranks);
  keytab_free(&c.keys);
  if (problems) *problems = c.problems;
  return rc;
}
