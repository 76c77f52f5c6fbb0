/* trace.h - reading and writing Chakra .et files (one rank each).
 *
 * A .et file is a sequence of length-delimited protobuf messages: a varint
 * byte count, then the message. The first message is a GlobalMetadata, every
 * later one a Node. Files may be gzip-compressed (detected by the magic
 * bytes, concatenated members allowed).
 *
 * The reader streams: each Node lives in an arena that is reset by the next
 * call, so iterating a trace of any size runs in constant memory. The writer
 * writes to a temporary file beside the destination and renames it on
 * chakra_writer_close(), so a failed run never leaves a half-written file.
 *
 * Ownership: a reader or writer returned through **out is the caller's
 * (chakra_reader_close(), chakra_writer_close() or _discard()); on failure
 * *out is NULL and there is nothing to free. Nodes and metadata handed out
 * by a reader belong to it. Paths are copied; messages given to the writer
 * are only read.
 *
 * Tiers (docs/library.md): the declarations that hand out or take the
 * nodes themselves - the protobuf-c structs generated from
 * proto/et_def.proto, whose shape follows the schema and protobuf-c - are
 * the experimental tier, declared only when CHAKRA_EXPERIMENTAL is defined
 * before the first chakra header (as zstd's ZSTD_STATIC_LINKING_ONLY). The
 * stable tier frames, copies and seeks messages without decoding them. */
#ifndef CHAKRA_TRACE_H
#define CHAKRA_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "chakra/export.h"
#include "chakra/error.h"
#ifdef CHAKRA_EXPERIMENTAL
#include "chakra/et_def.pb-c.h"
#endif
#include "chakra/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest message accepted by default; a length prefix above it is an error
 * (a corrupt prefix must not make us allocate gigabytes). */
#define CHAKRA_DEFAULT_MAX_MESSAGE (256u * 1024u * 1024u)

typedef struct chakra_reader chakra_reader;

typedef struct chakra_reader_options {
  size_t max_message_size; /* 0 = CHAKRA_DEFAULT_MAX_MESSAGE */
} chakra_reader_options;

/* Opens path ("-" = standard input) and reads its GlobalMetadata.
 * opt may be NULL. On failure *out is NULL and err names file and offset. */
CHAKRA_API int chakra_reader_open(chakra_reader **out, const char *path,
                                  const chakra_reader_options *opt, chakra_error *err);

/* The same from a file, an open FILE* or bytes in memory (chakra/stream.h):
 * chakra_reader_open() is this with a path. */
CHAKRA_API int chakra_reader_open_input(chakra_reader **out, const chakra_input *in,
                                        const chakra_reader_options *opt, chakra_error *err);

/* Reads the next Node message without decoding it: returns 1 and the
 * message bytes (the reader's, valid until the next call), 0 at a clean
 * end of file, < 0 on error. The framing is checked. */
CHAKRA_API int chakra_reader_next_raw(chakra_reader *r, const uint8_t **data, size_t *len,
                                      chakra_error *err);

/* Byte offset (in the uncompressed stream) of the length prefix of the
 * message returned last, and its index (0 = GlobalMetadata, 1 = first Node). */
CHAKRA_API uint64_t chakra_reader_message_offset(const chakra_reader *r);
CHAKRA_API uint64_t chakra_reader_message_index(const chakra_reader *r);
/* Byte offset just past everything consumed so far. */
CHAKRA_API uint64_t chakra_reader_offset(const chakra_reader *r);
CHAKRA_API int chakra_reader_is_gzip(const chakra_reader *r);
/* Nonzero when chakra_reader_seek() is cheap: a plain file, not gzip (which
 * re-reads from the start) and not a pipe (which cannot seek). */
CHAKRA_API int chakra_reader_can_rewind(const chakra_reader *r);
/* The path as opened ("<stdin>" for "-"); valid until close. */
CHAKRA_API const char *chakra_reader_path(const chakra_reader *r);

/* Re-positions the reader at a message boundary previously reported by
 * chakra_reader_message_offset(), or at chakra_reader_offset() as it was
 * right after open (the first node). Message indexes are then unknown
 * (UINT64_MAX) except after a seek back to the first node. Plain files
 * seek; gzip re-reads from the start; a pipe fails with CHAKRA_EINVAL.
 * After any other failure only chakra_reader_close() is meaningful. */
CHAKRA_API int chakra_reader_seek(chakra_reader *r, uint64_t offset, chakra_error *err);

/* Frees r and everything it handed out. NULL is allowed. */
CHAKRA_API void chakra_reader_close(chakra_reader *r);

typedef struct chakra_writer chakra_writer;

enum {
  CHAKRA_WRITE_GZIP = 1,  /* compress (also implied by a name ending in .gz) */
  CHAKRA_WRITE_PLAIN = 2  /* never compress, whatever the name */
};

/* Opens a temporary file beside path ("-" = standard output, written
 * directly). Nothing is visible at path until chakra_writer_close().
 * On failure *out is NULL. */
CHAKRA_API int chakra_writer_open(chakra_writer **out, const char *path, int flags,
                                  chakra_error *err);
/* The same writing to a FILE* or a callback (chakra/stream.h) as the
 * bytes are made; chakra_writer_close() flushes. CHAKRA_WRITE_GZIP is
 * refused (a file's name decides compression). */
CHAKRA_API int chakra_writer_open_sink(chakra_writer **out, const chakra_sink *sink, int flags, chakra_error *err);
/* Writes one serialized message (GlobalMetadata first, then Nodes) with
 * its length prefix. After a failure, give the writer up with
 * chakra_writer_discard(). */
CHAKRA_API int chakra_writer_put_raw(chakra_writer *w, const uint8_t *data, size_t len,
                                     chakra_error *err);
/* Flushes, closes and renames into place; frees w whatever happens. After
 * a failure nothing is at the path (the temporary file is removed). */
CHAKRA_API int chakra_writer_close(chakra_writer *w, chakra_error *err);
/* Abandons the output: removes the temporary file and frees w. NULL is
 * allowed. */
CHAKRA_API void chakra_writer_discard(chakra_writer *w);

/* Encodes v as a base-128 varint into out (at least 10 bytes); returns the
 * number of bytes written. */
CHAKRA_API size_t chakra_varint_encode(uint64_t v, uint8_t *out);

/* ---- experimental tier ---------------------------------------------------- */
#ifdef CHAKRA_EXPERIMENTAL

typedef ChakraProtoMsg__Node chakra_node;
typedef ChakraProtoMsg__GlobalMetadata chakra_metadata;
typedef ChakraProtoMsg__AttributeProto chakra_attr;

/* The file's GlobalMetadata; valid until chakra_reader_close(). */
CHAKRA_API const chakra_metadata *chakra_reader_metadata(const chakra_reader *r);

/* Decodes the next Node into *node. Returns 1 for a node, 0 at a clean
 * end of file, < 0 on error (then *node is NULL). The node belongs to the
 * reader and is valid until the next call or chakra_reader_close(): copy
 * what you keep, never free it. */
CHAKRA_API int chakra_reader_next(chakra_reader *r, chakra_node **node, chakra_error *err);

/* Decodes one Node message body (as from chakra_reader_next_raw()) into a
 * node of its own, or NULL if data is not a Node. The caller owns the
 * result: free it with chakra_node_free(). */
CHAKRA_API chakra_node *chakra_node_decode(const uint8_t *data, size_t len);

/* Frees a node the caller owns: from chakra_node_decode() or
 * chakra_graph_read_node(); never one from chakra_reader_next(), which
 * belongs to the reader. NULL is allowed. */
CHAKRA_API void chakra_node_free(chakra_node *node);

/* Packs msg (a GlobalMetadata first, then Nodes) and writes it with its
 * length; msg is only read. After a failure, give the writer up with
 * chakra_writer_discard(). */
CHAKRA_API int chakra_writer_put(chakra_writer *w, const ProtobufCMessage *msg, chakra_error *err);

#endif /* CHAKRA_EXPERIMENTAL */

#ifdef __cplusplus
}
#endif
#endif
