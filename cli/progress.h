/* progress.h - the progress line of long commands: on standard error, only
 * when it is a terminal and -q was not given, a percentage and an estimate
 * of the time left, redrawn in place at most ten times a second and
 * cleared when the work ends or a message is printed. The library reports
 * progress through chakra_progress_fn; this draws it. */
#ifndef CHAKRA_CLI_PROGRESS_H
#define CHAKRA_CLI_PROGRESS_H

#include <stdint.h>

#include "chakra/error.h"

typedef struct cli_progress {
  int on;              /* drawing: stderr is a terminal and not quiet */
  const char *unit;    /* what done and total count: "ranks", "nodes", ... */
  double start, last;  /* monotonic seconds: the start, the last drawing */
  uint64_t sim_ns;     /* sim: the simulated time of the last "run" report */
  const char *phase;   /* the phase drawn: the estimate restarts with each */
} cli_progress;

/* Starts the clock; draws nothing when quiet or stderr is no terminal. */
void cli_progress_init(cli_progress *p, int quiet, const char *unit);
/* cli_progress_init(), then the callback to hand the library (NULL when
 * nothing is drawn) with *ctx set to p. */
chakra_progress_fn cli_progress_start(cli_progress *p, int quiet, const char *unit, void **ctx);
/* A chakra_progress_fn (ctx is a cli_progress): "chakra CMD: 45% (461 of
 * 1024 ranks), about 2 s left". The simulator's "run" phase (simulated
 * time, no total) is remembered and shown with its "nodes" phase. Never
 * asks to stop. Calls must not overlap. */
int cli_progress_report(void *ctx, const char *phase, uint64_t done, uint64_t total);
/* Clears the line, if one is drawn: at the end of the work. */
void cli_progress_end(cli_progress *p);
/* Clears the line before a message is printed (cli/common.c). */
void cli_progress_clear(void);

#endif
