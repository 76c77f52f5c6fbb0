/* graph.h - one rank's Chakra ET as an in-memory DAG in compact arrays.
 *
 * Nodes live in arrays indexed 0..n-1 in file order; ids map to indexes
 * through a plain array when they are dense, else a hash. Dependencies are index lists (CSR): for node i,
 * deps[dep_off[i] .. dep_off[i]+n_data[i]) are its data deps and the rest up
 * to dep_off[i+1] its control deps that are not also data deps. children
 * is the reverse relation. Standard attributes are resolved once at load;
 * the full node is one chakra_graph_read_node() away (via file offsets).
 * No recursion anywhere: traces with million-node chains are fine. */
#ifndef CHAKRA_GRAPH_H
#define CHAKRA_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "chakra/export.h"
#include "chakra/attr.h"
#include "chakra/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
  CHAKRA_GNODE_CPU = 1u << 0,        /* is_cpu_op */
  CHAKRA_GNODE_BAD_ATTRS = 1u << 1   /* an attribute could not be read */
};

/* One node, resolved (72 bytes). */
typedef struct chakra_gnode {
  uint64_t id;
  uint64_t duration_micros;
  uint64_t size;          /* comm_size for COMM nodes, tensor_size otherwise */
  uint64_t num_ops;
  uint64_t offset;        /* file offset of the node's length prefix */
  int32_t comm_src, comm_dst, comm_tag;
  int32_t type;           /* NodeType number as on the wire (may be unknown) */
  uint32_t pg;            /* index into chakra_graph.pg_names; 0 = none */
  uint32_t present;       /* CHAKRA_HAS_* bits of chakra_std_attrs */
  uint32_t involved_dim;  /* mask; see n_involved_dim */
  uint8_t n_involved_dim; /* 0 = attribute absent (all dimensions) */
  int8_t comm_type;       /* CollectiveCommType, -1 if absent or unknown */
  uint8_t flags;          /* CHAKRA_GNODE_* */
  uint8_t pad_;
} chakra_gnode;

typedef struct chakra_graph {
  char *path;
  size_t n;
  chakra_gnode *nodes;
  uint32_t *dep_off;      /* n + 1 entries */
  uint32_t *n_data;       /* data deps of each node (prefix of its list) */
  uint32_t *deps;
  uint32_t *child_off;    /* n + 1 entries */
  uint32_t *children;
  uint32_t *topo;         /* indexes in topological order, ties by id */
  char **pg_names;        /* [0] = NULL; distinct pg_name strings */
  size_t n_pg_names;
  /* What loading saw. */
  uint64_t raw_data_deps, raw_ctrl_deps;
  uint64_t missing_ctrl_deps, missing_data_deps_dropped;
  uint64_t duplicate_deps;     /* a dep listed twice in the same list (warned) */
  uint64_t ctrl_also_data;     /* a ctrl dep that is also a data dep: merged, legal */
  uint64_t self_ctrl_deps;     /* a node's control dep on itself: ignored */
  size_t unordered;            /* nodes on or behind a cycle (tolerant mode only) */
  uint64_t forward_deps;
  /* Copy of the file's GlobalMetadata: a chakra_metadata (experimental
   * tier, trace.h); without it an incomplete type. */
  struct ChakraProtoMsg__GlobalMetadata *metadata;
  struct idmap *idmap_;        /* private */
} chakra_graph;

typedef struct chakra_graph_options {
  int drop_missing_data_deps;  /* drop deps on absent ids (counted) */
  int ignore_ctrl_deps;        /* data deps only, as the mlcommons feeder reads */
  /* Tolerant (validate, coll check) mode: every problem - duplicate ids,
   * bad deps, cycles, unreadable attributes - goes to diag and loading goes
   * on where it can; the graph is returned whenever it could be built, with
   * bad deps dropped and cycle members appended to topo. Otherwise the
   * first error fails the load (in err). In both modes diag then receives
   * one warning per kind of dependency the load ignored or dropped, with
   * its count. */
  int tolerant;
  chakra_diag_fn diag;         /* may be NULL */
  void *diag_ctx;
} chakra_graph_options;

/* Loads path ("-" = stdin, which chakra_graph_read_node() then cannot
 * re-read). opt may be NULL. The graph is the caller's: free it with
 * chakra_graph_free(); it keeps its own copy of the path. On error *out is
 * NULL (nothing to free) and err says what and where (file, offset, node
 * id). A loaded graph is only read by the functions below, so several
 * threads may use one at once. */
CHAKRA_API int chakra_graph_load(chakra_graph **out, const char *path, const chakra_graph_options *opt,
                                 chakra_error *err);
/* The same from a file, an open FILE* or bytes in memory
 * (chakra/stream.h); path is then the input's name. A FILE* or buffer is
 * borrowed: it must stay valid while chakra_graph_read_node() may be
 * called. */
CHAKRA_API int chakra_graph_load_input(chakra_graph **out, const chakra_input *in, const chakra_graph_options *opt,
                                       chakra_error *err);

/* Frees g and all its arrays. NULL is allowed. */
CHAKRA_API void chakra_graph_free(chakra_graph *g);

/* Index of id, or UINT32_MAX. */
CHAKRA_API uint32_t chakra_graph_find(const chakra_graph *g, uint64_t id);

/* Longest path through the DAG weighted by duration_micros (microseconds),
 * saturating at UINT64_MAX rather than wrapping; *end receives the index of
 * the last node of that path (UINT32_MAX if empty). */
CHAKRA_API uint64_t chakra_graph_critical_path(const chakra_graph *g, uint32_t *end);

/* What the tools that run a node's duration in 64-bit nanoseconds (sim,
 * replay) say of its duration_micros when it does not fit them, or NULL
 * when it does (at most UINT64_MAX / 1000 us). */
CHAKRA_API const char *chakra_gnode_duration_problem(const chakra_gnode *n);

/* Memory held by g, in bytes (arrays only). */
CHAKRA_API size_t chakra_graph_memory(const chakra_graph *g);

/* ---- experimental tier (CHAKRA_EXPERIMENTAL, trace.h) --------------------- */
#ifdef CHAKRA_EXPERIMENTAL

/* Re-reads node i from the file in full (name, inputs, all attributes).
 * *out is the caller's: free it with chakra_node_free(). On failure (the
 * file is gone or changed since the load) *out is NULL. */
CHAKRA_API int chakra_graph_read_node(const chakra_graph *g, uint32_t i, chakra_node **out,
                                      chakra_error *err);

#endif /* CHAKRA_EXPERIMENTAL */

#ifdef __cplusplus
}
#endif
#endif
