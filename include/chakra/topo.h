/* topo.h - the modelled network: dimensions, their building blocks,
 * NPU coordinates, hop counts and link-level routes.
 *
 * A topology is a product of dimensions, each a building block of n NPUs
 * (Ring, FullyConnected, Switch) with a bandwidth (GB/s, GB = 2^30 bytes,
 * as ASTRA-sim's network files) and a per-hop latency (ns). NPU ids map to
 * coordinates with dimension 0 varying fastest: id = sum_d coord_d *
 * offset_d, offset_d = product of n_e for e < d. Read one from ASTRA-sim's
 * network YAML or build one in code; the simulator and the synthesiser ask
 * it the same questions.
 *
 * Link level (the congestion-aware model): devices are the NPUs 0..N-1
 * followed by the switches; every directed link has an index below
 * chakra_topo_links(). A route is found one hop at a time
 * (chakra_topo_next_hop), lowest differing dimension first, so a building
 * block only has to say how to move inside itself. New blocks (meshes,
 * tori, explicit link lists) add a kind here; callers do not change.
 *
 * Ownership: a chakra_topo is created by chakra_topo_load() or
 * chakra_topo_new() and freed by chakra_topo_free(); nothing else
 * allocates. On failure *out is NULL and nothing needs freeing. */
#ifndef CHAKRA_TOPO_H
#define CHAKRA_TOPO_H

#include <stdint.h>

#include "chakra/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CHAKRA_TOPO_MAX_DIMS 8

typedef enum chakra_topo_kind {
  CHAKRA_TOPO_RING = 0,            /* bidirectional ring: the shorter way, ties clockwise */
  CHAKRA_TOPO_FULLY_CONNECTED = 1, /* a link per ordered pair: one hop */
  CHAKRA_TOPO_SWITCH = 2           /* one switch: up-link and down-link per NPU, two hops */
} chakra_topo_kind;

typedef struct chakra_topo_dim {
  chakra_topo_kind kind;
  uint32_t npus;          /* >= 1 */
  double bandwidth_gbps;  /* > 0, GB = 2^30 bytes */
  double latency_ns;      /* >= 0 */
} chakra_topo_dim;

typedef struct chakra_topo chakra_topo;

/* Reads ASTRA-sim's network YAML (topology, npus_count, bandwidth, latency:
 * one list entry per dimension). Errors name the file, line and key. */
CHAKRA_API int chakra_topo_load(chakra_topo **out, const char *path, chakra_error *err);
/* Builds a topology of n dimensions (1..CHAKRA_TOPO_MAX_DIMS); dims is
 * copied. Errors name the dimension and field. */
CHAKRA_API int chakra_topo_new(chakra_topo **out, const chakra_topo_dim *dims, int n, chakra_error *err);
CHAKRA_API void chakra_topo_free(chakra_topo *t); /* NULL is fine */

CHAKRA_API int chakra_topo_dims(const chakra_topo *t);
/* Dimension d (0 <= d < dims); the pointer lives as long as t. */
CHAKRA_API const chakra_topo_dim *chakra_topo_dim_at(const chakra_topo *t, int d);
/* N, the product of the dimensions' NPU counts. */
CHAKRA_API uint32_t chakra_topo_npus(const chakra_topo *t);
/* Bandwidth of dimension d in bytes per ns. */
CHAKRA_API double chakra_topo_bytes_per_ns(const chakra_topo *t, int d);

/* coords receives chakra_topo_dims() entries. */
CHAKRA_API void chakra_topo_coords(const chakra_topo *t, uint32_t npu, uint32_t *coords);
CHAKRA_API uint32_t chakra_topo_coord(const chakra_topo *t, uint32_t npu, int d);
CHAKRA_API uint32_t chakra_topo_npu_at(const chakra_topo *t, const uint32_t *coords);
/* Hops between two NPUs inside dimension d, counted on the coordinates of
 * d only (Ring: the shorter way; FullyConnected: 1; Switch: 2; 0 when the
 * coordinates agree). */
CHAKRA_API uint32_t chakra_topo_hops(const chakra_topo *t, int d, uint32_t a, uint32_t b);
/* The lowest dimension in which a and b differ, or -1 when a == b. */
CHAKRA_API int chakra_topo_first_diff(const chakra_topo *t, uint32_t a, uint32_t b);

/* ---- link level ---- */

typedef struct chakra_topo_hop {
  uint64_t link;          /* index below chakra_topo_links() */
  uint32_t next;          /* the device the link leads to */
  int dim;                /* the dimension the link belongs to */
} chakra_topo_hop;

/* Devices: NPUs, then switches. */
CHAKRA_API uint64_t chakra_topo_devices(const chakra_topo *t);
CHAKRA_API uint64_t chakra_topo_links(const chakra_topo *t);
/* The next hop from device `at` toward NPU dst. Returns 1 and fills *hop,
 * or 0 when at == dst. */
CHAKRA_API int chakra_topo_next_hop(const chakra_topo *t, uint32_t at, uint32_t dst, chakra_topo_hop *hop);
/* The whole route from src to dst: up to max hops into hops; returns the
 * number of hops (which may exceed max; only max are written). */
CHAKRA_API int chakra_topo_route(const chakra_topo *t, uint32_t src, uint32_t dst, chakra_topo_hop *hops, int max);
/* A link's dimension, bandwidth (bytes per ns) and latency (ns). */
CHAKRA_API int chakra_topo_link_dim(const chakra_topo *t, uint64_t link);

/* "Ring", "FullyConnected", "Switch" (the YAML names). */
CHAKRA_API const char *chakra_topo_kind_name(chakra_topo_kind k);

#ifdef __cplusplus
}
#endif
#endif
