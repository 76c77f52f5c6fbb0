/* emit.h - the only place where chakra synth writes ETs (private to
 * libchakra); the bytes come from the node encoder (lib/trace/encode.h).
 *
 * Ranks of one pipeline stage share every node except a few per-rank
 * fields (the group id of a collective, the peer of a send or receive).
 * A stage is therefore encoded once into protobuf bytes with at most one
 * "hole" per node, and each rank's file is stamped from those bytes with
 * the hole filled in: writing thousands of ranks costs memcpy and I/O. */
#ifndef CHAKRA_SYNTH_EMIT_H
#define CHAKRA_SYNTH_EMIT_H

#include <stddef.h>
#include <stdint.h>

#include "chakra/error.h"

/* What fills a node's hole for one rank. */
enum { EMIT_HOLE_NONE, EMIT_HOLE_PG, EMIT_HOLE_DST, EMIT_HOLE_SRC };

typedef struct emit_stage emit_stage;

emit_stage *emit_stage_new(void);
void emit_stage_free(emit_stage *s);
uint64_t emit_stage_nodes(const emit_stage *s);

/* Node encoding, in this order: begin, deps, then attributes (at most one
 * hole), end. Errors (out of memory) are reported by emit_stage_failed(). */
void emit_node_begin(emit_stage *s, uint64_t id, const char *name, const char *suffix, int type);
void emit_node_deps(emit_stage *s, const uint64_t *ctrl, size_t nctrl, const uint64_t *data, size_t ndata);
void emit_node_duration(emit_stage *s, uint64_t micros);
void emit_attr_i64(emit_stage *s, const char *name, int64_t v);
void emit_attr_u64(emit_stage *s, const char *name, uint64_t v);
void emit_attr_i32(emit_stage *s, const char *name, int32_t v);
void emit_attr_bool(emit_stage *s, const char *name, int v);
void emit_attr_str(emit_stage *s, const char *name, const char *v);
void emit_attr_strlist(emit_stage *s, const char *name, const char *const *v, size_t n);
void emit_attr_empty(emit_stage *s, const char *name);
/* kind EMIT_HOLE_PG: pg_name from the rank's group of dimension arg;
 * EMIT_HOLE_DST/SRC: comm_dst/comm_src = the rank's peer on stage arg. */
void emit_attr_hole(emit_stage *s, int kind, int arg);
void emit_node_end(emit_stage *s);
int emit_stage_failed(const emit_stage *s);

/* Per-rank values for the holes. */
typedef struct emit_rank_fn {
  uint32_t (*stage_of)(void *ctx, uint32_t rank);
  uint32_t (*group)(void *ctx, uint32_t rank, int dim);
  uint32_t (*peer)(void *ctx, uint32_t rank, uint32_t stage);
  void *ctx;
} emit_rank_fn;

typedef struct emit_meta {
  const char *version; /* NULL = unset */
  const char *schema;  /* the "schema" attribute */
  int is_cpu_bool;     /* unused here; kept by the caller */
} emit_meta;

/* Writes PREFIX.<r>.et for each rank in ranks[0..n) (n >= 1) from its
 * stage's bytes through the workload writer (include/chakra/build.h), so
 * all ranks land or none, on threads threads (0 = one per CPU, at most
 * CHAKRA_WORKLOAD_AUTO_THREADS). *bytes receives the total size. shared:
 * ranks[i] is the representative of rank class i, written as the class's
 * template PREFIX.class<i>.et (chakra/set.h). */
int emit_write_ranks(const char *prefix, int shared, emit_stage *const *stages, const emit_meta *meta,
                     const emit_rank_fn *fn, const uint32_t *ranks, size_t n, unsigned threads, uint64_t *bytes,
                     chakra_error *err);

#endif
