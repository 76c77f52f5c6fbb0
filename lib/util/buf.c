/* buf.c - see buf.h. */
#include "buf.h"

#include <stdlib.h>

/* Failure gives up the room left (cap = n), so that the inline fast
 * paths, which do not look at oom, stop writing too. */
static uint8_t *fail(buf *b) {
  b->oom = 1;
  b->cap = b->n;
  return NULL;
}

uint8_t *buf_grow(buf *b, size_t k) {
  if (b->oom) return NULL;
  if (b->p && b->cap - b->n >= k) return b->p + b->n;
  if (k > SIZE_MAX - b->n) return fail(b);
  size_t cap = b->cap > BUF_MIN ? b->cap : BUF_MIN;
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

void buf_free(buf *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}

const char *buf_cstr(buf *b) {
  uint8_t *end = buf_room(b, 1);
  if (!end) return NULL;
  *end = 0;
  return b->s;
}
