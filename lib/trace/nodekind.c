/* nodekind.c - the node vocabulary; see include/chakra/node.h. */
#include "chakra/node.h"

#include <stdio.h>
#include <string.h>

#include "../util/commgroups.h"
#include "chakra/coll.h"
#include "nodekind.h"

enum {
  T_INVALID = CHAKRA_PROTO_MSG__NODE_TYPE__INVALID_NODE,
  T_METADATA = CHAKRA_PROTO_MSG__NODE_TYPE__METADATA_NODE,
  T_MEM_LOAD = CHAKRA_PROTO_MSG__NODE_TYPE__MEM_LOAD_NODE,
  T_MEM_STORE = CHAKRA_PROTO_MSG__NODE_TYPE__MEM_STORE_NODE,
  T_COMP = CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE,
  T_SEND = CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE,
  T_RECV = CHAKRA_PROTO_MSG__NODE_TYPE__COMM_RECV_NODE,
  T_COLL = CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE
};

static int is_comm_type(int32_t t) {
  chakra_kind k = chakra_node_kind_of(t, 0);
  return k == CHAKRA_KIND_COLL || k == CHAKRA_KIND_SEND || k == CHAKRA_KIND_RECV;
}

void nodekind_fill(chakra_gnode *n, const chakra_node *nd, const chakra_std_attrs *a, uint64_t offset, int bad_attrs) {
  memset(n, 0, sizeof *n);
  n->id = nd->id;
  n->duration_micros = nd->duration_micros;
  n->type = (int32_t)nd->type;
  n->offset = offset;
  n->present = a->present;
  n->flags = (uint8_t)((a->is_cpu_op ? CHAKRA_GNODE_CPU : 0) | (bad_attrs ? CHAKRA_GNODE_BAD_ATTRS : 0));
  n->size = is_comm_type(n->type) ? a->comm_size : a->tensor_size;
  n->num_ops = a->num_ops;
  n->comm_src = a->comm_src;
  n->comm_dst = a->comm_dst;
  n->comm_tag = a->comm_tag;
  n->comm_type = (a->present & CHAKRA_HAS_COMM_TYPE) && a->comm_type >= 0 && a->comm_type < 10 ? (int8_t)a->comm_type : -1;
  n->involved_dim = a->involved_dim;
  n->n_involved_dim = (uint8_t)a->n_involved_dim;
}

/* CollectiveCommType -> chakra_coll_type, for the four run natively. */
static int native_coll(int comm_type) {
  switch (comm_type) {
    case CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_REDUCE: return CHAKRA_COLL_ALLREDUCE;
    case CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_GATHER: return CHAKRA_COLL_ALLGATHER;
    case CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__REDUCE_SCATTER: return CHAKRA_COLL_REDUCESCATTER;
    case CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_TO_ALL: return CHAKRA_COLL_ALLTOALL;
    default: return -1;
  }
}

chakra_kind chakra_node_kind_of(int32_t type, int is_cpu) {
  switch (type) {
    case T_COMP: return is_cpu ? CHAKRA_KIND_CPU : CHAKRA_KIND_COMPUTE;
    case T_COLL: return CHAKRA_KIND_COLL;
    case T_SEND: return CHAKRA_KIND_SEND;
    case T_RECV: return CHAKRA_KIND_RECV;
    case T_MEM_LOAD: return CHAKRA_KIND_MEM_LOAD;
    case T_MEM_STORE: return CHAKRA_KIND_MEM_STORE;
    case T_METADATA: return CHAKRA_KIND_METADATA;
    case T_INVALID: return CHAKRA_KIND_NOOP;
    default: return CHAKRA_KIND_BAD;
  }
}

/* The rules of send and receive nodes (node.h). */
static uint32_t p2p_problems(const chakra_gnode *n, int send, uint32_t rank, uint32_t nranks, int32_t *peer) {
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

static uint32_t coll_problems(const chakra_gnode *n) {
  uint32_t p = 0;
  if (!(n->present & CHAKRA_HAS_COMM_TYPE)) p |= CHAKRA_NP_NO_COMM_TYPE;
  else if (n->comm_type < 0) p |= CHAKRA_NP_BAD_COMM_TYPE;
  if (!(n->present & CHAKRA_HAS_COMM_SIZE)) p |= CHAKRA_NP_NO_COMM_SIZE;
  return p;
}

void chakra_node_classify(const chakra_gnode *n, uint32_t rank, uint32_t nranks, chakra_node_class *c) {
  int cpu = (n->flags & CHAKRA_GNODE_CPU) != 0;
  memset(c, 0, sizeof *c);
  c->kind = (uint8_t)chakra_node_kind_of(n->type, cpu);
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
      c->coll = (int8_t)native_coll(n->comm_type);
      c->problems = coll_problems(n);
      break;
    case CHAKRA_KIND_SEND:
    case CHAKRA_KIND_RECV:
      c->category = CHAKRA_CAT_COMM;
      if (c->kind == CHAKRA_KIND_RECV) c->slot = CHAKRA_SLOT_NONE;
      c->problems = p2p_problems(n, c->kind == CHAKRA_KIND_SEND, rank, nranks, &c->peer);
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

uint32_t chakra_node_first_problem(uint32_t mask) { return mask & (~mask + 1); }

static const char *type_name(int32_t t) {
  const char *s = chakra_node_type_name(t);
  return s ? s : "node";
}

const char *chakra_node_problem_text(const chakra_gnode *n, uint32_t rank, uint32_t nranks, uint32_t bit, char *buf,
                                     size_t size) {
  int send = n->type == T_SEND;
  const char *missing = NULL;
  switch (bit) {
    case CHAKRA_NP_BAD_TYPE: snprintf(buf, size, "node type %d is not in the schema", n->type); return buf;
    case CHAKRA_NP_CPU_COMM: snprintf(buf, size, "communication node with is_cpu_op = true"); return buf;
    case CHAKRA_NP_NO_COMM_TYPE: missing = "comm_type"; break;
    case CHAKRA_NP_BAD_COMM_TYPE: snprintf(buf, size, "comm_type is not a CollectiveCommType value (0..9)"); return buf;
    case CHAKRA_NP_NO_COMM_SIZE: missing = "comm_size"; break;
    case CHAKRA_NP_NO_PEER: missing = send ? "comm_dst" : "comm_src"; break;
    case CHAKRA_NP_NOT_OWN:
      snprintf(buf, size, "%s is %d but this file is rank %u", send ? "comm_src" : "comm_dst",
               send ? n->comm_src : n->comm_dst, rank);
      return buf;
    case CHAKRA_NP_PEER_RANGE:
      snprintf(buf, size, "%s %d is not a rank of this workload (0..%u)", send ? "comm_dst" : "comm_src",
               send ? n->comm_dst : n->comm_src, nranks ? nranks - 1 : 0);
      return buf;
    case CHAKRA_NP_NO_TENSOR_SIZE: missing = "tensor_size"; break;
    case CHAKRA_NP_NO_COMM_TAG: missing = "comm_tag"; break;
    case CHAKRA_NP_NUM_OPS_ONLY:
      snprintf(buf, size, "num_ops without tensor_size: the roofline model cannot time this node");
      return buf;
    case CHAKRA_NP_INVALID_NODE: snprintf(buf, size, "INVALID_NODE (runs as a no-op)"); return buf;
    default: snprintf(buf, size, "no problem"); return buf;
  }
  snprintf(buf, size, "%s: required attribute '%s' is missing", type_name(n->type), missing);
  return buf;
}

const char *chakra_node_pg(const chakra_graph *g, const chakra_gnode *n) { return n->pg ? g->pg_names[n->pg] : ""; }

int chakra_pg_is_world(const char *name) { return cg_is_all(name); }

int chakra_node_resolve(const chakra_node *node, chakra_gnode *out, chakra_std_attrs *attrs, chakra_diag_fn diag,
                        void *ctx) {
  int rc = chakra_std_attrs_resolve(node, attrs, diag, ctx);
  nodekind_fill(out, node, attrs, 0, rc != 0);
  return rc;
}

const char *chakra_node_process_groups(const chakra_node *node) {
  const char *v = node->inputs ? node->inputs->values : NULL;
  return v && strstr(v, "pg_name") ? v : NULL;
}
