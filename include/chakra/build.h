/* build.h - producing Chakra ETs: a fast message builder, a multi-rank
 * workload writer, and the one spelling of rank-file names.
 *
 * Every producer of ETs in chakra-c (gen, convert pytorch, convert text, coll and synth)
 * writes through here:
 *
 *   chakra_builder            builds one GlobalMetadata or Node at a time
 *                             in an arena (no malloc per node) and packs it,
 *                             length prefix first, into its own buffer;
 *   chakra_workload_writer    takes the messages of N ranks and writes
 *                             PREFIX.<r>.et for every r, all or none, with a
 *                             bounded number of open descriptors whatever N.
 *
 * The builder encodes without protobuf-c structs (attributes as they are
 * added, the node's other fields at put), byte for byte as protobuf-c
 * packs the same message. */
#ifndef CHAKRA_BUILD_H
#define CHAKRA_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "chakra/error.h"
#include "chakra/stream.h"
#include "chakra/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------- rank files */

/* Bytes that ".<rank>.et" and the terminating NUL need at most. */
#define CHAKRA_RANK_PATH_EXTRA 16

/* Writes "PREFIX.<rank>.et" into buf (at most size bytes, always
 * terminated when size > 0), like snprintf; returns the length the whole
 * name needs. A buffer of strlen(prefix) + CHAKRA_RANK_PATH_EXTRA bytes is
 * always enough. */
CHAKRA_API size_t chakra_rank_path(char *buf, size_t size, const char *prefix, uint32_t rank);

/* "PREFIX.<rank>.et" in new memory (free() it), or NULL when out of memory. */
CHAKRA_API char *chakra_rank_path_dup(const char *prefix, uint32_t rank);

/* ------------------------------------------------------------- builder */

typedef struct chakra_builder chakra_builder;

/* A new builder with an empty buffer. Returns CHAKRA_ENOMEM (and *out =
 * NULL) when out of memory. Free with chakra_builder_free(). A builder is
 * used by one thread at a time; several builders may work in parallel. */
CHAKRA_API int chakra_builder_new(chakra_builder **out);
CHAKRA_API void chakra_builder_free(chakra_builder *b);

/* Starts a GlobalMetadata (version NULL = field absent) or a Node, and
 * forgets the message started before (if it was not put). Every string and
 * array handed to the builder is borrowed, never copied: it must stay
 * valid until chakra_builder_put() returns. */
CHAKRA_API void chakra_builder_metadata(chakra_builder *b, const char *version);
CHAKRA_API void chakra_builder_node(chakra_builder *b, uint64_t id, const char *name, int type);

/* Node fields (ignored on a GlobalMetadata). The *_deps calls set the
 * whole list (borrowed); the add_* calls append one id, copied. */
CHAKRA_API void chakra_builder_data_deps(chakra_builder *b, const uint64_t *ids, size_t n);
CHAKRA_API void chakra_builder_ctrl_deps(chakra_builder *b, const uint64_t *ids, size_t n);
CHAKRA_API void chakra_builder_add_data_dep(chakra_builder *b, uint64_t id);
CHAKRA_API void chakra_builder_add_ctrl_dep(chakra_builder *b, uint64_t id);
CHAKRA_API void chakra_builder_start_time(chakra_builder *b, uint64_t micros);
CHAKRA_API void chakra_builder_duration(chakra_builder *b, uint64_t micros);
/* inputs (which = 0) or outputs (which = 1); NULL strings stay absent. */
CHAKRA_API void chakra_builder_io(chakra_builder *b, int which, const char *values, const char *shapes,
                                  const char *types);

/* Attributes, on either kind of message, in the order added. The name
 * and string values are borrowed. A string attribute is written even
 * when empty. */
CHAKRA_API void chakra_builder_int64(chakra_builder *b, const char *name, int64_t v);
CHAKRA_API void chakra_builder_uint64(chakra_builder *b, const char *name, uint64_t v);
CHAKRA_API void chakra_builder_int32(chakra_builder *b, const char *name, int32_t v);
CHAKRA_API void chakra_builder_bool(chakra_builder *b, const char *name, int v);
CHAKRA_API void chakra_builder_double(chakra_builder *b, const char *name, double v);
CHAKRA_API void chakra_builder_string(chakra_builder *b, const char *name, const char *v);
/* List attributes (int64_list, uint64_list, double_list, string_list);
 * the values are borrowed. */
CHAKRA_API void chakra_builder_int64_list(chakra_builder *b, const char *name, const int64_t *v, size_t n);
CHAKRA_API void chakra_builder_uint64_list(chakra_builder *b, const char *name, const uint64_t *v, size_t n);
CHAKRA_API void chakra_builder_double_list(chakra_builder *b, const char *name, const double *v, size_t n);
CHAKRA_API void chakra_builder_string_list(chakra_builder *b, const char *name, const char *const *v, size_t n);

/* Packs the message started last, length prefix first, at the end of the
 * builder's buffer. Fails with CHAKRA_ENOMEM (an addition or the buffer
 * could not get memory; the message is dropped) or CHAKRA_EINVAL (no
 * message started, or it is larger than CHAKRA_DEFAULT_MAX_MESSAGE). The
 * buffer keeps what was put before in every case. */
CHAKRA_API int chakra_builder_put(chakra_builder *b, chakra_error *err);

/* The framed messages put since the last clear (owned by b, valid until
 * the next put or clear) and how many there are. */
CHAKRA_API const uint8_t *chakra_builder_bytes(const chakra_builder *b, size_t *len);
CHAKRA_API size_t chakra_builder_count(const chakra_builder *b);
CHAKRA_API void chakra_builder_clear(chakra_builder *b);

/* ---------------------------------------------------- workload writer */

typedef struct chakra_workload_writer chakra_workload_writer;

typedef struct chakra_workload_options {
  unsigned max_open;   /* descriptors open at once; 0 = 8 */
  size_t buffer_bytes; /* bytes held in memory over all ranks before they are
                        * written out; 0 = 64 MiB */
  /* chakra_workload_writer_put_ranks() reports here, one call at a time,
   * each rank it has made: phase "ranks", done = ranks made so far, total
   * = all of them. Nonzero stops it with CHAKRA_ECANCELED. May be NULL. */
  chakra_progress_fn progress;
  void *progress_ctx;
} chakra_workload_options;

/* Starts writing PREFIX.0.et .. PREFIX.<nranks-1>.et. Nothing is created
 * until data must leave memory, and then only temporaries beside the
 * destinations; nothing is visible under the final names before
 * chakra_workload_writer_commit(). opt may be NULL. On failure *out is NULL. */
CHAKRA_API int chakra_workload_writer_open(chakra_workload_writer **out, const char *prefix, uint32_t nranks,
                                           const chakra_workload_options *opt, chakra_error *err);

/* The same for n explicitly named files (rank r is paths[r], copied): a
 * name ending in ".gz" is compressed, "-" is standard output. */
CHAKRA_API int chakra_workload_writer_open_paths(chakra_workload_writer **out, const char *const *paths,
                                                 uint32_t n, const chakra_workload_options *opt,
                                                 chakra_error *err);
/* The same writing rank r to sinks[r] (chakra/stream.h; the array is
 * copied): each rank's bytes reach its sink when the writer's budget or
 * the commit pushes them out, in order; the commit flushes them all. Not
 * atomic, as no sink is. */
CHAKRA_API int chakra_workload_writer_open_sinks(chakra_workload_writer **out, const chakra_sink *sinks, uint32_t n,
                                                 const chakra_workload_options *opt, chakra_error *err);

/* Appends to rank's file. Each rank's first message must be its
 * GlobalMetadata, the rest Nodes (checked where the writer can see the
 * message: put and put_built). put (experimental tier, below) packs a
 * protobuf-c message; put_raw takes unframed message bytes; put_framed
 * takes any number of messages each with its length prefix (as
 * chakra_builder_bytes() gives them; every frame is checked); put_built
 * copies b's buffer (b is unchanged: the same
 * messages can go to several ranks; chakra_builder_clear() it to reuse).
 * Messages larger than CHAKRA_DEFAULT_MAX_MESSAGE are refused
 * (CHAKRA_EINVAL). After any failure the writer refuses every put
 * (CHAKRA_ECANCELED) and only accepts commit (which then fails with the
 * first failure) or discard.
 *
 * Threads: the puts and flush_rank may be called from several threads at
 * once for different ranks; the calls for one rank must not overlap (their
 * order is the file's order). A rank's bytes depend only on its own calls,
 * never on how the threads ran. open, commit and discard are not
 * concurrent with anything. */
CHAKRA_API int chakra_workload_writer_put_raw(chakra_workload_writer *w, uint32_t rank, const uint8_t *data,
                                              size_t len, chakra_error *err);
CHAKRA_API int chakra_workload_writer_put_framed(chakra_workload_writer *w, uint32_t rank, const uint8_t *data,
                                                 size_t len, chakra_error *err);
CHAKRA_API int chakra_workload_writer_put_built(chakra_workload_writer *w, uint32_t rank, chakra_builder *b,
                                                chakra_error *err);

/* Writes out what rank has buffered and closes its file (its descriptor
 * and buffers go back); a later put reopens it. For a rank that is
 * complete, or will not be added to for a long time. */
CHAKRA_API int chakra_workload_writer_flush_rank(chakra_workload_writer *w, uint32_t rank, chakra_error *err);

/* Makes every rank on several threads: fn(ctx, worker, r, w, err) puts
 * rank r's messages (each rank once, on one thread, ranks handed out in
 * ascending order), and the rank is flushed when fn returns 0. worker
 * (below the thread count: threads, or CHAKRA_WORKLOAD_AUTO_THREADS when
 * threads is 0 = one per CPU up to that) lets fn keep scratch memory per
 * thread. At most the writer's max_open files are open at once whatever
 * the thread count; the bytes do not depend on it. When a rank fails, no
 * further rank starts and the writer is failed; the error returned is
 * that of the lowest rank that failed by itself (not one stopped because
 * another failed). fn returns 0 or a negative status with err set. */
#define CHAKRA_WORKLOAD_AUTO_THREADS 8
typedef int (*chakra_rank_writer_fn)(void *ctx, unsigned worker, uint32_t rank, chakra_workload_writer *w,
                                     chakra_error *err);
CHAKRA_API int chakra_workload_writer_put_ranks(chakra_workload_writer *w, unsigned threads, chakra_rank_writer_fn fn,
                                                void *ctx, chakra_error *err);

/* The name of rank's file (owned by w). */
CHAKRA_API const char *chakra_workload_writer_path(const chakra_workload_writer *w, uint32_t rank);

/* Writes out what is buffered and renames every rank's file into place,
 * all or none: a rank without a GlobalMetadata, or any failure, removes
 * every temporary (and any file this call already renamed). The files are
 * durable before the first rename (one syncfs of the file system, or an
 * fsync per file where syncfs does not report errors) and the folder is
 * synced after the last: once commit returns 0 every rank is on disk, and
 * a crash never leaves a partial file under a final name. Frees w
 * whatever happens. */
CHAKRA_API int chakra_workload_writer_commit(chakra_workload_writer *w, chakra_error *err);

/* Abandons everything: removes every temporary, frees w (NULL is fine). */
CHAKRA_API void chakra_workload_writer_discard(chakra_workload_writer *w);

/* ---- experimental tier (CHAKRA_EXPERIMENTAL, trace.h) --------------------- */
#ifdef CHAKRA_EXPERIMENTAL

/* The message being built, as protobuf-c sees it: its bytes decoded
 * (owned by b, valid until the next start), or NULL when none is started
 * or memory ran out. */
CHAKRA_API const ProtobufCMessage *chakra_builder_message(const chakra_builder *b);

/* Packs msg (a GlobalMetadata or a Node) and appends it to rank's file, as
 * the puts above (same checks, same threads rule). */
CHAKRA_API int chakra_workload_writer_put(chakra_workload_writer *w, uint32_t rank, const ProtobufCMessage *msg,
                                          chakra_error *err);

#endif /* CHAKRA_EXPERIMENTAL */

#ifdef __cplusplus
}
#endif
#endif
