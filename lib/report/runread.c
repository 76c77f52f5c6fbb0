/* runread.c - the report JSON read back into a run record, the one reader
 * of the schema (docs/report.md) that plot, compare and whoever takes a
 * report use; see include/chakra/run.h and runread.h. Documents are
 * bounded by reportjson.c; every number is checked before it is kept, and
 * the first problem is one line naming the file and the field. Members
 * the schema does not have are left alone (a newer writer may add some). */
#include "runread.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/commgroups.h"
#include "chakra/attr.h"
#include "reportjson.h"
#include "runint.h"

typedef struct rd {
  const char *name;   /* the file, for messages */
  chakra_error *err;
  chakra_run_record *r;
  int64_t last_group; /* the group the previous instance named */
} rd;

/* "ranks[3]" + "gpu_ns" -> "ranks[3].gpu_ns" (the key quoted as messages
 * quote names); at the top level the key alone. */
static const char *place(char *buf, size_t size, const char *where, const char *key) {
  char q[80];
  cg_quote(key, q, sizeof q);
  size_t a = strnlen(where, size / 2), b = strnlen(q, size - a - 2);
  memcpy(buf, where, a);
  if (a) buf[a++] = '.';
  memcpy(buf + a, q, b);
  buf[a + b] = 0;
  return buf;
}

/* What v is, for "not ..." in a message. */
static const char *shown(yajl_val v, char *buf, size_t size) {
  if (YAJL_IS_NUMBER(v)) return cg_quote(v->u.number.r, buf, size);
  if (YAJL_IS_STRING(v)) {
    char q[64];
    snprintf(buf, size, "\"%s\"", cg_quote(YAJL_GET_STRING(v), q, sizeof q));
    return buf;
  }
  return YAJL_IS_TRUE(v) ? "true" : YAJL_IS_FALSE(v) ? "false" : YAJL_IS_NULL(v) ? "null"
         : YAJL_IS_OBJECT(v)                                        ? "an object"
                                                                    : "a list";
}

static int bad(rd *c, const char *at, const char *expected, yajl_val v) {
  char text[80];
  return chakra_error_set(c->err, CHAKRA_EFORMAT, "%s: %s: expected %s, not %s", c->name, at, expected,
                          shown(v, text, sizeof text));
}

static int oom(rd *c) { return chakra_error_set(c->err, CHAKRA_ENOMEM, "out of memory"); }

/* A whole number 0 .. 2^64-1 (written as digits, or as a number with a
 * fraction or exponent whose value is whole: 1000.0, 1e3). */
static int whole(rd *c, yajl_val v, const char *at, uint64_t *out) {
  *out = 0;
  if (!v) return 0;
  if (YAJL_IS_NUMBER(v)) {
    const char *t = v->u.number.r;
    size_t digits = strspn(t, "0123456789");
    if (digits && !t[digits]) {
      errno = 0;
      unsigned long long x = strtoull(t, NULL, 10);
      if (!errno) return *out = x, 0;
    } else {
      double d = strtod(t, NULL);
      if (isfinite(d) && d >= 0 && d == floor(d) && d < 18446744073709551616.0) return *out = (uint64_t)d, 0;
    }
  }
  return bad(c, at, "a whole number >= 0 of at most 2^64-1", v);
}

static int whole32(rd *c, yajl_val v, const char *at, uint32_t *out) {
  uint64_t x;
  int rc = whole(c, v, at, &x);
  if (!rc && x > UINT32_MAX) rc = bad(c, at, "a whole number >= 0 of at most 2^32-1", v);
  *out = rc ? 0 : (uint32_t)x;
  return rc;
}

/* A finite number >= 0 (the roofline figures, seconds, scales). */
static int amount(rd *c, yajl_val v, const char *at, double *out) {
  *out = 0;
  if (!v) return 0;
  if (YAJL_IS_NUMBER(v)) {
    double d = strtod(v->u.number.r, NULL);
    if (isfinite(d) && d >= 0) return *out = d + 0.0, 0; /* -0 kept as 0 */
  }
  return bad(c, at, "a finite number >= 0", v);
}

/* ---- ranks ---- */

/* Derived by the writer: checked, then derived again. */
static const char *const rank_derived[] = {"overlap_ns", "replayer_ns"};

#define N_OF(a) (sizeof(a) / sizeof *(a))

/* The field of key in any of the lists, or NULL. */
static const runrec_field *find(const runrec_fields *const *lists, size_t n, const char *key) {
  for (size_t l = 0; l < n; l++)
    for (size_t i = 0; i < lists[l]->n; i++)
      if (strcmp(lists[l]->f[i].key, key) == 0) return &lists[l]->f[i];
  return NULL;
}

static const runrec_fields *const rank_wholes[] = {&runrec_rank_times, &runrec_rank_nodes, &runrec_rank_p2p,
                                                   &runrec_rank_replay};
static const runrec_fields *const rank_amounts[] = {&runrec_rank_roofline};
static const runrec_fields *const inst_wholes[] = {&runrec_inst_ids, &runrec_inst_figures};

static int one_coll(rd *c, yajl_val v, const char *at, chakra_run_coll *out) {
  if (!YAJL_IS_OBJECT(v)) return bad(c, at, "an object", v);
  static const char *const keys[] = {"count", "bytes", "time_ns"};
  uint64_t *dst[] = {&out->count, &out->bytes, &out->time_ns};
  int rc = 0;
  for (int i = 0; i < 3 && !rc; i++) {
    char p[256];
    rc = whole(c, reportjson_get(v, keys[i]), place(p, sizeof p, at, keys[i]), dst[i]);
  }
  return rc;
}

static int collectives(rd *c, yajl_val v, const char *at, chakra_run_rank *k) {
  if (!YAJL_IS_OBJECT(v)) return bad(c, at, "an object", v);
  unsigned seen = 0;
  int rc = 0;
  for (size_t i = 0; i < YAJL_GET_OBJECT(v)->len && !rc; i++) {
    const char *key = YAJL_GET_OBJECT(v)->keys[i];
    char p[256];
    place(p, sizeof p, at, key);
    int t = chakra_comm_type_parse(key);
    if (t < 0)
      rc = chakra_error_set(c->err, CHAKRA_EFORMAT,
                            "%s: %s: not a collective type (expected a CollectiveCommType name: ALL_REDUCE, "
                            "ALL_GATHER, REDUCE_SCATTER, ALL_TO_ALL, BROADCAST, ...)", c->name, p);
    else if (seen & 1u << t)
      rc = chakra_error_set(c->err, CHAKRA_EFORMAT, "%s: %s: %s is listed twice", c->name, p,
                            chakra_comm_type_name(t));
    else {
      seen |= 1u << t;
      rc = one_coll(c, YAJL_GET_OBJECT(v)->values[i], p, &k->coll[t]);
    }
  }
  return rc;
}

static int rank_member(rd *c, const char *key, yajl_val v, const char *at, size_t index, chakra_run_rank *k) {
  char p[256];
  place(p, sizeof p, at, key);
  const runrec_field *f = find(rank_wholes, N_OF(rank_wholes), key);
  if (f) return whole(c, v, p, (uint64_t *)(void *)((char *)k + f->off));
  if ((f = find(rank_amounts, N_OF(rank_amounts), key))) {
    c->r->roofline = 1;
    return amount(c, v, p, (double *)(void *)((char *)k + f->off));
  }
  uint64_t x;
  if (strcmp(key, "rank") == 0) {
    int rc = whole(c, v, p, &x);
    if (!rc && x != index) {
      char want[64];
      snprintf(want, sizeof want, "%zu (ranks are listed in order)", index);
      rc = bad(c, p, want, v);
    }
    return rc;
  }
  if (strcmp(key, "finished") == 0) {
    if (!YAJL_IS_TRUE(v) && !YAJL_IS_FALSE(v)) return bad(c, p, "true or false", v);
    k->finished = YAJL_IS_TRUE(v);
    return 0;
  }
  if (strcmp(key, "collectives") == 0) return collectives(c, v, p, k);
  for (size_t i = 0; i < N_OF(rank_derived); i++)
    if (strcmp(key, rank_derived[i]) == 0) return whole(c, v, p, &x);
  return 0;
}

static int ranks(rd *c, yajl_val list) {
  int rc = 0;
  for (size_t i = 0; i < YAJL_GET_ARRAY(list)->len && !rc; i++) {
    yajl_val v = YAJL_GET_ARRAY(list)->values[i];
    char at[48];
    snprintf(at, sizeof at, "ranks[%zu]", i);
    if (!YAJL_IS_OBJECT(v)) {
      rc = bad(c, at, "an object", v);
      break;
    }
    for (size_t m = 0; m < YAJL_GET_OBJECT(v)->len && !rc; m++)
      rc = rank_member(c, YAJL_GET_OBJECT(v)->keys[m], YAJL_GET_OBJECT(v)->values[m], at, i, &c->r->ranks[i]);
  }
  return rc;
}

/* ---- replay's iterations ---- */

static int makespans(rd *c, yajl_val v) {
  if (!YAJL_IS_ARRAY(v)) return bad(c, "replay.makespan_ns", "a list", v);
  size_t n = YAJL_GET_ARRAY(v)->len;
  if (!(c->r->makespan_ns = calloc(n ? n : 1, sizeof *c->r->makespan_ns))) return oom(c);
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    char at[64];
    snprintf(at, sizeof at, "replay.makespan_ns[%zu]", i);
    rc = whole(c, YAJL_GET_ARRAY(v)->values[i], at, &c->r->makespan_ns[i]);
  }
  if (!rc && n != c->r->iterations)
    rc = chakra_error_set(c->err, CHAKRA_EFORMAT, "%s: replay.makespan_ns: %zu entries, but replay.iterations is %u",
                          c->name, n, c->r->iterations);
  return rc;
}

static int replay_member(rd *c, const char *key, yajl_val v) {
  chakra_run_record *r = c->r;
  char p[256];
  place(p, sizeof p, "replay", key);
  if (strcmp(key, "compute") == 0) {
    r->compute = YAJL_IS_STRING(v) ? runrec_compute_parse(YAJL_GET_STRING(v)) : -1;
    return r->compute < 0 ? bad(c, p, "wait, sleep or skip", v) : 0;
  }
  if (strcmp(key, "compute_scale") == 0) return amount(c, v, p, &r->compute_scale);
  if (strcmp(key, "iterations") == 0) return whole32(c, v, p, &r->iterations);
  if (strcmp(key, "warmup") == 0) return whole32(c, v, p, &r->warmup);
  /* The writer derives the makespan's statistics: checked, not kept. */
  static const char *const derived_wholes[] = {"makespan_min_ns", "makespan_median_ns", "makespan_max_ns"};
  static const char *const derived_amounts[] = {"makespan_mean_ns", "makespan_stddev_ns"};
  uint64_t x;
  double d;
  for (size_t i = 0; i < N_OF(derived_wholes); i++)
    if (strcmp(key, derived_wholes[i]) == 0) return whole(c, v, p, &x);
  for (size_t i = 0; i < N_OF(derived_amounts); i++)
    if (strcmp(key, derived_amounts[i]) == 0) return amount(c, v, p, &d);
  return 0;
}

static int replay(rd *c, yajl_val v) {
  if (!YAJL_IS_OBJECT(v)) return bad(c, "replay", "an object", v);
  c->r->source = CHAKRA_RUN_REPLAY;
  int rc = 0;
  for (size_t i = 0; i < YAJL_GET_OBJECT(v)->len && !rc; i++)
    if (strcmp(YAJL_GET_OBJECT(v)->keys[i], "makespan_ns") != 0)
      rc = replay_member(c, YAJL_GET_OBJECT(v)->keys[i], YAJL_GET_OBJECT(v)->values[i]);
  yajl_val m = reportjson_get(v, "makespan_ns");
  if (!rc && m) rc = makespans(c, m); /* after iterations, which it must match */
  return rc;
}

/* ---- collective instances ---- */

/* The index of group name in the record's groups, added when new; -1 for
 * "" (all ranks). */
static int group_of(rd *c, const char *name, int64_t *out) {
  chakra_run_record *r = c->r;
  *out = -1;
  if (!*name) return 0;
  if (c->last_group >= 0 && strcmp(r->groups[c->last_group], name) == 0) return *out = c->last_group, 0;
  for (uint32_t g = 0; g < r->n_groups; g++)
    if (strcmp(r->groups[g], name) == 0) return *out = c->last_group = g, 0;
  char **v = realloc(r->groups, ((size_t)r->n_groups + 1) * sizeof *v);
  if (!v) return oom(c);
  r->groups = v;
  if (!(v[r->n_groups] = strdup(name))) return oom(c);
  *out = c->last_group = r->n_groups++;
  return 0;
}

static int inst_member(rd *c, const char *key, yajl_val v, const char *at, chakra_run_instance *x) {
  char p[256];
  place(p, sizeof p, at, key);
  const runrec_field *f = find(inst_wholes, N_OF(inst_wholes), key);
  if (f) return whole(c, v, p, (uint64_t *)(void *)((char *)x + f->off));
  if (strcmp(key, "type") == 0) {
    int t = YAJL_IS_STRING(v) ? chakra_comm_type_parse(YAJL_GET_STRING(v)) : -1;
    x->comm_type = t < 0 ? 0 : (uint64_t)t;
    return t < 0 ? bad(c, p, "a CollectiveCommType name (ALL_REDUCE, ...)", v) : 0;
  }
  if (strcmp(key, "pg") == 0) return YAJL_IS_STRING(v) ? group_of(c, YAJL_GET_STRING(v), &x->group) : bad(c, p, "a string", v);
  return 0;
}

static int instances(rd *c, yajl_val v) {
  if (!YAJL_IS_ARRAY(v)) return bad(c, "collective_instances", "a list", v);
  size_t n = YAJL_GET_ARRAY(v)->len;
  chakra_run_record *r = c->r;
  if (!(r->instances = calloc(n ? n : 1, sizeof *r->instances))) return oom(c);
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    yajl_val o = YAJL_GET_ARRAY(v)->values[i];
    chakra_run_instance *x = &r->instances[i];
    char at[64];
    snprintf(at, sizeof at, "collective_instances[%zu]", i);
    if (!YAJL_IS_OBJECT(o)) {
      rc = bad(c, at, "an object", o);
      break;
    }
    x->group = -1;
    for (size_t m = 0; m < YAJL_GET_OBJECT(o)->len && !rc; m++)
      rc = inst_member(c, YAJL_GET_OBJECT(o)->keys[m], YAJL_GET_OBJECT(o)->values[m], at, x);
    if (!rc && x->rank >= r->npus)
      rc = chakra_error_set(c->err, CHAKRA_EFORMAT, "%s: %s.rank: %llu, but the report has %u ranks", c->name, at,
                            (unsigned long long)x->rank, r->npus);
    r->n_instances = i + 1;
  }
  return rc;
}

/* ---- the rest ---- */

static int stuck(rd *c, yajl_val v) {
  if (!YAJL_IS_ARRAY(v)) return bad(c, "stuck", "a list", v);
  int rc = 0;
  for (size_t i = 0; i < YAJL_GET_ARRAY(v)->len && !rc; i++) {
    yajl_val s = YAJL_GET_ARRAY(v)->values[i];
    char at[48];
    snprintf(at, sizeof at, "stuck[%zu]", i);
    if (!YAJL_IS_STRING(s)) rc = bad(c, at, "a string", s);
    else rc = chakra_run_add_stuck(c->r, YAJL_GET_STRING(s), c->err);
  }
  return rc;
}

static int meta(rd *c, yajl_val v) {
  if (!YAJL_IS_OBJECT(v)) return bad(c, "meta", "an object", v);
  int rc = 0;
  for (size_t i = 0; i < YAJL_GET_OBJECT(v)->len && !rc; i++) {
    const char *key = YAJL_GET_OBJECT(v)->keys[i];
    yajl_val s = YAJL_GET_OBJECT(v)->values[i];
    char p[256];
    if (!YAJL_IS_STRING(s)) rc = bad(c, place(p, sizeof p, "meta", key), "a string", s);
    else rc = chakra_run_set_meta(c->r, key, YAJL_GET_STRING(s), c->err);
  }
  return rc;
}

static int top_member(rd *c, const char *key, yajl_val v, uint64_t *npus) {
  chakra_run_record *r = c->r;
  uint64_t x;
  if (strcmp(key, "npus") == 0) return whole(c, v, "npus", npus);
  if (strcmp(key, "events") == 0) return whole(c, v, "events", &r->events);
  if (strcmp(key, "messages") == 0) return whole(c, v, "messages", &r->messages);
  if (strcmp(key, "wall_clock_s") == 0) return amount(c, v, "wall_clock_s", &r->wall_seconds);
  if (strcmp(key, "max_finish_ns") == 0) return whole(c, v, "max_finish_ns", &x);
  if (strcmp(key, "stuck") == 0) return stuck(c, v);
  if (strcmp(key, "replay") == 0) return replay(c, v);
  if (strcmp(key, "meta") == 0) return meta(c, v);
  return 0; /* ranks and collective_instances are read around the others */
}

static int read_doc(rd *c, yajl_val doc) {
  yajl_val list = reportjson_get(doc, "ranks");
  if (!YAJL_IS_OBJECT(doc) || !YAJL_IS_ARRAY(list))
    return chakra_error_set(c->err, CHAKRA_EFORMAT, "%s: no \"ranks\" list: not a chakra sim or replay report",
                            c->name);
  size_t n = YAJL_GET_ARRAY(list)->len;
  if (n > UINT32_MAX) return chakra_error_set(c->err, CHAKRA_EFORMAT, "%s: more than 2^32-1 ranks", c->name);
  int rc = chakra_run_record_init(c->r, CHAKRA_RUN_SIM, (uint32_t)n, c->err);
  uint64_t npus = n;
  for (size_t i = 0; i < YAJL_GET_OBJECT(doc)->len && !rc; i++)
    rc = top_member(c, YAJL_GET_OBJECT(doc)->keys[i], YAJL_GET_OBJECT(doc)->values[i], &npus);
  if (!rc && npus != n)
    rc = chakra_error_set(c->err, CHAKRA_EFORMAT, "%s: npus: %llu, but \"ranks\" lists %zu", c->name,
                          (unsigned long long)npus, n);
  if (!rc) rc = ranks(c, list);
  yajl_val inst = reportjson_get(doc, "collective_instances");
  if (!rc && inst) rc = instances(c, inst);
  return rc;
}

int runread_doc(yajl_val doc, const char *name, chakra_run_record *out, chakra_error *err) {
  memset(out, 0, sizeof *out);
  rd c = {.name = name, .err = err, .r = out, .last_group = -1};
  int rc = read_doc(&c, doc);
  if (rc) chakra_run_record_free(out);
  return rc;
}

int chakra_run_parse_report(chakra_run_record *out, const char *text, size_t len, const char *name,
                            chakra_error *err) {
  memset(out, 0, sizeof *out);
  yajl_val doc = reportjson_parse(text, len, name, err);
  if (!doc) return err ? err->code : CHAKRA_EFORMAT;
  int rc = runread_doc(doc, name, out, err);
  yajl_tree_free(doc);
  return rc;
}

int chakra_run_read_report(chakra_run_record *out, const char *path, chakra_error *err) {
  memset(out, 0, sizeof *out);
  yajl_val doc = reportjson_load(path, err);
  if (!doc) return err ? err->code : CHAKRA_EFORMAT;
  int rc = runread_doc(doc, path, out, err);
  yajl_tree_free(doc);
  return rc;
}
