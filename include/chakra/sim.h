/* sim.h - simulating per-rank Chakra ETs on a modelled system.
 *
 * The model is ASTRA-sim's analytical one (same configuration files, same
 * answers): a workload layer that issues each NPU's DAG under its hardware
 * slots, a system layer that runs collectives (chunking, per-dimension
 * phases, ring / direct / halving-doubling / double-binary-tree, custom
 * algorithm ETs, communicator groups), and a congestion-unaware or
 * congestion-aware network over Ring, FullyConnected, Switch and Mesh
 * dimensions or an explicit link list (docs/topology.md). Time is integer
 * nanoseconds. */
#ifndef CHAKRA_SIM_H
#define CHAKRA_SIM_H

#include <stdint.h>

#include "chakra/error.h"
#include "chakra/json.h"
#include "chakra/node.h"
#include "chakra/set.h"
#include "chakra/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Use in three parts:
 *
 *   chakra_sim_config   what is simulated on: the network (chakra/topo.h),
 *                       the system (collective algorithms, chunking,
 *                       roofline, ...), remote memory, communicator groups,
 *                       and the run parameters. From ASTRA-sim's files or
 *                       built in code; read-only while runs use it.
 *   chakra_sim_workload the per-rank ETs, loaded once; never changed by a
 *                       run, so one workload serves many runs and
 *                       configurations (also from several threads, each
 *                       with its own result).
 *   chakra_sim_run()    one simulation of a workload on a configuration.
 *
 * Ownership: every _load and _new function returns an object the caller frees with
 * the matching *_free (NULL is fine); on failure *out is NULL and nothing
 * needs freeing. Pointers passed in are copied unless said otherwise.
 * chakra_sim_run() fills a result the caller frees with
 * chakra_sim_result_free(), also after a failure (it is then empty). */

enum { CHAKRA_NET_AWARE = 0, CHAKRA_NET_UNAWARE = 1 };
/* chakra_sim_params.symmetry: AUTO simulates one NPU per rank class when
 * the classes are shown to be a symmetry of the run (docs/sim.md, the
 * result says whether and why), OFF simulates every NPU. */
enum { CHAKRA_SIM_SYMMETRY_AUTO = 0, CHAKRA_SIM_SYMMETRY_OFF = 1 };

/* Run parameters that ASTRA-sim takes on its command line. */
typedef struct chakra_sim_params {
  int network_model;           /* CHAKRA_NET_* */
  uint32_t queues_per_dim;     /* scheduling queues per dimension; 0 = 1 */
  double injection_scale;      /* multiplies endpoint-delay; 0 = 1 */
  int rendezvous;              /* an 8 KiB invitation from the receiver before each send */
  int multidim_full;           /* unaware: charge every dimension two NPUs differ in */
  int custom_as_is;            /* custom collectives run at the size their ETs were made for (ASTRA-sim);
                                  0 = scaled to each collective's size (docs/sim.md) */
  int symmetry;                /* CHAKRA_SIM_SYMMETRY_* */
} chakra_sim_params;

typedef struct chakra_sim_config chakra_sim_config;

/* The configuration files (ASTRA-sim's formats); remote_memory and
 * comm_groups may be NULL (none). */
typedef struct chakra_sim_files {
  const char *system;          /* system JSON */
  const char *network;         /* network YAML, link-list file or inline
                                  spec with its links (mesh:8x8@50,500);
                                  chakra_topo_open() tells them apart */
  const char *remote_memory;   /* remote memory JSON */
  const char *comm_groups;     /* comm-group JSON */
} chakra_sim_files;

/* Reads and checks the files; warnings (keys without effect, defaults
 * taken) go to diag (may be NULL). Parameters start at their defaults. */
CHAKRA_API int chakra_sim_config_load(chakra_sim_config **out, const chakra_sim_files *files, chakra_diag_fn diag,
                           void *diag_ctx, chakra_error *err);
/* The system file's local-mem-bw in GB/s, read and checked as
 * chakra_sim_config_load() reads the file (0 when it has none: the
 * simulator then charges reductions nothing). For tools that cost
 * reductions as the simulator will (coll expand). */
CHAKRA_API int chakra_sim_system_local_mem_bw(const char *system, double *gbps, chakra_diag_fn diag, void *diag_ctx,
                                              chakra_error *err);
/* A configuration on topo (copied) with the system file's defaults, no
 * remote memory and no groups; fill it with chakra_sim_config_set(). */
CHAKRA_API int chakra_sim_config_new(chakra_sim_config **out, const chakra_topo *topo, chakra_error *err);
/* Sets one field of the system or remote-memory configuration by its file
 * key, value in JSON: ("preferred-dataset-splits", "4"),
 * ("all-reduce-implementation", "[\"ring\"]"), ("memory-type",
 * "\"MEMORY_POOL\""). Checked as in a file; on failure that one field may
 * be partly set (the error names it). Settings that only make sense
 * together (PER_NODE_MEMORY_EXPANSION and num-npus-per-node) are checked
 * when a run starts. */
CHAKRA_API int chakra_sim_config_set(chakra_sim_config *c, const char *key, const char *json_value, chakra_diag_fn diag,
                          void *diag_ctx, chakra_error *err);
/* Adds communicator group `name` (a pg_name) with its members in order. */
CHAKRA_API int chakra_sim_config_add_group(chakra_sim_config *c, const char *name, const uint32_t *ranks, uint32_t n,
                                chakra_error *err);
/* The run parameters, to read or change (valid as long as c). */
CHAKRA_API chakra_sim_params *chakra_sim_config_params(chakra_sim_config *c);
/* The network (valid as long as c). */
CHAKRA_API const chakra_topo *chakra_sim_config_topo(const chakra_sim_config *c);
/* Replaces the network with a copy of topo (chakra_sweep's network axes).
 * Its NPU count must be the replaced one's: groups and workloads are sized
 * by it (CHAKRA_EINVAL otherwise, c unchanged). */
CHAKRA_API int chakra_sim_config_set_topo(chakra_sim_config *c, const chakra_topo *topo, chakra_error *err);
CHAKRA_API void chakra_sim_config_free(chakra_sim_config *c);

typedef struct chakra_sim_workload chakra_sim_workload;

/* Loads PREFIX.0.et .. PREFIX.<npus-1>.et (npus: the network's NPU count)
 * on `threads` threads (0 = one per CPU); warnings go to diag in rank
 * order, whatever the thread count. */
CHAKRA_API int chakra_sim_workload_load(chakra_sim_workload **out, const char *prefix, uint32_t npus, uint32_t threads,
                             chakra_diag_fn diag, void *diag_ctx, chakra_error *err);
/* The same from a trace set (chakra/set.h): its ranks, and its
 * communicator groups when it has any (applied after the configuration's
 * and before the METADATA nodes'; the first definition of a name wins).
 * chakra_sim_workload_load() is this with the first npus ranks of the
 * set PREFIX (a missing one is an error) and no groups. */
CHAKRA_API int chakra_sim_workload_load_set(chakra_sim_workload **out, const chakra_set *set, uint32_t threads,
                                            chakra_diag_fn diag, void *diag_ctx, chakra_error *err);
CHAKRA_API uint32_t chakra_sim_workload_npus(const chakra_sim_workload *w);
CHAKRA_API void chakra_sim_workload_free(chakra_sim_workload *w);

/* Per-run outputs and observers; every field may be zero/NULL. */
typedef struct chakra_sim_run_options {
  const char *timeline;        /* Chrome trace-event JSON to write */
  const char *logging_folder;  /* ASTRA-sim's log.log and err.log go here (created) */
  chakra_diag_fn diag;         /* run-time warnings */
  void *diag_ctx;
  /* Called with phase "run", done = simulated ns so far, total = 0, about
   * every million events; nonzero stops the run with CHAKRA_ECANCELED. */
  chakra_progress_fn progress;
  void *progress_ctx;
} chakra_sim_run_options;

/* The built-in collective types, in the order of per-type arrays below. */
enum { CHAKRA_SIM_ALL_REDUCE, CHAKRA_SIM_ALL_GATHER, CHAKRA_SIM_REDUCE_SCATTER, CHAKRA_SIM_ALL_TO_ALL,
       CHAKRA_SIM_COLLS };

/* busy_ns below is indexed by the node categories CHAKRA_CAT_* (chakra/node.h). */
typedef struct chakra_sim_rank {
  int finished;
  uint64_t finish_ns, exposed_comm_ns;
  uint64_t busy_ns[CHAKRA_CAT_N]; /* union of node intervals per category */
  uint64_t wall_ns;               /* latest node end */
  uint64_t nodes, nodes_done;
  uint64_t coll_ops[CHAKRA_SIM_COLLS], coll_bytes[CHAKRA_SIM_COLLS];
  uint64_t coll_ns[CHAKRA_SIM_COLLS];   /* issue to completion, summed */
  uint64_t send_ops, send_bytes;        /* point-to-point sends */
  /* With roofline-enabled (chakra_sim_result.roofline): averages over the
   * compute nodes weighted by duration, as ASTRA-sim's statistics lines. */
  double compute_bound_pct, compute_util_pct, memory_util_pct, op_intensity;
} chakra_sim_rank;

typedef struct chakra_sim_result {
  uint32_t npus;
  chakra_sim_rank *ranks;
  uint64_t events, messages;     /* of the run that gave the result */
  double wall_seconds;
  char **stuck;                  /* lines describing unfinished ranks */
  uint32_t n_stuck;
  int roofline;                  /* the roofline figures of the ranks are set */
  uint32_t classes;              /* rank classes of the workload (npus when every rank is its own) */
  uint32_t simulated;            /* NPUs simulated: classes when the run was reduced, else npus */
  char *symmetry;                /* one line: why the run was reduced (one NPU per class), or why not */
} chakra_sim_result;

/* Simulates w on c. Returns CHAKRA_OK when the run could be set up and
 * carried out; ranks that could not finish (deadlock, unmatched messages)
 * are reported in result->stuck and have finished = 0. w's NPU count must
 * be c's. result is always initialised; free it with
 * chakra_sim_result_free(). */
CHAKRA_API int chakra_sim_run(const chakra_sim_config *c, const chakra_sim_workload *w, const chakra_sim_run_options *opt,
                   chakra_sim_result *result, chakra_error *err);
/* Frees what r holds (not r itself) and empties it. */
CHAKRA_API void chakra_sim_result_free(chakra_sim_result *r);

/* Figures over all ranks of a result (chakra sim --summary, chakra sweep's
 * rows). They stay integers: each mean is the exact sum (128-bit, no
 * rounding or wrapping) divided by the rank count, rounded to the nearest
 * nanosecond, halves up. */
typedef struct chakra_sim_summary {
  uint32_t finished;              /* ranks that finished */
  uint32_t slowest_rank;          /* the first rank with the latest finish */
  uint64_t max_finish_ns, min_finish_ns, mean_finish_ns;
  uint64_t max_exposed_comm_ns, mean_exposed_comm_ns;
  uint64_t mean_comm_ns, mean_compute_ns; /* busy time per rank: communication, GPU compute */
} chakra_sim_summary;

CHAKRA_API void chakra_sim_summarise(const chakra_sim_result *r, chakra_sim_summary *out);

/* Fills order with the finished ranks in the order ASTRA-sim's lines are
 * printed here (finish time, then rank); returns how many. order needs room
 * for r->npus entries. */
CHAKRA_API uint32_t chakra_sim_finish_order(const chakra_sim_result *r, uint32_t *order);

/* Which of a finished rank's lines chakra_sim_rank_lines() produces. */
enum {
  CHAKRA_SIM_LINE_FINISHED = 1u << 0, /* sys[R] finished, T cycles, exposed communication E cycles. */
  CHAKRA_SIM_LINE_POST = 1u << 1,     /* the two "Post statistics processing" lines of the log */
  CHAKRA_SIM_LINE_STATS = 1u << 2     /* Wall, CPU, GPU, Comm, Remote mem, Invalid, overlap, roofline */
};
typedef void (*chakra_sim_line_fn)(void *ctx, const char *logger, const char *text);

/* Passes rank's lines, in ASTRA-sim's texts without line ends, to fn with
 * the name of the reference logger that prints each. */
CHAKRA_API void chakra_sim_rank_lines(const chakra_sim_result *r, uint32_t rank, unsigned which, chakra_sim_line_fn fn,
                           void *ctx);

/* Writes r as JSON (per rank: finish, exposed communication, compute,
 * communication and overlap times, collectives by type; run totals),
 * atomically. */
CHAKRA_API int chakra_sim_write_report(const chakra_sim_result *r, const char *path, chakra_error *err);
/* The same to a FILE* or a callback (chakra/stream.h). */
CHAKRA_API int chakra_sim_write_report_to(const chakra_sim_result *r, const chakra_sink *out, chakra_error *err);

#ifdef __cplusplus
}
#endif
#endif
