/* ibuf.h - growable byte buffer for the ingest modules (private).
 *
 * Scratch text (Python repr strings, JSON fragments, encoded protobuf) is
 * built here and copied out once it is complete. Allocation failure is
 * sticky: the buffer stops growing, sets oom, and the owner reports it once
 * instead of checking every append. */
#ifndef CHAKRA_INGEST_IBUF_H
#define CHAKRA_INGEST_IBUF_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../util/jsonw.h"

typedef struct ibuf {
  char *p;
  size_t n, cap;
  int oom;
} ibuf;

static inline int ibuf_grow(ibuf *b, size_t extra) {
  if (b->oom) return -1;
  size_t need = b->n + extra;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < need) cap *= 2;
  char *q = realloc(b->p, cap);
  if (!q) {
    b->oom = 1;
    return -1;
  }
  b->p = q;
  b->cap = cap;
  return 0;
}

/* Pointer to n writable bytes at the end (advance b->n yourself), or NULL. */
static inline char *ibuf_room(ibuf *b, size_t n) {
  if (b->cap - b->n < n && ibuf_grow(b, n)) return NULL;
  return b->p + b->n;
}

static inline void ibuf_put(ibuf *b, const void *s, size_t n) {
  if (!n) return;
  char *d = ibuf_room(b, n);
  if (!d) return;
  memcpy(d, s, n);
  b->n += n;
}

static inline void ibuf_putc(ibuf *b, char c) {
  if (b->n == b->cap && ibuf_grow(b, 1)) return;
  b->p[b->n++] = c;
}

static inline void ibuf_puts(ibuf *b, const char *s) { ibuf_put(b, s, strlen(s)); }

static inline void ibuf_free(ibuf *b) {
  free(b->p);
  b->p = NULL;
  b->n = b->cap = 0;
  b->oom = 0;
}

static inline void ibuf_u64(ibuf *b, uint64_t v) {
  char *d = ibuf_room(b, 20); /* jsonw_put_u64 may store up to 20 bytes */
  if (d) b->n += jsonw_put_u64(d, v);
}

static inline void ibuf_i64(ibuf *b, int64_t v) {
  if (v < 0) {
    ibuf_putc(b, '-');
    ibuf_u64(b, (uint64_t)0 - (uint64_t)v);
  } else {
    ibuf_u64(b, (uint64_t)v);
  }
}

#endif
