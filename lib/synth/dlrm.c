/* dlrm.c - one DLRM-like training step per rank (chakra gen dlrm); see
 * include/chakra/gen.h and docs/gen.md for the model and every formula.
 *
 * A rank's step is planned as a list of node specs (plan_rank), the same
 * for every rank but for how many tables it holds, then built and written
 * through the workload writer, ranks on worker threads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra/build.h"
#include "chakra/et_def.pb-c.h"
#include "chakra/gen.h"
#include "roofline.h"

#define BAD(...) chakra_error_set(err, CHAKRA_EINVAL, __VA_ARGS__)
#define ULL(x) (unsigned long long)(x)
#define MAX_NPUS (1u << 24)

static const uint64_t default_bottom[] = {512, 256, 128};
static const uint64_t default_top[] = {1024, 1024, 512, 256, 1};

void chakra_gen_dlrm_config_default(chakra_gen_dlrm_config *c) {
  memset(c, 0, sizeof *c);
  c->npus = 8;
  c->batch = 65536;
  c->tables = 26, c->rows = 1000000, c->emb_dim = 128, c->lookups = 1, c->dense_features = 13;
  c->bottom_mlp = default_bottom, c->n_bottom = sizeof default_bottom / sizeof *default_bottom;
  c->top_mlp = default_top, c->n_top = sizeof default_top / sizeof *default_top;
  c->dtype_bytes = 4;
}

/* ---- sizes: saturating arithmetic, checked against int64 at the end ------------------------ */

static uint64_t mul(uint64_t a, uint64_t b) { return b && a > UINT64_MAX / b ? UINT64_MAX : a * b; }
static uint64_t add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
static uint64_t mul3(uint64_t a, uint64_t b, uint64_t c) { return mul(mul(a, b), c); }
static uint64_t mul4(uint64_t a, uint64_t b, uint64_t c, uint64_t d) { return mul(mul3(a, b, c), d); }

/* ---- the plan of one rank -------------------------------------------------------------------- */

enum { SPEC_COMP, SPEC_A2A, SPEC_AR };

typedef struct spec {
  char name[40];
  const char *op;   /* op_type of a compute node */
  int kind;
  uint64_t work;    /* FLOPs, or bytes of a collective */
  uint64_t bytes;   /* compute: bytes read and written */
  int32_t dep[2];   /* indices into the plan, -1 = none */
} spec;

#define MAX_SPECS (10 * CHAKRA_GEN_DLRM_MAX_LAYERS + 8) /* 5 per top layer, 4 per bottom layer, 6 more */

typedef struct plan {
  spec s[MAX_SPECS];
  size_t n;
} plan;

/* name, or "mlp.layer.what" when layer >= 0 */
static int32_t push(plan *p, int kind, const char *op, uint64_t work, uint64_t bytes, int32_t d0, int32_t d1,
                    const char *name, int layer, const char *what) {
  spec *s = &p->s[p->n];
  if (layer < 0) snprintf(s->name, sizeof s->name, "%s", name);
  else snprintf(s->name, sizeof s->name, "%s.%d%s", name, layer, what);
  s->kind = kind, s->op = op, s->work = work, s->bytes = bytes, s->dep[0] = d0, s->dep[1] = d1;
  return (int32_t)p->n++;
}

/* Layer l of an MLP, input width in, output out, b samples: forward
 * 2*b*out*(in+1) FLOPs (matmul, bias, activation), moving its input,
 * weights, bias and output. */
static int32_t mlp_forward(plan *p, const char *name, int l, uint64_t b, uint64_t in, uint64_t out, uint64_t sz,
                           int32_t dep) {
  uint64_t flops = mul3(2, mul(b, out), add(in, 1));
  uint64_t bytes = mul(add(add(mul(b, in), mul(in, out)), add(out, mul(b, out))), sz);
  return push(p, SPEC_COMP, "MLP", flops, bytes, dep, -1, name, l, "");
}

typedef struct mlp_grad {
  int32_t dgrad, wgrad, reduce;
} mlp_grad;

/* Backward of that layer from the gradient at its output (node g):
 * dgrad 2*b*in*out + b*out (the activation's backward), wgrad 2*b*in*out +
 * b*out (the bias gradient), then the all-reduce of its in*out + out
 * gradients. No dgrad for the bottom MLP's first layer (its input is data). */
static mlp_grad mlp_backward(plan *p, const char *name, int l, uint64_t b, uint64_t in, uint64_t out, uint64_t sz,
                             int32_t g, int need_dgrad) {
  uint64_t mm = mul4(2, b, in, out), params = add(mul(in, out), out);
  mlp_grad r = {-1, -1, -1};
  if (need_dgrad)
    r.dgrad = push(p, SPEC_COMP, "MLP_DGRAD", add(mm, mul(b, out)),
                   mul(add(add(mul(b, out), mul(in, out)), mul(b, in)), sz), g, -1, name, l, ".dgrad");
  r.wgrad = push(p, SPEC_COMP, "MLP_WGRAD", add(mm, mul(b, out)),
                 mul(add(add(mul(b, out), mul(b, in)), params), sz), g, -1, name, l, ".wgrad");
  r.reduce = push(p, SPEC_AR, NULL, mul(params, sz), 0, r.wgrad, -1, name, l, ".all_reduce");
  return r;
}

/* SGD on a layer's in*out + out parameters: w -= lr*g, reading w and g,
 * writing w. */
static void mlp_update(plan *p, const char *name, int l, uint64_t in, uint64_t out, uint64_t sz, int32_t dep) {
  uint64_t params = add(mul(in, out), out);
  push(p, SPEC_COMP, "UPDATE", mul(2, params), mul3(3, params, sz), dep, -1, name, l, ".update");
}

static uint64_t width(const uint64_t *list, size_t i, uint64_t first) { return i ? list[i - 1] : first; }

/* The step of a rank holding tr tables. */
static void plan_rank(const chakra_gen_dlrm_config *c, uint64_t tr, plan *p) {
  uint64_t sz = c->dtype_bytes, B = c->batch, b = c->batch / c->npus, T = c->tables, D = c->emb_dim;
  uint64_t L = c->lookups, tmax = (c->tables + c->npus - 1) / c->npus;
  uint64_t pairs = mul(T, T + 1) / 2, top_in = add(D, pairs); /* the dot interaction's features */
  uint64_t touched = mul(B, L) < c->rows ? mul(B, L) : c->rows;
  size_t nb = c->n_bottom, nt = c->n_top;
  p->n = 0;
  /* forward: the lookups and their all-to-all first, so the exchange overlaps the bottom MLP */
  int32_t look = tr ? push(p, SPEC_COMP, "EMBEDDING_LOOKUP", mul4(B, tr, L, D),
                           mul(add(mul4(B, tr, L, D), mul3(B, tr, D)), sz), -1, -1, "emb.lookup", -1, NULL)
                    : -1;
  int32_t a2a = push(p, SPEC_A2A, NULL, mul4(B, tmax, D, sz), 0, look, -1, "emb.all_to_all", -1, NULL);
  int32_t prev = -1;
  for (size_t i = 0; i < nb; i++)
    prev = mlp_forward(p, "bottom_mlp", (int)i, b, width(c->bottom_mlp, i, c->dense_features), c->bottom_mlp[i],
                       sz, prev);
  prev = push(p, SPEC_COMP, "INTERACTION", mul4(2, b, D, pairs),
              mul(add(mul3(b, T + 1, D), mul(b, top_in)), sz), prev, a2a, "interaction", -1, NULL);
  for (size_t i = 0; i < nt; i++)
    prev = mlp_forward(p, "top_mlp", (int)i, b, width(c->top_mlp, i, top_in), c->top_mlp[i], sz, prev);
  /* backward: the top MLP from the loss (the last activation is the sigmoid) */
  mlp_grad top[CHAKRA_GEN_DLRM_MAX_LAYERS], bot[CHAKRA_GEN_DLRM_MAX_LAYERS];
  for (size_t i = nt; i-- > 0;) {
    top[i] = mlp_backward(p, "top_mlp", (int)i, b, width(c->top_mlp, i, top_in), c->top_mlp[i], sz, prev, 1);
    prev = top[i].dgrad;
  }
  int32_t inter = push(p, SPEC_COMP, "INTERACTION_BWD", mul4(4, b, D, pairs),
                       mul(add(mul(b, top_in), mul4(2, b, T + 1, D)), sz), prev, -1, "interaction.bwd", -1, NULL);
  int32_t a2ab = push(p, SPEC_A2A, NULL, mul4(B, tmax, D, sz), 0, inter, -1, "emb.all_to_all.bwd", -1, NULL);
  /* the rows' gradients accumulated (B*L per table), then SGD on the touched rows */
  if (tr)
    push(p, SPEC_COMP, "EMBEDDING_UPDATE", mul3(tr, D, add(mul(B, L), mul(2, touched))),
         mul(add(mul3(B, tr, D), mul4(2, tr, touched, D)), sz), a2ab, -1, "emb.update", -1, NULL);
  prev = inter;
  for (size_t i = nb; i-- > 0;) {
    bot[i] = mlp_backward(p, "bottom_mlp", (int)i, b, width(c->bottom_mlp, i, c->dense_features), c->bottom_mlp[i],
                          sz, prev, i > 0);
    prev = bot[i].dgrad;
  }
  /* the optimizer step once every gradient is reduced */
  for (size_t i = nt; i-- > 0;)
    mlp_update(p, "top_mlp", (int)i, width(c->top_mlp, i, top_in), c->top_mlp[i], sz, top[i].reduce);
  for (size_t i = nb; i-- > 0;)
    mlp_update(p, "bottom_mlp", (int)i, width(c->bottom_mlp, i, c->dense_features), c->bottom_mlp[i], sz,
               bot[i].reduce);
}

static uint64_t tables_of(const chakra_gen_dlrm_config *c, uint32_t rank) {
  return c->tables / c->npus + (rank < c->tables % c->npus); /* contiguous, the remainder to the first ranks */
}

/* ---- checks -------------------------------------------------------------------------------------- */

static int check_list(const uint64_t *v, size_t n, const char *opt, chakra_error *err) {
  if (!v || n < 1 || n > CHAKRA_GEN_DLRM_MAX_LAYERS)
    return BAD("%s: 1 to %d layers", opt, CHAKRA_GEN_DLRM_MAX_LAYERS);
  for (size_t i = 0; i < n; i++)
    if (v[i] < 1) return BAD("%s: layer %zu has width 0 (widths are at least 1)", opt, i + 1);
  return 0;
}

int chakra_gen_dlrm_check(const chakra_gen_dlrm_config *c, chakra_error *err) {
  if (c->npus < 1 || c->npus > MAX_NPUS) return BAD("--npus %u: expected 1 to %u", c->npus, MAX_NPUS);
  if (!c->batch || !c->tables || !c->rows || !c->emb_dim || !c->lookups || !c->dense_features)
    return BAD("--batch, --tables, --rows, --emb-dim, --lookups and --dense-features must be at least 1");
  if (c->batch % c->npus)
    return BAD("--batch %llu is not divisible by --npus %u (each rank takes batch/npus samples)", ULL(c->batch),
               c->npus);
  if (c->tables > UINT32_MAX) return BAD("--tables %llu: at most %u", ULL(c->tables), UINT32_MAX);
  if (!c->dtype_bytes || c->dtype_bytes > 1u << 24) return BAD("--dtype-bytes %u: expected 1 to %u", c->dtype_bytes, 1u << 24);
  int rc = check_list(c->bottom_mlp, c->n_bottom, "--bottom-mlp", err);
  if (!rc) rc = check_list(c->top_mlp, c->n_top, "--top-mlp", err);
  if (rc) return rc;
  if (c->bottom_mlp[c->n_bottom - 1] != c->emb_dim)
    return BAD("--bottom-mlp: its last width %llu must be --emb-dim %llu (the interaction takes dot products of the "
               "bottom MLP's output with the embeddings)",
               ULL(c->bottom_mlp[c->n_bottom - 1]), ULL(c->emb_dim));
  if ((c->peak_tflops > 0) != (c->mem_bw_gbs > 0) || c->peak_tflops < 0 || c->mem_bw_gbs < 0)
    return BAD("--peak-tflops and --mem-bw go together, both positive (durations come from the roofline of both)");
  /* sizes grow with the tables a rank holds: the largest share decides */
  plan *p = malloc(sizeof *p);
  if (!p) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  plan_rank(c, tables_of(c, 0), p);
  for (size_t i = 0; i < p->n && !rc; i++)
    if (p->s[i].work > INT64_MAX || p->s[i].bytes > INT64_MAX)
      rc = BAD("node %s: its %s exceed 9223372036854775807 (--batch, --tables, --lookups, --emb-dim, the MLP widths "
               "and --dtype-bytes multiply into it)",
               p->s[i].name, p->s[i].kind == SPEC_COMP && p->s[i].work > INT64_MAX ? "FLOPs" : "bytes");
  free(p);
  return rc;
}

/* ---- writing ------------------------------------------------------------------------------------- */

typedef struct job {
  const chakra_gen_dlrm_config *c;
  plan *plans;              /* one per worker */
  chakra_builder **builders; /* one per worker */
  uint64_t *bytes, *nodes;  /* per rank */
} job;

static void put_spec(chakra_builder *b, const chakra_gen_dlrm_config *c, const spec *s, uint64_t id,
                     const uint64_t *deps, size_t ndeps) {
  int coll = s->kind != SPEC_COMP;
  chakra_builder_node(b, id, s->name, coll ? CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE
                                           : CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE);
  chakra_builder_data_deps(b, deps, ndeps);
  if (coll) {
    chakra_builder_int64(b, "comm_type", s->kind == SPEC_A2A ? CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_TO_ALL
                                                             : CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_REDUCE);
    chakra_builder_int64(b, "comm_size", (int64_t)s->work);
  } else {
    uint64_t us = roofline_micros(s->work, s->bytes, c->peak_tflops, c->mem_bw_gbs);
    if (us) chakra_builder_duration(b, us);
    chakra_builder_int64(b, "num_ops", (int64_t)s->work);
    chakra_builder_uint64(b, "tensor_size", s->bytes);
    chakra_builder_string(b, "op_type", s->op);
  }
  chakra_builder_bool(b, "is_cpu_op", 0);
}

static int write_rank(void *ctx, unsigned worker, uint32_t rank, chakra_workload_writer *w, chakra_error *err) {
  job *j = ctx;
  plan *p = &j->plans[worker];
  chakra_builder *b = j->builders[worker];
  plan_rank(j->c, tables_of(j->c, rank), p);
  chakra_builder_clear(b);
  chakra_builder_metadata(b, "0.0.4");
  int rc = chakra_builder_put(b, err);
  for (size_t i = 0; !rc && i < p->n; i++) {
    uint64_t deps[2];
    size_t nd = 0;
    for (int k = 0; k < 2; k++)
      if (p->s[i].dep[k] >= 0) deps[nd++] = (uint64_t)p->s[i].dep[k]; /* ids are plan indices */
    put_spec(b, j->c, &p->s[i], i, deps, nd);
    rc = chakra_builder_put(b, err);
  }
  if (rc) return rc;
  size_t len;
  chakra_builder_bytes(b, &len);
  j->bytes[rank] = len, j->nodes[rank] = p->n;
  return chakra_workload_writer_put_built(w, rank, b, err);
}

int chakra_gen_dlrm(const chakra_gen_dlrm_config *c, const char *prefix, chakra_gen_dlrm_stats *st,
                    chakra_error *err) {
  int rc = chakra_gen_dlrm_check(c, err);
  if (rc) return rc;
  unsigned workers = c->threads ? c->threads : CHAKRA_WORKLOAD_AUTO_THREADS;
  job j = {c, calloc(workers, sizeof(plan)), calloc(workers, sizeof(chakra_builder *)),
           calloc(c->npus, sizeof(uint64_t)), calloc(c->npus, sizeof(uint64_t))};
  if (!j.plans || !j.builders || !j.bytes || !j.nodes) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (unsigned k = 0; !rc && k < workers; k++)
    if (chakra_builder_new(&j.builders[k])) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  chakra_workload_writer *w = NULL;
  chakra_workload_options wo = {.progress = c->progress, .progress_ctx = c->progress_ctx};
  if (!rc) rc = chakra_workload_writer_open(&w, prefix, c->npus, &wo, err);
  if (!rc) rc = chakra_workload_writer_put_ranks(w, c->threads, write_rank, &j, err);
  if (!rc) {
    rc = chakra_workload_writer_commit(w, err);
    w = NULL;
  }
  chakra_workload_writer_discard(w);
  if (!rc && st) {
    memset(st, 0, sizeof *st);
    for (uint32_t r = 0; r < c->npus; r++) st->nodes += j.nodes[r], st->bytes += j.bytes[r];
    st->nodes_per_rank = j.nodes[0];
    st->tables_per_rank = tables_of(c, 0);
    st->table_bytes = mul4(st->tables_per_rank, c->rows, c->emb_dim, c->dtype_bytes);
  }
  for (unsigned k = 0; j.builders && k < workers; k++) chakra_builder_free(j.builders[k]);
  free(j.plans), free(j.builders), free(j.bytes), free(j.nodes);
  return rc;
}
