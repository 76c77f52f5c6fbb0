/* stage.h - `chakra synth --stage-compat` for STAGE's dense models (gpt,
 * dense, llama): the files STAGE (astra-sim/symbolic_tensor_graph 3a7f49c)
 * writes for the same command line, node ids and order included (private
 * to libchakra).
 *
 * STAGE gives every tensor of a pipeline stage a compute node and its
 * re-layouts collective nodes, numbered by one counter in tensor order,
 * then send/receive pairs; it then deletes the compute nodes without work,
 * re-linking their children round by round. Ids are the simulator's issue
 * priority, so they are reproduced exactly, holes included, by running the
 * same steps over the same tensors (stagetpl.h). MoE is not handled here:
 * STAGE's MoE path fails at 3a7f49c, so there is nothing to reproduce. */
#ifndef CHAKRA_SYNTH_STAGE_H
#define CHAKRA_SYNTH_STAGE_H

#include <stdint.h>

#include "chakra/synth.h"
#include "emit.h"

/* Whether c is handled here (--stage-compat on a dense model). */
int stage_applies(const chakra_synth_config *c);

/* STAGE's --model_type debug (one embedding layer; ranks and groups over
 * dp, tp, cp and ep, as for MoE). */
int stage_is_debug(const chakra_synth_config *c);

/* The tensor-parallel degree STAGE uses: it folds --ep into --tp for dense
 * models. */
uint32_t stage_tp(const chakra_synth_config *c);

/* The checks STAGE's command line implies; 0 or CHAKRA_EINVAL. */
int stage_check(const chakra_synth_config *c, chakra_error *err);

/* Encodes the stages with need[s] set into stages[s] (c->pp entries). */
int stage_encode(const chakra_synth_config *c, const uint8_t *need, emit_stage **stages, chakra_error *err);

/* STAGE's tensor order, for numbering the default mode's nodes as STAGE
 * would (--order stage): the position of a tensor (by name) among every
 * tensor STAGE creates for c with the given model (STG_* of stagetpl.h),
 * -1 when STAGE has no such tensor. */
typedef struct stage_pos stage_pos;
stage_pos *stage_pos_new(const chakra_synth_config *c, int model, chakra_error *err);
int64_t stage_pos_find(const stage_pos *p, const char *tensor);
void stage_pos_free(stage_pos *p);

#endif
