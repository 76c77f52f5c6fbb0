/* fuzz_simsys.c - libFuzzer target for the simulator's system
 * configuration (ASTRA-sim's system JSON): chakra_sim_config_load() with
 * the input as the system file, then short runs of a small workload on a
 * 2x2 network (fuzz_sim.h). Whatever loads must run or fail cleanly. */
#include "fuzz_sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[64];
  int fd = fuzz_input_file(data, size, path, sizeof path);
  fuzz_sim_config(path, NULL, NULL);
  close(fd);
  return 0;
}
