/* strbuf.h - a growable, always NUL-terminated text buffer (private to
 * libchakra) for small texts assembled piece by piece: a failed growth
 * sets oom and later appends do nothing, so a caller checks once at the
 * end instead of after every piece. */
#ifndef CHAKRA_STRBUF_H
#define CHAKRA_STRBUF_H

#include <stddef.h>

typedef struct strbuf {
  char *s;      /* NULL until the first append; owned (free()) */
  size_t n, cap;
  int oom;
} strbuf;

void strbuf_put(strbuf *b, const char *s, size_t n);

#endif
