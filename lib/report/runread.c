/* runread.c - the report JSON read back into a run record, the one reader
 * of the schema (docs/report.md) that plot, compare and whoever takes a
 * report use; see include/chakra/run.h and runread.h. Documents are
 * bounded by reportjson.c; every number is checked before it is kept, and
 * the first problem is one line naming the file and the field. Members
 * the schema does not have are left alone (a newer writer may add some). */
#include "runread.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/commgroups.h"
#include "../util/nameidx.h"
#include "chakra/attr.h"
#include "reportjson.h"
#include "runint.h"

typedef struct rd {
  const char *name;   /* the file, for messages */
  chakra_error *err;
  chakra_run_record *r;
  int64_t last_group; /* the group the previous instance named */
  nameidx groups;     /* r->groups by name: a replay report names thousands */
  size_t cursor;      /* where the previous member was found in its table */
} rd;

/* Where a value is: where (a list entry, "ranks[3]") and up to three keys
 * below it; spelled out ("ranks[3].collectives.ALL_REDUCE.time_ns", the
 * keys quoted as messages quote names) only for a message. */
typedef struct at {
  const char *where, *key[3];
} at;

static const char *place(char *buf, size_t size, const at *a) {
  size_t n = strnlen(a->where, size / 2);
  memcpy(buf, a->where, n);
  for (int i = 0; i < 3 && a->key[i]; i++) {
    char q[80];
    cg_quote(a->key[i], q, sizeof q);
    size_t k = strnlen(q, size - n - 2);
    if (n) buf[n++] = '.';
    memcpy(buf + n, q, k);
    n += k;
  }
  buf[n] = 0;
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

static int bad(rd *c, const at *a, const char *expected, yajl_val v) {
  char text[80], p[256];
  return chakra_error_set(c->err, CHAKRA_EFORMAT, "%s: %s: expected %s, not %s", c->name, place(p, sizeof p, a),
                          expected, shown(v, text, sizeof text));
}

static int oom(rd *c) { return chakra_error_set(c->err, CHAKRA_ENOMEM, "out of memory"); }

/* A whole number 0 .. 2^64-1 (written as digits, or as a number with a
 * fraction or exponent whose value is whole: 1000.0, 1e3). */
static int whole(rd *c, yajl_val v, const at *a, uint64_t *out) {
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
  return bad(c, a, "a whole number >= 0 of at most 2^64-1", v);
}

static int whole32(rd *c, yajl_val v, const at *a, uint32_t *out) {
  uint64_t x;
  int rc = whole(c, v, a, &x);
  if (!rc && x > UINT32_MAX) rc = bad(c, a, "a whole number >= 0 of at most 2^32-1", v);
  *out = rc ? 0 : (uint32_t)x;
  return rc;
}

/* A finite number >= 0 (the roofline figures, seconds, scales): the
 * statistics' rule (reportjson_amount), with this reader's message, which
 * also refuses what is not a number. */
static int amount(rd *c, yajl_val v, const at *a, double *out) {
  *out = 0;
  if (!v || (YAJL_IS_NUMBER(v) && reportjson_amount(v, c->name, "", out, NULL) == 0)) return 0;
  return bad(c, a, "a finite number >= 0", v);
}

/* ---- members by table ----
 *
 * An object's members, in the order the writer lists them, each with what
 * it is; looked up from where the previous member was found, so a report
 * the writer wrote costs one comparison per member. */

enum { M_WHOLE, M_AMOUNT, M_DERIVED, M_RANK, M_FINISHED, M_COLLS, M_TYPE, M_PG };

typedef struct member {
  const char *key;
  int kind;
  size_t off;
} member;

#define MAX_MEMBERS 32

typedef struct table {
  member m[MAX_MEMBERS];
  size_t n;
} table;

static void add(table *t, const char *key, int kind, size_t off) { t->m[t->n++] = (member){key, kind, off}; }

static void add_fields(table *t, const runrec_fields *fs, int kind) {
  for (size_t i = 0; i < fs->n; i++) add(t, fs->f[i].key, kind, fs->f[i].off);
}

static table rank_table, inst_table;
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void make_tables(void) {
  table *t = &rank_table;
  add(t, "rank", M_RANK, 0);
  add(t, "finished", M_FINISHED, 0);
  add_fields(t, &runrec_rank_times, M_WHOLE);
  add(t, "overlap_ns", M_DERIVED, 0);
  add_fields(t, &runrec_rank_nodes, M_WHOLE);
  add_fields(t, &runrec_rank_roofline, M_AMOUNT);
  add(t, "collectives", M_COLLS, 0);
  add_fields(t, &runrec_rank_p2p, M_WHOLE);
  add_fields(t, &runrec_rank_replay, M_WHOLE);
  add(t, "replayer_ns", M_DERIVED, 0);
  t = &inst_table;
  add_fields(t, &runrec_inst_ids, M_WHOLE);
  add(t, "type", M_TYPE, 0);
  add(t, "pg", M_PG, 0);
  add_fields(t, &runrec_inst_figures, M_WHOLE);
}

/* The member called key, or NULL (a member the schema does not have). */
static const member *lookup(rd *c, const table *t, const char *key) {
  for (size_t i = 0; i < t->n; i++) {
    size_t k = (c->cursor + i) % t->n;
    if (strcmp(t->m[k].key, key) == 0) {
      c->cursor = k + 1;
      return &t->m[k];
    }
  }
  return NULL;
}

/* ---- ranks ---- */

static int one_coll(rd *c, yajl_val v, const at *a, chakra_run_coll *out) {
  if (!YAJL_IS_OBJECT(v)) return bad(c, a, "an object", v);
  static const char *const keys[] = {"count", "bytes", "time_ns"};
  uint64_t *dst[] = {&out->count, &out->bytes, &out->time_ns};
  int rc = 0;
  for (int i = 0; i < 3 && !rc; i++) {
    at f = {a->where, {a->key[0], a->key[1], keys[i]}};
    rc = whole(c, reportjson_get(v, keys[i]), &f, dst[i]);
  }
  return rc;
}

static int collectives(rd *c, yajl_val v, const at *a, chakra_run_rank *k) {
  if (!YAJL_IS_OBJECT(v)) return bad(c, a, "an object", v);
  unsigned seen = 0;
  int rc = 0;
  for (size_t i = 0; i < YAJL_GET_OBJECT(v)->len && !rc; i++) {
    const char *key = YAJL_GET_OBJECT(v)->keys[i];
    at here = {a->where, {a->key[0], key}};
    int t = chakra_comm_type_parse(key);
    char p[256];
    if (t < 0)
      rc = chakra_error_set(c->err, CHAKRA_EFORMAT,
                            "%s: %s: not a collective type (expected a CollectiveCommType name: ALL_REDUCE, "
                            "ALL_GATHER, REDUCE_SCATTER, ALL_TO_ALL, BROADCAST, ...)", c->name,
                            place(p, sizeof p, &here));
    else if (seen & 1u << t)
      rc = chakra_error_set(c->err, CHAKRA_EFORMAT, "%s: %s: %s is listed twice", c->name, place(p, sizeof p, &here),
                            chakra_comm_type_name(t));
    else {
      seen |= 1u << t;
      rc = one_coll(c, YAJL_GET_OBJECT(v)->values[i], &here, &k->coll[t]);
    }
  }
  return rc;
}

static int rank_member(rd *c, const member *m, yajl_val v, const at *a, size_t index, chakra_run_rank *k) {
  uint64_t x;
  switch (m->kind) {
    case M_WHOLE: return whole(c, v, a, (uint64_t *)(void *)((char *)k + m->off));
    case M_AMOUNT: c->r->roofline = 1; return amount(c, v, a, (double *)(void *)((char *)k + m->off));
    case M_DERIVED: return whole(c, v, a, &x);
    case M_COLLS: return collectives(c, v, a, k);
    case M_FINISHED:
      if (!YAJL_IS_TRUE(v) && !YAJL_IS_FALSE(v)) return bad(c, a, "true or false", v);
      k->finished = YAJL_IS_TRUE(v);
      return 0;
    default: { /* M_RANK */
      int rc = whole(c, v, a, &x);
      if (!rc && x != index) {
        char want[64];
        snprintf(want, sizeof want, "%zu (ranks are listed in order)", index);
        rc = bad(c, a, want, v);
      }
      return rc;
    }
  }
}

static int ranks(rd *c, yajl_val list) {
  int rc = 0;
  for (size_t i = 0; i < YAJL_GET_ARRAY(list)->len && !rc; i++) {
    yajl_val v = YAJL_GET_ARRAY(list)->values[i];
    char where[48];
    snprintf(where, sizeof where, "ranks[%zu]", i);
    if (!YAJL_IS_OBJECT(v)) {
      rc = bad(c, &(at){where, {NULL}}, "an object", v);
      break;
    }
    c->cursor = 0;
    for (size_t m = 0; m < YAJL_GET_OBJECT(v)->len && !rc; m++) {
      const char *key = YAJL_GET_OBJECT(v)->keys[m];
      const member *e = lookup(c, &rank_table, key);
      if (e) rc = rank_member(c, e, YAJL_GET_OBJECT(v)->values[m], &(at){where, {key}}, i, &c->r->ranks[i]);
    }
  }
  return rc;
}

/* ---- replay's iterations ---- */

static int makespans(rd *c, yajl_val v) {
  if (!YAJL_IS_ARRAY(v)) return bad(c, &(at){"replay", {"makespan_ns"}}, "a list", v);
  size_t n = YAJL_GET_ARRAY(v)->len;
  if (!(c->r->makespan_ns = calloc(n ? n : 1, sizeof *c->r->makespan_ns))) return oom(c);
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    char where[64];
    snprintf(where, sizeof where, "replay.makespan_ns[%zu]", i);
    rc = whole(c, YAJL_GET_ARRAY(v)->values[i], &(at){where, {NULL}}, &c->r->makespan_ns[i]);
  }
  if (!rc && n != c->r->iterations)
    rc = chakra_error_set(c->err, CHAKRA_EFORMAT, "%s: replay.makespan_ns: %zu entries, but replay.iterations is %u",
                          c->name, n, c->r->iterations);
  return rc;
}

static int replay_member(rd *c, const char *key, yajl_val v) {
  chakra_run_record *r = c->r;
  const at a = {"replay", {key}};
  if (strcmp(key, "compute") == 0) {
    r->compute = YAJL_IS_STRING(v) ? runrec_compute_parse(YAJL_GET_STRING(v)) : -1;
    return r->compute < 0 ? bad(c, &a, "wait, sleep or skip", v) : 0;
  }
  if (strcmp(key, "compute_scale") == 0) return amount(c, v, &a, &r->compute_scale);
  if (strcmp(key, "iterations") == 0) return whole32(c, v, &a, &r->iterations);
  if (strcmp(key, "warmup") == 0) return whole32(c, v, &a, &r->warmup);
  /* The writer derives the makespan's statistics: checked, not kept. */
  static const char *const derived_wholes[] = {"makespan_min_ns", "makespan_median_ns", "makespan_max_ns"};
  static const char *const derived_amounts[] = {"makespan_mean_ns", "makespan_stddev_ns"};
  uint64_t x;
  double d;
  for (size_t i = 0; i < 3; i++)
    if (strcmp(key, derived_wholes[i]) == 0) return whole(c, v, &a, &x);
  for (size_t i = 0; i < 2; i++)
    if (strcmp(key, derived_amounts[i]) == 0) return amount(c, v, &a, &d);
  return 0;
}

static int replay(rd *c, yajl_val v) {
  if (!YAJL_IS_OBJECT(v)) return bad(c, &(at){"replay", {NULL}}, "an object", v);
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
  const nameidx_recs recs = {r->groups, sizeof *r->groups, 0};
  long g = nameidx_find(&c->groups, recs, name);
  if (g >= 0) return *out = c->last_group = g, 0;
  char **v = realloc(r->groups, ((size_t)r->n_groups + 1) * sizeof *v);
  if (!v) return oom(c);
  r->groups = v;
  if (!(v[r->n_groups] = strdup(name))) return oom(c);
  *out = c->last_group = r->n_groups++;
  return nameidx_sync(&c->groups, (nameidx_recs){v, sizeof *v, 0}, r->n_groups) ? oom(c) : 0;
}

static int inst_member(rd *c, const member *m, yajl_val v, const at *a, chakra_run_instance *x) {
  if (m->kind == M_WHOLE) return whole(c, v, a, (uint64_t *)(void *)((char *)x + m->off));
  if (m->kind == M_TYPE) {
    int t = YAJL_IS_STRING(v) ? chakra_comm_type_parse(YAJL_GET_STRING(v)) : -1;
    x->comm_type = t < 0 ? 0 : (uint64_t)t;
    return t < 0 ? bad(c, a, "a CollectiveCommType name (ALL_REDUCE, ...)", v) : 0;
  }
  return YAJL_IS_STRING(v) ? group_of(c, YAJL_GET_STRING(v), &x->group) : bad(c, a, "a string", v); /* M_PG */
}

static int instances(rd *c, yajl_val v) {
  if (!YAJL_IS_ARRAY(v)) return bad(c, &(at){"collective_instances", {NULL}}, "a list", v);
  size_t n = YAJL_GET_ARRAY(v)->len;
  chakra_run_record *r = c->r;
  if (!(r->instances = calloc(n ? n : 1, sizeof *r->instances))) return oom(c);
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    yajl_val o = YAJL_GET_ARRAY(v)->values[i];
    chakra_run_instance *x = &r->instances[i];
    char where[64];
    snprintf(where, sizeof where, "collective_instances[%zu]", i);
    r->n_instances = i + 1;
    if (!YAJL_IS_OBJECT(o)) {
      rc = bad(c, &(at){where, {NULL}}, "an object", o);
      break;
    }
    x->group = -1;
    c->cursor = 0;
    for (size_t m = 0; m < YAJL_GET_OBJECT(o)->len && !rc; m++) {
      const char *key = YAJL_GET_OBJECT(o)->keys[m];
      const member *e = lookup(c, &inst_table, key);
      if (e) rc = inst_member(c, e, YAJL_GET_OBJECT(o)->values[m], &(at){where, {key}}, x);
    }
    if (!rc && x->rank >= r->npus)
      rc = chakra_error_set(c->err, CHAKRA_EFORMAT, "%s: %s.rank: %llu, but the report has %u ranks", c->name, where,
                            (unsigned long long)x->rank, r->npus);
  }
  return rc;
}

/* ---- the rest ---- */

static int stuck(rd *c, yajl_val v) {
  if (!YAJL_IS_ARRAY(v)) return bad(c, &(at){"stuck", {NULL}}, "a list", v);
  int rc = 0;
  for (size_t i = 0; i < YAJL_GET_ARRAY(v)->len && !rc; i++) {
    yajl_val s = YAJL_GET_ARRAY(v)->values[i];
    char where[48];
    snprintf(where, sizeof where, "stuck[%zu]", i);
    if (!YAJL_IS_STRING(s)) rc = bad(c, &(at){where, {NULL}}, "a string", s);
    else rc = chakra_run_add_stuck(c->r, YAJL_GET_STRING(s), c->err);
  }
  return rc;
}

static int meta(rd *c, yajl_val v) {
  if (!YAJL_IS_OBJECT(v)) return bad(c, &(at){"meta", {NULL}}, "an object", v);
  int rc = 0;
  for (size_t i = 0; i < YAJL_GET_OBJECT(v)->len && !rc; i++) {
    const char *key = YAJL_GET_OBJECT(v)->keys[i];
    yajl_val s = YAJL_GET_OBJECT(v)->values[i];
    if (!YAJL_IS_STRING(s)) rc = bad(c, &(at){"meta", {key}}, "a string", s);
    else rc = chakra_run_set_meta(c->r, key, YAJL_GET_STRING(s), c->err);
  }
  return rc;
}

/* A simulation's rank classes, NPUs simulated and why (sim --symmetry). */
static int symmetry_member(rd *c, const char *key, yajl_val v) {
  const at a = {"", {key}};
  if (strcmp(key, "symmetry") == 0) {
    const char *text = YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : NULL;
    if (!text) return bad(c, &a, "a string", v);
    free(c->r->symmetry);
    c->r->symmetry = strdup(text);
    return c->r->symmetry ? 0 : chakra_error_set(c->err, CHAKRA_ENOMEM, "out of memory");
  }
  return whole32(c, v, &a, strcmp(key, "classes") == 0 ? &c->r->classes : &c->r->simulated);
}

static int top_member(rd *c, const char *key, yajl_val v, uint64_t *npus) {
  chakra_run_record *r = c->r;
  const at a = {"", {key}};
  uint64_t x;
  if (strcmp(key, "npus") == 0) return whole(c, v, &a, npus);
  if (strcmp(key, "events") == 0) return whole(c, v, &a, &r->events);
  if (strcmp(key, "messages") == 0) return whole(c, v, &a, &r->messages);
  if (strcmp(key, "wall_clock_s") == 0) return amount(c, v, &a, &r->wall_seconds);
  if (strcmp(key, "max_finish_ns") == 0) return whole(c, v, &a, &x);
  if (strcmp(key, "stuck") == 0) return stuck(c, v);
  if (strcmp(key, "replay") == 0) return replay(c, v);
  if (strcmp(key, "meta") == 0) return meta(c, v);
  if (strcmp(key, "classes") == 0 || strcmp(key, "simulated_npus") == 0 || strcmp(key, "symmetry") == 0)
    return symmetry_member(c, key, v);
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
  pthread_once(&tables_once, make_tables);
  rd c = {.name = name, .err = err, .r = out, .last_group = -1};
  int rc = read_doc(&c, doc);
  nameidx_free(&c.groups);
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
