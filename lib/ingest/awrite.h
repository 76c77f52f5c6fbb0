/* awrite.h - output written by a second thread (private to lib/ingest).
 *
 * The converters produce a large file at the end of a run, packed into
 * large buffers; handing each filled buffer to a thread that does the
 * outfile work (the compression, the write system calls) lets the packing
 * of the next buffers overlap it. Buffers are handed over, not copied: the
 * caller leaves them alone until awrite_wait(). With threads disabled it
 * writes synchronously. The atomic temp-file + rename behaviour is
 * outfile's. */
#ifndef CHAKRA_INGEST_AWRITE_H
#define CHAKRA_INGEST_AWRITE_H

#include <stddef.h>

#include "../util/outfile.h"
#include "chakra/error.h"

typedef struct awrite awrite;

/* Opens path through outfile (gzip when asked). threaded = 0 writes in
 * the calling thread. */
int awrite_open(awrite **out, const char *path, int gzip, int threaded, chakra_error *err);
/* Queues data[0..n) to be written after everything queued before. The
 * bytes must stay as they are until awrite_wait() returns. Returns the
 * first write error so far (explained by awrite_status()), or 0. */
int awrite_queue(awrite *w, const void *data, size_t n);
/* Waits until everything queued is written; returns as awrite_queue(). */
int awrite_wait(awrite *w);
/* The first write error so far (copied into err), or 0. */
int awrite_status(awrite *w, chakra_error *err);
/* Writes what is queued, waits for the thread and renames into place;
 * frees w. */
int awrite_close(awrite *w, chakra_error *err);
/* Removes the output; frees w. */
void awrite_discard(awrite *w);

#endif
