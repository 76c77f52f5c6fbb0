/* report.h - what a finished simulation writes besides stdout (private):
 * the Chrome trace-event timeline and ASTRA-sim's log folder. The result
 * lines are public (include/chakra/sim.h), the run record and its report
 * too (include/chakra/run.h). */
#ifndef CHAKRA_SIM_REPORT_H
#define CHAKRA_SIM_REPORT_H

#include "chakra/sim.h"
#include "core.h"

/* One process per rank, one track per hardware slot, node name and id in
 * args; times in microseconds as the format defines (lib/report's layout,
 * which replay's timeline shares). Names are read back from the traces
 * (the simulator does not keep them). */
int report_timeline(sim *s, const char *path);

/* The link report: per link of the congestion-aware model its ends,
 * dimension, busy time, bytes, messages and utilisation (busy time over
 * the run's makespan, r's latest finish), as JSON (docs/sim.md). */
int report_links(sim *s, const chakra_run_record *r, const char *path);

/* ASTRA-sim's log folder: log.log and an empty err.log. Opened (the folder
 * created) before the run, so that an unusable folder fails before any
 * simulated time passes; written and put in place after it. */
typedef struct report_log report_log;
int report_log_open(report_log **out, const char *dir, chakra_error *err);
/* Writes log.log: the finished ranks' lines in stdout order, merged by
 * time with the recorded issue/callback events (names read back from the
 * traces), then "Exiting". Renames both files into place; frees lg. */
int report_log_commit(report_log *lg, sim *s, const chakra_run_record *r);
void report_log_discard(report_log *lg); /* NULL is fine */

#endif
