/* config.c - simulator configuration files; see config.h. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <yajl/yajl_tree.h>

#include "../util/commgroups.h"
#include "../util/strbuf.h"
#include "../util/vec.h"
#include "../util/ymap.h"
#include "chakra/build.h"

/* ---- small file helpers ---- */

static char *read_text(const char *path, chakra_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    chakra_error_set(err, CHAKRA_EIO, "%s: cannot open: %s", path, strerror(errno));
    return NULL;
  }
  strbuf text = {0};
  int got = strbuf_read_stream(&text, f, SIZE_MAX - 1), e = errno; /* a directory reads as an error, not as an empty text */
  fclose(f);
  if (got == STRBUF_EREAD) {
    strbuf_free(&text);
    chakra_error_set(err, CHAKRA_EIO, "%s: read failed: %s", path, strerror(e));
    return NULL;
  }
  if (got || !strbuf_cstr(&text)) {
    strbuf_free(&text);
    chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", path);
    return NULL;
  }
  return text.s;
}

static yajl_val parse_json(const char *path, chakra_error *err) {
  char *text = read_text(path, err);
  if (!text) return NULL;
  char why[512] = "";
  yajl_val v = yajl_tree_parse(text, why, sizeof why);
  free(text);
  if (!v) {
    for (char *p = why; *p; p++)
      if (*p == '\n') *p = ' ';
    chakra_error_set(err, CHAKRA_EFORMAT, "%s: invalid JSON: %s", path, why);
  }
  return v;
}

static int file_exists(const char *p) {
  struct stat st;
  return stat(p, &st) == 0;
}

static char *dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return strdup(".");
  return strndup(path, (size_t)(slash - path));
}

char *sim_config_resolve_prefix(const char *prefix, const char *base_dir) {
  size_t n = strlen(prefix) + (base_dir ? strlen(base_dir) : 0) + 16;
  char *probe = malloc(n);
  if (!probe) return NULL;
  chakra_rank_path(probe, n, prefix, 0);
  if (prefix[0] == '/' || !base_dir || file_exists(probe)) {
    free(probe);
    return strdup(prefix);
  }
  snprintf(probe, n, "%s/%s", base_dir, prefix), chakra_rank_path(probe + strlen(probe), n - strlen(probe), "", 0);
  if (file_exists(probe)) {
    snprintf(probe, n, "%s/%s", base_dir, prefix);
    return probe;
  }
  free(probe);
  return strdup(prefix); /* the caller reports the missing files */
}

/* ---- system JSON ---- */

static int parse_algo(const char *s, sim_algo *a) {
  memset(a, 0, sizeof *a);
  if (strncmp(s, "one", 3) == 0 && (s[3] >= 'A' && s[3] <= 'Z')) {
    a->one = 1;
    s += 3;
    char lower[64];
    snprintf(lower, sizeof lower, "%c%s", s[0] + 32, s + 1);
    return parse_algo(lower, a) ? -1 : (a->one = 1, a->kind == ALGO_DOUBLE_BINARY_TREE ? -1 : 0);
  }
  if (strcmp(s, "ring") == 0) a->kind = ALGO_RING;
  else if (strcmp(s, "halvingDoubling") == 0) a->kind = ALGO_HALVING_DOUBLING;
  else if (strcmp(s, "doubleBinaryTree") == 0) a->kind = ALGO_DOUBLE_BINARY_TREE;
  else if (strncmp(s, "direct", 6) == 0) {
    a->kind = ALGO_DIRECT;
    if (s[6]) {
      char *end;
      long w = strtol(s + 6, &end, 10);
      if (*end || w < 1) return -1;
      a->window = (int)w;
    }
  } else return -1;
  return 0;
}

static const char *const impl_keys[SIM_NCOLL] = {"all-reduce", "all-gather", "reduce-scatter", "all-to-all"};

static int sys_impl_list(const char *path, const char *key, yajl_val v, sim_coll_impl *impl, int custom,
                         const char *base, chakra_error *err) {
  if (!YAJL_IS_ARRAY(v)) return chakra_error_set(err, CHAKRA_EINVAL, "%s: \"%s\" must be a list", path, key);
  size_t n = v->u.array.len;
  if (custom) {
    if (n != 1 || !YAJL_IS_STRING(v->u.array.values[0]))
      return chakra_error_set(err, CHAKRA_EINVAL, "%s: \"%s\" must be a list of exactly one trace prefix", path, key);
    free(impl->custom);
    impl->custom = sim_config_resolve_prefix(v->u.array.values[0]->u.string, base);
    return impl->custom ? 0 : CHAKRA_ENOMEM;
  }
  if (n < 1 || n > SIM_MAX_DIMS)
    return chakra_error_set(err, CHAKRA_EINVAL, "%s: \"%s\" must list 1 to %d algorithms", path, key, SIM_MAX_DIMS);
  for (size_t i = 0; i < n; i++) {
    yajl_val e = v->u.array.values[i];
    char q[96];
    if (!YAJL_IS_STRING(e) || parse_algo(e->u.string, &impl->algo[i]))
      return chakra_error_set(err, CHAKRA_EINVAL,
                              "%s: \"%s\"[%zu]: cannot interpret collective implementation %s%s%s (ring, direct, directN, halvingDoubling, doubleBinaryTree, oneRing, oneDirect, oneHalvingDoubling)",
                              path, key, i, YAJL_IS_STRING(e) ? "'" : "", YAJL_IS_STRING(e) ? cg_quote(e->u.string, q, sizeof q) : "(not a string)", YAJL_IS_STRING(e) ? "'" : "");
  }
  impl->n = (int)n;
  return 0;
}

static int sys_number(const char *path, const char *key, yajl_val v, double lo, double *out, chakra_error *err) {
  if (!YAJL_IS_NUMBER(v)) return chakra_error_set(err, CHAKRA_EINVAL, "%s: \"%s\" must be a number", path, key);
  *out = YAJL_GET_DOUBLE(v);
  if (!isfinite(*out) || *out < lo)
    return chakra_error_set(err, CHAKRA_EINVAL, "%s: \"%s\" must be >= %.16g", path, key, lo);
  return 0;
}

/* A count (chunks, splits, nodes): a whole number in [lo, hi]. Stored in
 * 32 bits, and each chunk of a collective is simulated on its own, so
 * values beyond hi are refused rather than cut or left to run for hours. */
static int sys_count(const char *path, const char *key, yajl_val v, double lo, double hi, uint32_t *out,
                     chakra_error *err) {
  double d = 0;
  int rc = sys_number(path, key, v, lo, &d, err);
  if (rc) return rc;
  if (d > hi || d != floor(d))
    return chakra_error_set(err, CHAKRA_EINVAL, "%s: \"%s\" must be a whole number from %.16g to %.16g, not %.16g", path, key,
                            lo, hi, d);
  *out = (uint32_t)d;
  return 0;
}

static int per_node_yaml(const char *path, sim_sys_config *c, const char *base, chakra_error *err) {
  ymap m;
  int rc = ymap_read(path, &m, err);
  if (rc) return rc;
  c->per_node_ids = calloc((size_t)m.n + 1, sizeof *c->per_node_ids);
  c->per_node_prefix = calloc((size_t)m.n + 1, sizeof *c->per_node_prefix);
  if (!c->per_node_ids || !c->per_node_prefix) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (int i = 0; i < m.n && !rc; i++) {
    char *end;
    errno = 0;
    unsigned long long id = strtoull(m.e[i].key, &end, 10);
    if (*end || errno || m.e[i].key[0] == '-' || !m.e[i].key[0])
      rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: line %lu: YAML mapping keys must be integers (workload node ids), found '%s'", path, m.e[i].line, m.e[i].key);
    else if (m.e[i].is_list || m.e[i].n != 1)
      rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: line %lu: the value of node %llu must be one trace prefix", path, m.e[i].line, id);
    else {
      c->per_node_ids[i] = id;
      c->per_node_prefix[i] = sim_config_resolve_prefix(m.e[i].vals[0], base);
      c->n_per_node = i + 1;
    }
  }
  ymap_free(&m);
  return rc;
}

int sim_config_system_key(const char *path, const char *k, yajl_val v, sim_sys_config *c, const char *base,
                          const sim_diag *diag, chakra_error *err) {
  double d = 0;
  for (int i = 0; i < SIM_NCOLL; i++) {
    size_t kl = strlen(impl_keys[i]);
    if (strncmp(k, impl_keys[i], kl) != 0) continue;
    if (strcmp(k + kl, "-implementation") == 0) return sys_impl_list(path, k, v, &c->impl[i], 0, base, err);
    if (strcmp(k + kl, "-implementation-custom") == 0) return sys_impl_list(path, k, v, &c->impl[i], 1, base, err);
  }
  if (strcmp(k, "scheduling-policy") == 0 || strcmp(k, "collective-optimization") == 0) {
    const char *s = YAJL_IS_STRING(v) ? v->u.string : "";
    if (k[0] == 's') {
      if (strcmp(s, "LIFO") == 0) c->policy = POLICY_LIFO;
      else if (strcmp(s, "FIFO") == 0) c->policy = POLICY_FIFO;
      else if (strcmp(s, "EXPLICIT") == 0) c->policy = POLICY_EXPLICIT;
      else return chakra_error_set(err, CHAKRA_EINVAL, "%s: \"scheduling-policy\" must be LIFO, FIFO or EXPLICIT", path);
    } else {
      if (strcmp(s, "baseline") == 0) c->local_bw_aware = 0;
      else if (strcmp(s, "localBWAware") == 0) c->local_bw_aware = 1;
      else return chakra_error_set(err, CHAKRA_EINVAL, "%s: \"collective-optimization\" must be baseline or localBWAware", path);
    }
    return 0;
  }
  if (strcmp(k, "per-node-custom-implementation") == 0) {
    if (!YAJL_IS_STRING(v)) return chakra_error_set(err, CHAKRA_EINVAL, "%s: \"%s\" must be a path", path, k);
    char *p = v->u.string[0] == '/' || file_exists(v->u.string) ? strdup(v->u.string) : NULL;
    if (!p) {
      size_t n = strlen(base) + strlen(v->u.string) + 2;
      p = malloc(n);
      if (p) snprintf(p, n, "%s/%s", base, v->u.string);
    }
    int rc = p ? per_node_yaml(p, c, base, err) : CHAKRA_ENOMEM;
    free(p);
    return rc;
  }
  static const char *const noops[] = {"boost-mode", "intra-dimension-scheduling", "inter-dimension-scheduling",
                                      "L", "o", "g", "G", "local-reduction-delay", "local-mem-trace-filename"};
  for (size_t i = 0; i < sizeof noops / sizeof *noops; i++)
    if (strcmp(k, noops[i]) == 0) {
      if (strcmp(k, "boost-mode") != 0) sim_diag_warn(diag, path, "\"%s\" has no effect (as in ASTRA-sim)", k);
      return 0;
    }
  struct { const char *key; double lo; } nums[] = {
      {"endpoint-delay", 0}, {"active-chunks-per-dimension", 1}, {"preferred-dataset-splits", 1},
      {"local-mem-bw", 0}, {"peak-perf", 0}, {"roofline-enabled", 0}, {"replay-only", 0},
      {"trace-enabled", 0}, {"track-local-mem", 0}, {"model-shared-bus", 0}};
  for (size_t i = 0; i < sizeof nums / sizeof *nums; i++) {
    if (strcmp(k, nums[i].key) != 0) continue;
    if (i == 1 || i == 2)
      return sys_count(path, k, v, 1, SIM_MAX_CHUNKS, i == 1 ? &c->active_chunks : &c->splits, err);
    int rc = sys_number(path, k, v, nums[i].lo, &d, err);
    if (rc) return rc;
    switch (i) {
      case 0:
        if (d > SIM_MAX_LATENCY_NS) return chakra_error_set(err, CHAKRA_EINVAL, "%s: \"endpoint-delay\": %g ns is more than 10^15 ns", path, d);
        c->endpoint_delay = d;
        break;
      case 3: c->local_mem_bw = d; break;
      case 4: c->peak_perf = d; break;
      case 5: c->roofline = d != 0; break;
      case 6: c->replay_only = d != 0; break;
      case 7: c->trace_enabled = d != 0; break;
      case 8: c->track_local_mem = d != 0; break;
      case 9:
        if (d != 0) return chakra_error_set(err, CHAKRA_EINVAL, "%s: \"model-shared-bus\": the LogGP shared-bus model is not supported", path);
        break;
    }
    return 0;
  }
  char q[96];
  return chakra_error_set(err, CHAKRA_EINVAL, "%s: unknown key \"%s\"", path, cg_quote(k, q, sizeof q));
}

int sim_config_system(const char *path, sim_sys_config *c, const sim_diag *d, chakra_error *err) {
  memset(c, 0, sizeof *c);
  c->endpoint_delay = 10;
  c->active_chunks = 1;
  yajl_val root = parse_json(path, err);
  if (!root) return err ? err->code : CHAKRA_EFORMAT;
  int rc = 0;
  char *base = dir_of(path);
  if (!YAJL_IS_OBJECT(root)) rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: expected a JSON object", path);
  /* An absent "collective-optimization" is baseline without a word: the
   * shipped custom-collective configuration leaves it out, and a warning
   * on every run of a correct file teaches users to ignore warnings
   * (issue 10; ASTRA-sim leaves the field uninitialised). Wrong values are
   * still errors. */
  int have_policy = 0;
  for (size_t i = 0; !rc && i < root->u.object.len; i++) {
    const char *k = root->u.object.keys[i];
    have_policy |= strcmp(k, "scheduling-policy") == 0;
    rc = sim_config_system_key(path, k, root->u.object.values[i], c, base, d, err);
  }
  yajl_tree_free(root);
  free(base);
  if (!rc && !have_policy) sim_diag_warn(d, path, "no \"scheduling-policy\"; using LIFO");
  if (!rc && c->roofline && (c->local_mem_bw <= 0 || c->peak_perf <= 0))
    rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: roofline-enabled needs \"local-mem-bw\" and \"peak-perf\" above 0", path);
  if (rc) sim_config_system_free(c);
  return rc;
}

void sim_config_system_free(sim_sys_config *c) {
  for (int i = 0; i < SIM_NCOLL; i++) free(c->impl[i].custom);
  for (int i = 0; i < c->n_per_node; i++) free(c->per_node_prefix[i]);
  free(c->per_node_prefix);
  free(c->per_node_ids);
  memset(c, 0, sizeof *c);
}

/* ---- remote memory JSON ---- */

int sim_config_memory_key(const char *path, const char *k, yajl_val v, sim_mem_config *c, chakra_error *err) {
  int rc = 0;
  if (strcmp(k, "memory-type") == 0) {
    const char *s = YAJL_IS_STRING(v) ? v->u.string : "";
    if (strcmp(s, "NO_MEMORY_EXPANSION") == 0) c->type = MEM_NONE;
    else if (strcmp(s, "PER_NPU_MEMORY_EXPANSION") == 0) c->type = MEM_PER_NPU;
    else if (strcmp(s, "PER_NODE_MEMORY_EXPANSION") == 0) c->type = MEM_PER_NODE;
    else if (strcmp(s, "MEMORY_POOL") == 0) c->type = MEM_POOL;
    else rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: \"memory-type\" must be NO_MEMORY_EXPANSION, PER_NPU_MEMORY_EXPANSION, PER_NODE_MEMORY_EXPANSION or MEMORY_POOL", path);
  } else if (strcmp(k, "remote-mem-latency") == 0) {
    rc = sys_number(path, k, v, 0, &c->latency, err);
    if (!rc && c->latency > SIM_MAX_LATENCY_NS)
      rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: \"%s\": %g ns is more than 10^15 ns", path, k, c->latency);
  } else if (strcmp(k, "remote-mem-bw") == 0) {
    rc = sys_number(path, k, v, 0, &c->bandwidth, err);
    if (!rc && c->bandwidth > 0 && c->bandwidth < SIM_MIN_MEM_BW)
      rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: \"%s\" must be 0 (no transfer time) or at least %g bytes per ns",
                            path, k, SIM_MIN_MEM_BW);
  } else if (strcmp(k, "num-nodes") == 0) {
    rc = sys_count(path, k, v, 1, UINT32_MAX, &c->num_nodes, err);
  } else if (strcmp(k, "num-npus-per-node") == 0) {
    rc = sys_count(path, k, v, 1, UINT32_MAX, &c->npus_per_node, err);
  } else {
    char q[96];
    rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: unknown key \"%s\"", path, cg_quote(k, q, sizeof q));
  }
  return rc;
}

int sim_config_memory_check(const char *path, const sim_mem_config *c, chakra_error *err) {
  if (c->type == MEM_PER_NODE && !c->npus_per_node)
    return chakra_error_set(err, CHAKRA_EINVAL, "%s: PER_NODE_MEMORY_EXPANSION needs \"num-npus-per-node\"", path);
  return 0;
}

int sim_config_memory(const char *path, sim_mem_config *c, chakra_error *err) {
  memset(c, 0, sizeof *c);
  c->type = MEM_NONE;
  if (!path) return 0;
  yajl_val root = parse_json(path, err);
  if (!root) return err ? err->code : CHAKRA_EFORMAT;
  int rc = YAJL_IS_OBJECT(root) ? 0 : chakra_error_set(err, CHAKRA_EINVAL, "%s: expected a JSON object", path);
  int have_type = 0;
  for (size_t i = 0; !rc && i < root->u.object.len; i++) {
    have_type |= strcmp(root->u.object.keys[i], "memory-type") == 0;
    rc = sim_config_memory_key(path, root->u.object.keys[i], root->u.object.values[i], c, err);
  }
  yajl_tree_free(root);
  if (!rc && !have_type) rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: missing key \"memory-type\"", path);
  if (!rc) rc = sim_config_memory_check(path, c, err);
  return rc;
}

/* ---- comm groups JSON ---- */

int sim_config_groups(const char *path, uint64_t npus, sim_groups *g, chakra_error *err) {
  memset(g, 0, sizeof *g);
  if (!path) return 0;
  cg_set set = {0};
  int rc = cg_read_file(&set, path, npus > UINT32_MAX ? UINT32_MAX : (uint32_t)npus, err);
  for (size_t i = 0; !rc && i < set.n; i++) { /* the arrays move over */
    sim_group *x = VEC_APPEND(g->v, g->n);
    if (!x) {
      rc = chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", path);
      break;
    }
    *x = (sim_group){set.v[i].name, set.v[i].members, set.v[i].n};
    set.v[i].name = NULL, set.v[i].members = NULL;
  }
  cg_set_free(&set);
  return rc;
}

void sim_config_groups_free(sim_groups *g) {
  for (int i = 0; i < g->n; i++) {
    free(g->v[i].name);
    free(g->v[i].members);
  }
  free(g->v);
  memset(g, 0, sizeof *g);
}

int sim_groups_add(sim_groups *g, const char *name, const uint32_t *ranks, uint32_t n) {
  sim_group *x = VEC_APPEND(g->v, g->n);
  if (!x) return -1;
  x->name = strdup(name);
  x->members = malloc((n ? n : 1) * sizeof *x->members);
  x->n = n;
  if (!x->name || !x->members) {
    free(x->name);
    free(x->members);
    g->n--;
    return -1;
  }
  memcpy(x->members, ranks, n * sizeof *ranks);
  return 0;
}

int sim_groups_copy(sim_groups *dst, const sim_groups *src) {
  memset(dst, 0, sizeof *dst);
  for (int i = 0; i < src->n; i++)
    if (sim_groups_add(dst, src->v[i].name, src->v[i].members, src->v[i].n)) {
      sim_config_groups_free(dst);
      return -1;
    }
  return 0;
}
