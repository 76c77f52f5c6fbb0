/* gen.h - workload generators that need no input trace.
 *
 * microbench: one COMM_COLL_NODE per rank, the ASTRA-sim microbenchmark
 * shape (GlobalMetadata version "0.0.4", node id = rank, name
 * "<coll>_<N>npus_<size>", attributes is_cpu_op=false, comm_type,
 * comm_size). For the shipped parameters the files are byte-identical to
 * the reference ones.
 *
 * dlrm: one training step of a DLRM-like recommendation model per rank
 * (docs/gen.md): a data-parallel bottom MLP, embedding tables sharded
 * table-wise over the ranks with the all-to-all of pooled embeddings
 * forward and of their gradients backward, the dot interaction, a
 * data-parallel top MLP whose gradients are all-reduced, the update. */
#ifndef CHAKRA_GEN_H
#define CHAKRA_GEN_H

#include <stdint.h>

#include "chakra/export.h"
#include "chakra/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct chakra_microbench_options {
  /* phase "ranks": rank files made of all, one call each; nonzero stops
   * it with CHAKRA_ECANCELED. May be NULL. */
  chakra_progress_fn progress;
  void *progress_ctx;
} chakra_microbench_options;

/* Writes PREFIX.<r>.et for r in 0..npus-1. comm_type is a
 * CollectiveCommType value (ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER,
 * ALL_TO_ALL). Each file is written atomically, one after the other: after
 * a failure the files of the ranks before the failing one are in place.
 * opt may be NULL. */
CHAKRA_API int chakra_gen_microbench(const char *prefix, int comm_type, uint32_t npus, uint64_t size_bytes,
                                     const chakra_microbench_options *opt, chakra_error *err);
/* The same workload in the shared form (chakra/set.h): PREFIX.class0.et,
 * rank 0's file, which every rank runs (so every rank's node has id 0),
 * and PREFIX.set.json, a grid of one axis and one class; all or none. Two
 * files whatever npus: the suite's microbenchmarks at 4,096 ranks. */
CHAKRA_API int chakra_gen_microbench_shared(const char *prefix, int comm_type, uint32_t npus, uint64_t size_bytes,
                                            chakra_error *err);

/* The reference generator's (mlcommons/chakra chakra_generator) fourteen
 * test workloads, each as DIR/NAME.<r>.et for r in 0..npus-1, byte for
 * byte its files: one_metadata_node_all_types (a METADATA_NODE with an
 * attribute of every kind), one_remote_mem_load_node,
 * one_remote_mem_store_node (tensor_size), one_comp_node,
 * two_comp_nodes_independent, two_comp_nodes_dependent (duration_micros
 * runtime), ALL_REDUCE, ALL_TO_ALL, ALL_GATHER, REDUCE_SCATTER, BROADCAST
 * (comm_size), BARRIER, one_comm_send_node, one_comm_recv_node
 * (tensor_size). GlobalMetadata version "1.0.0"; node ids count up over
 * every file in that order, as the reference numbers them. Each workload
 * is written atomically, one after the other. */
typedef struct chakra_gen_reference_options {
  uint32_t npus;        /* the reference's default: 64 */
  uint64_t runtime;     /* compute nodes' duration_micros (5) */
  uint64_t tensor_size; /* memory and send/receive nodes (1024) */
  uint64_t comm_size;   /* collectives, BARRIER's is 0 (65536) */
} chakra_gen_reference_options;
CHAKRA_API int chakra_gen_reference(const char *dir, const chakra_gen_reference_options *o, chakra_error *err);

/* A DLRM-like step. The MLP lists are the layers' output widths, input
 * first to last (the bottom MLP's input is dense_features wide, its last
 * width must be emb_dim; the top MLP's input is the interaction's
 * emb_dim + tables*(tables+1)/2 features). */
typedef struct chakra_gen_dlrm_config {
  uint32_t npus;               /* ranks: the data-parallel degree and the table shards */
  uint64_t batch;              /* global batch, batch/npus samples per rank */
  uint64_t tables, rows;       /* embedding tables and rows per table */
  uint64_t emb_dim, lookups;   /* embedding width; rows pooled per table and sample */
  uint64_t dense_features;     /* the bottom MLP's input width */
  const uint64_t *bottom_mlp, *top_mlp;
  size_t n_bottom, n_top;      /* 1 to CHAKRA_GEN_DLRM_MAX_LAYERS each */
  uint32_t dtype_bytes;        /* bytes per element (default 4, fp32) */
  double peak_tflops;          /* with mem_bw_gbs: duration_micros from the roofline; 0 = none */
  double mem_bw_gbs;           /* GB/s, GB = 10^9 */
  unsigned threads;            /* rank files written on this many threads; 0 = one per CPU, at most 8 */
  chakra_progress_fn progress; /* phase "ranks": files written of all (build.h's workload writer); may be NULL */
  void *progress_ctx;
} chakra_gen_dlrm_config;

#define CHAKRA_GEN_DLRM_MAX_LAYERS 64

typedef struct chakra_gen_dlrm_stats {
  uint64_t nodes, bytes;       /* written, over all ranks */
  uint64_t nodes_per_rank;     /* of a rank holding the most tables */
  uint64_t tables_per_rank;    /* the most any rank holds */
  uint64_t table_bytes;        /* memory of those tables: tables_per_rank x rows x emb_dim x dtype_bytes */
} chakra_gen_dlrm_stats;

/* MLPerf's DLRM on Criteo 1TB: 8 ranks, batch 65536, 26 tables of 1,000,000
 * rows (MLPerf's largest have 40 million), width 128, one lookup, 13 dense
 * features, bottom 512-256-128, top 1024-1024-512-256-1, fp32. */
CHAKRA_API void chakra_gen_dlrm_config_default(chakra_gen_dlrm_config *c);

/* 0, or CHAKRA_EINVAL with one line naming the option and the constraint. */
CHAKRA_API int chakra_gen_dlrm_check(const chakra_gen_dlrm_config *c, chakra_error *err);

/* Writes PREFIX.<r>.et for every rank, all or none. stats may be NULL. */
CHAKRA_API int chakra_gen_dlrm(const chakra_gen_dlrm_config *c, const char *prefix, chakra_gen_dlrm_stats *stats,
                               chakra_error *err);

/* The size label used in node names: "1MB" for 1 MiB, "64KB", "100B";
 * written into out (always terminated when out_size > 0). */
CHAKRA_API void chakra_gen_size_label(uint64_t bytes, char *out, size_t out_size);

#ifdef __cplusplus
}
#endif
#endif
