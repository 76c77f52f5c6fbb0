/* mxread.h - an MSCCL-IR file read and parsed (private to lib/coll):
 * mapped (or read, from a pipe), its SHA-256 computed on a thread of its
 * own while expat parses it, a large file cut before top-level <gpu> tags
 * and parsed in parts on several threads (the cuts checked; any doubt and
 * the file is parsed whole). */
#ifndef CHAKRA_COLL_MXREAD_H
#define CHAKRA_COLL_MXREAD_H

#include <stddef.h>
#include <stdint.h>

#include "msccl.h"

/* The whole file at x->path: mapped (*mapped = 1: munmap it) or read into
 * malloc'd memory. */
int mx_map_file(mx *x, uint8_t **data, size_t *len, int *mapped);
/* Parses data into x on up to `threads` threads; hex receives the text's
 * SHA-256. */
int mx_parse(mx *x, const uint8_t *data, size_t len, unsigned threads, char hex[65]);

#endif
