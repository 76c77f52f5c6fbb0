/* textout.c - whole-or-nothing text output; see textout.h. */
#include "textout.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

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
  char small[1024], *buf = small;
  va_list ap, again;
  va_start(ap, fmt);
  va_copy(again, ap);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n >= (int)sizeof small && (buf = malloc((size_t)n + 1)) != NULL) vsnprintf(buf, (size_t)n + 1, fmt, again);
  va_end(again);
  if (!buf) {
    /* the document would be incomplete: fail it rather than cut it */
    w->failed = 1;
    chakra_error_set(&w->err, CHAKRA_ENOMEM, "out of memory");
    return;
  }
  if (n > 0) jsonw_raw(w, buf, (size_t)n);
  if (buf != small) free(buf);
}
