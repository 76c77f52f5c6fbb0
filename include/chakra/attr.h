/* attr.h - the standard node attributes, resolved once per node.
 *
 * Producers disagree on attribute kinds (STAGE writes is_cpu_op as int32,
 * MSCCL puts NodeType numbers in comm_type on send/recv, some write sizes as
 * doubles). This module applies the format spec's tolerance rules in one
 * place: integers of any kind with range checks, bools from any integer
 * kind, integral doubles with a warning, strings for numbers refused, first
 * occurrence of a duplicated name wins. */
#ifndef CHAKRA_ATTR_H
#define CHAKRA_ATTR_H

#include <stdint.h>

#include "chakra/export.h"
#include "chakra/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bits of chakra_std_attrs.present. */
enum {
  CHAKRA_HAS_IS_CPU_OP = 1u << 0,
  CHAKRA_HAS_COMM_TYPE = 1u << 1,
  CHAKRA_HAS_COMM_SIZE = 1u << 2,
  CHAKRA_HAS_COMM_SRC = 1u << 3,
  CHAKRA_HAS_COMM_DST = 1u << 4,
  CHAKRA_HAS_COMM_TAG = 1u << 5,
  CHAKRA_HAS_PG_NAME = 1u << 6,
  CHAKRA_HAS_INVOLVED_DIM = 1u << 7,
  CHAKRA_HAS_NUM_OPS = 1u << 8,
  CHAKRA_HAS_TENSOR_SIZE = 1u << 9,
  CHAKRA_HAS_COMM_PRIORITY = 1u << 10
};

/* The schema's two enums as plain constants: their wire values, which the
 * format never renumbers (chakra_gnode.type and .comm_type hold them;
 * chakra_node_type_name() and chakra_comm_type_name() name them). */
enum chakra_node_type {
  CHAKRA_INVALID_NODE = 0,
  CHAKRA_METADATA_NODE = 1,
  CHAKRA_MEM_LOAD_NODE = 2,
  CHAKRA_MEM_STORE_NODE = 3,
  CHAKRA_COMP_NODE = 4,
  CHAKRA_COMM_SEND_NODE = 5,
  CHAKRA_COMM_RECV_NODE = 6,
  CHAKRA_COMM_COLL_NODE = 7
};

enum chakra_comm_type {
  CHAKRA_ALL_REDUCE = 0,
  CHAKRA_REDUCE = 1,
  CHAKRA_ALL_GATHER = 2,
  CHAKRA_GATHER = 3,
  CHAKRA_SCATTER = 4,
  CHAKRA_BROADCAST = 5,
  CHAKRA_ALL_TO_ALL = 6,
  CHAKRA_REDUCE_SCATTER = 7,
  CHAKRA_REDUCE_SCATTER_BLOCK = 8,
  CHAKRA_BARRIER = 9
};

#define CHAKRA_MAX_DIMS 32

typedef struct chakra_std_attrs {
  uint32_t present;       /* CHAKRA_HAS_* bits */
  int is_cpu_op;          /* absent = false */
  int64_t comm_type;      /* CollectiveCommType; only read on COMM_COLL_NODE */
  uint64_t comm_size;     /* bytes (elements for STAGE traces) */
  int32_t comm_src, comm_dst, comm_tag, comm_priority;
  uint64_t num_ops;
  uint64_t tensor_size;
  const char *pg_name;    /* points into the node, or into pg_buf */
  uint32_t involved_dim;  /* bit d = dimension d involved */
  int n_involved_dim;     /* list length; 0 when absent (= all dimensions) */
  char pg_buf[24];        /* pg_name made from a legacy int comm_group */
} chakra_std_attrs;

/* Names of enum values (static strings), or NULL when v is outside the
 * schema. */
CHAKRA_API const char *chakra_node_type_name(int v);
CHAKRA_API const char *chakra_comm_type_name(int64_t v);
/* Parses a name ("ALL_REDUCE", "all_reduce") to its value, or -1. */
CHAKRA_API int chakra_comm_type_parse(const char *s);

/* ---- experimental tier (CHAKRA_EXPERIMENTAL, trace.h) --------------------- */
#ifdef CHAKRA_EXPERIMENTAL

/* Resolves the standard attributes of node into out (cleared first).
 * Each problem goes to diag (may be NULL) as a chakra_problem with node_id
 * and field (the attribute's name) set; file and offset are left unknown
 * for the caller to add. Returns CHAKRA_OK, or CHAKRA_EFORMAT if any
 * problem was an error (out still holds everything that could be read).
 * out->pg_name points into node or into out->pg_buf: valid while both are. */
CHAKRA_API int chakra_std_attrs_resolve(const chakra_node *node, chakra_std_attrs *out,
                                        chakra_diag_fn diag, void *ctx);

/* The first attribute called name (a pointer into node), or NULL. */
CHAKRA_API const chakra_attr *chakra_attr_find(const chakra_node *node, const char *name);

/* Reads an attribute as a signed integer from any integer or bool kind (an
 * integral double is accepted and *from_double set). Returns 0, or -1 when the
 * kind is not numeric, the value is absent, or it does not fit int64. */
CHAKRA_API int chakra_attr_as_int(const chakra_attr *a, int64_t *out, int *from_double);

#endif /* CHAKRA_EXPERIMENTAL */

#ifdef __cplusplus
}
#endif
#endif
