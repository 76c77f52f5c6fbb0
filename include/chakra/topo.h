/* topo.h - the modelled network: dimensions, their building blocks,
 * NPU coordinates, hop counts and link-level routes; one description read
 * by the simulator and the collective synthesiser (docs/topology.md).
 *
 * A topology is either a product of dimensions, each a building block of n
 * NPUs (Ring, FullyConnected, Switch, Mesh) with a bandwidth (GB/s, GB =
 * 2^30 bytes, as ASTRA-sim's network files) and a per-hop latency (ns), or
 * an explicit list of directed links (CHAKRA_TOPO_LINKS: one dimension
 * whose links each carry their own bandwidth and latency, routed by
 * shortest path, ties to the link listed first). NPU ids map to
 * coordinates with dimension 0 varying fastest: id = sum_d coord_d *
 * offset_d, offset_d = product of n_e for e < d. Read one from ASTRA-sim's
 * network YAML or build one in code; the simulator and the synthesiser ask
 * it the same questions.
 *
 * Link level (the congestion-aware model): devices are the NPUs 0..N-1
 * followed by the switches; every directed link has an index below
 * chakra_topo_links(). A route is found one hop at a time
 * (chakra_topo_next_hop), lowest differing dimension first, so a building
 * block only has to say how to move inside itself; a link list keeps a
 * precomputed next-hop table instead.
 *
 * Ownership: a chakra_topo is created by chakra_topo_load(), _new(),
 * _clone(), _from_links(), _load_links(), _parse() or _open() and freed by
 * chakra_topo_free(); nothing else allocates. On failure *out is NULL and nothing needs freeing. */
#ifndef CHAKRA_TOPO_H
#define CHAKRA_TOPO_H

#include <stdint.h>

#include "chakra/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CHAKRA_TOPO_MAX_DIMS 16

typedef enum chakra_topo_kind {
  CHAKRA_TOPO_RING = 0,            /* bidirectional ring: the shorter way, ties clockwise */
  CHAKRA_TOPO_FULLY_CONNECTED = 1, /* a link per ordered pair: one hop */
  CHAKRA_TOPO_SWITCH = 2,          /* one switch: up-link and down-link per NPU, two hops */
  CHAKRA_TOPO_MESH = 3,            /* a line: a link each way between neighbours, no wrap-around */
  CHAKRA_TOPO_LINKS = 4            /* an explicit link list (the whole topology, one dimension) */
} chakra_topo_kind;

typedef struct chakra_topo_dim {
  chakra_topo_kind kind;
  uint32_t npus;          /* >= 1 */
  double bandwidth_gbps;  /* > 0, GB = 2^30 bytes */
  double latency_ns;      /* >= 0 */
} chakra_topo_dim;

typedef struct chakra_topo chakra_topo;

/* Reads ASTRA-sim's network YAML (topology, npus_count, bandwidth, latency:
 * one list entry per dimension; "Mesh" is accepted besides ASTRA-sim's
 * kinds). Errors name the file, line and key. */
CHAKRA_API int chakra_topo_load(chakra_topo **out, const char *path, chakra_error *err);
/* Builds a topology of n dimensions (1..CHAKRA_TOPO_MAX_DIMS); dims is
 * copied. Errors name the dimension and field. Not for CHAKRA_TOPO_LINKS. */
CHAKRA_API int chakra_topo_new(chakra_topo **out, const chakra_topo_dim *dims, int n, chakra_error *err);
CHAKRA_API void chakra_topo_free(chakra_topo *t); /* NULL is fine */
/* A deep copy (freed by chakra_topo_free). */
CHAKRA_API int chakra_topo_clone(chakra_topo **out, const chakra_topo *t, chakra_error *err);

/* One directed link. */
typedef struct chakra_topo_link {
  uint32_t src, dst;      /* devices: NPUs 0..N-1, then switches */
  double bytes_per_ns;    /* > 0 (GB/s x 2^30 / 10^9) */
  double latency_ns;      /* >= 0 */
  int dim;                /* the dimension (0 in a link list) */
} chakra_topo_link;

/* A link-list topology: npus NPUs (devices 0..npus-1) and `switches`
 * switches (devices npus..npus+switches-1), the n links copied. Refused:
 * an end that is not a device, a link to itself, bandwidth outside
 * [1e-6 GB/s, inf), latency outside [0, 1e15] ns, a duplicate (src, dst),
 * an NPU that cannot reach every other NPU, more than 4,096 devices.
 * Errors name the link's index. Routing: shortest path by hops; at each
 * device the first listed link that starts a shortest route (docs). */
CHAKRA_API int chakra_topo_from_links(chakra_topo **out, uint32_t npus, uint32_t switches,
                                      const chakra_topo_link *links, uint64_t n, chakra_error *err);
/* Reads a link-list file (docs/topology.md): `npus N`, optional
 * `switches S`, then one link per line `SRC DST BANDWIDTH_GBPS LATENCY_NS`
 * (`SRC <-> DST ...` for both directions, switches written sK). Errors are
 * one line naming the file and line. */
CHAKRA_API int chakra_topo_load_links(chakra_topo **out, const char *path, chakra_error *err);
/* The inline description "KIND:SHAPE[@BW,LAT]": mesh:8x8, mesh:4x4x4,
 * torus:8x8, hypercube:64, ring:8, switch:16, fc:8 (also mesh:8, a line).
 * Every link gets bandwidth_gbps (GB/s) and latency_ns unless the spec
 * ends in "@BW,LAT" (e.g. mesh:8x8@50,500; units GBps and ns may be
 * written), which takes precedence. */
CHAKRA_API int chakra_topo_parse(chakra_topo **out, const char *spec, double bandwidth_gbps, double latency_ns,
                                 chakra_error *err);
/* An inline description or a file: a path that exists is read as network
 * YAML when it ends in .yml/.yaml or its first key is a YAML network key,
 * otherwise as a link-list file; anything else is parsed inline. */
CHAKRA_API int chakra_topo_open(chakra_topo **out, const char *spec_or_path, double bandwidth_gbps,
                                double latency_ns, chakra_error *err);

CHAKRA_API int chakra_topo_dims(const chakra_topo *t);
/* Dimension d (0 <= d < dims); the pointer lives as long as t. */
CHAKRA_API const chakra_topo_dim *chakra_topo_dim_at(const chakra_topo *t, int d);
/* N, the product of the dimensions' NPU counts. */
CHAKRA_API uint32_t chakra_topo_npus(const chakra_topo *t);
/* Bandwidth of dimension d in bytes per ns (a link list: its slowest
 * link's; its dimension's latency_ns is its largest link latency). */
CHAKRA_API double chakra_topo_bytes_per_ns(const chakra_topo *t, int d);
/* 1 when the topology uses a kind ASTRA-sim does not know (Mesh, Links). */
CHAKRA_API int chakra_topo_is_extended(const chakra_topo *t);

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
/* A link's dimension. */
CHAKRA_API int chakra_topo_link_dim(const chakra_topo *t, uint64_t link);
/* Link i (< chakra_topo_links()): ends, bandwidth, latency, dimension.
 * Returns CHAKRA_EINVAL for an index out of range. */
CHAKRA_API int chakra_topo_link_at(const chakra_topo *t, uint64_t i, chakra_topo_link *out);
/* The links leaving / entering device dev, in increasing index; *links
 * points into t (valid while t lives). Returns the count (0 and NULL for a
 * device out of range, and for every device of a product topology of more
 * than 2^22 links, which keeps no adjacency lists). */
CHAKRA_API uint32_t chakra_topo_out_links(const chakra_topo *t, uint32_t dev, const uint64_t **links);
CHAKRA_API uint32_t chakra_topo_in_links(const chakra_topo *t, uint32_t dev, const uint64_t **links);

/* "Ring", "FullyConnected", "Switch", "Mesh", "Links" (the YAML names). */
CHAKRA_API const char *chakra_topo_kind_name(chakra_topo_kind k);

#ifdef __cplusplus
}
#endif
#endif
