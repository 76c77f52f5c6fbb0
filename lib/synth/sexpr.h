/* sexpr.h - the size expressions of the model templates (private to libchakra).
 *
 * Template shapes are written as STAGE prints them ("MicroBatch/dp,Seq/cp,Dmodel",
 * "2*Dff*Dmodel/tp + 4*Dmodel**2/tp"). An expression is compiled once into a
 * small postfix program and evaluated exactly (rationals over int64) against
 * the configuration's symbol values; the set of symbols it mentions says over
 * which parallel groups a dimension is partitioned. */
#ifndef CHAKRA_SYNTH_SEXPR_H
#define CHAKRA_SYNTH_SEXPR_H

#include <stdint.h>

#include "chakra/error.h"

/* Model symbols first, then the parallel ones (their order is the collective
 * matcher's order: dp, tp, cp, ep; fsdp stands for dp under FSDP). Ctx, last
 * so that the others keep their places, is the number of keys each query
 * attends: Seq, except in a decode step (Seq 1, Ctx the cached context). */
enum {
  SX_BATCH, SX_MICROBATCH, SX_SEQ, SX_DMODEL, SX_DFF, SX_HEAD, SX_KVHEAD, SX_DVOCAL,
  SX_EXPERTS, SX_KEXPERTS, SX_DP, SX_TP, SX_CP, SX_EP, SX_FSDP, SX_CTX, SX_NSYM
};
#define SX_PAR_FIRST SX_DP
#define SX_NPAR 4 /* dp, tp, cp, ep */

typedef struct sx_rat {
  int64_t num, den; /* den > 0, reduced */
} sx_rat;

/* A compiled expression: postfix code, at most SX_MAXCODE items. */
#define SX_MAXCODE 48
typedef struct sx_expr {
  uint8_t n;
  uint8_t code[SX_MAXCODE];    /* opcode or SX_OP_PUSH/SX_OP_SYM */
  int64_t arg[SX_MAXCODE];     /* literal or symbol index */
  uint32_t syms;               /* bit i: symbol i occurs */
} sx_expr;

/* sx_eval's result when a value (or a step on the way to it) does not fit
 * int64: err is left alone, for the caller to name the options. */
#define SX_ETOOLARGE 1

/* Compiles text (NULL or "" = the constant 1). */
int sx_compile(sx_expr *e, const char *text, chakra_error *err);
/* Evaluates with vals[SX_NSYM]; fails on division by zero, or with
 * SX_ETOOLARGE on overflow. */
int sx_eval(const sx_expr *e, const sx_rat *vals, sx_rat *out, chakra_error *err);
/* Evaluates and requires a non-negative integer. */
int sx_eval_int(const sx_expr *e, const sx_rat *vals, uint64_t *out, chakra_error *err);
/* *out = a x b, exact; -1 when the result does not fit int64. */
int sx_rat_mul(sx_rat a, sx_rat b, sx_rat *out);
/* The symbol spelled name[0..len), or -1. */
int sx_symbol(const char *name, unsigned len);
const char *sx_symbol_name(int sym);
/* The chakra synth option that sets the symbol ("--micro-batch"). */
const char *sx_symbol_option(int sym);

#endif
