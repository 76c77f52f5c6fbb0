/* diag.c - see diag.h. */
#include "diag.h"

#include <stdio.h>

void chakra_diag_emitv(chakra_diag_fn fn, void *ctx, chakra_problem base, const char *fmt, va_list ap) {
  if (!fn) return;
  char text[CHAKRA_DIAG_TEXT];
  vsnprintf(text, sizeof text, fmt, ap);
  base.what = text;
  fn(ctx, &base);
}

void chakra_diag_emitf(chakra_diag_fn fn, void *ctx, chakra_problem base, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  chakra_diag_emitv(fn, ctx, base, fmt, ap);
  va_end(ap);
}

chakra_problem chakra_diag_on(chakra_severity sev, const char *file) {
  chakra_problem p = chakra_problem_make(sev, NULL);
  p.file = file;
  return p;
}

int chakra_diag_failv(chakra_error *err, int code, const char *where, const char *fmt, va_list ap) {
  char text[CHAKRA_DIAG_TEXT];
  vsnprintf(text, sizeof text, fmt, ap);
  return chakra_error_set(err, code, "%s: %s", where, text);
}
