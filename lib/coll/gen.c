/* gen.c - ring, direct, halving-doubling, tree and double binary tree as
 * per-rank DAGs (collectives.md section 2); see include/chakra/coll.h.
 *
 * Only true dependencies: receives are posted at once, a reduction waits
 * for its receive (and for the previous reduction into the same block), a
 * send waits for whatever produced the data it sends. Block b of a buffer
 * of S bytes over n ranks is floor(S / n) bytes, the last one also taking
 * the remainder. */
#include "gen.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"

static const char *const type_names[] = {"allreduce", "allgather", "reducescatter", "alltoall"};
static const char *const algo_names[] = {"ring", "direct", "hd", "tree", "dbt"};

int chakra_coll_type_parse(const char *s) {
  char b[32];
  size_t n = 0;
  for (; *s && n < sizeof b - 1; s++)
    if (*s != '_' && *s != '-') b[n++] = (char)tolower((unsigned char)*s);
  if (*s) return -1;
  b[n] = 0;
  for (int t = 0; t < CHAKRA_COLL_TYPES; t++)
    if (strcmp(b, type_names[t]) == 0) return t;
  if (strcmp(b, "ar") == 0) return CHAKRA_COLL_ALLREDUCE;
  if (strcmp(b, "ag") == 0) return CHAKRA_COLL_ALLGATHER;
  if (strcmp(b, "rs") == 0) return CHAKRA_COLL_REDUCESCATTER;
  if (strcmp(b, "a2a") == 0) return CHAKRA_COLL_ALLTOALL;
  return -1;
}

const char *chakra_coll_type_name(chakra_coll_type t) {
  return (unsigned)t < CHAKRA_COLL_TYPES ? type_names[t] : "?";
}

int chakra_coll_algo_parse(const char *s) {
  for (int a = 0; a < CHAKRA_ALGO_COUNT; a++)
    if (strcmp(s, algo_names[a]) == 0) return a;
  if (strcmp(s, "halvingDoubling") == 0 || strcmp(s, "halving-doubling") == 0) return CHAKRA_ALGO_HD;
  if (strcmp(s, "doubleBinaryTree") == 0 || strcmp(s, "double-binary-tree") == 0) return CHAKRA_ALGO_DBT;
  return -1;
}

const char *chakra_coll_algo_name(chakra_coll_algo a) {
  return (unsigned)a < CHAKRA_ALGO_COUNT ? algo_names[a] : "?";
}

static int is_pow2(uint32_t n) { return n && (n & (n - 1)) == 0; }

int chakra_coll_gen_check(const chakra_coll_gen_options *o, chakra_error *err) {
  if ((unsigned)o->coll >= CHAKRA_COLL_TYPES) return chakra_error_set(err, CHAKRA_EINVAL, "unknown collective");
  if ((unsigned)o->algo >= CHAKRA_ALGO_COUNT) return chakra_error_set(err, CHAKRA_EINVAL, "unknown algorithm");
  const char *a = algo_names[o->algo], *c = type_names[o->coll];
  if (o->ranks < 2) return chakra_error_set(err, CHAKRA_EINVAL, "%s: needs at least 2 ranks", a);
  if (o->ranks > 1u << 24) return chakra_error_set(err, CHAKRA_EINVAL, "%s: at most %u ranks", a, 1u << 24);
  if (o->algo != CHAKRA_ALGO_DIRECT && o->coll == CHAKRA_COLL_ALLTOALL)
    return chakra_error_set(err, CHAKRA_EINVAL, "%s does not implement %s (use direct)", a, c);
  if ((o->algo == CHAKRA_ALGO_TREE || o->algo == CHAKRA_ALGO_DBT) && o->coll != CHAKRA_COLL_ALLREDUCE)
    return chakra_error_set(err, CHAKRA_EINVAL, "%s implements allreduce only, not %s", a, c);
  if ((o->algo == CHAKRA_ALGO_HD || o->algo == CHAKRA_ALGO_TREE || o->algo == CHAKRA_ALGO_DBT) && !is_pow2(o->ranks))
    return chakra_error_set(err, CHAKRA_EINVAL, "%s needs a power-of-two rank count, not %u", a, o->ranks);
  uint32_t chunks = o->chunks ? o->chunks : 1;
  if (chunks > 32767) return chakra_error_set(err, CHAKRA_EINVAL, "chunks %u: at most 32767", chunks);
  if (o->algo == CHAKRA_ALGO_RING && 2ull * o->ranks > (1u << COLL_CHUNK_TAG_SHIFT))
    return chakra_error_set(err, CHAKRA_EINVAL, "ring: at most %u ranks (tags are 16-bit steps)", 1u << (COLL_CHUNK_TAG_SHIFT - 1));
  if (o->reduce_bw < 0) return chakra_error_set(err, CHAKRA_EINVAL, "reduce_bw must not be negative");
  if (o->size > CHAKRA_COLL_MAX_SIZE)
    return chakra_error_set(err, CHAKRA_EINVAL, "size %llu: at most %llu (comm_size is a 64-bit signed field)",
                            (unsigned long long)o->size, (unsigned long long)CHAKRA_COLL_MAX_SIZE);
  uint64_t per = o->size / chunks;
  if (o->coll != CHAKRA_COLL_ALLGATHER && per < o->ranks)
    return chakra_error_set(err, CHAKRA_EINVAL, "size %llu: each of the %u pipelines needs at least one byte per rank (%u)",
                            (unsigned long long)o->size, chunks, o->ranks);
  if (o->coll == CHAKRA_COLL_ALLGATHER && per == 0)
    return chakra_error_set(err, CHAKRA_EINVAL, "size %llu: smaller than chunks %u", (unsigned long long)o->size, chunks);
  return 0;
}

/* One pipeline of one rank. */
typedef struct gctx {
  coll_dag *d;
  uint32_t n, r;
  uint64_t size;   /* this pipeline's bytes */
  uint64_t m, rem; /* block size and the last block's extra */
  int32_t tag0;
  double bw;
  uint32_t step0;  /* label offset of this pipeline */
} gctx;

static inline uint64_t blk(const gctx *g, uint32_t b) { return g->m + (b == g->n - 1 ? g->rem : 0); }
static inline uint32_t mod(const gctx *g, int64_t x) { return (uint32_t)(((x % g->n) + g->n) % g->n); }

static uint32_t send(gctx *g, uint32_t to, uint64_t bytes, int32_t tag, uint32_t step, uint32_t dep) {
  uint32_t i = coll_dag_add(g->d, COLL_SEND, (int32_t)to, g->tag0 + tag, bytes, 0, g->step0 + step);
  coll_dag_dep(g->d, dep);
  return i;
}

static uint32_t recv(gctx *g, uint32_t from, uint64_t bytes, int32_t tag, uint32_t step) {
  return coll_dag_add(g->d, COLL_RECV, (int32_t)from, g->tag0 + tag, bytes, 0, g->step0 + step);
}

/* A reduction of what rv delivered, after `after` too (only with a
 * reduction bandwidth; callers depend on the receives otherwise). */
static uint32_t reduce(gctx *g, uint32_t rv, uint64_t bytes, uint32_t step, uint32_t after) {
  uint32_t i = coll_dag_add(g->d, COLL_REDUCE, -1, 0, bytes, coll_comp_ns(COLL_REDUCE, bytes, g->bw), g->step0 + step);
  coll_dag_dep(g->d, rv);
  coll_dag_dep(g->d, after);
  return i;
}

static uint32_t ring_rs(gctx *g) {
  uint32_t n = g->n, r = g->r, next = (r + 1) % n, prev = (r + n - 1) % n, last = COLL_NONE;
  for (uint32_t k = 0; k + 1 < n; k++) {
    send(g, next, blk(g, mod(g, (int64_t)r - k)), (int32_t)k, k, last);
    uint64_t b = blk(g, mod(g, (int64_t)r - k - 1));
    uint32_t rv = recv(g, prev, b, (int32_t)k, k);
    last = g->bw > 0 ? reduce(g, rv, b, k, COLL_NONE) : rv;
  }
  return last;
}

/* n-1 forwarding steps; step s0 + k, the first sending block first_blk. */
static void ring_ag(gctx *g, uint32_t first_dep, int64_t first_blk, uint32_t s0) {
  uint32_t n = g->n, r = g->r, next = (r + 1) % n, prev = (r + n - 1) % n, last = first_dep;
  for (uint32_t k = 0; k + 1 < n; k++) {
    send(g, next, blk(g, mod(g, first_blk - k)), (int32_t)(s0 + k), s0 + k, last);
    last = recv(g, prev, blk(g, mod(g, first_blk - k - 1)), (int32_t)(s0 + k), s0 + k);
  }
}

static void gen_ring(gctx *g, chakra_coll_type t) {
  if (t == CHAKRA_COLL_ALLGATHER) {
    ring_ag(g, COLL_NONE, g->r, 0);
    return;
  }
  uint32_t last = ring_rs(g);
  if (t == CHAKRA_COLL_ALLREDUCE) ring_ag(g, last, (int64_t)g->r + 1, g->n - 1);
}

static void gen_direct(gctx *g, chakra_coll_type t) {
  uint32_t n = g->n, r = g->r, last = COLL_NONE;
  int reduce_phase = t == CHAKRA_COLL_ALLREDUCE || t == CHAKRA_COLL_REDUCESCATTER;
  for (uint32_t j = 0; j < n; j++)
    if (j != r) send(g, j, t == CHAKRA_COLL_ALLGATHER ? blk(g, r) : blk(g, j), 0, 0, COLL_NONE);
  for (uint32_t j = 0; j < n; j++) {
    if (j == r) continue;
    uint64_t b = t == CHAKRA_COLL_ALLGATHER ? blk(g, j) : blk(g, r);
    uint32_t rv = recv(g, j, b, 0, 0);
    /* reductions into block r are read-modify-writes of one buffer: a chain */
    if (reduce_phase && g->bw > 0) last = reduce(g, rv, b, 0, last);
  }
  if (t != CHAKRA_COLL_ALLREDUCE) return;
  /* Without reductions the gathered block is complete when every receive is:
   * the AG sends then wait on all of them. */
  uint32_t first_recv = COLL_NONE;
  if (!(g->bw > 0)) first_recv = g->d->n - (n - 1);
  for (uint32_t j = 0; j < n; j++) {
    if (j == r) continue;
    send(g, j, blk(g, r), 1, 1, g->bw > 0 ? last : COLL_NONE);
    if (!(g->bw > 0))
      for (uint32_t k = 0; k + 1 < n; k++) coll_dag_dep(g->d, first_recv + k);
  }
  for (uint32_t j = 0; j < n; j++)
    if (j != r) recv(g, j, blk(g, j), 1, 1);
}

/* Bytes of the blocks b = x (mod 2^bits) with equal blocks except the last. */
static uint64_t hd_bytes(const gctx *g, uint32_t x, uint32_t bits) {
  uint32_t cnt = g->n >> bits, mask = (1u << bits) - 1;
  return cnt * g->m + (((g->n - 1) & mask) == (x & mask) ? g->rem : 0);
}

static void gen_hd(gctx *g, chakra_coll_type t) {
  uint32_t n = g->n, r = g->r, L = 0, last = COLL_NONE, step = 0;
  while ((1u << L) < n) L++;
  if (t != CHAKRA_COLL_ALLGATHER) {
    uint32_t prev_comp = COLL_NONE;
    for (uint32_t k = 0; k < L; k++, step++) {
      uint32_t p = r ^ (1u << k);
      send(g, p, hd_bytes(g, p, k + 1), (int32_t)step, step, last);
      uint64_t b = hd_bytes(g, r, k + 1);
      uint32_t rv = recv(g, p, b, (int32_t)step, step);
      if (g->bw > 0) last = prev_comp = reduce(g, rv, b, step, prev_comp);
      else last = rv;
    }
    if (t == CHAKRA_COLL_REDUCESCATTER) return;
  }
  /* Doubling: each send carries every block received so far. */
  uint32_t first = g->d->n, n_recv = 0;
  for (uint32_t kk = L; kk-- > 0; step++) {
    uint32_t p = r ^ (1u << kk);
    uint64_t mine = t == CHAKRA_COLL_ALLGATHER ? (uint64_t)(n >> (kk + 1)) * g->m : hd_bytes(g, r, kk + 1);
    uint64_t theirs = t == CHAKRA_COLL_ALLGATHER ? (uint64_t)(n >> (kk + 1)) * g->m : hd_bytes(g, p, kk + 1);
    send(g, p, mine, (int32_t)step, step, last);
    for (uint32_t j = 0; j < n_recv; j++) coll_dag_dep(g->d, first + 2 * j + 1);
    recv(g, p, theirs, (int32_t)step, step);
    n_recv++;
  }
}

/* In-order numbered perfect binary tree of n - 1 nodes below a top node
 * (simulator.md 6.7.4): "max" puts the top at n - 1, "min" at 0. */
static void tree_links(uint32_t n, int min_tree, uint32_t r, int64_t *parent, int64_t child[2]) {
  child[0] = child[1] = -1;
  uint32_t top = min_tree ? 0 : n - 1, root = (n - 2) / 2 + (min_tree ? 1 : 0);
  if (r == top) {
    *parent = -1;
    child[0] = root;
    return;
  }
  uint32_t i = r - (min_tree ? 1 : 0); /* index in the perfect tree */
  uint32_t h = (uint32_t)__builtin_ctz(i + 1);
  uint32_t off = min_tree ? 1 : 0;
  if (h > 0) {
    child[0] = (int64_t)(i - (1u << (h - 1))) + off;
    child[1] = (int64_t)(i + (1u << (h - 1))) + off;
  }
  if (i == (n - 2) / 2) {
    *parent = top;
    return;
  }
  /* the parent is one level up: i +- 2^h, whichever has height h + 1 */
  uint32_t up = ((i >> (h + 1)) & 1) ? i - (1u << h) : i + (1u << h);
  *parent = (int64_t)up + off;
}

static void tree_allreduce(gctx *g, int min_tree, int32_t tag, uint32_t step) {
  int64_t parent, child[2];
  tree_links(g->n, min_tree, g->r, &parent, child);
  uint32_t last = COLL_NONE, rvs[2] = {COLL_NONE, COLL_NONE};
  for (int c = 0; c < 2; c++) {
    if (child[c] < 0) continue;
    uint32_t rv = recv(g, (uint32_t)child[c], g->size, tag, step);
    rvs[c] = rv;
    if (g->bw > 0) last = reduce(g, rv, g->size, step, last);
  }
  uint32_t have = last; /* the reduced data, or (no COMP) both receives */
  if (parent >= 0) {
    send(g, (uint32_t)parent, g->size, tag, step, have);
    if (!(g->bw > 0) && rvs[1] != COLL_NONE) coll_dag_dep(g->d, rvs[1]);
    if (!(g->bw > 0) && rvs[0] != COLL_NONE) coll_dag_dep(g->d, rvs[0]);
    have = recv(g, (uint32_t)parent, g->size, tag + 1, step + 1);
  }
  for (int c = 0; c < 2; c++) {
    if (child[c] < 0) continue;
    send(g, (uint32_t)child[c], g->size, tag + 1, step + 1, parent >= 0 || g->bw > 0 ? have : COLL_NONE);
    if (parent < 0 && !(g->bw > 0))
      for (int k = 0; k < 2; k++) coll_dag_dep(g->d, rvs[k]);
  }
}

static void gen_one(gctx *g, const chakra_coll_gen_options *o) {
  switch (o->algo) {
    case CHAKRA_ALGO_RING: gen_ring(g, o->coll); break;
    case CHAKRA_ALGO_DIRECT: gen_direct(g, o->coll); break;
    case CHAKRA_ALGO_HD: gen_hd(g, o->coll); break;
    case CHAKRA_ALGO_TREE: tree_allreduce(g, 0, 0, 0); break;
    case CHAKRA_ALGO_DBT: {
      uint64_t whole = g->size, half = whole / 2;
      g->size = half;
      tree_allreduce(g, 0, 0, 0);
      g->size = whole - half;
      tree_allreduce(g, 1, 2, 2);
      g->size = whole;
      break;
    }
    default: break;
  }
}

void coll_gen_rank(coll_dag *d, const chakra_coll_gen_options *o, uint32_t r) {
  coll_dag_clear(d);
  uint32_t chunks = o->chunks ? o->chunks : 1;
  uint64_t per = o->size / chunks;
  for (uint32_t c = 0; c < chunks; c++) {
    gctx g = {d, o->ranks, r, per + (c == chunks - 1 ? o->size - per * chunks : 0), 0, 0,
              (int32_t)(c << COLL_CHUNK_TAG_SHIFT), o->reduce_bw, 0};
    g.step0 = chunks > 1 ? c << COLL_CHUNK_TAG_SHIFT : 0;
    if (o->coll == CHAKRA_COLL_ALLGATHER) {
      g.m = g.size;
    } else {
      g.m = g.size / g.n;
      g.rem = g.size - g.m * g.n;
    }
    gen_one(&g, o);
  }
}

int64_t coll_gen_gather_step(const chakra_coll_gen_options *o) {
  uint32_t L = 0;
  while ((1u << L) < o->ranks) L++;
  if (o->coll == CHAKRA_COLL_ALLTOALL) return -1;
  if (o->coll == CHAKRA_COLL_ALLGATHER) return 0;
  switch (o->algo) {
    case CHAKRA_ALGO_RING: return (int64_t)o->ranks - 1;
    case CHAKRA_ALGO_DIRECT: return 1;
    case CHAKRA_ALGO_HD: return L;
    default: return -1;
  }
}

int64_t coll_gen_tag_span(const chakra_coll_gen_options *o) {
  uint32_t chunks = o->chunks ? o->chunks : 1, L = 0;
  while ((1u << L) < o->ranks) L++;
  int64_t per;
  switch (o->algo) {
    case CHAKRA_ALGO_RING: per = 2 * (int64_t)o->ranks - 2; break;
    case CHAKRA_ALGO_DIRECT: per = 2; break;
    case CHAKRA_ALGO_HD: per = 2 * (int64_t)L; break;
    case CHAKRA_ALGO_TREE: per = 2; break;
    default: per = 4; break;
  }
  return chunks > 1 ? ((int64_t)(chunks - 1) << COLL_CHUNK_TAG_SHIFT) + per : per;
}

int coll_gen_equivariant_rule(const chakra_coll_gen_options *o) {
  if (o->algo != CHAKRA_ALGO_RING) return 0;
  if (o->coll == CHAKRA_COLL_ALLGATHER) return 1; /* every block is the whole input */
  uint32_t chunks = o->chunks ? o->chunks : 1;
  uint64_t per = o->size / chunks, last = o->size - per * (chunks - 1);
  return per % o->ranks == 0 && last % o->ranks == 0; /* no block larger than the others */
}

int coll_gen_equivariant_by_dags(const chakra_coll_gen_options *o, coll_dag *a, coll_dag *b) {
  coll_gen_rank(a, o, 0);
  int same = 1;
  for (uint32_t r = 1; same && r < o->ranks; r++) {
    coll_gen_rank(b, o, r);
    if (a->oom || b->oom) return -1;
    same = coll_dag_same_rotated(a, 0, b, r, o->ranks);
  }
  return a->oom ? -1 : same;
}

int coll_gen_equivariant(const chakra_coll_gen_options *o, coll_dag *a, coll_dag *b) {
  return o->ranks <= 64 ? coll_gen_equivariant_by_dags(o, a, b) : coll_gen_equivariant_rule(o);
}

/* One worker's scratch: a DAG and its encoding, reused rank after rank. */
typedef struct gscratch {
  coll_dag d;
  enc_buf buf;
} gscratch;

typedef struct gjob {
  const chakra_coll_gen_options *o;
  const coll_meta *m;
  gscratch *w; /* one per worker */
} gjob;

static int gen_rank(void *ctx, unsigned worker, uint32_t r, coll_set *set, chakra_error *err) {
  gjob *j = ctx;
  gscratch *g = &j->w[worker];
  coll_place pl = {.self = -1, .style = COLL_STYLE_CHAKRA, .names = COLL_NAMES_SHORT};
  coll_gen_rank(&g->d, j->o, r);
  if (g->d.oom) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory generating rank %u", r);
  return coll_set_write_dag(set, r, &g->buf, j->m, &g->d, &pl, err);
}

/* Ranks are independent: worker threads make, encode and write them. */
static int write_ranks(const char *prefix, const chakra_coll_gen_options *o, chakra_error *err) {
  coll_set *set;
  chakra_workload_options wo = {.progress = o->progress, .progress_ctx = o->progress_ctx};
  int rc = coll_set_open(&set, prefix, o->ranks, &wo, err);
  if (rc) return rc;
  uint64_t chunks = o->chunks ? o->chunks : 1, per = o->size / chunks;
  uint64_t last = o->size - per * (chunks - 1);
  coll_meta m = {.version = "1.0.0"};
  coll_meta_str(&m, "producer", o->producer ? o->producer : "chakra-c " CHAKRA_VERSION " coll gen");
  coll_meta_str(&m, "collective", type_names[o->coll]);
  coll_meta_str(&m, "algorithm", algo_names[o->algo]);
  coll_meta_int(&m, "npus", o->ranks);
  coll_meta_int(&m, "size", (int64_t)o->size);
  coll_meta_int(&m, "chunks", (int64_t)chunks);
  /* bytes the last block (of the last pipeline) carries beyond the others */
  if (o->coll != CHAKRA_COLL_ALLGATHER && last % o->ranks) coll_meta_int(&m, "remainder", (int64_t)(last % o->ranks));
  unsigned nt = coll_set_threads(o->threads);
  gjob j = {o, &m, calloc(nt, sizeof *j.w)};
  if (!j.w) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (unsigned t = 0; j.w && t < nt; t++) coll_dag_init(&j.w[t].d);
  if (!rc) rc = coll_set_fill(set, o->threads, gen_rank, &j, err);
  for (unsigned t = 0; j.w && t < nt; t++) {
    coll_dag_free(&j.w[t].d);
    enc_buf_free(&j.w[t].buf);
  }
  free(j.w);
  if (rc) {
    coll_set_abort(set);
    return rc;
  }
  return coll_set_commit(set, err);
}

int chakra_coll_gen(const char *prefix, const chakra_coll_gen_options *o, chakra_error *err) {
  int rc = chakra_coll_gen_check(o, err);
  return rc ? rc : write_ranks(prefix, o, err);
}
