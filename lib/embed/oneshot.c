/* oneshot.c - validate, stats and sim in one call each, as JSON; see
 * include/chakra/oneshot.h. The options are the chakra command's, read
 * from name/value pairs with the command line's rules; each call then does
 * what the command does with the library's parts. */
#include "chakra/oneshot.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/jsonw.h"
#include "../util/outfile.h"
#include "chakra/run.h"
#include "chakra/set.h"
#include "chakra/sim.h"
#include "chakra/stats.h"
#include "chakra/validate.h"

typedef struct opts {
  const char *comm_groups, *system, *network, *remote_memory, *timeline;
  int rendezvous, ignore_ctrl, network_model, multidim_full, custom_as_is, per_rank;
  uint64_t max_errors, queues_per_dim, threads;
  double injection_scale;
} opts;

typedef struct okey {
  const char *name, *alias;
  char kind;    /* 's' text, 'b' true|false|1|0, 'n' count, 'd' positive number, 'c' choice */
  size_t off;   /* of the field in opts */
  const char *const *choices; /* 'c': the names, each stored as its index */
  uint64_t max; /* 'n': largest accepted (0: none) */
} okey;

static const char *const bools[] = {"false", "true", NULL};
static const char *const models[] = {"aware", "unaware", NULL}; /* CHAKRA_NET_AWARE, _UNAWARE */
static const char *const multidim[] = {"lowest", "full", NULL};
static const char *const scaling[] = {"scale", "as-is", NULL};

#define GROUPS {"comm-group-configuration", "comm-groups", 's', offsetof(opts, comm_groups), NULL, 0}
static const okey validate_keys[] = {GROUPS,
                                     {"rendezvous-protocol", NULL, 'b', offsetof(opts, rendezvous), bools, 0},
                                     {"max-errors", NULL, 'n', offsetof(opts, max_errors), NULL, 0},
                                     {"per-rank", NULL, 'b', offsetof(opts, per_rank), bools, 0},
                                     {NULL, NULL, 0, 0, NULL, 0}};
static const okey stats_keys[] = {GROUPS,
                                  {"ignore-ctrl-deps", NULL, 'b', offsetof(opts, ignore_ctrl), bools, 0},
                                  {NULL, NULL, 0, 0, NULL, 0}};
static const okey sim_keys[] = {
    GROUPS,
    {"system-configuration", NULL, 's', offsetof(opts, system), NULL, 0},
    {"network-configuration", NULL, 's', offsetof(opts, network), NULL, 0},
    {"remote-memory-configuration", NULL, 's', offsetof(opts, remote_memory), NULL, 0},
    {"timeline", NULL, 's', offsetof(opts, timeline), NULL, 0},
    {"network-model", NULL, 'c', offsetof(opts, network_model), models, 0},
    {"num-queues-per-dim", NULL, 'n', offsetof(opts, queues_per_dim), NULL, 64},
    {"injection-scale", NULL, 'd', offsetof(opts, injection_scale), NULL, 0},
    {"rendezvous-protocol", NULL, 'b', offsetof(opts, rendezvous), bools, 0},
    {"multidim-p2p", NULL, 'c', offsetof(opts, multidim_full), multidim, 0},
    {"custom-collective-scaling", NULL, 'c', offsetof(opts, custom_as_is), scaling, 0},
    {"threads", NULL, 'n', offsetof(opts, threads), NULL, 64},
    {NULL, NULL, 0, 0, NULL, 0}};

static const okey *find_key(const okey *keys, const char *name) {
  for (const okey *k = keys; k->name; k++)
    if (strcmp(k->name, name) == 0 || (k->alias && strcmp(k->alias, name) == 0)) return k;
  return NULL;
}

static int unknown_key(const okey *keys, const char *name, chakra_error *err) {
  char list[600] = "";
  size_t used = 0;
  for (const okey *k = keys; k->name && used < sizeof list; k++)
    used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", k == keys ? "" : ", ", k->name);
  return chakra_error_set(err, CHAKRA_EINVAL, "option '%s': unknown (expected one of: %s)", name, list);
}

static int set_choice(const okey *k, const char *v, int *dst, chakra_error *err) {
  int is_bool = k->choices == bools;
  char list[128] = "";
  size_t used = 0;
  for (int i = 0; k->choices[i]; i++) {
    if (strcmp(k->choices[i], v) == 0 || (is_bool && v[0] == '0' + i && !v[1])) {
      *dst = i;
      return 0;
    }
    used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? "|" : "", k->choices[i]);
  }
  return chakra_error_set(err, CHAKRA_EINVAL, "option '%s': '%s' is not %s%s", k->name, v, list,
                          is_bool ? "|0|1" : "");
}

static int set_value(const okey *k, const char *v, opts *o, chakra_error *err) {
  void *dst = (char *)o + k->off;
  char *end;
  switch (k->kind) {
  case 's': *(const char **)dst = v; return 0;
  case 'b': case 'c': return set_choice(k, v, dst, err);
  case 'n': {
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (v[0] < '0' || v[0] > '9' || *end || errno || (k->max && (n < 1 || n > k->max)))
      return chakra_error_set(err, CHAKRA_EINVAL, "option '%s': '%s' is not a count%s", k->name, v,
                              k->max ? " in range" : "");
    *(uint64_t *)dst = n;
    return 0;
  }
  default: {
    double d = strtod(v, &end);
    if (end == v || *end || !isfinite(d) || d <= 0)
      return chakra_error_set(err, CHAKRA_EINVAL, "option '%s': '%s' is not a positive number", k->name, v);
    *(double *)dst = d;
    return 0;
  }
  }
}

static int parse_opts(const okey *keys, const char *const *kv, size_t n, opts *o, chakra_error *err) {
  memset(o, 0, sizeof *o);
  for (size_t i = 0; i < n; i++) {
    const char *name = kv[2 * i], *value = kv[2 * i + 1];
    if (!name || !value) return chakra_error_set(err, CHAKRA_EINVAL, "option %zu: name or value missing (NULL)", i);
    const okey *k = find_key(keys, name);
    if (!k) return unknown_key(keys, name, err);
    if (set_value(k, value, o, err)) return CHAKRA_EINVAL;
  }
  return 0;
}

static int open_set(chakra_set **set, const char *const *args, uint32_t n, const chakra_set_options *so,
                    chakra_error *err) {
  if (!n) return chakra_error_set(err, CHAKRA_EINVAL, "no traces given (FILE.et... or PREFIX)");
  return chakra_set_open_args(set, args, n, so, err);
}

/* ---- validate ---------------------------------------------------------------- */

typedef struct vstate {
  jsonw *w;
  uint64_t listed, limit;
} vstate;

static void key_string(jsonw *w, const char *key, const char *v) {
  jsonw_lit(w, key);
  jsonw_string(w, v, strlen(v));
}

static void put_problem(void *ctx, const chakra_problem *p) {
  vstate *v = ctx;
  if (v->limit && v->listed >= v->limit) return;
  jsonw *w = v->w;
  jsonw_lit(w, v->listed++ ? ",\n{" : "\n{");
  key_string(w, "\"severity\":", chakra_severity_name(p->severity));
  if (p->file) key_string(w, ",\"file\":", p->file);
  if (p->rank >= 0) jsonw_lit(w, ",\"rank\":"), jsonw_i64(w, p->rank);
  if (p->has_node) jsonw_lit(w, ",\"node\":"), jsonw_u64(w, p->node_id);
  if (p->has_offset) jsonw_lit(w, ",\"offset\":"), jsonw_u64(w, p->offset);
  if (p->line >= 0) jsonw_lit(w, ",\"line\":"), jsonw_i64(w, p->line);
  if (p->field) key_string(w, ",\"field\":", p->field);
  key_string(w, ",\"what\":", p->what ? p->what : "");
  jsonw_char(w, '}');
}

static void put_summary(jsonw *w, const chakra_validate_summary *s, const chakra_set *set) {
  jsonw_lit(w, "],\n\"files\":"), jsonw_i64(w, s->files);
  jsonw_lit(w, ",\"nodes\":"), jsonw_u64(w, s->nodes);
  jsonw_lit(w, ",\"errors\":"), jsonw_u64(w, s->errors);
  jsonw_lit(w, ",\"warnings\":"), jsonw_u64(w, s->warnings);
  jsonw_lit(w, ",\"classes\":"), jsonw_u64(w, s->classes);
  jsonw_lit(w, s->unreadable ? ",\"unreadable\":true" : ",\"unreadable\":false");
  if (chakra_set_groups_origin(set) == CHAKRA_GROUPS_BESIDE)
    key_string(w, ",\"groups_beside\":", chakra_set_groups_path(set));
  else jsonw_lit(w, ",\"groups_beside\":null");
  jsonw_lit(w, "}\n");
}

/* Writes through jsonw into out; finish commits or discards. */
static int json_open(jsonw *w, outfile **f, const chakra_sink *out, chakra_error *err) {
  int rc = outfile_open_sink(f, out, err);
  if (rc) return rc;
  if (jsonw_init(w, *f)) {
    outfile_discard(*f);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  return 0;
}

static int json_finish(jsonw *w, outfile *f, int rc, chakra_error *err) {
  if (!rc && jsonw_flush(w)) rc = chakra_error_set(err, w->err.code, "%s", w->err.msg);
  jsonw_free(w);
  if (rc) {
    outfile_discard(f);
    return rc;
  }
  return outfile_commit(f, err);
}

int chakra_validate_json(const char *const *args, uint32_t n_args, const char *const *kv, size_t n_kv,
                         const chakra_sink *out, chakra_error *err) {
  opts o;
  if (parse_opts(validate_keys, kv, n_kv, &o, err)) return CHAKRA_EINVAL;
  chakra_set_options so = {.comm_groups = o.comm_groups};
  chakra_set *set;
  int rc = open_set(&set, args, n_args, &so, err);
  if (rc) return rc;
  jsonw w;
  outfile *f;
  if ((rc = json_open(&w, &f, out, err)) == 0) {
    vstate v = {&w, 0, o.max_errors};
    chakra_validate_options vo = {.comm_groups = o.comm_groups, .rendezvous = o.rendezvous, .per_rank = o.per_rank};
    chakra_validate_summary sum;
    jsonw_lit(&w, "{\"problems\":[");
    rc = chakra_validate_set(set, &vo, put_problem, &v, &sum, err);
    if (!rc) put_summary(&w, &sum, set);
    rc = json_finish(&w, f, rc, err);
  }
  chakra_set_close(set);
  return rc;
}

/* ---- stats -------------------------------------------------------------------- */

static int stats_of(const chakra_set *set, int ignore_ctrl, const chakra_sink *out, chakra_error *err) {
  uint32_t n = chakra_set_ranks(set);
  const char **names = calloc(n ? n : 1, sizeof *names);
  chakra_rank_stats *ranks = calloc(n ? n : 1, sizeof *ranks), total;
  memset(&total, 0, sizeof total);
  int rc = !ranks || !names ? chakra_error_set(err, CHAKRA_ENOMEM, "out of memory") : 0;
  for (uint32_t r = 0; r < n && !rc; r++) {
    names[r] = chakra_set_rank_name(set, r);
    rc = chakra_stats_set_rank(set, r, ignore_ctrl, &ranks[r], err);
    if (!rc && chakra_stats_add(&total, &ranks[r])) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  if (!rc) rc = chakra_stats_write_json_to(out, names, ranks, n, &total, err);
  for (uint32_t r = 0; ranks && r < n; r++) chakra_stats_free(&ranks[r]);
  chakra_stats_free(&total);
  free(ranks);
  free(names);
  return rc;
}

int chakra_stats_json(const char *const *args, uint32_t n_args, const char *const *kv, size_t n_kv,
                      const chakra_sink *out, chakra_error *err) {
  opts o;
  if (parse_opts(stats_keys, kv, n_kv, &o, err)) return CHAKRA_EINVAL;
  chakra_set_options so = {.comm_groups = o.comm_groups};
  chakra_set *set;
  int rc = open_set(&set, args, n_args, &so, err);
  if (rc) return rc;
  rc = stats_of(set, o.ignore_ctrl, out, err);
  chakra_set_close(set);
  return rc;
}

/* ---- sim ------------------------------------------------------------------------ */

static int sim_config(chakra_sim_config **cfg, const opts *o, chakra_diag_fn diag, void *ctx, chakra_error *err) {
  if (!o->system || !o->network)
    return chakra_error_set(err, CHAKRA_EINVAL,
                            "options 'system-configuration' and 'network-configuration' are required");
  chakra_sim_files files = {o->system, o->network, o->remote_memory, NULL}; /* groups: the set's */
  int rc = chakra_sim_config_load(cfg, &files, diag, ctx, err);
  if (rc) return rc;
  chakra_sim_params *p = chakra_sim_config_params(*cfg);
  p->network_model = o->network_model;
  if (o->queues_per_dim) p->queues_per_dim = (uint32_t)o->queues_per_dim;
  if (o->injection_scale > 0) p->injection_scale = o->injection_scale;
  p->rendezvous = o->rendezvous;
  p->multidim_full = o->multidim_full;
  p->custom_as_is = o->custom_as_is;
  return 0;
}

/* The set on the network's NPUs: a PREFIX needs exactly that many rank
 * files (as chakra sim), and so does a list of files. */
static int sim_set(chakra_set **set, const char *const *args, uint32_t n, const opts *o, uint32_t npus,
                   chakra_error *err) {
  char why[64];
  snprintf(why, sizeof why, "the network has %u NPUs", npus);
  chakra_set_options so = {.ranks = npus, .ranks_reason = why, .comm_groups = o->comm_groups};
  int rc = open_set(set, args, n, &so, err);
  if (!rc && chakra_set_ranks(*set) != npus) {
    rc = chakra_error_set(err, CHAKRA_EINVAL, "%u rank file(s), but %s", chakra_set_ranks(*set), why);
    chakra_set_close(*set);
    *set = NULL;
  }
  return rc;
}

int chakra_sim_json(const char *const *args, uint32_t n_args, const char *const *kv, size_t n_kv,
                    const chakra_sink *out, chakra_diag_fn diag, void *diag_ctx, chakra_error *err) {
  opts o;
  if (parse_opts(sim_keys, kv, n_kv, &o, err)) return CHAKRA_EINVAL;
  chakra_sim_config *cfg;
  int rc = sim_config(&cfg, &o, diag, diag_ctx, err);
  if (rc) return rc;
  chakra_set *set = NULL;
  chakra_sim_workload *w = NULL;
  chakra_run_record res;
  memset(&res, 0, sizeof res);
  rc = sim_set(&set, args, n_args, &o, chakra_topo_npus(chakra_sim_config_topo(cfg)), err);
  if (!rc) rc = chakra_sim_workload_load_set(&w, set, (uint32_t)o.threads, diag, diag_ctx, err);
  chakra_set_close(set);
  chakra_sim_run_options ro = {.timeline = o.timeline, .diag = diag, .diag_ctx = diag_ctx};
  if (!rc) rc = chakra_sim_run(cfg, w, &ro, &res, err);
  if (!rc) rc = chakra_run_write_report_to(&res, out, CHAKRA_RUN_JSON, err);
  chakra_run_record_free(&res);
  chakra_sim_workload_free(w);
  chakra_sim_config_free(cfg);
  return rc;
}
