/* progress.c - the progress line of long commands; see progress.h. */
#include "progress.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "opts.h"

/* A line is on the screen: messages clear it first. One per process. */
static int drawn;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void cli_progress_init(cli_progress *p, int quiet, const char *unit) {
  memset(p, 0, sizeof *p);
  p->on = !quiet && isatty(2);
  p->unit = unit;
  p->start = now_s();
}

chakra_progress_fn cli_progress_start(cli_progress *p, int quiet, const char *unit, void **ctx) {
  cli_progress_init(p, quiet, unit);
  *ctx = p;
  return p->on ? cli_progress_report : NULL;
}

/* "about 40 s left", "about 3 min left": an estimate, said as one. */
static void format_left(char *buf, size_t size, double s) {
  if (s < 1) snprintf(buf, size, ", under 1 s left");
  else if (s < 90) snprintf(buf, size, ", about %.0f s left", s);
  else if (s < 5400) snprintf(buf, size, ", about %.0f min left", s / 60);
  else snprintf(buf, size, ", about %.1f h left", s / 3600);
}

int cli_progress_report(void *ctx, const char *phase, uint64_t done, uint64_t total) {
  cli_progress *p = ctx;
  if (!p->on) return 0;
  if (strcmp(phase, "run") == 0 && total == 0) { /* the simulator's time: shown with its nodes */
    p->sim_ns = done;
    return 0;
  }
  double t = now_s();
  if (!p->phase || strcmp(p->phase, phase) != 0) { /* a new phase, at its own pace */
    if (p->phase) p->start = t;
    p->phase = phase;
  }
  if (drawn && t - p->last < 0.1) return 0; /* at most ten drawings a second */
  /* files written, and ranks loaded, are counted as such whatever the
   * command counts in its own phases */
  const char *unit = strcmp(phase, "ranks") == 0 ? "ranks" : strcmp(phase, "load") == 0 ? "ranks loaded" : p->unit;
  p->last = t;
  char sim[64] = "", left[48] = "";
  if (p->sim_ns) snprintf(sim, sizeof sim, ", %.3f ms simulated", (double)p->sim_ns / 1e6);
  if (total == 0) {
    fprintf(stderr, "\rchakra %s: %llu %s%s\033[K", cli_command_name(), (unsigned long long)done, unit, sim);
  } else {
    double f = done >= total ? 1.0 : (double)done / (double)total;
    /* whole percents rounded down, exactly: 100 only when done */
    int pct = done >= total ? 100 : done <= UINT64_MAX / 100 ? (int)(done * 100 / total) : (int)(f * 100);
    /* the rate so far, once there is one worth extrapolating */
    if (f > 0 && f < 1 && t - p->start >= 0.5) format_left(left, sizeof left, (t - p->start) * (1 - f) / f);
    fprintf(stderr, "\rchakra %s: %d%% (%llu of %llu %s%s)%s\033[K", cli_command_name(), pct,
            (unsigned long long)done, (unsigned long long)total, unit, sim, left);
  }
  fflush(stderr);
  drawn = 1;
  return 0;
}

void cli_progress_clear(void) {
  if (!drawn) return;
  fputs("\r\033[K", stderr);
  fflush(stderr);
  drawn = 0;
}

void cli_progress_end(cli_progress *p) {
  (void)p;
  cli_progress_clear();
}
