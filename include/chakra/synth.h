/* synth.h - workload synthesis: per-rank Chakra ETs for transformer training
 * (or an inference step: prefill, decode) under data, tensor, sequence,
 * pipeline and expert parallelism and FSDP,
 * generated from compiled-in model templates (STAGE-compatible on request).
 * The command-line front end is `chakra synth` (docs/synth.md). */
#ifndef CHAKRA_SYNTH_H
#define CHAKRA_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "chakra/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum chakra_synth_schedule {
  CHAKRA_SYNTH_SCHEDULE_NONE,  /* micro-batches independent (STAGE) */
  CHAKRA_SYNTH_SCHEDULE_GPIPE, /* all forwards, then all backwards */
  CHAKRA_SYNTH_SCHEDULE_1F1B   /* warm-up forwards, one forward one backward, cool-down */
} chakra_synth_schedule;

/* Node ids are the simulator's issue priority (the lowest ready id gets a
 * free slot first). */
typedef enum chakra_synth_order {
  CHAKRA_SYNTH_ORDER_SCHEDULE, /* topological, following the pipeline schedule (default) */
  CHAKRA_SYNTH_ORDER_STAGE     /* STAGE's: tensor by tensor in its graph's order, micro-batch by micro-batch */
} chakra_synth_order;

/* How ranks are numbered over the parallel dimensions (docs/synth.md,
 * "Ranks"); the pipeline stage is always the slowest. */
typedef enum chakra_synth_rank_order {
  CHAKRA_SYNTH_RANKS_DP_FIRST, /* STAGE's: dp varies fastest, then tp, sp, ep (default) */
  CHAKRA_SYNTH_RANKS_TP_FIRST  /* Megatron's: tp fastest, then sp, ep, dp: a tp group on consecutive ranks */
} chakra_synth_rank_order;

/* What one file set describes. */
typedef enum chakra_synth_phase {
  CHAKRA_SYNTH_PHASE_TRAIN,   /* one training iteration: forward, backward, gradient reduction, update */
  CHAKRA_SYNTH_PHASE_PREFILL, /* inference: the forward pass over the prompt (seq tokens), writing the KV cache */
  CHAKRA_SYNTH_PHASE_DECODE   /* inference: one new token per sequence, attending a KV cache of seq tokens */
} chakra_synth_phase;

typedef struct chakra_synth_config {
  const char *model_type; /* "gpt", "dense", "llama", "moe" */
  uint32_t dp, tp, sp, pp, ep;
  int weight_sharded, tpsp, mixed_precision, activation_recompute;
  uint64_t num_stacks, dmodel, dff, head, kvhead, seq, dvocal, batch, experts, kexperts;
  int64_t micro_batch;      /* global; -1 = batch */
  int stage_compat;         /* STAGE's files (dense models: byte for byte, ids included; schedule,
                               order, dtype_bytes, peak figures and recompute are then not used) */
  chakra_synth_schedule schedule;
  uint32_t dtype_bytes;     /* bytes per element (default 2) */
  double peak_tflops;       /* with mem_bw_gbs: durations from the roofline; 0 = none */
  double mem_bw_gbs;        /* GB/s, GB = 10^9 */
  uint64_t tag_base;        /* first pipeline tag (--seed) */
  const uint32_t *ranks;    /* write only these ranks; NULL = all */
  size_t n_ranks;
  chakra_synth_order order; /* how node ids are assigned; ignored with stage_compat on dense models (STAGE's) */
  chakra_synth_phase phase; /* train (default); prefill and decode refuse stage_compat */
  unsigned threads;         /* rank files written on this many threads; 0 = one per CPU, at most 8.
                               The bytes never depend on it */
  int singleton_groups;     /* PREFIX.json lists the groups of one rank too (a degree of 1 makes one
                               per rank; no collective uses them); always with stage_compat (STAGE
                               writes them). Either way the other groups keep their ids */
  chakra_progress_fn progress; /* phase "ranks": files written of all (build.h's workload writer); may be NULL */
  void *progress_ctx;
  chakra_synth_rank_order rank_order; /* dp first (default); stage_compat needs it (STAGE's numbering) */
} chakra_synth_config;

/* STAGE's defaults for every field (model gpt, degrees 1, schedule 1f1b). */
CHAKRA_API void chakra_synth_config_default(chakra_synth_config *c);

typedef struct chakra_synth_stats {
  uint32_t ranks, stages, ranks_written;
  uint64_t nodes_written, bytes_written;
  uint64_t nodes_per_stage[64]; /* nodes per rank of the first 64 stages */
} chakra_synth_stats;

/* Checks the configuration without writing anything: 0, or CHAKRA_EINVAL
 * with one line naming the option and the constraint. */
CHAKRA_API int chakra_synth_check(const chakra_synth_config *c, chakra_error *err);

/* Writes PREFIX.<r>.et for every (selected) rank and PREFIX.json with the
 * communicator groups (of two ranks or more, unless singleton_groups).
 * All files or none: on failure nothing is left.
 * stats may be NULL. */
CHAKRA_API int chakra_synth_write(const chakra_synth_config *c, const char *prefix, chakra_synth_stats *stats,
                       chakra_error *err);

/* The same set in the shared form (chakra/set.h): PREFIX.set.json, whose
 * grid gives every rank's class (its pipeline stage), group names and
 * peers by rule, and PREFIX.class<s>.et, the file chakra_synth_write()
 * writes for the first rank of stage s; nothing per rank. The groups are
 * the manifest's rules (no PREFIX.json). Unsharing it (chakra_set_unshare)
 * gives chakra_synth_write()'s files byte for byte. c->ranks must be
 * NULL. stats count the templates as the ranks written. */
CHAKRA_API int chakra_synth_write_shared(const chakra_synth_config *c, const char *prefix, chakra_synth_stats *stats,
                                         chakra_error *err);

#ifdef __cplusplus
}
#endif
#endif
