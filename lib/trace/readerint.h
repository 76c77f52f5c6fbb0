/* readerint.h - what the library's own code does with a reader beyond
 * chakra/trace.h (private to libchakra): bind a class template's messages
 * to one rank (bind.h), frame messages without binding them, and count the
 * rest of a file. */
#ifndef CHAKRA_TRACE_READERINT_H
#define CHAKRA_TRACE_READERINT_H

#include <stddef.h>

#include "bind.h"
#include "chakra/trace.h"

/* From now on every node r returns, raw or decoded, is bound by b
 * (retained; NULL unbinds). Offsets stay the template's. */
void reader_bind(chakra_reader *r, bind_ref *b);
/* The next message as stored (what chakra_reader_next_raw() returns
 * without a binding). */
int reader_next_frame(chakra_reader *r, const uint8_t **data, size_t *len, chakra_error *err);
/* The GlobalMetadata message as stored (the reader's, valid until close). */
const uint8_t *reader_metadata_bytes(const chakra_reader *r, size_t *len);
/* The messages from the reader's position to the end, counted by a pass
 * over the framing alone, the reader then put back where it was: loaders
 * size their per-node arrays once instead of doubling them (which copied
 * each array about once more and faulted in twice its final size). *n is
 * 0 for a reader that cannot rewind (gzip re-reads, a pipe cannot) and
 * stops short at a framing problem, which the decoding pass reports. */
int reader_count_rest(chakra_reader *r, size_t *n, chakra_error *err);

#endif
