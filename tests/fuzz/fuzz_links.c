/* fuzz_links.c - libFuzzer target for link-list topology files
 * (docs/topology.md) and inline topology descriptions:
 * chakra_topo_load_links() with its properties, the same bytes through
 * chakra_topo_parse() when they fit on one line, and, for 4 NPUs,
 * chakra_sim_config_load() with the input as the network file and short
 * runs of a small workload in both network models (fuzz_sim.h), which
 * exercise the per-link costs of the congestion-aware model. */
#include <math.h>

#include "fuzz_sim.h"

static void violated(const char *what, uint32_t a, uint32_t b) {
  fprintf(stderr, "fuzz property violated: %s (devices %u, %u)\n", what, a, b);
  abort();
}

/* An error is one line that names the file (the path the library was given). */
static void check_error(const chakra_error *err, const char *path) {
  if (!err->msg[0] || strchr(err->msg, '\n') || strncmp(err->msg, path, strlen(path)) != 0)
    violated("an error that is not one line naming the file", 0, 0);
}

/* Every link as the file allowed it; in- and out-lists agree with the ends. */
static void check_links(const chakra_topo *t) {
  uint64_t n = chakra_topo_links(t), devices = chakra_topo_devices(t);
  for (uint64_t i = 0; i < n; i++) {
    chakra_topo_link l;
    if (chakra_topo_link_at(t, i, &l)) violated("a link index below the count is refused", (uint32_t)i, 0);
    if (l.src >= devices || l.dst >= devices || l.src == l.dst) violated("a link end outside the devices", l.src, l.dst);
    if (!(l.bytes_per_ns > 0) || !isfinite(l.bytes_per_ns) || !(l.latency_ns >= 0)) violated("a link cost out of range", l.src, l.dst);
  }
  for (uint32_t d = 0; d < devices; d++) {
    const uint64_t *out, *in;
    uint32_t no = chakra_topo_out_links(t, d, &out), ni = chakra_topo_in_links(t, d, &in);
    for (uint32_t k = 0; k < no; k++) {
      chakra_topo_link l;
      chakra_topo_link_at(t, out[k], &l);
      if (l.src != d || (k && out[k] <= out[k - 1])) violated("an out-list entry that does not start here", d, l.src);
    }
    for (uint32_t k = 0; k < ni; k++) {
      chakra_topo_link l;
      chakra_topo_link_at(t, in[k], &l);
      if (l.dst != d || (k && in[k] <= in[k - 1])) violated("an in-list entry that does not end here", d, l.dst);
    }
  }
}

/* Routes between the first NPUs and the last: each hop takes a link that
 * starts where the message is, the route ends at its destination, and its
 * length is the hop count; each hop brings it one hop closer (shortest
 * paths, destination-based). */
static void check_routes(const chakra_topo *t) {
  uint32_t n = chakra_topo_npus(t), probe[8], np = 0;
  for (uint32_t i = 0; i < 4 && i < n; i++) probe[np++] = i;
  for (uint32_t i = n > 8 ? n - 4 : 4; i < n; i++) probe[np++] = i;
  for (uint32_t i = 0; i < np; i++)
    for (uint32_t k = 0; k < np; k++) {
      uint32_t a = probe[i], b = probe[k], at = a;
      chakra_topo_hop hops[64];
      int len = chakra_topo_route(t, a, b, hops, 64);
      if (len < 0 || (uint32_t)len != chakra_topo_hops(t, 0, a, b) || (len == 0) != (a == b))
        violated("a route length that is not the hop count", a, b);
      int m = len < 64 ? len : 64;
      for (int h = 0; h < m; h++) {
        chakra_topo_link l;
        if (chakra_topo_link_at(t, hops[h].link, &l) || l.src != at || l.dst != hops[h].next || hops[h].dim != 0)
          violated("a hop on a link that does not start where the message is", at, b);
        at = l.dst;
        if (at < n && chakra_topo_hops(t, 0, at, b) != (uint32_t)(len - h - 1))
          violated("a hop that does not bring the message one hop closer", at, b);
      }
      if (m == len && at != b) violated("a route that does not end at its destination", a, b);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[64];
  int fd = fuzz_input_file(data, size, path, sizeof path);
  chakra_topo *t;
  chakra_error err;
  if (chakra_topo_load_links(&t, path, &err) == 0) {
    check_links(t);
    check_routes(t);
    chakra_topo *c;
    if (chakra_topo_clone(&c, t, &err) == 0) chakra_topo_free(c);
    chakra_topo_free(t);
    fuzz_sim_config(fuzz_sim_system_for(1), path, NULL);
  } else if (err.code != CHAKRA_ENOMEM) {
    check_error(&err, path);
  }
  close(fd);
  char spec[128]; /* the inline form: one short line */
  if (size < sizeof spec && !memchr(data, 0, size) && !memchr(data, '\n', size)) {
    memcpy(spec, data, size);
    spec[size] = 0;
    if (chakra_topo_parse(&t, spec, 50, 500, &err) == 0) {
      if (chakra_topo_dims(t) == 1 && chakra_topo_npus(t) <= 4096) check_routes(t); /* products: fuzz_simnet */
      chakra_topo_free(t);
    }
  }
  return 0;
}
