/* sweep.c - one workload simulated on a grid of configurations (see
 * include/chakra/sweep.h): the --vary axes, each point's configuration,
 * running points on threads and writing the table. */
#include "chakra/sweep.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "../report/csv.h"
#include "../util/tasks.h"
#include "../util/textout.h"
#include "../util/vec.h"

/* What an axis sets. */
typedef enum {
  AX_JSON,        /* a system or remote-memory key, through chakra_sim_config_set */
  AX_BANDWIDTH,   /* network dimension(s) */
  AX_LATENCY,
  AX_TOPOLOGY,
  AX_MODEL,       /* run parameters */
  AX_SYMMETRY,
  AX_INJECTION,
  AX_QUEUES,
  AX_SCALING
} sweep_kind;

typedef struct sweep_axis {
  char *text;     /* the --vary text, for messages */
  char *key;      /* as given, without the values */
  const char *name; /* the key the axis sets (JSON key), inside key */
  sweep_kind kind;
  int dim;        /* network axes: the dimension, -1 = all */
  char **values;  /* as given */
  char **json;    /* AX_JSON: each value as JSON text */
  double *num;    /* numeric axes: each value parsed */
  size_t n;
} sweep_axis;

struct chakra_sweep {
  sweep_axis *axes;
  size_t n_axes, points;
  sweep_axis *fixed;  /* chakra_sweep_fix(): one value each, set on every point, not columns */
  size_t n_fixed;
};

static void axis_free(sweep_axis *a) {
  for (size_t i = 0; i < a->n; i++) {
    free(a->values[i]);
    if (a->json) free(a->json[i]);
  }
  free(a->values);
  free(a->json);
  free(a->num);
  free(a->text);
  free(a->key);
}

void chakra_sweep_free(chakra_sweep *s) {
  if (!s) return;
  for (size_t i = 0; i < s->n_axes; i++) axis_free(&s->axes[i]);
  for (size_t i = 0; i < s->n_fixed; i++) axis_free(&s->fixed[i]);
  free(s->axes);
  free(s->fixed);
  free(s);
}

/* Splits v at commas outside brackets, braces and double quotes. */
static int split_values(sweep_axis *a, const char *v, chakra_error *err) {
  size_t cap = 1;
  for (const char *p = v; *p; p++) cap += *p == ',';
  a->values = calloc(cap, sizeof *a->values);
  if (!a->values) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  int depth = 0, quoted = 0;
  const char *start = v;
  for (const char *p = v;; p++) {
    if (*p == '"' && (p == v || p[-1] != '\\')) quoted = !quoted;
    else if (!quoted && (*p == '[' || *p == '{')) depth++;
    else if (!quoted && (*p == ']' || *p == '}')) depth--;
    if (*p && (*p != ',' || depth > 0 || quoted)) continue;
    size_t len = (size_t)(p - start);
    if (len == 0) return chakra_error_set(err, CHAKRA_EINVAL, "--vary %s: an empty value", a->text);
    if (!(a->values[a->n] = strndup(start, len))) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    a->n++;
    if (!*p) break;
    start = p + 1;
  }
  return 0;
}

/* "bandwidth", "network.bandwidth[2]" ...: sets kind and dim, or returns 0
 * when the key is not a network key. -1: a malformed dimension. */
static int network_key(sweep_axis *a) {
  static const struct { const char *name; sweep_kind kind; } names[] = {
      {"bandwidth", AX_BANDWIDTH}, {"latency", AX_LATENCY}, {"topology", AX_TOPOLOGY}};
  const char *k = a->key;
  int prefixed = strncmp(k, "network.", 8) == 0;
  if (prefixed) k += 8;
  for (size_t i = 0; i < 3; i++) {
    size_t l = strlen(names[i].name);
    if (strncmp(k, names[i].name, l) != 0) continue;
    a->kind = names[i].kind;
    a->dim = -1;
    if (!k[l]) return 1;
    char *end;
    if (k[l] != '[' || k[l + 1] < '0' || k[l + 1] > '9') continue;
    long d = strtol(k + l + 1, &end, 10);
    if (strcmp(end, "]") != 0 || d >= CHAKRA_TOPO_MAX_DIMS) return -1;
    a->dim = (int)d;
    return 1;
  }
  return prefixed ? -2 : 0;
}

static int is_impl_key(const char *k) {
  size_t n = strlen(k);
  return (n > 15 && strcmp(k + n - 15, "-implementation") == 0) ||
         (n > 22 && strcmp(k + n - 22, "-implementation-custom") == 0);
}

/* Appends s to b (which has room) as a JSON string. */
static void json_text(char *b, const char *s) {
  size_t o = strlen(b);
  b[o + jsonw_escape(b + o, s, strlen(s), 0, NULL)] = 0;
}

/* A value of a JSON key as JSON text (malloc'd). */
static char *value_json(const char *key, const char *v) {
  yajl_val t = yajl_tree_parse(v, NULL, 0);
  if (t) {
    yajl_tree_free(t);
    return strdup(v);
  }
  size_t n = strlen(v);
  char *b = calloc(1, JSONW_ESCAPED_MAX(n) + 3 * n + 8); /* each word escaped, a comma each, brackets */
  if (!b) return NULL;
  if (!is_impl_key(key)) {
    json_text(b, v);
    return b;
  }
  /* ring -> ["ring"]; [ring,direct] -> ["ring","direct"] */
  int listed = v[0] == '[' && v[n - 1] == ']';
  char *words = strndup(v + listed, n - 2 * (size_t)listed);
  if (!words) return free(b), NULL;
  strcpy(b, "[");
  char *save = NULL;
  int first = 1;
  for (char *w = strtok_r(words, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
    while (*w == ' ') w++;
    if (!first) strcat(b, ",");
    json_text(b, w);
    first = 0;
  }
  strcat(b, "]");
  free(words);
  return b;
}

static int parse_numbers(sweep_axis *a, chakra_error *err) {
  if (!(a->num = calloc(a->n, sizeof *a->num))) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (size_t i = 0; i < a->n; i++) {
    const char *v = a->values[i];
    char *end;
    double d = strtod(v, &end);
    if (a->kind == AX_TOPOLOGY || a->kind == AX_MODEL || a->kind == AX_SYMMETRY || a->kind == AX_SCALING) {
      static const char *const kinds[] = {"Ring", "FullyConnected", "Switch"};
      static const char *const models[] = {"aware", "unaware"};
      static const char *const modes[] = {"auto", "off"}; /* CHAKRA_SIM_SYMMETRY_* */
      static const char *const scalings[] = {"scale", "as-is"};
      const char *const *names = a->kind == AX_TOPOLOGY ? kinds : a->kind == AX_MODEL ? models : a->kind == AX_SYMMETRY ? modes : scalings;
      int n = a->kind == AX_TOPOLOGY ? 3 : 2, k = 0;
      while (k < n && strcmp(v, names[k]) != 0) k++;
      if (k == n)
        return chakra_error_set(err, CHAKRA_EINVAL, "--vary %s: '%s' is not %s", a->text, v,
                                a->kind == AX_TOPOLOGY ? "Ring, FullyConnected or Switch"
                                : a->kind == AX_MODEL  ? "aware or unaware"
                                  : a->kind == AX_SYMMETRY ? "auto or off"
                                                         : "scale or as-is");
      a->num[i] = k;
      continue;
    }
    int ok = end != v && !*end && isfinite(d);
    if (a->kind == AX_BANDWIDTH || a->kind == AX_INJECTION) ok = ok && d > 0;
    if (a->kind == AX_LATENCY) ok = ok && d >= 0;
    if (a->kind == AX_QUEUES) ok = ok && d >= 1 && d <= 64 && d == floor(d);
    if (!ok)
      return chakra_error_set(err, CHAKRA_EINVAL, "--vary %s: '%s' is not %s", a->text, v,
                              a->kind == AX_LATENCY  ? "a number of ns >= 0"
                              : a->kind == AX_QUEUES ? "a count in 1..64"
                                                     : "a number > 0");
    a->num[i] = d;
  }
  return 0;
}

static int parse_axis(sweep_axis *a, const char *text, chakra_error *err) {
  if (!(a->text = strdup(text))) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  const char *eq = strchr(text, '=');
  if (!eq || eq == text || !eq[1])
    return chakra_error_set(err, CHAKRA_EINVAL, "--vary %s: expected KEY=VALUE1,VALUE2,...", text);
  if (!(a->key = strndup(text, (size_t)(eq - text)))) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  int rc = split_values(a, eq + 1, err);
  if (rc) return rc;
  int net = network_key(a);
  if (net == -1)
    return chakra_error_set(err, CHAKRA_EINVAL, "--vary %s: a dimension is written [D] with D in 0..%d", text,
                            CHAKRA_TOPO_MAX_DIMS - 1);
  if (net == -2)
    return chakra_error_set(err, CHAKRA_EINVAL,
                            "--vary %s: unknown network key (expected bandwidth, latency or topology, optionally "
                            "with [D])", text);
  if (net == 1) return parse_numbers(a, err);
  static const struct { const char *name; sweep_kind kind; } params[] = {
      {"network-model", AX_MODEL}, {"injection-scale", AX_INJECTION}, {"num-queues-per-dim", AX_QUEUES},
      {"symmetry", AX_SYMMETRY}, {"custom-collective-scaling", AX_SCALING}};
  for (size_t i = 0; i < sizeof params / sizeof *params; i++)
    if (strcmp(a->key, params[i].name) == 0) {
      a->kind = params[i].kind;
      return parse_numbers(a, err);
    }
  a->kind = AX_JSON;
  a->name = strncmp(a->key, "system.", 7) == 0 ? a->key + 7 : a->key;
  if (!*a->name) return chakra_error_set(err, CHAKRA_EINVAL, "--vary %s: an empty key", text);
  if (!(a->json = calloc(a->n, sizeof *a->json))) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (size_t i = 0; i < a->n; i++)
    if (!(a->json[i] = value_json(a->name, a->values[i]))) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  return 0;
}

/* Two axes that set the same thing would make half the grid a lie. */
static int same_target(const sweep_axis *a, const sweep_axis *b) {
  if (a->kind != b->kind) return 0;
  if (a->kind == AX_JSON) return strcmp(a->name, b->name) == 0;
  if (a->kind == AX_BANDWIDTH || a->kind == AX_LATENCY || a->kind == AX_TOPOLOGY)
    return a->dim == b->dim || a->dim < 0 || b->dim < 0;
  return 1;
}

int chakra_sweep_new(chakra_sweep **out, const char *const *vary, size_t n, chakra_error *err) {
  *out = NULL;
  chakra_sweep *s = calloc(1, sizeof *s);
  if (!s || !(s->axes = calloc(n ? n : 1, sizeof *s->axes))) {
    free(s);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  s->points = 1;
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    s->n_axes++;
    rc = parse_axis(&s->axes[i], vary[i], err);
    for (size_t k = 0; k < i && !rc; k++)
      if (same_target(&s->axes[k], &s->axes[i]))
        rc = chakra_error_set(err, CHAKRA_EINVAL, "--vary %s: sets what --vary %s sets", vary[i], vary[k]);
    if (!rc && s->points > ((size_t)1 << 40) / s->axes[i].n)
      rc = chakra_error_set(err, CHAKRA_EINVAL, "--vary %s: the grid has more than 2^40 points", vary[i]);
    if (!rc) s->points *= s->axes[i].n;
  }
  if (rc) {
    chakra_sweep_free(s);
    return rc;
  }
  *out = s;
  return 0;
}

int chakra_sweep_fix(chakra_sweep *s, const char *key_value, chakra_error *err) {
  sweep_axis *a = VEC_APPEND(s->fixed, s->n_fixed);
  if (!a) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  memset(a, 0, sizeof *a);
  int rc = parse_axis(a, key_value, err);
  if (!rc && a->n != 1) rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: one value, not %zu", key_value, a->n);
  for (size_t k = 0; k < s->n_axes && !rc; k++)
    if (same_target(&s->axes[k], a))
      rc = chakra_error_set(err, CHAKRA_EINVAL, "--vary %s: sets what --%s sets", s->axes[k].text, a->key);
  return rc;
}

size_t chakra_sweep_points(const chakra_sweep *s) { return s->points; }
size_t chakra_sweep_axes(const chakra_sweep *s) { return s->n_axes; }
const char *chakra_sweep_key(const chakra_sweep *s, size_t a) { return s->axes[a].key; }

/* The index of axis a's value at point p (the last axis varies fastest). */
static size_t value_index(const chakra_sweep *s, size_t a, size_t p) {
  for (size_t k = s->n_axes; k-- > a + 1;) p /= s->axes[k].n;
  return p % s->axes[a].n;
}

const char *chakra_sweep_value(const chakra_sweep *s, size_t a, size_t p) {
  return s->axes[a].values[value_index(s, a, p)];
}

/* Sets value v of axis a on c; network values go to dims (applied after
 * every axis). */
static int apply_value(const sweep_axis *a, size_t v, chakra_sim_config *c, chakra_topo_dim *dims, int ndims,
                       chakra_diag_fn diag, void *diag_ctx, chakra_error *err) {
  chakra_sim_params *p = chakra_sim_config_params(c);
  switch (a->kind) {
    case AX_JSON: {
      int rc = chakra_sim_config_set(c, a->name, a->json[v], diag, diag_ctx, err);
      if (rc && err) {
        char why[sizeof err->msg];
        const char *m = strncmp(err->msg, "configuration: ", 15) == 0 ? err->msg + 15 : err->msg;
        snprintf(why, sizeof why, "%s", m);
        if (strstr(why, "unknown key"))
          chakra_error_set(err, rc,
                           "--vary %s: unknown key \"%s\" (expected a system or remote-memory JSON key, "
                           "bandwidth[D], latency[D], topology[D], network-model, injection-scale, "
                           "num-queues-per-dim, symmetry or custom-collective-scaling)", a->text, a->name);
        else
          chakra_error_set(err, rc, "--vary %s: value '%s': %s", a->text, a->values[v], why);
      }
      return rc;
    }
    case AX_MODEL: p->network_model = a->num[v] == 0 ? CHAKRA_NET_AWARE : CHAKRA_NET_UNAWARE; return 0;
    case AX_INJECTION: p->injection_scale = a->num[v]; return 0;
    case AX_QUEUES: p->queues_per_dim = (uint32_t)a->num[v]; return 0;
    case AX_SYMMETRY: p->symmetry = a->num[v] == 0 ? CHAKRA_SIM_SYMMETRY_AUTO : CHAKRA_SIM_SYMMETRY_OFF; return 0;
    case AX_SCALING: p->custom_as_is = a->num[v] == 1; return 0;
    default: break;
  }
  if (a->dim >= ndims)
    return chakra_error_set(err, CHAKRA_EINVAL, "--vary %s: the network has %d dimension(s), 0..%d", a->text, ndims,
                            ndims - 1);
  for (int d = a->dim < 0 ? 0 : a->dim; d < (a->dim < 0 ? ndims : a->dim + 1); d++) {
    if (a->kind == AX_BANDWIDTH) dims[d].bandwidth_gbps = a->num[v];
    else if (a->kind == AX_LATENCY) dims[d].latency_ns = a->num[v];
    else dims[d].kind = (chakra_topo_kind)a->num[v];
  }
  return 0;
}

/* Replaces c's network with one of dims. */
static int replace_topo(chakra_sim_config *c, const chakra_topo_dim *dims, int ndims, chakra_error *err) {
  chakra_topo *t;
  int rc = chakra_topo_new(&t, dims, ndims, err);
  if (!rc) rc = chakra_sim_config_set_topo(c, t, err);
  chakra_topo_free(t);
  return rc;
}

/* Loads files and sets value choice[a] of every axis a (choice NULL: every
 * value of every axis in turn, the check). */
static int build(const chakra_sweep *s, const size_t *choice, const chakra_sim_files *files, chakra_diag_fn diag,
                 void *diag_ctx, chakra_sim_config **out, chakra_error *err) {
  chakra_sim_config *c;
  int rc = chakra_sim_config_load(&c, files, diag, diag_ctx, err);
  if (rc) return rc;
  chakra_topo_dim dims[CHAKRA_TOPO_MAX_DIMS];
  const chakra_topo *topo = chakra_sim_config_topo(c);
  int ndims = chakra_topo_dims(topo), net = 0;
  for (int d = 0; d < ndims; d++) dims[d] = *chakra_topo_dim_at(topo, d);
  for (size_t a = 0; a < s->n_fixed && !rc; a++)
    rc = apply_value(&s->fixed[a], 0, c, dims, ndims, choice ? NULL : diag, diag_ctx, err);
  for (size_t a = 0; a < s->n_axes && !rc; a++) {
    const sweep_axis *x = &s->axes[a];
    net |= x->kind == AX_BANDWIDTH || x->kind == AX_LATENCY || x->kind == AX_TOPOLOGY;
    for (size_t v = choice ? choice[a] : 0; v < (choice ? choice[a] + 1 : x->n) && !rc; v++)
      rc = apply_value(x, v, c, dims, ndims, choice ? NULL : diag, diag_ctx, err);
  }
  if (!rc && net && dims[0].kind == CHAKRA_TOPO_LINKS)
    rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: a link list: each link has its own bandwidth and latency, so the "
                          "network axes (bandwidth, latency, topology) do not apply; edit the file instead", files->network);
  if (!rc && net) rc = replace_topo(c, dims, ndims, err);
  if (rc) {
    chakra_sim_config_free(c);
    return rc;
  }
  *out = c;
  return 0;
}

int chakra_sweep_check(const chakra_sweep *s, const chakra_sim_files *files, chakra_diag_fn diag, void *diag_ctx,
                       chakra_error *err) {
  chakra_sim_config *c = NULL;
  int rc = build(s, NULL, files, diag, diag_ctx, &c, err);
  chakra_sim_config_free(c);
  return rc;
}

int chakra_sweep_config(const chakra_sweep *s, size_t p, const chakra_sim_files *files, chakra_sim_config **out,
                        chakra_error *err) {
  *out = NULL;
  if (p >= s->points) return chakra_error_set(err, CHAKRA_EINVAL, "sweep: point %zu of %zu", p, s->points);
  size_t choice[64];
  size_t *ch = s->n_axes <= 64 ? choice : malloc(s->n_axes * sizeof *ch);
  if (!ch) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (size_t a = 0; a < s->n_axes; a++) ch[a] = value_index(s, a, p);
  int rc = build(s, ch, files, NULL, NULL, out, err);
  if (ch != choice) free(ch);
  return rc;
}

/* ---- running points ---- */

/* Copies as much of msg as fits (messages may be longer than a row holds). */
static void row_error(chakra_sweep_row *row, const char *msg) {
  size_t n = strnlen(msg, sizeof row->error - 1);
  memcpy(row->error, msg, n);
  row->error[n] = 0;
}

static void row_from_result(chakra_sweep_row *row, const chakra_run_record *r) {
  chakra_run_summary m;
  chakra_run_summarise(r, &m);
  row->npus = r->npus;
  row->finished = m.finished, row->slowest_rank = m.slowest_rank;
  row->max_finish_ns = m.max_finish_ns, row->min_finish_ns = m.min_finish_ns, row->mean_finish_ns = m.mean_finish_ns;
  row->max_exposed_comm_ns = m.max_exposed_comm_ns, row->mean_exposed_comm_ns = m.mean_exposed_comm_ns;
  row->mean_comm_ns = m.mean_comm_ns, row->mean_compute_ns = m.mean_compute_ns;
  row->events = r->events;
  row->messages = r->messages;
  row->sim_seconds = r->wall_seconds;
  row->status = r->n_stuck ? CHAKRA_SWEEP_STUCK : CHAKRA_SWEEP_OK;
  if (r->n_stuck) row_error(row, r->stuck[0]);
}

typedef struct sweep_job {
  const chakra_sweep *s;
  const chakra_sim_files *files;
  const chakra_sim_workload *w;
  const size_t *points;
  size_t n, done;
  chakra_sweep_row *rows;
  chakra_progress_fn progress;
  void *progress_ctx;
  int canceled;
  pthread_mutex_t lock;
} sweep_job;

static void run_point(sweep_job *j, size_t i) {
  chakra_sweep_row *row = &j->rows[i];
  memset(row, 0, sizeof *row);
  row->point = j->points[i];
  chakra_error err = {0};
  chakra_sim_config *c = NULL;
  chakra_run_record res;
  memset(&res, 0, sizeof res);
  int rc = chakra_sweep_config(j->s, j->points[i], j->files, &c, &err);
  if (!rc) {
    chakra_sim_run_options ro = {0};
    rc = chakra_sim_run(c, j->w, &ro, &res, &err);
  }
  if (rc) {
    row->status = CHAKRA_SWEEP_FAILED;
    row_error(row, err.msg);
  } else {
    row_from_result(row, &res);
  }
  chakra_run_record_free(&res);
  chakra_sim_config_free(c);
}

static int sweep_task(void *ctx, size_t i) {
  sweep_job *j = ctx;
  pthread_mutex_lock(&j->lock);
  int canceled = j->canceled;
  pthread_mutex_unlock(&j->lock);
  if (canceled) {
    memset(&j->rows[i], 0, sizeof j->rows[i]);
    j->rows[i].point = j->points[i];
    j->rows[i].status = CHAKRA_SWEEP_FAILED;
    row_error(&j->rows[i], "canceled");
    return 0;
  }
  run_point(j, i);
  pthread_mutex_lock(&j->lock);
  j->done++;
  if (j->progress && j->progress(j->progress_ctx, "sweep", j->done, j->n)) j->canceled = 1;
  pthread_mutex_unlock(&j->lock);
  return 0;
}

int chakra_sweep_run(const chakra_sweep *s, const chakra_sim_files *files, const chakra_sim_workload *w,
                     const size_t *points, size_t n, unsigned threads, chakra_sweep_row *rows,
                     chakra_progress_fn progress, void *progress_ctx, chakra_error *err) {
  for (size_t i = 0; i < n; i++)
    if (points[i] >= s->points)
      return chakra_error_set(err, CHAKRA_EINVAL, "sweep: point %zu of a grid of %zu", points[i], s->points);
  sweep_job j = {.s = s, .files = files, .w = w, .points = points, .n = n, .rows = rows, .progress = progress,
                 .progress_ctx = progress_ctx};
  if (pthread_mutex_init(&j.lock, NULL)) return chakra_error_set(err, CHAKRA_ENOMEM, "sweep: no mutex");
  tasks_run(n, threads, sweep_task, &j, 0);
  pthread_mutex_destroy(&j.lock);
  return j.canceled ? chakra_error_set(err, CHAKRA_ECANCELED, "sweep: canceled") : 0;
}

/* ---- the table ---- */

static const char *const status_names[] = {"ok", "stuck", "failed"};

static const char csv_head[] =
    "status,npus,finished,max_finish_ns,slowest_rank,min_finish_ns,mean_finish_ns,max_exposed_comm_ns,"
    "mean_exposed_comm_ns,mean_comm_ns,mean_compute_ns,events,messages,sim_seconds,error\n";

static void write_csv(const chakra_sweep *s, const chakra_sweep_row *rows, jsonw *w) {
  for (size_t a = 0; a < s->n_axes; a++) {
    csv_field(w, s->axes[a].key);
    csv_next(w);
  }
  jsonw_lit(w, csv_head);
  for (size_t p = 0; p < s->points; p++) {
    const chakra_sweep_row *r = &rows[p];
    for (size_t a = 0; a < s->n_axes; a++) {
      csv_field(w, chakra_sweep_value(s, a, p));
      csv_next(w);
    }
    textout_printf(w, "%s,%u,%u,%llu,%u,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%.3f,", status_names[r->status],
                   r->npus, r->finished, (unsigned long long)r->max_finish_ns, r->slowest_rank,
                   (unsigned long long)r->min_finish_ns, (unsigned long long)r->mean_finish_ns,
                   (unsigned long long)r->max_exposed_comm_ns, (unsigned long long)r->mean_exposed_comm_ns,
                   (unsigned long long)r->mean_comm_ns, (unsigned long long)r->mean_compute_ns,
                   (unsigned long long)r->events, (unsigned long long)r->messages, r->sim_seconds);
    csv_field(w, r->error);
    csv_end(w);
  }
}

static void json_key(jsonw *w, const char *k) {
  jsonw_string(w, k, strlen(k));
  jsonw_char(w, ':');
}

static void json_row(jsonw *w, const chakra_sweep *s, const chakra_sweep_row *r, size_t p) {
  jsonw_lit(w, p ? ",\n{" : "\n{");
  json_key(w, "config");
  jsonw_char(w, '{');
  for (size_t a = 0; a < s->n_axes; a++) {
    if (a) jsonw_char(w, ',');
    json_key(w, s->axes[a].key);
    const char *v = chakra_sweep_value(s, a, p);
    jsonw_string(w, v, strlen(v));
  }
  jsonw_lit(w, "},\"status\":");
  jsonw_string(w, status_names[r->status], strlen(status_names[r->status]));
  const struct { const char *k; uint64_t v; } ints[] = {
      {"npus", r->npus}, {"finished", r->finished}, {"max_finish_ns", r->max_finish_ns},
      {"slowest_rank", r->slowest_rank}, {"min_finish_ns", r->min_finish_ns}, {"mean_finish_ns", r->mean_finish_ns},
      {"max_exposed_comm_ns", r->max_exposed_comm_ns}, {"mean_exposed_comm_ns", r->mean_exposed_comm_ns},
      {"mean_comm_ns", r->mean_comm_ns}, {"mean_compute_ns", r->mean_compute_ns}, {"events", r->events},
      {"messages", r->messages}};
  for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) {
    jsonw_char(w, ',');
    json_key(w, ints[i].k);
    jsonw_u64(w, ints[i].v);
  }
  jsonw_char(w, ',');
  json_key(w, "sim_seconds");
  jsonw_double(w, r->sim_seconds);
  if (r->error[0]) {
    jsonw_char(w, ',');
    json_key(w, "error");
    jsonw_string(w, r->error, strlen(r->error));
  }
  jsonw_char(w, '}');
}

static void write_json(const chakra_sweep *s, const chakra_sweep_row *rows, jsonw *w) {
  jsonw_lit(w, "{\"vary\":[");
  for (size_t a = 0; a < s->n_axes; a++) {
    if (a) jsonw_char(w, ',');
    jsonw_string(w, s->axes[a].key, strlen(s->axes[a].key));
  }
  jsonw_lit(w, "],\"points\":");
  jsonw_u64(w, s->points);
  jsonw_lit(w, ",\"rows\":[");
  for (size_t p = 0; p < s->points; p++) json_row(w, s, &rows[p], p);
  jsonw_lit(w, "\n]}\n");
}

int chakra_sweep_write(const chakra_sweep *s, const chakra_sweep_row *rows, const char *path, chakra_error *err) {
  textout t;
  int rc = textout_open(&t, path, err);
  if (rc) return rc;
  size_t n = strlen(path), gz = outfile_name_is_gzip(path) ? 3 : 0;
  int json = n >= 5 + gz && strncmp(path + n - gz - 5, ".json", 5) == 0;
  if (json) write_json(s, rows, &t.w);
  else write_csv(s, rows, &t.w);
  return textout_close(&t, 0, err);
}
