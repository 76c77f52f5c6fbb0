/* diag.c - see diag.h. */
#include "diag.h"

#include <stdarg.h>
#include <stdio.h>

#include "../util/diag.h"

void sim_diag_fail(sim_diag *d, int code, const char *fmt, ...) {
  if (d->failed) return;
  d->failed = 1;
  if (d->stop) *d->stop = 1;
  char msg[sizeof d->err->msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  chakra_error_set(d->err, code, "%s", msg);
}

void sim_diag_warn(const sim_diag *d, const char *file, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  chakra_diag_emitv(d->fn, d->ctx, chakra_diag_on(CHAKRA_SEV_WARNING, file), fmt, ap);
  va_end(ap);
}
