/* jsonw.c - JSON text output; see jsonw.h. */
#include "jsonw.h"

#include "utf8.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define JW_BUF JSONW_BUF

int jsonw_init(jsonw *w, outfile *out) {
  memset(w, 0, sizeof *w);
  w->out = out;
  return strbuf_room(&w->b, JW_BUF) ? 0 : CHAKRA_ENOMEM;
}

void jsonw_free(jsonw *w) { strbuf_free(&w->b); }

int jsonw_flush(jsonw *w) {
  if (!w->failed && w->b.n && outfile_write(w->out, w->b.s, w->b.n, &w->err)) w->failed = 1;
  w->b.n = 0;
  return w->failed ? (w->err.code ? w->err.code : CHAKRA_EIO) : 0;
}

#define room jsonw_room

void jsonw_raw(jsonw *w, const char *s, size_t n) {
  while (n > 0) {
    size_t k = n < JW_BUF / 2 ? n : JW_BUF / 2;
    memcpy(room(w, k), s, k);
    w->b.n += k;
    s += k;
    n -= k;
  }
}

void jsonw_lit(jsonw *w, const char *s) { jsonw_raw(w, s, strlen(s)); }

const uint64_t jsonw_pow10[20] = {1ull,
                                   10ull,
                                   100ull,
                                   1000ull,
                                   10000ull,
                                   100000ull,
                                   1000000ull,
                                   10000000ull,
                                   100000000ull,
                                   1000000000ull,
                                   10000000000ull,
                                   100000000000ull,
                                   1000000000000ull,
                                   10000000000000ull,
                                   100000000000000ull,
                                   1000000000000000ull,
                                   10000000000000000ull,
                                   100000000000000000ull,
                                   1000000000000000000ull,
                                   10000000000000000000ull};

void jsonw_u64(jsonw *w, uint64_t v) {
  char *p = room(w, 24);
  w->b.n += jsonw_put_u64(p, v);
}

void jsonw_i64(jsonw *w, int64_t v) {
  char *p = room(w, 24);
  if (v < 0) {
    *p++ = '-';
    w->b.n++;
    w->b.n += jsonw_put_u64(p, (uint64_t)0 - (uint64_t)v);
  } else {
    w->b.n += jsonw_put_u64(p, (uint64_t)v);
  }
}

void jsonw_u64_quoted(jsonw *w, uint64_t v) {
  char *p = room(w, 24);
  p[0] = '"';
  size_t n = jsonw_put_u64(p + 1, v);
  p[n + 1] = '"';
  w->b.n += n + 2;
}

void jsonw_i64_quoted(jsonw *w, int64_t v) {
  char *p = room(w, 24);
  size_t k = 0;
  p[k++] = '"';
  if (v < 0) p[k++] = '-';
  k += jsonw_put_u64(p + k, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);
  p[k++] = '"';
  w->b.n += k;
}

/* 0 = copy as is; 1 = needs an escape; 2 = start of a multi-byte sequence. */
static const unsigned char esc_class[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
};

static size_t put_u_escape(char *o, unsigned v) {
  static const char hex[] = "0123456789abcdef";
  o[0] = '\\', o[1] = 'u', o[2] = hex[(v >> 12) & 15], o[3] = hex[(v >> 8) & 15];
  o[4] = hex[(v >> 4) & 15], o[5] = hex[v & 15];
  return 6;
}

static size_t put_escape(char *o, unsigned char c) {
  char e = 0;
  switch (c) {
    case '"': e = '"'; break;
    case '\\': e = '\\'; break;
    case '\n': e = 'n'; break;
    case '\r': e = 'r'; break;
    case '\t': e = 't'; break;
    case '\b': e = 'b'; break;
    case '\f': e = 'f'; break;
  }
  if (!e) return put_u_escape(o, c);
  o[0] = '\\', o[1] = e;
  return 2;
}

static size_t put_codepoint(char *o, const unsigned char *s, size_t len, uint32_t cp, int ascii) {
  if (!ascii) {
    memcpy(o, s, len);
    return len;
  }
  if (cp < 0x10000) return put_u_escape(o, cp);
  cp -= 0x10000;
  put_u_escape(o, 0xd800 + (cp >> 10));
  return 6 + put_u_escape(o + 6, 0xdc00 + (cp & 0x3ff));
}

/* The byte at s[i] that the fast loop stopped at (an escape or the start
 * of a multi-byte sequence), written at o (at most 12 bytes, never more
 * than 6 per byte taken); returns the length, the bytes taken in *took. */
static size_t string_special(char *o, const unsigned char *s, size_t i, size_t n, int ascii, uint64_t *bad,
                             size_t *took) {
  *took = 1;
  if (esc_class[s[i]] == 1 || s[i] == 0x7f) return put_escape(o, s[i]);
  uint32_t cp;
  size_t len = utf8_decode(s + i, n - i, &cp);
  if (len) {
    *took = len;
    return put_codepoint(o, s + i, len, cp, ascii);
  }
  if (bad) ++*bad;
  return put_codepoint(o, (const unsigned char *)"\xef\xbf\xbd", 3, 0xfffd, ascii);
}

#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/* Bit 7 of byte k is set if byte k of x needs attention (below 0x20, '"',
 * '\\', 0x80 and above, 0x7f when escaping to ASCII). Borrows can set bits
 * above a byte that truly needs attention, never below it, so the lowest
 * set bit is exact - all the caller uses. */
static inline uint64_t special_bytes(uint64_t x, int ascii_only) {
  uint64_t q = x ^ (ONES * '"'), b = x ^ (ONES * '\\');
  uint64_t m = ((x - ONES * 0x20) & ~x) | ((q - ONES) & ~q) | ((b - ONES) & ~b) | x;
  if (ascii_only) {
    uint64_t d = x ^ (ONES * 0x7f);
    m |= (d - ONES) & ~d;
  }
  return m & HIGHS;
}

/* Copies eight (sixteen) bytes at a time, checking them on the way, and
 * stops at the first byte that needs an escape or UTF-8 validation. The
 * wide stores may run past the text written so far, never past
 * JSONW_ESCAPED_MAX(n). */
size_t jsonw_escape(char *out, const char *str, size_t n, int ascii, uint64_t *bad_utf8) {
  const unsigned char *s = (const unsigned char *)str;
  char *o = out;
  *o++ = '"';
  size_t i = 0;
  for (;;) {
#if defined(__SSE2__)
    /* Sixteen at a time: a signed compare with 0x20 catches both the
     * control characters and every byte from 0x80. */
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
    const __m128i space = _mm_set1_epi8(0x20), del = _mm_set1_epi8(0x7f);
    while (i + 16 <= n) {
      __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
      _mm_storeu_si128((__m128i *)(void *)o, x);
      __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, bslash)),
                               _mm_cmplt_epi8(x, space));
      if (ascii) m = _mm_or_si128(m, _mm_cmpeq_epi8(x, del));
      unsigned bits = (unsigned)_mm_movemask_epi8(m);
      if (bits) {
        size_t k = (size_t)__builtin_ctz(bits);
        o += k;
        i += k;
        goto special;
      }
      o += 16;
      i += 16;
    }
#endif
    while (i + 8 <= n) {
      uint64_t x, m;
      memcpy(&x, s + i, 8);
      memcpy(o, &x, 8);
      if ((m = special_bytes(x, ascii)) != 0) {
        size_t k = (size_t)__builtin_ctzll(m) >> 3;
        o += k;
        i += k;
        goto special;
      }
      o += 8;
      i += 8;
    }
    while (i < n) {
      unsigned char c = s[i];
      if (esc_class[c] || (ascii && c == 0x7f)) goto special;
      *o++ = (char)c;
      i++;
    }
    break;
  special: {
    size_t took;
    o += string_special(o, s, i, n, ascii, bad_utf8, &took);
    i += took;
  }
  }
  *o++ = '"';
  return (size_t)(o - out);
}

static void string_slow(jsonw *w, const char *str, size_t n);

void jsonw_string(jsonw *w, const char *str, size_t n) {
  if (n > (JW_BUF / 2 - 2) / 6) {
    string_slow(w, str, n);
    return;
  }
  char *o = room(w, JSONW_ESCAPED_MAX(n));
  w->b.n += jsonw_escape(o, str, n, w->ascii_only, &w->bad_utf8);
}

/* A string longer than half the buffer can hold escaped: plain runs are
 * copied through jsonw_raw, the rest escaped one by one. */
static void string_slow(jsonw *w, const char *str, size_t n) {
  const unsigned char *s = (const unsigned char *)str;
  jsonw_char(w, '"');
  size_t i = 0;
  while (i < n) {
    size_t run = i;
    while (run < n && esc_class[s[run]] == 0 && !(w->ascii_only && s[run] == 0x7f)) run++;
    if (run > i) jsonw_raw(w, (const char *)s + i, run - i);
    i = run;
    if (i < n) {
      size_t took;
      w->b.n += string_special(room(w, 12), s, i, n, w->ascii_only, &w->bad_utf8, &took);
      i += took;
    }
  }
  jsonw_char(w, '"');
}

/* Fewest significant digits that read back exactly. */
static int shortest(char *out, size_t cap, double v, int is_float32) {
  for (int prec = is_float32 ? 6 : 15; prec <= 17; prec++) {
    int n = snprintf(out, cap, "%.*g", prec, v);
    if (is_float32 ? (float)strtod(out, NULL) == (float)v : strtod(out, NULL) == v) return n;
  }
  return snprintf(out, cap, "%.17g", v);
}

static int special(jsonw *w, double v) {
  if (isnan(v)) jsonw_lit(w, "\"NaN\"");
  else if (isinf(v)) jsonw_lit(w, v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
  else return 0;
  return 1;
}

void jsonw_double(jsonw *w, double v) {
  if (special(w, v)) return;
  char tmp[40];
  jsonw_raw(w, tmp, (size_t)shortest(tmp, sizeof tmp, v, 0));
}

size_t jsonw_format_number(char *out, double v) {
  if (!isfinite(v)) return (size_t)snprintf(out, 40, "null");
  if (v == floor(v) && fabs(v) < 9.007199254740992e15) {
    int64_t i = (int64_t)v;
    size_t k = 0;
    if (i < 0) out[k++] = '-';
    char digits[24]; /* jsonw_put_u64 may store up to 20 bytes */
    size_t n = jsonw_put_u64(digits, i < 0 ? (uint64_t)0 - (uint64_t)i : (uint64_t)i);
    memcpy(out + k, digits, n);
    return k + n;
  }
  int n = 0;
  for (int p = 1; p <= 17; p++) {
    n = snprintf(out, 40, "%.*g", p, v);
    if (strtod(out, NULL) == v) break;
  }
  return (size_t)n;
}

void jsonw_number(jsonw *w, double v) {
  char tmp[40];
  jsonw_raw(w, tmp, jsonw_format_number(tmp, v));
}

void jsonw_float(jsonw *w, float v) {
  if (special(w, v)) return;
  char tmp[40];
  jsonw_raw(w, tmp, (size_t)shortest(tmp, sizeof tmp, v, 1));
}

/* Shortest "%.*e" text of v that reads back exactly: digits (no point) in
 * dig, decimal exponent in *exp; returns the digit count. */
static int shortest_digits(double v, char *dig, int *exp) {
  char t[40];
  for (int p = 0; p < 17; p++) {
    snprintf(t, sizeof t, "%.*e", p, v);
    if (strtod(t, NULL) == v) break;
  }
  int k = 0;
  const char *s = t;
  if (*s == '-') s++;
  for (; *s && *s != 'e'; s++)
    if (*s != '.') dig[k++] = *s;
  dig[k] = 0;
  *exp = atoi(s + 1);
  while (k > 1 && dig[k - 1] == '0') dig[--k] = 0;
  return k;
}

size_t jsonw_format_pyfloat(char *out, double v) {
  char *o = out;
  if (signbit(v)) *o++ = '-', v = -v;
  if (v == 0) return (size_t)(o - out) + (size_t)sprintf(o, "0.0");
  char dig[24];
  int e, k = shortest_digits(v, dig, &e);
  if (e < -4 || e >= 16) {
    *o++ = dig[0];
    if (k > 1) *o++ = '.', memcpy(o, dig + 1, (size_t)k - 1), o += k - 1;
    o += sprintf(o, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
  } else if (e < 0) {
    *o++ = '0', *o++ = '.';
    for (int i = 0; i < -e - 1; i++) *o++ = '0';
    memcpy(o, dig, (size_t)k), o += k;
  } else { /* e + 1 digits before the point */
    for (int i = 0; i <= e; i++) *o++ = i < k ? dig[i] : '0';
    *o++ = '.';
    if (k > e + 1) memcpy(o, dig + e + 1, (size_t)(k - e - 1)), o += k - e - 1;
    else *o++ = '0';
  }
  *o = 0;
  return (size_t)(o - out);
}

/* As Python's json_format: a float field is first rounded to the fewest
 * digits, from 6, that give the same float back; the double that text
 * reads as is then printed with repr(). */
void jsonw_double_py(jsonw *w, double v, int is_float32) {
  if (special(w, v)) return;
  char out[40];
  if (is_float32) {
    for (int prec = 6; prec <= 9; prec++) {
      snprintf(out, sizeof out, "%.*g", prec, v);
      if ((float)strtod(out, NULL) == (float)v) break;
    }
    v = strtod(out, NULL);
  }
  jsonw_raw(w, out, jsonw_format_pyfloat(out, v));
}

void jsonw_base64(jsonw *w, const uint8_t *d, size_t n) {
  static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  jsonw_char(w, '"');
  size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    char *p = room(w, 4);
    uint32_t v = (uint32_t)d[i] << 16 | (uint32_t)d[i + 1] << 8 | d[i + 2];
    p[0] = tab[v >> 18], p[1] = tab[(v >> 12) & 63], p[2] = tab[(v >> 6) & 63], p[3] = tab[v & 63];
    w->b.n += 4;
  }
  if (i < n) {
    char *p = room(w, 4);
    uint32_t v = (uint32_t)d[i] << 16 | (i + 1 < n ? (uint32_t)d[i + 1] << 8 : 0);
    p[0] = tab[v >> 18], p[1] = tab[(v >> 12) & 63];
    p[2] = i + 1 < n ? tab[(v >> 6) & 63] : '=';
    p[3] = '=';
    w->b.n += 4;
  }
  jsonw_char(w, '"');
}
