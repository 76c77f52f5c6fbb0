/* topo_impl.h - the layout of a chakra_topo, for lib/topo and for the
 * simulator's per-message paths (private).
 *
 * The simulator asks for hop counts once per message; topo_hops_fast()
 * answers the built-in blocks inline and hands any other kind to
 * chakra_topo_hops(), so a new block still needs no change outside
 * lib/topo. */
#ifndef CHAKRA_TOPO_IMPL_H
#define CHAKRA_TOPO_IMPL_H

#include "chakra/topo.h"

struct chakra_topo {
  int dims;
  chakra_topo_dim dim[CHAKRA_TOPO_MAX_DIMS];
  uint32_t npus;
  uint32_t offset[CHAKRA_TOPO_MAX_DIMS];    /* id = sum coord_d * offset_d */
  double bpns[CHAKRA_TOPO_MAX_DIMS];        /* bytes per ns */
  uint64_t link_base[CHAKRA_TOPO_MAX_DIMS + 1];
  uint64_t switch_base[CHAKRA_TOPO_MAX_DIMS + 1]; /* device id of dimension d's first switch */
};

static inline uint32_t topo_hops_fast(const chakra_topo *t, int d, uint32_t a, uint32_t b) {
  switch (t->dim[d].kind) {
    case CHAKRA_TOPO_RING: {
      uint32_t n = t->dim[d].npus, x = a > b ? a - b : b - a;
      return x < n - x ? x : n - x;
    }
    case CHAKRA_TOPO_FULLY_CONNECTED: return a != b;
    case CHAKRA_TOPO_SWITCH: return a != b ? 2 : 0;
    default: return chakra_topo_hops(t, d, a, b);
  }
}

static inline double topo_latency(const chakra_topo *t, int d) { return t->dim[d].latency_ns; }

#endif
