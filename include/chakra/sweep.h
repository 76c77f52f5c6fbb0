/* sweep.h - simulating one workload on a grid of configurations.
 *
 * A sweep is a list of axes, each a configuration key with the values it
 * takes ("bandwidth[0]=50,100,200"); its points are the cartesian product,
 * numbered with the first axis varying slowest. Every point is a
 * configuration read from the same files (chakra_sim_files) with that
 * point's values set on top, simulated in-process on a workload loaded
 * once (chakra_sim_workload is read-only during runs, so points run on
 * several threads at once). Spreading points over processes (MPI) is the
 * caller's: run any subset of the points, put the rows together in point
 * order and write the table.
 *
 * Keys (docs/sweep.md):
 *   bandwidth, latency, topology        every dimension of the network
 *   bandwidth[D], latency[D], ...       dimension D only (0-based)
 *     (each also as network.NAME; bandwidth in GB/s, latency in ns,
 *     topology Ring, FullyConnected or Switch; npus_count cannot vary,
 *     the workload's ranks are fixed)
 *   network-model, injection-scale, num-queues-per-dim,
 *   custom-collective-scaling           chakra sim's run options
 *   any other KEY or system.KEY         a system or remote-memory JSON key,
 *                                       set with chakra_sim_config_set()
 * A value of a JSON key is used as JSON when it parses as JSON and as a
 * string otherwise; for the *-implementation keys a bare word becomes a
 * one-entry list (ring -> ["ring"]) and [ring,direct] a list of strings.
 * Values are separated by commas outside brackets and quotes.
 *
 * Ownership: chakra_sweep_new() returns an object freed with
 * chakra_sweep_free(); everything else fills caller memory. */
#ifndef CHAKRA_SWEEP_H
#define CHAKRA_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "chakra/error.h"
#include "chakra/export.h"
#include "chakra/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct chakra_sweep chakra_sweep;

/* Parses n "KEY=V1,V2,..." texts (copied) into axes. Errors name the
 * text: an empty key or value, a key given twice, a malformed dimension
 * or number. Whether a key exists is checked by chakra_sweep_check(). */
CHAKRA_API int chakra_sweep_new(chakra_sweep **out, const char *const *vary, size_t n, chakra_error *err);
CHAKRA_API void chakra_sweep_free(chakra_sweep *s);
/* Sets KEY=VALUE (one value, any key --vary takes) on every point without
 * making it a column of the table: chakra sweep's options that are
 * chakra sim's (--custom-collective-scaling). A key an axis also sets is
 * an error naming that --vary. */
CHAKRA_API int chakra_sweep_fix(chakra_sweep *s, const char *key_value, chakra_error *err);

/* Points of the grid (the product of the axes' value counts; 1 with no
 * axis). */
CHAKRA_API size_t chakra_sweep_points(const chakra_sweep *s);
CHAKRA_API size_t chakra_sweep_axes(const chakra_sweep *s);
/* Axis a's key as given, and the value it takes at point p (pointers live
 * as long as s). */
CHAKRA_API const char *chakra_sweep_key(const chakra_sweep *s, size_t a);
CHAKRA_API const char *chakra_sweep_value(const chakra_sweep *s, size_t a, size_t p);

/* Sets every value of every axis on a configuration read from files, so
 * that unknown keys, dimensions the network lacks and bad values fail
 * before any run: one line naming the --vary text ("--vary foo=1,2:
 * unknown key ..."). Warnings of the files go to diag (may be NULL). */
CHAKRA_API int chakra_sweep_check(const chakra_sweep *s, const chakra_sim_files *files, chakra_diag_fn diag,
                                  void *diag_ctx, chakra_error *err);

/* The configuration of point p: the files with p's values set. The caller
 * frees it with chakra_sim_config_free(). */
CHAKRA_API int chakra_sweep_config(const chakra_sweep *s, size_t p, const chakra_sim_files *files,
                                   chakra_sim_config **out, chakra_error *err);

enum { CHAKRA_SWEEP_OK = 0, CHAKRA_SWEEP_STUCK = 1, CHAKRA_SWEEP_FAILED = 2 };

/* What one point's simulation gave: plain data (no pointers), so rows
 * travel between processes as bytes. */
typedef struct chakra_sweep_row {
  uint64_t point;
  int32_t status;                 /* CHAKRA_SWEEP_*: all ranks finished, some did not, the run failed */
  uint32_t npus, finished;        /* ranks, ranks that finished */
  uint32_t slowest_rank;          /* the rank with the latest finish */
  /* integers, the means exact (see chakra_sim_summary) */
  uint64_t max_finish_ns, min_finish_ns, mean_finish_ns;
  uint64_t max_exposed_comm_ns, mean_exposed_comm_ns;
  uint64_t mean_comm_ns, mean_compute_ns; /* busy time per rank: communication, GPU compute */
  uint64_t events, messages;
  double sim_seconds;             /* wall time of the simulation */
  char error[240];                /* CHAKRA_SWEEP_FAILED: why; STUCK: the first stuck line */
} chakra_sweep_row;

/* Runs points[0..n-1] of s on w on `threads` threads (0 = one per CPU),
 * filling rows[i] for points[i]. A point whose configuration or run fails
 * gets status CHAKRA_SWEEP_FAILED and the message; the others still run.
 * progress (may be NULL) is called, one call at a time, after each point
 * with phase "sweep", done and total = n; nonzero stops the points not yet
 * started (they get CHAKRA_SWEEP_FAILED, "canceled"). */
CHAKRA_API int chakra_sweep_run(const chakra_sweep *s, const chakra_sim_files *files, const chakra_sim_workload *w,
                                const size_t *points, size_t n, unsigned threads, chakra_sweep_row *rows,
                                chakra_progress_fn progress, void *progress_ctx, chakra_error *err);

/* Writes the table of rows[0..chakra_sweep_points(s)-1] (row i for point
 * i): CSV, or JSON when path ends in ".json"; "-" is standard output.
 * One row per point: the axes' values, then the row's fields. Atomic. */
CHAKRA_API int chakra_sweep_write(const chakra_sweep *s, const chakra_sweep_row *rows, const char *path,
                                  chakra_error *err);

#ifdef __cplusplus
}
#endif
#endif
