/* strbuf.h - the growable byte buffer of libchakra (private): text being
 * assembled (names, JSON fragments, Python reprs, messages) and encoded
 * protobuf (lib/trace/encode.h's enc_buf is this type).
 *
 * The bytes are seen as text through s and as bytes through p (one
 * pointer, two types). Allocation failure is sticky: the buffer stops
 * growing, sets oom, and later appends do nothing, so an owner checks
 * once at the end instead of after every piece. Capacity doubles from
 * STRBUF_MIN and every size is checked for overflow. A zeroed strbuf is empty. */
#ifndef CHAKRA_STRBUF_H
#define CHAKRA_STRBUF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define STRBUF_MIN 256

typedef struct strbuf {
  size_t n, cap;
  int oom;
  union { /* last, so that {0} initialises without nested braces */
    char *s;
    uint8_t *p;
  };
} strbuf;

/* Makes room for k more bytes; returns where they go, or NULL (oom set). */
uint8_t *strbuf_grow(strbuf *b, size_t k);
void strbuf_free(strbuf *b);

/* Where the next k bytes go (advance b->n by what is written), or NULL
 * when out of memory. */
static inline uint8_t *strbuf_room(strbuf *b, size_t k) {
  if (b->cap - b->n >= k && b->p) return b->p + b->n;
  return strbuf_grow(b, k);
}

static inline void strbuf_put(strbuf *b, const void *s, size_t k) {
  if (!k) return;
  uint8_t *d = strbuf_room(b, k);
  if (!d) return;
  memcpy(d, s, k);
  b->n += k;
}

static inline void strbuf_putc(strbuf *b, char c) {
  if (b->n == b->cap && !strbuf_grow(b, 1)) return;
  b->s[b->n++] = c;
}

static inline void strbuf_puts(strbuf *b, const char *s) { strbuf_put(b, s, strlen(s)); }

/* Decimal text of v, as jsonw writes numbers. */
void strbuf_u64(strbuf *b, uint64_t v);
void strbuf_i64(strbuf *b, int64_t v);

/* The text so far, NUL-terminated (the NUL is not counted in n), or NULL
 * when out of memory. */
const char *strbuf_cstr(strbuf *b);

/* Appends what is left of f to b, b holding at most max bytes in all:
 * 0 at the end of f; STRBUF_EREAD on a read error (errno as the read left
 * it); STRBUF_EBIG when there is more than that (b keeps max bytes);
 * STRBUF_ENOMEM when out of memory (oom set). The one "read a whole
 * file" loop. */
enum { STRBUF_EREAD = -1, STRBUF_EBIG = -2, STRBUF_ENOMEM = -3 };
int strbuf_read_stream(strbuf *b, FILE *f, size_t max);

#endif
