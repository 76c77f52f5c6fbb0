/* jsonw.c - JSON text output; see jsonw.h. */
#include "jsonw.h"

#include "utf8.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JW_BUF (256 * 1024)

int jsonw_init(jsonw *w, outfile *out) {
  memset(w, 0, sizeof *w);
  w->out = out;
  w->cap = JW_BUF;
  w->buf = malloc(w->cap);
  return w->buf ? 0 : CHAKRA_ENOMEM;
}

void jsonw_free(jsonw *w) {
  free(w->buf);
  w->buf = NULL;
}

int jsonw_flush(jsonw *w) {
  if (!w->failed && w->used && outfile_write(w->out, w->buf, w->used, &w->err)) w->failed = 1;
  w->used = 0;
  return w->failed ? (w->err.code ? w->err.code : CHAKRA_EIO) : 0;
}

/* Ensures n free bytes (n <= JW_BUF). */
static inline char *room(jsonw *w, size_t n) {
  if (w->cap - w->used < n) jsonw_flush(w);
  return w->buf + w->used;
}

void jsonw_raw(jsonw *w, const char *s, size_t n) {
  while (n > 0) {
    size_t k = n < JW_BUF / 2 ? n : JW_BUF / 2;
    memcpy(room(w, k), s, k);
    w->used += k;
    s += k;
    n -= k;
  }
}

void jsonw_lit(jsonw *w, const char *s) { jsonw_raw(w, s, strlen(s)); }

void jsonw_char(jsonw *w, char c) {
  *room(w, 1) = c;
  w->used++;
}

static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

size_t jsonw_format_u64(uint64_t v, char *out) {
  char tmp[24];
  char *p = tmp + sizeof tmp;
  while (v >= 100) {
    unsigned r = (unsigned)(v % 100);
    v /= 100;
    p -= 2;
    memcpy(p, digit_pairs + 2 * r, 2);
  }
  if (v >= 10) {
    p -= 2;
    memcpy(p, digit_pairs + 2 * v, 2);
  } else {
    *--p = (char)('0' + v);
  }
  size_t n = (size_t)(tmp + sizeof tmp - p);
  memcpy(out, p, n);
  return n;
}

void jsonw_u64(jsonw *w, uint64_t v) {
  char *p = room(w, 24);
  w->used += jsonw_format_u64(v, p);
}

void jsonw_i64(jsonw *w, int64_t v) {
  char *p = room(w, 24);
  if (v < 0) {
    *p++ = '-';
    w->used++;
    w->used += jsonw_format_u64((uint64_t)0 - (uint64_t)v, p);
  } else {
    w->used += jsonw_format_u64((uint64_t)v, p);
  }
}

void jsonw_u64_quoted(jsonw *w, uint64_t v) {
  char *p = room(w, 24);
  p[0] = '"';
  size_t n = jsonw_format_u64(v, p + 1);
  p[n + 1] = '"';
  w->used += n + 2;
}

void jsonw_i64_quoted(jsonw *w, int64_t v) {
  jsonw_char(w, '"');
  jsonw_i64(w, v);
  jsonw_char(w, '"');
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

static void put_u_escape(jsonw *w, unsigned v) {
  static const char hex[] = "0123456789abcdef";
  char *p = room(w, 6);
  p[0] = '\\', p[1] = 'u', p[2] = hex[(v >> 12) & 15], p[3] = hex[(v >> 8) & 15];
  p[4] = hex[(v >> 4) & 15], p[5] = hex[v & 15];
  w->used += 6;
}

static void put_escape(jsonw *w, unsigned char c) {
  const char *e = NULL;
  switch (c) {
    case '"': e = "\\\""; break;
    case '\\': e = "\\\\"; break;
    case '\n': e = "\\n"; break;
    case '\r': e = "\\r"; break;
    case '\t': e = "\\t"; break;
    case '\b': e = "\\b"; break;
    case '\f': e = "\\f"; break;
  }
  if (e) jsonw_raw(w, e, 2);
  else put_u_escape(w, c);
}

static void put_codepoint(jsonw *w, const unsigned char *s, size_t len, uint32_t cp) {
  if (!w->ascii_only) {
    jsonw_raw(w, (const char *)s, len);
  } else if (cp >= 0x10000) {
    cp -= 0x10000;
    put_u_escape(w, 0xd800 + (cp >> 10));
    put_u_escape(w, 0xdc00 + (cp & 0x3ff));
  } else {
    put_u_escape(w, cp);
  }
}

void jsonw_string(jsonw *w, const char *str, size_t n) {
  const unsigned char *s = (const unsigned char *)str;
  jsonw_char(w, '"');
  size_t i = 0;
  while (i < n) {
    size_t run = i;
    while (run < n && esc_class[s[run]] == 0 && !(w->ascii_only && s[run] == 0x7f)) run++;
    if (run > i) jsonw_raw(w, (const char *)s + i, run - i);
    i = run;
    if (i >= n) break;
    if (esc_class[s[i]] == 1 || s[i] == 0x7f) {
      put_escape(w, s[i++]);
      continue;
    }
    uint32_t cp;
    size_t len = utf8_decode(s + i, n - i, &cp);
    if (len) {
      put_codepoint(w, s + i, len, cp);
      i += len;
    } else {
      w->bad_utf8++;
      put_codepoint(w, (const unsigned char *)"\xef\xbf\xbd", 3, 0xfffd);
      i++;
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

void jsonw_float(jsonw *w, float v) {
  if (special(w, v)) return;
  char tmp[40];
  jsonw_raw(w, tmp, (size_t)shortest(tmp, sizeof tmp, v, 1));
}

/* Python's repr: scientific below 1e-4 or from 1e16, otherwise positional
 * with at least one decimal ("3.0"); exponents as e-05 / e+16. */
void jsonw_double_py(jsonw *w, double v, int is_float32) {
  if (special(w, v)) return;
  char digits[40], out[64];
  int n = shortest(digits, sizeof digits, v, is_float32);
  (void)n;
  double a = fabs(v);
  if (v != 0 && (a < 1e-4 || a >= 1e16)) {
    char *e = strchr(digits, 'e');
    if (!e) {
      int k = snprintf(digits, sizeof digits, "%.16e", v);
      (void)k;
      e = strchr(digits, 'e');
    }
    int exp = atoi(e + 1);
    *e = 0;
    snprintf(out, sizeof out, "%se%c%02d", digits, exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
  } else {
    /* Positional: print with enough decimals, then trim to the shortest. */
    int prec = 0;
    for (; prec < 20; prec++) {
      snprintf(out, sizeof out, "%.*f", prec, v);
      if (is_float32 ? (float)strtod(out, NULL) == (float)v : strtod(out, NULL) == v) break;
    }
    if (!strchr(out, '.')) strcat(out, ".0");
  }
  jsonw_lit(w, out);
}

void jsonw_base64(jsonw *w, const uint8_t *d, size_t n) {
  static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  jsonw_char(w, '"');
  size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    char *p = room(w, 4);
    uint32_t v = (uint32_t)d[i] << 16 | (uint32_t)d[i + 1] << 8 | d[i + 2];
    p[0] = tab[v >> 18], p[1] = tab[(v >> 12) & 63], p[2] = tab[(v >> 6) & 63], p[3] = tab[v & 63];
    w->used += 4;
  }
  if (i < n) {
    char *p = room(w, 4);
    uint32_t v = (uint32_t)d[i] << 16 | (i + 1 < n ? (uint32_t)d[i + 1] << 8 : 0);
    p[0] = tab[v >> 18], p[1] = tab[(v >> 12) & 63];
    p[2] = i + 1 < n ? tab[(v >> 6) & 63] : '=';
    p[3] = '=';
    w->used += 4;
  }
  jsonw_char(w, '"');
}
