/* pyrepr.c - Python repr and compact JSON text of scalars; see pyrepr.h. */
#include "pyrepr.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/jsonw.h"
#include "../util/utf8.h"

static const char hexd[] = "0123456789abcdef";

/* Python's str.isprintable() for a non-ASCII code point. Exact for the
 * control, separator, format and private-use ranges; unassigned code points
 * (which Python also escapes) would need the Unicode tables and are kept. */
static int py_printable(uint32_t c) {
  if (c < 0xa1) return 0; /* C1 controls, NBSP */
  if (c == 0xad || c == 0x61c || c == 0x6dd || c == 0x70f || c == 0x8e2 || c == 0x180e ||
      c == 0x1680 || c == 0x3000 || c == 0xfeff || c == 0x110bd || c == 0x110cd || c == 0xe0001)
    return 0;
  if ((c >= 0x600 && c <= 0x605) || (c >= 0x2000 && c <= 0x200f) || (c >= 0x2028 && c <= 0x202f) ||
      (c >= 0x205f && c <= 0x2064) || (c >= 0x2066 && c <= 0x206f) || (c >= 0xd800 && c <= 0xf8ff) ||
      (c >= 0xfff9 && c <= 0xfffb) || c == 0xfffe || c == 0xffff || (c >= 0x13430 && c <= 0x1343f) ||
      (c >= 0x1bca0 && c <= 0x1bca3) || (c >= 0x1d173 && c <= 0x1d17a) ||
      (c >= 0xe0020 && c <= 0xe007f) || c >= 0xf0000)
    return 0;
  return 1;
}

/* One code point at s (n > 0 bytes, s[0] >= 0x80) as Python holds the
 * string: UTF-8, plus the surrogates U+D800..U+DFFF (invalid UTF-8), which
 * yajl writes for a lone \udc00-style escape and Python keeps, and repr()
 * escapes. Returns its length, or 1 with *cp = U+FFFD when invalid. */
static size_t py_decode(const unsigned char *s, size_t n, uint32_t *cp) {
  size_t len = utf8_decode(s, n, cp);
  if (len) return len;
  if (n >= 3 && s[0] == 0xed && (s[1] & 0xe0) == 0xa0 && (s[2] & 0xc0) == 0x80) {
    *cp = 0xd000u | (uint32_t)(s[1] & 0x3f) << 6 | (uint32_t)(s[2] & 0x3f);
    return 3;
  }
  *cp = 0xfffd;
  return 1;
}

void pyrepr_str(strbuf *b, const unsigned char *s, size_t n) {
  int has_sq = memchr(s, '\'', n) != NULL, has_dq = memchr(s, '"', n) != NULL;
  char q = has_sq && !has_dq ? '"' : '\'';
  char *d = (char *)strbuf_room(b, n + 2);
  if (!d) return;
  *d++ = q;
  size_t i = 0;
  /* Fast path: a run of plain printable ASCII. */
  while (i < n) {
    unsigned c = s[i];
    if (c >= 0x20 && c < 0x7f && c != (unsigned)q && c != '\\') {
      *d++ = (char)c;
      i++;
      continue;
    }
    break;
  }
  b->n = (size_t)(d - b->s);
  for (; i < n;) {
    unsigned c = s[i];
    if (c >= 0x20 && c < 0x7f) {
      if (c == (unsigned)q || c == '\\') strbuf_putc(b, '\\');
      strbuf_putc(b, (char)c);
      i++;
    } else if (c < 0x80) {
      char e[4] = {'\\', 0, 0, 0};
      size_t el = 2;
      if (c == '\n') e[1] = 'n';
      else if (c == '\r') e[1] = 'r';
      else if (c == '\t') e[1] = 't';
      else e[1] = 'x', e[2] = hexd[c >> 4], e[3] = hexd[c & 15], el = 4;
      strbuf_put(b, e, el);
      i++;
    } else {
      uint32_t cp;
      size_t len = py_decode(s + i, n - i, &cp);
      if (cp == 0xfffd && len == 1) {
        strbuf_put(b, "\xef\xbf\xbd", 3);
      } else if (py_printable(cp)) {
        strbuf_put(b, s + i, len);
      } else {
        char e[10];
        size_t el;
        if (cp <= 0xff) {
          e[0] = '\\', e[1] = 'x', e[2] = hexd[cp >> 4], e[3] = hexd[cp & 15], el = 4;
        } else if (cp <= 0xffff) {
          e[0] = '\\', e[1] = 'u', el = 6;
          for (int k = 0; k < 4; k++) e[2 + k] = hexd[(cp >> (12 - 4 * k)) & 15];
        } else {
          e[0] = '\\', e[1] = 'U', el = 10;
          for (int k = 0; k < 8; k++) e[2 + k] = hexd[(cp >> (28 - 4 * k)) & 15];
        }
        strbuf_put(b, e, el);
      }
      i += len;
    }
  }
  strbuf_putc(b, q);
}

void pyrepr_double(strbuf *b, double v) {
  if (isnan(v)) strbuf_puts(b, "nan");
  else if (isinf(v)) strbuf_puts(b, v < 0 ? "-inf" : "inf");
  else {
    char t[32];
    strbuf_put(b, t, jsonw_format_pyfloat(t, v));
  }
}

void pyrepr_number(strbuf *b, const char *txt, size_t n) {
  if (json_number_is_int(txt, n)) {
    if (n == 2 && txt[0] == '-' && txt[1] == '0') strbuf_putc(b, '0');
    else strbuf_put(b, txt, n);
    return;
  }
  char t[64];
  double v;
  if (n < sizeof t) {
    memcpy(t, txt, n);
    t[n] = 0;
    v = strtod(t, NULL);
  } else {
    char *h = malloc(n + 1);
    if (!h) {
      b->oom = 1;
      return;
    }
    memcpy(h, txt, n);
    h[n] = 0;
    v = strtod(h, NULL);
    free(h);
  }
  pyrepr_double(b, v);
}

void json_str(strbuf *b, const unsigned char *s, size_t n) {
  char *d = (char *)strbuf_room(b, JSONW_ESCAPED_MAX(n));
  if (d) b->n += jsonw_escape(d, (const char *)s, n, 0, NULL);
}

void json_double(strbuf *b, double v) {
  char t[40];
  strbuf_put(b, t, jsonw_format_number(t, v));
}
