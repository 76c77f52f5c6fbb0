/* buf.h - the growable byte buffer of libchakra (private): text being
 * assembled (names, JSON fragments, Python reprs, messages) and encoded
 * protobuf (lib/trace/encode.h's enc_buf is this type).
 *
 * The bytes are seen as text through s and as bytes through p (one
 * pointer, two types). Allocation failure is sticky: the buffer stops
 * growing, sets oom, and later appends do nothing, so an owner checks
 * once at the end instead of after every piece. Capacity doubles from
 * BUF_MIN and every size is checked for overflow. A zeroed buf is empty. */
#ifndef CHAKRA_BUF_H
#define CHAKRA_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "jsonw.h"

#define BUF_MIN 256

typedef struct buf {
  union {
    char *s;
    uint8_t *p;
  };
  size_t n, cap;
  int oom;
} buf;

/* Makes room for k more bytes; returns where they go, or NULL (oom set). */
uint8_t *buf_grow(buf *b, size_t k);
void buf_free(buf *b);

/* Where the next k bytes go (advance b->n by what is written), or NULL
 * when out of memory. */
static inline uint8_t *buf_room(buf *b, size_t k) {
  if (b->cap - b->n >= k && b->p) return b->p + b->n;
  return buf_grow(b, k);
}

static inline void buf_put(buf *b, const void *s, size_t k) {
  if (!k) return;
  uint8_t *d = buf_room(b, k);
  if (!d) return;
  memcpy(d, s, k);
  b->n += k;
}

static inline void buf_putc(buf *b, char c) {
  if (b->n == b->cap && !buf_grow(b, 1)) return;
  b->s[b->n++] = c;
}

static inline void buf_puts(buf *b, const char *s) { buf_put(b, s, strlen(s)); }

static inline void buf_u64(buf *b, uint64_t v) {
  uint8_t *d = buf_room(b, 20); /* jsonw_put_u64 may store up to 20 bytes */
  if (d) b->n += jsonw_put_u64((char *)d, v);
}

static inline void buf_i64(buf *b, int64_t v) {
  if (v < 0) {
    buf_putc(b, '-');
    buf_u64(b, (uint64_t)0 - (uint64_t)v);
  } else {
    buf_u64(b, (uint64_t)v);
  }
}

/* The text so far, NUL-terminated (the NUL is not counted in n), or NULL
 * when out of memory. */
const char *buf_cstr(buf *b);

#endif
