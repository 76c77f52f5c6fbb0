/* json.h - Chakra ETs as JSON and back.
 *
 * Each message is written in the protobuf JSON mapping: 64-bit integers as
 * strings, enums by name, default-valued fields omitted, set oneof members
 * always printed. Layouts:
 *   CHAKRA_JSON_LINES     one compact object per line, GlobalMetadata first,
 *                         schema field names (ctrl_deps, int64_val) - default;
 *   CHAKRA_JSON_DOCUMENT  {"global_metadata": {...}, "nodes": [...]};
 *   CHAKRA_JSON_COMPAT    the reference jsonizer's output byte for byte:
 *                         two-space indented lowerCamelCase objects,
 *                         concatenated, non-ASCII escaped.
 * chakra_pack() reads all three (field names in either spelling, 64-bit
 * integers as strings or numbers) and streams the .et out. */
#ifndef CHAKRA_JSON_H
#define CHAKRA_JSON_H

#include <stdint.h>

#include "chakra/export.h"
#include "chakra/error.h"
#include "chakra/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { CHAKRA_JSON_LINES = 0, CHAKRA_JSON_DOCUMENT = 1, CHAKRA_JSON_COMPAT = 2 };

typedef struct chakra_json_stats {
  uint64_t nodes;          /* Node messages converted */
  uint64_t bad_utf8;       /* invalid UTF-8 sequences replaced by U+FFFD */
  uint64_t unknown_fields; /* unknown protobuf fields not representable in JSON */
} chakra_json_stats;

/* What the conversions below report while they run; NULL or zeroed: nothing. */
typedef struct chakra_json_options {
  /* phase "bytes": input bytes read (uncompressed), about every 4 MiB for
   * chakra_jsonize() and every 256 KiB read for chakra_pack(), of total =
   * the input's size (0 when unknown: gzip, a pipe, a FILE* or memory).
   * Nonzero stops the conversion with CHAKRA_ECANCELED. May be NULL. */
  chakra_progress_fn progress;
  void *progress_ctx;
} chakra_json_options;

/* Converts in_path (a .et, gzip or not) to JSON in out_path; either may be
 * "-". out_gzip: compress the JSON. The output is written to a temporary
 * file and renamed on success: after a failure nothing is at out_path.
 * Warnings (invalid UTF-8 replaced, unknown fields left out) go to diag
 * (may be NULL) naming the file and node. stats (may be NULL) is filled in
 * even on failure, with what was converted until then. opt may be NULL. */
CHAKRA_API int chakra_jsonize(const char *in_path, const char *out_path, int layout, int out_gzip,
                              chakra_json_stats *stats, chakra_diag_fn diag, void *diag_ctx,
                              const chakra_json_options *opt, chakra_error *err);

/* Converts JSON in any of the layouts above back into a .et; write_flags
 * are CHAKRA_WRITE_* from trace.h. Output, warnings and stats as for
 * chakra_jsonize(). */
CHAKRA_API int chakra_pack(const char *in_path, const char *out_path, int write_flags,
                           chakra_json_stats *stats, chakra_diag_fn diag, void *diag_ctx,
                           const chakra_json_options *opt, chakra_error *err);

/* The same between any input and output (chakra/stream.h): a .et from a
 * file, FILE* or buffer to JSON for a FILE* or callback, and back. The
 * path forms above are these with files. */
CHAKRA_API int chakra_jsonize_io(const chakra_input *in, const chakra_sink *out, int layout, chakra_json_stats *stats,
                                 chakra_diag_fn diag, void *diag_ctx, const chakra_json_options *opt,
                                 chakra_error *err);
CHAKRA_API int chakra_pack_io(const chakra_input *in, const chakra_sink *out, int write_flags, chakra_json_stats *stats,
                              chakra_diag_fn diag, void *diag_ctx, const chakra_json_options *opt,
                              chakra_error *err);

/* Deprecated: the one-line warning callback that chakra_sim_run() still
 * takes (sim.h); everything else reports through chakra_diag_fn. */
typedef void (*chakra_warn_fn)(void *ctx, const char *msg);

#ifdef __cplusplus
}
#endif
#endif
