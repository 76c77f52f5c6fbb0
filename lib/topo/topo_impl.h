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
  uint64_t devices, n_links;
  int extended;                             /* a kind ASTRA-sim does not know */
  /* Link lists only: the links as given, and the next-hop table
   * nh[dst * devices + at] (the link from device at toward NPU dst). */
  chakra_topo_link *lk;
  uint32_t *nh;
  /* Adjacency (CSR, links in increasing index); NULL past TOPO_ADJ_MAX. */
  uint64_t *out_off, *out_idx, *in_off, *in_idx;
};

#define TOPO_ADJ_MAX (1ull << 22)
/* Bounds shared by every reader (see topo.c). */
#define TOPO_MAX_LATENCY_NS 1e15
#define TOPO_MIN_GBPS 1e-6

/* Fills the CSR adjacency from chakra_topo_link_at(); -1 when out of memory. */
int topo_build_adjacency(chakra_topo *t);

/* Link-list routes: the next link from device at toward NPU dst. */
static inline uint32_t topo_list_next(const chakra_topo *t, uint32_t at, uint32_t dst) {
  return t->nh[(uint64_t)dst * t->devices + at];
}

/* The built-in blocks, n positions each (position n is a switch): hops
 * between positions, directed links per instance, and one step from a
 * toward b (the link's index in the instance; *next the next position). */
static inline uint32_t ring_hops(uint32_t n, uint32_t a, uint32_t b) {
  uint32_t d = a > b ? a - b : b - a;
  return d < n - d ? d : n - d;
}
/* A ring of two has one link each way (link p: p to 1 - p), of one none. */
static inline uint64_t ring_links(uint32_t n) { return n > 2 ? 2ull * n : n == 2 ? 2 : 0; }
/* Ties go clockwise (increasing position), as ASTRA-sim routes. */
static inline uint64_t ring_step(uint32_t n, uint32_t a, uint32_t b, uint32_t *next) {
  if (n == 2) {
    *next = b;
    return a;
  }
  uint32_t fwd = (b + n - a) % n;
  int cw = fwd <= n - fwd;
  *next = cw ? (a + 1) % n : (a + n - 1) % n;
  return 2ull * a + (cw ? 0 : 1);
}

static inline uint32_t fc_hops(uint32_t n, uint32_t a, uint32_t b) { return (void)n, a != b; }
/* Link a * (n - 1) + k: a to the k-th other position. */
static inline uint64_t fc_links(uint32_t n) { return (uint64_t)n * (n - 1); }
static inline uint64_t fc_step(uint32_t n, uint32_t a, uint32_t b, uint32_t *next) {
  *next = b;
  return (uint64_t)a * (n - 1) + (b < a ? b : b - 1);
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

/* A line: link 2p goes p to p + 1, link 2p + 1 comes back. */
static inline uint32_t mesh_hops(uint32_t n, uint32_t a, uint32_t b) { return (void)n, a > b ? a - b : b - a; }
static inline uint64_t mesh_links(uint32_t n) { return 2ull * (n - 1); }
static inline uint64_t mesh_step(uint32_t n, uint32_t a, uint32_t b, uint32_t *next) {
  (void)n;
  if (b > a) {
    *next = a + 1;
    return 2ull * a;
  }
  *next = a - 1;
  return 2ull * (a - 1) + 1;
}

static inline uint32_t topo_hops_fast(const chakra_topo *t, int d, uint32_t a, uint32_t b) {
  switch (t->dim[d].kind) {
    case CHAKRA_TOPO_RING: return ring_hops(t->dim[d].npus, a, b);
    case CHAKRA_TOPO_FULLY_CONNECTED: return fc_hops(t->dim[d].npus, a, b);
    case CHAKRA_TOPO_SWITCH: return sw_hops(t->dim[d].npus, a, b);
    case CHAKRA_TOPO_MESH: return mesh_hops(t->dim[d].npus, a, b);
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
    case CHAKRA_TOPO_MESH: hop->link = mesh_step(n, at, dst, &next); break;
    case CHAKRA_TOPO_LINKS:
      hop->link = topo_list_next(t, at, dst);
      next = t->lk[hop->link].dst;
      break;
    default: return chakra_topo_next_hop(t, at, dst, hop);
  }
  hop->next = next;
  hop->dim = 0;
  return 1;
}

static inline double topo_latency(const chakra_topo *t, int d) { return t->dim[d].latency_ns; }

#endif
