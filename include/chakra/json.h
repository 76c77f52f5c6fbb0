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

#ifdef __cplusplus
extern "C" {
#endif

enum { CHAKRA_JSON_LINES = 0, CHAKRA_JSON_DOCUMENT = 1, CHAKRA_JSON_COMPAT = 2 };

typedef struct chakra_json_stats {
  uint64_t nodes;          /* Node messages converted */
  uint64_t bad_utf8;       /* invalid UTF-8 sequences replaced by U+FFFD */
  uint64_t unknown_fields; /* unknown protobuf fields not representable in JSON */
} chakra_json_stats;

/* Warnings (one line each, already naming file and node) go to warn. */
typedef void (*chakra_warn_fn)(void *ctx, const char *msg);

/* in_path/out_path may be "-". out_gzip: compress the JSON. */
CHAKRA_API int chakra_jsonize(const char *in_path, const char *out_path, int layout, int out_gzip,
                   chakra_json_stats *stats, chakra_warn_fn warn, void *warn_ctx,
                   chakra_error *err);

/* write_flags are CHAKRA_WRITE_* from trace.h. */
CHAKRA_API int chakra_pack(const char *in_path, const char *out_path, int write_flags,
                chakra_json_stats *stats, chakra_warn_fn warn, void *warn_ctx,
                chakra_error *err);

#ifdef __cplusplus
}
#endif
#endif
