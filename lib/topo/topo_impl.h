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

/* The built-in blocks, n positions each (position n is a switch): hops
 * between positions, directed links per instance, and one step from a
 * toward b (the link's index in the instance; *next the next position). */
static inline uint32_t ring_hops(uint32_t n, uint32_t a, uint32_t b) {
  uint32_t d = a > b ? a - b : b - a;
  return d < n - d ? d : n - d;
}
static inline uint64_t ring_links(uint32_t n) { return 2ull * n; }
/* Ties go clockwise (increasing position), as ASTRA-sim routes. */
static inline uint64_t ring_step(uint32_t n, uint32_t a, uint32_t b, uint32_t *next) {
  uint32_t fwd = (b + n - a) % n;
  int cw = fwd <= n - fwd;
  *next = cw ? (a + 1) % n : (a + n - 1) % n;
  return 2ull * a + (cw ? 0 : 1);
}

static inline uint32_t fc_hops(uint32_t n, uint32_t a, uint32_t b) { return (void)n, a != b; }
static inline uint64_t fc_links(uint32_t n) { return (uint64_t)n * n; }
static inline uint64_t fc_step(uint32_t n, uint32_t a, uint32_t b, uint32_t *next) {
  *next = b;
  return (uint64_t)a * n + b;
}

static inline uint32_t sw_hops(uint32_t n, uint32_t a, uint32_t b) { return (void)n, a != b ? 2 : 0; }
static inline uint64_t sw_links(uint32_t n) { return 2ull * n; }
/* Link 2p: NPU p up to the switch; 2p + 1: the switch down to p. */
static inline uint64_t sw_step(uint32_t n, uint32_t a, uint32_t b, uint32_t *next) {
  if (a == n) {
    *next = b;
    return 2ull * b + 1;
  }
  *next = n;
  return 2ull * a;
}

static inline uint32_t topo_hops_fast(const chakra_topo *t, int d, uint32_t a, uint32_t b) {
  switch (t->dim[d].kind) {
    case CHAKRA_TOPO_RING: return ring_hops(t->dim[d].npus, a, b);
    case CHAKRA_TOPO_FULLY_CONNECTED: return fc_hops(t->dim[d].npus, a, b);
    case CHAKRA_TOPO_SWITCH: return sw_hops(t->dim[d].npus, a, b);
    default: return chakra_topo_hops(t, d, a, b);
  }
}

/* chakra_topo_next_hop(), inline for one-dimensional built-in blocks (the
 * congestion-aware model asks once per hop). */
static inline int topo_next_hop_fast(const chakra_topo *t, uint32_t at, uint32_t dst, chakra_topo_hop *hop) {
  if (t->dims != 1) return chakra_topo_next_hop(t, at, dst, hop);
  if (at == dst) return 0;
  uint32_t n = t->npus, next;
  switch (t->dim[0].kind) {
    case CHAKRA_TOPO_RING: hop->link = ring_step(n, at, dst, &next); break;
    case CHAKRA_TOPO_FULLY_CONNECTED: hop->link = fc_step(n, at, dst, &next); break;
    case CHAKRA_TOPO_SWITCH: hop->link = sw_step(n, at, dst, &next); break;
    default: return chakra_topo_next_hop(t, at, dst, hop);
  }
  hop->next = next;
  hop->dim = 0;
  return 1;
}

static inline double topo_latency(const chakra_topo *t, int d) { return t->dim[d].latency_ns; }

#endif
