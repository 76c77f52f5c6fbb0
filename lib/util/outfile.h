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
/* 1 if the name ends in ".gz". */
int outfile_name_is_gzip(const char *path);

#endif
