/* stats.h - what a workload contains, per rank and in total.
 *
 * Node counts by type and collective type, communication bytes by type and
 * by group, compute nodes, ops and recorded durations, dependency counts,
 * and the critical path (longest chain of duration_micros). */
#ifndef CHAKRA_STATS_H
#define CHAKRA_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "chakra/export.h"
#include "chakra/error.h"
#include "chakra/graph.h"
#include "chakra/set.h"
#include "chakra/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CHAKRA_STATS_TYPES 9   /* the 8 NodeTypes + [8] = not in the schema */
#define CHAKRA_STATS_COLLS 11  /* the 10 CollectiveCommTypes + [10] = missing/unknown */

typedef struct chakra_group_stats {
  char *name;                  /* pg_name; "" = all ranks */
  uint64_t ops, bytes;
} chakra_group_stats;

typedef struct chakra_rank_stats {
  int ranks;                   /* 1 per file; summed in totals */
  char *version, *schema;      /* GlobalMetadata version and `schema` attribute */
  uint64_t nodes;
  uint64_t by_type[CHAKRA_STATS_TYPES];
  uint64_t coll_ops[CHAKRA_STATS_COLLS], coll_bytes[CHAKRA_STATS_COLLS];
  uint64_t send_ops, send_bytes, recv_ops, recv_bytes;
  uint64_t mem_ops, mem_bytes;
  uint64_t cpu_ops, gpu_ops;   /* COMP nodes by is_cpu_op */
  uint64_t cpu_us, gpu_us;     /* their duration_micros sums */
  uint64_t num_ops, tensor_bytes;
  uint64_t data_deps, ctrl_deps;          /* as written */
  uint64_t edges;                          /* distinct, resolved */
  uint64_t missing_ctrl_deps, self_ctrl_deps, duplicate_deps, forward_deps;
  uint64_t max_deps, roots, leaves;
  uint64_t critical_path_us, critical_end_id;
  uint64_t unordered;          /* nodes on or behind a cycle: critical path not defined */
  int saturated;               /* a sum of durations, bytes or ops reached 2^64 - 1 and stopped there */
  chakra_group_stats *groups;
  uint64_t n_groups;
} chakra_rank_stats;

/* Statistics of one file into *out (overwritten). ignore_ctrl_deps: data
 * deps only (the graph of some older traces is cyclic through their
 * control deps). The strings and groups in *out are the caller's: release
 * them with chakra_stats_free(). On failure *out holds nothing to free. */
CHAKRA_API int chakra_stats_file(const char *path, int ignore_ctrl_deps, chakra_rank_stats *out,
                                 chakra_error *err);
/* The same of a graph already loaded (with the options its statistics
 * should reflect), and of rank `rank` of a trace set (chakra/set.h). */
CHAKRA_API int chakra_stats_graph(const chakra_graph *g, chakra_rank_stats *out, chakra_error *err);
CHAKRA_API int chakra_stats_set_rank(const chakra_set *set, uint32_t rank, int ignore_ctrl_deps, chakra_rank_stats *out,
                                     chakra_error *err);
/* total += r: counts summed, critical path and max_deps maximised, groups
 * merged (copied; r is unchanged). total starts zeroed; version and schema
 * are not merged. Returns CHAKRA_OK or CHAKRA_ENOMEM, after which total is
 * incomplete but still released by chakra_stats_free(). */
CHAKRA_API int chakra_stats_add(chakra_rank_stats *total, const chakra_rank_stats *r);
/* total (overwritten) = the sum of n ranks, as chakra_stats_add() one
 * after the other would make it, in time linear in their groups (adding
 * one by one scans the total's groups for each of a rank's). */
CHAKRA_API int chakra_stats_sum(chakra_rank_stats *total, const chakra_rank_stats *ranks, size_t n);
/* Releases what s holds (not s itself) and zeroes it. NULL is allowed. */
CHAKRA_API void chakra_stats_free(chakra_rank_stats *s);

/* Writes {"ranks": [one object per file], "total": {...}} to out_path
 * ("-" = standard output), indented by four spaces; the layout `chakra
 * stats --json` prints (docs/stats.md). paths[i] names ranks[i]. The file
 * is written whole or not at all; the caller keeps everything it passed. */
CHAKRA_API int chakra_stats_write_json(const char *out_path, const char *const *paths, const chakra_rank_stats *ranks,
                                       size_t n, const chakra_rank_stats *total, chakra_error *err);
/* The same to a FILE* or a callback (chakra/stream.h). */
CHAKRA_API int chakra_stats_write_json_to(const chakra_sink *out, const char *const *paths, const chakra_rank_stats *ranks,
                                          size_t n, const chakra_rank_stats *total, chakra_error *err);

#ifdef __cplusplus
}
#endif
#endif
