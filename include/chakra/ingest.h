/* ingest.h - PyTorch execution traces and ASTRA-sim 1.0 text workloads into
 * Chakra ETs.
 *
 * Three entry points, one per subcommand:
 *   chakra_link()            host ET + Kineto trace -> linked host ET (JSON),
 *                            the input format of the PyTorch converter;
 *   chakra_convert_pytorch() host ET or linked trace -> one Chakra .et;
 *   chakra_convert_text()    legacy ASTRA-sim 1.0 text workload -> one .et
 *                            per NPU.
 * Inputs are parsed as streams (gzip detected by its magic bytes); memory
 * grows with the nodes kept, not with the text of the file. Outputs are
 * written to temporary files and renamed on success, so a failed run leaves
 * nothing behind. Errors name the file and the node id or byte offset.
 *
 * For all three: opt and rep may be NULL (defaults; no report). rep is
 * filled in as far as the run got, also on failure. Nothing is kept or
 * handed out: the results are the files. */
#ifndef CHAKRA_INGEST_H
#define CHAKRA_INGEST_H

#include <stdint.h>

#include "chakra/export.h"
#include "chakra/error.h"
#include "chakra/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Host ET schema versions accepted by link and convert (NULL-terminated). */
extern CHAKRA_API const char *const chakra_hostet_versions[];

/* ---- link ---------------------------------------------------------------- */

typedef struct chakra_link_options {
  int64_t rank;          /* expected rank; -1 = take the Kineto trace's */
  double thread_gap_us;  /* inter-thread dependency gap; <= 0 means 1000 */
  int allow_partial;     /* accept more than 1 % unmatched host ops */
  int threads;           /* parse threads for large plain files; 0 = auto */
  chakra_diag_fn diag;   /* warnings, each naming the file (may be NULL) */
  void *diag_ctx;
  /* phase "bytes": bytes of the host ET parsed, about every 4 MiB, of
   * total = its size (0 when unknown: compressed, a pipe); the Kineto
   * trace and the linking after it are not counted. Nonzero stops the
   * link with CHAKRA_ECANCELED. May be NULL. */
  chakra_progress_fn progress;
  void *progress_ctx;
} chakra_link_options;

typedef struct chakra_link_report {
  int by_record_function_id; /* 1: matched by "Record function id"; 0: by alignment */
  int64_t rank;              /* the rank written (-1 unknown) */
  uint64_t host_ops;         /* host ops eligible for matching (roots excluded) */
  uint64_t matched;          /* host ops given Kineto timing */
  uint64_t unmatched_host;   /* host ops without a Kineto op */
  uint64_t unmatched_kineto; /* Kineto CPU ops without a host op */
  uint64_t kineto_cpu_ops, kineto_gpu_ops;
  uint64_t gpu_linked;        /* GPU ops written, attached to a host op */
  uint64_t gpu_no_launcher;   /* no runtime call or flow with their correlation */
  uint64_t gpu_no_cpu_op;     /* launcher found, but no CPU op around it */
  uint64_t gpu_unmatched_cpu; /* the CPU op (and its ancestors) have no host op */
  uint64_t inter_thread_deps, sync_deps, sync_unplaced;
  uint64_t missing_parents;   /* nodes naming a parent id not in the trace */
} chakra_link_report;

/* host and kineto may be gzip-compressed; out ending in .gz is compressed. */
CHAKRA_API int chakra_link(const char *host_path, const char *kineto_path, const char *out_path,
                           const chakra_link_options *opt, chakra_link_report *rep, chakra_error *err);

/* ---- convert pytorch ------------------------------------------------------- */

enum { CHAKRA_P2P_MISSING_ERROR = 0, CHAKRA_P2P_MISSING_DROP = 1 };
enum { CHAKRA_UNKNOWN_COLL_ERROR = 0, CHAKRA_UNKNOWN_COLL_COMP = 1 };

typedef struct chakra_convert_options {
  int compat;                   /* reproduce the reference converter byte for byte */
  const char *comm_groups_path; /* write the process groups here (NULL = no file) */
  const char *log_path;         /* one line per node and dependency (NULL = none) */
  int p2p_missing;              /* CHAKRA_P2P_MISSING_* */
  int unknown_coll;             /* CHAKRA_UNKNOWN_COLL_* */
  int threads;                  /* parse threads for large plain files and packing
                                   threads (at most 8); > 1 also writes the output
                                   on a thread of its own; 0 = the number of CPUs */
  chakra_diag_fn diag;          /* warnings, each naming the file (may be NULL) */
  void *diag_ctx;
  /* Called as each phase begins (done 0) and ends (done = total = 1):
   * "link" (with a Kineto trace), "parse", "index", "deps", "write",
   * "free", one after the other. Nonzero when a phase begins cancels the
   * conversion with CHAKRA_ECANCELED, up to "write"; may be NULL. During
   * "parse" also phase "bytes": bytes of the host ET parsed, about every
   * 4 MiB, of total = its size (0 when unknown: compressed, a pipe);
   * nonzero stops the conversion there. */
  chakra_progress_fn progress;
  void *progress_ctx;
} chakra_convert_options;

typedef struct chakra_convert_report {
  uint64_t nodes_in, nodes_out;
  uint64_t comp, coll, send, recv, metadata;
  uint64_t gpu_ops, gpu_dropped;      /* GPU ops in the input; dropped (no parent) */
  uint64_t dangling_removed;          /* no dependencies either way */
  uint64_t data_deps, ctrl_deps;
  uint64_t stream_deps, sync_deps;    /* included in data_deps */
  uint64_t sync_skipped, itd_skipped; /* dependencies that could not be honoured */
  uint64_t p2p_dropped, unknown_colls;
  uint64_t process_groups;
  uint64_t node_table_bytes;          /* memory held by the node records, blobs and strings */
} chakra_convert_report;

/* kineto_path non-NULL: link in_path with it first (a temporary linked file
 * beside out_path, removed in every case), then convert. The log file is
 * committed with the output (both or neither); the comm-groups file is
 * written atomically after them, so if that step fails the output is
 * already in place. */
CHAKRA_API int chakra_convert_pytorch(const char *in_path, const char *kineto_path, const char *out_path,
                                      const chakra_convert_options *opt, chakra_convert_report *rep,
                                      chakra_error *err);
/* The same from a host ET in a file, FILE* or buffer to a FILE* or
 * callback (chakra/stream.h), without Kineto linking (link to a file
 * first); the --log and comm-groups files are still files, from opt. A
 * host ET given by name is parsed in parallel parts, a stream or buffer
 * in one. */
CHAKRA_API int chakra_convert_pytorch_io(const chakra_input *in, const chakra_sink *out,
                                         const chakra_convert_options *opt, chakra_convert_report *rep,
                                         chakra_error *err);

/* ---- convert text ---------------------------------------------------------- */

typedef struct chakra_text_options {
  uint32_t npus;   /* files PREFIX.0.et .. PREFIX.<npus-1>.et; 0 means 1 */
  uint32_t passes; /* training passes; 0 means 1 */
  int compat;      /* reference behaviour: NONE -> ALL_REDUCE nodes, ids across files */
} chakra_text_options;

typedef struct chakra_text_report {
  char parallelism[32];
  uint32_t layers;
  uint64_t nodes_per_npu;
} chakra_text_report;

/* All NPUs' files are written to temporary files and renamed only when
 * every one is complete: all or none. */
CHAKRA_API int chakra_convert_text(const char *in_path, const char *out_prefix, const chakra_text_options *opt,
                                   chakra_text_report *rep, chakra_error *err);

#ifdef __cplusplus
}
#endif
#endif
