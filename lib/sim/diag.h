/* diag.h - how every simulator module reports (private): the first
 * run-time error (which also stops the event loop) and warnings, handed to
 * the caller's chakra_diag_fn. Each module includes this (through core.h);
 * nothing reports by calling up into the module that started the run. */
#ifndef CHAKRA_SIM_DIAG_H
#define CHAKRA_SIM_DIAG_H

#include <stddef.h>

#include "chakra/error.h"

typedef struct sim_diag {
  chakra_diag_fn fn;       /* warnings; NULL = dropped */
  void *ctx;
  chakra_error *err;       /* the first error; never NULL while a run is set up */
  int failed;              /* an error was recorded */
  int *stop;               /* set to 1 on error: stops the event loop (eventq.oom) */
} sim_diag;

/* Records a run-time error (the first one wins) and stops the loop. */
void sim_diag_fail(sim_diag *d, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A warning, one line; file is the input concerned or NULL. */
void sim_diag_warn(const sim_diag *d, const char *file, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* One line to fn as a warning; fn NULL drops it. */
void sim_warn_line(chakra_diag_fn fn, void *ctx, const char *line);

/* Lines kept to be passed on later, in order: the warnings of a run that
 * may be redone, a loader's warnings reported in rank order, METADATA
 * group lists. A zeroed sim_lines is empty. */
typedef struct sim_lines {
  char **v;
  size_t n;
} sim_lines;

/* Keeps a copy of line: 0, or -1 when out of memory (nothing kept). */
int sim_lines_add(sim_lines *l, const char *line);
/* Passes every line to fn as a warning (sim_warn_line). */
void sim_lines_pass(const sim_lines *l, chakra_diag_fn fn, void *ctx);
/* Frees the lines; l is empty again. */
void sim_lines_free(sim_lines *l);

#endif
