/* nodescan.h - a few fields of undecoded Node messages (private to lib/analyze).
 *
 * The views need little of each node beyond what chakra_graph keeps: its
 * name, its recorded start time, or a fingerprint of each part for diff.
 * Decoding whole nodes with protobuf-c for that would allocate every
 * attribute and multi-KB inputs string, so this walks the wire format once,
 * without allocating, and hands back slices and hashes. */
#ifndef CHAKRA_NODESCAN_H
#define CHAKRA_NODESCAN_H

#include <stddef.h>
#include <stdint.h>

#include "chakra/error.h"
#include "chakra/graph.h"
#include "chakra/trace.h"

typedef struct nodescan {
  uint64_t id, type, start_time, duration;
  const char *name;     /* into the message; not NUL-terminated */
  size_t name_len;
  /* Fingerprints (only with want_hashes); 0 when the part is absent. Dep
   * hashes ignore order, as dependencies are sets. */
  uint64_t h_attr, h_io, h_data, h_ctrl, h_other;
  uint32_t n_data, n_ctrl, n_attr;
} nodescan;

/* Fills out from the message bytes; returns 0, or -1 if they do not parse. */
int nodescan_parse(const uint8_t *p, size_t len, nodescan *out, int want_hashes);

/* Calls fn for each node of path in file order (index 0 = first node);
 * fn returns nonzero to stop (that value is returned). */
typedef int (*nodescan_fn)(void *ctx, uint32_t index, const nodescan *n, const uint8_t *raw, size_t len);
int nodescan_file(const char *path, int want_hashes, nodescan_fn fn, void *ctx, chakra_error *err);
/* The same over a loaded graph's nodes as it reads them again (a shared
 * set's rank: bound to the rank), and over an open reader (closed). */
int nodescan_graph(const chakra_graph *g, int want_hashes, nodescan_fn fn, void *ctx, chakra_error *err);
int nodescan_reader(chakra_reader *r, int want_hashes, nodescan_fn fn, void *ctx, chakra_error *err);

#endif
