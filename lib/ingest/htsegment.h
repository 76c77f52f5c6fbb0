/* htsegment.h - the parallel parse of a large host ET (private to the
 * host-ET reader): the file is cut at node boundaries found by scanning
 * near evenly spaced offsets, each segment is parsed by its own thread,
 * every cut is verified by the parser that ends on it, and the segments'
 * nodes and strings are merged. Any doubt falls back to one sequential
 * pass. */
#ifndef CHAKRA_INGEST_HTSEGMENT_H
#define CHAKRA_INGEST_HTSEGMENT_H

#include "htparse.h"

typedef struct segment {
  hparse p;
  int fd;
  uint64_t start, end;  /* text [start, end) of the file; segment 0 starts at 0 */
  int last;
  int boundary_ok;      /* the parser stood between two nodes at `end` */
  int rc;
} segment;

/* Parses path on up to `threads` threads into h: *done = 1 when that
 * settled it (rc the result), 0 when the caller must parse sequentially
 * (a compressed or small file, a cut that did not hold). */
int ht_segments_try(hostet *h, const char *path, const hostet_options *opt, int threads, int *done,
                    chakra_error *err);
/* Moves the k segments' nodes, sides and pools into h, strings remapped
 * into one table; CHAKRA_ENOMEM or 0. */
int ht_segments_merge(hostet *h, segment *seg, int k);

#endif
