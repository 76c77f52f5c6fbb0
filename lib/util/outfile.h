/* outfile.h - all-or-nothing output files (private to libchakra).
 *
 * Bytes go to a temporary file in the destination's directory, optionally
 * gzip-compressed; outfile_commit() renames it into place, anything else
 * removes it. Every output of the project (.et, JSON, reports) goes through
 * here so that a failed run never leaves a half-written file.
 *
 * Outputs that belong together are committed together. A library function
 * with several outputs (synth's groups file and its ranks, coll synth's XML
 * and its ranks) opens a group: while it is open, the calling thread's
 * commits only hold the finished files, and outfile_group_end() puts them
 * all in place or none. A program's whole set of outputs (outset.h,
 * chakra/output.h) is held the same way until the program commits it. */
#ifndef CHAKRA_OUTFILE_H
#define CHAKRA_OUTFILE_H

#include <stddef.h>

#include "chakra/error.h"
#include "chakra/stream.h"

typedef struct outfile outfile;

/* path "-" writes standard output directly. gzip: compress the bytes. */
int outfile_open(outfile **out, const char *path, int gzip, chakra_error *err);
/* Bytes to a FILE* or a callback (chakra/stream.h), in place: committing
 * flushes them, discarding abandons the rest (what was handed over is the
 * sink's). Never gzip. */
int outfile_open_sink(outfile **out, const chakra_sink *sink, chakra_error *err);
int outfile_write(outfile *f, const void *data, size_t len, chakra_error *err);
/* Returns a pointer to at least n writable bytes inside the buffer (n at
 * most 1 MiB); call outfile_commit_bytes() with how many were used. */
char *outfile_reserve(outfile *f, size_t n, chakra_error *err);
void outfile_commit_bytes(outfile *f, size_t used);
int outfile_commit(outfile *f, chakra_error *err); /* frees f */
void outfile_discard(outfile *f);                  /* frees f */
const char *outfile_path(const outfile *f);

/* A scratch file a program writes and reads back itself (convert's linked
 * trace): an empty registered temporary beside `beside` (a hidden name,
 * .NAME.XXXXXX), which no commit places and an interrupt removes like
 * every temporary. outfile_path() is its name; write it through
 * outfile_open() on that name inside outset_scratch_begin/end (the commit
 * replaces it, still registered); outfile_discard() removes it. */
int outfile_scratch(outfile **out, const char *beside, chakra_error *err);

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
 * report errors), then every file is put in place and each folder synced
 * once; if that fails for one file, the files already placed are put back
 * as they were (an existing file is exchanged with its replacement, so the
 * old one returns). Frees every f whatever happens. */
int outfile_commit_all(outfile **v, size_t n, chakra_error *err);
/* 1 if the name ends in ".gz". */
int outfile_name_is_gzip(const char *path);

/* The calling thread's group: until outfile_group_end(), its commits hold
 * their finished files. end(ok): all of them are committed together (or
 * handed to the program's output set), or with ok = 0 all are removed.
 * Groups nest: the outermost end decides. */
int outfile_group_begin(chakra_error *err);
int outfile_group_end(int ok, chakra_error *err);

/* For outset.c: commits files the program's set held (all finished),
 * all or none as outfile_commit_all; frees every f. */
int outfile_commit_held(outfile **v, size_t n, chakra_error *err);
/* The file a rename of path replaces: path, or the end of its chain of
 * symbolic links (which may not exist yet). malloc'd; NULL when out of
 * memory or the chain loops. */
char *outfile_final_target(const char *path);
/* 1 if st is the file behind standard output or error (written in place). */
struct stat;
int outfile_is_std_stream(const struct stat *st);

#endif
