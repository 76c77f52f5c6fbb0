/* flatscan.h - the columnar read's own decoder of Node messages (private
 * to libchakra).
 *
 * chakra_flat_read() without attribute rows and inputs/outputs (the
 * columns a binding wants fast) needs a node's id, name, type, times,
 * dependencies and standard attributes only; protobuf-c's generic unpack
 * was half its time. This decoder reads exactly those from the wire and
 * hands every other case back: a field outside the schema, a wire type
 * other than the schema's, a NUL inside a string, an attribute with two
 * values or a list value (those go through protobuf-c). It accepts a
 * message only where protobuf-c reads it the same way (varints of up to
 * ten bytes, the last value of a scalar field, repeated fields packed or
 * not and concatenated); tests/python/read_write.py (flat_paths_agree)
 * holds its columns against the protobuf-c path's on every shared trace. */
#ifndef CHAKRA_FLATSCAN_H
#define CHAKRA_FLATSCAN_H

#include <stddef.h>
#include <stdint.h>

#include "../util/arena.h"
#include "chakra/trace.h"

#define FLATSCAN_RUNS 16

/* Where a node's dependencies are in the message: runs of packed varints
 * or single ones, in order, of data (which 0) or control (1) deps. */
typedef struct flatscan_run {
  const uint8_t *p;
  size_t len;
  uint8_t which, packed;
} flatscan_run;

typedef struct flatscan_node {
  chakra_node nd;        /* id, type, start/duration and attr: what the resolver reads */
  const char *name;      /* not terminated */
  size_t name_len;
  uint64_t n_deps[2];    /* data, control */
  flatscan_run runs[FLATSCAN_RUNS];
  unsigned n_runs;
} flatscan_node;

/* Decodes one Node message into out (attributes in a, which the caller
 * resets between nodes). Returns 0, or -1 when the message is one for
 * protobuf-c (then out is meaningless). */
int flatscan_node_read(const uint8_t *data, size_t len, arena *a, flatscan_node *out);

/* Writes run's ids to out (room for its count); returns how many. */
size_t flatscan_run_ids(const flatscan_run *run, uint64_t *out);

#endif
