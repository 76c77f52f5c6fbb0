/* simconfig.h - what a chakra_sim_config holds (private): the parsed
 * settings the run copies from (simconfig.c builds it). */
#ifndef CHAKRA_SIM_SIMCONFIG_H
#define CHAKRA_SIM_SIMCONFIG_H

#include "chakra/sim.h"
#include "config.h"

struct chakra_sim_config {
  chakra_topo *topo;
  sim_sys_config sys;
  sim_mem_config mem;
  sim_groups groups;           /* from the comm-group file or added in code */
  chakra_sim_params params;
  char *system_file;           /* names the system settings in messages; NULL = built in code */
};

#endif
