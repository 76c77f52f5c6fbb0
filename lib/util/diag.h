/* diag.h - formatting what a module reports (private to libchakra): one
 * printf-style call that fills a chakra_problem's text and hands the
 * problem to the caller's chakra_diag_fn, and one that fills a
 * chakra_error as "WHERE: text". Every warning, finding and parse failure
 * a module formats goes through here, so the buffer sizes and the rules
 * (nothing when no callback was given) are the same everywhere. */
#ifndef CHAKRA_DIAG_H
#define CHAKRA_DIAG_H

#include <stdarg.h>

#include "chakra/error.h"

/* The longest problem text kept; longer texts are cut. */
#define CHAKRA_DIAG_TEXT 1024

/* Sends base, its text formatted from fmt, to fn (nothing when fn is
 * NULL). base gives the rest: severity, file, node, offset, line. */
void chakra_diag_emitf(chakra_diag_fn fn, void *ctx, chakra_problem base, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void chakra_diag_emitv(chakra_diag_fn fn, void *ctx, chakra_problem base, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));

/* A warning about file (may be NULL) with no other place. */
#define chakra_diag_warnf(fn, ctx, file, ...) \
  chakra_diag_emitf((fn), (ctx), chakra_diag_on(CHAKRA_SEV_WARNING, (file)), __VA_ARGS__)

/* A problem of severity sev about file (may be NULL), place unknown. */
chakra_problem chakra_diag_on(chakra_severity sev, const char *file);

/* Sets err to "where: " and the text formatted from fmt; returns code. */
int chakra_diag_failv(chakra_error *err, int code, const char *where, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));

#endif
