/* sgraph.h - the synthesised training graph of one configuration (private
 * to libchakra).
 *
 * The template rows are instantiated per micro-batch and block into tensors;
 * each tensor becomes a COMP node (when it has work), a chain of collectives
 * per input edge whose producer layout differs from the declared one
 * (shard.h), and send/receive pairs where an edge crosses pipeline stages.
 * Zero-work tensors get no node: their consumers depend on what they
 * depend on. Nodes carry their stage; ranks of a stage share them. */
#ifndef CHAKRA_SYNTH_SGRAPH_H
#define CHAKRA_SYNTH_SGRAPH_H

#include <stdint.h>

#include "chakra/error.h"
#include "sexpr.h"
#include "templates.h"
#include "../util/hmap.h"

#define SG_MAXDIM 6

typedef struct sg_config {
  sx_rat vals[SX_NSYM];
  uint32_t deg[4]; /* dp, tp, cp, ep */
  uint32_t pp, nmb, nblocks, out_stage;
  uint32_t nexperts; /* local experts per rank (MoE: Experts/ep), 0 for dense models */
  uint32_t *block_stage; /* owned by the graph */
  int compat, fsdp, mixed, attn_term, recompute;
  uint64_t tag_base;
  /* An inference step (prefill, decode): no backward rows, no loss, the
   * embedding a lookup, and a COMP node's size is the elements it moves
   * (sg_node.size). decode: Seq is 1 (one new token per sequence), so a
   * dimension split over tp may be a fraction whose tensor is whole. */
  int infer, decode;
  uint32_t elem_bytes; /* bytes per element in sizes (--dtype-bytes; 1 with --stage-compat) */
  int mb_is_batch;     /* no --micro-batch: MicroBatch is --batch (for messages) */
} sg_config;

enum { SN_COMP, SN_COLL, SN_SEND, SN_RECV };
enum { SG_FWD, SG_BWD, SG_UPDATE };

typedef struct sg_node {
  uint8_t kind, comm_type, dim, edge, phase, recompute;
  int32_t tensor; /* SEND/RECV: the tensor sent */
  int32_t stage, mb, peer_stage;
  uint32_t tag;
  uint64_t size; /* elements (collectives, send, receive; inference: compute reads + writes) */
  uint32_t dep_off, ndep;
} sg_node;

typedef struct sg_rowinfo {
  const synth_row *row;
  sx_expr dims[SG_MAXDIM], hidden;
  sx_expr ddims[2][SG_MAXDIM], dhidden[2];
  uint8_t ndims, nddims[2];
  uint64_t elems, ops_compat, ops_ours;
  uint64_t in_elems[2]; /* inference: elements of each declared input layout */
  uint64_t kv_elems;    /* inference, attention kernel: the K and V it reads (the KV cache) */
} sg_rowinfo;

typedef struct sg_tensor {
  int32_t row, stage, mb, block, expert;
  uint8_t phase, out_state, mod;
  const char *name; /* full name with @version */
  int32_t src[2], disp[2];
  uint32_t extra_off, nextra;
  int32_t comp, chain_first[2];
  uint8_t chain_len[2];
  uint32_t out_off, nout;
} sg_tensor;

typedef struct sg_graph {
  sg_config cfg;
  sg_rowinfo *rows;
  uint32_t nrows, table_first[7];
  sg_tensor *t;
  uint32_t nt, capt;
  sg_node *nodes;
  uint32_t nn, capn;
  int32_t *deps, *outs, *extras;
  uint32_t ndeps, capdeps, nouts, capouts, nextras, capextras;
  hmap names_;  /* name -> tensor */
  hmap recvs;   /* (tensor, stage) -> receive node */
  uint32_t next_tag;
  char *names;
  size_t nnames, capnames;
  int failed;
} sg_graph;

/* Builds the graph of template tpl under cfg (copied; block_stage is taken
 * over). On failure the graph is freed and err says why. */
/* Every row's sizes and FLOPs for cfg, without building anything: 0, or
 * CHAKRA_EINVAL naming the options whose sizes do not fit int64. */
int sg_check_sizes(const synth_template *tpl, const sg_config *cfg, chakra_error *err);
int sg_build(sg_graph *g, const synth_template *tpl, const sg_config *cfg, chakra_error *err);
void sg_free(sg_graph *g);

/* Compiles a shape text (dims separated by top-level commas) into at most
 * SG_MAXDIM expressions. */
int sg_compile_shape(const char *text, sx_expr *dims, uint8_t *n, chakra_error *err);

/* The "inputs"/"outputs" memory-heuristic size of a tensor (STAGE's). */
double sg_mem_size(const sg_graph *g, const sg_tensor *t);

#endif
