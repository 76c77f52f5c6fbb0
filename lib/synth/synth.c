/* synth.c - chakra synth: configuration checks, graph, stages, files; see
 * include/chakra/synth.h. The pieces: sexpr (sizes), templates (models),
 * shard (collectives), sgraph (tensors and nodes), schedule (pipeline order
 * and ids), ranks (numbering, groups), emit (encoding and writing). */
#include "chakra/synth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/jsonw.h"
#include "../util/outfile.h"
#include "chakra/set.h"
#include "emit.h"
#include "ranks.h"
#include "roofline.h"
#include "schedule.h"
#include "sgraph.h"
#include "stage.h"
#include "stagetpl.h"
#include "../util/vec.h"

void chakra_synth_config_default(chakra_synth_config *c) {
  memset(c, 0, sizeof *c);
  c->model_type = "gpt";
  c->dp = c->tp = c->sp = c->pp = c->ep = 1;
  c->tpsp = 1;
  c->num_stacks = 80, c->dmodel = 8192, c->dff = 28672, c->head = 64, c->kvhead = 8;
  c->seq = 1024, c->dvocal = 32000, c->batch = 64, c->experts = 8, c->kexperts = 2;
  c->micro_batch = -1;
  c->schedule = CHAKRA_SYNTH_SCHEDULE_1F1B;
  c->dtype_bytes = 2;
}

#define BAD(...) chakra_error_set(err, CHAKRA_EINVAL, __VA_ARGS__)
#define ULL(x) (unsigned long long)(x)

static int check_divides(uint64_t n, const char *nopt, uint64_t d, const char *dopt, const char *why,
                         chakra_error *err) {
  if (d && n % d == 0) return 0;
  return BAD("%s %llu is not divisible by %s %llu (%s)", nopt, ULL(n), dopt, ULL(d), why);
}

/* The template for the model, or NULL with err set. */
static const synth_template *pick_template(const chakra_synth_config *c, chakra_error *err) {
  const char *m = c->model_type ? c->model_type : "gpt";
  if (strcmp(m, "gpt") && strcmp(m, "dense") && strcmp(m, "llama") && strcmp(m, "moe")) {
    BAD("--model-type '%s': expected gpt, dense, llama or moe", m);
    return NULL;
  }
  if (c->ep > 1 && strcmp(m, "moe")) {
    BAD("--ep %u: expert parallelism needs --model-type moe (a %s model has no experts)", c->ep, m);
    return NULL;
  }
  /* STAGE: gpt, and dense/llama without mixed precision, use the GPT
   * templates; we give llama its own (GQA, SwiGLU) unless --stage-compat. */
  int llama = !strcmp(m, "llama") ? c->mixed_precision || !c->stage_compat : !strcmp(m, "dense") && c->mixed_precision;
  if (!strcmp(m, "moe")) {
    if (!c->tpsp) BAD("--model-type moe needs --tpsp 1 (STAGE's MoE model is sequence-parallel only)");
    return c->tpsp ? synth_template_get("moe", 1) : NULL;
  }
  if (llama && !c->tpsp) {
    BAD("--model-type %s: the llama template needs --tpsp 1 (STAGE has no TP-only llama template either)", m);
    return NULL;
  }
  return synth_template_get(llama ? "llama" : "gpt", c->tpsp);
}

static int is_moe(const chakra_synth_config *c) { return c->model_type && !strcmp(c->model_type, "moe"); }

/* Experts: ep splits the experts, the hidden size (router, combine) and the
 * routed tokens, which each local expert takes an equal share of. s: the
 * tokens of a sequence shard (a decode step: of all the rank's sequences),
 * named by s_opt. */
static int check_experts(const chakra_synth_config *c, uint64_t s, const char *s_opt, chakra_error *err) {
  if (!c->experts || !c->kexperts) return BAD("--experts and --kexperts must be at least 1");
  if (c->kexperts > c->experts)
    return BAD("--kexperts %llu exceeds --experts %llu (each token is routed to that many distinct experts)",
               ULL(c->kexperts), ULL(c->experts));
  int rc = check_divides(c->experts, "--experts", c->ep, "--ep", "each ep rank holds experts/ep experts", err);
  if (!rc)
    rc = check_divides(c->dmodel, "--dmodel", c->ep, "--ep", "router and combine split the hidden size over ep", err);
  if (rc) return rc;
  /* Each local expert's share of the routed tokens is a whole number: ours
   * split the rank's dispatched tokens over its experts, STAGE's are ep
   * times smaller (templates.c, MOE_EXPERT_FFN). */
  uint64_t d = c->experts * c->tp, f = c->stage_compat ? c->ep : 1;
  char what[64];
  snprintf(what, sizeof what, "%s x --kexperts", s_opt);
  if (c->kexperts > UINT64_MAX / s || d / c->tp != c->experts || d > UINT64_MAX / f)
    return BAD("%s or --experts x --tp x --ep is too large", what);
  return check_divides(s * c->kexperts, what, d * f,
                       c->stage_compat ? "--experts x --tp x --ep" : "--experts x --tp",
                       "the routed tokens are split evenly over tp ranks and experts", err);
}

static int check_shape(const chakra_synth_config *c, uint64_t mb, int llama, chakra_error *err) {
  if (!c->dp || !c->tp || !c->sp || !c->pp || !c->ep) return BAD("parallel degrees (--dp --tp --sp --pp --ep) must be at least 1");
  if (!c->num_stacks || !c->dmodel || !c->dff || !c->head || !c->seq || !c->dvocal || !c->batch)
    return BAD("--num-stacks, --dmodel, --dff, --head, --seq, --dvocal and --batch must be at least 1");
  if (mb == 0 || c->batch % mb)
    return BAD("--batch %llu is not a multiple of --micro-batch %llu (the number of micro-batches must be whole)",
               ULL(c->batch), ULL(mb));
  int decode = c->phase == CHAKRA_SYNTH_PHASE_DECODE;
  int rc = check_divides(mb, "--micro-batch", c->dp, "--dp", "each dp rank takes micro-batch/dp sequences", err);
  if (!rc) rc = check_divides(c->seq, "--seq", c->sp, "--sp", "the sequence is split over sp", err);
  if (!rc && c->tpsp && !decode)
    rc = check_divides(c->seq / c->sp, "--seq/--sp", c->tp, "--tp", "--tpsp 1 splits each sequence shard over tp", err);
  if (!rc && c->tpsp && decode)
    rc = check_divides(mb / c->dp, "--micro-batch/--dp", c->tp, "--tp",
                       "a decode step's new tokens, one per sequence, are split over tp under --tpsp 1", err);
  if (!rc) rc = check_divides(c->dmodel, "--dmodel", c->head, "--head", "head dimension dmodel/head", err);
  if (!rc) rc = check_divides(c->head, "--head", c->tp, "--tp", "heads are split over tp", err);
  if (!rc && llama) rc = check_divides(c->kvhead, "--kvhead", c->tp, "--tp", "KV heads are split over tp", err);
  if (!rc && llama) rc = check_divides(c->head, "--head", c->kvhead, "--kvhead", "query heads share KV heads", err);
  if (!rc) rc = check_divides(c->dff, "--dff", c->tp, "--tp", "the FFN is split over tp", err);
  if (!rc) rc = check_divides(c->dmodel, "--dmodel", c->tp, "--tp", "the output embedding is split over tp", err);
  if (!rc && !c->tpsp)
    rc = check_divides(c->dvocal, "--dvocal", c->tp, "--tp", "--tpsp 0 splits the vocabulary over tp", err);
  if (!rc && is_moe(c))
    rc = decode ? check_experts(c, mb / c->dp, "--micro-batch/--dp", err)
                : check_experts(c, c->seq / c->sp, "--seq/--sp", err);
  if (!rc && c->pp > c->num_stacks)
    rc = BAD("--pp %u exceeds --num-stacks %llu (every pipeline stage needs a block)", c->pp, ULL(c->num_stacks));
  if (!rc && c->dtype_bytes == 0) rc = BAD("--dtype-bytes must be at least 1");
  if (!rc && ((c->peak_tflops > 0) != (c->mem_bw_gbs > 0)))
    rc = BAD("--peak-tflops and --mem-bw go together (durations come from the roofline of both)");
  if (!rc && (c->peak_tflops < 0 || c->mem_bw_gbs < 0)) rc = BAD("--peak-tflops and --mem-bw must be positive");
  return rc;
}

/* The exact limits, each checked where its option is named:
 *   every degree (--dp --tp --sp --pp --ep) and their product: 2^24 ranks
 *   --num-stacks x micro-batches x (local experts + 1): 2^22 block copies
 *     (the ids and tables of one stage), so --num-stacks alone 2^22
 *   the model sizes: 2^63 - 1 (the size expressions are int64), and every
 *     tensor's bytes and FLOPs too (sgraph.c: comm_size, num_ops are int64)
 *   --dtype-bytes: 2^24; --seed + pipeline tags - 1: 2^31 - 1 (comm_tag is int32) */
#define MAX_RANKS (1ull << 24)
#define MAX_BLOCK_COPIES (1ull << 22)
#define MAX_TAG 2147483647ull

static int check_limit(const char *opt, uint64_t v, uint64_t max, const char *why, chakra_error *err) {
  if (v <= max) return 0;
  return BAD("%s %llu: at most %llu (%s)", opt, ULL(v), ULL(max), why);
}

/* Each option alone, before anything is computed from it. */
static int check_limits(const chakra_synth_config *c, chakra_error *err) {
  static const char sizes[] = "sizes are 64-bit signed integers";
  const struct { const char *opt; uint64_t v, max; const char *why; } t[] = {
      {"--dp", c->dp, MAX_RANKS, "ranks"}, {"--tp", c->tp, MAX_RANKS, "ranks"},
      {"--sp", c->sp, MAX_RANKS, "ranks"}, {"--pp", c->pp, MAX_RANKS, "ranks"},
      {"--ep", c->ep, MAX_RANKS, "ranks"},
      {"--num-stacks", c->num_stacks, MAX_BLOCK_COPIES, "block copies per stage: --num-stacks x micro-batches"},
      {"--batch", c->batch, INT64_MAX, sizes}, {"--dmodel", c->dmodel, INT64_MAX, sizes},
      {"--dff", c->dff, INT64_MAX, sizes}, {"--head", c->head, INT64_MAX, sizes},
      {"--kvhead", c->kvhead, INT64_MAX, sizes}, {"--seq", c->seq, INT64_MAX, sizes},
      {"--dvocal", c->dvocal, INT64_MAX, sizes}, {"--experts", c->experts, INT64_MAX, sizes},
      {"--kexperts", c->kexperts, INT64_MAX, sizes}, {"--dtype-bytes", c->dtype_bytes, 1u << 24, "bytes per element"},
      {"--seed", c->tag_base, MAX_TAG, "comm_tag is a 32-bit signed field"}};
  for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
    int rc = check_limit(t[i].opt, t[i].v, t[i].max, t[i].why, err);
    if (rc) return rc;
  }
  return 0;
}

/* dp*tp*sp*pp(*ep), never wrapping: each factor is at most 2^24, and the
 * product is refused as soon as it passes 2^24. */
static int count_ranks(const chakra_synth_config *c, int moe, uint64_t *out, chakra_error *err) {
  const uint32_t deg[5] = {c->dp, c->tp, c->sp, c->pp, moe ? c->ep : 1};
  uint64_t n = 1;
  for (int i = 0; i < 5 && n <= MAX_RANKS; i++) n *= deg[i];
  if (n <= MAX_RANKS) return *out = n, 0;
  char ep[32] = "";
  if (moe) snprintf(ep, sizeof ep, " x --ep %u", c->ep);
  return BAD("--dp %u x --tp %u x --sp %u x --pp %u%s is more than %llu ranks (the limit)", c->dp, c->tp, c->sp, c->pp,
             ep, ULL(MAX_RANKS));
}

/* Micro-batches x blocks (x local experts + 1) copies of a block, each a
 * 32-bit count. */
static int count_blocks(const chakra_synth_config *c, uint64_t mb, int moe, chakra_error *err) {
  uint64_t nmb = c->batch / mb, local = moe ? c->experts / c->ep : 0;
  if (nmb > MAX_BLOCK_COPIES)
    return BAD("--batch %llu / --micro-batch %llu = %llu micro-batches: at most %llu", ULL(c->batch), ULL(mb), ULL(nmb),
               ULL(MAX_BLOCK_COPIES));
  if (moe && local > 1u << 16) return BAD("--experts/--ep = %llu local experts per rank: at most 65536", ULL(local));
  uint64_t copies = nmb * c->num_stacks * (local + 1); /* each factor is at most 2^22 (2^16 + 1): no overflow */
  if (copies > MAX_BLOCK_COPIES)
    return BAD("--num-stacks %llu x %llu micro-batches (--batch/--micro-batch)%s = %llu block copies: at most %llu",
               ULL(c->num_stacks), ULL(nmb), moe ? " x (local experts + 1) (--experts/--ep)" : "", ULL(copies),
               ULL(MAX_BLOCK_COPIES));
  return 0;
}

static const char *phase_name(chakra_synth_phase p) {
  return p == CHAKRA_SYNTH_PHASE_TRAIN ? "train" : p == CHAKRA_SYNTH_PHASE_PREFILL ? "prefill" : "decode";
}

/* An inference step has no backward: nothing to recompute, and STAGE
 * (--stage-compat) has no inference at all. A decode step has one token
 * per sequence: nothing to split over sequence parallelism. */
static int check_phase(const chakra_synth_config *c, chakra_error *err) {
  if ((int)c->phase < 0 || c->phase > CHAKRA_SYNTH_PHASE_DECODE) return BAD("--phase: expected train, prefill or decode");
  if (c->phase == CHAKRA_SYNTH_PHASE_TRAIN) return 0;
  const char *p = phase_name(c->phase);
  if (c->stage_compat) return BAD("--phase %s: --stage-compat writes STAGE's files, and STAGE has no inference", p);
  if (c->activation_recompute)
    return BAD("--activation-recompute: --phase %s has no backward pass to recompute the forward for", p);
  if (c->phase == CHAKRA_SYNTH_PHASE_DECODE && c->sp > 1)
    return BAD("--sp %u: --phase decode has one new token per sequence, nothing to split over --sp", c->sp);
  return 0;
}

static int check_ranks_list(const chakra_synth_config *c, uint64_t ranks, chakra_error *err) {
  uint8_t *seen = c->n_ranks ? calloc(ranks, 1) : NULL;
  if (c->n_ranks && !seen) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (size_t i = 0; i < c->n_ranks; i++) {
    int rc2 = c->ranks[i] >= ranks ? BAD("--ranks: rank %u does not exist (the configuration has %llu ranks)",
                                         c->ranks[i], ULL(ranks))
              : seen[c->ranks[i]]   ? BAD("--ranks: rank %u is listed twice", c->ranks[i])
                                    : 0;
    if (rc2) return free(seen), rc2;
    seen[c->ranks[i]] = 1;
  }
  free(seen);
  return 0;
}

static int check_rank_order(const chakra_synth_config *c, chakra_error *err) {
  if (c->rank_order != CHAKRA_SYNTH_RANKS_DP_FIRST && c->rank_order != CHAKRA_SYNTH_RANKS_TP_FIRST)
    return BAD("rank order %d: dp-first or tp-first", (int)c->rank_order);
  if (c->stage_compat && c->rank_order != CHAKRA_SYNTH_RANKS_DP_FIRST)
    return BAD("--rank-order tp-first: --stage-compat numbers the ranks as STAGE does (dp first)");
  return CHAKRA_OK;
}

/* What every path checks first: the phase, then each option against its
 * limit. */
static int check_options(const chakra_synth_config *c, chakra_error *err) {
  int rc = check_phase(c, err);
  if (!rc) rc = check_rank_order(c, err);
  return rc ? rc : check_limits(c, err);
}

/* STAGE's configurations (stage.c), whose ranks ep always multiplies:
 * their count first, so that stage_check() works on numbers that fit. */
static int check_stage(const chakra_synth_config *c, chakra_error *err) {
  uint64_t ranks = 0;
  int rc = count_ranks(c, 1, &ranks, err);
  return rc ? rc : stage_check(c, err);
}

/* After check_options(). */
static int make_config(const chakra_synth_config *c, sg_config *s, const synth_template **tpl, chakra_error *err) {
  uint64_t mb = c->micro_batch < 0 ? c->batch : (uint64_t)c->micro_batch;
  *tpl = pick_template(c, err);
  if (!*tpl) return CHAKRA_EINVAL;
  int moe = is_moe(c);
  int rc = check_shape(c, mb, *tpl == synth_template_get("llama", 1) || moe, err);
  uint64_t ranks = 0;
  if (!rc) rc = count_ranks(c, moe, &ranks, err);
  if (!rc) rc = count_blocks(c, mb, moe, err);
  if (!rc) rc = check_ranks_list(c, ranks, err);
  if (rc) return rc;
  memset(s, 0, sizeof *s);
  /* A decode step: Seq is the one new token per sequence, Ctx (the keys it
   * attends) the cached context. */
  int decode = c->phase == CHAKRA_SYNTH_PHASE_DECODE;
  uint64_t v[SX_NSYM] = {c->batch, mb, decode ? 1 : c->seq, c->dmodel, c->dff, c->head, c->kvhead, c->dvocal,
                         c->experts, c->kexperts, c->dp, c->tp, c->sp, c->ep, c->weight_sharded ? c->dp : 1,
                         c->seq};
  for (int i = 0; i < SX_NSYM; i++) /* every value was checked against INT64_MAX */
    s->vals[i].num = (int64_t)v[i], s->vals[i].den = 1;
  s->deg[0] = c->dp, s->deg[1] = c->tp, s->deg[2] = c->sp, s->deg[3] = moe ? c->ep : 1;
  s->nexperts = moe ? (uint32_t)(c->experts / c->ep) : 0;
  s->pp = c->pp;
  s->nmb = (uint32_t)(c->batch / mb); /* count_blocks(): at most 2^22 */
  s->nblocks = (uint32_t)c->num_stacks;
  s->compat = c->stage_compat, s->fsdp = c->weight_sharded, s->mixed = c->mixed_precision;
  s->attn_term = !c->stage_compat;
  s->recompute = c->activation_recompute && !c->stage_compat; /* STAGE parses it and ignores it */
  s->tag_base = c->tag_base;
  s->infer = c->phase != CHAKRA_SYNTH_PHASE_TRAIN, s->decode = decode;
  s->elem_bytes = c->stage_compat ? 1 : c->dtype_bytes;
  s->mb_is_batch = c->micro_batch < 0;
  if ((rc = sg_check_sizes(*tpl, s, err))) return rc;
  s->block_stage = malloc(s->nblocks * sizeof *s->block_stage);
  if (!s->block_stage) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  /* Contiguous blocks, the remainder to the first stages (STAGE). */
  uint32_t per = s->nblocks / c->pp, extra = s->nblocks % c->pp, b = 0;
  for (uint32_t st = 0; st < c->pp; st++)
    for (uint32_t k = 0; k < per + (st < extra); k++) s->block_stage[b++] = st;
  /* STAGE's mixed-precision path always uses the last stage. */
  s->out_stage = c->stage_compat && !c->mixed_precision ? (uint32_t)((s->nblocks - 1) % c->pp) : c->pp - 1;
  return 0;
}

int chakra_synth_check(const chakra_synth_config *c, chakra_error *err) {
  int rc0 = check_options(c, err);
  if (rc0) return rc0;
  if (stage_applies(c)) return check_stage(c, err);
  sg_config s;
  const synth_template *tpl;
  int rc = make_config(c, &s, &tpl, err);
  if (!rc) free(s.block_stage);
  return rc;
}

static uint32_t rank_stage(void *ctx, uint32_t rank);

/* ---- encoding one stage ------------------------------------------------------------------- */

typedef struct enc_ctx {
  const chakra_synth_config *c;
  const sg_graph *g;
  const int32_t *local;
  uint64_t *ids;
  size_t idcap;
  char text[4][512];
  char num[4][40];
} enc_ctx;

static const char *tensor_text(enc_ctx *x, int slot, const sg_tensor *t) {
  snprintf(x->text[slot], sizeof x->text[slot], "%s%s", t->name, x->g->rows[t->row].row->shape);
  return x->text[slot];
}

static const char *mem_text(enc_ctx *x, int slot, const sg_tensor *t) {
  size_t n = jsonw_format_pyfloat(x->num[slot], sg_mem_size(x->g, t));
  x->num[slot][n] = 0;
  return x->num[slot];
}

static void put_inputs(enc_ctx *x, emit_stage *es, const sg_tensor *t, int only_edge) {
  const char *v[4];
  size_t n = 0;
  for (int k = 0; k < 2; k++) {
    int32_t d = only_edge >= 0 ? (k == only_edge ? t->src[k] : -1) : t->disp[k];
    if (d < 0) continue;
    v[n] = tensor_text(x, (int)n, &x->g->t[d]);
    v[n + 1] = mem_text(x, (int)n, &x->g->t[d]);
    n += 2;
  }
  emit_attr_strlist(es, "inputs", v, n);
}

static int encode_node(enc_ctx *x, emit_stage *es, const sg_node *n, uint64_t id, const sched_stage *ss) {
  const sg_graph *g = x->g;
  const sg_tensor *t = &g->t[n->tensor];
  const sg_rowinfo *ri = &g->rows[t->row];
  int compat = x->c->stage_compat;
  uint64_t bytes = compat ? 1 : x->c->dtype_bytes;
  static const char *suffix[] = {"_COMP", "_X1COMM", "_Y_SEND", "_Y_RECV"};
  static const int type[] = {4, 7, 5, 6};
  const char *sfx = n->kind == SN_COLL && n->edge ? "_X2_COMM" : suffix[n->kind];
  if (n->recompute) sfx = n->kind == SN_COMP ? "_RECOMPUTE_COMP" : n->edge ? "_RECOMPUTE_X2_COMM" : "_RECOMPUTE_X1COMM";
  if (n->kind == SN_RECV) {
    snprintf(x->text[3], sizeof x->text[3], "shadow_%s", t->name);
    emit_node_begin(es, id, x->text[3], sfx, type[n->kind]);
  } else {
    emit_node_begin(es, id, t->name, sfx, type[n->kind]);
  }
  uint32_t nc = ss->ctrl_off[id + 1] - ss->ctrl_off[id];
  /* one more than needed: never NULL, x->ids + ndep is computed below even for 0 */
  if (VEC_RESERVE(x->ids, x->idcap, (size_t)n->ndep + nc + 1)) return CHAKRA_ENOMEM;
  for (uint32_t k = 0; k < n->ndep; k++) x->ids[k] = (uint64_t)x->local[g->deps[n->dep_off + k]];
  for (uint32_t k = 0; k < nc; k++) x->ids[n->ndep + k] = ss->ctrl[ss->ctrl_off[id] + k];
  emit_node_deps(es, x->ids + n->ndep, nc, x->ids, n->ndep);
  if (n->kind == SN_COMP) {
    uint64_t ops = compat ? ri->ops_compat : ri->ops_ours, size = (g->cfg.infer ? n->size : ri->elems) * bytes;
    uint64_t us = compat ? 0 : roofline_micros(ops, size, x->c->peak_tflops, x->c->mem_bw_gbs);
    emit_node_duration(es, us);
    if (compat) {
      put_inputs(x, es, t, -1);
      const char *o[2] = {tensor_text(x, 0, t), mem_text(x, 0, t)};
      emit_attr_strlist(es, "outputs", o, 2);
    }
    emit_attr_i64(es, "num_ops", (int64_t)ops);
    emit_attr_u64(es, "tensor_size", size);
    emit_attr_str(es, "op_type", ri->row->op);
    if (!compat) emit_attr_bool(es, "is_cpu_op", 0);
  } else if (n->kind == SN_COLL) {
    if (compat) {
      put_inputs(x, es, t, n->edge);
      emit_attr_empty(es, "outputs");
    }
    emit_attr_i64(es, "comm_size", (int64_t)(n->size * bytes));
    emit_attr_i64(es, "comm_type", n->comm_type);
    emit_attr_hole(es, EMIT_HOLE_PG, n->dim);
    if (compat) emit_attr_i32(es, "is_cpu_op", 0);
    else emit_attr_bool(es, "is_cpu_op", 0);
  } else {
    emit_attr_i64(es, "comm_size", (int64_t)(n->size * bytes));
    emit_attr_i32(es, "comm_tag", (int32_t)n->tag);
    emit_attr_hole(es, n->kind == SN_SEND ? EMIT_HOLE_DST : EMIT_HOLE_SRC, n->peer_stage);
    if (compat) emit_attr_i32(es, "is_cpu_op", 0);
    else emit_attr_bool(es, "is_cpu_op", 0);
  }
  emit_node_end(es);
  return 0;
}

/* --order stage: number nodes as STAGE does, tensor by tensor in its
 * graph's order (stage.c), a tensor's compute node before its collectives
 * (first input's, then second's), pipeline sends and receives last. A
 * tensor STAGE does not have follows the one created before it; without a
 * STAGE graph (moe) tensors keep their creation order. */
static int order_keys(const chakra_synth_config *c, const synth_template *tpl, const sg_graph *g, uint64_t **out,
                      chakra_error *err) {
  int model = tpl == synth_template_get("gpt", 0)     ? STG_TP_GPT
              : tpl == synth_template_get("gpt", 1)   ? STG_TPSP_GPT
              : tpl == synth_template_get("llama", 1) ? STG_LLAMA
                                                      : -1;
  stage_pos *sp = model >= 0 ? stage_pos_new(c, model, err) : NULL;
  uint64_t *key = malloc((g->nn + 1) * sizeof *key), *tkey = malloc((g->nt + 1) * sizeof *tkey);
  if ((model >= 0 && !sp) || !key || !tkey) {
    stage_pos_free(sp), free(key), free(tkey);
    return sp || model < 0 ? chakra_error_set(err, CHAKRA_ENOMEM, "out of memory") : err->code;
  }
  uint64_t last = 0;
  for (uint32_t t = 0; t < g->nt; t++) {
    int64_t p = sp ? stage_pos_find(sp, g->t[t].name) : (int64_t)t;
    tkey[t] = p >= 0 ? (uint64_t)p << 6 : last | 32; /* after the last one STAGE has */
    if (p >= 0) last = (uint64_t)p << 6;
  }
  for (uint32_t i = 0; i < g->nn; i++) {
    const sg_node *n = &g->nodes[i];
    const sg_tensor *t = &g->t[n->tensor];
    uint64_t rank = n->kind == SN_COMP ? 0 : 1 + n->edge * 4u + (n->recompute ? 0 : (uint32_t)(i - (uint32_t)t->chain_first[n->edge]) & 3);
    if (n->kind == SN_SEND || n->kind == SN_RECV) {
      /* STAGE numbers the pairs after every tensor, by receiving stage,
       * then tensor; a send before its receive. Receives of an earlier
       * stage before this stage's sends is what keeps a 1-slot pipeline
       * from deadlocking. */
      uint64_t recv_stage = (uint64_t)(n->kind == SN_RECV ? n->stage : n->peer_stage);
      key[i] = (1ull << 62) | recv_stage << 44 | (tkey[n->tensor] >> 6) << 2 | (n->kind == SN_RECV);
    } else {
      key[i] = tkey[n->tensor] + rank + (n->recompute ? 16 : 0);
    }
  }
  stage_pos_free(sp), free(tkey);
  *out = key;
  return 0;
}

static int encode_stage(const chakra_synth_config *c, const sg_graph *g, int32_t stage, int32_t *local,
                        const uint64_t *keys, emit_stage **out, chakra_error *err) {
  sched_stage ss;
  int rc = sched_build(g, stage, c->schedule, local, keys, &ss, err);
  if (rc) return rc;
  emit_stage *es = emit_stage_new();
  enc_ctx x = {.c = c, .g = g, .local = local};
  if (!es) rc = CHAKRA_ENOMEM;
  for (uint32_t i = 0; !rc && i < ss.n; i++) rc = encode_node(&x, es, &g->nodes[ss.order[i]], i, &ss);
  free(x.ids);
  sched_free(&ss);
  if (!rc && emit_stage_failed(es)) rc = CHAKRA_ENOMEM;
  if (rc) {
    emit_stage_free(es);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  *out = es;
  return 0;
}

/* ---- writing -------------------------------------------------------------------------------- */

static uint32_t rank_stage(void *ctx, uint32_t rank) {
  uint32_t c[RK_NDIM], s;
  layout_coords(ctx, rank, c, &s);
  return s;
}
static uint32_t rank_group(void *ctx, uint32_t rank, int dim) { return layout_group(ctx, rank, dim); }
static uint32_t rank_peer(void *ctx, uint32_t rank, uint32_t stage) {
  uint32_t c[RK_NDIM], s;
  layout_coords(ctx, rank, c, &s);
  return layout_rank(ctx, c, stage);
}

/* The shared form's manifest: the ranks as a grid of dp, tp, sp (, ep)
 * and pp, the pipeline stage the class (a stage's ranks differ only in
 * the holes emit.c fills: the group of a dimension that holds the rank,
 * the peer with the same coordinates on another stage, both translations
 * of the stage's first rank's), and the groups as ranks.c numbers them. */
/* singletons: the rules of axes of size 1 too (their groups have one rank;
 * see layout_write_groups). */
static int write_manifest(const char *prefix, const synth_layout *l, int singletons, chakra_error *err) {
  static const char *const names[RK_NDIM] = {"dp", "tp", "sp", "ep"};
  chakra_manifest *m;
  int rc = chakra_manifest_new(&m, CHAKRA_MANIFEST_GRID, l->ranks, err);
  if (rc) return rc;
  for (int k = 0; !rc && k < RK_NDIM; k++) /* in the rank's radix order: the grid's mixed radix is the rank */
    if (l->radix[k] < l->ndims) rc = chakra_manifest_add_axis(m, names[l->radix[k]], l->deg[l->radix[k]], 0, err);
  if (!rc) rc = chakra_manifest_add_axis(m, "pp", l->pp, 1, err);
  for (int d = 0; !rc && d < l->ndims; d++) {
    if (l->deg[d] == 1 && !singletons) continue;
    const char *order[RK_NDIM] = {"pp"};
    uint32_t n = 1;
    for (int o = 0; o < l->ndims; o++)
      if (o != d) order[n++] = names[o];
    rc = chakra_manifest_add_group_rule(m, &names[d], 1, order, n, l->first_gid[d], err);
  }
  const char *slash = strrchr(prefix, '/');
  for (uint32_t s = 0; !rc && s < l->pp; s++) {
    char *path = chakra_class_path_dup(prefix, s);
    uint32_t zero[RK_NDIM] = {0};
    rc = path ? chakra_manifest_add_class(m, slash ? path + (slash + 1 - prefix) : path, layout_rank(l, zero, s), err)
              : chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    free(path);
  }
  char *path = rc ? NULL : chakra_manifest_path_dup(prefix);
  if (!rc) rc = path ? chakra_manifest_write(m, path, err) : chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  free(path);
  chakra_manifest_free(m);
  return rc;
}

static int write_all(const chakra_synth_config *c, const char *prefix, int shared, emit_stage *const *stages,
                     const synth_layout *l, chakra_synth_stats *st, chakra_error *err) {
  size_t n = shared ? l->pp : c->ranks ? c->n_ranks : l->ranks;
  uint32_t *list = malloc((n + 1) * sizeof *list);
  size_t plen = strlen(prefix) + 8;
  char *json = malloc(plen);
  if (!list || !json) {
    free(list), free(json);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  uint32_t zero[RK_NDIM] = {0};
  for (size_t i = 0; i < n; i++) list[i] = shared ? layout_rank(l, zero, (uint32_t)i) : c->ranks ? c->ranks[i] : (uint32_t)i;
  snprintf(json, plen, "%s.json", prefix);
  emit_meta meta = {c->stage_compat ? NULL : "0.0.4", "symbolic_tensor_network", 0};
  emit_rank_fn fn = {rank_stage, rank_group, rank_peer, (void *)l};
  uint64_t bytes = 0;
  /* the groups file and the ranks: all in place or none (a failed run must
   * not leave new groups beside old ranks, nor remove the old groups) */
  int rc = outfile_group_begin(err);
  if (!rc) {
    int singletons = c->singleton_groups || c->stage_compat;
    rc = shared ? write_manifest(prefix, l, singletons, err) : layout_write_groups(l, json, singletons, err);
    chakra_workload_options wo = {.progress = c->progress, .progress_ctx = c->progress_ctx};
    if (!rc) rc = emit_write_ranks(prefix, shared, &wo, stages, &meta, &fn, list, n, c->threads, &bytes, err);
    int end = outfile_group_end(!rc, rc ? NULL : err);
    if (!rc) rc = end;
  }
  if (!rc && st) {
    st->ranks_written = (uint32_t)n;
    st->bytes_written = bytes;
    for (size_t i = 0; i < n; i++) st->nodes_written += emit_stage_nodes(stages[rank_stage((void *)l, list[i])]);
  }
  free(list), free(json);
  return rc;
}

/* Which stages have a rank to write (--ranks may leave some out). */
static uint8_t *stages_needed(const chakra_synth_config *c, const synth_layout *l) {
  uint8_t *need = calloc(c->pp, 1);
  for (size_t i = 0; need && i < (c->ranks ? c->n_ranks : l->ranks); i++)
    need[rank_stage((void *)l, c->ranks ? c->ranks[i] : (uint32_t)i)] = 1;
  return need;
}

static int finish(const chakra_synth_config *c, const char *prefix, int shared, emit_stage **stages,
                  const synth_layout *l, int rc, chakra_synth_stats *st, chakra_error *err) {
  if (st && !rc)
    for (uint32_t s = 0; s < c->pp && s < sizeof st->nodes_per_stage / sizeof *st->nodes_per_stage; s++)
      if (stages[s]) st->nodes_per_stage[s] = emit_stage_nodes(stages[s]);
  if (!rc) rc = write_all(c, prefix, shared, stages, l, st, err);
  for (uint32_t s = 0; stages && s < c->pp; s++) emit_stage_free(stages[s]);
  free(stages);
  return rc;
}

/* --stage-compat on a dense model: STAGE's files, ids included (stage.c). */
static int write_stage_compat(const chakra_synth_config *c, const char *prefix, int shared, chakra_synth_stats *st,
                              chakra_error *err) {
  int rc = check_stage(c, err);
  if (rc) return rc;
  synth_layout l;
  int dbg = stage_is_debug(c);
  layout_init(&l, c->dp, stage_tp(c), c->sp, dbg ? c->ep : 1, c->pp, dbg);
  if (st) memset(st, 0, sizeof *st), st->ranks = l.ranks, st->stages = c->pp;
  emit_stage **stages = calloc(c->pp, sizeof *stages);
  uint8_t *need = stages_needed(c, &l);
  if (!stages || !need) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  if (!rc) rc = stage_encode(c, need, stages, err);
  free(need);
  return finish(c, prefix, shared, stages, &l, rc, st, err);
}

static int synth_write(const chakra_synth_config *c, const char *prefix, int shared, chakra_synth_stats *st,
                       chakra_error *err) {
  int rc0 = check_options(c, err);
  if (rc0) return rc0;
  if (shared && c->ranks)
    return BAD("--ranks: the shared form describes every rank (and writes one per pipeline stage), not a subset");
  if (stage_applies(c)) return write_stage_compat(c, prefix, shared, st, err);
  sg_config sc;
  const synth_template *tpl;
  int rc = make_config(c, &sc, &tpl, err);
  if (rc) return rc;
  sg_graph g;
  rc = sg_build(&g, tpl, &sc, err); /* takes sc.block_stage */
  if (rc) return rc;
  uint32_t tags = g.next_tag;
  if (tags && c->tag_base + tags - 1 > MAX_TAG) {
    sg_free(&g);
    return BAD("--seed %llu: this workload uses %u pipeline tags (--seed .. --seed + %u), and comm_tag is a 32-bit "
               "signed field: at most %llu",
               ULL(c->tag_base), tags, tags - 1, ULL(MAX_TAG + 1 - tags));
  }
  synth_layout l;
  layout_init(&l, c->dp, c->tp, c->sp, c->ep, c->pp, is_moe(c));
  if (c->rank_order == CHAKRA_SYNTH_RANKS_TP_FIRST) layout_tp_first(&l);
  emit_stage **stages = calloc(c->pp, sizeof *stages);
  int32_t *local = malloc((g.nn + 1) * sizeof *local);
  if (!stages || !local) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  if (st) memset(st, 0, sizeof *st), st->ranks = l.ranks, st->stages = c->pp;
  uint8_t *need = stages_needed(c, &l);
  if (!need) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  uint64_t *keys = NULL;
  if (!rc && c->order == CHAKRA_SYNTH_ORDER_STAGE) rc = order_keys(c, tpl, &g, &keys, err);
  for (uint32_t s = 0; !rc && s < c->pp; s++)
    if (need[s]) rc = encode_stage(c, &g, (int32_t)s, local, keys, &stages[s], err); /* --ranks may skip a stage */
  sg_free(&g);
  free(local), free(need), free(keys);
  return finish(c, prefix, shared, stages, &l, rc, st, err);
}

int chakra_synth_write(const chakra_synth_config *c, const char *prefix, chakra_synth_stats *st, chakra_error *err) {
  return synth_write(c, prefix, 0, st, err);
}

int chakra_synth_write_shared(const chakra_synth_config *c, const char *prefix, chakra_synth_stats *st,
                              chakra_error *err) {
  return synth_write(c, prefix, 1, st, err);
}
