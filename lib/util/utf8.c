/* utf8.c - see utf8.h. */
#include "utf8.h"

#include <string.h>

size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp) {
  unsigned c = s[0];
  size_t len;
  uint32_t v, min;
  if (c >= 0xc2 && c <= 0xdf) len = 2, v = c & 0x1f, min = 0x80;
  else if (c >= 0xe0 && c <= 0xef) len = 3, v = c & 0x0f, min = 0x800;
  else if (c >= 0xf0 && c <= 0xf4) len = 4, v = c & 0x07, min = 0x10000;
  else return 0;
  if (n < len) return 0;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    v = (v << 6) | (s[i] & 0x3f);
  }
  if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
  *cp = v;
  return len;
}

size_t utf8_count_invalid(const unsigned char *s, size_t n) {
  size_t bad = 0, i = 0;
  uint32_t cp;
  while (i < n) {
    if (s[i] < 0x80) {
      i++;
      continue;
    }
    size_t k = utf8_decode(s + i, n - i, &cp);
    if (k) i += k;
    else bad++, i++;
  }
  return bad;
}

size_t utf8_sanitize(const unsigned char *s, size_t n, char *out) {
  size_t i = 0, o = 0;
  uint32_t cp;
  while (i < n) {
    if (s[i] < 0x80) {
      out[o++] = (char)s[i++];
      continue;
    }
    size_t k = utf8_decode(s + i, n - i, &cp);
    if (k) {
      memcpy(out + o, s + i, k);
      o += k;
      i += k;
    } else {
      memcpy(out + o, "\xef\xbf\xbd", 3);
      o += 3;
      i++;
    }
  }
  out[o] = 0;
  return o;
}
