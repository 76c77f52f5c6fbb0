/* fuzz_simmem.c - libFuzzer target for the simulator's remote-memory
 * configuration (JSON): chakra_sim_config_load() with the input as the
 * remote-memory file, then short runs of a workload with remote memory
 * loads (fuzz_sim.h). Whatever loads must run or fail cleanly. */
#include "fuzz_sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[64];
  int fd = fuzz_input_file(data, size, path, sizeof path);
  fuzz_sim_config(NULL, NULL, path);
  close(fd);
  return 0;
}
