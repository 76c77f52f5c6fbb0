/* suitesys.c - systems and networks for the suite: the reference system,
 * a network's outer dimension scaled to each workload's rank count, a
 * system file applied key by key with its per-dimension lists cut to the
 * dimensions kept, and the closed division's rules. */
#include "suitesys.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yajl/yajl_tree.h>

#include "chakra/suite.h"
#include "chakra/topo.h"
#include "../util/sha256.h"
#include "../util/jsonw.h"
#include "../util/strbuf.h"

/* HGX-H100 as the shared data configures it (data/configs/system/
 * HGX-H100-validated.json: ring algorithms, localBWAware, 2 active chunks,
 * 4 splits, 3350 GB/s HBM), one entry per dimension, with the roofline on:
 * 989 TFLOP/s, the H100 SXM's dense BF16 peak. */
static const char reference_system[] =
    "{\n"
    "  \"scheduling-policy\": \"LIFO\",\n"
    "  \"endpoint-delay\": 10,\n"
    "  \"active-chunks-per-dimension\": 2,\n"
    "  \"preferred-dataset-splits\": 4,\n"
    "  \"all-reduce-implementation\": [\"ring\", \"ring\"],\n"
    "  \"all-gather-implementation\": [\"ring\", \"ring\"],\n"
    "  \"reduce-scatter-implementation\": [\"ring\", \"ring\"],\n"
    "  \"all-to-all-implementation\": [\"ring\", \"ring\"],\n"
    "  \"collective-optimization\": \"localBWAware\",\n"
    "  \"local-mem-bw\": 3350,\n"
    "  \"boost-mode\": 0,\n"
    "  \"roofline-enabled\": 1,\n"
    "  \"peak-perf\": 989\n"
    "}\n";

/* Eight GPUs on an NVSwitch (HGX-H100-validated.yml: 400 GB/s, 936.25 ns),
 * then one 400 Gb/s NIC per GPU into a non-blocking switch fabric: 50 GB/s
 * and 3 us. The outer count is replaced for each workload. */
static const char reference_network[] =
    "topology: [ Switch, Switch ]\n"
    "npus_count: [ 8, 64 ]  # the outer dimension scales to each workload's ranks\n"
    "bandwidth: [ 400.0, 50.0 ]  # GB/s\n"
    "latency: [ 936.25, 3000.0 ]  # ns\n";

const char *chakra_suite_reference_system(void) { return reference_system; }
const char *chakra_suite_reference_network(void) { return reference_network; }

int suitesys_read(const char *path, char **text, size_t *len, chakra_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f) return chakra_error_set(err, CHAKRA_EIO, "%s: cannot open: %s", path, strerror(errno));
  strbuf b = {0};
  int got = strbuf_read_stream(&b, f, 16u << 20);
  fclose(f);
  if (!got && !strbuf_cstr(&b)) got = STRBUF_ENOMEM;
  if (got) strbuf_free(&b);
  if (got == STRBUF_EREAD) return chakra_error_set(err, CHAKRA_EIO, "%s: cannot read (a directory?)", path);
  if (got == STRBUF_EBIG) return chakra_error_set(err, CHAKRA_EINVAL, "%s: more than 16 MiB", path);
  if (got) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  *text = b.s;
  if (len) *len = b.n;
  return CHAKRA_OK;
}

void chakra_suite_sha256(const void *data, size_t len, char hex[65]) {
  sha256 s;
  sha256_init(&s);
  sha256_update(&s, data, len);
  sha256_hex(&s, hex);
}

int chakra_suite_sha256_file(const char *path, char hex[65], chakra_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f) return chakra_error_set(err, CHAKRA_EIO, "%s: cannot open: %s", path, strerror(errno));
  sha256 s;
  sha256_init(&s);
  static _Thread_local char buf[1 << 16];
  size_t got;
  while ((got = fread(buf, 1, sizeof buf, f)) > 0) sha256_update(&s, buf, got);
  int bad = ferror(f);
  fclose(f);
  if (bad) return chakra_error_set(err, CHAKRA_EIO, "%s: cannot read (a directory?)", path);
  sha256_hex(&s, hex);
  return CHAKRA_OK;
}

/* ---- a value back to JSON text ---- */

static void put_string(strbuf *b, const char *s) {
  size_t n = strlen(s);
  char *d = (char *)strbuf_room(b, JSONW_ESCAPED_MAX(n));
  if (d) b->n += jsonw_escape(d, s, n, 0, NULL);
}

/* v as JSON; arrays keep at most `cut` entries (SIZE_MAX: all). */
static void put_json(strbuf *b, yajl_val v, size_t cut) {
  if (YAJL_IS_STRING(v)) put_string(b, YAJL_GET_STRING(v));
  else if (YAJL_IS_NUMBER(v)) strbuf_put(b, YAJL_GET_NUMBER(v), strlen(YAJL_GET_NUMBER(v)));
  else if (YAJL_IS_TRUE(v)) strbuf_put(b, "true", 4);
  else if (YAJL_IS_FALSE(v)) strbuf_put(b, "false", 5);
  else if (YAJL_IS_ARRAY(v)) {
    strbuf_put(b, "[", 1);
    size_t n = v->u.array.len < cut ? v->u.array.len : cut;
    for (size_t i = 0; i < n; i++) {
      if (i) strbuf_put(b, ",", 1);
      put_json(b, v->u.array.values[i], SIZE_MAX);
    }
    strbuf_put(b, "]", 1);
  } else if (YAJL_IS_OBJECT(v)) {
    strbuf_put(b, "{", 1);
    for (size_t i = 0; i < v->u.object.len; i++) {
      if (i) strbuf_put(b, ",", 1);
      put_string(b, v->u.object.keys[i]);
      strbuf_put(b, ":", 1);
      put_json(b, v->u.object.values[i], SIZE_MAX);
    }
    strbuf_put(b, "}", 1);
  } else strbuf_put(b, "null", 4);
}

/* A system text (the reference's when NULL) as a tree; name for messages. */
static int system_tree(const char *text, const char *name, yajl_val *out, chakra_error *err) {
  char why[256] = "";
  *out = yajl_tree_parse(text ? text : reference_system, why, sizeof why);
  if (!*out) {
    for (char *p = why; *p; p++)
      if (*p == '\n' || *p == '\r') *p = ' ';
    return chakra_error_set(err, CHAKRA_EINVAL, "%s: not JSON: %s", name, why);
  }
  if (!YAJL_IS_OBJECT(*out)) {
    yajl_tree_free(*out);
    *out = NULL; /* the callers free what is left */
    return chakra_error_set(err, CHAKRA_EINVAL, "%s: expected a JSON object of system keys", name);
  }
  return CHAKRA_OK;
}

static int is_per_dim(const char *key) {
  size_t n = strlen(key);
  return n > 15 && strcmp(key + n - 15, "-implementation") == 0;
}

static int apply_system(chakra_sim_config *c, yajl_val sys, const char *name, int dims, chakra_error *err) {
  for (size_t i = 0; i < sys->u.object.len; i++) {
    const char *key = sys->u.object.keys[i];
    yajl_val v = sys->u.object.values[i];
    strbuf b = {0};
    put_json(&b, v, is_per_dim(key) && YAJL_IS_ARRAY(v) ? (size_t)dims : SIZE_MAX);
    const char *text = strbuf_cstr(&b);
    if (!text) return strbuf_free(&b), chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    int rc = chakra_sim_config_set(c, key, text, NULL, NULL, err);
    strbuf_free(&b);
    if (rc) {
      chakra_error_prefix(err, "%s: ", name);
      return rc;
    }
  }
  return CHAKRA_OK;
}

/* ---- the network scaled ---- */

/* The reference network's dimensions (the YAML above). */
static const chakra_topo_dim reference_dims[2] = {{CHAKRA_TOPO_SWITCH, 8, 400.0, 936.25},
                                                  {CHAKRA_TOPO_SWITCH, 64, 50.0, 3000.0}};

static int network_dims(const char *network, chakra_topo_dim *dims, int *n, chakra_error *err) {
  if (!network) {
    memcpy(dims, reference_dims, sizeof reference_dims);
    *n = 2;
    return CHAKRA_OK;
  }
  chakra_topo *t = NULL;
  int rc = chakra_topo_open(&t, network, 0, -1, err);
  if (rc) return rc;
  *n = chakra_topo_dims(t);
  for (int d = 0; d < *n; d++) dims[d] = *chakra_topo_dim_at(t, d);
  chakra_topo_free(t);
  if (*n == 1 && dims[0].kind == CHAKRA_TOPO_LINKS)
    return chakra_error_set(err, CHAKRA_EINVAL,
                            "%s: a link list cannot scale to each workload's rank count (expected network YAML or an "
                            "inline topology such as switch:8)",
                            network);
  return CHAKRA_OK;
}

/* The rule of docs/suite.md: the outer dimension takes ranks / (inner
 * NPUs); outer dimensions a workload does not reach are dropped, and a
 * workload smaller than the innermost dimension gets that dimension cut. */
static int scale_dims(chakra_topo_dim *dims, int *n, uint32_t ranks, const char *name, chakra_error *err) {
  while (*n > 1) {
    uint64_t inner = 1;
    for (int d = 0; d < *n - 1; d++) inner *= dims[d].npus;
    if (ranks >= inner && ranks % inner == 0) {
      dims[*n - 1].npus = (uint32_t)(ranks / inner);
      if (dims[*n - 1].npus == 1) --*n;
      return CHAKRA_OK;
    }
    if (ranks > inner)
      return chakra_error_set(err, CHAKRA_EINVAL,
                              "%s: a workload of %u ranks does not fill whole units of %llu NPUs (the dimensions "
                              "inside the outer one)",
                              name, ranks, (unsigned long long)inner);
    --*n;
  }
  dims[0].npus = ranks;
  return CHAKRA_OK;
}

int suitesys_config(chakra_sim_config **out, const chakra_suite_sut *s, uint32_t ranks, chakra_error *err) {
  *out = NULL;
  chakra_topo_dim dims[CHAKRA_TOPO_MAX_DIMS];
  int n = s->n_dims;
  memcpy(dims, s->dims, sizeof dims);
  int rc = scale_dims(dims, &n, ranks, s->network_name, err);
  chakra_topo *t = NULL;
  if (!rc) rc = chakra_topo_new(&t, dims, n, err);
  chakra_sim_config *c = NULL;
  if (!rc) rc = chakra_sim_config_new(&c, t, err);
  if (!rc) rc = apply_system(c, s->system, s->system_name, n, err);
  chakra_topo_free(t);
  if (rc) chakra_sim_config_free(c);
  else *out = c;
  return rc;
}

int chakra_suite_config(chakra_sim_config **out, const char *system, const char *network, uint32_t ranks,
                        chakra_error *err) {
  *out = NULL;
  chakra_suite_sut *s = NULL;
  int rc = chakra_suite_sut_open(&s, system, network, err);
  if (!rc) rc = suitesys_config(out, s, ranks, err);
  chakra_suite_sut_free(s);
  return rc;
}

/* ---- the closed division ---- */

/* Keys a closed submission may set to its hardware's values. */
static int is_physical(const char *key) {
  static const char *const keys[] = {"peak-perf", "local-mem-bw", "endpoint-delay"};
  for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
    if (strcmp(key, keys[i]) == 0) return 1;
  return 0;
}

static void rule_problem(chakra_diag_fn diag, void *ctx, const char *file, const char *key, const char *what,
                         uint64_t *problems) {
  chakra_problem p = chakra_problem_make(CHAKRA_SEV_ERROR, what);
  p.file = file;
  p.field = key;
  if (diag) diag(ctx, &p);
  ++*problems;
}

/* The same JSON value; per-dimension lists compare entry by entry over
 * the reference's first entry (every dimension runs the same algorithm). */
static int same_value(yajl_val a, yajl_val ref, const char *key) {
  if (is_per_dim(key) && YAJL_IS_ARRAY(a) && YAJL_IS_ARRAY(ref) && ref->u.array.len) {
    if (!a->u.array.len) return 0;
    for (size_t i = 0; i < a->u.array.len; i++)
      if (!same_value(a->u.array.values[i], ref->u.array.values[0], "")) return 0;
    return 1;
  }
  if (YAJL_IS_NUMBER(a) && YAJL_IS_NUMBER(ref)) return YAJL_GET_DOUBLE(a) == YAJL_GET_DOUBLE(ref);
  strbuf x = {0}, y = {0};
  put_json(&x, a, SIZE_MAX);
  put_json(&y, ref, SIZE_MAX);
  int same = !x.oom && !y.oom && x.n == y.n && memcmp(x.s, y.s, x.n) == 0;
  strbuf_free(&x);
  strbuf_free(&y);
  return same;
}

int suitesys_rules_closed(const chakra_suite_sut *s, chakra_diag_fn diag, void *ctx, uint64_t *problems,
                          chakra_error *err) {
  *problems = 0;
  yajl_val sys = s->system, ref = NULL;
  int rc = system_tree(NULL, "the reference system", &ref, err);
  const char *name = s->system_name;
  for (size_t i = 0; !rc && i < sys->u.object.len; i++) {
    const char *key = sys->u.object.keys[i];
    if (is_physical(key)) continue;
    const char *path[] = {key, NULL};
    yajl_val want = yajl_tree_get(ref, path, yajl_t_any);
    char what[300];
    if (!want) {
      snprintf(what, sizeof what, "the closed division allows only the reference system's keys; this one is not one");
      rule_problem(diag, ctx, name, key, what, problems);
    } else if (!same_value(sys->u.object.values[i], want, key)) {
      strbuf b = {0};
      put_json(&b, want, SIZE_MAX);
      snprintf(what, sizeof what,
               "the closed division keeps the reference's %s (only peak-perf, local-mem-bw and endpoint-delay, "
               "the hardware's quantities, may change)",
               strbuf_cstr(&b) ? b.s : "value");
      strbuf_free(&b);
      rule_problem(diag, ctx, name, key, what, problems);
    }
  }
  for (size_t i = 0; !rc && i < ref->u.object.len; i++) {
    const char *key = ref->u.object.keys[i];
    const char *path[] = {key, NULL};
    if (!is_physical(key) && !yajl_tree_get(sys, path, yajl_t_any))
      rule_problem(diag, ctx, name, key, "missing: the closed division keeps the reference system's value",
                   problems);
  }
  if (ref) yajl_tree_free(ref);
  return rc;
}

int chakra_suite_rules_closed(const char *system, const char *network, chakra_diag_fn diag, void *ctx,
                              uint64_t *problems, chakra_error *err) {
  *problems = 0;
  chakra_suite_sut *s = NULL;
  int rc = chakra_suite_sut_open(&s, system, network, err);
  if (!rc) rc = suitesys_rules_closed(s, diag, ctx, problems, err);
  chakra_suite_sut_free(s);
  return rc;
}

double suitesys_peak(const chakra_suite_sut *s) {
  const char *path[] = {"peak-perf", NULL};
  yajl_val v = yajl_tree_get(s->system, path, yajl_t_number);
  return v ? YAJL_GET_DOUBLE(v) : 0;
}

int suitesys_network_text(const chakra_suite_sut *s, char **out, chakra_error *err) {
  const chakra_topo_dim *dims = s->dims;
  int n = s->n_dims;
  strbuf b = {0};
  for (int d = 0; d < n; d++) {
    char part[160], count[16];
    if (d == n - 1 && n > 1) snprintf(count, sizeof count, "N");
    else snprintf(count, sizeof count, "%u", dims[d].npus);
    snprintf(part, sizeof part, "%s%s %s x %g GB/s %g ns", d ? "; " : "", chakra_topo_kind_name(dims[d].kind), count,
             dims[d].bandwidth_gbps, dims[d].latency_ns);
    strbuf_put(&b, part, strlen(part));
  }
  if (!strbuf_cstr(&b)) return strbuf_free(&b), chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  *out = b.s;
  return CHAKRA_OK;
}

/* ---- the system under test, read once ---- */

static int nomem(chakra_error *err) { return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory"); }

/* A file's text and SHA-256, and the path a result records (its real
 * path; the reference's name when path is NULL). */
static int read_kept(const char *path, const char *builtin, char **rec, char **sha, char **text, chakra_error *err) {
  size_t len = 0;
  if (path) {
    int rc = suitesys_read(path, text, &len, err);
    if (rc) return rc;
  } else if (!(*text = strdup(builtin)))
    return nomem(err);
  else
    len = strlen(*text);
  char hex[65];
  chakra_suite_sha256(*text, len, hex);
  *rec = path ? realpath(path, NULL) : strdup(CHAKRA_SUITE_REFERENCE);
  if (path && !*rec) *rec = strdup(path);
  *sha = strdup(hex);
  return *rec && *sha ? CHAKRA_OK : nomem(err);
}

/* The network: an inline topology (no such file) is its own text; a file
 * is parsed by the topology reader (which takes a path; its messages come
 * first), read, and parsed again, so the dimensions kept are the text's. */
static int network_kept(chakra_suite_sut *s, const char *path, chakra_error *err) {
  int rc = network_dims(path, s->dims, &s->n_dims, err);
  struct stat st;
  if (!rc && path && stat(path, &st) != 0) {
    char hex[65];
    chakra_suite_sha256(path, strlen(path), hex);
    s->network_text = strdup(path), s->network_path = strdup(path), s->network_sha256 = strdup(hex);
    return s->network_text && s->network_path && s->network_sha256 ? CHAKRA_OK : nomem(err);
  }
  if (!rc) rc = read_kept(path, reference_network, &s->network_path, &s->network_sha256, &s->network_text, err);
  chakra_topo_dim again[CHAKRA_TOPO_MAX_DIMS];
  int n = 0;
  if (!rc && path) rc = network_dims(path, again, &n, err);
  if (!rc && path && (n != s->n_dims || memcmp(again, s->dims, (size_t)n * sizeof *again) != 0))
    rc = chakra_error_set(err, CHAKRA_EIO, "%s: changed while it was read", path);
  return rc;
}

int chakra_suite_sut_open(chakra_suite_sut **out, const char *system, const char *network, chakra_error *err) {
  *out = NULL;
  chakra_suite_sut *s = calloc(1, sizeof *s);
  if (!s) return nomem(err);
  s->given = system || network;
  s->system_name = strdup(system ? system : "the reference system");
  s->network_name = strdup(network ? network : "the reference network");
  int rc = s->system_name && s->network_name ? CHAKRA_OK : nomem(err);
  if (!rc) rc = read_kept(system, reference_system, &s->system_path, &s->system_sha256, &s->system_text, err);
  if (!rc) rc = system_tree(s->system_text, s->system_name, &s->system, err);
  if (!rc) rc = network_kept(s, network, err);
  if (rc) chakra_suite_sut_free(s);
  else *out = s;
  return rc;
}

void chakra_suite_sut_free(chakra_suite_sut *s) {
  if (!s) return;
  char *strs[] = {s->system_name, s->system_path, s->system_sha256, s->system_text,
                  s->network_name, s->network_path, s->network_sha256, s->network_text};
  for (size_t i = 0; i < sizeof strs / sizeof *strs; i++) free(strs[i]);
  if (s->system) yajl_tree_free(s->system);
  free(s);
}

