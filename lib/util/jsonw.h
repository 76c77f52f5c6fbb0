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

#include "chakra/error.h"
#include "outfile.h"

typedef struct jsonw {
  outfile *out;
  char *buf;
  size_t used, cap;
  int ascii_only;       /* escape everything outside printable ASCII (\uXXXX) */
  uint64_t bad_utf8;    /* invalid sequences replaced since creation */
  int failed;
  chakra_error err;
} jsonw;

int jsonw_init(jsonw *w, outfile *out);
void jsonw_free(jsonw *w);
/* Hands buffered bytes to the outfile; returns 0 or the error code. */
int jsonw_flush(jsonw *w);

void jsonw_raw(jsonw *w, const char *s, size_t n);
void jsonw_lit(jsonw *w, const char *s); /* NUL-terminated raw text */
void jsonw_char(jsonw *w, char c);
void jsonw_u64(jsonw *w, uint64_t v);
void jsonw_i64(jsonw *w, int64_t v);
void jsonw_u64_quoted(jsonw *w, uint64_t v);
void jsonw_i64_quoted(jsonw *w, int64_t v);
/* A quoted, escaped string from n bytes of (supposedly) UTF-8. */
void jsonw_string(jsonw *w, const char *s, size_t n);
/* Shortest text that reads back to the same value; NaN/Infinity quoted. */
void jsonw_double(jsonw *w, double v);
void jsonw_float(jsonw *w, float v);
/* Python-repr-style float text (used by the reference-compatible layout). */
void jsonw_double_py(jsonw *w, double v, int is_float32);
void jsonw_base64(jsonw *w, const uint8_t *data, size_t n);

/* Formats v in decimal into out (at least 20 bytes); returns the length. */
size_t jsonw_format_u64(uint64_t v, char *out);

#endif
