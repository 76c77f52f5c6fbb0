/* stream.h - where bytes come from and where they go.
 *
 * Every reader of libchakra reads a chakra_input (a file by name, an open
 * FILE*, or bytes in memory) and every writer can write to a chakra_sink
 * (an open FILE*, or a callback) as well as to a file by name. The
 * functions that take paths are thin wrappers over these, so a program can
 * hand the library traces it holds in memory, read from a socket or write
 * into its own buffers without temporary files.
 *
 * Inputs are gzip-detected whatever their origin. An output to a sink is
 * not atomic as a file output is (chakra/output.h): the bytes are the
 * caller's as they are handed over, and after an error the caller discards
 * what it received. */
#ifndef CHAKRA_STREAM_H
#define CHAKRA_STREAM_H

#include <stddef.h>
#include <stdio.h>

#include "chakra/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Exactly one of path, file and data is set. Nothing is copied or closed:
 * a FILE* and a buffer must stay valid while anything reads them (a graph
 * loaded from one re-reads it for chakra_graph_read_node()). A FILE* is
 * read from its position when first opened; re-reading seeks back there. */
typedef struct chakra_input {
  const char *path;   /* a file, or "-" for standard input */
  FILE *file;         /* an open stream */
  const void *data;   /* bytes in memory ... */
  size_t size;        /* ... this many */
  const char *name;   /* what messages call it; NULL: the path, "<stream>" or "<memory>" */
} chakra_input;

/* Receives the next len bytes of an output, in order; returns 0, or
 * nonzero to fail the output (the writer then reports a write error). */
typedef int (*chakra_write_fn)(void *ctx, const void *data, size_t len);

/* Exactly one of file and write is set. A FILE* is written with fwrite and
 * flushed when the output is complete, never closed. */
typedef struct chakra_sink {
  FILE *file;
  chakra_write_fn write;
  void *ctx;
  const char *name;   /* what messages call it; NULL: "<stream>" or "<callback>" */
} chakra_sink;

/* The name messages give an input or a sink (never NULL). */
CHAKRA_API const char *chakra_input_name(const chakra_input *in);
CHAKRA_API const char *chakra_sink_name(const chakra_sink *out);

#ifdef __cplusplus
}
#endif
#endif
