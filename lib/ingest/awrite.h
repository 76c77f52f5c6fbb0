/* awrite.h - output written by a second thread (private to lib/ingest).
 *
 * The converters produce a large file at the end of a run; handing full
 * buffers to a thread that does the outfile work (the copy, the
 * compression, the write system calls) lets the encoding of the next
 * buffer overlap it. Two buffers alternate; the producer waits only when
 * both are in flight. With threads disabled it writes synchronously. The
 * atomic temp-file + rename behaviour is outfile's. */
#ifndef CHAKRA_INGEST_AWRITE_H
#define CHAKRA_INGEST_AWRITE_H

#include <stddef.h>

#include "../util/outfile.h"
#include "chakra/error.h"

typedef struct awrite awrite;

/* Size of each of the two buffers: the most awrite_room() gives at once. */
#define AWRITE_MAX_ROOM (256u << 10)

/* Opens path through outfile (gzip when asked). threaded = 0 writes in
 * the calling thread. */
int awrite_open(awrite **out, const char *path, int gzip, int threaded, chakra_error *err);
/* Returns a pointer to n bytes of room (n <= AWRITE_MAX_ROOM) to fill; commit them
 * with awrite_commit(). NULL after a failure (the error is kept). */
char *awrite_room(awrite *w, size_t n);
void awrite_commit(awrite *w, size_t n);
int awrite_put(awrite *w, const void *data, size_t n);
/* The first write error so far (copied into err), or 0. A NULL from
 * awrite_room() or an error from awrite_put() is explained here. */
int awrite_status(awrite *w, chakra_error *err);
/* Flushes, waits for the thread and renames into place; frees w. */
int awrite_close(awrite *w, chakra_error *err);
/* Removes the output; frees w. */
void awrite_discard(awrite *w);

#endif
