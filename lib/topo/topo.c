/* topo.c - the modelled network; see include/chakra/topo.h.
 *
 * Each building block is a row of block_ops: how far two positions are,
 * how many directed links one instance has, one step inside it and the
 * ends of each link. The product topology only composes blocks
 * (coordinates, instances, link and switch numbering), so a new block is a
 * new row. Link lists (links.c) share the link queries and adjacency. */
#include "chakra/topo.h"

/* Bounds (topo_impl.h) keep every delay inside the simulator's 64-bit
 * nanosecond time: a hop of 10^15 ns (11.6 days), a 1 TiB message at 10^-6
 * GB/s (about 10^18 ns). Outside them a run would wrap, so they are refused
 * when read. */

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util/commgroups.h"
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
  /* The positions link i of an instance joins (n for the switch). */
  void (*ends)(uint32_t n, uint64_t i, uint32_t *a, uint32_t *b);
  int has_switch;
} block_ops;

static void ring_ends(uint32_t n, uint64_t i, uint32_t *a, uint32_t *b) {
  if (n == 2) {
    *a = (uint32_t)i, *b = 1 - (uint32_t)i;
    return;
  }
  *a = (uint32_t)(i / 2);
  *b = i % 2 ? (*a + n - 1) % n : (*a + 1) % n;
}
static void fc_ends(uint32_t n, uint64_t i, uint32_t *a, uint32_t *b) {
  *a = (uint32_t)(i / (n - 1));
  uint32_t k = (uint32_t)(i % (n - 1));
  *b = k < *a ? k : k + 1;
}
static void sw_ends(uint32_t n, uint64_t i, uint32_t *a, uint32_t *b) {
  *a = i % 2 ? n : (uint32_t)(i / 2);
  *b = i % 2 ? (uint32_t)(i / 2) : n;
}
static void mesh_ends(uint32_t n, uint64_t i, uint32_t *a, uint32_t *b) {
  (void)n;
  *a = (uint32_t)(i / 2) + (i % 2);
  *b = (uint32_t)(i / 2) + !(i % 2);
}

static const block_ops blocks[] = {
    [CHAKRA_TOPO_RING] = {"Ring", ring_hops, ring_links, ring_step, ring_ends, 0},
    [CHAKRA_TOPO_FULLY_CONNECTED] = {"FullyConnected", fc_hops, fc_links, fc_step, fc_ends, 0},
    [CHAKRA_TOPO_SWITCH] = {"Switch", sw_hops, sw_links, sw_step, sw_ends, 1},
    [CHAKRA_TOPO_MESH] = {"Mesh", mesh_hops, mesh_links, mesh_step, mesh_ends, 0},
};
#define N_BLOCKS (sizeof blocks / sizeof *blocks)

const char *chakra_topo_kind_name(chakra_topo_kind k) {
  if (k == CHAKRA_TOPO_LINKS) return "Links";
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
    if (x->kind == CHAKRA_TOPO_LINKS)
      return chakra_error_set(err, CHAKRA_EINVAL, "topology: dimension %d: a link list is built by chakra_topo_from_links", d);
    if ((unsigned)x->kind >= N_BLOCKS)
      return chakra_error_set(err, CHAKRA_EINVAL, "topology: dimension %d: unknown kind %d", d, (int)x->kind);
    if (x->npus < 1) return chakra_error_set(err, CHAKRA_EINVAL, "topology: dimension %d: npus_count must be >= 1", d);
    if (!(x->bandwidth_gbps >= TOPO_MIN_GBPS) || !isfinite(x->bandwidth_gbps))
      return chakra_error_set(err, CHAKRA_EINVAL, "topology: dimension %d: bandwidth must be at least %g GB/s", d,
                              TOPO_MIN_GBPS);
    if (!(x->latency_ns >= 0) || !(x->latency_ns <= TOPO_MAX_LATENCY_NS))
      return chakra_error_set(err, CHAKRA_EINVAL, "topology: dimension %d: latency must be 0 to %.16g ns", d,
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
    t->extended |= dims[d].kind == CHAKRA_TOPO_MESH;
  }
  t->devices = t->npus + t->switch_base[n];
  t->n_links = t->link_base[n];
  if (t->n_links <= TOPO_ADJ_MAX && topo_build_adjacency(t)) {
    chakra_topo_free(t);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  *out = t;
  return CHAKRA_OK;
}

void chakra_topo_free(chakra_topo *t) {
  if (!t) return;
  free(t->lk);
  free(t->nh);
  free(t->out_off);
  free(t->out_idx);
  free(t->in_off);
  free(t->in_idx);
  free(t);
}

static void *dup_array(const void *p, uint64_t n, size_t size, int *failed) {
  if (!p) return NULL;
  void *q = malloc(n ? n * size : 1);
  if (!q) *failed = 1;
  else memcpy(q, p, n * size);
  return q;
}

int chakra_topo_clone(chakra_topo **out, const chakra_topo *t, chakra_error *err) {
  *out = NULL;
  chakra_topo *c = malloc(sizeof *c);
  if (!c) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  *c = *t;
  int failed = 0;
  uint64_t devs = t->devices + 1;
  c->lk = dup_array(t->lk, t->n_links, sizeof *t->lk, &failed);
  c->nh = dup_array(t->nh, (uint64_t)t->npus * t->devices, sizeof *t->nh, &failed);
  c->out_off = dup_array(t->out_off, devs, sizeof *t->out_off, &failed);
  c->in_off = dup_array(t->in_off, devs, sizeof *t->in_off, &failed);
  c->out_idx = dup_array(t->out_idx, t->n_links, sizeof *t->out_idx, &failed);
  c->in_idx = dup_array(t->in_idx, t->n_links, sizeof *t->in_idx, &failed);
  if (failed) {
    chakra_topo_free(c);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  *out = c;
  return CHAKRA_OK;
}

/* Counting sort of the links by one end: off[dev]..off[dev+1] index idx. */
static int adjacency_side(const chakra_topo *t, int by_dst, uint64_t **off_out, uint64_t **idx_out) {
  uint64_t *off = calloc(t->devices + 1, sizeof *off);
  uint64_t *idx = malloc((t->n_links ? t->n_links : 1) * sizeof *idx);
  if (!off || !idx) {
    free(off), free(idx);
    return -1;
  }
  chakra_topo_link l;
  for (uint64_t i = 0; i < t->n_links; i++) {
    chakra_topo_link_at(t, i, &l);
    off[(by_dst ? l.dst : l.src) + 1]++;
  }
  for (uint64_t d = 0; d < t->devices; d++) off[d + 1] += off[d];
  for (uint64_t i = 0; i < t->n_links; i++) { /* off[dev] is dev's fill point, restored below */
    chakra_topo_link_at(t, i, &l);
    idx[off[by_dst ? l.dst : l.src]++] = i;
  }
  for (uint64_t d = t->devices; d > 0; d--) off[d] = off[d - 1];
  off[0] = 0;
  *off_out = off;
  *idx_out = idx;
  return 0;
}

int topo_build_adjacency(chakra_topo *t) {
  if (adjacency_side(t, 0, &t->out_off, &t->out_idx)) return -1;
  return adjacency_side(t, 1, &t->in_off, &t->in_idx);
}

int chakra_topo_is_extended(const chakra_topo *t) { return t->extended; }

static int parse_double(const char *s, double *out) {
  char *end;
  errno = 0;
  *out = strtod(s, &end);
  return *s && !*end && !errno && isfinite(*out) ? 0 : -1;
}

/* One list of the YAML into field k of every dimension. */
static int yaml_list(const char *path, const yentry *e, int k, chakra_topo_dim *dims, chakra_error *err) {
  for (int i = 0; i < e->n; i++) {
    char q[96];
    const char *v = e->vals[i], *shown = cg_quote(v, q, sizeof q); /* a value may hold a line break */
    double d = 0;
    if (k == 0) {
      size_t b = 0;
      while (b < N_BLOCKS && strcmp(v, blocks[b].name) != 0) b++;
      if (b == N_BLOCKS)
        return chakra_error_set(err, CHAKRA_EINVAL, "%s: line %lu: topology '%s' is not supported (Ring, FullyConnected, Switch, Mesh; a link list is its own file)", path, e->line, shown);
      dims[i].kind = (chakra_topo_kind)b;
    } else if (parse_double(v, &d)) {
      return chakra_error_set(err, CHAKRA_EINVAL, "%s: line %lu: %s: '%s' is not a number", path, e->line, e->key, shown);
    } else if (k == 1) {
      if (d < 1 || d != floor(d) || d > 1e7)
        return chakra_error_set(err, CHAKRA_EINVAL, "%s: line %lu: npus_count: '%s' must be a whole number >= 1", path, e->line, shown);
      dims[i].npus = (uint32_t)d;
    } else if (k == 2) {
      if (!(d >= TOPO_MIN_GBPS))
        return chakra_error_set(err, CHAKRA_EINVAL, "%s: line %lu: bandwidth must be at least %g GB/s", path, e->line,
                                TOPO_MIN_GBPS);
      dims[i].bandwidth_gbps = d;
    } else {
      if (!(d >= 0 && d <= TOPO_MAX_LATENCY_NS))
        return chakra_error_set(err, CHAKRA_EINVAL, "%s: line %lu: latency must be 0 to %.16g ns", path, e->line,
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
      char q[96];
      rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: line %lu: unknown key '%s' (expected topology, npus_count, bandwidth, latency)", path, m.e[i].line, cg_quote(m.e[i].key, q, sizeof q));
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
  if (t->lk) {
    chakra_topo_hop h;
    return (uint32_t)chakra_topo_route(t, a, b, &h, 0);
  }
  return blocks[t->dim[d].kind].hops(t->dim[d].npus, a, b);
}

int chakra_topo_first_diff(const chakra_topo *t, uint32_t a, uint32_t b) {
  for (int d = 0; d < t->dims; d++)
    if (chakra_topo_coord(t, a, d) != chakra_topo_coord(t, b, d)) return d;
  return -1;
}

uint64_t chakra_topo_devices(const chakra_topo *t) { return t->devices; }
uint64_t chakra_topo_links(const chakra_topo *t) { return t->n_links; }

int chakra_topo_link_dim(const chakra_topo *t, uint64_t link) {
  if (t->lk) return 0;
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

/* Device id of position p (n = the switch) of instance inst of dimension d. */
static uint32_t device_in(const chakra_topo *t, int d, uint64_t inst, uint32_t p) {
  return p == t->dim[d].npus ? (uint32_t)(t->npus + t->switch_base[d] + inst) : npu_in(t, d, inst, p);
}

int chakra_topo_link_at(const chakra_topo *t, uint64_t i, chakra_topo_link *out) {
  if (i >= t->n_links) return CHAKRA_EINVAL;
  if (t->lk) {
    *out = t->lk[i];
    return CHAKRA_OK;
  }
  int d = chakra_topo_link_dim(t, i);
  const block_ops *b = &blocks[t->dim[d].kind];
  uint32_t n = t->dim[d].npus, pa, pb;
  uint64_t per = b->links(n), rem = i - t->link_base[d], inst = rem / per;
  b->ends(n, rem % per, &pa, &pb);
  *out = (chakra_topo_link){device_in(t, d, inst, pa), device_in(t, d, inst, pb), t->bpns[d],
                            t->dim[d].latency_ns, d};
  return CHAKRA_OK;
}

uint32_t chakra_topo_out_links(const chakra_topo *t, uint32_t dev, const uint64_t **links) {
  *links = NULL;
  if (!t->out_off || dev >= t->devices) return 0;
  *links = t->out_idx + t->out_off[dev];
  return (uint32_t)(t->out_off[dev + 1] - t->out_off[dev]);
}

uint32_t chakra_topo_in_links(const chakra_topo *t, uint32_t dev, const uint64_t **links) {
  *links = NULL;
  if (!t->in_off || dev >= t->devices) return 0;
  *links = t->in_idx + t->in_off[dev];
  return (uint32_t)(t->in_off[dev + 1] - t->in_off[dev]);
}

int chakra_topo_next_hop(const chakra_topo *t, uint32_t at, uint32_t dst, chakra_topo_hop *hop) {
  if (t->lk) {
    if (at == dst) return 0;
    hop->link = topo_list_next(t, at, dst);
    hop->next = t->lk[hop->link].dst;
    hop->dim = 0;
    return 1;
  }
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
  hop->next = device_in(t, d, inst, next);
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
