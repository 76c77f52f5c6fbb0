/* diag.c - see diag.h. */
#include "diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/diag.h"
#include "../util/vec.h"

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

void sim_warn_line(chakra_diag_fn fn, void *ctx, const char *line) {
  if (!fn) return;
  chakra_problem p = chakra_problem_make(CHAKRA_SEV_WARNING, line);
  fn(ctx, &p);
}

int sim_lines_add(sim_lines *l, const char *line) {
  char *copy = strdup(line), **at = copy ? VEC_APPEND(l->v, l->n) : NULL;
  if (!at) {
    free(copy);
    return -1;
  }
  *at = copy;
  return 0;
}

void sim_lines_pass(const sim_lines *l, chakra_diag_fn fn, void *ctx) {
  for (size_t i = 0; i < l->n; i++) sim_warn_line(fn, ctx, l->v[i]);
}

void sim_lines_free(sim_lines *l) {
  for (size_t i = 0; i < l->n; i++) free(l->v[i]);
  free(l->v);
  *l = (sim_lines){0};
}
