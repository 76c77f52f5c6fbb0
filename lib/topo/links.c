/* links.c - link-list topologies: an explicit set of directed links with
 * their own bandwidth and latency, checked, and routed by a precomputed
 * shortest-path next-hop table; and the link-list file that describes one
 * (docs/topology.md). See include/chakra/topo.h.
 *
 * Routing is destination-based: the link a message takes next depends only
 * on the device it is at and its destination NPU, so every route is a
 * shortest path (each hop brings it one hop closer) and two messages to
 * the same destination merge once their routes meet. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_impl.h"
#include "../util/cmp.h"
#include "../util/vec.h"

#define LINKS_MAX_DEVICES 4096u
#define GIB_PER_GB_NS (1073741824.0 / 1e9) /* bytes per ns in 1 GB/s */

/* Where a link came from, for messages: a file line or an array index. */
typedef struct link_origin {
  const char *path;             /* NULL: links given in code */
  const unsigned long *lines;   /* per link, when path is set */
  unsigned long npus_line;      /* the `npus` line, for connectivity errors */
} link_origin;

static int origin_error(chakra_error *err, const link_origin *o, uint64_t i, const char *what) {
  if (o->path) return chakra_error_set(err, CHAKRA_EINVAL, "%s: line %lu: %s", o->path, o->lines[i], what);
  return chakra_error_set(err, CHAKRA_EINVAL, "topology: link %llu: %s", (unsigned long long)i, what);
}

static int check_link(const chakra_topo_link *l, uint64_t devices, uint32_t npus, uint64_t i, const link_origin *o,
                      chakra_error *err) {
  char why[160];
  double gbps = l->bytes_per_ns / GIB_PER_GB_NS;
  if (l->src >= devices || l->dst >= devices) {
    uint32_t bad = l->src >= devices ? l->src : l->dst;
    if (bad < devices) bad = l->dst;
    snprintf(why, sizeof why, "link %u -> %u: device %u does not exist (npus %u: 0..%u, then the switches)", l->src,
             l->dst, bad, npus, npus - 1);
    return origin_error(err, o, i, why);
  }
  if (l->src == l->dst) {
    snprintf(why, sizeof why, "link from %u to itself", l->src);
    return origin_error(err, o, i, why);
  }
  if (!(gbps >= TOPO_MIN_GBPS) || !isfinite(gbps)) {
    snprintf(why, sizeof why, "bandwidth %g GB/s: must be at least %g GB/s", gbps, TOPO_MIN_GBPS);
    return origin_error(err, o, i, why);
  }
  if (!(l->latency_ns >= 0) || !(l->latency_ns <= TOPO_MAX_LATENCY_NS)) {
    snprintf(why, sizeof why, "latency %.16g ns: must be 0 to %.16g ns", l->latency_ns, TOPO_MAX_LATENCY_NS);
    return origin_error(err, o, i, why);
  }
  return 0;
}

typedef struct keyed {
  uint64_t key, idx;
} keyed;

/* The earliest-listed link repeating an earlier (src, dst). */
static int check_duplicates(const chakra_topo_link *links, uint64_t n, const link_origin *o, chakra_error *err) {
  keyed *k = malloc((n ? n : 1) * sizeof *k);
  if (!k) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (uint64_t i = 0; i < n; i++) k[i] = (keyed){(uint64_t)links[i].src << 32 | links[i].dst, i};
  qsort(k, n, sizeof *k, cmp_u64_pair);
  uint64_t dup = UINT64_MAX, first = 0;
  for (uint64_t i = 1; i < n; i++)
    if (k[i].key == k[i - 1].key && k[i].idx < dup && (i < 2 || k[i - 2].key != k[i].key)) {
      dup = k[i].idx;
      first = k[i - 1].idx;
    }
  free(k);
  if (dup == UINT64_MAX) return 0;
  char why[160];
  if (o->path)
    snprintf(why, sizeof why, "duplicate link %u -> %u (first on line %lu)", links[dup].src, links[dup].dst,
             o->lines[first]);
  else
    snprintf(why, sizeof why, "duplicate link %u -> %u (first as link %llu)", links[dup].src, links[dup].dst,
             (unsigned long long)first);
  return origin_error(err, o, dup, why);
}

/* Breadth-first search backwards from NPU dst fills dist (UINT32_MAX =
 * cannot reach it); then each device takes its first out-link that leads
 * one hop closer. Returns the first NPU that cannot reach dst, or
 * UINT32_MAX. */
static uint32_t route_to(chakra_topo *t, uint32_t dst, uint32_t *dist, uint32_t *queue) {
  uint64_t devs = t->devices;
  for (uint64_t v = 0; v < devs; v++) dist[v] = UINT32_MAX;
  uint32_t head = 0, tail = 0;
  dist[dst] = 0;
  queue[tail++] = dst;
  while (head < tail) {
    uint32_t v = queue[head++];
    for (uint64_t k = t->in_off[v]; k < t->in_off[v + 1]; k++) {
      uint32_t u = t->lk[t->in_idx[k]].src;
      if (dist[u] == UINT32_MAX) {
        dist[u] = dist[v] + 1;
        queue[tail++] = u;
      }
    }
  }
  uint32_t *nh = t->nh + (uint64_t)dst * devs, lost = UINT32_MAX;
  for (uint64_t v = 0; v < devs; v++) {
    nh[v] = UINT32_MAX;
    if (dist[v] == UINT32_MAX) {
      if (v < t->npus && lost == UINT32_MAX) lost = (uint32_t)v;
      continue;
    }
    for (uint64_t k = t->out_off[v]; k < t->out_off[v + 1] && v != dst; k++)
      if (dist[t->lk[t->out_idx[k]].dst] + 1 == dist[v]) {
        nh[v] = (uint32_t)t->out_idx[k];
        break;
      }
  }
  return lost;
}

static int build_routes(chakra_topo *t, const link_origin *o, chakra_error *err) {
  t->nh = malloc((uint64_t)t->npus * t->devices * sizeof *t->nh);
  uint32_t *dist = malloc(t->devices * sizeof *dist), *queue = malloc(t->devices * sizeof *queue);
  int rc = 0;
  if (!t->nh || !dist || !queue) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (uint32_t dst = 0; dst < t->npus && !rc; dst++) {
    uint32_t lost = route_to(t, dst, dist, queue);
    if (lost == UINT32_MAX) continue;
    if (o->path)
      rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: line %lu: NPU %u is disconnected: no route from it to NPU %u",
                            o->path, o->npus_line, lost, dst);
    else
      rc = chakra_error_set(err, CHAKRA_EINVAL, "topology: NPU %u is disconnected: no route from it to NPU %u", lost, dst);
  }
  free(dist);
  free(queue);
  return rc;
}

/* The dimension summary: the slowest link's bandwidth, the largest latency. */
static void summarise(chakra_topo *t) {
  double bpns = 0, lat = 0;
  for (uint64_t i = 0; i < t->n_links; i++) {
    if (bpns == 0 || t->lk[i].bytes_per_ns < bpns) bpns = t->lk[i].bytes_per_ns;
    if (t->lk[i].latency_ns > lat) lat = t->lk[i].latency_ns;
  }
  if (bpns == 0) bpns = GIB_PER_GB_NS; /* a single NPU: no links, any positive value */
  t->dim[0] = (chakra_topo_dim){CHAKRA_TOPO_LINKS, t->npus, bpns / GIB_PER_GB_NS, lat};
  t->bpns[0] = bpns;
}

static int links_build(chakra_topo **out, uint32_t npus, uint32_t switches, const chakra_topo_link *links, uint64_t n,
                       const link_origin *o, chakra_error *err) {
  *out = NULL;
  uint64_t devices = (uint64_t)npus + switches;
  if (npus < 1) return chakra_error_set(err, CHAKRA_EINVAL, "%s: a topology needs at least one NPU", o->path ? o->path : "topology");
  if (devices > LINKS_MAX_DEVICES)
    return chakra_error_set(err, CHAKRA_EINVAL, "%s: %llu devices: a link list has at most %u NPUs and switches",
                            o->path ? o->path : "topology", (unsigned long long)devices, LINKS_MAX_DEVICES);
  for (uint64_t i = 0; i < n; i++) {
    int rc = check_link(&links[i], devices, npus, i, o, err);
    if (rc) return rc;
  }
  int rc = check_duplicates(links, n, o, err);
  if (rc) return rc;
  chakra_topo *t = calloc(1, sizeof *t);
  if (!t) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  t->dims = 1;
  t->npus = npus;
  t->offset[0] = 1;
  t->devices = devices;
  t->n_links = n;
  t->link_base[1] = n;
  t->switch_base[1] = switches;
  t->extended = 1;
  t->lk = malloc((n ? n : 1) * sizeof *t->lk);
  if (t->lk)
    for (uint64_t i = 0; i < n; i++) t->lk[i] = links[i], t->lk[i].dim = 0;
  if (!t->lk || topo_build_adjacency(t)) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  if (!rc) rc = build_routes(t, o, err);
  if (rc) {
    chakra_topo_free(t);
    return rc;
  }
  summarise(t);
  *out = t;
  return CHAKRA_OK;
}

int chakra_topo_from_links(chakra_topo **out, uint32_t npus, uint32_t switches, const chakra_topo_link *links,
                           uint64_t n, chakra_error *err) {
  link_origin o = {0};
  return links_build(out, npus, switches, links, n, &o, err);
}

/* ---- the file ---- */

typedef struct list_reader {
  const char *path;
  unsigned long line;
  uint32_t npus, switches;
  unsigned long npus_line;
  chakra_topo_link *links;
  unsigned long *lines;
  uint64_t n, cap;
} list_reader;

static int file_error(chakra_error *err, const list_reader *r, const char *what) {
  return chakra_error_set(err, CHAKRA_EINVAL, "%s: line %lu: %s", r->path, r->line, what);
}

/* A device: a whole number (an NPU id) or sK (switch K). */
static int parse_device(const list_reader *r, const char *tok, uint32_t *out) {
  int sw = tok[0] == 's';
  const char *p = tok + sw;
  if (*p < '0' || *p > '9') return -1;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(p, &end, 10);
  if (*end || errno || v > UINT32_MAX) return -1;
  if (sw) v = v < r->switches ? r->npus + v : UINT32_MAX; /* a missing switch: no device */
  else if (v >= r->npus) v = UINT32_MAX - 1; /* a missing NPU: reported by check_link */
  *out = (uint32_t)v;
  return 0;
}

static int parse_number(const char *tok, const char *unit, double *out) {
  char *end;
  errno = 0;
  *out = strtod(tok, &end);
  if (end == tok || errno || !isfinite(*out)) return -1;
  return *end == 0 || strcmp(end, unit) == 0 ? 0 : -1;
}

static int push_link(list_reader *r, chakra_topo_link l) {
  if (r->n == r->cap) {
    size_t cap = vec_next_cap(r->cap, r->cap + 1, 64, sizeof *r->links, SIZE_MAX);
    if (!cap || vec_resize(&r->links, cap, sizeof *r->links) || vec_resize(&r->lines, cap, sizeof *r->lines)) return -1;
    r->cap = cap;
  }
  r->links[r->n] = l;
  r->lines[r->n++] = r->line;
  return 0;
}

/* A count directive: `npus N` or `switches S`, before the first link. */
static int parse_count(list_reader *r, char **tok, int ntok, chakra_error *err) {
  int is_npus = strcmp(tok[0], "npus") == 0;
  char *end;
  errno = 0;
  unsigned long long v = ntok == 2 ? strtoull(tok[1], &end, 10) : 0;
  if (ntok != 2 || tok[1][0] == '-' || *end || errno || v > LINKS_MAX_DEVICES || (is_npus && v < 1))
    return file_error(err, r, is_npus ? "expected 'npus N' with N from 1 to 4096" : "expected 'switches S' with S from 0 to 4096");
  if (r->n) return file_error(err, r, "npus and switches come before the first link");
  if (is_npus && r->npus_line) return file_error(err, r, "'npus' given twice");
  if (is_npus) r->npus = (uint32_t)v, r->npus_line = r->line;
  else r->switches = (uint32_t)v;
  return 0;
}

/* `SRC DST BW LAT`, `SRC -> DST BW LAT` or `SRC <-> DST BW LAT`. */
static int parse_link(list_reader *r, char **tok, int ntok, chakra_error *err) {
  static const char usage[] = "expected 'SRC DST BANDWIDTH_GBPS LATENCY_NS' (or SRC <-> DST ... for both directions)";
  if (!r->npus_line) return file_error(err, r, "expected 'npus N' before the first link");
  int both = 0, at = 1;
  if (ntok == 5 && (strcmp(tok[1], "->") == 0 || strcmp(tok[1], "<->") == 0)) both = tok[1][0] == '<', at = 2;
  else if (ntok != 4) return file_error(err, r, usage);
  chakra_topo_link l = {0};
  double gbps, lat;
  if (parse_device(r, tok[0], &l.src) || parse_device(r, tok[at], &l.dst) || parse_number(tok[at + 1], "GBps", &gbps) ||
      parse_number(tok[at + 2], "ns", &lat))
    return file_error(err, r, usage);
  if (l.src >= UINT32_MAX - 1 || l.dst >= UINT32_MAX - 1) {
    char why[160];
    const char *bad = l.src >= UINT32_MAX - 1 ? tok[0] : tok[at];
    char sw[48] = "no switches";
    if (r->switches) snprintf(sw, sizeof sw, "switches %u: s0..s%u", r->switches, r->switches - 1);
    snprintf(why, sizeof why, "'%.40s' is not a device (npus %u: 0..%u; %s)", bad, r->npus, r->npus - 1, sw);
    return file_error(err, r, why);
  }
  l.bytes_per_ns = gbps * GIB_PER_GB_NS;
  l.latency_ns = lat;
  if (push_link(r, l)) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  if (both && push_link(r, (chakra_topo_link){l.dst, l.src, l.bytes_per_ns, l.latency_ns, 0}))
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  return 0;
}

static int parse_line(list_reader *r, char *s, chakra_error *err) {
  char *hash = strchr(s, '#');
  if (hash) *hash = 0;
  char *tok[6];
  int ntok = 0;
  for (char *p = strtok(s, " \t\r\n"); p; p = strtok(NULL, " \t\r\n")) {
    if (ntok == 6) return file_error(err, r, "too many fields");
    tok[ntok++] = p;
  }
  if (!ntok) return 0;
  if (strcmp(tok[0], "npus") == 0 || strcmp(tok[0], "switches") == 0) return parse_count(r, tok, ntok, err);
  return parse_link(r, tok, ntok, err);
}

int chakra_topo_load_links(chakra_topo **out, const char *path, chakra_error *err) {
  *out = NULL;
  FILE *f = fopen(path, "rb");
  if (!f) return chakra_error_set(err, CHAKRA_EIO, "%s: cannot open: %s", path, strerror(errno));
  list_reader r = {.path = path};
  char buf[1024];
  int rc = 0;
  while (!rc && fgets(buf, sizeof buf, f)) {
    r.line++;
    size_t len = strlen(buf);
    if (len == sizeof buf - 1 && buf[len - 1] != '\n' && !feof(f)) rc = file_error(err, &r, "line longer than 1,022 bytes");
    else rc = parse_line(&r, buf, err);
  }
  if (!rc && ferror(f)) rc = chakra_error_set(err, CHAKRA_EIO, "%s: read error", path);
  fclose(f);
  if (!rc && !r.npus_line) rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: no 'npus N' line: not a link-list file", path);
  if (!rc) {
    link_origin o = {path, r.lines, r.npus_line};
    rc = links_build(out, r.npus, r.switches, r.links, r.n, &o, err);
  }
  free(r.links);
  free(r.lines);
  return rc;
}
