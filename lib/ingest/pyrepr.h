/* pyrepr.h - JSON scalars as Python's str()/repr() prints them, and as
 * compact JSON text (private to the ingest modules).
 *
 * The reference PyTorch converter stores inputs/outputs as Python's str() of
 * the JSON lists; byte-compatible output needs the same text for strings
 * (quote choice, escapes), integers and floats (shortest round-trip repr).
 * The linker re-emits values as JSON, for which the second set is used. */
#ifndef CHAKRA_INGEST_PYREPR_H
#define CHAKRA_INGEST_PYREPR_H

#include <stddef.h>

#include "../util/strbuf.h"

/* repr() of the UTF-8 string s: 'abc', "it's", '\n', '\x85', ... */
void pyrepr_str(strbuf *b, const unsigned char *s, size_t n);
/* A JSON number's text as Python prints the value json.loads() makes of it:
 * integers as written ("-0" becomes "0"), floats by repr() ("1e-05"). */
void pyrepr_number(strbuf *b, const char *txt, size_t n);
/* repr() of a double. */
void pyrepr_double(strbuf *b, double v);

/* s as a JSON string literal: util/jsonw's escaper (UTF-8 kept, invalid
 * sequences as U+FFFD). */
void json_str(strbuf *b, const unsigned char *s, size_t n);
/* Shortest JSON number text that reads back as v (integers without ".0");
 * non-finite values as null. */
void json_double(strbuf *b, double v);

/* 1 if the number text is an integer (no fraction, no exponent). */
static inline int json_number_is_int(const char *txt, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (txt[i] == '.' || txt[i] == 'e' || txt[i] == 'E') return 0;
  return 1;
}

#endif
