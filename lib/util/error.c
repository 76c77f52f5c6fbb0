/* error.c - filling chakra_error values (see include/chakra/error.h). */
#include "chakra/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int chakra_error_set(chakra_error *err, int code, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->code = code;
  }
  return code;
}

void chakra_error_prefix(chakra_error *err, const char *fmt, ...) {
  if (!err) return;
  char prefix[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  /* Build in a buffer big enough for both, then truncate into place. */
  char joined[sizeof prefix + sizeof err->msg];
  snprintf(joined, sizeof joined, "%s%s", prefix, err->msg);
  size_t n = strlen(joined);
  if (n >= sizeof err->msg) n = sizeof err->msg - 1;
  memcpy(err->msg, joined, n);
  err->msg[n] = 0;
}
