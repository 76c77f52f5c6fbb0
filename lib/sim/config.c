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
#include <yaml.h>

/* ---- small file helpers ---- */

static char *read_text(const char *path, chakra_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    chakra_error_set(err, CHAKRA_EIO, "%s: cannot open: %s", path, strerror(errno));
    return NULL;
  }
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  for (size_t k; buf && (k = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
    n += k;
    if (cap - n - 1 == 0) {
      char *nb = realloc(buf, cap *= 2);
      if (!nb) free(buf);
      buf = nb;
    }
  }
  fclose(f);
  if (!buf) chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", path);
  else buf[n] = 0;
  return buf;
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
  snprintf(probe, n, "%s.0.et", prefix);
  if (prefix[0] == '/' || !base_dir || file_exists(probe)) {
    free(probe);
    return strdup(prefix);
  }
  snprintf(probe, n, "%s/%s.0.et", base_dir, prefix);
  if (file_exists(probe)) {
    snprintf(probe, n, "%s/%s", base_dir, prefix);
    return probe;
  }
  free(probe);
  return strdup(prefix); /* the caller reports the missing files */
}

/* ---- YAML: a top-level mapping of scalar -> scalar or list of scalars ---- */

typedef struct yentry {
  char *key;
  char **vals;
  int n, is_list;
  unsigned long line;
} yentry;

typedef struct ymap {
  yentry *e;
  int n;
} ymap;

static void ymap_free(ymap *m) {
  for (int i = 0; i < m->n; i++) {
    for (int k = 0; k < m->e[i].n; k++) free(m->e[i].vals[k]);
    free(m->e[i].vals);
    free(m->e[i].key);
  }
  free(m->e);
}

static int ypush(char ***v, int *n, const char *s) {
  char **q = realloc(*v, (size_t)(*n + 1) * sizeof *q);
  if (!q) return -1;
  *v = q;
  return (q[(*n)++] = strdup(s)) ? 0 : -1;
}

/* Reads the simple YAML shape every simulator config uses. */
static int ymap_read(const char *path, ymap *m, chakra_error *err) {
  memset(m, 0, sizeof *m);
  FILE *f = fopen(path, "rb");
  if (!f) return chakra_error_set(err, CHAKRA_EIO, "%s: cannot open: %s", path, strerror(errno));
  yaml_parser_t p;
  yaml_parser_initialize(&p);
  yaml_parser_set_input_file(&p, f);
  int depth = 0, rc = 0, done = 0;
  yentry *cur = NULL;
  while (!done && !rc) {
    yaml_event_t ev;
    if (!yaml_parser_parse(&p, &ev)) {
      rc = chakra_error_set(err, CHAKRA_EFORMAT, "%s: line %lu: invalid YAML: %s", path,
                            (unsigned long)p.problem_mark.line + 1, p.problem ? p.problem : "?");
      break;
    }
    unsigned long line = ev.start_mark.line + 1;
    switch (ev.type) {
      case YAML_STREAM_END_EVENT: done = 1; break;
      case YAML_MAPPING_START_EVENT:
        if (depth++ != 0) rc = chakra_error_set(err, CHAKRA_EFORMAT, "%s: line %lu: nested mappings are not allowed here", path, line);
        break;
      case YAML_MAPPING_END_EVENT: depth--; break;
      case YAML_SEQUENCE_START_EVENT:
        if (!cur || cur->is_list || cur->n) rc = chakra_error_set(err, CHAKRA_EFORMAT, "%s: line %lu: unexpected list", path, line);
        else cur->is_list = 1;
        break;
      case YAML_SEQUENCE_END_EVENT: cur = NULL; break;
      case YAML_SCALAR_EVENT: {
        const char *s = (const char *)ev.data.scalar.value;
        if (depth != 1) {
          rc = chakra_error_set(err, CHAKRA_EFORMAT, "%s: line %lu: expected a mapping at the top", path, line);
        } else if (!cur) {
          yentry *e = realloc(m->e, (size_t)(m->n + 1) * sizeof *e);
          if (!e) { rc = CHAKRA_ENOMEM; break; }
          m->e = e;
          cur = &m->e[m->n++];
          memset(cur, 0, sizeof *cur);
          cur->key = strdup(s);
          cur->line = line;
        } else {
          if (ypush(&cur->vals, &cur->n, s)) rc = CHAKRA_ENOMEM;
          if (!cur->is_list) cur = NULL;
        }
        break;
      }
      default: break;
    }
    yaml_event_delete(&ev);
  }
  yaml_parser_delete(&p);
  fclose(f);
  if (rc == CHAKRA_ENOMEM) chakra_error_set(err, rc, "%s: out of memory", path);
  if (rc) ymap_free(m);
  return rc;
}

/* ---- network YAML ---- */

static int parse_double(const char *s, double *out) {
  char *end;
  errno = 0;
  *out = strtod(s, &end);
  return *s && !*end && !errno && isfinite(*out) ? 0 : -1;
}

static int net_list(const char *path, const yentry *e, sim_net_config *c, chakra_error *err) {
  for (int i = 0; i < e->n; i++) {
    const char *v = e->vals[i];
    double d = 0;
    if (strcmp(e->key, "topology") == 0) {
      if (strcmp(v, "Ring") == 0) c->topo[i] = TOPO_RING;
      else if (strcmp(v, "FullyConnected") == 0) c->topo[i] = TOPO_FULLY_CONNECTED;
      else if (strcmp(v, "Switch") == 0) c->topo[i] = TOPO_SWITCH;
      else return chakra_error_set(err, CHAKRA_EINVAL, "%s: line %lu: topology '%s' is not supported (Ring, FullyConnected, Switch)", path, e->line, v);
    } else if (parse_double(v, &d)) {
      return chakra_error_set(err, CHAKRA_EINVAL, "%s: line %lu: %s: '%s' is not a number", path, e->line, e->key, v);
    } else if (strcmp(e->key, "npus_count") == 0) {
      if (d < 1 || d != floor(d) || d > 1e7)
        return chakra_error_set(err, CHAKRA_EINVAL, "%s: line %lu: npus_count: '%s' must be a whole number >= 1", path, e->line, v);
      c->npus[i] = (uint32_t)d;
    } else if (strcmp(e->key, "bandwidth") == 0) {
      if (d <= 0) return chakra_error_set(err, CHAKRA_EINVAL, "%s: line %lu: bandwidth must be > 0 GB/s", path, e->line);
      c->bandwidth[i] = d;
    } else {
      if (d < 0) return chakra_error_set(err, CHAKRA_EINVAL, "%s: line %lu: latency must be >= 0 ns", path, e->line);
      c->latency[i] = d;
    }
  }
  return 0;
}

int sim_config_network(const char *path, sim_net_config *c, chakra_error *err) {
  static const char *const keys[] = {"topology", "npus_count", "bandwidth", "latency"};
  memset(c, 0, sizeof *c);
  ymap m;
  int rc = ymap_read(path, &m, err);
  if (rc) return rc;
  int seen[4] = {0}, len[4] = {0};
  for (int i = 0; i < m.n && !rc; i++) {
    int k = 0;
    while (k < 4 && strcmp(m.e[i].key, keys[k]) != 0) k++;
    if (k == 4) {
      rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: line %lu: unknown key '%s' (expected topology, npus_count, bandwidth, latency)", path, m.e[i].line, m.e[i].key);
    } else if (m.e[i].n < 1 || m.e[i].n > SIM_MAX_DIMS) {
      rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: line %lu: %s must list 1 to %d dimensions", path, m.e[i].line, keys[k], SIM_MAX_DIMS);
    } else {
      seen[k] = 1;
      len[k] = m.e[i].n;
      rc = net_list(path, &m.e[i], c, err);
    }
  }
  for (int k = 0; k < 4 && !rc; k++)
    if (!seen[k]) rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: missing key '%s'", path, keys[k]);
  for (int k = 1; k < 4 && !rc; k++)
    if (len[k] != len[0])
      rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: length of %s (%d) doesn't match with dimensions (%d)", path, keys[k], len[k], len[0]);
  ymap_free(&m);
  if (rc) return rc;
  c->dims = len[0];
  c->total_npus = 1;
  for (int d = 0; d < c->dims; d++) c->total_npus *= c->npus[d];
  if (c->total_npus > (1u << 24))
    return chakra_error_set(err, CHAKRA_EINVAL, "%s: %llu NPUs is more than supported (16M)", path, (unsigned long long)c->total_npus);
  return 0;
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
    if (!YAJL_IS_STRING(e) || parse_algo(e->u.string, &impl->algo[i]))
      return chakra_error_set(err, CHAKRA_EINVAL,
                              "%s: \"%s\"[%zu]: cannot interpret collective implementation %s%s%s (ring, direct, directN, halvingDoubling, doubleBinaryTree, oneRing, oneDirect, oneHalvingDoubling)",
                              path, key, i, YAJL_IS_STRING(e) ? "'" : "", YAJL_IS_STRING(e) ? e->u.string : "(not a string)", YAJL_IS_STRING(e) ? "'" : "");
  }
  impl->n = (int)n;
  return 0;
}

static int sys_number(const char *path, const char *key, yajl_val v, double lo, double *out, chakra_error *err) {
  if (!YAJL_IS_NUMBER(v)) return chakra_error_set(err, CHAKRA_EINVAL, "%s: \"%s\" must be a number", path, key);
  *out = YAJL_GET_DOUBLE(v);
  if (!isfinite(*out) || *out < lo)
    return chakra_error_set(err, CHAKRA_EINVAL, "%s: \"%s\" must be >= %g", path, key, lo);
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

static int sys_key(const char *path, const char *k, yajl_val v, sim_sys_config *c, const char *base,
                   chakra_warn_fn warn, void *ctx, chakra_error *err) {
  double d = 0;
  char msg[512];
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
      if (warn && strcmp(k, "boost-mode") != 0) {
        snprintf(msg, sizeof msg, "%s: \"%s\" has no effect (as in ASTRA-sim)", path, k);
        warn(ctx, msg);
      }
      return 0;
    }
  struct { const char *key; double lo; } nums[] = {
      {"endpoint-delay", 0}, {"active-chunks-per-dimension", 1}, {"preferred-dataset-splits", 1},
      {"local-mem-bw", 0}, {"peak-perf", 0}, {"roofline-enabled", 0}, {"replay-only", 0},
      {"trace-enabled", 0}, {"track-local-mem", 0}, {"model-shared-bus", 0}};
  for (size_t i = 0; i < sizeof nums / sizeof *nums; i++) {
    if (strcmp(k, nums[i].key) != 0) continue;
    int rc = sys_number(path, k, v, nums[i].lo, &d, err);
    if (rc) return rc;
    switch (i) {
      case 0: c->endpoint_delay = d; break;
      case 1: c->active_chunks = (uint32_t)d; break;
      case 2: c->splits = (uint32_t)d; break;
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
  return chakra_error_set(err, CHAKRA_EINVAL, "%s: unknown key \"%s\"", path, k);
}

int sim_config_system(const char *path, sim_sys_config *c, chakra_warn_fn warn, void *ctx, chakra_error *err) {
  memset(c, 0, sizeof *c);
  c->endpoint_delay = 10;
  c->active_chunks = 1;
  yajl_val root = parse_json(path, err);
  if (!root) return err ? err->code : CHAKRA_EFORMAT;
  int rc = 0;
  char *base = dir_of(path);
  if (!YAJL_IS_OBJECT(root)) rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: expected a JSON object", path);
  int have_policy = 0, have_opt = 0;
  for (size_t i = 0; !rc && i < root->u.object.len; i++) {
    const char *k = root->u.object.keys[i];
    have_policy |= strcmp(k, "scheduling-policy") == 0;
    have_opt |= strcmp(k, "collective-optimization") == 0;
    rc = sys_key(path, k, root->u.object.values[i], c, base, warn, ctx, err);
  }
  yajl_tree_free(root);
  free(base);
  char msg[512];
  if (!rc && warn && !have_policy) {
    snprintf(msg, sizeof msg, "%s: no \"scheduling-policy\"; using LIFO", path);
    warn(ctx, msg);
  }
  if (!rc && warn && !have_opt) {
    snprintf(msg, sizeof msg, "%s: no \"collective-optimization\"; using baseline", path);
    warn(ctx, msg);
  }
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

int sim_config_memory(const char *path, sim_mem_config *c, chakra_error *err) {
  memset(c, 0, sizeof *c);
  c->type = MEM_NONE;
  if (!path) return 0;
  yajl_val root = parse_json(path, err);
  if (!root) return err ? err->code : CHAKRA_EFORMAT;
  int rc = YAJL_IS_OBJECT(root) ? 0 : chakra_error_set(err, CHAKRA_EINVAL, "%s: expected a JSON object", path);
  int have_type = 0;
  for (size_t i = 0; !rc && i < root->u.object.len; i++) {
    const char *k = root->u.object.keys[i];
    yajl_val v = root->u.object.values[i];
    double d = 0;
    if (strcmp(k, "memory-type") == 0) {
      const char *s = YAJL_IS_STRING(v) ? v->u.string : "";
      have_type = 1;
      if (strcmp(s, "NO_MEMORY_EXPANSION") == 0) c->type = MEM_NONE;
      else if (strcmp(s, "PER_NPU_MEMORY_EXPANSION") == 0) c->type = MEM_PER_NPU;
      else if (strcmp(s, "PER_NODE_MEMORY_EXPANSION") == 0) c->type = MEM_PER_NODE;
      else if (strcmp(s, "MEMORY_POOL") == 0) c->type = MEM_POOL;
      else rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: \"memory-type\" must be NO_MEMORY_EXPANSION, PER_NPU_MEMORY_EXPANSION, PER_NODE_MEMORY_EXPANSION or MEMORY_POOL", path);
    } else if (strcmp(k, "remote-mem-latency") == 0) {
      rc = sys_number(path, k, v, 0, &c->latency, err);
    } else if (strcmp(k, "remote-mem-bw") == 0) {
      rc = sys_number(path, k, v, 0, &c->bandwidth, err);
    } else if (strcmp(k, "num-nodes") == 0 || strcmp(k, "num-npus-per-node") == 0) {
      rc = sys_number(path, k, v, 1, &d, err);
      if (strcmp(k, "num-nodes") == 0) c->num_nodes = (uint32_t)d; /* both start "num-n" */
      else c->npus_per_node = (uint32_t)d;
    } else {
      rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: unknown key \"%s\"", path, k);
    }
  }
  yajl_tree_free(root);
  if (!rc && !have_type) rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: missing key \"memory-type\"", path);
  if (!rc && c->type == MEM_PER_NODE && !c->npus_per_node)
    rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: PER_NODE_MEMORY_EXPANSION needs \"num-npus-per-node\"", path);
  return rc;
}

/* ---- comm groups JSON ---- */

int sim_config_groups(const char *path, uint64_t npus, sim_groups *g, chakra_error *err) {
  memset(g, 0, sizeof *g);
  if (!path) return 0;
  yajl_val root = parse_json(path, err);
  if (!root) return err ? err->code : CHAKRA_EFORMAT;
  int rc = YAJL_IS_OBJECT(root) ? 0 : chakra_error_set(err, CHAKRA_EINVAL, "%s: expected a JSON object of group id -> rank list", path);
  if (!rc && !(g->v = calloc(root->u.object.len + 1, sizeof *g->v))) rc = CHAKRA_ENOMEM;
  for (size_t i = 0; !rc && i < root->u.object.len; i++) {
    const char *k = root->u.object.keys[i];
    yajl_val v = root->u.object.values[i];
    if (!YAJL_IS_ARRAY(v) || v->u.array.len == 0) {
      rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: group \"%s\" must be a non-empty list of ranks", path, k);
      break;
    }
    sim_group *gr = &g->v[g->n++];
    gr->name = strdup(k);
    gr->members = malloc(v->u.array.len * sizeof *gr->members);
    if (!gr->name || !gr->members) { rc = CHAKRA_ENOMEM; break; }
    for (size_t j = 0; j < v->u.array.len; j++) {
      yajl_val r = v->u.array.values[j];
      if (!YAJL_IS_INTEGER(r) || YAJL_GET_INTEGER(r) < 0 || (uint64_t)YAJL_GET_INTEGER(r) >= npus) {
        rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: group \"%s\": entry %zu is not a rank in 0..%llu", path, k, j, (unsigned long long)npus - 1);
        break;
      }
      for (size_t q = 0; q < j; q++)
        if (gr->members[q] == (uint32_t)YAJL_GET_INTEGER(r))
          rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: group \"%s\": rank %lld listed twice", path, k, YAJL_GET_INTEGER(r));
      gr->members[gr->n++] = (uint32_t)YAJL_GET_INTEGER(r);
    }
  }
  yajl_tree_free(root);
  if (rc == CHAKRA_ENOMEM) chakra_error_set(err, rc, "%s: out of memory", path);
  if (rc) sim_config_groups_free(g);
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
