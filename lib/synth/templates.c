/* templates.c - the model templates (STAGE's tp_gpt, tpsp_gpt, llama and
 * tpsp_moe modules) as data; see templates.h for the row format. Shape texts are spelled as
 * STAGE prints them, since they appear in the nodes' inputs/outputs. */
#include "templates.h"

#include <string.h>

#define E0 {NULL, NULL, NULL, NULL}
#define E(src) {src, NULL, NULL, NULL}
#define ED(src, disp) {src, NULL, NULL, disp}
#define EC(src, shape, hidden) {src, shape, hidden, NULL}
#define ECD(src, shape, hidden, disp) {src, shape, hidden, disp}
#define COUNT(a) (unsigned)(sizeof a / sizeof *a)
#define ROWS(a) {a, COUNT(a)}

/* Per-rank symbols: b = MicroBatch/dp, s = Seq/cp. */
#define B "MicroBatch/dp"
#define S "Seq/cp"
#define SP "(Seq/cp)/tp" /* sequence-parallel activations */
#define ACT B "," S ",Dmodel"
#define ACTSP B "," SP ",Dmodel"
#define QS B "," S ",Dmodel/Head,Head/tp"
#define KVFULL B ",Seq,Dmodel/Head,Head/tp"
#define W_TOT "2*Dff*Dmodel/tp + 4*Dmodel**2/tp"
#define W_SH "(2*Dff*Dmodel/tp + 4*Dmodel**2/tp)/dp"
#define WGRAD "dp*cp"
#define FLOPS_NORM(s) B "*" s "*Dmodel*5"
#define N_ACT(s) B "*" s "*Dmodel"

/* The block's weights live in one flat buffer per block (STAGE's FSDP
 * weight manager, applied with and without FSDP); these rows are the same
 * in both GPT variants. */
/* The block's flat weight buffer assembled (over dp under FSDP) for the
 * forward and again for the backward; TOT is its local size. */
#define ASSEMBLED_WEIGHT(TOT)                                                                                     \
  {"_assembled_weight", "I", NULL, TOT, NULL, EC("/transformer.%b._sharded_weight", TOT, NULL), E0, NULL,         \
   SR_TRANSIENT},                                                                                                 \
  {"_assembled_weight_backward", "I", NULL, TOT, NULL, EC("/transformer.%b._sharded_weight", TOT, NULL), E0, NULL, \
   SR_TRANSIENT | SR_BWD}

#define GPT_WEIGHT_VIEWS                                                                        \
  ASSEMBLED_WEIGHT(W_TOT),                                                                      \
  {"mha.wqkv", "CUSTOM", NULL, "Dmodel,Dmodel/Head,3*Head/tp", NULL, E("_assembled_weight"), E0, NULL, 0}, \
  {"mha.wo", "CUSTOM", NULL, "Dmodel/Head,Head/tp,Dmodel", NULL, E("_assembled_weight"), E0, NULL, 0},    \
  {"ffn.wgate", "CUSTOM", NULL, "Dmodel,Dff/tp", NULL, E("_assembled_weight"), E0, NULL, 0},     \
  {"ffn.wdown", "CUSTOM", NULL, "Dff/tp,Dmodel", NULL, E("_assembled_weight"), E0, NULL, 0},     \
  {"_mha.wqkv_backward", "CUSTOM", NULL, "Dmodel,Dmodel/Head,3*Head/tp", NULL,                  \
   E("_assembled_weight_backward"), E0, NULL, SR_BWD},                                          \
  {"_mha.wo_backward", "CUSTOM", NULL, "Dmodel/Head,Head/tp,Dmodel", NULL,                      \
   E("_assembled_weight_backward"), E0, NULL, SR_BWD},                                          \
  {"_ffn.wgate_backward", "CUSTOM", NULL, "Dmodel,Dff/tp", NULL, E("_assembled_weight_backward"), E0, NULL, SR_BWD}, \
  {"_ffn.wdown_backward", "CUSTOM", NULL, "Dff/tp,Dmodel", NULL, E("_assembled_weight_backward"), E0, NULL, SR_BWD}

/* Attention core, identical in both variants: q/k/v slices, the fused
 * kernel (k and v gathered over cp), its backward. KVH: the K/V heads
 * (llama: KVHead), KV and KVF the local and cp-gathered K/V shapes. */
#define ATTENTION_CORE(KVH, KV, KVF)                                                             \
  {"mha.q", "SLICE", B "*" S "*Dmodel/Head*Head/tp", QS, NULL, E("mha.qkv"), E0, NULL, 0},        \
  {"mha.k", "SLICE", B "*" S "*Dmodel/Head*" KVH "/tp", KV, NULL, E("mha.qkv"), E0, NULL, 0},     \
  {"mha.v", "SLICE", B "*" S "*Dmodel/Head*" KVH "/tp", KV, NULL, E("mha.qkv"), E0, NULL, 0},     \
  {"mha.attn_kernel.k1", "I", NULL, KVF, NULL, EC("mha.k", KVF, NULL), E0, NULL, 0},             \
  {"mha.attn_kernel.v1", "I", NULL, KVF, NULL, EC("mha.v", KVF, NULL), E0, NULL, 0},             \
  {"mha.attn_kernel.qkv", "CUSTOM", B "*" S "*Dmodel/Head*Head/tp*3", QS, NULL, E("mha.q"), E0,  \
   "mha.attn_kernel.k1 mha.attn_kernel.v1", SR_ATTN_F},                                          \
  {"mha.o1", "M", B "*" S "*Dmodel/Head*Head/tp*Dmodel", ACT, "tp", E("mha.attn_kernel.qkv"),    \
   E("mha.wo"), NULL, SR_MAC}
#define GPT_ATTENTION_CORE ATTENTION_CORE("Head", QS, KVFULL)

#define GPT_ATTENTION_BACKWARD(DO)                                                               \
  {"mha.dattn", "M", B "*" S "*Dmodel*Dmodel/Head*Head/tp", QS, NULL, E(DO), E("_mha.wo_backward"), \
   NULL, SR_MAC | SR_BWD},                                                                       \
  {"mha.dwo", "M", B "*" S "*Dmodel*Dmodel/Head*Head/tp", "Dmodel/Head,Head/tp,Dmodel", WGRAD,     \
   E(DO), E("mha.attn_kernel.qkv"), NULL, SR_MAC | SR_BWD},                                      \
  {"mha.attn_kernel.dq", "CUSTOM", B "*" S "*Dmodel/Head*Head/tp*6", QS, NULL, E("mha.dattn"), E0, \
   NULL, SR_BWD | SR_ATTN_DQ},                                                                   \
  {"mha.attn_kernel.dk", "CUSTOM", B "*" S "*Dmodel/Head*Head/tp*6", KVFULL, "cp", E("mha.dattn"), \
   E0, NULL, SR_BWD | SR_ATTN_DKV},                                                              \
  {"mha.attn_kernel.dv", "CUSTOM", B "*" S "*Dmodel/Head*Head/tp*6", KVFULL, "cp", E("mha.dattn"), \
   E0, NULL, SR_BWD | SR_ATTN_DKV},                                                              \
  {"mha.dkv", "SLICE", B "*" S "*Dmodel/Head*2*Head/tp", B "," S ",Dmodel/Head,2*Head/tp", NULL,   \
   EC("mha.attn_kernel.dv", QS, NULL), EC("mha.attn_kernel.dk", QS, NULL), NULL, SR_BWD},       \
  {"mha.dqkv", "SLICE", B "*" S "*Dmodel/Head*3*Head/tp", B "," S ",Dmodel/Head,3*Head/tp", NULL,  \
   E("mha.dkv"), E("mha.attn_kernel.dq"), NULL, SR_BWD}

/* The block's gradients: gathered into one flat buffer, reduced over dp per
 * micro-batch as STAGE does (compat) or left partial until the merge. */
#define GRAD_ASSEMBLY(TOT, SH, GRADS)                                                            \
  {"_assembled_grad", "CUSTOM", NULL, TOT, WGRAD, E0, E0, GRADS, SR_BWD | SR_TRANSIENT},         \
  {"_sharded_grad", "I", NULL, TOT, NULL, EC("_assembled_grad", TOT, NULL), E0, NULL,            \
   SR_BWD | SR_COMPAT | SR_NOFSDP},                                                              \
  {"_sharded_grad", "I", NULL, SH, NULL, EC("_assembled_grad", SH, NULL), E0, NULL,              \
   SR_BWD | SR_COMPAT | SR_FSDP},                                                                \
  {"_sharded_grad", "I", NULL, TOT, WGRAD, E("_assembled_grad"), E0, NULL, SR_BWD | SR_OURS}
#define GPT_GRAD_ASSEMBLY GRAD_ASSEMBLY(W_TOT, W_SH, "mha.dwqkv mha.dwo ffn.dwgate ffn.dwdown")

/* Per block, once: the flat weight, the micro-batch merge of its gradient
 * (reduced there unless --stage-compat) and the update. */
#define BLOCK_W_ROWS(TOT, SH)                                                                    \
  {"_sharded_weight", "T", NULL, TOT, NULL, E0, E0, NULL, SR_WEIGHT | SR_NOFSDP},                \
  {"_sharded_weight", "T", NULL, SH, NULL, E0, E0, NULL, SR_WEIGHT | SR_FSDP},                   \
  {"_sharded_grad", "CUSTOM", TOT, TOT, NULL, ED("/mb0.transformer.%b._sharded_grad", "<"), E0,  \
   "/mb*.transformer.%b._sharded_grad", SR_BWD | SR_COMPAT | SR_NOFSDP},                         \
  {"_sharded_grad", "CUSTOM", SH, SH, NULL, ED("/mb0.transformer.%b._sharded_grad", "<"), E0,    \
   "/mb*.transformer.%b._sharded_grad", SR_BWD | SR_COMPAT | SR_FSDP},                           \
  {"_sharded_grad", "CUSTOM", TOT, TOT, WGRAD, ED("/mb0.transformer.%b._sharded_grad", "<"), E0, \
   "/mb*.transformer.%b._sharded_grad", SR_BWD | SR_OURS},                                       \
  {"_sharded_weight@1", "A", TOT, TOT, NULL, E("_sharded_weight"), E("_sharded_grad"), NULL,     \
   SR_BWD | SR_COMPAT | SR_NOFSDP | SR_WEIGHT},                                                  \
  {"_sharded_weight@1", "A", SH, SH, NULL, E("_sharded_weight"), E("_sharded_grad"), NULL,       \
   SR_BWD | SR_COMPAT | SR_FSDP | SR_WEIGHT},                                                    \
  {"_sharded_weight@1", "A", TOT, TOT, NULL, E("_sharded_weight"), EC("_sharded_grad", TOT, NULL), \
   NULL, SR_BWD | SR_OURS | SR_NOFSDP | SR_WEIGHT},                                              \
  {"_sharded_weight@1", "A", SH, SH, NULL, E("_sharded_weight"), EC("_sharded_grad", SH, NULL),  \
   NULL, SR_BWD | SR_OURS | SR_FSDP | SR_WEIGHT}

/* ---- TP only (tp_gpt) ------------------------------------------------------------------ */

static const synth_row tp_block_mb[] = {
    GPT_WEIGHT_VIEWS,
    {"input_norm.x", "I", NULL, ACT, NULL, EC("$in", ACT, NULL), E0, NULL, 0},
    {"input_norm.y", "E", FLOPS_NORM(S), ACT, NULL, ED("input_norm.x", "<"), E0, NULL, 0},
    {"mha.qkv", "M", B "*" S "*Dmodel*Dmodel/Head*3*Head/tp", B "," S ",Dmodel/Head,3*Head/tp", NULL,
     E("input_norm.y"), E("mha.wqkv"), NULL, SR_MAC},
    GPT_ATTENTION_CORE,
    {"mha.o", "I", NULL, ACT, NULL, EC("mha.o1", ACT, NULL), E0, NULL, 0},
    {"mha_res.y", "A", N_ACT(S), ACT, NULL, E("mha.o"), E("input_norm.x"), NULL, 0},
    {"post_attn_norm.x", "I", NULL, ACT, NULL, E("mha_res.y"), E0, NULL, 0},
    {"post_attn_norm.y", "E", FLOPS_NORM(S), ACT, NULL, ED("post_attn_norm.x", "<"), E0, NULL, 0},
    {"ffn.x0", "I", NULL, ACT, NULL, E("post_attn_norm.y"), E0, NULL, 0},
    {"ffn.xgate", "M", B "*" S "*Dmodel*Dff/tp", B "," S ",Dff/tp", NULL, E("ffn.x0"), E("ffn.wgate"),
     NULL, SR_MAC},
    {"ffn.xdown1", "M", B "*" S "*Dff/tp*Dmodel", ACT, "tp", E("ffn.xgate"), E("ffn.wdown"), NULL, SR_MAC},
    /* STAGE declares Dff here; harmless (only the parallel symbols matter), kept for the names. */
    {"ffn.xdown", "I", NULL, B "," S ",Dff", NULL, EC("ffn.xdown1", B "," S ",Dff", NULL), E0, NULL, 0},
    {"ffn_res.y", "A", N_ACT(S), ACT, NULL, E("ffn.xdown"), E("post_attn_norm.x"), NULL, 0},
    /* backward */
    {"ffn_res.dy", "I", NULL, ACT, NULL, EC("$dout", ACT, NULL), E0, NULL, SR_BWD},
    {"ffn.dxdown", "I", NULL, ACT, NULL, E("ffn_res.dy"), E0, NULL, SR_BWD},
    {"ffn.dwdown", "M", B "*" S "*Dff/tp*Dmodel", "Dff/tp,Dmodel", WGRAD, E("ffn.dxdown"), E("ffn.xgate"),
     NULL, SR_MAC | SR_BWD},
    {"ffn.dxgate", "M", B "*" S "*Dff/tp*Dmodel", B "," S ",Dff/tp", NULL, E("ffn.dxdown"),
     E("_ffn.wdown_backward"), NULL, SR_MAC | SR_BWD},
    {"ffn.dwgate", "M", B "*" S "*Dmodel*Dff/tp", "Dmodel,Dff/tp", WGRAD, E("ffn.dxgate"), E("ffn.x0"),
     NULL, SR_MAC | SR_BWD},
    {"ffn.dx000", "M", B "*" S "*Dmodel*Dff/tp", ACT, "tp", E("ffn.dxgate"), E("_ffn.wgate_backward"),
     NULL, SR_MAC | SR_BWD},
    {"ffn.dx0", "I", NULL, ACT, NULL, EC("ffn.dx000", ACT, NULL), E0, NULL, SR_BWD},
    {"post_attn_norm.dy", "A", N_ACT(S), ACT, NULL, ED("ffn.dx0", "<"), E("ffn_res.dy"), NULL, SR_BWD},
    {"post_attn_norm.dx", "E", FLOPS_NORM(S), ACT, NULL, E("post_attn_norm.dy"), E0, NULL, SR_BWD},
    {"mha_res.dy", "I", NULL, ACT, NULL, E("post_attn_norm.dx"), E0, NULL, SR_BWD},
    {"mha.do", "I", NULL, ACT, NULL, E("mha_res.dy"), E0, NULL, SR_BWD},
    GPT_ATTENTION_BACKWARD("mha.do"),
    {"mha.dwqkv", "M", B "*" S "*Dmodel*Dmodel/Head*3*Head/tp", "Dmodel,Dmodel/Head,3*Head/tp", WGRAD,
     E("mha.dqkv"), E("input_norm.y"), NULL, SR_MAC | SR_BWD},
    {"mha.dx1", "M", B "*" S "*Dmodel*Dmodel/Head*3*Head/tp", ACT, "tp", E("mha.dqkv"),
     E("_mha.wqkv_backward"), NULL, SR_MAC | SR_BWD},
    {"mha.dx", "I", NULL, ACT, NULL, EC("mha.dx1", ACT, NULL), E0, NULL, SR_BWD},
    {"input_norm.dy", "A", N_ACT(S), ACT, NULL, ED("mha.dx", "<"), E("mha_res.dy"), NULL, SR_BWD},
    {"input_norm.dx", "E", FLOPS_NORM(S), ACT, NULL, E("input_norm.dy"), E0, NULL, SR_BWD},
    GPT_GRAD_ASSEMBLY,
};

/* ---- TP + sequence parallelism (tpsp_gpt) ---------------------------------------------- */

static const synth_row tpsp_block_mb[] = {
    GPT_WEIGHT_VIEWS,
    {"input_norm.x", "I", NULL, ACTSP, NULL, EC("$in", ACTSP, NULL), E0, NULL, 0},
    {"input_norm.y", "E", FLOPS_NORM(SP), ACTSP, NULL, ED("input_norm.x", "<"), E0, NULL, 0},
    {"mha.qkv", "M", B "*" S "*Dmodel*Dmodel/Head*3*Head/tp", B "," S ",Dmodel/Head,3*Head/tp", NULL,
     EC("input_norm.y", ACT, NULL), E("mha.wqkv"), NULL, SR_MAC},
    GPT_ATTENTION_CORE,
    {"mha.o", "I", NULL, ACTSP, NULL, EC("mha.o1", ACTSP, NULL), E0, NULL, 0},
    {"mha_res.y", "A", N_ACT(SP), ACTSP, NULL, E("mha.o"), E("input_norm.x"), NULL, 0},
    {"post_attn_norm.x", "I", NULL, ACTSP, NULL, E("mha_res.y"), E0, NULL, 0},
    {"post_attn_norm.y", "E", FLOPS_NORM(SP), ACTSP, NULL, ED("post_attn_norm.x", "<"), E0, NULL, 0},
    {"ffn.x0", "I", NULL, ACTSP, NULL, E("post_attn_norm.y"), E0, NULL, 0},
    {"ffn.x00", "I", NULL, ACT, NULL, EC("ffn.x0", ACT, NULL), E0, NULL, 0},
    {"ffn.xgate", "M", B "*" S "*Dmodel*Dff/tp", B "," S ",Dff/tp", NULL, E("ffn.x00"), E("ffn.wgate"),
     NULL, SR_MAC},
    {"ffn.xdown1", "M", B "*" S "*Dff/tp*Dmodel", ACT, "tp", E("ffn.xgate"), E("ffn.wdown"), NULL, SR_MAC},
    {"ffn.xdown", "I", NULL, ACTSP, NULL, EC("ffn.xdown1", ACTSP, NULL), E0, NULL, 0},
    {"ffn_res.y", "A", N_ACT(SP), ACTSP, NULL, E("ffn.xdown"), E("post_attn_norm.x"), NULL, 0},
    /* backward */
    {"ffn_res.dy", "I", NULL, ACTSP, NULL, EC("$dout", ACTSP, NULL), E0, NULL, SR_BWD},
    {"ffn.dxdown", "I", NULL, ACTSP, NULL, E("ffn_res.dy"), E0, NULL, SR_BWD},
    {"ffn.dxdown2", "I", NULL, ACT, NULL, EC("ffn.dxdown", ACT, NULL), E0, NULL, SR_BWD},
    {"ffn.dwdown", "M", B "*" S "*Dff/tp*Dmodel", "Dff/tp,Dmodel", WGRAD, E("ffn.dxdown2"), E("ffn.xgate"),
     NULL, SR_MAC | SR_BWD},
    {"ffn.dxgate", "M", B "*" S "*Dff/tp*Dmodel", B "," S ",Dff/tp", NULL, E("ffn.dxdown2"),
     E("_ffn.wdown_backward"), NULL, SR_MAC | SR_BWD},
    {"ffn.dwgate", "M", B "*" S "*Dmodel*Dff/tp", "Dmodel,Dff/tp", WGRAD, E("ffn.dxgate"),
     EC("ffn.x0", ACT, NULL), NULL, SR_MAC | SR_BWD},
    {"ffn.dx000", "M", B "*" S "*Dmodel*Dff/tp", ACT, "tp", E("ffn.dxgate"), E("_ffn.wgate_backward"),
     NULL, SR_MAC | SR_BWD},
    {"ffn.dx0", "I", NULL, ACTSP, NULL, EC("ffn.dx000", ACTSP, NULL), E0, NULL, SR_BWD},
    {"post_attn_norm.dy", "A", N_ACT(SP), ACTSP, NULL, ED("ffn.dx0", "<"), E("ffn_res.dy"), NULL, SR_BWD},
    {"post_attn_norm.dx", "E", FLOPS_NORM(SP), ACTSP, NULL, E("post_attn_norm.dy"), E0, NULL, SR_BWD},
    {"mha_res.dy", "I", NULL, ACTSP, NULL, E("post_attn_norm.dx"), E0, NULL, SR_BWD},
    {"mha.do", "I", NULL, ACTSP, NULL, E("mha_res.dy"), E0, NULL, SR_BWD},
    {"mha.do1", "I", NULL, ACT, NULL, EC("mha.do", ACT, NULL), E0, NULL, SR_BWD},
    GPT_ATTENTION_BACKWARD("mha.do1"),
    {"mha.dwqkv", "M", B "*" S "*Dmodel*Dmodel/Head*3*Head/tp", "Dmodel,Dmodel/Head,3*Head/tp", WGRAD,
     E("mha.dqkv"), EC("input_norm.y", ACT, NULL), NULL, SR_MAC | SR_BWD},
    {"mha.dx1", "M", B "*" S "*Dmodel*Dmodel/Head*3*Head/tp", ACT, "tp", E("mha.dqkv"),
     E("_mha.wqkv_backward"), NULL, SR_MAC | SR_BWD},
    {"mha.dx", "I", NULL, ACTSP, NULL, EC("mha.dx1", ACTSP, NULL), E0, NULL, SR_BWD},
    {"input_norm.dy", "A", N_ACT(SP), ACTSP, NULL, ED("mha.dx", "<"), E("mha_res.dy"), NULL, SR_BWD},
    {"input_norm.dx", "E", FLOPS_NORM(SP), ACTSP, NULL, E("input_norm.dy"), E0, NULL, SR_BWD},
    GPT_GRAD_ASSEMBLY,
};

static const synth_row gpt_block_w[] = {BLOCK_W_ROWS(W_TOT, W_SH)};

/* ---- embeddings and loss ----------------------------------------------------------------- */

/* TP only: vocabulary-parallel embeddings. */
static const synth_row tp_in_mb[] = {
    {"in_emb.x", "T", NULL, B "," S ",Dvocal/tp", NULL, E0, E0, NULL, 0},
    {"in_emb.y", "M", B "*" S "*Dvocal/tp*Dmodel", ACT, "tp", E("in_emb.x"), E("/in_emb.w"), NULL,
     SR_MAC | SR_TRAIN},
    /* inference: the lookup it is, each tp rank's rows of its vocabulary shard (a partial sum over tp) */
    {"in_emb.y", "GATHER", B "*" S "*Dmodel", ACT, "tp", E("in_emb.x"), E("/in_emb.w"), NULL, SR_INFER},
    {"in_emb.dw", "M", B "*" S "*Dvocal/tp*Dmodel", "Dvocal/tp,Dmodel", WGRAD, E("$dout"), E("in_emb.x"),
     NULL, SR_MAC | SR_BWD},
    {"in_emb.dx", "M", B "*" S "*Dvocal/tp*Dmodel", B "," S ",Dvocal/tp", NULL, E("$dout"), E("/in_emb.w"),
     NULL, SR_MAC | SR_BWD},
};
static const synth_row tp_in_w[] = {
    {"in_emb.w", "T", NULL, "Dvocal/tp,Dmodel", NULL, E0, E0, NULL, SR_WEIGHT},
    {"in_emb.dw", "CUSTOM", "Dvocal/tp*Dmodel", "Dvocal/tp,Dmodel", WGRAD, E("/mb0.in_emb.dw"), E0,
     "/mb*.in_emb.dw", SR_BWD},
    {"in_emb.w@1", "A", "Dvocal/tp*Dmodel", "Dvocal/tp,Dmodel", NULL, E("in_emb.w"),
     EC("in_emb.dw", "Dvocal/tp,Dmodel", NULL), NULL, SR_BWD | SR_WEIGHT},
};
static const synth_row tp_out_mb[] = {
    {"out_emb.y", "M", B "*" S "*Dmodel/tp*Dvocal", B "," S ",Dvocal", "tp", E("$in"), E("/out_emb.w"),
     NULL, SR_MAC},
    {"loss.y", "I", NULL, B "," S ",Dvocal", NULL, EC("out_emb.y", B "," S ",Dvocal", NULL), E0, NULL, 0},
    {"loss.loss", "E", FLOPS_NORM(S), ACT, NULL, ED("loss.y", "<"), E0, NULL, SR_TRAIN},
    {"loss.dy", "E", FLOPS_NORM(S), ACT, NULL, E("loss.loss"), E0, NULL, SR_BWD},
    {"out_emb.dw", "M", B "*" S "*Dmodel/tp*Dvocal", "Dmodel/tp,Dvocal", WGRAD, E("loss.dy"), E("$in"),
     NULL, SR_MAC | SR_BWD},
    {"out_emb.dx", "M", B "*" S "*Dmodel/tp*Dvocal", B "," S ",Dmodel/tp", NULL, E("loss.dy"),
     E("/out_emb.w"), NULL, SR_MAC | SR_BWD},
};
static const synth_row tp_out_w[] = {
    {"out_emb.w", "T", NULL, "Dmodel/tp,Dvocal", NULL, E0, E0, NULL, SR_WEIGHT},
    {"out_emb.dw", "CUSTOM", "Dmodel/tp*Dvocal", "Dmodel/tp,Dvocal", WGRAD, E("/mb0.out_emb.dw"), E0,
     "/mb*.out_emb.dw", SR_BWD},
    {"out_emb.w@1", "A", "Dmodel/tp*Dvocal", "Dmodel/tp,Dvocal", NULL, E("out_emb.w"),
     EC("out_emb.dw", "Dmodel/tp,Dvocal", NULL), NULL, SR_BWD | SR_WEIGHT},
};

/* TP + SP: replicated embedding weights, sequence-sharded activations; the
 * weight gradients are partial over dp, tp and cp. */
#define EGRAD "dp*tp*cp"
static const synth_row sp_in_mb[] = {
    {"in_emb.x", "T", NULL, B "," SP ",Dvocal", NULL, E0, E0, NULL, 0},
    {"in_emb.y", "M", B "*" SP "*Dvocal*Dmodel", ACTSP, NULL, E("in_emb.x"), E("/in_emb.w"), NULL,
     SR_MAC | SR_TRAIN},
    {"in_emb.y", "GATHER", B "*" SP "*Dmodel", ACTSP, NULL, E("in_emb.x"), E("/in_emb.w"), NULL, SR_INFER},
    {"in_emb.dw", "M", B "*" SP "*Dvocal*Dmodel", "Dvocal,Dmodel", EGRAD, E("$dout"), E("in_emb.x"), NULL,
     SR_MAC | SR_BWD},
    {"in_emb.dx", "M", B "*" SP "*Dvocal*Dmodel", B "," SP ",Dvocal", NULL, E("$dout"), E("/in_emb.w"), NULL,
     SR_MAC | SR_BWD},
};
static const synth_row sp_in_w[] = {
    {"in_emb.w", "T", NULL, "Dvocal,Dmodel", NULL, E0, E0, NULL, SR_WEIGHT},
    {"in_emb.dw", "CUSTOM", "Dvocal*Dmodel", "Dvocal,Dmodel", EGRAD, E("/mb0.in_emb.dw"), E0, "/mb*.in_emb.dw",
     SR_BWD},
    {"in_emb.w@1", "A", "Dvocal*Dmodel", "Dvocal,Dmodel", NULL, E("in_emb.w"),
     EC("in_emb.dw", "Dvocal,Dmodel", NULL), NULL, SR_BWD | SR_WEIGHT},
};
static const synth_row sp_out_mb[] = {
    {"out_emb.y", "M", B "*" SP "*Dmodel*Dvocal", B "," SP ",Dvocal", NULL, E("$in"), E("/out_emb.w"), NULL,
     SR_MAC},
    {"loss.y", "I", NULL, B "," SP ",Dvocal", NULL, E("out_emb.y"), E0, NULL, 0},
    {"loss.loss", "E", FLOPS_NORM(SP), ACTSP, NULL, ED("loss.y", "<"), E0, NULL, SR_TRAIN},
    {"loss.dy", "E", FLOPS_NORM(SP), ACTSP, NULL, E("loss.loss"), E0, NULL, SR_BWD},
    {"out_emb.dw", "M", B "*" SP "*Dmodel*Dvocal", "Dmodel,Dvocal", EGRAD, E("loss.dy"), E("$in"), NULL,
     SR_MAC | SR_BWD},
    {"out_emb.dx", "M", B "*" SP "*Dmodel*Dvocal", ACTSP, NULL, E("loss.dy"), E("/out_emb.w"), NULL,
     SR_MAC | SR_BWD},
};
static const synth_row sp_out_w[] = {
    {"out_emb.w", "T", NULL, "Dmodel,Dvocal", NULL, E0, E0, NULL, SR_WEIGHT},
    {"out_emb.dw", "CUSTOM", "Dmodel*Dvocal", "Dmodel,Dvocal", EGRAD, E("/mb0.out_emb.dw"), E0,
     "/mb*.out_emb.dw", SR_BWD},
    {"out_emb.w@1", "A", "Dmodel*Dvocal", "Dmodel,Dvocal", NULL, E("out_emb.w"),
     EC("out_emb.dw", "Dmodel,Dvocal", NULL), NULL, SR_BWD | SR_WEIGHT},
};


/* ---- llama (tpsp): grouped-query attention and a SwiGLU FFN ------------------------------ */

#define LQKV B "," S ",Dmodel/Head,(Head + 2*KVHead)/tp"
#define LKV B "," S ",Dmodel/Head,KVHead/tp"
#define LKVFULL B ",Seq,Dmodel/Head,KVHead/tp"
#define LW_QKV "Dmodel,Dmodel/Head,(Head + 2*KVHead)/tp"
#define LW_TOT "3*Dff*Dmodel/tp + Dmodel**2/tp + Dmodel**2*(Head + 2*KVHead)/(Head*tp)"
#define LW_SH "(3*Dff*Dmodel/tp + Dmodel**2/tp + Dmodel**2*(Head + 2*KVHead)/(Head*tp))/dp"
#define FFN_M(n) B "*" S "*Dmodel*Dff/tp"
#define N_FF B "*" S "*Dff/tp"
#define FF B "," S ",Dff/tp"

/* Input norm, grouped-query attention (STAGE's fused kernel), residual and
 * post-attention norm: the same in llama and moe. */
#define LLAMA_ATTENTION_FWD                                                                                       \
  {"input_norm.x", "I", NULL, ACTSP, NULL, EC("$in", ACTSP, NULL), E0, NULL, 0},                                  \
  {"input_norm.y", "E", FLOPS_NORM(SP), ACTSP, NULL, ED("input_norm.x", "<"), E0, NULL, 0},                       \
  {"mha.qkv", "M", B "*" S "*Dmodel*Dmodel/Head*(Head + 2*KVHead)/tp", LQKV, NULL, EC("input_norm.y", ACT, NULL), \
   E("mha.wqkv"), NULL, SR_MAC},                                                                                  \
  ATTENTION_CORE("KVHead", LKV, LKVFULL),                                                                         \
  {"mha.o", "I", NULL, ACTSP, NULL, EC("mha.o1", ACTSP, NULL), E0, NULL, 0},                                      \
  {"mha_res.y", "A", N_ACT(SP), ACTSP, NULL, E("mha.o"), E("input_norm.x"), NULL, 0},                             \
  {"post_attn_norm.x", "I", NULL, ACTSP, NULL, E("mha_res.y"), E0, NULL, 0},                                      \
  {"post_attn_norm.y", "E", FLOPS_NORM(SP), ACTSP, NULL, ED("post_attn_norm.x", "<"), E0, NULL, 0}

/* From the post-attention norm's backward to the attention kernel's dQ. */
#define LLAMA_ATTENTION_BWD_HEAD                                                                                 \
  {"post_attn_norm.dx", "E", FLOPS_NORM(SP), ACTSP, NULL, E("post_attn_norm.dy"), E0, NULL, SR_BWD},             \
  {"mha_res.dy", "I", NULL, ACTSP, NULL, E("post_attn_norm.dx"), E0, NULL, SR_BWD},                              \
  {"mha.do", "I", NULL, ACTSP, NULL, E("mha_res.dy"), E0, NULL, SR_BWD},                                         \
  {"mha.do1", "I", NULL, ACT, NULL, EC("mha.do", ACT, NULL), E0, NULL, SR_BWD},                                  \
  {"mha.dattn", "M", B "*" S "*Dmodel*Dmodel/Head*Head/tp", QS, NULL, E("mha.do1"), E("_mha.wo_backward"), NULL, \
   SR_MAC | SR_BWD},                                                                                             \
  {"mha.dwo", "M", B "*" S "*Dmodel*Dmodel/Head*Head/tp", "Dmodel/Head,Head/tp,Dmodel", WGRAD, E("mha.do1"),     \
   E("mha.attn_kernel.qkv"), NULL, SR_MAC | SR_BWD},                                                             \
  {"mha.attn_kernel.dq", "CUSTOM", B "*" S "*Dmodel/Head*Head/tp*6", QS, NULL, E("mha.dattn"), E0, NULL,         \
   SR_BWD | SR_ATTN_DQ}

/* The attention's weight and input gradients and the input norm's backward. */
#define LLAMA_ATTENTION_BWD_TAIL                                                                       \
  {"mha.dwqkv", "M", B "*" S "*Dmodel*Dmodel/Head*(Head + 2*KVHead)/tp", LW_QKV, WGRAD, E("mha.dqkv"), \
   EC("input_norm.y", ACT, NULL), NULL, SR_MAC | SR_BWD},                                              \
  {"mha.dx1", "M", B "*" S "*Dmodel*Dmodel/Head*(Head + 2*KVHead)/tp", ACT, "tp", E("mha.dqkv"),       \
   E("_mha.wqkv_backward"), NULL, SR_MAC | SR_BWD},                                                    \
  {"mha.dx", "I", NULL, ACTSP, NULL, EC("mha.dx1", ACTSP, NULL), E0, NULL, SR_BWD},                    \
  {"input_norm.dy", "A", N_ACT(SP), ACTSP, NULL, ED("mha.dx", "<"), E("mha_res.dy"), NULL, SR_BWD},    \
  {"input_norm.dx", "E", FLOPS_NORM(SP), ACTSP, NULL, E("input_norm.dy"), E0, NULL, SR_BWD}

static const synth_row llama_block_mb[] = {
    ASSEMBLED_WEIGHT(LW_TOT),
    {"mha.wqkv", "CUSTOM", NULL, LW_QKV, NULL, E("_assembled_weight"), E0, NULL, 0},
    {"mha.wo", "CUSTOM", NULL, "Dmodel/Head,Head/tp,Dmodel", NULL, E("_assembled_weight"), E0, NULL, 0},
    {"ffn.wup", "CUSTOM", NULL, "Dmodel,Dff/tp", NULL, E("_assembled_weight"), E0, NULL, 0},
    {"ffn.wgate", "CUSTOM", NULL, "Dmodel,Dff/tp", NULL, E("_assembled_weight"), E0, NULL, 0},
    {"ffn.wdown", "CUSTOM", NULL, "Dff/tp,Dmodel", NULL, E("_assembled_weight"), E0, NULL, 0},
    {"_mha.wqkv_backward", "CUSTOM", NULL, LW_QKV, NULL, E("_assembled_weight_backward"), E0, NULL, SR_BWD},
    {"_mha.wo_backward", "CUSTOM", NULL, "Dmodel/Head,Head/tp,Dmodel", NULL, E("_assembled_weight_backward"), E0,
     NULL, SR_BWD},
    {"_ffn.wup_backward", "CUSTOM", NULL, "Dmodel,Dff/tp", NULL, E("_assembled_weight_backward"), E0, NULL, SR_BWD},
    {"_ffn.wgate_backward", "CUSTOM", NULL, "Dmodel,Dff/tp", NULL, E("_assembled_weight_backward"), E0, NULL, SR_BWD},
    {"_ffn.wdown_backward", "CUSTOM", NULL, "Dff/tp,Dmodel", NULL, E("_assembled_weight_backward"), E0, NULL, SR_BWD},
    LLAMA_ATTENTION_FWD,
    {"ffn.x0", "I", NULL, ACTSP, NULL, E("post_attn_norm.y"), E0, NULL, 0},
    {"ffn.x00", "I", NULL, ACT, NULL, EC("ffn.x0", ACT, NULL), E0, NULL, 0},
    {"ffn.xup", "M", FFN_M(), FF, NULL, E("ffn.x00"), E("ffn.wup"), NULL, SR_MAC},
    {"ffn.xgate", "M", FFN_M(), FF, NULL, E("ffn.x00"), E("ffn.wgate"), NULL, SR_MAC},
    {"ffn.xact", "E", N_FF "*4", FF, NULL, E("ffn.xgate"), E0, NULL, 0}, /* SiLU */
    {"ffn.xprod", "E2", N_FF, FF, NULL, E("ffn.xact"), E("ffn.xup"), NULL, 0},
    {"ffn.xdown1", "M", FFN_M(), ACT, "tp", E("ffn.xprod"), E("ffn.wdown"), NULL, SR_MAC},
    {"ffn.xdown", "I", NULL, ACTSP, NULL, EC("ffn.xdown1", ACTSP, NULL), E0, NULL, 0},
    {"ffn_res.y", "A", N_ACT(SP), ACTSP, NULL, E("ffn.xdown"), E("post_attn_norm.x"), NULL, 0},
    /* backward */
    {"ffn_res.dy", "I", NULL, ACTSP, NULL, EC("$dout", ACTSP, NULL), E0, NULL, SR_BWD},
    {"ffn.dxdown", "I", NULL, ACTSP, NULL, E("ffn_res.dy"), E0, NULL, SR_BWD},
    {"ffn.dxdown2", "I", NULL, ACT, NULL, EC("ffn.dxdown", ACT, NULL), E0, NULL, SR_BWD},
    {"ffn.dwdown", "M", FFN_M(), "Dff/tp,Dmodel", WGRAD, E("ffn.dxdown2"), E("ffn.xprod"), NULL, SR_MAC | SR_BWD},
    {"ffn.dxprod", "M", FFN_M(), FF, NULL, E("ffn.dxdown2"), E("_ffn.wdown_backward"), NULL, SR_MAC | SR_BWD},
    {"ffn.dxact", "E2", N_FF, FF, NULL, E("ffn.dxprod"), E("ffn.xup"), NULL, SR_BWD},
    {"ffn.dxup", "E2", N_FF, FF, NULL, E("ffn.dxprod"), E("ffn.xact"), NULL, SR_BWD},
    {"ffn.dxgate", "E2", N_FF "*4", FF, NULL, E("ffn.dxact"), E("ffn.xgate"), NULL, SR_BWD},
    /* one gather of the FFN input serves both weight gradients */
    {"ffn.x0b", "I", NULL, ACT, NULL, EC("ffn.x0", ACT, NULL), E0, NULL, SR_BWD},
    {"ffn.dwup", "M", FFN_M(), "Dmodel,Dff/tp", WGRAD, E("ffn.dxup"), E("ffn.x0b"), NULL, SR_MAC | SR_BWD},
    {"ffn.dwgate", "M", FFN_M(), "Dmodel,Dff/tp", WGRAD, E("ffn.dxgate"), E("ffn.x0b"), NULL, SR_MAC | SR_BWD},
    {"ffn.dx0up", "M", FFN_M(), ACT, "tp", E("ffn.dxup"), E("_ffn.wup_backward"), NULL, SR_MAC | SR_BWD},
    {"ffn.dx0gate", "M", FFN_M(), ACT, "tp", E("ffn.dxgate"), E("_ffn.wgate_backward"), NULL, SR_MAC | SR_BWD},
    {"ffn.dx000", "A", N_ACT(S), ACT, "tp", E("ffn.dx0up"), E("ffn.dx0gate"), NULL, SR_BWD},
    {"ffn.dx0", "I", NULL, ACTSP, NULL, EC("ffn.dx000", ACTSP, NULL), E0, NULL, SR_BWD},
    {"post_attn_norm.dy", "A", N_ACT(SP), ACTSP, NULL, ED("ffn.dx0", "<"), E("ffn_res.dy"), NULL, SR_BWD},
    LLAMA_ATTENTION_BWD_HEAD,
    {"mha.attn_kernel.dk", "CUSTOM", B "*" S "*Dmodel/Head*KVHead/tp*6", LKVFULL, "cp", E("mha.dattn"), E0, NULL,
     SR_BWD | SR_ATTN_DKV},
    {"mha.attn_kernel.dv", "CUSTOM", B "*" S "*Dmodel/Head*KVHead/tp*6", LKVFULL, "cp", E("mha.dattn"), E0, NULL,
     SR_BWD | SR_ATTN_DKV},
    {"mha.dkv", "SLICE", B "*" S "*Dmodel/Head*2*KVHead/tp", B "," S ",Dmodel/Head,2*KVHead/tp", NULL,
     EC("mha.attn_kernel.dv", LKV, NULL), EC("mha.attn_kernel.dk", LKV, NULL), NULL, SR_BWD},
    {"mha.dqkv", "SLICE", B "*" S "*Dmodel/Head*(Head + 2*KVHead)/tp", LQKV, NULL, E("mha.dkv"),
     E("mha.attn_kernel.dq"), NULL, SR_BWD},
    LLAMA_ATTENTION_BWD_TAIL,
    GRAD_ASSEMBLY(LW_TOT, LW_SH, "mha.dwqkv mha.dwo ffn.dwup ffn.dwgate ffn.dwdown"),
};

static const synth_row llama_block_w[] = {BLOCK_W_ROWS(LW_TOT, LW_SH)};

/* ---- MoE (tpsp_moe): GQA attention, a router and Experts/ep local experts ---------------- */

/* STAGE's moe_frame, expert_wrapper and (two-matrix) FFN. Expert parallelism
 * works on the hidden dimension and the routed tokens: every ep rank holds
 * the same tokens and runs the same attention; the router's input and the
 * combined output are split over ep by Dmodel (x1, y: Dmodel/ep), the
 * routed copies (KExperts per token) by token (xrouted: Seq*KExperts/(tp*ep)),
 * so dispatch and combine are ALL_TO_ALLs over ep, forward and backward. Each
 * local expert takes an equal slice of the routed tokens (MOE_EXPERT_FFN). */
#define MW_TOT                                                                                                     \
  "Dmodel**2*(Head + 2*KVHead)/(Head*tp) + Dmodel**2/tp + Dmodel*KExperts/ep + 2*Experts*Dmodel*Dff/(ep*tp)"
#define MW_SH "(" MW_TOT ")/dp"
#define KS "(Seq/cp)*KExperts/tp"          /* routed copies on this tp rank */
#define XR B ",(Seq/cp)*KExperts/(tp*ep),Dmodel" /* routed tokens of this ep rank */
#define YE B "," KS ",Dmodel/ep"           /* routed copies, hidden split over ep */
#define HE B "," SP ",Dmodel/ep"           /* tokens, hidden split over ep */
#define N_KS B "*" KS
#define KVF_H B ",Seq,Dmodel/Head,Head/tp"
#define MGRAD "dp*tp*cp"

static const synth_row moe_block_mb[] = {
    ASSEMBLED_WEIGHT(MW_TOT),
    {"mha.wqkv", "CUSTOM", NULL, LW_QKV, NULL, E("_assembled_weight"), E0, NULL, 0},
    {"mha.wo", "CUSTOM", NULL, "Dmodel/Head,Head/tp,Dmodel", NULL, E("_assembled_weight"), E0, NULL, 0},
    {"moe.wrouter", "CUSTOM", NULL, "Dmodel/ep,KExperts", NULL, E("_assembled_weight"), E0, NULL, 0},
    {"_mha.wqkv_backward", "CUSTOM", NULL, LW_QKV, NULL, E("_assembled_weight_backward"), E0, NULL, SR_BWD},
    {"_mha.wo_backward", "CUSTOM", NULL, "Dmodel/Head,Head/tp,Dmodel", NULL, E("_assembled_weight_backward"), E0,
     NULL, SR_BWD},
    {"_moe.wrouter_backward", "CUSTOM", NULL, "Dmodel/ep,KExperts", NULL, E("_assembled_weight_backward"), E0, NULL,
     SR_BWD},
    LLAMA_ATTENTION_FWD,
    /* router and dispatch (the router weight is gathered over ep) */
    {"moe.yrouter", "M", B "*" SP "*Dmodel*KExperts", B "," SP ",KExperts", NULL, E("post_attn_norm.y"),
     EC("moe.wrouter", "Dmodel,KExperts", NULL), NULL, SR_MAC},
    {"moe.yrouter2", "R", N_KS, B "," KS ",1", NULL, E("moe.yrouter"), E0, NULL, 0},
    {"moe.x1", "B", N_KS "*Dmodel/ep", YE, NULL, EC("post_attn_norm.y", HE, NULL), E0, NULL, 0},
    {"moe.xrouted", "I", NULL, XR, NULL, EC("moe.x1", XR, NULL), E0, NULL, 0},
    /* combine: the experts' sum back to Dmodel/ep, weighted by the router */
    {"moe.yrouter3", "SLICE", N_KS "*Dmodel/ep", YE, NULL, E("moe.yrouter2"), E0, NULL, 0},
    {"moe.y1", "I", NULL, YE, NULL, EC("$ysum", YE, NULL), E0, NULL, 0},
    {"moe.y2", "E2", N_KS "*Dmodel/ep", YE, NULL, E("moe.y1"), E("moe.yrouter3"), NULL, 0},
    {"moe.y", "B", B "*" SP "*Dmodel/ep", HE, NULL, E("moe.y2"), E0, NULL, 0},
    {"ffn_res.y", "A", N_ACT(SP), ACTSP, NULL, EC("moe.y", ACTSP, NULL), E("post_attn_norm.x"), NULL, 0},
    /* backward */
    {"ffn_res.dy", "I", NULL, ACTSP, NULL, EC("$dout", ACTSP, NULL), E0, NULL, SR_BWD},
    {"ffn_res.dx1", "I", NULL, ACTSP, NULL, E("ffn_res.dy"), E0, NULL, SR_BWD},
    {"ffn_res.dx2", "I", NULL, ACTSP, NULL, E("ffn_res.dy"), E0, NULL, SR_BWD},
    {"moe.dy2", "B", N_KS "*Dmodel/ep", YE, NULL, EC("ffn_res.dx1", HE, NULL), E0, NULL, SR_BWD},
    {"moe.dy1", "E2", N_KS "*Dmodel/ep", YE, NULL, E("moe.dy2"), E("moe.yrouter3"), NULL, SR_BWD},
    {"moe.dyrouter3", "E2", N_KS "*Dmodel/ep", YE, NULL, E("moe.dy2"), E("moe.y1"), NULL, SR_BWD},
    {"moe.dyrouter2", "SLICE", N_KS, B "," KS ",1", NULL, E("moe.dyrouter3"), E0, NULL, SR_BWD},
    {"moe.dyrouted", "I", NULL, XR, NULL, EC("moe.dy1", XR, NULL), E0, NULL, SR_BWD},
    {"moe.dyrouter", "R", B "*" SP "*KExperts", B "," SP ",KExperts", NULL, E("moe.dyrouter2"), E0, NULL, SR_BWD},
    {"moe.dwrouter", "M", B "*" SP "*Dmodel/ep*KExperts", "Dmodel/ep,KExperts", MGRAD, E("moe.dyrouter"),
     EC("post_attn_norm.y", HE, NULL), NULL, SR_MAC | SR_BWD},
    {"moe.dx01", "M", B "*" SP "*KExperts*Dmodel/ep", HE, NULL, E("moe.dyrouter"), E("_moe.wrouter_backward"), NULL,
     SR_MAC | SR_BWD},
    {"moe.dx1", "I", NULL, YE, NULL, EC("$dxsum", YE, NULL), E0, NULL, SR_BWD},
    {"moe.dx02", "B", B "*" SP "*Dmodel/ep", HE, NULL, E("moe.dx1"), E0, NULL, SR_BWD},
    {"moe.dx", "A", B "*" SP "*Dmodel/ep", HE, NULL, E("moe.dx01"), E("moe.dx02"), NULL, SR_BWD},
    {"post_attn_norm.dy", "A", N_ACT(SP), ACTSP, NULL, EC("moe.dx", ACTSP, NULL), E("ffn_res.dx2"), NULL, SR_BWD},
    LLAMA_ATTENTION_BWD_HEAD,
    {"mha.attn_kernel.dk1", "CUSTOM", B "*" S "*Dmodel/Head*Head/tp*6", KVF_H, "cp", E("mha.dattn"), E0, NULL,
     SR_BWD | SR_ATTN_DKV},
    {"mha.attn_kernel.dv1", "CUSTOM", B "*" S "*Dmodel/Head*Head/tp*6", KVF_H, "cp", E("mha.dattn"), E0, NULL,
     SR_BWD | SR_ATTN_DKV},
    {"mha.attn_kernel.dk", "SLICE", B "*" S "*Dmodel/Head*KVHead/tp", LKV, NULL, EC("mha.attn_kernel.dk1", QS, NULL),
     E0, NULL, SR_BWD},
    {"mha.attn_kernel.dv", "SLICE", B "*" S "*Dmodel/Head*KVHead/tp", LKV, NULL, EC("mha.attn_kernel.dv1", QS, NULL),
     E0, NULL, SR_BWD},
    {"mha.dkv", "SLICE", B "*" S "*Dmodel/Head*2*KVHead/tp", B "," S ",Dmodel/Head,2*KVHead/tp", NULL,
     E("mha.attn_kernel.dv"), E("mha.attn_kernel.dk"), NULL, SR_BWD},
    {"mha.dqkv", "SLICE", B "*" S "*Dmodel/Head*(Head + 2*KVHead)/tp", LQKV, NULL, E("mha.dkv"),
     E("mha.attn_kernel.dq"), NULL, SR_BWD},
    LLAMA_ATTENTION_BWD_TAIL,
    GRAD_ASSEMBLY(MW_TOT, MW_SH,
                  "mha.dwqkv mha.dwo moe.dwrouter moe.%*.ffn.dwgate moe.%*.ffn.dwdown"),
};

/* The expert FFN on its share of the routed tokens: xe its input slice, fs
 * its sequence. STAGE gives each local expert (Seq/cp)*KExperts/(Experts*
 * tp*ep) tokens, so the Experts/ep local experts together take only 1/ep of
 * the tokens dispatched to the rank; ours take all of them, Experts/ep
 * equal shares ((Seq/cp)*KExperts/(Experts*tp) each). */
#define XE_STAGE B ",(Seq/cp)*KExperts/(Experts*tp*ep),Dmodel"
#define FS_STAGE "Seq*KExperts/(Experts*ep)/cp"
#define XE_OURS B ",(Seq/cp)*KExperts/(Experts*tp),Dmodel"
#define FS_OURS "Seq*KExperts/Experts/cp"
#define MOE_EXPERT_FFN(XE, FS, F)                                                                                  \
  {"ldis.x_expert", "SLICE", B "*" FS "/tp*Dmodel", XE, NULL, E("^moe.xrouted"), E0, NULL, F},                     \
  {"ffn.x00", "I", NULL, B "," FS ",Dmodel", NULL, EC("ldis.x_expert", B "," FS ",Dmodel", NULL), E0, NULL, F},   \
  {"ffn.xgate", "M", B "*" FS "*Dmodel*Dff/tp", B "," FS ",Dff/tp", NULL, E("ffn.x00"), E("ffn.wgate"), NULL,      \
   SR_MAC | F},                                                                                                    \
  {"ffn.xdown1", "M", B "*" FS "*Dff/tp*Dmodel", B "," FS ",Dmodel", "tp", E("ffn.xgate"), E("ffn.wdown"), NULL,   \
   SR_MAC | F},                                                                                                    \
  /* STAGE declares Dff here too (see tp_block_mb) */                                                              \
  {"ffn.xdown", "I", NULL, B ",(" FS ")/tp,Dff", NULL, EC("ffn.xdown1", B ",(" FS ")/tp,Dff", NULL), E0, NULL, F}, \
  {"ldis.y", "SLICE", B "*(Seq/cp)*KExperts/(tp*ep)*Dmodel", XR, NULL, E("ffn.xdown"), E0, NULL, F},               \
  {"ldis.dy_expert", "SLICE", B "*" FS "/tp*Dmodel", XE, NULL, E("^moe.dyrouted"), E0, NULL, SR_BWD | F},          \
  {"ffn.dxdown2", "I", NULL, B "," FS ",Dmodel", NULL, EC("ldis.dy_expert", B "," FS ",Dmodel", NULL), E0, NULL,  \
   SR_BWD | F},                                                                                                    \
  {"ffn.dwdown", "M", B "*" FS "*Dmodel*Dff/tp", "Dff/tp,Dmodel", WGRAD, E("ffn.dxdown2"), E("ffn.xgate"), NULL,   \
   SR_MAC | SR_BWD | F},                                                                                           \
  {"ffn.dxgate", "M", B "*" FS "*Dmodel*Dff/tp", B "," FS ",Dff/tp", NULL, E("ffn.dxdown2"),                      \
   E("^_moe.%e.ffn.wdown_backward"), NULL, SR_MAC | SR_BWD | F},                                                   \
  {"ffn.x01", "I", NULL, B "," FS ",Dmodel", NULL, EC("ldis.x_expert", B "," FS ",Dmodel", NULL), E0, NULL,       \
   SR_BWD | F},                                                                                                    \
  {"ffn.dwgate", "M", B "*" FS "*Dff/tp*Dmodel", "Dmodel,Dff/tp", WGRAD, E("ffn.dxgate"), E("ffn.x01"), NULL,      \
   SR_MAC | SR_BWD | F},                                                                                           \
  {"ffn.dx000", "M", B "*" FS "*Dff/tp*Dmodel", B "," FS ",Dmodel", "tp", E("ffn.dxgate"),                         \
   E("^_moe.%e.ffn.wgate_backward"), NULL, SR_MAC | SR_BWD | F},                                                   \
  {"ffn.dx0", "I", NULL, B ",(" FS ")/tp,Dmodel", NULL, EC("ffn.dx000", B ",(" FS ")/tp,Dmodel", NULL), E0, NULL,  \
   SR_BWD | F}

/* One local expert: its slice of the routed tokens through the FFN, and the
 * adds that sum the experts' results (named in the block, as STAGE). */
static const synth_row moe_expert_mb[] = {
    {"ffn.wgate", "CUSTOM", NULL, "Dmodel,Dff/tp", NULL, E("^_assembled_weight"), E0, NULL, 0},
    {"ffn.wdown", "CUSTOM", NULL, "Dff/tp,Dmodel", NULL, E("^_assembled_weight"), E0, NULL, 0},
    {"^_moe.%e.ffn.wgate_backward", "CUSTOM", NULL, "Dmodel,Dff/tp", NULL, E("^_assembled_weight_backward"), E0, NULL,
     SR_BWD},
    {"^_moe.%e.ffn.wdown_backward", "CUSTOM", NULL, "Dff/tp,Dmodel", NULL, E("^_assembled_weight_backward"), E0, NULL,
     SR_BWD},
    MOE_EXPERT_FFN(XE_STAGE, FS_STAGE, SR_COMPAT),
    MOE_EXPERT_FFN(XE_OURS, FS_OURS, SR_OURS),
    {"ldis.dx", "SLICE", B "*(Seq/cp)*KExperts/(tp*ep)*Dmodel", XR, NULL, E("ffn.dx0"), E0, NULL, SR_BWD},
    {"^moe.yrouted_r%e", "E2", B "*(Seq/cp)*KExperts/(tp*ep)*Dmodel", XR, NULL, E("$yprev"), E("ldis.y"), NULL,
     SR_CHAIN},
    {"^moe.dxrouted_r%e", "E2", B "*(Seq/cp)*KExperts/(tp*ep)*Dmodel", XR, NULL, E("$dxprev"), E("ldis.dx"), NULL,
     SR_CHAIN | SR_BWD},
};

static const synth_row moe_block_w[] = {BLOCK_W_ROWS(MW_TOT, MW_SH)};

static const synth_template templates[] = {
    {"tp_gpt", "Head", ROWS(tp_block_mb), ROWS(gpt_block_w), ROWS(tp_in_mb), ROWS(tp_in_w), ROWS(tp_out_mb),
     ROWS(tp_out_w), {NULL, 0}},
    {"tpsp_gpt", "Head", ROWS(tpsp_block_mb), ROWS(gpt_block_w), ROWS(sp_in_mb), ROWS(sp_in_w), ROWS(sp_out_mb),
     ROWS(sp_out_w), {NULL, 0}},
    {"tpsp_llama", "KVHead", ROWS(llama_block_mb), ROWS(llama_block_w), ROWS(sp_in_mb), ROWS(sp_in_w), ROWS(sp_out_mb),
     ROWS(sp_out_w), {NULL, 0}},
    {"tpsp_moe", "KVHead", ROWS(moe_block_mb), ROWS(moe_block_w), ROWS(sp_in_mb), ROWS(sp_in_w), ROWS(sp_out_mb),
     ROWS(sp_out_w), ROWS(moe_expert_mb)},
};

const synth_template *synth_template_get(const char *model, int tpsp) {
  if (strcmp(model, "gpt") == 0) return &templates[tpsp ? 1 : 0];
  if (strcmp(model, "llama") == 0 && tpsp) return &templates[2];
  if (strcmp(model, "moe") == 0 && tpsp) return &templates[3];
  return NULL;
}
