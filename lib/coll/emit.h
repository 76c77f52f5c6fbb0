/* emit.h - every .et byte lib/coll writes goes through here (private).
 *
 * What an algorithm node holds (names, peers, tags, sizes, costs, in the
 * chakra or the reference converter's style) is decided here and written
 * field by field through the node encoder (lib/trace/encode.h): a
 * generated 1,024-rank ring is millions of nodes, and a descriptor-driven
 * pack per node would dominate the run. A rank set is the workload writer
 * of include/chakra/build.h (all ranks or none, few descriptors open)
 * taking those bytes unchanged. */
#ifndef CHAKRA_COLL_EMIT_H
#define CHAKRA_COLL_EMIT_H

#include <stddef.h>
#include <stdint.h>

#include "chakra/build.h"
#include "chakra/error.h"
#include "chakra/trace.h"
#include "../trace/encode.h"
#include "dag.h"

/* GlobalMetadata: optional version and up to 16 attributes. */
enum { COLL_META_STR, COLL_META_INT64 };
typedef struct coll_meta {
  const char *version; /* NULL = unset */
  size_t n;
  struct {
    const char *name;
    int kind;
    const char *s;  /* COLL_META_STR; may hold NULs when len is set */
    size_t len;     /* 0 = strlen(s) */
    int64_t i;
  } a[16];
} coll_meta;

void coll_meta_str(coll_meta *m, const char *name, const char *s);
void coll_meta_int(coll_meta *m, const char *name, int64_t v);

/* How algorithm nodes are written. */
enum {
  COLL_STYLE_CHAKRA, /* comm_src/comm_dst, comm_size, comm_tag; COMP: duration_ns, num_ops, tensor_size */
  COLL_STYLE_COMPAT  /* the 2025-04 MSCCL converter: comm_type, comm_size, peer, comm_tag; bare COMP */
};
enum {
  COLL_NAMES_SHORT,  /* send.<step>, recv.<step>, reduce.<step>, copy.<step> */
  COLL_NAMES_MSCCL   /* COMM_SEND_NODE_tb<t>_step<s>, ... */
};

/* Where an algorithm node lands in its output file. */
typedef struct coll_place {
  uint64_t id_base;         /* node i gets id id_base + i ... */
  const uint32_t *id_of;    /* ... or id_base + id_of[i] when set (ids with gaps) */
  const uint32_t *peer_map; /* algorithm rank -> written rank; NULL = identity */
  int32_t self;             /* written rank of the file's owner (comm_src/dst), -1 = omit */
  int64_t tag_base;         /* added to every tag */
  uint64_t scale_num, scale_den; /* bytes and costs times num / den (den 0 = 1:1) */
  const uint64_t *root_deps;     /* extra deps of nodes without deps */
  size_t n_root_deps;
  const char *pg_name;      /* written on messages when non-NULL */
  const char *name_prefix;  /* prepended to names when non-NULL */
  int style, names;
} coll_place;

/* Appends node i of d, length-prefixed, to out (out->oom when out of
 * memory). Workload nodes are appended with enc_message(), bytes already
 * encoded with enc_append_framed(). */
void coll_encode_node(enc_buf *out, const coll_dag *d, uint32_t i, const coll_place *pl);
/* Appends the metadata, length-prefixed. */
void coll_encode_meta(enc_buf *out, const coll_meta *m);

/* A set of rank files PREFIX.<r>.et written all or nothing. Nothing is
 * visible under the final names before coll_set_commit(). */
typedef struct coll_set coll_set;
/* wo (may be NULL) is the workload writer's options: its progress
 * callback hears of each rank coll_set_fill() has made. */
int coll_set_open(coll_set **out, const char *prefix, uint32_t ranks, const chakra_workload_options *wo,
                  chakra_error *err);
/* The same for files named one by one (a shared set's templates); "rank"
 * r is then paths[r]. */
int coll_set_open_paths(coll_set **out, const char *const *paths, uint32_t n, const chakra_workload_options *wo,
                        chakra_error *err);
/* Appends buf (already length-prefixed messages) to rank r's file. Puts
 * of different ranks may run on different threads at once. */
int coll_set_write(coll_set *s, uint32_t r, const enc_buf *buf, chakra_error *err);
/* Writes rank r as the metadata m and every node of d, encoded in buf
 * (scratch, emptied first). */
int coll_set_write_dag(coll_set *s, uint32_t r, enc_buf *buf, const coll_meta *m, const coll_dag *d,
                       const coll_place *pl, chakra_error *err);
/* Makes every rank on up to `threads` threads (0 = one per CPU, at most
 * CHAKRA_WORKLOAD_AUTO_THREADS): fn writes rank r with coll_set_write,
 * keeping its scratch per worker (below coll_set_threads(threads)). The
 * files are the same whatever the thread count; the error returned is the
 * lowest failing rank's. */
typedef int (*coll_rank_fn)(void *ctx, unsigned worker, uint32_t r, coll_set *s, chakra_error *err);
int coll_set_fill(coll_set *s, unsigned threads, coll_rank_fn fn, void *ctx, chakra_error *err);
/* How many workers coll_set_fill may use: scratch arrays have this size. */
unsigned coll_set_threads(unsigned threads);
/* Puts every rank in place, or none; fails when a rank was not written.
 * Frees s. */
int coll_set_commit(coll_set *s, chakra_error *err);
/* Removes everything written so far. Frees s. */
void coll_set_abort(coll_set *s);

#endif
