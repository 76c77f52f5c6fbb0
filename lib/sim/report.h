/* report.h - what a finished simulation writes besides stdout (private):
 * the Chrome trace-event timeline. The JSON report is public
 * (chakra_sim_write_report in include/chakra/sim.h). */
#ifndef CHAKRA_SIM_REPORT_H
#define CHAKRA_SIM_REPORT_H

#include "core.h"

/* One process per rank, one track per hardware slot, node name and id in
 * args; times in microseconds as the format defines. Names are read back
 * from the traces (the simulator does not keep them). */
int report_timeline(sim *s, const char *trace_prefix, const char *path);

#endif
