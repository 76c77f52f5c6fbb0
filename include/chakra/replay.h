/* replay.h - replaying a workload's communication and compute over MPI.
 *
 * Rank r of an MPI job replays PREFIX.r.et: its nodes issue as the
 * simulator's workload layer issues them (dependencies; one CPU, one GPU
 * compute and one GPU communication slot; ascending ids), collectives run
 * as non-blocking MPI collectives on communicators built once from the
 * communicator groups, sends and receives as non-blocking point-to-point
 * calls with their peers and tags, memory nodes copy tensor_size bytes, and
 * compute nodes stand in for their recorded duration while communication
 * keeps progressing. What each rank measures is gathered on rank 0 into a
 * run record (chakra/run.h), the shape a simulation fills, so simulated
 * and replayed runs compare field by field and share their writers. Times are integer nanoseconds since the iteration's start,
 * which a barrier aligns across ranks.
 *
 * Only built when MPI is available. Every call below is collective over
 * MPI_COMM_WORLD. */
#ifndef CHAKRA_REPLAY_H
#define CHAKRA_REPLAY_H

#include <stdint.h>

#include "chakra/error.h"
#include "chakra/run.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How compute nodes are stood in for. */
enum {
  CHAKRA_REPLAY_WAIT = 0,  /* poll communication until the recorded duration has passed */
  CHAKRA_REPLAY_SLEEP = 1, /* sleep through it (frees the core; communication is tested on waking) */
  CHAKRA_REPLAY_SKIP = 2   /* take no time: measures the communication and the replayer alone */
};

typedef struct chakra_replay_options {
  const char *workload;     /* trace prefix: rank r reads <workload>.<r>.et */
  const char *comm_groups;  /* comm-group JSON, or NULL */
  int compute;              /* CHAKRA_REPLAY_* */
  double compute_scale;     /* durations are multiplied by this (0 = 1) */
  uint32_t iterations;      /* measured runs of the whole workload (0 = 1) */
  uint32_t warmup;          /* runs before them, not measured */
  double timeout_s;         /* give up when no node finished for this long and no compute runs; 0 = never */
  int no_validate;          /* skip the cross-rank validation before the run */
  const char *timeline;     /* Chrome trace-event JSON of the last iteration (rank 0 writes it), or NULL */
} chakra_replay_options;

/* chakra_replay_result.must_abort: rank 0 ends the job once it has
 * reported (a stall, whose lines it gathered), or this rank ends it at once
 * (it gave up waiting for the others, which may be anywhere). */
enum { CHAKRA_REPLAY_ABORT_BY_RANK0 = 1, CHAKRA_REPLAY_ABORT_ALONE = 2 };

/* A replay's outcome on this process. run is filled on rank 0 (source
 * CHAKRA_RUN_REPLAY): per rank the figures of the last measured
 * iteration with the spread of finish_ns over the measured iterations and
 * where the replay loop's time went; every collective instance (group
 * names in run.groups); iterations, warmup, the makespan of each measured
 * iteration, the compute mode and scale; events = nodes and messages =
 * sends of one iteration over all ranks; wall_seconds for all iterations;
 * a run that stalled or failed: one stuck line per rank. Write it with
 * chakra_run_write_report(). */
typedef struct chakra_replay_result {
  int rank, size;            /* this process, the job */
  int must_abort;            /* communication is still posted: end with chakra_replay_abort() (CHAKRA_REPLAY_ABORT_*) */
  chakra_run_record run;
} chakra_replay_result;

/* MPI_Init. Call first; nothing else may call MPI before. */
CHAKRA_API int chakra_replay_init(int *argc, char ***argv, chakra_error *err);
/* MPI_Finalize, after a run that did not need to abort. */
CHAKRA_API void chakra_replay_finalize(void);
/* This process's rank in MPI_COMM_WORLD, and the job's size. */
CHAKRA_API int chakra_replay_world_rank(void);
CHAKRA_API int chakra_replay_world_size(void);

/* Rank 0's *status on every rank, for a decision rank 0 alone makes (may
 * the outputs be written?). A rank that waited timeout_s seconds (0 = for
 * ever) for rank 0 gets an error naming what it waited for and must end
 * the job itself: chakra_replay_abort(NULL, ...). */
CHAKRA_API int chakra_replay_share_status(int *status, double timeout_s, const char *waiting_for, chakra_error *err);

/* Replays the workload. The job size must equal the number of rank files.
 * Before anything is posted, the trace set is validated (chakra_validate
 * with the comm groups: unmatched messages, disagreeing collectives,
 * deadlocks) and loaded; every rank learns of any rank's failure before
 * the next step, and the error is rank 0's to report (err->msg is empty on
 * the others). Returns CHAKRA_OK when the run was carried out; a run that
 * stalled (timeout_s) or whose MPI calls failed fills result->run.stuck
 * on rank 0 and sets must_abort. Every wait for the other ranks gives up after
 * timeout_s: that rank's error says so (err->msg set on it alone) and
 * must_abort is CHAKRA_REPLAY_ABORT_ALONE. Warnings (loading on every rank,
 * validation on rank 0) go to warn. */
CHAKRA_API int chakra_replay_run(const chakra_replay_options *opt, chakra_replay_result *result, chakra_diag_fn warn,
                                 void *warn_ctx, chakra_error *err);
/* Frees what r holds (its run record) and empties it. */
CHAKRA_API void chakra_replay_result_free(chakra_replay_result *r);

/* Ends the whole job with status: rank 0 calls MPI_Abort, the others wait
 * for it (r NULL, or must_abort CHAKRA_REPLAY_ABORT_ALONE: this rank calls
 * it). Never returns. */
CHAKRA_API void chakra_replay_abort(const chakra_replay_result *r, int status);

/* ---- calibration: fitting a network configuration to this job's machine ----
 *
 * chakra_replay_calibrate() measures the job's ranks and fits the one
 * dimension of an ASTRA-sim network (npus_count = the job size) whose
 * simulation reproduces the measurements:
 *   point-to-point: ranks 0 and 1 ping-pong (blocking MPI_Send/MPI_Recv)
 *     over the sizes; a least-squares line t = latency + bytes / bandwidth
 *     gives the starting point and is reported;
 *   collectives: ASTRA-sim microbenchmarks (one all-reduce, all-gather,
 *     reduce-scatter or all-to-all per rank, chakra_gen_microbench) are
 *     written into a private folder per rank and replayed as chakra replay
 *     replays them (--compute skip); the median makespan is measured.
 * The fit simulates the same microbenchmarks with the system file: their
 * finish time is affine in the latency and in 1 / bandwidth, so four
 * simulations per point give the coefficients, the squared log ratios of
 * predicted to measured time of the points at or above fit_min_bytes are
 * minimised (a grid search on the affine model), and the fit is repeated
 * around the result (the model is only nearly affine).
 * With system_output the system is fitted as well: the time is also
 * affine in 1 / local-mem-bw (the reductions' memory time), and each
 * collective takes the implementation (ring, direct, halvingDoubling,
 * doubleBinaryTree where the simulator has it) that fits its points best;
 * the system file is written with those keys replaced, the rest kept. */
typedef struct chakra_replay_calibrate_options {
  const char *system;        /* the system JSON the simulations will use (required) */
  const char *output;        /* the network YAML to write (rank 0, atomically) */
  const char *workdir;       /* where each rank makes its folder of microbenchmarks (removed after) */
  uint64_t min_bytes, max_bytes; /* sizes measured: min_bytes, x4, ... up to max_bytes (0: 4 KiB, 16 MiB) */
  uint64_t fit_min_bytes;    /* points fitted: at least this large (0: 64 KiB) */
  uint32_t iterations, warmup; /* per size and collective (0: 5, 1) */
  int topology;              /* chakra_topo_kind of the dimension written */
  int network_model;         /* CHAKRA_NET_* of the simulations */
  const char *system_output; /* also fit the system: write the system JSON here (rank 0, atomically), or NULL */
} chakra_replay_calibrate_options;

/* One measured point and what the fitted configuration predicts. */
typedef struct chakra_replay_calibrate_point {
  int coll;                  /* CollectiveCommType; -1 = point-to-point (ranks 0 and 1, one way) */
  uint64_t bytes;            /* comm_size (point-to-point: the message) */
  double measured_ns;        /* median */
  double predicted_ns;       /* collectives: simulated max finish; point-to-point: the line */
  int fitted;                /* counted in the fit */
} chakra_replay_calibrate_point;

typedef struct chakra_replay_calibration {
  uint32_t npus;
  double bandwidth_gbps, latency_ns;         /* written (GB = 2^30 bytes) */
  double p2p_bandwidth_gbps, p2p_latency_ns; /* the point-to-point line */
  chakra_replay_calibrate_point *points;     /* rank 0 only */
  uint32_t n_points;
  int must_abort;            /* a microbenchmark stalled: end with chakra_replay_abort(NULL, 1) */
  /* With system_output: the fitted local-mem-bw (GB/s, 1e9; 1e9 = the
   * reductions cost nothing) and each collective's implementation
   * (all-reduce, all-gather, reduce-scatter, all-to-all); else 0, NULL. */
  double local_mem_bw;
  const char *implementation[4];
} chakra_replay_calibration;

/* Collective over MPI_COMM_WORLD (at least 2 processes). Rank 0 writes
 * o->output and fills cal->points; every rank gets the fitted values. Any
 * error is the same on every rank. Free with
 * chakra_replay_calibration_free(). */
CHAKRA_API int chakra_replay_calibrate(const chakra_replay_calibrate_options *o, chakra_replay_calibration *cal,
                                       chakra_error *err);
CHAKRA_API void chakra_replay_calibration_free(chakra_replay_calibration *cal);

#ifdef __cplusplus
}
#endif
#endif
