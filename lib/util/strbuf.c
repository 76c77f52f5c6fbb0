/* strbuf.c - see strbuf.h. */
#include "strbuf.h"

#include <stdlib.h>

#include "jsonw.h"

/* Failure gives up the room left (cap = n), so that the inline fast
 * paths, which do not look at oom, stop writing too. */
static uint8_t *fail(strbuf *b) {
  b->oom = 1;
  b->cap = b->n;
  return NULL;
}

uint8_t *strbuf_grow(strbuf *b, size_t k) {
  if (b->oom) return NULL;
  if (b->p && b->cap - b->n >= k) return b->p + b->n;
  if (k > SIZE_MAX - b->n) return fail(b);
  size_t cap = b->cap > STRBUF_MIN ? b->cap : STRBUF_MIN;
  while (cap - b->n < k) {
    if (cap > SIZE_MAX / 2) {
      cap = SIZE_MAX;
      break;
    }
    cap *= 2;
  }
  uint8_t *p = realloc(b->p, cap);
  if (!p) return fail(b);
  b->p = p;
  b->cap = cap;
  return p + b->n;
}

void strbuf_free(strbuf *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}

const char *strbuf_cstr(strbuf *b) {
  uint8_t *end = strbuf_room(b, 1);
  if (!end) return NULL;
  *end = 0;
  return b->s;
}

void strbuf_u64(strbuf *b, uint64_t v) {
  uint8_t *d = strbuf_room(b, 20); /* jsonw_put_u64 may store up to 20 bytes */
  if (d) b->n += jsonw_put_u64((char *)d, v);
}

void strbuf_i64(strbuf *b, int64_t v) {
  if (v < 0) {
    strbuf_putc(b, '-');
    strbuf_u64(b, (uint64_t)0 - (uint64_t)v);
  } else {
    strbuf_u64(b, (uint64_t)v);
  }
}

int strbuf_read_stream(strbuf *b, FILE *f, size_t max) {
  for (;;) {
    if (b->n > max) {
      b->n = max;
      return STRBUF_EBIG;
    }
    size_t left = max - b->n; /* one byte past it tells that there is more */
    uint8_t *at = strbuf_room(b, left < 65536 ? left + 1 : 65536);
    if (!at) return STRBUF_ENOMEM;
    size_t room = b->cap - b->n, got = fread(at, 1, left < room ? left + 1 : room, f);
    b->n += got;
    if (!got) return ferror(f) ? STRBUF_EREAD : 0;
  }
}
