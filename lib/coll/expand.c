/* expand.c - collectives of a workload replaced by algorithm DAGs; see
 * chakra_coll_expand() in include/chakra/coll.h and docs/coll.md.
 *
 * Two passes over every rank. The first records each COMM_COLL node (type,
 * size, communicator, dependencies), the largest node id and the largest
 * point-to-point tag, and decides every expansion: its algorithm, the ids
 * its nodes get (after the file's largest id), its sinks, and its tag base.
 * Tag bases are handed out once for the whole workload, per communicator
 * and instance in a fixed order, above every tag the workload already uses,
 * so messages of different collectives can never pair up. The second pass
 * copies the workload, writing each expanded collective's DAG in its place
 * (roots take the collective's dependencies, dependents wait on its sinks)
 * and, with overlap, splitting each compute node that consumes an
 * all-gather, all-reduce or reduce-scatter into per-chunk pieces. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra/attr.h"
#include "chakra/coll.h"
#include "chakra/graph.h"
#include "chakra/node.h"
#include "chakra/set.h"
#include "chakra/trace.h"
#include "dag.h"
#include "emit.h"
#include "gen.h"
#include "groups.h"
#include "madefor.h"
#include "../trace/setfile.h"
#include "../util/cmp.h"
#include "../util/diag.h"
#include "../util/hmap.h"
#include "../util/outfile.h"
#include "../util/vec.h"

/* ---- rules ---------------------------------------------------------------- */

static int parse_size(const char *s, const char *end, uint64_t *out) {
  if (s == end) return -1;
  uint64_t v = 0;
  for (; s < end && *s >= '0' && *s <= '9'; s++) {
    if (v > (UINT64_MAX - 9) / 10) return -1;
    v = v * 10 + (uint64_t)(*s - '0');
  }
  int shift = 0;
  if (s < end) {
    if (*s == 'K' || *s == 'k') shift = 10;
    else if (*s == 'M' || *s == 'm') shift = 20;
    else if (*s == 'G' || *s == 'g') shift = 30;
    else return -1;
    s++;
  }
  if (s != end || (shift && v > (UINT64_MAX >> shift))) return -1;
  *out = v << shift;
  return 0;
}

int chakra_coll_rule_parse(const char *s, chakra_coll_rule *out, chakra_error *err) {
  memset(out, 0, sizeof *out);
  out->coll = -1;
  out->max_size = UINT64_MAX;
  const char *eq = strchr(s, '=');
  const char *algo = eq ? eq + 1 : s;
  if (eq) {
    const char *at = memchr(s, '@', (size_t)(eq - s)), *end = at ? at : eq;
    const char *colon = memchr(s, ':', (size_t)(end - s)), *cend = colon ? colon : end;
    if (cend > s) {
      char name[32];
      if ((size_t)(cend - s) >= sizeof name || (snprintf(name, sizeof name, "%.*s", (int)(cend - s), s),
                                                 (out->coll = chakra_coll_type_parse(name)) < 0))
        return chakra_error_set(err, CHAKRA_EINVAL, "algo '%s': '%.*s' is not allreduce, allgather, reducescatter or alltoall",
                                s, (int)(cend - s), s);
    }
    if (colon) {
      const char *dash = memchr(colon + 1, '-', (size_t)(end - colon - 1));
      if (!dash) {
        if (parse_size(colon + 1, end, &out->min_size)) goto bad_range;
        out->max_size = out->min_size;
      } else {
        if (dash > colon + 1 && parse_size(colon + 1, dash, &out->min_size)) goto bad_range;
        if (end > dash + 1 && parse_size(dash + 1, end, &out->max_size)) goto bad_range;
      }
    }
    if (at) {
      out->pg = at + 1;
      out->pg_len = (size_t)(eq - at - 1);
    }
  }
  if (!*algo) return chakra_error_set(err, CHAKRA_EINVAL, "algo '%s': no algorithm after '='", s);
  out->algo = chakra_coll_algo_parse(algo);
  if (out->algo < 0) out->prefix = algo;
  return 0;
bad_range:
  return chakra_error_set(err, CHAKRA_EINVAL, "algo '%s': expected a size range MIN-MAX (K, M, G suffixes)", s);
}

/* ---- algorithms loaded from ETs ------------------------------------------- */

typedef struct xlib {   /* one algorithm prefix, every rank in memory */
  char *prefix;
  coll_dag *ranks;
  uint32_t n;
  coll_madefor made;    /* the collective and size it was made for (rank 0's metadata) */
  int64_t span;         /* 1 + its largest tag */
  int rotates;          /* every rank's DAG is rank 0's rotated (coll_dag_same_rotated) */
} xlib;

static int lib_load_rank(coll_dag *d, const chakra_set *set, uint32_t rank, uint32_t n, int64_t *span,
                         coll_madefor *made, chakra_error *err) {
  const char *path = chakra_set_rank_name(set, rank);
  chakra_graph *g;
  int rc = chakra_set_load_rank(set, rank, NULL, &g, err);
  if (rc) return rc;
  if (made) coll_madefor_read(g->metadata, made);
  coll_dag_init(d);
  /* nodes keep file order; deps are indexes, so order does not matter */
  for (uint32_t i = 0; !rc && i < g->n; i++) {
    const chakra_gnode *x = &g->nodes[i];
    chakra_node_class cl;
    chakra_node_classify(x, 0, n, &cl);
    int kind = cl.kind == CHAKRA_KIND_SEND                                     ? COLL_SEND
               : cl.kind == CHAKRA_KIND_RECV                                   ? COLL_RECV
               : cl.kind == CHAKRA_KIND_COMPUTE || cl.kind == CHAKRA_KIND_CPU ? COLL_REDUCE
                                                                               : -1;
    int32_t peer = cl.peer;
    if (kind < 0 || ((kind == COLL_SEND || kind == COLL_RECV) && (peer < 0 || (uint32_t)peer >= n || x->comm_tag < 0)))
      rc = chakra_error_set(err, CHAKRA_EFORMAT, "%s: node %llu: not an algorithm node (send/recv with a peer in 0..%u and a tag >= 0, or compute)",
                            path, (unsigned long long)x->id, n - 1);
    else {
      uint64_t ns = x->duration_micros * 1000;
      coll_dag_add(d, kind, peer, kind == COLL_REDUCE ? 0 : x->comm_tag, x->size, ns, (uint32_t)i);
      for (uint32_t j = g->dep_off[i]; j < g->dep_off[i + 1]; j++) coll_dag_dep(d, g->deps[j]);
      if (kind != COLL_REDUCE && x->comm_tag + 1 > *span) *span = x->comm_tag + 1;
    }
  }
  if (!rc && g->unordered) rc = chakra_error_set(err, CHAKRA_EFORMAT, "%s: dependency cycle", path);
  if (!rc && d->oom) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  chakra_graph_free(g);
  return rc;
}

/* An algorithm's ETs, through the trace-set source (its ranks without gaps). */
static int lib_load(xlib *l, const char *prefix, chakra_error *err) {
  memset(l, 0, sizeof *l);
  l->prefix = strdup(prefix);
  if (!l->prefix) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  char *first = chakra_rank_path_dup(prefix, 0);
  FILE *f = first ? fopen(first, "rb") : NULL;
  free(first);
  if (!f) return chakra_error_set(err, CHAKRA_EINVAL, "algo %s: neither a generated algorithm (ring, direct, hd, tree, dbt) nor a prefix of algorithm ETs (%s.0.et)", prefix, prefix);
  fclose(f);
  chakra_set_options so = {.no_default_groups = 1};
  chakra_set *set;
  int rc = chakra_set_open(&set, prefix, &so, err);
  if (rc) return rc;
  l->n = chakra_set_ranks(set);
  l->ranks = calloc(l->n, sizeof *l->ranks);
  if (!l->ranks) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (uint32_t r = 0; r < l->n && !rc; r++)
    rc = lib_load_rank(&l->ranks[r], set, r, l->n, &l->span, r == 0 ? &l->made : NULL, err);
  l->rotates = !rc;
  for (uint32_t r = 1; r < l->n && l->rotates; r++) l->rotates = coll_dag_same_rotated(&l->ranks[0], 0, &l->ranks[r], r, l->n);
  chakra_set_close(set);
  return rc;
}

static void lib_free(xlib *l) {
  for (uint32_t r = 0; l->ranks && r < l->n; r++) coll_dag_free(&l->ranks[r]);
  free(l->ranks);
  free(l->prefix);
}

/* ---- the plan ------------------------------------------------------------- */

/* A workload is read class by class: each class's template once (for
 * per-rank files every rank is its own class), its collectives resolved
 * for every rank through the rank's bindings. The expansion of a
 * collective depends on the rank only through its group (the rules may
 * name it, tags are the group's, the algorithm runs at the rank's place in
 * it), so what a group runs is decided once per group and what a rank
 * writes is planned when it is written. */

typedef struct xcoll {    /* one COMM_COLL node of a template, planned for the rank written */
  uint64_t id, size;
  uint32_t lg;            /* its group: index into the template's group names */
  uint32_t inst;          /* its place among the template's collectives on that name */
  int wrote0;             /* pg_name "0", taken as "" (the world; no group is called "0") */
  int type;               /* chakra_coll_type, or -1 */
  uint64_t *deps;         /* data + control deps, as written */
  uint32_t n_deps;
  /* for the rank written (pass 2) */
  uint32_t group;         /* index into groups */
  int rule;               /* index of the rule used, or -1: left alone */
  int64_t lib;            /* index into libs when the rule names a prefix */
  uint64_t id_base;
  uint32_t n_nodes;
  uint64_t *sinks;        /* absolute ids of its DAG's sinks */
  uint32_t n_sinks;
  int64_t tag_base;
} xcoll;

typedef struct xtpl {     /* a class's template */
  char *path;             /* what messages call it */
  uint64_t max_id;
  xcoll *v;
  size_t n, cap;
  uint32_t *by_id;        /* indexes of v sorted by id */
  struct xname {          /* the group names its collectives write, in order of first use */
    char *name;
    uint32_t count;       /* collectives on it */
  } *pg;
  uint32_t n_pg;
  size_t cap_pg;
} xtpl;

typedef struct xrank {    /* the rank being written: its template's collectives planned for it */
  const xtpl *t;
  xcoll *v;
  size_t n;
} xrank;

typedef struct xgrp {     /* what a group runs, decided by the first member met */
  int64_t cls;            /* -1: no collective names it; else the template whose sequence it runs */
  uint32_t lg;            /* ... on that template's group name lg */
  uint32_t first;         /* that member */
  const char *written;    /* the name its collectives write there (rules may match it) */
  uint32_t count;
  int *rule;              /* per instance */
  int64_t *lib;
  int64_t *prefix;        /* per instance + 1: tags the instances before it use */
  uint64_t left[3];       /* per member: left alone for no rule, type, single member */
  uint32_t color;         /* tag region (groups that share two ranks never share one) */
} xgrp;

typedef struct xstate {
  const chakra_set *in;   /* the workload */
  const chakra_coll_expand_options *o;
  chakra_error *err;
  uint32_t npus, ntpl;
  xtpl *tpl;              /* per class */
  coll_groups groups;
  xgrp *grp;              /* per group */
  uint32_t *rg;           /* per rank: the group of each of its template's names, from rg_off[rank] */
  uint64_t *rg_off;
  int64_t *color_base;    /* per color: its first tag */
  xlib *libs;
  size_t n_libs;
  int pg_rules;           /* a rule names a group */
  int64_t tag_floor;      /* 1 + the largest point-to-point tag in the workload */
  uint64_t left_alone[3]; /* no rule, unsupported type, single member */
  struct xused {          /* (algorithm, type, size) met, each checked once (madefor.h) */
    int64_t lib;
    int type;
    uint64_t size;
  } *used;
  size_t n_used, cap_used;
  coll_dag dag, dag2;     /* scratch */
  uint64_t nodes_out;
} xstate;

static const coll_group *group_of(const xstate *x, const xcoll *c) { return &x->groups.v[c->group]; }

/* Position of rank r in group g (members ascending). */
static uint32_t group_pos(const coll_group *g, uint32_t r) {
  uint32_t lo = 0, hi = g->n;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (g->members[mid] < r) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static chakra_coll_gen_options gen_opts(const xstate *x, const chakra_coll_rule *rule, const xcoll *c, uint32_t n) {
  chakra_coll_gen_options g = {.coll = (chakra_coll_type)c->type, .algo = (chakra_coll_algo)rule->algo,
                               .ranks = n, .size = c->size, .chunks = 1, .reduce_bw = x->o->reduce_bw};
  return g;
}

static int lib_index(xstate *x, const char *prefix, int64_t *out) {
  for (size_t i = 0; i < x->n_libs; i++)
    if (strcmp(x->libs[i].prefix, prefix) == 0) {
      *out = (int64_t)i;
      return 0;
    }
  xlib *v = VEC_APPEND(x->libs, x->n_libs); /* kept even on error so that it is freed */
  if (!v) return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  int rc = lib_load(v, prefix, x->err);
  *out = (int64_t)x->n_libs - 1;
  return rc;
}

/* Whether c's algorithm ETs are scaled to c's size: under scale, when
 * they record the size they were made for (the reductions are then
 * re-costed at the scaled size even when it is the same). */
static int lib_scales(const xstate *x, const xcoll *c) {
  return x->o->rules[c->rule].prefix && !x->o->custom_as_is && x->libs[c->lib].made.size;
}

/* One warning per (algorithm ETs, collective type, size) that differs from
 * what the ETs were made for. */
static int warn_made_for(xstate *x, const xcoll *c, uint32_t r) {
  const xlib *l = &x->libs[c->lib];
  uint64_t other = 0; /* another size it expands */
  for (size_t k = 0; k < x->n_used; k++) {
    if (x->used[k].lib != c->lib) continue;
    if (x->used[k].type == c->type && x->used[k].size == c->size) return 0;
    if (!other && x->used[k].size != c->size) other = x->used[k].size;
  }
  struct xused *v = coll_grow(x->used, x->n_used, &x->cap_used, sizeof *v);
  if (!v) return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  x->used = v;
  v[x->n_used++] = (struct xused){c->lib, c->type, c->size};
  char note[320];
  if (!x->o->diag || !coll_madefor_note(&l->made, c->type, c->size, other, x->o->custom_as_is, note, sizeof note))
    return 0;
  chakra_diag_emitf(x->o->diag, x->o->diag_ctx, chakra_diag_on(CHAKRA_SEV_WARNING, NULL),
                    "%s of %llu bytes (node %llu of rank %u) expanded with the algorithm %s, %s",
                    chakra_coll_type_name((chakra_coll_type)c->type), (unsigned long long)c->size,
                    (unsigned long long)c->id, r, l->prefix, note);
  return 0;
}

/* Chooses c's rule on its group (c->group), whose collectives write the
 * name pg: the first that matches and can run it; left[] counts why a
 * collective is left alone. rank names a rank that runs it (warnings). */
static int choose(xstate *x, xcoll *c, const char *pg, uint32_t rank, uint64_t left[3]) {
  const coll_group *g = group_of(x, c);
  c->rule = -1;
  if (c->type < 0) {
    left[1]++;
    return 0;
  }
  if (g->n < 2) {
    left[2]++;
    return 0;
  }
  for (size_t i = 0; i < x->o->n_rules; i++) {
    const chakra_coll_rule *r = &x->o->rules[i];
    if (r->coll >= 0 && r->coll != c->type) continue;
    if (c->size < r->min_size || c->size > r->max_size) continue;
    if (r->pg && (strlen(pg) != r->pg_len || strncmp(pg, r->pg, r->pg_len) != 0)) continue;
    if (r->prefix) {
      int rc = lib_index(x, r->prefix, &c->lib);
      if (rc) return rc;
      if (x->libs[c->lib].n != g->n) {
        if (r->coll < 0) continue;
        return chakra_error_set(x->err, CHAKRA_EINVAL, "algo %s: %u ranks, but communicator '%s' has %u",
                                r->prefix, x->libs[c->lib].n, g->name, g->n);
      }
    } else {
      chakra_coll_gen_options go = gen_opts(x, r, c, g->n);
      chakra_error e;
      if (chakra_coll_gen_check(&go, &e)) {
        if (r->coll < 0) continue;
        return chakra_error_set(x->err, CHAKRA_EINVAL, "algo rule %zu: %s (collective of %llu bytes on communicator '%s')",
                                i + 1, e.msg, (unsigned long long)c->size, g->name);
      }
    }
    c->rule = (int)i;
    return r->prefix ? warn_made_for(x, c, rank) : 0;
  }
  left[0]++;
  return 0;
}

/* Builds c's DAG on rank r into x->dag. */
static void build_dag(xstate *x, const xcoll *c, uint32_t r, const coll_dag **out) {
  const chakra_coll_rule *rule = &x->o->rules[c->rule];
  uint32_t pos = group_pos(group_of(x, c), r);
  if (rule->prefix) {
    *out = &x->libs[c->lib].ranks[pos];
    return;
  }
  chakra_coll_gen_options go = gen_opts(x, rule, c, group_of(x, c)->n);
  coll_gen_rank(&x->dag, &go, pos);
  *out = &x->dag;
}

static int64_t span_of(const xstate *x, const xcoll *c) {
  const chakra_coll_rule *rule = &x->o->rules[c->rule];
  if (rule->prefix) return x->libs[c->lib].span;
  chakra_coll_gen_options go = gen_opts(x, rule, c, group_of(x, c)->n);
  return coll_gen_tag_span(&go);
}

/* Node count and sinks of c on rank r; ids from *next. */
static int place_coll(xstate *x, xcoll *c, uint32_t r, uint64_t *next) {
  const coll_dag *d;
  build_dag(x, c, r, &d);
  if (d->oom) return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  c->id_base = *next;
  c->n_nodes = d->n;
  *next += d->n;
  uint8_t *has_child = calloc(d->n ? d->n : 1, 1);
  if (!has_child) return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  for (uint32_t i = 0; i < d->n_deps; i++) has_child[d->deps[i]] = 1;
  uint32_t ns = 0;
  for (uint32_t i = 0; i < d->n; i++) ns += !has_child[i];
  c->n_sinks = 0;
  c->sinks = malloc((ns ? ns : 1) * sizeof *c->sinks);
  if (!c->sinks) {
    free(has_child);
    return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  }
  for (uint32_t i = 0; i < d->n; i++)
    if (!has_child[i]) c->sinks[c->n_sinks++] = c->id_base + i;
  free(has_child);
  return 0;
}

/* ---- pass 1: each class's template ---------------------------------------- */

static int add_coll(xtpl *t, const xcoll *c) {
  xcoll *v = coll_grow(t->v, t->n, &t->cap, sizeof *v);
  if (!v) return -1;
  t->v = v;
  t->v[t->n++] = *c;
  return 0;
}

static uint64_t *copy_deps(const chakra_node *n, uint32_t *count) {
  size_t m = n->n_data_deps + n->n_ctrl_deps;
  uint64_t *v = malloc((m ? m : 1) * sizeof *v);
  if (!v) return NULL;
  if (n->n_data_deps) memcpy(v, n->data_deps, n->n_data_deps * sizeof *v);
  if (n->n_ctrl_deps) memcpy(v + n->n_data_deps, n->ctrl_deps, n->n_ctrl_deps * sizeof *v);
  *count = (uint32_t)m;
  return v;
}

/* Index of group name pg in t's list, added when new; -1 out of memory.
 * Templates name few groups: a scan. */
static long tpl_group(xtpl *t, const char *pg) {
  for (uint32_t i = 0; i < t->n_pg; i++)
    if (strcmp(t->pg[i].name, pg) == 0) return i;
  struct xname *v = coll_grow(t->pg, t->n_pg, &t->cap_pg, sizeof *v);
  if (!v) return -1;
  t->pg = v;
  if (!(v[t->n_pg].name = strdup(pg))) return -1;
  v[t->n_pg].count = 0;
  return t->n_pg++;
}

/* Records collective n of template t. */
static int take_coll(xstate *x, xtpl *t, const chakra_node *n, const chakra_std_attrs *a, const chakra_node_class *cl) {
  xcoll c = {0};
  c.id = n->id;
  c.size = a->comm_size;
  c.type = cl->problems & CHAKRA_NP_NO_COMM_SIZE ? -1 : cl->coll;
  long lg = tpl_group(t, a->pg_name ? a->pg_name : "");
  c.deps = lg < 0 ? NULL : copy_deps(n, &c.n_deps);
  if (!c.deps || add_coll(t, &c)) {
    free(c.deps);
    return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  }
  t->v[t->n - 1].lg = (uint32_t)lg;
  t->v[t->n - 1].inst = t->pg[lg].count++;
  return 0;
}

static int cmp_by_id(const void *a, const void *b, void *ctx) {
  const xcoll *v = ctx;
  uint64_t x = v[*(const uint32_t *)a].id, y = v[*(const uint32_t *)b].id;
  return x < y ? -1 : x > y;
}

/* t's collectives by id; an id used twice is an error. */
static int index_ids(xstate *x, xtpl *t) {
  t->by_id = malloc((t->n ? t->n : 1) * sizeof *t->by_id);
  if (!t->by_id) return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  for (uint32_t i = 0; i < t->n; i++) t->by_id[i] = i;
  qsort_r(t->by_id, t->n, sizeof *t->by_id, cmp_by_id, t->v);
  for (size_t i = 1; i < t->n; i++)
    if (t->v[t->by_id[i]].id == t->v[t->by_id[i - 1]].id)
      return chakra_error_set(x->err, CHAKRA_EFORMAT, "%s: node id %llu used twice", t->path,
                              (unsigned long long)t->v[t->by_id[i]].id);
  return 0;
}

/* Reads class cls's template (its representative's nodes): its
 * collectives, groups from METADATA nodes, the largest id and tag. */
static int pass1_class(xstate *x, uint32_t cls) {
  xtpl *t = &x->tpl[cls];
  uint32_t rep = chakra_set_class_rep(x->in, cls);
  if (!(t->path = strdup(chakra_set_rank_name(x->in, rep)))) return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  chakra_reader *rd;
  int rc = chakra_set_reader(x->in, rep, NULL, &rd, x->err);
  if (rc) return rc;
  chakra_node *n;
  while (!rc && (rc = chakra_reader_next(rd, &n, x->err)) == 1) {
    rc = 0;
    if (n->id > t->max_id) t->max_id = n->id;
    chakra_kind kind = chakra_node_kind_of((int32_t)n->type, 0);
    if (kind == CHAKRA_KIND_METADATA && n->inputs && n->inputs->values) {
      char where[4200];
      snprintf(where, sizeof where, "%s: rank %u: node %llu", t->path, rep, (unsigned long long)n->id);
      rc = coll_groups_add_metadata(&x->groups, n->inputs->values, where, x->err);
      continue;
    }
    if (kind != CHAKRA_KIND_COLL && kind != CHAKRA_KIND_SEND && kind != CHAKRA_KIND_RECV) continue;
    chakra_gnode gn;
    chakra_std_attrs a;
    chakra_node_resolve(n, &gn, &a, NULL, NULL);
    chakra_node_class cl;
    chakra_node_classify(&gn, rep, 0, &cl);
    if (kind == CHAKRA_KIND_COLL) rc = take_coll(x, t, n, &a, &cl);
    else if ((a.present & CHAKRA_HAS_COMM_TAG) && (int64_t)a.comm_tag + 1 > x->tag_floor)
      x->tag_floor = (int64_t)a.comm_tag + 1;
  }
  chakra_reader_close(rd);
  return rc < 0 ? rc : index_ids(x, t);
}

static xcoll *find_coll(const xrank *k, uint64_t id) {
  const uint32_t *by_id = k->t->by_id;
  uint32_t lo = 0, hi = (uint32_t)k->n;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (k->v[by_id[mid]].id < id) lo = mid + 1;
    else hi = mid;
  }
  return lo < k->n && k->v[by_id[lo]].id == id ? &k->v[by_id[lo]] : NULL;
}

/* ---- groups: what each runs ------------------------------------------------ */

/* The first collective of t on its group name lg (for messages). */
static const xcoll *first_on(const xtpl *t, uint32_t lg) {
  for (size_t i = 0; i < t->n; i++)
    if (t->v[i].lg == lg) return &t->v[i];
  return &t->v[0];
}

/* The group rank r's collectives on t's name lg run on, and the name they
 * write there (the rank's binding of it). */
static int resolve(xstate *x, uint32_t r, const xtpl *t, uint32_t lg, uint32_t *out, const char **written) {
  const char *pg = chakra_set_bind_group(x->in, r, t->pg[lg].name);
  long g = coll_groups_find(&x->groups, pg);
  if (g < 0 && strcmp(pg, "0") == 0) g = coll_groups_find(&x->groups, "");
  const xcoll *c = first_on(t, lg);
  if (g < 0)
    return chakra_error_set(x->err, CHAKRA_EINVAL, "%s: rank %u: node %llu: pg_name '%s' names no communicator group (give comm_groups, or a METADATA node defining it)",
                            t->path, r, (unsigned long long)c->id, pg);
  const coll_group *grp = &x->groups.v[g];
  uint32_t pos = group_pos(grp, r);
  if (pos >= grp->n || grp->members[pos] != r)
    return chakra_error_set(x->err, CHAKRA_EINVAL, "%s: rank %u: node %llu: the rank is not a member of communicator '%s'",
                            t->path, r, (unsigned long long)c->id, grp->name);
  *out = (uint32_t)g;
  *written = pg;
  return 0;
}

/* Rule (and algorithm ETs) of each instance t runs on its name lg, on
 * group g whose collectives write pg; left[] counts those left alone. */
static int choose_all(xstate *x, const xtpl *t, uint32_t lg, uint32_t g, const char *pg, uint32_t rank, int *rule,
                      int64_t *lib, uint64_t left[3]) {
  for (size_t i = 0; i < t->n; i++) {
    if (t->v[i].lg != lg) continue;
    xcoll c = t->v[i];
    c.group = g;
    c.lib = -1;
    int rc = choose(x, &c, c.wrote0 ? "0" : pg, rank, left);
    if (rc) return rc;
    rule[c.inst] = c.rule;
    lib[c.inst] = c.lib;
  }
  return 0;
}

/* Group g runs what rank r's template t runs on its name lg. */
static int define_group(xstate *x, uint32_t g, uint32_t cls, uint32_t lg, uint32_t r, const char *pg) {
  xgrp *G = &x->grp[g];
  const xtpl *t = &x->tpl[cls];
  uint32_t n = t->pg[lg].count;
  *G = (xgrp){.cls = cls, .lg = lg, .first = r, .written = pg, .count = n};
  G->rule = malloc((n ? n : 1) * sizeof *G->rule);
  G->lib = malloc((n ? n : 1) * sizeof *G->lib);
  G->prefix = malloc((n + 1) * sizeof *G->prefix);
  if (!G->rule || !G->lib || !G->prefix) return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  int rc = choose_all(x, t, lg, g, pg, r, G->rule, G->lib, G->left);
  G->prefix[0] = 0;
  for (size_t i = 0, k = 0; !rc && i < t->n; i++) {
    if (t->v[i].lg != lg) continue;
    xcoll c = t->v[i];
    c.group = g, c.rule = G->rule[k], c.lib = G->lib[k];
    G->prefix[k + 1] = G->prefix[k] + (c.rule >= 0 ? span_of(x, &c) : 0);
    if (G->prefix[k + 1] > INT32_MAX) rc = chakra_error_set(x->err, CHAKRA_EINVAL, "expanded collectives need more than 2^31 message tags");
    k++;
  }
  return rc;
}

/* Rank r (template t, name lg) runs on group g what the group's first
 * member runs: the same collectives (type and size, in order), and the
 * same algorithms when a rule names groups (a member may write another
 * name for it: "0" and ""). */
static int same_as_group(xstate *x, uint32_t g, const xtpl *t, uint32_t lg, uint32_t r, const char *pg) {
  const xgrp *G = &x->grp[g];
  const xtpl *f = &x->tpl[G->cls];
  const char *gname = x->groups.v[g].name;
  if (f != t || G->lg != lg) {
    size_t i = 0, j = 0, seen = 0;
    for (;; seen++) {
      while (i < t->n && t->v[i].lg != lg) i++;
      while (j < f->n && f->v[j].lg != G->lg) j++;
      if (i == t->n || j == f->n) break;
      const xcoll *a = &t->v[i++], *b = &f->v[j++];
      if (a->type != b->type || a->size != b->size)
        return chakra_error_set(x->err, CHAKRA_EFORMAT, "%s: node %llu: collective #%zu of communicator '%s' differs from rank %u's (type, size or count): the ranks would never match",
                                t->path, (unsigned long long)a->id, seen, gname, G->first);
    }
    if (t->pg[lg].count != G->count)
      return chakra_error_set(x->err, CHAKRA_EFORMAT, "%s: %u collectives on communicator '%s', rank %u has %u", t->path,
                              t->pg[lg].count, gname, G->first, G->count);
  }
  if (!x->pg_rules || (f == t && G->lg == lg && strcmp(pg, G->written) == 0)) return 0;
  int *rule = malloc((G->count ? G->count : 1) * sizeof *rule);
  int64_t *lib = malloc((G->count ? G->count : 1) * sizeof *lib);
  uint64_t left[3] = {0};
  int rc = rule && lib ? choose_all(x, t, lg, g, pg, r, rule, lib, left) : chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  for (uint32_t k = 0; !rc && k < G->count; k++)
    if (rule[k] != G->rule[k])
      rc = chakra_error_set(x->err, CHAKRA_EFORMAT, "%s: node %llu: collective #%u of communicator '%s' differs from rank %u's (type, size or count): the ranks would never match",
                            t->path, (unsigned long long)first_on(t, lg)->id, k, gname, G->first);
  free(rule), free(lib);
  return rc;
}

/* Every rank's groups (x->rg), each group's collectives decided by its
 * first member and checked against every other's, the collectives left
 * alone counted per member. */
static int walk_ranks(xstate *x, uint32_t *refs) {
  x->rg_off = malloc(((size_t)x->npus + 1) * sizeof *x->rg_off);
  if (!x->rg_off) return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  uint64_t total = 0;
  for (uint32_t r = 0; r < x->npus; r++) x->rg_off[r] = total, total += x->tpl[chakra_set_class_of(x->in, r)].n_pg;
  x->rg_off[x->npus] = total;
  x->rg = malloc((total ? total : 1) * sizeof *x->rg);
  if (!x->rg) return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  int rc = 0;
  for (uint32_t r = 0; !rc && r < x->npus; r++) {
    uint32_t cls = chakra_set_class_of(x->in, r);
    const xtpl *t = &x->tpl[cls];
    for (uint32_t lg = 0; !rc && lg < t->n_pg; lg++) {
      uint32_t g = 0;
      const char *pg = "";
      rc = resolve(x, r, t, lg, &g, &pg);
      if (rc) break;
      x->rg[x->rg_off[r] + lg] = g;
      rc = x->grp[g].cls < 0 ? define_group(x, g, cls, lg, r, pg) : same_as_group(x, g, t, lg, r, pg);
      refs[g]++;
      for (int k = 0; k < 3; k++) x->left_alone[k] += x->grp[g].left[k];
    }
  }
  return rc;
}

/* Whether rank r names group g. */
static int names_group(const xstate *x, uint32_t r, uint32_t g) {
  for (uint64_t k = x->rg_off[r]; k < x->rg_off[r + 1]; k++)
    if (x->rg[k] == g) return 1;
  return 0;
}

/* A member of a group with collectives that issues none of them. */
static int check_members(xstate *x, const uint32_t *refs) {
  for (size_t g = 0; g < x->groups.n; g++) {
    const coll_group *grp = &x->groups.v[g];
    if (x->grp[g].cls < 0 || refs[g] == grp->n) continue;
    for (uint32_t m = 0; m < grp->n; m++)
      if (!names_group(x, grp->members[m], (uint32_t)g))
        return chakra_error_set(x->err, CHAKRA_EFORMAT, "%s: 0 collectives on communicator '%s', rank %u has %u",
                                chakra_set_rank_name(x->in, grp->members[m]), grp->name, x->grp[g].first,
                                x->grp[g].count);
  }
  return 0;
}

/* Collectives that write "0" where no group has that name run on the
 * world, as those that write "" (or none) do: one sequence with them. */
static void merge_world_names(xstate *x) {
  if (coll_groups_find(&x->groups, "0") >= 0) return;
  for (uint32_t c = 0; c < x->ntpl; c++) {
    xtpl *t = &x->tpl[c];
    long zero = -1, world = -1;
    for (uint32_t i = 0; i < t->n_pg; i++) {
      if (strcmp(t->pg[i].name, "0") == 0) zero = i;
      if (!t->pg[i].name[0]) world = i;
    }
    if (zero < 0) continue;
    t->pg[zero].name[0] = 0; /* "0" becomes "" */
    for (size_t i = 0; i < t->n; i++) t->v[i].wrote0 = t->v[i].lg == (uint32_t)zero;
    if (world < 0) continue;
    /* two names for the world: one sequence in template order, under one name */
    uint32_t k = 0;
    for (size_t i = 0; i < t->n; i++)
      if (t->v[i].lg == (uint32_t)zero || t->v[i].lg == (uint32_t)world) t->v[i].lg = (uint32_t)zero, t->v[i].inst = k++;
    t->pg[zero].count = k;
    free(t->pg[world].name);
    memmove(&t->pg[world], &t->pg[world + 1], (t->n_pg - (uint32_t)world - 1) * sizeof *t->pg);
    t->n_pg--;
    for (size_t i = 0; i < t->n; i++) t->v[i].lg -= t->v[i].lg > (uint32_t)world;
  }
}

/* ---- tags: one region per color ------------------------------------------ */

/* Counts of group pairs met at a rank, by the pair's key (a << 32 | b). */
typedef struct pairmap {
  hmap idx;       /* key -> index into key and count */
  uint64_t *key;
  uint32_t *count;
  size_t n, cap;
} pairmap;

static int pair_add(pairmap *m, uint64_t key) {
  int oom = 0;
  uint32_t i = hmap_put_u64(&m->idx, key, (uint32_t)m->n, &oom);
  if (i == HMAP_NONE) { /* new: index n */
    if (oom || m->n >= UINT32_MAX - 1 || VEC_ROOM(m->key, m->n, m->cap, 1) ||
        vec_resize(&m->count, m->cap, sizeof *m->count))
      return -1;
    m->key[m->n] = key, m->count[m->n] = 0;
    i = (uint32_t)m->n++;
  }
  if (m->count[i] < UINT32_MAX) m->count[i]++;
  return 0;
}

/* The pairs of groups (a < b) that share two ranks or more, sorted: the
 * groups whose messages could meet between one pair of ranks. */
static int shared_pairs(const xstate *x, uint64_t **out, size_t *n_out) {
  pairmap m = {0};
  uint32_t *mine = NULL;
  size_t cap = 0;
  int rc = 0;
  for (uint32_t r = 0; !rc && r < x->npus; r++) {
    size_t n = 0;
    for (uint64_t k = x->rg_off[r]; !rc && k < x->rg_off[r + 1]; k++) {
      uint32_t g = x->rg[k];
      if (x->groups.v[g].n < 2) continue;
      uint32_t *v = coll_grow(mine, n, &cap, sizeof *v);
      if (!v) rc = -1;
      else mine = v, mine[n++] = g;
    }
    for (size_t i = 0; !rc && i < n; i++)
      for (size_t j = 0; !rc && j < n; j++)
        if (mine[i] < mine[j]) rc = pair_add(&m, (uint64_t)mine[i] << 32 | mine[j]);
  }
  size_t k = 0;
  uint64_t *v = rc ? NULL : malloc((m.n ? m.n : 1) * sizeof *v);
  for (size_t i = 0; v && i < m.n; i++)
    if (m.count[i] >= 2) v[k++] = m.key[i];
  if (v) qsort(v, k, sizeof *v, cmp_u64);
  hmap_free(&m.idx), free(m.key), free(m.count), free(mine);
  *out = v;
  *n_out = k;
  return v ? 0 : -1;
}

/* Colors of the groups, greedy in group order: a group takes the lowest
 * color no earlier group it shares two ranks with has. Groups of one
 * color share no pair of ranks, so their messages may use the same tags;
 * then each color's region holds its largest group's tags, above the
 * workload's own. */
static int color_groups(xstate *x) {
  uint64_t *pairs;
  size_t np;
  if (shared_pairs(x, &pairs, &np)) return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  size_t ng = x->groups.n;
  uint32_t *mark = malloc((np + 2) * sizeof *mark), ncolor = 1;
  int64_t *size = calloc(np + 2, sizeof *size);
  x->color_base = malloc((np + 2) * sizeof *x->color_base);
  int rc = mark && size && x->color_base ? 0 : chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  for (size_t i = 0; !rc && i < np + 2; i++) mark[i] = UINT32_MAX;
  /* each group's earlier partners (the a of the pairs (a, b) ending in it), by b */
  uint32_t *by_b = rc ? NULL : malloc((np ? np : 1) * sizeof *by_b), *off = rc ? NULL : calloc(ng + 2, sizeof *off);
  if (!rc && (!by_b || !off)) rc = chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  for (size_t i = 0; !rc && i < np; i++) off[(pairs[i] & 0xffffffffu) + 2]++;
  for (size_t g = 0; !rc && g < ng; g++) off[g + 2] += off[g + 1];
  for (size_t i = 0; !rc && i < np; i++) by_b[off[(pairs[i] & 0xffffffffu) + 1]++] = (uint32_t)(pairs[i] >> 32);
  for (uint32_t g = 0; !rc && g < ng; g++) {
    xgrp *G = &x->grp[g];
    if (G->cls < 0 || x->groups.v[g].n < 2) continue;
    for (uint32_t k = off[g]; k < off[g + 1]; k++) mark[x->grp[by_b[k]].color] = g;
    uint32_t c = 0;
    while (mark[c] == g) c++;
    G->color = c;
    if (c + 1 > ncolor) ncolor = c + 1;
    if (G->prefix[G->count] > size[c]) size[c] = G->prefix[G->count];
  }
  int64_t next = x->tag_floor;
  for (uint32_t c = 0; !rc && c < ncolor; c++) {
    x->color_base[c] = next;
    next += size[c];
    if (next > INT32_MAX) rc = chakra_error_set(x->err, CHAKRA_EINVAL, "expanded collectives need more than 2^31 message tags");
  }
  free(pairs), free(mark), free(size), free(by_b), free(off);
  return rc;
}

/* ---- a rank's plan (pass 2) ------------------------------------------------ */

/* Rank r's collectives with their groups, algorithms, ids, sinks and tags,
 * into k (its own copy of the template's list). */
static int plan_rank(xstate *x, uint32_t r, xrank *k) {
  const xtpl *t = &x->tpl[chakra_set_class_of(x->in, r)];
  k->t = t;
  k->n = t->n;
  k->v = malloc((t->n ? t->n : 1) * sizeof *k->v);
  if (!k->v) return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  if (t->n) memcpy(k->v, t->v, t->n * sizeof *k->v);
  uint64_t next = t->max_id + 1;
  int rc = 0;
  for (size_t i = 0; i < k->n; i++) k->v[i].sinks = NULL;
  for (size_t i = 0; !rc && i < k->n; i++) {
    xcoll *c = &k->v[i];
    c->group = x->rg[x->rg_off[r] + c->lg];
    const xgrp *G = &x->grp[c->group];
    c->rule = G->rule[c->inst];
    c->lib = G->lib[c->inst];
    c->n_sinks = 0;
    if (c->rule < 0) continue;
    c->tag_base = x->color_base[G->color] + G->prefix[c->inst];
    rc = place_coll(x, c, r, &next);
  }
  return rc;
}

static void unplan_rank(xrank *k) {
  for (size_t i = 0; k->v && i < k->n; i++) free(k->v[i].sinks);
  free(k->v);
  k->v = NULL;
}

/* ---- the shared form: the classes of the output ---------------------------- */

/* A grid's ranks share their class representative's expansion, bound to
 * them by the grid's rule (a translation on the axes that are not class
 * axes), when every collective runs the same DAG on them up to that
 * translation. A collective on a group spanning one such axis sees the
 * translation as a rotation of the group's places (members ascending), so
 * its expansion is shared when its algorithm is the same DAG rotated at
 * every place (coll_gen_equivariant: a ring of equal blocks); otherwise,
 * and for groups spanning several such axes (a translation there is no
 * rotation), the axes become class axes of the output: its ranks then sit
 * at the same place of the group as their representative. Tags and rules
 * must agree too: a rank whose groups' colors, sizes or (rules naming
 * groups) algorithms differ from its representative's makes every axis a
 * class axis. */

typedef struct xout {     /* the output's classes */
  chakra_manifest *man;   /* NULL: per-rank files */
  uint32_t n;             /* ranks written: every rank, or one per class */
  uint32_t *rank;         /* which (NULL: 0..n-1) */
} xout;

/* Whether instance c's algorithm (rule, ETs) runs the same DAG rotated at
 * every place of a group of n; -1 out of memory. */
static int rotates(xstate *x, const xcoll *c, uint32_t n) {
  const chakra_coll_rule *rule = &x->o->rules[c->rule];
  if (rule->prefix) return x->libs[c->lib].rotates;
  chakra_coll_gen_options go = gen_opts(x, rule, c, n);
  return coll_gen_equivariant(&go, &x->dag, &x->dag2);
}

static void note(const xstate *x, const char *fmt, const char *a, const char *b) {
  if (!x->o->diag) return;
  char what[700];
  snprintf(what, sizeof what, fmt, a, b);
  chakra_problem p = chakra_problem_make(CHAKRA_SEV_NOTE, what);
  x->o->diag(x->o->diag_ctx, &p);
}

/* Marks in promote[] the axes the output needs as class axes for class
 * cls's collectives on its name lg. */
static int promote_for(xstate *x, const chakra_manifest *m, uint32_t cls, uint32_t lg, uint8_t *promote) {
  const xtpl *t = &x->tpl[cls];
  uint32_t rep = chakra_set_class_rep(x->in, cls), g = x->rg[x->rg_off[rep] + lg], na_all = chakra_manifest_axes(m);
  const xgrp *G = &x->grp[g];
  int expanded = 0;
  for (uint32_t k = 0; k < G->count; k++) expanded |= G->rule[k] >= 0;
  if (!expanded) return 0;
  long ri = setfile_grid_rule_of(m, t->pg[lg].name, NULL);
  if (ri < 0) {
    note(x, "group '%s' is none of the grid's rules: every rank is expanded as a class of its own%s", t->pg[lg].name, "");
    memset(promote, 1, na_all);
    return 0;
  }
  uint32_t na, moving = 0;
  const uint32_t *ax = chakra_manifest_rule_axes(m, (size_t)ri, &na);
  for (uint32_t k = 0; k < na; k++) moving += !chakra_manifest_axis_is_class(m, ax[k]);
  if (!moving) return 0;
  int same = na == 1;
  for (size_t i = 0; same == 1 && i < t->n; i++) {
    if (t->v[i].lg != lg || G->rule[t->v[i].inst] < 0) continue;
    xcoll c = t->v[i];
    c.group = g, c.rule = G->rule[c.inst], c.lib = G->lib[c.inst];
    same = rotates(x, &c, x->groups.v[g].n);
  }
  if (same < 0) return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  if (same) return 0;
  for (uint32_t k = 0; k < na; k++)
    if (!chakra_manifest_axis_is_class(m, ax[k]) && !promote[ax[k]]) {
      promote[ax[k]] = 1;
      note(x, "axis %s becomes a class axis of the output: the expansion on group '%s' depends on the rank's place in it",
           chakra_manifest_axis_name(m, ax[k]), t->pg[lg].name);
    }
  return 0;
}

/* Whether rank r's groups run what its representative's do, with the same tags. */
static int like_rep(const xstate *x, uint32_t r, uint32_t rep) {
  for (uint64_t k = x->rg_off[r], j = x->rg_off[rep]; k < x->rg_off[r + 1]; k++, j++) {
    const xgrp *a = &x->grp[x->rg[k]], *b = &x->grp[x->rg[j]];
    if (a->color != b->color || x->groups.v[x->rg[k]].n != x->groups.v[x->rg[j]].n) return 0;
    if (x->pg_rules && (memcmp(a->rule, b->rule, a->count * sizeof *a->rule) ||
                        memcmp(a->lib, b->lib, a->count * sizeof *a->lib)))
      return 0;
  }
  return 1;
}

static uint32_t coord_of(const chakra_manifest *m, uint32_t rank, uint32_t a) {
  uint64_t stride = 1;
  for (uint32_t k = 0; k < a; k++) stride *= chakra_manifest_axis_size(m, k);
  return (uint32_t)(rank / stride % chakra_manifest_axis_size(m, a));
}

/* The rank at these coordinates (one per axis). */
static uint32_t rank_at(const chakra_manifest *m, const uint32_t *coord) {
  uint64_t r = 0, stride = 1;
  for (uint32_t a = 0; a < chakra_manifest_axes(m); a++) {
    r += coord[a] * stride;
    stride *= chakra_manifest_axis_size(m, a);
  }
  return (uint32_t)r;
}

/* The output's grid: the input's with the promoted axes as class axes
 * too; class k's representative is the input representative of its
 * class moved to k's place on the promoted axes, its template
 * OUT.class<k>.et. out->rank lists them. */
static int grid_out(xstate *x, const chakra_manifest *m, const uint8_t *promote, const char *out_prefix, xout *out) {
  uint32_t na = chakra_manifest_axes(m);
  uint64_t k_all = 1;
  for (uint32_t a = 0; a < na; a++)
    if (promote[a] || chakra_manifest_axis_is_class(m, a)) k_all *= chakra_manifest_axis_size(m, a);
  uint32_t *coord = calloc(na, sizeof *coord);
  const char **names = calloc(na, sizeof *names);
  out->rank = malloc(k_all * sizeof *out->rank);
  if (!coord || !names || !out->rank) {
    free(coord), free(names);
    return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  }
  out->n = (uint32_t)k_all;
  int rc = chakra_manifest_new(&out->man, CHAKRA_MANIFEST_GRID, x->npus, x->err);
  for (uint32_t a = 0; !rc && a < na; a++) {
    names[a] = chakra_manifest_axis_name(m, a);
    rc = chakra_manifest_add_axis(out->man, names[a], chakra_manifest_axis_size(m, a),
                                  promote[a] || chakra_manifest_axis_is_class(m, a), x->err);
  }
  for (size_t i = 0; !rc && i < chakra_manifest_group_rules(m); i++) {
    uint32_t n_ax, n_or;
    const uint32_t *ax = chakra_manifest_rule_axes(m, i, &n_ax), *or = chakra_manifest_rule_order(m, i, &n_or);
    const char *an[64], *on[64];
    for (uint32_t k = 0; k < n_ax && k < 64; k++) an[k] = names[ax[k]];
    for (uint32_t k = 0; k < n_or && k < 64; k++) on[k] = names[or[k]];
    rc = chakra_manifest_add_group_rule(out->man, an, n_ax, on, n_or, chakra_manifest_rule_first(m, i), x->err);
  }
  const char *slash = strrchr(out_prefix, '/');
  for (uint64_t k = 0; !rc && k < k_all; k++) {
    /* class k's place on the class axes (first fastest), 0 elsewhere */
    uint64_t rest = k;
    for (uint32_t a = 0; a < na; a++) {
      int is_class = promote[a] || chakra_manifest_axis_is_class(m, a);
      coord[a] = is_class ? (uint32_t)(rest % chakra_manifest_axis_size(m, a)) : 0;
      if (is_class) rest /= chakra_manifest_axis_size(m, a);
    }
    uint32_t old_rep = chakra_set_class_rep(x->in, chakra_set_class_of(x->in, rank_at(m, coord)));
    for (uint32_t a = 0; a < na; a++)
      if (!promote[a]) coord[a] = coord_of(m, old_rep, a);
    out->rank[k] = rank_at(m, coord);
    char *path = chakra_class_path_dup(out_prefix, (uint32_t)k);
    rc = path ? chakra_manifest_add_class(out->man, slash ? path + (slash + 1 - out_prefix) : path, out->rank[k], x->err)
              : chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
    free(path);
  }
  free(coord), free(names);
  return rc ? rc : chakra_manifest_check(out->man, x->err);
}

/* The output's classes: per-rank files for per-rank input (and sources
 * without a manifest); for a grid, its classes, finer where the expansion
 * needs it. */
static int plan_output(xstate *x, const char *out_prefix, xout *out) {
  memset(out, 0, sizeof *out);
  const chakra_manifest *m = chakra_set_manifest(x->in);
  out->n = x->npus;
  if (!m) return 0;
  if (chakra_manifest_kind(m) != CHAKRA_MANIFEST_GRID) {
    note(x, "a shared set in the table layout is expanded rank by rank into per-rank files%s%s", "", "");
    return 0;
  }
  uint32_t na = chakra_manifest_axes(m);
  uint8_t *promote = calloc(na ? na : 1, 1);
  if (!promote) return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  int rc = 0;
  for (uint32_t c = 0; !rc && c < x->ntpl; c++)
    for (uint32_t lg = 0; !rc && lg < x->tpl[c].n_pg; lg++) rc = promote_for(x, m, c, lg, promote);
  for (uint32_t r = 0; !rc && r < x->npus; r++)
    if (!like_rep(x, r, chakra_set_class_rep(x->in, chakra_set_class_of(x->in, r)))) {
      char rank[32];
      snprintf(rank, sizeof rank, "%u", r);
      note(x, "rank %s's groups differ from its class representative's (tags or algorithms): every rank is expanded as a class of its own%s", rank, "");
      memset(promote, 1, na);
      break;
    }
  if (!rc) rc = grid_out(x, m, promote, out_prefix, out);
  free(promote);
  return rc;
}

/* ---- pass 2: the output --------------------------------------------------- */

typedef struct ids {
  uint64_t *v;
  size_t n, cap;
  int oom;
} ids;

static void ids_push(ids *l, uint64_t v) {
  uint64_t *p = coll_grow(l->v, l->n, &l->cap, sizeof *p);
  if (!p) {
    l->oom = 1;
    return;
  }
  l->v = p;
  l->v[l->n++] = v;
}

/* Appends deps with every expanded collective replaced by its sinks;
 * returns how many were replaced. `skip` (an expanded collective) is left
 * out altogether. */
static size_t rewrite(const xrank *k, const uint64_t *deps, size_t n, ids *out, const xcoll *skip) {
  size_t hits = 0;
  for (size_t i = 0; i < n; i++) {
    const xcoll *c = find_coll(k, deps[i]);
    if (!c || c->rule < 0) {
      ids_push(out, deps[i]);
      continue;
    }
    hits++;
    if (c == skip) continue;
    for (uint32_t j = 0; j < c->n_sinks; j++) ids_push(out, c->sinks[j]);
  }
  return hits;
}

typedef struct p2 {      /* pass-2 state of one rank */
  xstate *x;
  uint32_t r;
  xrank *k;
  enc_buf buf;
  uint64_t next_extra;   /* ids for overlap pieces */
  ids a, b;              /* scratch */
} p2;

/* d with message bytes scaled by num / den, in x->dag. A reduction is
 * re-costed from its scaled bytes (tensor_size / 3, as chakra-c writes it)
 * so that a small algorithm file gives the same cost as one made for the
 * size itself; compute without tensor_size keeps its time, scaled. */
static const coll_dag *scaled_copy(xstate *x, const coll_dag *d, uint64_t num, uint64_t den) {
  coll_dag *o = &x->dag;
  coll_dag_clear(o);
  for (uint32_t i = 0; i < d->n; i++) {
    uint64_t bytes = d->bytes[i], ns = d->dur_ns[i];
    if (d->kind[i] == COLL_SEND || d->kind[i] == COLL_RECV) {
      bytes = coll_muldiv(bytes, num, den);
    } else if (bytes) {
      bytes = coll_muldiv(bytes / 3, num, den);
      ns = coll_comp_ns(COLL_REDUCE, bytes, x->o->reduce_bw);
    } else {
      ns = coll_muldiv(ns, num, den);
    }
    uint32_t j = coll_dag_add(o, d->kind[i], d->peer[i], d->tag[i], bytes, ns, d->label[i]);
    if (j != COLL_NONE) o->tb[j] = d->tb[i];
    for (uint32_t k = d->dep_off[i]; k < d->dep_off[i + 1]; k++) coll_dag_dep(o, d->deps[k]);
  }
  return o->oom ? NULL : o;
}

static int write_coll(p2 *w, const xcoll *c, const chakra_node *n) {
  xstate *x = w->x;
  const coll_dag *d;
  build_dag(x, c, w->r, &d);
  w->a.n = 0;
  uint32_t nd = c->n_deps;
  rewrite(w->k, c->deps, nd, &w->a, NULL);
  if (w->a.oom || d->oom) return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  char pre[48];
  snprintf(pre, sizeof pre, "coll%llu/", (unsigned long long)n->id);
  const chakra_coll_rule *rule = &x->o->rules[c->rule];
  coll_place pl = {.id_base = c->id_base, .peer_map = group_of(x, c)->members, .self = (int32_t)w->r,
                   .tag_base = c->tag_base, .root_deps = w->a.v, .n_root_deps = w->a.n, .name_prefix = pre,
                   .style = COLL_STYLE_CHAKRA, .names = COLL_NAMES_SHORT};
  if (lib_scales(x, c) && !(d = scaled_copy(x, d, c->size, x->libs[c->lib].made.size)))
    return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  if (rule->prefix) pl.names = COLL_NAMES_MSCCL;
  for (uint32_t i = 0; i < d->n; i++) coll_encode_node(&w->buf, d, i, &pl);
  x->nodes_out += d->n;
  return 0;
}

/* The first step of c's algorithm whose receives deliver final output
 * (see coll_gen_gather_step), or -1 when the consumers of c cannot be
 * split: a prefix of algorithm ETs says nothing of its phases, so only its
 * all-gathers (every receive delivers output) are. */
static int64_t gather_step(const xstate *x, const xcoll *c) {
  const chakra_coll_rule *rule = &x->o->rules[c->rule];
  if (rule->prefix) return c->type == CHAKRA_COLL_ALLGATHER ? 0 : -1;
  chakra_coll_gen_options go = gen_opts(x, rule, c, group_of(x, c)->n);
  return coll_gen_gather_step(&go);
}

/* 1 if node i of d is a receive that delivers final output. */
static int delivers(const coll_dag *d, uint32_t i, int64_t gs) {
  uint32_t step = (uint32_t)d->tag[i] & ((1u << COLL_CHUNK_TAG_SHIFT) - 1);
  return d->kind[i] == COLL_RECV && (int64_t)step >= gs;
}

/* Ids of the nodes after which the rank's own chunk of c's output is
 * final, into out: for an all-reduce what the first send of each
 * pipeline's gather phase waits for, for a reduce-scatter its sinks that
 * are not sends. */
static void own_chunk(const xcoll *c, const coll_dag *d, int64_t gs, ids *out) {
  if (c->type == CHAKRA_COLL_REDUCESCATTER) {
    uint8_t *has_child = calloc(d->n ? d->n : 1, 1);
    if (!has_child) {
      out->oom = 1;
      return;
    }
    for (uint32_t i = 0; i < d->n_deps; i++) has_child[d->deps[i]] = 1;
    for (uint32_t i = 0; i < d->n; i++)
      if (!has_child[i] && d->kind[i] != COLL_SEND) ids_push(out, c->id_base + i);
    free(has_child);
    return;
  }
  int64_t pipeline = -1; /* pipelines are generated one after the other */
  for (uint32_t i = 0; i < d->n; i++) {
    int64_t p = (uint32_t)d->tag[i] >> COLL_CHUNK_TAG_SHIFT;
    uint32_t step = (uint32_t)d->tag[i] & ((1u << COLL_CHUNK_TAG_SHIFT) - 1);
    if (d->kind[i] != COLL_SEND || (int64_t)step < gs || p == pipeline) continue;
    pipeline = p;
    for (uint32_t k = d->dep_off[i]; k < d->dep_off[i + 1]; k++) ids_push(out, c->id_base + d->deps[k]);
  }
}

/* The expanded collective a compute node consumes directly (one only)
 * when its output arrives in chunks, or NULL. */
static const xcoll *overlap_source(const p2 *w, const chakra_node *n) {
  if (!w->x->o->overlap || chakra_node_kind_of((int32_t)n->type, 0) != CHAKRA_KIND_COMPUTE) return NULL;
  const xcoll *found = NULL;
  for (size_t i = 0; i < n->n_data_deps; i++) {
    const xcoll *c = find_coll(w->k, n->data_deps[i]);
    if (!c || c->rule < 0) continue;
    if (found || gather_step(w->x, c) < 0) return NULL;
    found = c;
  }
  for (size_t i = 0; found && i < n->n_ctrl_deps; i++) {
    const xcoll *c = find_coll(w->k, n->ctrl_deps[i]);
    if (c && c->rule >= 0) return NULL;
  }
  return found;
}

/* num_ops / tensor_size of a piece: share of the whole. */
static ChakraProtoMsg__AttributeProto *scaled_attr(const ChakraProtoMsg__AttributeProto *a, uint64_t part,
                                                   uint64_t total, ChakraProtoMsg__AttributeProto *tmp) {
  if (strcmp(a->name, "num_ops") != 0 && strcmp(a->name, "tensor_size") != 0) return (ChakraProtoMsg__AttributeProto *)a;
  *tmp = *a;
  if (a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL)
    tmp->int64_val = (int64_t)coll_muldiv((uint64_t)a->int64_val, part, total);
  else if (a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL)
    tmp->uint64_val = coll_muldiv(a->uint64_val, part, total);
  else if (a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL)
    tmp->int32_val = (int32_t)((int64_t)a->int32_val * (int64_t)part / (int64_t)total);
  return tmp;
}

/* n with its dependencies replaced: l's first n_data ids are its data
 * deps, the rest its control deps. */
static void put_with_deps(p2 *w, const chakra_node *n, const ids *l, size_t n_data) {
  ChakraProtoMsg__Node m = *n;
  m.data_deps = l->v;
  m.n_data_deps = n_data;
  m.ctrl_deps = l->v + n_data;
  m.n_ctrl_deps = l->n - n_data;
  enc_message(&w->buf, &m.base);
}

/* A reduce-scatter delivers one chunk: n is not split, it only waits for
 * that chunk instead of the whole collective (its last sends). */
static int narrow(p2 *w, const xcoll *c, const coll_dag *d, int64_t gs, chakra_node *n) {
  w->b.n = 0;
  rewrite(w->k, n->data_deps, n->n_data_deps, &w->b, c);
  own_chunk(c, d, gs, &w->b);
  size_t n_data = w->b.n;
  rewrite(w->k, n->ctrl_deps, n->n_ctrl_deps, &w->b, NULL);
  if (w->b.oom) return chakra_error_set(w->x->err, CHAKRA_ENOMEM, "out of memory");
  w->x->nodes_out++;
  put_with_deps(w, n, &w->b, n_data);
  return 0;
}

/* Splits compute node n that consumes collective c into one piece per
 * receive delivering final output plus the local piece, and a join node
 * with n's id. The local piece covers the rank's own chunk: an all-gather's
 * input (ready with the collective's inputs), an all-reduce's reduced
 * chunk (ready when its reduction is done). */
static int write_overlap(p2 *w, const xcoll *c, chakra_node *n) {
  xstate *x = w->x;
  const coll_dag *d;
  build_dag(x, c, w->r, &d);
  uint64_t num = lib_scales(x, c) ? c->size : 1, den = lib_scales(x, c) ? x->libs[c->lib].made.size : 1;
  int64_t gs = gather_step(x, c);
  int gather = c->type == CHAKRA_COLL_ALLGATHER;
  uint32_t nr = 0;
  uint64_t received = 0;
  for (uint32_t i = 0; i < d->n; i++)
    if (delivers(d, i, gs)) nr++, received += coll_muldiv(d->bytes[i], num, den);
  /* an all-gather's size is its own input; an all-reduce's, the whole output */
  uint64_t total = gather ? c->size + received : c->size;
  uint64_t local = gather ? c->size : total > received ? total - received : 0;
  if (total == 0) return 0;
  if (c->type == CHAKRA_COLL_REDUCESCATTER) return narrow(w, c, d, gs, n);
  /* the other deps of n, rewritten */
  w->b.n = 0;
  rewrite(w->k, n->data_deps, n->n_data_deps, &w->b, c);
  rewrite(w->k, n->ctrl_deps, n->n_ctrl_deps, &w->b, NULL);
  size_t n_other = w->b.n;
  if (gather) rewrite(w->k, c->deps, c->n_deps, &w->b, NULL); /* + the collective's inputs, for the local piece */
  else own_chunk(c, d, gs, &w->b);                               /* + what completes the own chunk */
  if (w->b.oom) return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  ChakraProtoMsg__AttributeProto **attrs = malloc((n->n_attr ? n->n_attr : 1) * sizeof *attrs);
  ChakraProtoMsg__AttributeProto *tmp = malloc((n->n_attr ? n->n_attr : 1) * sizeof *tmp);
  uint64_t *deps = malloc((w->b.n + 1) * sizeof *deps);
  size_t name_len = strlen(n->name ? n->name : "") + 32;
  char *name = malloc(name_len);
  uint64_t *piece_ids = malloc((nr + 1) * sizeof *piece_ids);
  int rc = 0;
  if (!attrs || !tmp || !deps || !name || !piece_ids) {
    rc = chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
    goto out;
  }
  /* duration shares: floor(whole * bytes / total) per receive; the local
   * piece takes the rest, so the pieces add up to the whole */
  uint64_t dur = n->duration_micros, recv_shares = 0;
  for (uint32_t q = 0; q < d->n; q++)
    if (delivers(d, q, gs)) recv_shares += coll_muldiv(dur, coll_muldiv(d->bytes[q], num, den), total);
  uint32_t ri = 0;
  for (uint32_t p = 0; p <= nr; p++) {
    /* piece p: 0 = local, then the receives in DAG order */
    uint64_t bytes;
    size_t nd = n_other;
    if (n_other) memcpy(deps, w->b.v, n_other * sizeof *deps);
    if (p == 0) {
      bytes = local;
      if (w->b.n > n_other) memcpy(deps + nd, w->b.v + n_other, (w->b.n - n_other) * sizeof *deps);
      nd = w->b.n;
    } else {
      while (!delivers(d, ri, gs)) ri++;
      bytes = coll_muldiv(d->bytes[ri], num, den);
      deps[nd++] = c->id_base + ri++;
    }
    ChakraProtoMsg__Node piece = *n;
    piece.id = w->next_extra++;
    piece_ids[p] = piece.id;
    snprintf(name, name_len, "%s/chunk%u", n->name ? n->name : "", p);
    piece.name = name;
    piece.data_deps = deps;
    piece.n_data_deps = nd;
    piece.n_ctrl_deps = 0;
    piece.ctrl_deps = NULL;
    piece.duration_micros = p == 0 ? dur - recv_shares : coll_muldiv(dur, bytes, total);
    for (size_t i = 0; i < n->n_attr; i++) attrs[i] = scaled_attr(n->attr[i], bytes, total, &tmp[i]);
    piece.attr = attrs;
    enc_message(&w->buf, &piece.base);
  }
  /* the join keeps n's id, so whatever depended on n still does */
  ChakraProtoMsg__Node join = *n;
  join.data_deps = piece_ids;
  join.n_data_deps = nr + 1;
  join.n_ctrl_deps = 0;
  join.ctrl_deps = NULL;
  join.duration_micros = 0;
  for (size_t i = 0; i < n->n_attr; i++) attrs[i] = scaled_attr(n->attr[i], 0, 1, &tmp[i]);
  join.attr = attrs;
  enc_message(&w->buf, &join.base);
  x->nodes_out += nr + 2;
out:
  free(attrs), free(tmp), free(deps), free(name), free(piece_ids);
  return rc;
}

/* Any other node: copied as is, or with its dependencies rewritten. */
static int write_node(p2 *w, chakra_node *n, const uint8_t *raw, size_t len) {
  w->a.n = 0;
  size_t hits = rewrite(w->k, n->data_deps, n->n_data_deps, &w->a, NULL);
  size_t n_data = w->a.n;
  hits += rewrite(w->k, n->ctrl_deps, n->n_ctrl_deps, &w->a, NULL);
  if (w->a.oom) return chakra_error_set(w->x->err, CHAKRA_ENOMEM, "out of memory");
  w->x->nodes_out++;
  if (!hits) {
    enc_append_framed(&w->buf, raw, len);
    return 0;
  }
  put_with_deps(w, n, &w->a, n_data);
  return 0;
}

static int pass2_rank(xstate *x, uint32_t u, uint32_t r, coll_set *set) {
  xrank kk = {0}, *k = &kk;
  int rc = plan_rank(x, r, k);
  p2 w = {x, r, k, {0}, 0, {0}, {0}};
  w.next_extra = k->t->max_id + 1;
  for (size_t i = 0; !rc && i < k->n; i++)
    if (k->v[i].rule >= 0 && k->v[i].id_base + k->v[i].n_nodes > w.next_extra)
      w.next_extra = k->v[i].id_base + k->v[i].n_nodes;
  chakra_reader *rd = NULL;
  if (!rc) rc = chakra_set_reader(x->in, r, NULL, &rd, x->err);
  if (!rc) enc_message(&w.buf, &chakra_reader_metadata(rd)->base);
  const uint8_t *raw;
  size_t len;
  while (!rc && (rc = chakra_reader_next_raw(rd, &raw, &len, x->err)) == 1) {
    rc = 0;
    chakra_node *n = chakra_node_decode(raw, len);
    if (!n) {
      rc = chakra_error_set(x->err, CHAKRA_EFORMAT, "%s: node at offset %llu does not decode",
                            chakra_set_rank_name(x->in, r), (unsigned long long)chakra_reader_message_offset(rd));
      break;
    }
    const xcoll *c = chakra_node_kind_of((int32_t)n->type, 0) == CHAKRA_KIND_COLL ? find_coll(k, n->id) : NULL;
    const xcoll *src;
    if (c && c->rule >= 0) rc = write_coll(&w, c, n);
    else if ((src = overlap_source(&w, n)) != NULL) rc = write_overlap(&w, src, n);
    else rc = write_node(&w, n, raw, len);
    protobuf_c_message_free_unpacked(&n->base, NULL);
    if (!rc && w.buf.n >= (4u << 20)) {
      rc = coll_set_write(set, u, &w.buf, x->err);
      w.buf.n = 0;
    }
  }
  if (rd) chakra_reader_close(rd);
  if (rc >= 0 && rd) rc = coll_set_write(set, u, &w.buf, x->err);
  enc_buf_free(&w.buf);
  free(w.a.v), free(w.b.v);
  unplan_rank(k);
  return rc;
}

/* Pass 2 on worker threads: each has its own view of the plan (read
 * only) with its own scratch DAGs, node count and error. */
typedef struct p2job {
  xstate *w; /* one per worker */
  chakra_error *errs;
  const xout *out;
} p2job;

static int pass2_one(void *ctx, unsigned worker, uint32_t u, coll_set *set, chakra_error *err) {
  p2job *j = ctx;
  int rc = pass2_rank(&j->w[worker], u, j->out->rank ? j->out->rank[u] : u, set);
  if (rc && err) *err = j->errs[worker];
  return rc;
}

static int pass2(xstate *x, const xout *out, coll_set *set, chakra_error *err) {
  unsigned nt = coll_set_threads(x->o->threads);
  p2job j = {calloc(nt, sizeof *j.w), calloc(nt, sizeof *j.errs), out};
  int rc = j.w && j.errs ? 0 : chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (unsigned t = 0; !rc && t < nt; t++) {
    j.w[t] = *x;
    j.w[t].err = &j.errs[t];
    j.w[t].nodes_out = 0;
    coll_dag_init(&j.w[t].dag);
    coll_dag_init(&j.w[t].dag2);
  }
  if (!rc) rc = coll_set_fill(set, x->o->threads, pass2_one, &j, err);
  for (unsigned t = 0; !rc && t < nt; t++) x->nodes_out += j.w[t].nodes_out;
  for (unsigned t = 0; j.w && t < nt; t++) coll_dag_free(&j.w[t].dag), coll_dag_free(&j.w[t].dag2);
  free(j.w);
  free(j.errs);
  return rc;
}

/* ---- driver ---------------------------------------------------------------- */

static void xstate_free(xstate *x) {
  for (uint32_t c = 0; x->tpl && c < x->ntpl; c++) {
    xtpl *t = &x->tpl[c];
    for (size_t i = 0; i < t->n; i++) free(t->v[i].deps);
    for (uint32_t i = 0; i < t->n_pg; i++) free(t->pg[i].name);
    free(t->v), free(t->by_id), free(t->path), free(t->pg);
  }
  free(x->tpl);
  for (size_t g = 0; x->grp && g < x->groups.n; g++) free(x->grp[g].rule), free(x->grp[g].lib), free(x->grp[g].prefix);
  free(x->grp);
  free(x->rg), free(x->rg_off), free(x->color_base);
  for (size_t i = 0; i < x->n_libs; i++) lib_free(&x->libs[i]);
  free(x->libs);
  free(x->used);
  coll_groups_free(&x->groups);
  coll_dag_free(&x->dag), coll_dag_free(&x->dag2);
}

static void warn(const xstate *x, const char *fmt, unsigned long long n) {
  if (!x->o->diag || !n) return;
  char what[256];
  snprintf(what, sizeof what, fmt, n);
  chakra_problem p = chakra_problem_make(CHAKRA_SEV_WARNING, what);
  x->o->diag(x->o->diag_ctx, &p);
}

/* The workload's groups file, as the set read it. */
static int take_set_groups(xstate *x) {
  if (chakra_set_groups_origin(x->in) == CHAKRA_GROUPS_NONE) return 0;
  int rc = chakra_set_load_groups(x->in, x->err);
  for (size_t i = 0; !rc && i < chakra_set_group_count(x->in); i++) {
    uint32_t n;
    const uint32_t *m = chakra_set_group_members(x->in, i, &n);
    rc = coll_groups_add(&x->groups, chakra_set_group_name(x->in, i), m, n, x->err);
  }
  return rc;
}

static int plan(xstate *x) {
  x->npus = chakra_set_ranks(x->in);
  x->ntpl = chakra_set_classes(x->in);
  x->tpl = calloc(x->ntpl ? x->ntpl : 1, sizeof *x->tpl);
  if (!x->tpl) return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  for (size_t i = 0; i < x->o->n_rules; i++) x->pg_rules |= x->o->rules[i].pg != NULL;
  int rc = take_set_groups(x);
  for (uint32_t c = 0; !rc && c < x->ntpl; c++) rc = pass1_class(x, c);
  /* the whole world, for collectives without pg_name */
  if (!rc && coll_groups_find(&x->groups, "") < 0) rc = coll_groups_add(&x->groups, "", NULL, 0, x->err);
  if (!rc) rc = coll_groups_finish(&x->groups, x->npus, x->err);
  if (!rc) merge_world_names(x);
  x->grp = rc ? NULL : malloc((x->groups.n ? x->groups.n : 1) * sizeof *x->grp);
  uint32_t *refs = rc ? NULL : calloc(x->groups.n ? x->groups.n : 1, sizeof *refs);
  if (!rc && (!x->grp || !refs)) rc = chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  for (size_t g = 0; !rc && g < x->groups.n; g++) x->grp[g] = (xgrp){.cls = -1};
  if (!rc) rc = walk_ranks(x, refs);
  if (!rc) rc = check_members(x, refs);
  if (!rc) rc = color_groups(x);
  free(refs);
  return rc;
}

int chakra_coll_expand(const char *workload_prefix, const char *out_prefix, const chakra_coll_expand_options *o,
                       uint64_t *nodes_out, chakra_error *err) {
  if (nodes_out) *nodes_out = 0;
  chakra_set_options so = {.comm_groups = o->comm_groups, .no_default_groups = 1};
  chakra_set *in;
  int rc = chakra_set_open(&in, workload_prefix, &so, err);
  if (rc) return rc;
  rc = chakra_coll_expand_set(in, out_prefix, o, nodes_out, err);
  chakra_set_close(in);
  return rc;
}

/* The output's files: OUT.<r>.et, or the templates OUT.class<k>.et and
 * OUT.set.json; all or none. */
static int write_out(xstate *x, const xout *out, const char *out_prefix, chakra_error *err) {
  int rc = outfile_group_begin(err);
  if (rc) return rc;
  coll_set *set = NULL;
  chakra_workload_options wo = {.progress = x->o->progress, .progress_ctx = x->o->progress_ctx};
  if (!out->man) {
    rc = coll_set_open(&set, out_prefix, out->n, &wo, err);
  } else {
    char **paths = calloc(out->n, sizeof *paths);
    rc = paths ? 0 : chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    for (uint32_t k = 0; !rc && k < out->n; k++)
      if (!(paths[k] = chakra_class_path_dup(out_prefix, k))) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    if (!rc) rc = coll_set_open_paths(&set, (const char *const *)paths, out->n, &wo, err);
    for (uint32_t k = 0; paths && k < out->n; k++) free(paths[k]);
    free(paths);
  }
  if (!rc) rc = pass2(x, out, set, err);
  if (set) {
    if (rc) coll_set_abort(set);
    else rc = coll_set_commit(set, err);
  }
  if (!rc && out->man) {
    char *path = chakra_manifest_path_dup(out_prefix);
    rc = path ? chakra_manifest_write(out->man, path, err) : chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    free(path);
  }
  int end = outfile_group_end(!rc, rc ? NULL : err);
  return rc ? rc : end;
}

int chakra_coll_expand_set(const chakra_set *in, const char *out_prefix, const chakra_coll_expand_options *o,
                           uint64_t *nodes_out, chakra_error *err) {
  xstate x = {0};
  x.in = in;
  x.o = o;
  x.err = err;
  coll_dag_init(&x.dag);
  coll_dag_init(&x.dag2);
  if (nodes_out) *nodes_out = 0;
  if (!o->n_rules) return chakra_error_set(err, CHAKRA_EINVAL, "give at least one algo rule");
  xout out = {0};
  int rc = plan(&x);
  if (!rc) rc = plan_output(&x, out_prefix, &out);
  if (!rc) rc = write_out(&x, &out, out_prefix, err);
  if (!rc) {
    warn(&x, "%llu collective(s) left as COMM_COLL nodes: no algo rule matches them", x.left_alone[0]);
    warn(&x, "%llu collective(s) left as COMM_COLL nodes: type not expandable (only all-reduce, all-gather, reduce-scatter, all-to-all)", x.left_alone[1]);
    warn(&x, "%llu collective(s) left as COMM_COLL nodes: single-member communicator", x.left_alone[2]);
  }
  if (nodes_out) *nodes_out = x.nodes_out;
  chakra_manifest_free(out.man);
  free(out.rank);
  xstate_free(&x);
  return rc;
}
