/* jsonw.h - fast JSON text output (private to libchakra).
 *
 * yajl's generator costs about 3 us per trace node (one callback and one
 * escape pass per token), more than twice the whole jsonize budget, so
 * output JSON is produced here: a buffer, a table-driven string escaper that
 * validates UTF-8 (invalid sequences become U+FFFD and are counted), and
 * integer formatting without printf. Parsing JSON stays with yajl. */
#ifndef CHAKRA_JSONW_H
#define CHAKRA_JSONW_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "chakra/error.h"
#include "outfile.h"
#include "strbuf.h"

typedef struct jsonw {
  outfile *out;
  strbuf b;             /* a window of JSONW_BUF bytes, handed out when full */
  int ascii_only;       /* escape everything outside printable ASCII (\uXXXX) */
  uint64_t bad_utf8;    /* invalid sequences replaced since creation */
  int failed;
  chakra_error err;
} jsonw;

int jsonw_init(jsonw *w, outfile *out);
void jsonw_free(jsonw *w);
/* Hands buffered bytes to the outfile; returns 0 or the error code. */
int jsonw_flush(jsonw *w);

/* The buffer is large (JSONW_BUF) and handed to the outfile whole, so the
 * outfile writes it without another copy. Reservations are at most half
 * of it. */
#define JSONW_BUF (1u << 20)

/* Returns a pointer to n free bytes (n <= JSONW_BUF / 2) at the end of the
 * buffer; advance w->b.n by what was written. */
static inline char *jsonw_room(jsonw *w, size_t n) {
  if (w->b.cap - w->b.n < n) jsonw_flush(w);
  return w->b.s + w->b.n;
}

static inline void jsonw_char(jsonw *w, char c) {
  *jsonw_room(w, 1) = c;
  w->b.n++;
}

void jsonw_raw(jsonw *w, const char *s, size_t n);
void jsonw_lit(jsonw *w, const char *s); /* NUL-terminated raw text */
void jsonw_u64(jsonw *w, uint64_t v);
void jsonw_i64(jsonw *w, int64_t v);
void jsonw_u64_quoted(jsonw *w, uint64_t v);
void jsonw_i64_quoted(jsonw *w, int64_t v);
/* A quoted, escaped string from n bytes of (supposedly) UTF-8. */
void jsonw_string(jsonw *w, const char *s, size_t n);
/* The project's one JSON string escaper, for text built outside a jsonw
 * (JSON values in memory, the ingest tools' buffers): n bytes of s as a
 * quoted JSON string at out, which has room for JSONW_ESCAPED_MAX(n)
 * bytes; returns the length (no NUL written). Quote, backslash and control
 * characters are escaped (\n \r \t \b \f, the others \u00XX), invalid
 * UTF-8 becomes U+FFFD (counted in *bad_utf8 when not NULL), and with
 * ascii_only everything outside printable ASCII is \uXXXX. */
#define JSONW_ESCAPED_MAX(n) (6 * (size_t)(n) + 2)
size_t jsonw_escape(char *out, const char *s, size_t n, int ascii_only, uint64_t *bad_utf8);
/* Shortest text that reads back to the same value; NaN/Infinity quoted. */
void jsonw_double(jsonw *w, double v);
void jsonw_float(jsonw *w, float v);
/* The ingest outputs' number (chakra link's linked trace, convert's
 * logs): an integral value below 2^53 in magnitude as an integer ("3",
 * "-0" as "0"), another finite one as the fewest %g digits that read back,
 * a non-finite one as null. format writes it into out (at least 40 bytes)
 * and returns the length. */
size_t jsonw_format_number(char *out, double v);
void jsonw_number(jsonw *w, double v);
/* Python-repr-style float text (used by the reference-compatible layout). */
void jsonw_double_py(jsonw *w, double v, int is_float32);
/* Python's repr() of a finite double into out (at least 32 bytes): the
 * shortest digits that read back, positional from 1e-4 to 1e16 ("3.0",
 * "0.0001"), scientific outside ("1e-05", "1e+16"). Returns the length. */
size_t jsonw_format_pyfloat(char *out, double v);
void jsonw_base64(jsonw *w, const uint8_t *data, size_t n);

/* The eight decimal digits of x < 10^8 as byte values, most significant
 * digit in the lowest byte (SWAR: halves, then pairs, then digits). */
static inline uint64_t jsonw_digits8(uint32_t x) {
  uint64_t merged = (uint64_t)(x / 10000) | (uint64_t)(x % 10000) << 32;
  uint64_t hundreds = ((merged * 10486) >> 20) & 0x0000007F0000007Full;
  uint64_t pairs = hundreds | (merged - hundreds * 100) << 16;
  uint64_t tens = ((pairs * 103) >> 10) & 0x000F000F000F000Full;
  return tens | (pairs - tens * 10) << 8;
}

#define JSONW_ASCII_ZEROS 0x3030303030303030ull

extern const uint64_t jsonw_pow10[20];

/* Number of decimal digits of v (1 for 0). Depends on v alone, so the
 * position of what follows is known before the digits are. */
static inline unsigned jsonw_ndigits(uint64_t v) {
  unsigned t = ((64u - (unsigned)__builtin_clzll(v | 1)) * 1233u) >> 12;
  return t + ((v | 1) >= jsonw_pow10[t]);
}

/* The last n (1..8) digits of x < 10^8; stores 8 bytes at out. */
static inline void jsonw_put_digits8(char *out, uint32_t x, unsigned n) {
  uint64_t a = (jsonw_digits8(x) + JSONW_ASCII_ZEROS) >> (8 * (8 - n));
  memcpy(out, &a, 8);
}

/* Formats v in decimal at out; returns the length. May store up to 20
 * bytes at out (beyond the digits when there are fewer than 8). */
static inline size_t jsonw_put_u64(char *out, uint64_t v) {
  unsigned n = jsonw_ndigits(v);
  if (n <= 8) {
    jsonw_put_digits8(out, (uint32_t)v, n);
  } else if (n <= 16) {
    jsonw_put_digits8(out, (uint32_t)(v / 100000000), n - 8);
    jsonw_put_digits8(out + n - 8, (uint32_t)(v % 100000000), 8);
  } else {
    uint64_t hi = v / 100000000;
    jsonw_put_digits8(out, (uint32_t)(hi / 100000000), n - 16);
    jsonw_put_digits8(out + n - 16, (uint32_t)(hi % 100000000), 8);
    jsonw_put_digits8(out + n - 8, (uint32_t)(v % 100000000), 8);
  }
  return n;
}

/* "key":value members of the run report writer (lib/report): key_u64 puts
 * a comma first when asked, key_double always (it never opens an object). */
static inline void jsonw_key_u64(jsonw *w, const char *k, uint64_t v, int comma) {
  if (comma) jsonw_char(w, ',');
  jsonw_char(w, '"');
  jsonw_lit(w, k);
  jsonw_lit(w, "\":");
  jsonw_u64(w, v);
}

static inline void jsonw_key_double(jsonw *w, const char *k, double v) {
  jsonw_lit(w, ",\"");
  jsonw_lit(w, k);
  jsonw_lit(w, "\":");
  jsonw_double(w, v);
}

#endif
