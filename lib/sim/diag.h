/* diag.h - how every simulator module reports (private): the first
 * run-time error (which also stops the event loop) and warnings, handed to
 * the caller's chakra_diag_fn. Each module includes this (through core.h);
 * nothing reports by calling up into the module that started the run. */
#ifndef CHAKRA_SIM_DIAG_H
#define CHAKRA_SIM_DIAG_H

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

#endif
