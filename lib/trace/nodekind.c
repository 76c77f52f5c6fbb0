/* nodekind.c - the node vocabulary; see include/chakra/node.h. */
#include "chakra/node.h"

#include <stdio.h>
#include <string.h>

#include "../util/commgroups.h"
#include "nodekind.h"

chakra_kind chakra_node_kind_of(int32_t type, int is_cpu) { return nodekind_kind_of(type, is_cpu); }

void chakra_node_classify(const chakra_gnode *n, uint32_t rank, uint32_t nranks, chakra_node_class *c) {
  nodekind_classify(n, rank, nranks, c);
}

const char *chakra_gnode_duration_problem(const chakra_gnode *n) { return nodekind_duration_problem(n); }

uint32_t chakra_node_first_problem(uint32_t mask) { return mask & (~mask + 1); }

static const char *type_name(int32_t t) {
  const char *s = chakra_node_type_name(t);
  return s ? s : "node";
}

const char *chakra_node_problem_text(const chakra_gnode *n, uint32_t rank, uint32_t nranks, uint32_t bit, char *buf,
                                     size_t size) {
  int send = n->type == CHAKRA_COMM_SEND_NODE;
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
