/* result.c - result files: a run described (suite version, tool version,
 * the hashes and texts of its system and network, the declared physical
 * quantities, the division and the rules), written through jsonw, and read
 * back with every member checked, a bad one named by file and member. */
#include "chakra/suite.h"

#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "chakra/version.h"
#include "suitesys.h"
#include "../util/commgroups.h"
#include "../util/textout.h"

int chakra_suite_result_describe_sut(chakra_suite_result *r, const chakra_suite_version *v, const char *dir,
                                     const char *name, const chakra_suite_sut *s, const char *const *rules,
                                     size_t n_rules, chakra_error *err) {
  r->suite_version = strdup(v->name);
  r->tool_version = strdup("chakra-c " CHAKRA_VERSION_STRING);
  r->name = strdup(name ? name : s->given || n_rules ? "unnamed" : CHAKRA_SUITE_REFERENCE);
  r->mode = strdup("sim");
  if (!(r->dir = realpath(dir, NULL))) r->dir = strdup(dir);
  char **copy[] = {&r->system_path, &r->system_sha256, &r->system_text,
                   &r->network_path, &r->network_sha256, &r->network_text};
  const char *from[] = {s->system_path, s->system_sha256, s->system_text,
                        s->network_path, s->network_sha256, s->network_text};
  int missing = !r->suite_version || !r->tool_version || !r->name || !r->mode || !r->dir;
  for (size_t i = 0; i < sizeof copy / sizeof *copy; i++) missing |= !(*copy[i] = strdup(from[i]));
  if (missing) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  r->peak_tflops = suitesys_peak(s);
  int rc = suitesys_network_text(s, &r->declared_network, err);
  uint64_t broken = 0;
  if (!rc) rc = suitesys_rules_closed(s, NULL, NULL, &broken, err);
  if (rc) return rc;
  if (n_rules && !(r->rules = calloc(n_rules, sizeof *r->rules))) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (size_t i = 0; i < n_rules; i++)
    if (!(r->rules[r->n_rules++] = strdup(rules[i]))) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  r->division = strdup(n_rules || broken ? "open" : "closed");
  return r->division ? CHAKRA_OK : chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
}

int chakra_suite_result_describe(chakra_suite_result *r, const chakra_suite_version *v, const char *dir,
                                 const char *name, const char *system, const char *network,
                                 const char *const *rules, size_t n_rules, chakra_error *err) {
  chakra_suite_sut *s = NULL;
  int rc = chakra_suite_sut_open(&s, system, network, err);
  if (!rc) rc = chakra_suite_result_describe_sut(r, v, dir, name, s, rules, n_rules, err);
  chakra_suite_sut_free(s);
  return rc;
}

/* The numbers of a workload's entry, in the order written: integers or
 * doubles, and whether a re-simulation must reproduce them (all but the
 * wall time). */
typedef struct metric_field {
  const char *name;
  size_t offset;
  int is_double, reproduced;
} metric_field;

#define FIELD(name, dbl, same) {#name, offsetof(chakra_suite_metrics, name), dbl, same}
static const metric_field metric_fields[] = {
    FIELD(time_ns, 0, 1),       FIELD(exposed_ns, 0, 1),    FIELD(compute_ns, 0, 1),
    FIELD(comm_bytes, 0, 1),    FIELD(events, 0, 1),        FIELD(exposed_share, 1, 1),
    FIELD(bus_bw_gbps, 1, 1),   FIELD(compute_util, 1, 1),  FIELD(sim_seconds, 1, 0)};
#undef FIELD
#define N_METRIC_FIELDS (sizeof metric_fields / sizeof *metric_fields)

static uint64_t *u64_at(const metric_field *f, const chakra_suite_metrics *m) {
  return (uint64_t *)((char *)m + f->offset);
}

static double *dbl_at(const metric_field *f, const chakra_suite_metrics *m) {
  return (double *)((char *)m + f->offset);
}

static void metrics_problem(chakra_diag_fn diag, void *ctx, const char *file, const char *where, const char *name,
                            const char *what) {
  char field[96];
  snprintf(field, sizeof field, "%s.%s", where, name);
  chakra_problem p = chakra_problem_make(CHAKRA_SEV_ERROR, what);
  p.file = file;
  p.field = field;
  if (diag) diag(ctx, &p);
}

uint64_t chakra_suite_metrics_compare(const chakra_suite_metrics *recorded, const chakra_suite_metrics *again,
                                      const char *file, const char *where, chakra_diag_fn diag, void *ctx) {
  char what[1024];
  if (recorded->ok != again->ok) {
    snprintf(what, sizeof what, "%s, re-simulated %s%s%s", recorded->ok ? "true" : "false",
             again->ok ? "true" : "false", again->ok ? "" : ": ", again->ok ? "" : again->error);
    metrics_problem(diag, ctx, file, where, "ok", what);
    return 1;
  }
  uint64_t problems = 0;
  for (size_t i = 0; i < N_METRIC_FIELDS; i++) {
    const metric_field *f = &metric_fields[i];
    if (!f->reproduced) continue;
    if (f->is_double && *dbl_at(f, recorded) != *dbl_at(f, again))
      snprintf(what, sizeof what, "%.17g, re-simulated %.17g", *dbl_at(f, recorded), *dbl_at(f, again));
    else if (!f->is_double && *u64_at(f, recorded) != *u64_at(f, again))
      snprintf(what, sizeof what, "%llu, re-simulated %llu", (unsigned long long)*u64_at(f, recorded),
               (unsigned long long)*u64_at(f, again));
    else
      continue;
    metrics_problem(diag, ctx, file, where, f->name, what);
    problems++;
  }
  return problems;
}

/* ---- writing ---- */

static void key_str(jsonw *j, const char *key, const char *v, const char *sep) {
  jsonw_lit(j, sep);
  jsonw_string(j, key, strlen(key));
  jsonw_lit(j, ": ");
  if (v) jsonw_string(j, v, strlen(v));
  else jsonw_lit(j, "null");
}

static void key_u64(jsonw *j, const char *key, uint64_t v) {
  jsonw_lit(j, ", ");
  jsonw_string(j, key, strlen(key));
  jsonw_lit(j, ": ");
  jsonw_u64(j, v);
}

static void key_dbl(jsonw *j, const char *key, double v) {
  jsonw_lit(j, ", ");
  jsonw_string(j, key, strlen(key));
  jsonw_lit(j, ": ");
  jsonw_double(j, v);
}

static void put_file(jsonw *j, const char *key, const char *path, const char *sha, const char *text) {
  jsonw_lit(j, ",\n ");
  jsonw_string(j, key, strlen(key));
  key_str(j, "path", path, ": {");
  key_str(j, "sha256", sha, ", ");
  key_str(j, "text", text, ", ");
  jsonw_lit(j, "}");
}

static void put_metrics(jsonw *j, const chakra_suite_workload *w, const chakra_suite_metrics *m, int first) {
  key_str(j, "name", w->name, first ? "\n  {" : ",\n  {");
  key_str(j, "class", w->cls, ", ");
  key_u64(j, "ranks", w->ranks);
  key_str(j, "sha256", w->sha256, ", ");
  jsonw_lit(j, m->ok ? ", \"ok\": true" : ", \"ok\": false");
  for (size_t i = 0; i < N_METRIC_FIELDS; i++) {
    const metric_field *f = &metric_fields[i];
    if (f->is_double) key_dbl(j, f->name, *dbl_at(f, m));
    else key_u64(j, f->name, *u64_at(f, m));
  }
  if (!m->ok) key_str(j, "error", m->error, ", ");
  jsonw_lit(j, "}");
}

static void put_result(jsonw *j, const chakra_suite_result *r, const chakra_suite_version *v) {
  jsonw_lit(j, "{\"chakra_suite_result\": 1");
  key_str(j, "suite_version", r->suite_version, ",\n ");
  key_str(j, "tool_version", r->tool_version, ", ");
  key_str(j, "name", r->name, ",\n ");
  key_str(j, "division", r->division, ", ");
  key_str(j, "mode", r->mode, ", ");
  key_str(j, "dir", r->dir, ", ");
  put_file(j, "system", r->system_path, r->system_sha256, r->system_text);
  put_file(j, "network", r->network_path, r->network_sha256, r->network_text);
  jsonw_lit(j, ",\n \"rules\": [");
  for (size_t i = 0; i < r->n_rules; i++) {
    if (i) jsonw_lit(j, ", ");
    jsonw_string(j, r->rules[i], strlen(r->rules[i]));
  }
  jsonw_lit(j, "]");
  jsonw_lit(j, ",\n \"declared\": {\"peak_tflops\": ");
  jsonw_double(j, r->peak_tflops);
  key_str(j, "network", r->declared_network, ", ");
  jsonw_lit(j, "},\n \"workloads\": [");
  for (size_t i = 0; i < r->n; i++) put_metrics(j, &v->workloads[r->m[i].workload], &r->m[i], i == 0);
  jsonw_lit(j, "\n]}\n");
}

int chakra_suite_result_write(const chakra_suite_result *r, const chakra_suite_version *v, const char *path,
                              chakra_error *err) {
  textout t;
  int rc = textout_open(&t, path, err);
  if (rc) return rc;
  put_result(&t.w, r, v);
  return textout_close(&t, 0, err);
}

/* ---- reading ---- */

static const char *str_of(yajl_val v) {
  const char *s = YAJL_GET_STRING(v);
  return s ? s : "";
}

typedef struct rd {
  const char *path;
  chakra_error *err;
} rd;

static yajl_val member(yajl_val o, const char *key, yajl_type t) {
  const char *p[] = {key, NULL};
  return o ? yajl_tree_get(o, p, t) : NULL;
}

static int bad(const rd *r, const char *where, const char *key, const char *want) {
  return chakra_error_set(r->err, CHAKRA_EFORMAT, "%s: %s%s%s: expected %s", r->path, where, *where ? "." : "", key,
                          want);
}

static int get_string(const rd *r, yajl_val o, const char *where, const char *key, char **out) {
  yajl_val v = member(o, key, yajl_t_string);
  if (!v) return bad(r, where, key, "a string");
  if (!(*out = strdup(str_of(v)))) return chakra_error_set(r->err, CHAKRA_ENOMEM, "out of memory");
  return CHAKRA_OK;
}

static int get_u64(const rd *r, yajl_val o, const char *where, const char *key, uint64_t *out) {
  yajl_val v = member(o, key, yajl_t_number);
  if (!v || !YAJL_IS_INTEGER(v) || YAJL_GET_INTEGER(v) < 0) return bad(r, where, key, "a non-negative integer");
  *out = (uint64_t)YAJL_GET_INTEGER(v);
  return CHAKRA_OK;
}

static int get_dbl(const rd *r, yajl_val o, const char *where, const char *key, double *out) {
  yajl_val v = member(o, key, yajl_t_number);
  if (!v || !(YAJL_GET_DOUBLE(v) >= 0)) return bad(r, where, key, "a non-negative number");
  *out = YAJL_GET_DOUBLE(v);
  return CHAKRA_OK;
}

static int read_file_entry(const rd *r, yajl_val root, const char *key, char **path, char **sha, char **text) {
  yajl_val o = member(root, key, yajl_t_object);
  if (!o) return bad(r, "", key, "an object (path, sha256, text)");
  int rc = get_string(r, o, key, "path", path);
  if (!rc) rc = get_string(r, o, key, "sha256", sha);
  if (!rc) rc = get_string(r, o, key, "text", text);
  return rc;
}

static int read_workload(const rd *r, yajl_val o, size_t i, const chakra_suite_version *v, chakra_suite_result *res) {
  char where[48];
  snprintf(where, sizeof where, "workloads[%zu]", i);
  chakra_suite_metrics *m = &res->m[i];
  char *name = NULL;
  int rc = get_string(r, o, where, "name", &name);
  long at = rc ? -1 : chakra_suite_workload_find(v, name);
  res->wl_name[i] = name;
  char q[96];
  if (!rc && at < 0)
    return chakra_error_set(r->err, CHAKRA_EFORMAT, "%s: %s.name: \"%s\" is not a workload of suite %s", r->path,
                            where, cg_quote(name, q, sizeof q), v->name);
  if (!rc) m->workload = (uint32_t)at;
  if (!rc) rc = get_string(r, o, where, "sha256", &res->wl_sha256[i]);
  yajl_val ok = member(o, "ok", yajl_t_any);
  if (!rc && !(ok && (YAJL_IS_TRUE(ok) || YAJL_IS_FALSE(ok)))) rc = bad(r, where, "ok", "true or false");
  if (!rc) m->ok = YAJL_IS_TRUE(ok);
  for (size_t k = 0; !rc && k < N_METRIC_FIELDS; k++) {
    const metric_field *f = &metric_fields[k];
    rc = f->is_double ? get_dbl(r, o, where, f->name, dbl_at(f, m)) : get_u64(r, o, where, f->name, u64_at(f, m));
  }
  yajl_val e = member(o, "error", yajl_t_string);
  if (!rc && e) snprintf(m->error, sizeof m->error, "%s", YAJL_GET_STRING(e));
  if (!rc && m->ok && !m->time_ns) rc = bad(r, where, "time_ns", "a time above 0 for a workload that ran");
  return rc;
}

static int read_rules(const rd *r, yajl_val root, chakra_suite_result *res) {
  yajl_val list = member(root, "rules", yajl_t_array);
  if (!list) return bad(r, "", "rules", "a list of strings");
  if (list->u.array.len && !(res->rules = calloc(list->u.array.len, sizeof *res->rules)))
    return chakra_error_set(r->err, CHAKRA_ENOMEM, "out of memory");
  for (size_t i = 0; i < list->u.array.len; i++) {
    yajl_val s = list->u.array.values[i];
    char key[32];
    snprintf(key, sizeof key, "rules[%zu]", i);
    if (!YAJL_IS_STRING(s)) return bad(r, "", key, "a string");
    if (!(res->rules[res->n_rules++] = strdup(str_of(s))))
      return chakra_error_set(r->err, CHAKRA_ENOMEM, "out of memory");
  }
  return CHAKRA_OK;
}

static int read_head(const rd *r, yajl_val root, chakra_suite_result *res, const chakra_suite_version **v) {
  int rc = get_string(r, root, "", "suite_version", &res->suite_version);
  char q[96];
  if (!rc && !(*v = chakra_suite_version_find(res->suite_version)))
    return chakra_error_set(r->err, CHAKRA_EFORMAT, "%s: suite_version: \"%s\" is not a version this tool knows",
                            r->path, cg_quote(res->suite_version, q, sizeof q));
  if (!rc) rc = get_string(r, root, "", "tool_version", &res->tool_version);
  if (!rc) rc = get_string(r, root, "", "name", &res->name);
  if (!rc) rc = get_string(r, root, "", "division", &res->division);
  if (!rc && strcmp(res->division, "closed") && strcmp(res->division, "open"))
    rc = bad(r, "", "division", "\"closed\" or \"open\"");
  if (!rc) rc = get_string(r, root, "", "mode", &res->mode);
  if (!rc) rc = get_string(r, root, "", "dir", &res->dir);
  if (!rc) rc = read_file_entry(r, root, "system", &res->system_path, &res->system_sha256, &res->system_text);
  if (!rc) rc = read_file_entry(r, root, "network", &res->network_path, &res->network_sha256, &res->network_text);
  if (!rc) rc = read_rules(r, root, res);
  yajl_val decl = member(root, "declared", yajl_t_object);
  if (!rc && !decl) rc = bad(r, "", "declared", "an object");
  if (!rc) rc = get_dbl(r, decl, "declared", "peak_tflops", &res->peak_tflops);
  if (!rc) rc = get_string(r, decl, "declared", "network", &res->declared_network);
  return rc;
}

static int read_tree(const rd *r, yajl_val root, chakra_suite_result *res) {
  if (!YAJL_IS_OBJECT(root) || !member(root, "chakra_suite_result", yajl_t_number))
    return chakra_error_set(r->err, CHAKRA_EFORMAT, "%s: not a suite result (no \"chakra_suite_result\" member)",
                            r->path);
  const chakra_suite_version *v = NULL;
  int rc = read_head(r, root, res, &v);
  yajl_val list = rc ? NULL : member(root, "workloads", yajl_t_array);
  if (!rc && !list) rc = bad(r, "", "workloads", "a list");
  if (rc) return rc;
  size_t n = list->u.array.len;
  res->m = calloc(n ? n : 1, sizeof *res->m);
  res->wl_name = calloc(n ? n : 1, sizeof *res->wl_name);
  res->wl_sha256 = calloc(n ? n : 1, sizeof *res->wl_sha256);
  if (!res->m || !res->wl_name || !res->wl_sha256) return chakra_error_set(r->err, CHAKRA_ENOMEM, "out of memory");
  res->n = n;
  for (size_t i = 0; !rc && i < n; i++) rc = read_workload(r, list->u.array.values[i], i, v, res);
  return rc;
}

int chakra_suite_result_read(chakra_suite_result *res, const char *path, chakra_error *err) {
  memset(res, 0, sizeof *res);
  char *text = NULL;
  int rc = suitesys_read(path, &text, NULL, err);
  if (rc) return rc;
  char why[256] = "";
  yajl_val root = yajl_tree_parse(text, why, sizeof why);
  free(text);
  if (!root) {
    for (char *p = why; *p; p++)
      if (*p == '\n' || *p == '\r') *p = ' ';
    return chakra_error_set(err, CHAKRA_EFORMAT, "%s: not JSON: %s", path, why);
  }
  rd r = {path, err};
  if (!(res->path = strdup(path))) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  if (!rc) rc = read_tree(&r, root, res);
  yajl_tree_free(root);
  if (rc) chakra_suite_result_free(res);
  return rc;
}

void chakra_suite_result_free(chakra_suite_result *r) {
  char **strs[] = {&r->path,         &r->suite_version,  &r->tool_version, &r->name,          &r->division,
                   &r->mode,         &r->dir,            &r->system_path,  &r->system_sha256, &r->system_text,
                   &r->network_path, &r->network_sha256, &r->network_text, &r->declared_network};
  for (size_t i = 0; i < sizeof strs / sizeof *strs; i++) free(*strs[i]);
  for (size_t i = 0; i < r->n_rules; i++) free(r->rules[i]);
  for (size_t i = 0; i < r->n; i++) {
    if (r->wl_name) free(r->wl_name[i]);
    if (r->wl_sha256) free(r->wl_sha256[i]);
  }
  free(r->rules);
  free(r->wl_name);
  free(r->wl_sha256);
  free(r->m);
  memset(r, 0, sizeof *r);
}
