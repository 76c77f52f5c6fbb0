/* fuzz_simnet.c - libFuzzer target for the network configuration
 * (ASTRA-sim's network YAML): chakra_topo_load(), the topology's queries
 * (coordinates, hops, routes) with their properties, then
 * chakra_sim_config_load() with the input as the network file and, for 4
 * NPUs, short runs of a small workload (fuzz_sim.h). */
#include "fuzz_sim.h"

static void violated(const char *what, uint32_t a, uint32_t b) {
  fprintf(stderr, "fuzz property violated: %s (NPUs %u, %u)\n", what, a, b);
  abort();
}

/* Coordinates name each NPU once; a route from a to b has as many hops as
 * the dimensions' hop counts between their coordinates add up to (Switch:
 * 2, through the switch) and ends at b. Checked on the first NPUs and the last ones. */
static void check_topology(const chakra_topo *t) {
  uint32_t n = chakra_topo_npus(t), coords[CHAKRA_TOPO_MAX_DIMS];
  int dims = chakra_topo_dims(t);
  uint64_t links = chakra_topo_links(t), devices = chakra_topo_devices(t);
  uint32_t probe[8], np = 0;
  for (uint32_t i = 0; i < 4 && i < n; i++) probe[np++] = i;
  for (uint32_t i = n > 8 ? n - 4 : 4; i < n; i++) probe[np++] = i;
  for (uint32_t i = 0; i < np; i++) {
    uint32_t a = probe[i];
    chakra_topo_coords(t, a, coords);
    for (int d = 0; d < dims; d++)
      if (coords[d] >= chakra_topo_dim_at(t, d)->npus || coords[d] != chakra_topo_coord(t, a, d))
        violated("a coordinate outside its dimension", a, a);
    if (chakra_topo_npu_at(t, coords) != a) violated("coordinates do not lead back to the NPU", a, a);
    for (uint32_t k = 0; k < np; k++) {
      uint32_t b = probe[k];
      chakra_topo_hop hops[64];
      int len = chakra_topo_route(t, a, b, hops, 64);
      uint64_t want = 0;
      for (int d = 0; d < dims; d++) want += chakra_topo_hops(t, d, chakra_topo_coord(t, a, d), chakra_topo_coord(t, b, d));
      if ((uint64_t)len != want) violated("route length differs from the hop counts", a, b);
      if ((a == b) != (chakra_topo_first_diff(t, a, b) < 0)) violated("first_diff disagrees with equality", a, b);
      int m = len < 64 ? len : 64;
      for (int h = 0; h < m; h++)
        if (hops[h].link >= links || hops[h].next >= devices || chakra_topo_link_dim(t, hops[h].link) != hops[h].dim)
          violated("a hop outside the network", a, b);
      if (m == len && len > 0 && hops[len - 1].next != b) violated("a route that does not end at its destination", a, b);
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[64];
  int fd = fuzz_input_file(data, size, path, sizeof path);
  chakra_topo *t;
  chakra_error err;
  if (chakra_topo_load(&t, path, &err) == 0) {
    check_topology(t);
    const char *system = fuzz_sim_system_for(chakra_topo_dims(t));
    chakra_topo_free(t);
    fuzz_sim_config(system, path, NULL);
  }
  close(fd);
  return 0;
}
