/* readerint.h - what the library's own modules take from the reader beyond
 * include/chakra/trace.h (private to libchakra). */
#ifndef CHAKRA_READERINT_H
#define CHAKRA_READERINT_H

#include <stddef.h>

#include "chakra/trace.h"

/* The messages from the reader's position to the end, counted by a pass
 * over the framing alone, the reader then put back where it was: loaders
 * size their per-node arrays once instead of doubling them (which copied
 * each array about once more and faulted in twice its final size). *n is
 * 0 for a reader that cannot rewind (gzip re-reads, a pipe cannot) and
 * stops short at a framing problem, which the decoding pass reports. */
int reader_count_rest(chakra_reader *r, size_t *n, chakra_error *err);

#endif
