/* spec.c - naming a topology: the inline form (mesh:8x8@50,500) and
 * chakra_topo_open(), which tells an inline description, a network YAML
 * and a link-list file apart (docs/topology.md). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "topo_impl.h"

typedef struct inline_kind {
  const char *name;
  chakra_topo_kind kind;
  int one_dim;            /* a single size, no AxB */
} inline_kind;

static const inline_kind kinds[] = {
    {"mesh", CHAKRA_TOPO_MESH, 0},      {"torus", CHAKRA_TOPO_RING, 0},
    {"hypercube", CHAKRA_TOPO_MESH, 1}, {"ring", CHAKRA_TOPO_RING, 1},
    {"switch", CHAKRA_TOPO_SWITCH, 1},  {"fc", CHAKRA_TOPO_FULLY_CONNECTED, 1},
};
#define N_KINDS (sizeof kinds / sizeof *kinds)
#define KIND_LIST "mesh:AxB[xC..], torus:AxB[xC..], hypercube:N, ring:N, switch:N, fc:N"

static const inline_kind *find_kind(const char *s, size_t len) {
  for (size_t i = 0; i < N_KINDS; i++)
    if (strlen(kinds[i].name) == len && strncmp(kinds[i].name, s, len) == 0) return &kinds[i];
  return NULL;
}

/* A number with an optional unit suffix (one of units, NULL-terminated). */
static int number_with_unit(const char *s, const char *end, const char *const *units, double *out) {
  char buf[64];
  size_t len = (size_t)(end - s);
  if (len == 0 || len >= sizeof buf) return -1;
  memcpy(buf, s, len);
  buf[len] = 0;
  char *e;
  errno = 0;
  *out = strtod(buf, &e);
  if (e == buf || errno || !isfinite(*out)) return -1;
  if (!*e) return 0;
  for (int i = 0; units[i]; i++)
    if (strcmp(e, units[i]) == 0) return 0;
  return -1;
}

/* "@BW,LAT" */
static int parse_suffix(const char *spec, const char *at, double *bw, double *lat, chakra_error *err) {
  static const char *const bw_units[] = {"GBps", "GB/s", NULL}, *const lat_units[] = {"ns", NULL};
  const char *comma = strchr(at, ',');
  if (!comma || number_with_unit(at + 1, comma, bw_units, bw) ||
      number_with_unit(comma + 1, comma + strlen(comma), lat_units, lat))
    return chakra_error_set(err, CHAKRA_EINVAL, "topology '%s': expected '@BANDWIDTH_GBPS,LATENCY_NS' after the shape (e.g. mesh:8x8@50,500)", spec);
  return 0;
}

enum { SHAPE_SYNTAX = -1, SHAPE_TOO_MANY = -2, SHAPE_TOO_LARGE = -3 };

/* "8x8x4" into sizes; returns the count, or a SHAPE_* error. */
static int parse_shape(const char *s, const char *end, uint32_t *sizes, int max) {
  int n = 0;
  while (s < end) {
    if (!isdigit((unsigned char)*s)) return SHAPE_SYNTAX;
    if (n == max) return SHAPE_TOO_MANY;
    unsigned long long v = 0;
    while (s < end && isdigit((unsigned char)*s)) {
      v = v * 10 + (unsigned)(*s++ - '0');
      if (v > (1u << 24)) return SHAPE_TOO_LARGE;
    }
    if (v < 1) return SHAPE_SYNTAX;
    sizes[n++] = (uint32_t)v;
    if (s < end && *s++ != 'x') return SHAPE_SYNTAX;
    if (s == end && s[-1] == 'x') return SHAPE_SYNTAX;
  }
  return n ? n : SHAPE_SYNTAX;
}

/* The dimensions of the hypercube of n NPUs: log2(n) lines of two. */
static int hypercube_dims(uint32_t n, uint32_t *sizes) {
  int k = 0;
  if (n < 2 || (n & (n - 1))) return SHAPE_SYNTAX;
  for (; n > 1; n >>= 1) {
    if (k == CHAKRA_TOPO_MAX_DIMS) return SHAPE_TOO_MANY;
    sizes[k++] = 2;
  }
  return k;
}

/* How many dimensions the shape after the colon asks for. */
static int dims_asked(const char *shape, const char *end, int cube) {
  if (cube) return 63 - __builtin_clzll(strtoull(shape, NULL, 10) | 1); /* a power of two */
  int n = 1;
  for (; shape < end; shape++) n += *shape == 'x';
  return n;
}

static int shape_error(const char *spec, const inline_kind *k, const char *end, int why, chakra_error *err) {
  int cube = strcmp(k->name, "hypercube") == 0;
  if (why == SHAPE_TOO_MANY)
    return chakra_error_set(err, CHAKRA_EINVAL, "topology '%s': %d dimensions: at most %d%s", spec,
                            dims_asked(strchr(spec, ':') + 1, end, cube), CHAKRA_TOPO_MAX_DIMS,
                            cube ? " (hypercube:65536 is the largest)" : "");
  if (why == SHAPE_TOO_LARGE)
    return chakra_error_set(err, CHAKRA_EINVAL, "topology '%s': %smore than %u NPUs (the limit)", spec,
                            k->one_dim ? "" : "a dimension of ", 1u << 24);
  return chakra_error_set(err, CHAKRA_EINVAL, "topology '%s': bad shape for %s (expected %s)", spec, k->name,
                          k->one_dim ? (cube ? "a power of two from 2 to 65536 NPUs, e.g. hypercube:64"
                                             : "one NPU count, e.g. ring:8")
                                     : "sizes from 1 joined by x, e.g. mesh:8x8 or mesh:4x4x4");
}

int chakra_topo_parse(chakra_topo **out, const char *spec, double bandwidth_gbps, double latency_ns,
                      chakra_error *err) {
  *out = NULL;
  const char *colon = strchr(spec, ':');
  const inline_kind *k = colon ? find_kind(spec, (size_t)(colon - spec)) : NULL;
  if (!k)
    return chakra_error_set(err, CHAKRA_EINVAL, "topology '%s': expected KIND:SHAPE, one of " KIND_LIST, spec);
  const char *at = strchr(colon, '@');
  const char *end = at ? at : colon + strlen(colon);
  uint32_t sizes[CHAKRA_TOPO_MAX_DIMS];
  int n = parse_shape(colon + 1, end, sizes, CHAKRA_TOPO_MAX_DIMS);
  if (n > 0 && k->one_dim && n != 1) n = SHAPE_SYNTAX;
  if (n > 0 && strcmp(k->name, "hypercube") == 0) n = hypercube_dims(sizes[0], sizes);
  if (n < 1) return shape_error(spec, k, end, n, err);
  int rc = at ? parse_suffix(spec, at, &bandwidth_gbps, &latency_ns, err) : 0;
  if (rc) return rc;
  if (at && !(bandwidth_gbps > 0))
    return chakra_error_set(err, CHAKRA_EINVAL, "topology '%s': link bandwidth %g GB/s: expected more than 0 (e.g. %.*s@50,500)",
                            spec, bandwidth_gbps, (int)(at - spec), spec);
  if (!(bandwidth_gbps > 0))
    return chakra_error_set(err, CHAKRA_EINVAL, "topology '%s': needs a link bandwidth: write %s@GBPS,NS (e.g. mesh:8x8@50,500)", spec, spec);
  chakra_topo_dim dims[CHAKRA_TOPO_MAX_DIMS];
  for (int d = 0; d < n; d++) dims[d] = (chakra_topo_dim){k->kind, sizes[d], bandwidth_gbps, latency_ns};
  rc = chakra_topo_new(out, dims, n, err);
  if (rc) chakra_error_prefix(err, "topology '%s': ", spec);
  return rc;
}

/* A link-list file starts (after comments and blank lines) with `npus`,
 * `switches` or a link (a digit); anything else is left to the YAML reader
 * (its keys start with a letter). */
static int looks_like_link_list(FILE *f) {
  char buf[256];
  while (fgets(buf, sizeof buf, f)) {
    char *p = buf;
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
    if (!*p || *p == '#') continue;
    if (isdigit((unsigned char)*p)) return 1;
    size_t w = strcspn(p, " \t\r\n");
    return (w == 4 && strncmp(p, "npus", 4) == 0) || (w == 8 && strncmp(p, "switches", 8) == 0);
  }
  return 0;
}

static int has_suffix(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && strcmp(s + a - b, suf) == 0;
}

int chakra_topo_open(chakra_topo **out, const char *spec_or_path, double bandwidth_gbps, double latency_ns,
                     chakra_error *err) {
  *out = NULL;
  FILE *f = fopen(spec_or_path, "rb");
  if (!f) {
    const char *colon = strchr(spec_or_path, ':');
    if (colon && find_kind(spec_or_path, (size_t)(colon - spec_or_path)))
      return chakra_topo_parse(out, spec_or_path, bandwidth_gbps, latency_ns, err);
    return chakra_error_set(err, CHAKRA_EIO, "%s: cannot open: %s (nor is it an inline topology: " KIND_LIST ")",
                            spec_or_path, strerror(errno));
  }
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
    fclose(f);
    return chakra_error_set(err, CHAKRA_EIO, "%s: is a directory", spec_or_path);
  }
  int list = !has_suffix(spec_or_path, ".yml") && !has_suffix(spec_or_path, ".yaml") && looks_like_link_list(f);
  fclose(f);
  return list ? chakra_topo_load_links(out, spec_or_path, err) : chakra_topo_load(out, spec_or_path, err);
}
