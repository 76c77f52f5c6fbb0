/* run.h - one run's result, whoever produced it, and its writers.
 *
 * A run record is what a simulation (chakra_sim_run, chakra/sim.h), a
 * replay (chakra_replay_run, chakra/replay.h, on rank 0) or a report read
 * back (chakra_run_read_report) says about a workload's run: per rank the
 * finish time, busy time per node category (compute, communication, ...),
 * exposed communication, node counts and collectives by type; the run's
 * totals; the collective instances (replay); the measured iterations
 * (replay); and metadata a caller attaches (configuration identity).
 * Times are integer nanoseconds, sizes bytes.
 *
 * One writer per format, each the only place that knows it: the report
 * JSON (docs/report.md, the schema of chakra sim --report and chakra replay
 * --report), a per-rank CSV table, the Chrome/Perfetto timeline
 * (chakra/timeline.h) and SVG bar charts (chakra_plot_run, chakra/plot.h).
 * chakra_run_read_report() is the one reader of the JSON: plot, compare
 * and anything else that takes a report read it into a record.
 *
 * Ownership: a record's arrays and strings belong to it; free them with
 * chakra_run_record_free(), which empties it (a zeroed record is empty and
 * may be freed). */
#ifndef CHAKRA_RUN_H
#define CHAKRA_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "chakra/error.h"
#include "chakra/export.h"
#include "chakra/node.h"
#include "chakra/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Per-type arrays are indexed by CollectiveCommType (enum chakra_comm_type,
 * chakra/attr.h): coll[CHAKRA_ALL_REDUCE], coll[CHAKRA_ALL_TO_ALL], ... */
#define CHAKRA_RUN_COLLS 10

/* Who made the record. */
enum { CHAKRA_RUN_UNKNOWN = 0, CHAKRA_RUN_SIM = 1, CHAKRA_RUN_REPLAY = 2 };

/* Collectives of one type: how many, their comm_size summed, and their
 * time in flight (issue to completion) summed. */
typedef struct chakra_run_coll {
  uint64_t count, bytes, time_ns;
} chakra_run_coll;

/* One rank. busy_ns is indexed by the node categories CHAKRA_CAT_*
 * (chakra/node.h): the length of the union of the node intervals of each
 * category. compute = busy_ns[CHAKRA_CAT_GPU], communication =
 * busy_ns[CHAKRA_CAT_COMM]; overlap is derived (chakra_run_overlap_ns()).
 * Plain data, no pointers: replay gathers ranks as bytes. */
typedef struct chakra_run_rank {
  uint64_t finished;              /* 1 when every node finished */
  uint64_t finish_ns;             /* when the last node finished */
  uint64_t exposed_comm_ns;       /* finish minus GPU compute */
  uint64_t wall_ns;               /* latest node end */
  uint64_t busy_ns[CHAKRA_CAT_N];
  uint64_t nodes, nodes_done;
  chakra_run_coll coll[CHAKRA_RUN_COLLS];
  uint64_t send_ops, send_bytes;  /* point-to-point sends */
  /* Simulations with roofline-enabled (chakra_run_record.roofline):
   * averages over the compute nodes weighted by duration, as ASTRA-sim's
   * statistics lines. */
  double compute_bound_pct, compute_util_pct, memory_util_pct, op_intensity;
  /* Replay: the spread of finish_ns over the measured iterations, and
   * where the replay loop's time went (docs/replay.md). */
  uint64_t finish_min_ns, finish_median_ns, finish_max_ns;
  uint64_t mpi_ns, idle_ns, loop_ns;
  /* The part of exposed_comm_ns when no collective or send was in flight
   * either: the pipeline bubble (waiting for a receive, idle). The rest is
   * exposed communication (chakra_run_exposed_coll_ns()). */
  uint64_t bubble_ns;
} chakra_run_rank;

/* One collective node of one rank, issue to completion. Plain data. */
typedef struct chakra_run_instance {
  uint64_t rank, node_id;
  uint64_t comm_type;             /* CollectiveCommType */
  uint64_t bytes;                 /* comm_size */
  int64_t group;                  /* index into chakra_run_record.groups, -1 = all ranks */
  uint64_t group_size;            /* ranks taking part */
  uint64_t start_ns, time_ns;     /* the last measured iteration */
  uint64_t time_min_ns, time_median_ns, time_max_ns; /* over the measured iterations */
} chakra_run_instance;

/* A key and its value, both text (the producer's configuration files,
 * their hashes, a suite's workload name, ...). */
typedef struct chakra_run_meta {
  char *key, *value;
} chakra_run_meta;

typedef struct chakra_run_record {
  int source;                     /* CHAKRA_RUN_*: sim or replay; a report read back says which */
  uint32_t npus;                  /* ranks */
  chakra_run_rank *ranks;         /* npus of them */
  uint64_t events;                /* simulation: events processed; replay: nodes of all ranks */
  uint64_t messages;              /* point-to-point messages (sends posted) */
  double wall_seconds;            /* how long the run took (not simulated time) */
  char **stuck;                   /* lines describing ranks that did not finish */
  uint32_t n_stuck;
  int roofline;                   /* the ranks' roofline figures are set */
  /* Collective instances (replay; empty for a simulation) and the names
   * of the communicator groups they name. */
  chakra_run_instance *instances;
  uint64_t n_instances;
  char **groups;
  uint32_t n_groups;
  /* Measured iterations (replay; 0 and NULL for a simulation). */
  uint32_t iterations, warmup;
  uint64_t *makespan_ns;          /* per measured iteration: the latest finish over the ranks */
  int compute;                    /* replay's CHAKRA_REPLAY_* compute mode */
  double compute_scale;
  chakra_run_meta *meta;          /* in the order set */
  uint32_t n_meta;
  /* Simulation: the workload's rank classes, the NPUs the run simulated
   * (classes when reduced to one NPU per class, else npus) and one line
   * saying why it was reduced or why not (NULL: not recorded). */
  uint32_t classes, simulated;
  char *symmetry;
} chakra_run_record;

/* Empties r and gives it npus zeroed ranks. */
CHAKRA_API int chakra_run_record_init(chakra_run_record *r, int source, uint32_t npus, chakra_error *err);
/* Frees what r holds (not r itself) and empties it. */
CHAKRA_API void chakra_run_record_free(chakra_run_record *r);
/* Appends a copy of line to r's stuck lines. */
CHAKRA_API int chakra_run_add_stuck(chakra_run_record *r, const char *line, chakra_error *err);
/* Sets key to value (both copied): replaces the value of a key already
 * set, else appends the pair. */
CHAKRA_API int chakra_run_set_meta(chakra_run_record *r, const char *key, const char *value, chakra_error *err);
/* The value of key, or NULL. */
CHAKRA_API const char *chakra_run_get_meta(const chakra_run_record *r, const char *key);

/* Compute (GPU), communication and their overlap:
 * compute + communication - wall when positive, else 0. */
CHAKRA_API uint64_t chakra_run_compute_ns(const chakra_run_rank *k);
CHAKRA_API uint64_t chakra_run_comm_ns(const chakra_run_rank *k);
CHAKRA_API uint64_t chakra_run_overlap_ns(const chakra_run_rank *k);
/* exposed_comm_ns - bubble_ns: exposed time while communication was in flight. */
CHAKRA_API uint64_t chakra_run_exposed_coll_ns(const chakra_run_rank *k);

/* The order the writers list collective types in (a permutation of
 * 0 .. CHAKRA_RUN_COLLS-1): the four the simulator runs natively
 * (all-reduce, all-gather, reduce-scatter, all-to-all), then the others
 * by CollectiveCommType. */
CHAKRA_API const uint8_t *chakra_run_coll_order(void);

/* Collectives of each type summed over the ranks; a sum beyond 2^64-1 is
 * 2^64-1, so a type some rank ran never totals 0. */
CHAKRA_API void chakra_run_coll_totals(const chakra_run_record *r, chakra_run_coll out[CHAKRA_RUN_COLLS]);

/* Figures over all ranks (chakra sim --summary, chakra sweep's rows).
 * They stay integers: each mean is the exact sum (128-bit, no rounding or
 * wrapping) divided by the rank count, rounded to the nearest nanosecond,
 * halves up. */
typedef struct chakra_run_summary {
  uint32_t finished;              /* ranks that finished */
  uint32_t slowest_rank;          /* the first rank with the latest finish */
  uint64_t max_finish_ns, min_finish_ns, mean_finish_ns;
  uint64_t max_exposed_comm_ns, mean_exposed_comm_ns;
  uint64_t mean_comm_ns, mean_compute_ns; /* busy time per rank: communication, GPU compute */
} chakra_run_summary;

CHAKRA_API void chakra_run_summarise(const chakra_run_record *r, chakra_run_summary *out);

/* Fills order with the finished ranks by finish time, then rank (the
 * order ASTRA-sim prints them in); returns how many. order needs room
 * for r->npus entries. */
CHAKRA_API uint32_t chakra_run_finish_order(const chakra_run_record *r, uint32_t *order);

/* Output formats of a record's report. */
typedef enum { CHAKRA_RUN_JSON = 0, CHAKRA_RUN_CSV = 1 } chakra_run_format;

/* Writes r as the report JSON (docs/report.md) or as the per-rank CSV
 * table, atomically; path "-" is standard output, ".gz" compresses. */
CHAKRA_API int chakra_run_write_report(const chakra_run_record *r, const char *path, chakra_run_format format,
                                       chakra_error *err);
/* The same to a FILE* or a callback (chakra/stream.h). */
CHAKRA_API int chakra_run_write_report_to(const chakra_run_record *r, const chakra_sink *out, chakra_run_format format,
                                          chakra_error *err);

/* Reads a report JSON (chakra sim --report, chakra replay --report) into
 * out (emptied first; empty again on failure): at most 256 MiB, every
 * number a whole number in 0 .. 2^64-1 (the roofline percentages and
 * replay's compute scale: finite, not negative), collective types by
 * their CollectiveCommType names; anything else is one line naming the
 * file and the field ("r.json: ranks[3].gpu_ns: expected a whole number
 * >= 0 of at most 2^64-1, not -1"). path "-" is standard input. Fields
 * the writer derives (overlap_ns, replayer_ns, max_finish_ns, the
 * makespan statistics) are checked as numbers and then derived again. */
CHAKRA_API int chakra_run_read_report(chakra_run_record *out, const char *path, chakra_error *err);
/* The same from len bytes of text; name is used in messages. */
CHAKRA_API int chakra_run_parse_report(chakra_run_record *out, const char *text, size_t len, const char *name,
                                       chakra_error *err);

#ifdef __cplusplus
}
#endif
#endif
