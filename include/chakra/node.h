/* node.h - the node vocabulary: what a Chakra node is to every consumer.
 *
 * One place decides a node's kind (compute, CPU, collective, send,
 * receive, memory, metadata, no-op), the hardware slot it occupies (one
 * CPU slot, one GPU compute slot, one GPU communication slot; receives
 * take none), its report category, its collective, its peer and group,
 * and what is wrong with it: the attributes each kind requires and the
 * rules they obey. The simulator, replay, validate, stats, coll expand and
 * the views all classify through chakra_node_classify(); none of them
 * reads a node's type number itself.
 *
 * The rules (docs/format.md):
 *  - COMP_NODE: nothing required; num_ops and tensor_size together allow
 *    roofline timing (num_ops alone is a warning).
 *  - COMM_COLL_NODE: comm_type (a CollectiveCommType) and comm_size.
 *  - COMM_SEND_NODE: comm_dst and comm_size; comm_src, when given, is the
 *    sending rank; comm_tag expected (0 when absent, a warning).
 *    COMM_RECV_NODE: the same with comm_src/comm_dst exchanged.
 *    The peer must be a rank of the set.
 *  - Communication nodes never carry is_cpu_op = true.
 *  - MEM_LOAD_NODE, MEM_STORE_NODE: tensor_size.
 *  - METADATA_NODE: none (PyTorch process groups in inputs.values).
 *  - INVALID_NODE: runs as a no-op (a warning).
 *  - Any other type number is not in the schema: an error.
 * Consumers add only what their engine cannot do (the simulator runs four
 * collectives natively, MPI counts are ints); those are not node rules. */
#ifndef CHAKRA_NODE_H
#define CHAKRA_NODE_H

#include <stddef.h>
#include <stdint.h>

#include "chakra/attr.h"
#include "chakra/export.h"
#include "chakra/error.h"
#include "chakra/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum chakra_kind {
  CHAKRA_KIND_COMPUTE,   /* COMP_NODE on the GPU */
  CHAKRA_KIND_CPU,       /* COMP_NODE with is_cpu_op */
  CHAKRA_KIND_COLL,
  CHAKRA_KIND_SEND,
  CHAKRA_KIND_RECV,
  CHAKRA_KIND_MEM_LOAD,
  CHAKRA_KIND_MEM_STORE,
  CHAKRA_KIND_METADATA,
  CHAKRA_KIND_NOOP,      /* INVALID_NODE */
  CHAKRA_KIND_BAD,       /* a type number outside the schema */
  CHAKRA_KINDS
} chakra_kind;

/* The collectives run natively (the simulator's four, the algorithms coll
 * expand generates): chakra_node_class.coll. chakra/coll.h names and parses
 * them (chakra_coll_type_name(), chakra_coll_type_parse()). */
typedef enum chakra_coll_type {
  CHAKRA_COLL_ALLREDUCE,
  CHAKRA_COLL_ALLGATHER,
  CHAKRA_COLL_REDUCESCATTER,
  CHAKRA_COLL_ALLTOALL,
  CHAKRA_COLL_TYPES
} chakra_coll_type;

/* The hardware slot a node holds while it runs; ready nodes of one slot
 * issue one at a time in ascending id order. */
typedef enum chakra_slot { CHAKRA_SLOT_CPU, CHAKRA_SLOT_GPU, CHAKRA_SLOT_COMM, CHAKRA_SLOT_NONE, CHAKRA_SLOTS } chakra_slot;

/* Report categories (busy time per category in run reports). */
enum { CHAKRA_CAT_GPU, CHAKRA_CAT_CPU, CHAKRA_CAT_COMM, CHAKRA_CAT_MEM, CHAKRA_CAT_INVALID, CHAKRA_CAT_N };

/* What is wrong with a node: bits of chakra_node_class.problems, in the
 * order checkers report them. CHAKRA_NP_ERRORS are errors (no engine can
 * run the node), the others warnings. */
enum {
  CHAKRA_NP_BAD_TYPE = 1u << 0,       /* type number not in the schema */
  CHAKRA_NP_NO_COMM_TYPE = 1u << 1,   /* collective without comm_type */
  CHAKRA_NP_NO_COMM_SIZE = 1u << 2,   /* communication node without comm_size */
  CHAKRA_NP_BAD_COMM_TYPE = 1u << 3,  /* comm_type not a CollectiveCommType */
  CHAKRA_NP_NO_PEER = 1u << 4,        /* send without comm_dst, receive without comm_src */
  CHAKRA_NP_NO_COMM_TAG = 1u << 5,    /* send/receive without comm_tag (taken as 0): a warning */
  CHAKRA_NP_NOT_OWN = 1u << 6,        /* a send's comm_src (a receive's comm_dst) is another rank */
  CHAKRA_NP_PEER_RANGE = 1u << 7,     /* the peer is not a rank of the set */
  CHAKRA_NP_NO_TENSOR_SIZE = 1u << 8, /* memory node without tensor_size */
  CHAKRA_NP_NUM_OPS_ONLY = 1u << 9,   /* compute with num_ops but no tensor_size (no roofline): a warning */
  CHAKRA_NP_INVALID_NODE = 1u << 10,  /* INVALID_NODE: runs as a no-op; a warning */
  CHAKRA_NP_CPU_COMM = 1u << 11       /* communication node with is_cpu_op = true */
};
#define CHAKRA_NP_ERRORS                                                                                      \
  (CHAKRA_NP_BAD_TYPE | CHAKRA_NP_NO_COMM_TYPE | CHAKRA_NP_NO_COMM_SIZE | CHAKRA_NP_BAD_COMM_TYPE |            \
   CHAKRA_NP_NO_PEER | CHAKRA_NP_NOT_OWN | CHAKRA_NP_PEER_RANGE | CHAKRA_NP_NO_TENSOR_SIZE | CHAKRA_NP_CPU_COMM)

typedef struct chakra_node_class {
  uint8_t kind;       /* chakra_kind */
  uint8_t slot;       /* chakra_slot */
  uint8_t category;   /* CHAKRA_CAT_* */
  int8_t comm_type;   /* collective: its CollectiveCommType, -1 when absent or unknown */
  int8_t coll;        /* collective: chakra_coll_type (all-reduce, all-gather, reduce-scatter,
                       * all-to-all: what the simulator and coll expand run natively), else -1 */
  uint8_t roofline;   /* compute with num_ops and tensor_size */
  uint8_t pad_[2];
  int32_t peer;       /* send: comm_dst, receive: comm_src; -1 when absent or not point-to-point */
  uint32_t problems;  /* CHAKRA_NP_* */
} chakra_node_class;

/* The kind alone, from the type number and is_cpu_op: for stream
 * consumers that decide cheaply which nodes to resolve and classify. */
CHAKRA_API chakra_kind chakra_node_kind_of(int32_t type, int is_cpu);

/* Classifies n as node of rank `rank` in a set of `nranks` ranks;
 * nranks = 0 when unknown (a file on its own): the rank checks
 * (CHAKRA_NP_NOT_OWN, CHAKRA_NP_PEER_RANGE) are then skipped. */
CHAKRA_API void chakra_node_classify(const chakra_gnode *n, uint32_t rank, uint32_t nranks, chakra_node_class *out);

/* The lowest problem bit of mask, or 0. */
CHAKRA_API uint32_t chakra_node_first_problem(uint32_t mask);

/* One problem (a single bit of c->problems) of node n in words, e.g.
 * "COMM_SEND_NODE: required attribute 'comm_dst' is missing",
 * "comm_src is 1 but this file is rank 0"; nranks as given to classify.
 * Returns buf. */
CHAKRA_API const char *chakra_node_problem_text(const chakra_gnode *n, uint32_t rank, uint32_t nranks, uint32_t bit,
                                                char *buf, size_t size);

/* The process group a node names: its pg_name, or "" when it has none. */
CHAKRA_API const char *chakra_node_pg(const chakra_graph *g, const chakra_gnode *n);
/* Whether a group name means every rank: NULL, "" and "0" (ASTRA-sim's
 * convention). */
CHAKRA_API int chakra_pg_is_world(const char *name);

/* ---- experimental tier (CHAKRA_EXPERIMENTAL, trace.h) --------------------- */
#ifdef CHAKRA_EXPERIMENTAL

/* For consumers reading node streams (chakra_reader_next()) rather than
 * graphs: resolves the standard attributes of a full node into *attrs
 * and a chakra_gnode (pg left 0, offset 0) for chakra_node_classify();
 * the group is attrs->pg_name (NULL when none), valid while node and attrs
 * are. Problems reading attributes go to diag (may be NULL) as
 * chakra_std_attrs_resolve() reports them; returns its result. */
CHAKRA_API int chakra_node_resolve(const chakra_node *node, chakra_gnode *out, chakra_std_attrs *attrs,
                                   chakra_diag_fn diag, void *ctx);

/* The PyTorch process-group list a METADATA node carries (its
 * inputs.values), or NULL when it carries none. Parsed by the
 * communicator-group reader, never by consumers. */
CHAKRA_API const char *chakra_node_process_groups(const chakra_node *node);

#endif /* CHAKRA_EXPERIMENTAL */

#ifdef __cplusplus
}
#endif
#endif
