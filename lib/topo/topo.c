/* topo.c - the modelled network; see include/chakra/topo.h.
 *
 * Each building block is a row of block_ops: how far two positions are,
 * how many directed links one instance has, and one step inside it. The
 * product topology only composes blocks (coordinates, instances, link and
 * switch numbering), so a new block is a new row. */
#include "chakra/topo.h"

/* Bounds that keep every delay inside the simulator's 64-bit nanosecond
 * time: a hop of 10^15 ns (11.6 days), a 1 TiB message at 10^-6 GB/s (about
 * 10^18 ns). Outside them a run would wrap, so they are refused when read. */
#define TOPO_MAX_LATENCY_NS 1e15
#define TOPO_MIN_GBPS 1e-6

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util/ymap.h"
#include "topo_impl.h"


/* One building block of n positions; position n is its switch, if any. */
typedef struct block_ops {
  const char *name;
  uint32_t (*hops)(uint32_t n, uint32_t a, uint32_t b);
  uint64_t (*links)(uint32_t n);
  /* One step from a (a position, or n for the switch) toward b != a: the
   * link's index inside the instance; *next receives the next position. */
  uint64_t (*step)(uint32_t n, uint32_t a, uint32_t b, uint32_t *next);
  int has_switch;
} block_ops;

static const block_ops blocks[] = {
    [CHAKRA_TOPO_RING] = {"Ring", ring_hops, ring_links, ring_step, 0},
    [CHAKRA_TOPO_FULLY_CONNECTED] = {"FullyConnected", fc_hops, fc_links, fc_step, 0},
    [CHAKRA_TOPO_SWITCH] = {"Switch", sw_hops, sw_links, sw_step, 1},
};
#define N_BLOCKS (sizeof blocks / sizeof *blocks)

const char *chakra_topo_kind_name(chakra_topo_kind k) {
  return (unsigned)k < N_BLOCKS ? blocks[k].name : "?";
}

/* ---- construction ---- */

int chakra_topo_new(chakra_topo **out, const chakra_topo_dim *dims, int n, chakra_error *err) {
  *out = NULL;
  if (n < 1 || n > CHAKRA_TOPO_MAX_DIMS)
    return chakra_error_set(err, CHAKRA_EINVAL, "topology: 1 to %d dimensions, not %d", CHAKRA_TOPO_MAX_DIMS, n);
  uint64_t total = 1;
  for (int d = 0; d < n; d++) {
    const chakra_topo_dim *x = &dims[d];
    if ((unsigned)x->kind >= N_BLOCKS)
      return chakra_error_set(err, CHAKRA_EINVAL, "topology: dimension %d: unknown kind %d", d, (int)x->kind);
    if (x->npus < 1) return chakra_error_set(err, CHAKRA_EINVAL, "topology: dimension %d: npus_count must be >= 1", d);
    if (!(x->bandwidth_gbps >= TOPO_MIN_GBPS) || !isfinite(x->bandwidth_gbps))
      return chakra_error_set(err, CHAKRA_EINVAL, "topology: dimension %d: bandwidth must be at least %g GB/s", d,
                              TOPO_MIN_GBPS);
    if (!(x->latency_ns >= 0) || !(x->latency_ns <= TOPO_MAX_LATENCY_NS))
      return chakra_error_set(err, CHAKRA_EINVAL, "topology: dimension %d: latency must be 0 to %g ns", d,
                              TOPO_MAX_LATENCY_NS);
    total *= x->npus;
    if (total > (1u << 24))
      return chakra_error_set(err, CHAKRA_EINVAL, "topology: %llu NPUs or more is more than supported (16M)",
                              (unsigned long long)total);
  }
  chakra_topo *t = calloc(1, sizeof *t);
  if (!t) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  t->dims = n;
  t->npus = (uint32_t)total;
  uint32_t off = 1;
  for (int d = 0; d < n; d++) {
    t->dim[d] = dims[d];
    t->offset[d] = off;
    off *= dims[d].npus;
    t->bpns[d] = dims[d].bandwidth_gbps * 1073741824.0 / 1e9; /* GB = 2^30 B */
    uint64_t inst = t->npus / dims[d].npus;
    t->link_base[d + 1] = t->link_base[d] + inst * blocks[dims[d].kind].links(dims[d].npus);
    t->switch_base[d + 1] = t->switch_base[d] + (blocks[dims[d].kind].has_switch ? inst : 0);
  }
  *out = t;
  return CHAKRA_OK;
}

void chakra_topo_free(chakra_topo *t) { free(t); }

static int parse_double(const char *s, double *out) {
  char *end;
  errno = 0;
  *out = strtod(s, &end);
  return *s && !*end && !errno && isfinite(*out) ? 0 : -1;
}

/* One list of the YAML into field k of every dimension. */
static int yaml_list(const char *path, const yentry *e, int k, chakra_topo_dim *dims, chakra_error *err) {
  for (int i = 0; i < e->n; i++) {
    const char *v = e->vals[i];
    double d = 0;
    if (k == 0) {
      size_t b = 0;
      while (b < N_BLOCKS && strcmp(v, blocks[b].name) != 0) b++;
      if (b == N_BLOCKS)
        return chakra_error_set(err, CHAKRA_EINVAL, "%s: line %lu: topology '%s' is not supported (Ring, FullyConnected, Switch)", path, e->line, v);
      dims[i].kind = (chakra_topo_kind)b;
    } else if (parse_double(v, &d)) {
      return chakra_error_set(err, CHAKRA_EINVAL, "%s: line %lu: %s: '%s' is not a number", path, e->line, e->key, v);
    } else if (k == 1) {
      if (d < 1 || d != floor(d) || d > 1e7)
        return chakra_error_set(err, CHAKRA_EINVAL, "%s: line %lu: npus_count: '%s' must be a whole number >= 1", path, e->line, v);
      dims[i].npus = (uint32_t)d;
    } else if (k == 2) {
      if (!(d >= TOPO_MIN_GBPS))
        return chakra_error_set(err, CHAKRA_EINVAL, "%s: line %lu: bandwidth must be at least %g GB/s", path, e->line,
                                TOPO_MIN_GBPS);
      dims[i].bandwidth_gbps = d;
    } else {
      if (!(d >= 0 && d <= TOPO_MAX_LATENCY_NS))
        return chakra_error_set(err, CHAKRA_EINVAL, "%s: line %lu: latency must be 0 to %g ns", path, e->line,
                                TOPO_MAX_LATENCY_NS);
      dims[i].latency_ns = d;
    }
  }
  return 0;
}

int chakra_topo_load(chakra_topo **out, const char *path, chakra_error *err) {
  static const char *const keys[] = {"topology", "npus_count", "bandwidth", "latency"};
  *out = NULL;
  chakra_topo_dim dims[CHAKRA_TOPO_MAX_DIMS];
  memset(dims, 0, sizeof dims);
  ymap m;
  int rc = ymap_read(path, &m, err);
  if (rc) return rc;
  int seen[4] = {0}, len[4] = {0};
  for (int i = 0; i < m.n && !rc; i++) {
    int k = 0;
    while (k < 4 && strcmp(m.e[i].key, keys[k]) != 0) k++;
    if (k == 4) {
      rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: line %lu: unknown key '%s' (expected topology, npus_count, bandwidth, latency)", path, m.e[i].line, m.e[i].key);
    } else if (m.e[i].n < 1 || m.e[i].n > CHAKRA_TOPO_MAX_DIMS) {
      rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: line %lu: %s must list 1 to %d dimensions", path, m.e[i].line, keys[k], CHAKRA_TOPO_MAX_DIMS);
    } else {
      seen[k] = 1;
      len[k] = m.e[i].n;
      rc = yaml_list(path, &m.e[i], k, dims, err);
    }
  }
  for (int k = 0; k < 4 && !rc; k++)
    if (!seen[k]) rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: missing key '%s'", path, keys[k]);
  for (int k = 1; k < 4 && !rc; k++)
    if (len[k] != len[0])
      rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: length of %s (%d) doesn't match with dimensions (%d)", path, keys[k], len[k], len[0]);
  ymap_free(&m);
  if (!rc) {
    rc = chakra_topo_new(out, dims, len[0], err);
    if (rc) chakra_error_prefix(err, "%s: ", path);
  }
  return rc;
}

/* ---- queries ---- */

int chakra_topo_dims(const chakra_topo *t) { return t->dims; }
const chakra_topo_dim *chakra_topo_dim_at(const chakra_topo *t, int d) { return &t->dim[d]; }
uint32_t chakra_topo_npus(const chakra_topo *t) { return t->npus; }
double chakra_topo_bytes_per_ns(const chakra_topo *t, int d) { return t->bpns[d]; }

uint32_t chakra_topo_coord(const chakra_topo *t, uint32_t npu, int d) {
  return (npu / t->offset[d]) % t->dim[d].npus;
}

void chakra_topo_coords(const chakra_topo *t, uint32_t npu, uint32_t *coords) {
  for (int d = 0; d < t->dims; d++) coords[d] = chakra_topo_coord(t, npu, d);
}

uint32_t chakra_topo_npu_at(const chakra_topo *t, const uint32_t *coords) {
  uint32_t id = 0;
  for (int d = 0; d < t->dims; d++) id += coords[d] * t->offset[d];
  return id;
}

uint32_t chakra_topo_hops(const chakra_topo *t, int d, uint32_t a, uint32_t b) {
  return blocks[t->dim[d].kind].hops(t->dim[d].npus, a, b);
}

int chakra_topo_first_diff(const chakra_topo *t, uint32_t a, uint32_t b) {
  for (int d = 0; d < t->dims; d++)
    if (chakra_topo_coord(t, a, d) != chakra_topo_coord(t, b, d)) return d;
  return -1;
}

uint64_t chakra_topo_devices(const chakra_topo *t) { return t->npus + t->switch_base[t->dims]; }
uint64_t chakra_topo_links(const chakra_topo *t) { return t->link_base[t->dims]; }

int chakra_topo_link_dim(const chakra_topo *t, uint64_t link) {
  int d = 0;
  while (d + 1 < t->dims && link >= t->link_base[d + 1]) d++;
  return d;
}

/* The instance of dimension d an NPU belongs to: its other coordinates. */
static uint64_t instance_of(const chakra_topo *t, uint32_t npu, int d) {
  uint64_t off = t->offset[d], n = t->dim[d].npus;
  return (npu / (off * n)) * off + npu % off;
}

/* The NPU at position p of instance inst of dimension d. */
static uint32_t npu_in(const chakra_topo *t, int d, uint64_t inst, uint32_t p) {
  uint64_t off = t->offset[d], n = t->dim[d].npus;
  return (uint32_t)((inst / off) * off * n + (uint64_t)p * off + inst % off);
}

int chakra_topo_next_hop(const chakra_topo *t, uint32_t at, uint32_t dst, chakra_topo_hop *hop) {
  if (t->dims == 1) { /* positions are ids: no coordinate arithmetic (a hot path of the aware model) */
    if (at == dst) return 0;
    uint32_t n = t->npus, next;
    hop->link = blocks[t->dim[0].kind].step(n, at, dst, &next);
    hop->next = next;
    hop->dim = 0;
    return 1;
  }
  int d;
  uint64_t inst;
  uint32_t a, next;
  if (at >= t->npus) { /* a switch: find its dimension and instance */
    uint64_t s = at - t->npus;
    d = 0;
    while (s >= t->switch_base[d + 1]) d++;
    inst = s - t->switch_base[d];
    a = t->dim[d].npus;
  } else {
    d = chakra_topo_first_diff(t, at, dst);
    if (d < 0) return 0;
    inst = instance_of(t, at, d);
    a = chakra_topo_coord(t, at, d);
  }
  uint32_t n = t->dim[d].npus;
  const block_ops *b = &blocks[t->dim[d].kind];
  hop->link = t->link_base[d] + inst * b->links(n) + b->step(n, a, chakra_topo_coord(t, dst, d), &next);
  hop->next = next == n ? (uint32_t)(t->npus + t->switch_base[d] + inst) : npu_in(t, d, inst, next);
  hop->dim = d;
  return 1;
}

int chakra_topo_route(const chakra_topo *t, uint32_t src, uint32_t dst, chakra_topo_hop *hops, int max) {
  int k = 0;
  chakra_topo_hop h;
  for (uint32_t at = src; chakra_topo_next_hop(t, at, dst, &h); at = h.next, k++)
    if (k < max) hops[k] = h;
  return k;
}
