/* xmltext.c - see xmltext.h. */
#include "xmltext.h"

#include "utf8.h"

#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */

/* The entity for an ASCII byte XML treats specially, else NULL. */
static const char *ascii_entity(unsigned char c) {
  switch (c) {
    case '&': return "&amp;";
    case '<': return "&lt;";
    case '>': return "&gt;";
    case '"': return "&quot;";
    case '\'': return "&apos;";
    case '\t': return "&#9;";
    case '\n': return "&#10;";
    case '\r': return "&#13;";
    default: return c < 0x20 ? REPLACEMENT : NULL;
  }
}

void xmltext_put(jsonw *w, const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  size_t n = strlen(s), i = 0;
  while (i < n) {
    if (p[i] < 0x80) {
      const char *e = ascii_entity(p[i]);
      if (e) jsonw_lit(w, e);
      else jsonw_char(w, (char)p[i]);
      i++;
      continue;
    }
    uint32_t cp;
    size_t k = utf8_decode(p + i, n - i, &cp);
    if (k && cp != 0xfffe && cp != 0xffff) jsonw_raw(w, (const char *)p + i, k);
    else jsonw_lit(w, REPLACEMENT);
    i += k ? k : 1;
  }
}
