/* suite.h - the Chakra benchmark suite: versioned sets of deterministic
 * workloads in classes (compiled in), their generation with a manifest of
 * SHA-256 hashes, their simulation on a system under test whose network's
 * outer dimension scales to each workload, result files, scores against a
 * baseline, the rules of the closed and open divisions, and a leaderboard
 * page. The command-line front end is `chakra suite` (docs/suite.md). */
#ifndef CHAKRA_SUITE_H
#define CHAKRA_SUITE_H

#include <stddef.h>
#include <stdint.h>

#include "chakra/error.h"
#include "chakra/export.h"
#include "chakra/run.h"
#include "chakra/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the suite definition ---- */

/* How a workload is generated (the library call behind it). */
typedef enum chakra_suite_gen {
  CHAKRA_SUITE_SYNTH,      /* chakra_synth_write_shared: LLM training or inference, the shared form */
  CHAKRA_SUITE_DLRM,       /* chakra_gen_dlrm */
  CHAKRA_SUITE_MICRO,      /* chakra_gen_microbench_shared: one collective per rank, the shared form */
  CHAKRA_SUITE_COLL_GEN,   /* chakra_coll_gen: an algorithm (ring, hd) as point-to-point ETs */
  CHAKRA_SUITE_COLL_SYNTH  /* chakra_coll_synth: a topology-synthesised algorithm */
} chakra_suite_gen;

/* One workload: its name (the file prefix in a suite folder), class and
 * exact generation parameters (the fields its generator reads; the others
 * are zero), and the pinned SHA-256 of its files (see docs/suite.md). */
typedef struct chakra_suite_workload {
  const char *name, *cls, *what;
  chakra_suite_gen gen;
  uint32_t ranks;
  /* synth */
  const char *model; /* gpt, llama, moe */
  int phase;         /* chakra_synth_phase */
  uint32_t dp, tp, pp, ep;
  uint64_t layers, dmodel, dff, head, kvhead, seq, vocab, batch, micro_batch, experts, kexperts;
  /* dlrm (batch above) */
  uint64_t tables, rows, emb_dim;
  /* collectives: a chakra_coll_type, a chakra_coll_algo (coll gen), the size
   * (all-gather: per rank), the topology (coll synth) */
  int coll, algo;
  uint64_t size;
  const char *topology;
  const char *sha256;
  int rank_order;    /* synth: a chakra_synth_rank_order (0: dp first, STAGE's) */
} chakra_suite_workload;

typedef struct chakra_suite_version {
  const char *name, *about;
  const chakra_suite_workload *workloads;
  size_t n;
  int network_model; /* the CHAKRA_NET_* (chakra/sim.h) every run of the version simulates on */
} chakra_suite_version;

/* The suite versions compiled in, the default first. */
CHAKRA_API const chakra_suite_version *chakra_suite_versions(size_t *n);
/* A version by name; NULL name: the default; NULL when unknown. */
CHAKRA_API const chakra_suite_version *chakra_suite_version_find(const char *name);
/* Index of the workload named name in v, or -1. */
CHAKRA_API long chakra_suite_workload_find(const chakra_suite_version *v, const char *name);
/* 1 when v has a workload of class cls. */
CHAKRA_API int chakra_suite_has_class(const chakra_suite_version *v, const char *cls);
/* The equivalent command line (`chakra synth ... -o NAME`), NUL-terminated
 * in out (truncated to size). */
CHAKRA_API void chakra_suite_command(const chakra_suite_workload *w, char *out, size_t size);

/* SHA-256 as 64 lowercase hex digits: of a buffer, of a file's bytes. */
CHAKRA_API void chakra_suite_sha256(const void *data, size_t len, char hex[65]);
CHAKRA_API int chakra_suite_sha256_file(const char *path, char hex[65], chakra_error *err);

/* ---- make: the workloads and their manifest ---- */

#define CHAKRA_SUITE_MANIFEST "suite.json"
/* The name a result records the reference system and network by (their
 * "path"), and the name of a run on them (the default baseline). */
#define CHAKRA_SUITE_REFERENCE "reference"

/* Writes the workloads of v (of class cls, or all when NULL) into dir
 * (created when missing; its suite.json removed first, so that a make that
 * fails leaves no manifest) and, last, dir/suite.json listing each one's files
 * with their SHA-256 and the workload's hash, which must be the version's
 * pinned one (CHAKRA_EINVAL otherwise: the generators no longer give this
 * version's bytes). progress(ctx, "make", done, total) after each. */
CHAKRA_API int chakra_suite_make(const chakra_suite_version *v, const char *cls, const char *dir, unsigned threads,
                                 chakra_progress_fn progress, void *ctx, chakra_error *err);

/* A suite folder opened: its version and the workloads its manifest lists
 * (indexes into the version's table). */
typedef struct chakra_suite_dir {
  char *path;
  const chakra_suite_version *version;
  size_t *index;
  size_t n;
} chakra_suite_dir;

/* Reads dir/suite.json and checks every workload's files against it and
 * the version's pinned hashes: a missing or changed file is one problem
 * each through diag (file, what), and so is a workload whose files do not
 * hash to its pin (other files in dir are not looked at). Returns CHAKRA_OK with
 * *problems counted, or an error for an unreadable or invalid manifest. */
CHAKRA_API int chakra_suite_dir_open(chakra_suite_dir *d, const char *dir, chakra_diag_fn diag, void *ctx,
                                     uint64_t *problems, chakra_error *err);
CHAKRA_API void chakra_suite_dir_free(chakra_suite_dir *d);

/* ---- systems, networks and rules ---- */

/* The reference system and network: 8-GPU NVSwitch nodes (HGX-H100) and a
 * scale-out switch fabric; roofline compute. NUL-terminated file texts. */
CHAKRA_API const char *chakra_suite_reference_system(void);
CHAKRA_API const char *chakra_suite_reference_network(void);

/* A simulator configuration for a workload of `ranks` ranks: the network
 * file (YAML or inline) with its outer dimension scaled to the rank count
 * (docs/suite.md: "Scaling the network"), the system file's keys with the
 * per-dimension lists cut to the dimensions kept. */
CHAKRA_API int chakra_suite_config(chakra_sim_config **out, const char *system, const char *network, uint32_t ranks,
                                   chakra_error *err);

/* The system under test read once: the system and network files (NULL:
 * the reference's) read and hashed, their texts kept, the system's keys
 * and the network's dimensions parsed from them. A run given it simulates,
 * and a result described from it records, those texts, however the files
 * change meanwhile. */
typedef struct chakra_suite_sut chakra_suite_sut;
CHAKRA_API int chakra_suite_sut_open(chakra_suite_sut **out, const char *system, const char *network,
                                     chakra_error *err);
CHAKRA_API void chakra_suite_sut_free(chakra_suite_sut *s); /* NULL is fine */

/* The closed division's rules for a system and network: each problem to
 * diag (file, key, what). *problems counts them. */
CHAKRA_API int chakra_suite_rules_closed(const char *system, const char *network, chakra_diag_fn diag, void *ctx,
                                         uint64_t *problems, chakra_error *err);

/* ---- run: metrics of one workload ---- */

typedef struct chakra_suite_metrics {
  uint32_t workload;          /* index in the version's table */
  int ok;                     /* validated, simulated, every rank finished */
  uint64_t time_ns;           /* the slowest rank's finish: iteration or collective time */
  uint64_t exposed_ns;        /* mean exposed communication per rank */
  uint64_t compute_ns;        /* mean GPU compute busy time per rank */
  uint64_t comm_bytes;        /* collective and send bytes, all ranks */
  uint64_t events;
  double exposed_share;       /* exposed_ns / mean finish */
  double bus_bw_gbps;         /* NCCL's bus bandwidth (collective classes) or bytes per busy comm second */
  double compute_util;        /* share of peak FLOP/s over the iteration (roofline), else of time computing */
  double sim_seconds;
  char error[480];
} chakra_suite_metrics;

typedef struct chakra_suite_run_options {
  const char *system, *network;     /* files (NULL: the reference's, from scratch copies) */
  const char *const *rules;         /* --algo rules (open division); expanded with coll expand */
  size_t n_rules;
  const char *scratch;              /* folder for expanded workloads (with rules) */
  unsigned threads;                 /* workloads at once; 0 = one per CPU */
  chakra_diag_fn diag;              /* workload problems and simulator warnings */
  void *diag_ctx;
  chakra_progress_fn progress;      /* ("run", done, total) */
  void *progress_ctx;
} chakra_suite_run_options;

/* The bus bandwidth metric (docs/suite.md, "Metrics"): for the collective
 * classes NCCL's, from w's buffer and the time; for the others comm_bytes
 * over the ranks' summed busy communication time. GB/s (bytes per ns). */
CHAKRA_API double chakra_suite_bus_bandwidth(const chakra_suite_workload *w, uint64_t time_ns, uint64_t comm_bytes,
                                             double comm_busy_ns);

/* A run's record (simulated or replayed) as w's metrics: the latest finish,
 * mean exposed communication and compute, their shares, bytes moved, bus
 * bandwidth, compute utilisation (the roofline's when the record has it). */
CHAKRA_API void chakra_suite_take_metrics(const chakra_suite_workload *w, const chakra_run_record *r,
                                          chakra_suite_metrics *m);

/* Validates and simulates d's workloads jobs[0..n) (positions in d) on
 * threads; out[i] for jobs[i]. A workload that fails is out[i].ok = 0
 * with its error; the call fails only for what stops all of them. */
CHAKRA_API int chakra_suite_run(const chakra_suite_dir *d, const chakra_suite_run_options *o, const size_t *jobs,
                                size_t n, chakra_suite_metrics *out, chakra_error *err);

/* chakra_suite_run on s (o's system and network are not read). */
CHAKRA_API int chakra_suite_run_sut(const chakra_suite_dir *d, const chakra_suite_sut *s,
                                    const chakra_suite_run_options *o, const size_t *jobs, size_t n,
                                    chakra_suite_metrics *out, chakra_error *err);

/* ---- result files ---- */

typedef struct chakra_suite_result {
  char *path;                   /* the file read */
  char *suite_version, *tool_version, *name, *division, *mode;
  char *dir;                    /* the suite folder run */
  char *system_path, *system_sha256, *system_text;
  char *network_path, *network_sha256, *network_text;
  char **rules;
  size_t n_rules;
  double peak_tflops;           /* declared physical quantities */
  char *declared_network;       /* dims as text: "Switch 8 x 400 GB/s 936.25 ns, ..." */
  char **wl_name, **wl_sha256;  /* per workload */
  chakra_suite_metrics *m;
  size_t n;
} chakra_suite_result;

/* Writes r (its m[].workload indexes the version's table) as JSON. */
CHAKRA_API int chakra_suite_result_write(const chakra_suite_result *r, const chakra_suite_version *v,
                                         const char *path, chakra_error *err);
/* Reads a result; errors name the file and the member. */
CHAKRA_API int chakra_suite_result_read(chakra_suite_result *r, const char *path, chakra_error *err);
CHAKRA_API void chakra_suite_result_free(chakra_suite_result *r);
/* A recorded workload's metrics against a re-simulation's: ok, then every
 * number but sim_seconds must be equal. Each difference is one problem
 * through diag (file; field WHERE.NAME, e.g. "workloads[3].time_ns"; what:
 * both values). Returns the number of problems. */
CHAKRA_API uint64_t chakra_suite_metrics_compare(const chakra_suite_metrics *recorded,
                                                 const chakra_suite_metrics *again, const char *file,
                                                 const char *where, chakra_diag_fn diag, void *ctx);
/* Fills the header of r for a run: versions, hashes and texts of the
 * files, declared quantities, division (open when rules are given or the
 * closed rules are broken). */
CHAKRA_API int chakra_suite_result_describe(chakra_suite_result *r, const chakra_suite_version *v, const char *dir,
                                            const char *name, const char *system, const char *network,
                                            const char *const *rules, size_t n_rules, chakra_error *err);
/* The same for the system under test s: its texts, hashes and paths. */
CHAKRA_API int chakra_suite_result_describe_sut(chakra_suite_result *r, const chakra_suite_version *v,
                                                const char *dir, const char *name, const chakra_suite_sut *s,
                                                const char *const *rules, size_t n_rules, chakra_error *err);

/* ---- scores ---- */

typedef struct chakra_suite_score {
  size_t n_results, n_classes;
  const char **classes;          /* class names in the version's order */
  double *overall;               /* per result: geometric mean of its class scores (0: none) */
  double *class_score;           /* [result * n_classes + class]: geometric mean of speedups (0: none) */
  double *speedup;               /* [result * n_workloads + workload]: baseline time / time (0: not run) */
  size_t n_workloads;            /* the version's */
  const chakra_suite_version *version;
  size_t baseline;
} chakra_suite_score;

/* Scores results (all of one suite version) against results[baseline].
 * A workload the baseline or a result lacks (or that failed) is left out
 * of that result's means. */
CHAKRA_API int chakra_suite_score_compute(chakra_suite_score *s, const chakra_suite_result *results, size_t n,
                                          size_t baseline, chakra_error *err);
CHAKRA_API void chakra_suite_score_free(chakra_suite_score *s);

/* The leaderboard page (self-contained HTML). */
CHAKRA_API int chakra_suite_board_write(const chakra_suite_score *s, const chakra_suite_result *results,
                                        const char *path, chakra_error *err);

#ifdef __cplusplus
}
#endif
#endif
