/* diff.h - what changed between two traces of one rank.
 *
 * Nodes are matched by id, or (by_name) by name and position: the k-th node
 * called N in topological order matches the k-th node called N on the other
 * side, for traces whose producers number ids differently. Matched nodes are
 * compared field by field (type, name, durations, start time, attributes,
 * inputs/outputs, data and control dependencies as sets); the per-rank
 * statistics (chakra/stats.h) of both sides are kept so that summary
 * differences (counts by type, collective bytes by type and group, compute,
 * critical path) can be reported next to the node changes. */
#ifndef CHAKRA_DIFF_H
#define CHAKRA_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "chakra/error.h"
#include "chakra/set.h"
#include "chakra/stats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What differs in a changed node (bits of chakra_diff_node.what). */
enum {
  CHAKRA_DIFF_TYPE = 1u << 0,
  CHAKRA_DIFF_NAME = 1u << 1,
  CHAKRA_DIFF_DURATION = 1u << 2,
  CHAKRA_DIFF_START = 1u << 3,
  CHAKRA_DIFF_ATTRS = 1u << 4,
  CHAKRA_DIFF_IO = 1u << 5,        /* inputs / outputs */
  CHAKRA_DIFF_DATA_DEPS = 1u << 6,
  CHAKRA_DIFF_CTRL_DEPS = 1u << 7,
  CHAKRA_DIFF_OTHER = 1u << 8,     /* fields outside the schema */
  CHAKRA_DIFF_FIELDS = 9
};

/* Names of the bits above, in bit order ("type", "name", ...). */
CHAKRA_API const char *chakra_diff_field_name(int bit);

typedef enum { CHAKRA_DIFF_ADDED = 1, CHAKRA_DIFF_REMOVED = 2, CHAKRA_DIFF_CHANGED = 3 } chakra_diff_kind;

typedef struct chakra_diff_node {
  chakra_diff_kind kind;
  uint64_t id_a, id_b;    /* id_a unused for ADDED, id_b for REMOVED */
  int32_t type;           /* the node's type (B's when changed) */
  unsigned what;          /* CHAKRA_DIFF_* bits (CHANGED only) */
  char *name;             /* malloc'd */
  char *details;          /* malloc'd "duration 5 -> 7 us; attr comm_size 1024 -> 2048", or NULL */
} chakra_diff_node;

typedef struct chakra_diff_options {
  int by_name;            /* match by name and position instead of id */
  int ignore_ctrl_deps;   /* statistics and by-name positions from data deps only */
  size_t max_listed;      /* node changes kept with details (0 = all) */
} chakra_diff_options;

typedef struct chakra_diff_rank {
  uint64_t nodes_a, nodes_b;
  uint64_t added, removed, changed, same;
  uint64_t changed_fields[CHAKRA_DIFF_FIELDS];  /* changed nodes per field */
  chakra_diff_node *listed;   /* the first max_listed changes, in B's file order then A's */
  size_t n_listed;
  chakra_rank_stats stats_a, stats_b;
  int metadata_differs;       /* GlobalMetadata bytes differ */
} chakra_diff_rank;

/* Compares trace a with trace b (one rank each). out is filled on success
 * and must then be freed with chakra_diff_rank_free(). */
CHAKRA_API int chakra_diff_files(const char *a, const char *b, const chakra_diff_options *opt, chakra_diff_rank *out,
                                 chakra_error *err);
/* The same for rank ra of set a against rank rb of set b (either form of
 * a set: a shared set's ranks are compared bound, as their own files). */
CHAKRA_API int chakra_diff_ranks(const chakra_set *a, uint32_t ra, const chakra_set *b, uint32_t rb,
                                 const chakra_diff_options *opt, chakra_diff_rank *out, chakra_error *err);
CHAKRA_API void chakra_diff_rank_free(chakra_diff_rank *r);

/* 1 when the two sides are the same: no node changes, equal metadata. */
CHAKRA_API int chakra_diff_rank_equal(const chakra_diff_rank *r);

/* One summary figure that differs between the sides. */
typedef struct chakra_diff_figure {
  char label[160];        /* "nodes COMP_NODE", "collective ALL_REDUCE bytes", "group 1 bytes", ... */
  uint64_t a, b;
  const char *text_a, *text_b;  /* for the string figures (version, schema); else NULL */
} chakra_diff_figure;

/* The summary figures (counts by type, collective ops and bytes by type,
 * groups, point-to-point, compute, dependencies, critical path, version and
 * schema) on which a and b differ, in a fixed order. Returns the count and
 * a malloc'd array in *out (strings point into a and b), or -1 when out of
 * memory. */
CHAKRA_API long chakra_diff_summary(const chakra_rank_stats *a, const chakra_rank_stats *b, chakra_diff_figure **out);

/* A whole comparison: rank k of side A against rank k of side B. */
typedef struct chakra_diff_set {
  char **paths_a, **paths_b;
  size_t ranks_a, ranks_b;     /* ranks beyond the shorter side are unmatched */
  chakra_diff_rank *ranks;     /* min(ranks_a, ranks_b) */
  int by_name;
} chakra_diff_set;

/* 1 when every rank is equal and the rank counts agree. */
CHAKRA_API int chakra_diff_set_equal(const chakra_diff_set *s);

/* Writes the comparison to path ("-" = standard output) as text (one
 * line per rank and figure, node changes "+", "-", "~" like diff) or as
 * one JSON document. */
CHAKRA_API int chakra_diff_write(const chakra_diff_set *s, const char *path, int json, chakra_error *err);

#ifdef __cplusplus
}
#endif
#endif
