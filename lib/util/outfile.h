/* outfile.h - all-or-nothing output files (private to libchakra).
 *
 * Bytes go to a temporary file in the destination's directory, optionally
 * gzip-compressed; outfile_commit() renames it into place, anything else
 * removes it. Every output of the project (.et, JSON, reports) goes through
 * here so that a failed run never leaves a half-written file. */
#ifndef CHAKRA_OUTFILE_H
#define CHAKRA_OUTFILE_H

#include <stddef.h>

#include "chakra/error.h"

typedef struct outfile outfile;

/* path "-" writes standard output directly. gzip: compress the bytes. */
int outfile_open(outfile **out, const char *path, int gzip, chakra_error *err);
int outfile_write(outfile *f, const void *data, size_t len, chakra_error *err);
/* Returns a pointer to at least n writable bytes inside the buffer (n at
 * most 1 MiB); call outfile_commit_bytes() with how many were used. */
char *outfile_reserve(outfile *f, size_t n, chakra_error *err);
void outfile_commit_bytes(outfile *f, size_t used);
int outfile_commit(outfile *f, chakra_error *err); /* frees f */
void outfile_discard(outfile *f);                  /* frees f */
const char *outfile_path(const outfile *f);

/* Many outputs at once (one file per rank) must not hold one descriptor
 * each. outfile_park() writes out the buffer, closes the temporary and
 * frees the buffer; the next write reopens it in append mode. Files that
 * cannot be reopened (gzip streams, standard output, special files) stay
 * open: parking them does nothing. Returns the write status. */
int outfile_park(outfile *f, chakra_error *err);
/* 1 while f holds a descriptor (not parked). */
int outfile_is_open(const outfile *f);
/* 1 if outfile_park() would close f (a regular temporary, not gzip). */
int outfile_can_park(const outfile *f);
/* Commits the n files all or none: every one is written out and closed
 * (one descriptor at a time), the batch is made durable at once (syncfs of
 * the file systems concerned, or an fsync per file where that does not
 * report errors), then every file is renamed and each folder synced once;
 * if a rename fails, the files already renamed are removed again. Frees
 * every f whatever happens. */
int outfile_commit_all(outfile **v, size_t n, chakra_error *err);
/* 1 if the name ends in ".gz". */
int outfile_name_is_gzip(const char *path);

#endif
