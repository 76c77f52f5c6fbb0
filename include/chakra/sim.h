/* sim.h - simulating per-rank Chakra ETs on a modelled system.
 *
 * The model is ASTRA-sim's analytical one (same configuration files, same
 * answers): a workload layer that issues each NPU's DAG under its hardware
 * slots, a system layer that runs collectives (chunking, per-dimension
 * phases, ring / direct / halving-doubling / double-binary-tree, custom
 * algorithm ETs, communicator groups), and a congestion-unaware or
 * congestion-aware network over Ring, FullyConnected and Switch
 * dimensions. Time is integer nanoseconds. */
#ifndef CHAKRA_SIM_H
#define CHAKRA_SIM_H

#include <stdint.h>

#include "chakra/error.h"
#include "chakra/json.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { CHAKRA_NET_AWARE = 0, CHAKRA_NET_UNAWARE = 1 };

typedef struct chakra_sim_options {
  const char *workload;        /* trace prefix: rank r reads <workload>.<r>.et */
  const char *system;          /* system JSON */
  const char *network;         /* network YAML */
  const char *remote_memory;   /* remote memory JSON, or NULL (none) */
  const char *comm_groups;     /* comm-group JSON, or NULL */
  int network_model;           /* CHAKRA_NET_* */
  uint32_t queues_per_dim;     /* 0 = 1 */
  double injection_scale;      /* 0 = 1 */
  int rendezvous;              /* an 8 KiB invitation from the receiver before each send */
  int multidim_full;           /* unaware: charge every dimension two NPUs differ in */
  const char *timeline;        /* Chrome trace-event JSON to write, or NULL */
  int progress;                /* progress line on stderr during the run */
  uint32_t load_threads;       /* threads that load the rank files; 0 = one per CPU */
  const char *logging_folder;  /* ASTRA-sim's log.log and err.log go here (created), or NULL */
} chakra_sim_options;

/* The built-in collective types, in the order of per-type arrays below. */
enum { CHAKRA_SIM_ALL_REDUCE, CHAKRA_SIM_ALL_GATHER, CHAKRA_SIM_REDUCE_SCATTER, CHAKRA_SIM_ALL_TO_ALL,
       CHAKRA_SIM_COLLS };

enum { CHAKRA_CAT_GPU, CHAKRA_CAT_CPU, CHAKRA_CAT_COMM, CHAKRA_CAT_MEM, CHAKRA_CAT_INVALID, CHAKRA_CAT_N };

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
  uint64_t events, messages;
  double wall_seconds;
  char **stuck;                  /* lines describing unfinished ranks */
  uint32_t n_stuck;
  int roofline;                  /* the roofline figures of the ranks are set */
} chakra_sim_result;

/* Runs the simulation. Returns CHAKRA_OK when the run could be set up and
 * carried out; ranks that could not finish (deadlock, unmatched messages)
 * are reported in result->stuck and have finished = 0. */
int chakra_sim_run(const chakra_sim_options *opt, chakra_sim_result *result, chakra_warn_fn warn,
                   void *warn_ctx, chakra_error *err);
void chakra_sim_result_free(chakra_sim_result *r);

/* Fills order with the finished ranks in the order ASTRA-sim's lines are
 * printed here (finish time, then rank); returns how many. order needs room
 * for r->npus entries. */
uint32_t chakra_sim_finish_order(const chakra_sim_result *r, uint32_t *order);

/* Which of a finished rank's lines chakra_sim_rank_lines() produces. */
enum {
  CHAKRA_SIM_LINE_FINISHED = 1u << 0, /* sys[R] finished, T cycles, exposed communication E cycles. */
  CHAKRA_SIM_LINE_POST = 1u << 1,     /* the two "Post statistics processing" lines of the log */
  CHAKRA_SIM_LINE_STATS = 1u << 2     /* Wall, CPU, GPU, Comm, Remote mem, Invalid, overlap, roofline */
};
typedef void (*chakra_sim_line_fn)(void *ctx, const char *logger, const char *text);

/* Passes rank's lines, in ASTRA-sim's texts without line ends, to fn with
 * the name of the reference logger that prints each. */
void chakra_sim_rank_lines(const chakra_sim_result *r, uint32_t rank, unsigned which, chakra_sim_line_fn fn,
                           void *ctx);

/* Writes r as JSON (per rank: finish, exposed communication, compute,
 * communication and overlap times, collectives by type; run totals),
 * atomically. */
int chakra_sim_write_report(const chakra_sim_result *r, const char *path, chakra_error *err);

#ifdef __cplusplus
}
#endif
#endif
