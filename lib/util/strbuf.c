/* strbuf.c - see strbuf.h. */
#include "strbuf.h"

#include <stdlib.h>
#include <string.h>

void strbuf_put(strbuf *b, const char *s, size_t n) {
  if (b->oom) return;
  if (b->n + n + 1 > b->cap) {
    size_t cap = (b->n + n + 1) * 2;
    char *q = realloc(b->s, cap);
    if (!q) {
      b->oom = 1;
      return;
    }
    b->s = q, b->cap = cap;
  }
  memcpy(b->s + b->n, s, n);
  b->n += n;
  b->s[b->n] = 0;
}
