/* nodekind.h - the node vocabulary's rules (include/chakra/node.h), inline
 * for the loaders that classify millions of nodes (the graph loader, the
 * simulator, replay); nodekind.c's public functions are these (private to
 * libchakra). */
#ifndef CHAKRA_TRACE_NODEKIND_H
#define CHAKRA_TRACE_NODEKIND_H

#include <string.h>

#include "chakra/attr.h"
#include "chakra/graph.h"
#include "chakra/node.h"

/* CollectiveCommType -> chakra_coll_type, for the four run natively. */
static inline int nodekind_native_coll(int comm_type) {
  switch (comm_type) {
    case CHAKRA_ALL_REDUCE: return CHAKRA_COLL_ALLREDUCE;
    case CHAKRA_ALL_GATHER: return CHAKRA_COLL_ALLGATHER;
    case CHAKRA_REDUCE_SCATTER: return CHAKRA_COLL_REDUCESCATTER;
    case CHAKRA_ALL_TO_ALL: return CHAKRA_COLL_ALLTOALL;
    default: return -1;
  }
}

/* The inverse: chakra_coll_type -> CollectiveCommType, or -1. */
static inline int nodekind_comm_type(int coll) {
  switch (coll) {
    case CHAKRA_COLL_ALLREDUCE: return CHAKRA_ALL_REDUCE;
    case CHAKRA_COLL_ALLGATHER: return CHAKRA_ALL_GATHER;
    case CHAKRA_COLL_REDUCESCATTER: return CHAKRA_REDUCE_SCATTER;
    case CHAKRA_COLL_ALLTOALL: return CHAKRA_ALL_TO_ALL;
    default: return -1;
  }
}

static inline chakra_kind nodekind_kind_of(int32_t type, int is_cpu) {
  switch (type) {
    case CHAKRA_COMP_NODE: return is_cpu ? CHAKRA_KIND_CPU : CHAKRA_KIND_COMPUTE;
    case CHAKRA_COMM_COLL_NODE: return CHAKRA_KIND_COLL;
    case CHAKRA_COMM_SEND_NODE: return CHAKRA_KIND_SEND;
    case CHAKRA_COMM_RECV_NODE: return CHAKRA_KIND_RECV;
    case CHAKRA_MEM_LOAD_NODE: return CHAKRA_KIND_MEM_LOAD;
    case CHAKRA_MEM_STORE_NODE: return CHAKRA_KIND_MEM_STORE;
    case CHAKRA_METADATA_NODE: return CHAKRA_KIND_METADATA;
    case CHAKRA_INVALID_NODE: return CHAKRA_KIND_NOOP;
    default: return CHAKRA_KIND_BAD;
  }
}

static inline int nodekind_is_comm(int32_t t) {
  chakra_kind k = nodekind_kind_of(t, 0);
  return k == CHAKRA_KIND_COLL || k == CHAKRA_KIND_SEND || k == CHAKRA_KIND_RECV;
}

static inline void nodekind_fill(chakra_gnode *n, const chakra_node *nd, const chakra_std_attrs *a, uint64_t offset, int bad_attrs) {
  memset(n, 0, sizeof *n);
  n->id = nd->id;
  n->duration_micros = nd->duration_micros;
  n->type = (int32_t)nd->type;
  n->offset = offset;
  n->present = a->present;
  n->flags = (uint8_t)((a->is_cpu_op ? CHAKRA_GNODE_CPU : 0) | (bad_attrs ? CHAKRA_GNODE_BAD_ATTRS : 0));
  n->size = nodekind_is_comm(n->type) ? a->comm_size : a->tensor_size;
  n->num_ops = a->num_ops;
  n->comm_src = a->comm_src;
  n->comm_dst = a->comm_dst;
  n->comm_tag = a->comm_tag;
  n->comm_type = (a->present & CHAKRA_HAS_COMM_TYPE) && a->comm_type >= 0 && a->comm_type < 10 ? (int8_t)a->comm_type : -1;
  n->involved_dim = a->involved_dim;
  n->n_involved_dim = (uint8_t)a->n_involved_dim;
}

/* chakra_gnode_duration_problem() (graph.h): the tools that run durations
 * in 64-bit nanoseconds (sim, replay) check it beside the classification. */
static inline const char *nodekind_duration_problem(const chakra_gnode *n) {
  if (n->duration_micros <= UINT64_MAX / 1000) return NULL;
  return "duration_micros does not fit 64-bit nanoseconds (at most 18446744073709551 us)";
}

/* The rules of send and receive nodes (node.h). */
static inline uint32_t nodekind_p2p_problems(const chakra_gnode *n, int send, uint32_t rank, uint32_t nranks, int32_t *peer) {
  uint32_t p = 0, peer_bit = send ? CHAKRA_HAS_COMM_DST : CHAKRA_HAS_COMM_SRC;
  uint32_t own_bit = send ? CHAKRA_HAS_COMM_SRC : CHAKRA_HAS_COMM_DST;
  int32_t own = send ? n->comm_src : n->comm_dst;
  if (!(n->present & CHAKRA_HAS_COMM_SIZE)) p |= CHAKRA_NP_NO_COMM_SIZE;
  if (!(n->present & CHAKRA_HAS_COMM_TAG)) p |= CHAKRA_NP_NO_COMM_TAG;
  if (nranks && (n->present & own_bit) && own != (int32_t)rank) p |= CHAKRA_NP_NOT_OWN;
  if (!(n->present & peer_bit)) return p | CHAKRA_NP_NO_PEER;
  *peer = send ? n->comm_dst : n->comm_src;
  if (nranks && (*peer < 0 || (uint32_t)*peer >= nranks)) p |= CHAKRA_NP_PEER_RANGE;
  return p;
}

static inline uint32_t nodekind_coll_problems(const chakra_gnode *n) {
  uint32_t p = 0;
  if (!(n->present & CHAKRA_HAS_COMM_TYPE)) p |= CHAKRA_NP_NO_COMM_TYPE;
  else if (n->comm_type < 0) p |= CHAKRA_NP_BAD_COMM_TYPE;
  if (!(n->present & CHAKRA_HAS_COMM_SIZE)) p |= CHAKRA_NP_NO_COMM_SIZE;
  return p;
}

static inline void nodekind_classify(const chakra_gnode *n, uint32_t rank, uint32_t nranks, chakra_node_class *c) {
  int cpu = (n->flags & CHAKRA_GNODE_CPU) != 0;
  memset(c, 0, sizeof *c);
  c->kind = (uint8_t)nodekind_kind_of(n->type, cpu);
  c->comm_type = -1;
  c->coll = -1;
  c->peer = -1;
  c->slot = cpu ? CHAKRA_SLOT_CPU : CHAKRA_SLOT_COMM;
  switch (c->kind) {
    case CHAKRA_KIND_COMPUTE:
    case CHAKRA_KIND_CPU:
      c->slot = cpu ? CHAKRA_SLOT_CPU : CHAKRA_SLOT_GPU;
      c->category = cpu ? CHAKRA_CAT_CPU : CHAKRA_CAT_GPU;
      c->roofline = (n->present & CHAKRA_HAS_NUM_OPS) && (n->present & CHAKRA_HAS_TENSOR_SIZE);
      if ((n->present & CHAKRA_HAS_NUM_OPS) && !(n->present & CHAKRA_HAS_TENSOR_SIZE)) c->problems |= CHAKRA_NP_NUM_OPS_ONLY;
      return;
    case CHAKRA_KIND_COLL:
      c->category = CHAKRA_CAT_COMM;
      c->comm_type = n->comm_type;
      c->coll = (int8_t)nodekind_native_coll(n->comm_type);
      c->problems = nodekind_coll_problems(n);
      break;
    case CHAKRA_KIND_SEND:
    case CHAKRA_KIND_RECV:
      c->category = CHAKRA_CAT_COMM;
      if (c->kind == CHAKRA_KIND_RECV) c->slot = CHAKRA_SLOT_NONE;
      c->problems = nodekind_p2p_problems(n, c->kind == CHAKRA_KIND_SEND, rank, nranks, &c->peer);
      break;
    case CHAKRA_KIND_MEM_LOAD:
    case CHAKRA_KIND_MEM_STORE:
      c->category = CHAKRA_CAT_MEM;
      if (!(n->present & CHAKRA_HAS_TENSOR_SIZE)) c->problems = CHAKRA_NP_NO_TENSOR_SIZE;
      return;
    case CHAKRA_KIND_METADATA:
      c->category = CHAKRA_CAT_INVALID;
      return;
    case CHAKRA_KIND_NOOP:
      c->category = CHAKRA_CAT_INVALID;
      c->problems = CHAKRA_NP_INVALID_NODE;
      return;
    default:
      c->category = CHAKRA_CAT_INVALID;
      c->problems = CHAKRA_NP_BAD_TYPE;
      return;
  }
  if (cpu) c->problems |= CHAKRA_NP_CPU_COMM;
}

#endif
