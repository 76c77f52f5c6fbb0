/* stagetpl.h - STAGE's assembled model graphs as data, for --stage-compat
 * (private to libchakra).
 *
 * One row per STAGE tensor, in the order STAGE creates them, because STAGE
 * numbers nodes in that order and a node's id is its issue priority in the
 * simulator. Shape texts are spelled as STAGE prints them: they appear in
 * the nodes' inputs/outputs attributes. A text starting with '|' is the
 * block's flat weight size W: "(W)/dp" with --weight-sharded, W without.
 *
 * References (x1, x2, extra, space-separated): a name in the same module
 * instance; "/name" absolute, where %b is the block, "/mb0." the first
 * micro-batch and "/mb+." every later one (extra only); "$in" the block's
 * forward input (previous block's ffn_res.y, the input embedding's y; for
 * the output embedding the last block's ffn_res.y); "$dout" its incoming
 * gradient (next block's input_norm.dx, the output embedding's dx; for the
 * input embedding block 0's input_norm.dx). */
#ifndef CHAKRA_SYNTH_STAGETPL_H
#define CHAKRA_SYNTH_STAGETPL_H

typedef struct stg_row {
  const char *name, *op;
  const char *ops;      /* op count (multiply-accumulates); NULL = 0 */
  const char *y, *yh;   /* output shape and hidden (partial-sum) dims */
  const char *x1, *x1s, *x1h; /* first input, the shape and hidden it is declared with */
  const char *x2, *x2s, *x2h;
  const char *extra;    /* CUSTOM ops' further dependencies */
  int rg;               /* requires gradients (a weight: optimizer state in the memory heuristic) */
} stg_row;

typedef struct stg_rows {
  const stg_row *rows;
  unsigned n;
} stg_rows;

/* Module instances: block (per micro-batch and block, prefix
 * mb<m>.transformer.<b>.), in and out (per micro-batch, prefix mb<m>.; out
 * includes the loss), block_w (per block, transformer.<b>.), in_w and out_w
 * (once). Each *_w table holds three rows in STAGE's order of passes: the
 * micro-batch merge of the gradient, the weight, its update. */
typedef struct stg_model {
  stg_rows block, in, out, block_w, in_w, out_w;
} stg_model;

/* STG_DEBUG: STAGE's --model_type debug, one embedding layer (its rows in
 * `in`, named without prefix), no micro-batch copies. */
enum { STG_TP_GPT, STG_TPSP_GPT, STG_LLAMA, STG_DEBUG };

const stg_model *stg_model_get(int which);

#endif
