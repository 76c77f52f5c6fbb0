/* textout.c - whole-or-nothing text output; see textout.h. */
#include "textout.h"

#include <stdarg.h>
#include <stdio.h>

static int start(textout *t, chakra_error *err) {
  if (jsonw_init(&t->w, t->f)) {
    outfile_discard(t->f);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  return 0;
}

int textout_open(textout *t, const char *path, chakra_error *err) {
  int rc = outfile_open(&t->f, path, outfile_name_is_gzip(path), err);
  return rc ? rc : start(t, err);
}

int textout_open_sink(textout *t, const chakra_sink *sink, chakra_error *err) {
  int rc = outfile_open_sink(&t->f, sink, err);
  return rc ? rc : start(t, err);
}

int textout_close(textout *t, int rc, chakra_error *err) {
  if (!rc && jsonw_flush(&t->w)) rc = chakra_error_set(err, t->w.err.code ? t->w.err.code : CHAKRA_EIO, "%s", t->w.err.msg);
  jsonw_free(&t->w);
  if (rc) {
    outfile_discard(t->f);
    return rc;
  }
  return outfile_commit(t->f, err);
}

void textout_printf(jsonw *w, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n > 0) jsonw_raw(w, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

void textout_xml(jsonw *w, const char *s) {
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    switch (c) {
      case '&': jsonw_lit(w, "&amp;"); break;
      case '<': jsonw_lit(w, "&lt;"); break;
      case '>': jsonw_lit(w, "&gt;"); break;
      case '"': jsonw_lit(w, "&quot;"); break;
      case '\t': case '\n': case '\r': jsonw_char(w, (char)c); break;
      default:
        if (c < 0x20 || c == 0x7f) jsonw_lit(w, "\xef\xbf\xbd");
        else jsonw_char(w, (char)c);
    }
  }
}
