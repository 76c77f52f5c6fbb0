/* instream.h - byte input from a file, stdin, a FILE* or memory, gzip detected and inflated
 * transparently (private to libchakra).
 *
 * Every reader of untrusted input (.et, JSON) sits on this, so gzip support
 * and read errors are handled once. Offsets are in the uncompressed stream. */
#ifndef CHAKRA_INSTREAM_H
#define CHAKRA_INSTREAM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "chakra/error.h"
#include "chakra/stream.h"

typedef struct instream instream;

/* path "-" reads standard input. Errors name the path. */
int instream_open(instream **out, const char *path, chakra_error *err);
/* From a file, a FILE* or memory (chakra/stream.h); errors use its name. */
int instream_open_input(instream **out, const chakra_input *in, chakra_error *err);
/* Reads up to n bytes into buf: returns the count, 0 at end, < 0 on error. */
ssize_t instream_read(instream *s, void *buf, size_t n, chakra_error *err);
/* Goes back to the start of the (uncompressed) stream and skips offset bytes.
 * Fails with CHAKRA_EINVAL on a pipe. */
int instream_seek(instream *s, uint64_t offset, chakra_error *err);
int instream_is_gzip(const instream *s);
/* Nonzero when instream_seek() can work (not a pipe or terminal). */
int instream_is_seekable(const instream *s);
const char *instream_path(const instream *s);
void instream_close(instream *s);
/* The input's size when it is a plain file by path (not gzip, not "-"),
 * else 0 (unknown): the total of a progress count in bytes. */
uint64_t instream_plain_size(const chakra_input *in);

#endif
