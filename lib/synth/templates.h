/* templates.h - the model templates as compiled-in data (private to libchakra).
 *
 * A template is STAGE's sharding spreadsheet written as C tables: one row per
 * tensor with its op, op count, local output shape and partial-sum ("hidden")
 * symbols, and per input the producer and the shape/hidden the op declares it
 * needs. Collectives are not written here: they follow from comparing a
 * producer's shape with the declared one (shard.c). Names are relative to the
 * row's module instance; see synth_ref below for how references resolve. */
#ifndef CHAKRA_SYNTH_TEMPLATES_H
#define CHAKRA_SYNTH_TEMPLATES_H

/* One input edge. src: a reference (below); shape NULL = takes the producer
 * as it is (no collective); otherwise the declared local shape and hidden
 * (NULL hidden = not a partial sum). disp: the name STAGE prints in the
 * node's "inputs" attribute: NULL = src, "<" = src's own first input. */
typedef struct synth_edge {
  const char *src, *shape, *hidden, *disp;
} synth_edge;

/* Row flags. */
enum {
  SR_WEIGHT = 1 << 0,    /* trainable weight: optimizer state in the memory heuristic */
  SR_MAC = 1 << 1,       /* op count is multiply-accumulates (x2 for FLOPs) */
  SR_BWD = 1 << 2,       /* belongs to the backward pass (schedule, recompute) */
  SR_COMPAT = 1 << 3,    /* only with --stage-compat */
  SR_OURS = 1 << 4,      /* only without --stage-compat */
  SR_FSDP = 1 << 5,      /* only with --weight-sharded */
  SR_NOFSDP = 1 << 6,    /* only without --weight-sharded */
  SR_TRANSIENT = 1 << 7, /* counted 0 in the memory heuristic under FSDP */
  SR_ATTN_F = 1 << 8,    /* attention-score term: forward (2 units) */
  SR_ATTN_DQ = 1 << 9,   /* backward: dQ and dP (2 units) */
  SR_ATTN_DKV = 1 << 10, /* backward: dK or dV (1 unit) */
  SR_CHAIN = 1 << 11,    /* expert table: one of the n-1 adds summing the local experts'
                            outputs (experts 1..n-1); only the last one does work (STAGE) */
  SR_TRAIN = 1 << 12,    /* only in training (the loss; the embedding as a one-hot matmul) */
  SR_INFER = 1 << 13     /* only in an inference step (--phase prefill or decode) */
};

/* References: "name" = same module instance; "/text" = absolute, where %m is
 * the micro-batch, %b the block, %e the local expert, "mb*" every
 * micro-batch and "%*" every local expert (both extra deps only); "^name" =
 * in the enclosing block of an expert row (row names too); "$in" = the
 * block's forward input (previous block's output or the input embedding),
 * "$dout" = its incoming gradient (next block's input gradient or the output
 * embedding's). MoE: "$ysum"/"$dxsum" = the sum of the local experts'
 * outputs / input gradients (the last add of the chain, or expert 0's own
 * with one local expert), "$yprev"/"$dxprev" = the chain so far, in the
 * add of expert %e. Names without '@' get "@0". */
typedef struct synth_row {
  const char *name;
  const char *op;     /* op_type attribute: T, I, M, E, A, SLICE, CUSTOM */
  const char *ops;    /* op-count expression; NULL = 0 */
  const char *shape;  /* output local shape, dims separated by ',' */
  const char *hidden; /* partial-sum symbols, NULL = none */
  synth_edge x1, x2;
  const char *extra;  /* space-separated references */
  unsigned flags;
} synth_row;

typedef struct synth_rows {
  const synth_row *rows;
  unsigned n;
} synth_rows;

/* Module instances: per micro-batch and block, per block, per micro-batch
 * (embeddings, loss), once; MoE: per micro-batch, block and local expert
 * (Experts/ep of them; named mb<m>.transformer.<b>.moe.<e>.). */
typedef struct synth_template {
  const char *name;
  const char *kvheads; /* the heads K and V have (the KV cache's size): "Head" or "KVHead" */
  synth_rows block_mb, block_w;
  synth_rows in_mb, in_w, out_mb, out_w; /* out_* includes the loss */
  synth_rows expert_mb;                  /* empty for dense models */
} synth_template;

/* model: "gpt", "llama" or "moe"; tpsp: Megatron sequence parallelism.
 * NULL when there is no such template. */
const synth_template *synth_template_get(const char *model, int tpsp);

#endif
