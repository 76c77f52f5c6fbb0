/* run.h - one workload of a suite folder validated and simulated (private
 * to lib/suite): what a run and a check's re-simulation share. */
#ifndef CHAKRA_SUITE_RUN_H
#define CHAKRA_SUITE_RUN_H

#include "chakra/suite.h"

/* Validates and simulates workload w (files dir/w->name) on the system
 * under test s, after expanding its collectives by the
 * rules into scratch when there are any; fills m (m->ok, or m->error). */
void run_workload(const chakra_suite_version *v, const chakra_suite_workload *w, const char *dir,
                  const chakra_suite_sut *s, const chakra_suite_run_options *o, chakra_suite_metrics *m);

#endif
