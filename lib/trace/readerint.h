/* readerint.h - what the library's own code does with a reader beyond
 * chakra/trace.h (private to libchakra): bind a class template's messages
 * to one rank (bind.h), and frame messages without binding them. */
#ifndef CHAKRA_TRACE_READERINT_H
#define CHAKRA_TRACE_READERINT_H

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

#endif
