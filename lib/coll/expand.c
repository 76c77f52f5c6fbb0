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
  chakra_set_close(set);
  return rc;
}

static void lib_free(xlib *l) {
  for (uint32_t r = 0; l->ranks && r < l->n; r++) coll_dag_free(&l->ranks[r]);
  free(l->ranks);
  free(l->prefix);
}

/* ---- the plan ------------------------------------------------------------- */

typedef struct xcoll {    /* one COMM_COLL node of one rank */
  uint64_t id, size;
  uint32_t group;         /* index into groups */
  int type;               /* chakra_coll_type, or -1 */
  int rule;               /* index of the rule used, or -1: left alone */
  int64_t lib;            /* index into libs when the rule names a prefix */
  uint32_t inst;          /* instance number within its group on this rank */
  uint64_t id_base;
  uint32_t n_nodes;
  uint64_t *deps;         /* data + control deps, as written */
  uint32_t n_deps;
  uint64_t *sinks;        /* absolute ids of its DAG's sinks */
  uint32_t n_sinks;
  int64_t tag_base;
} xcoll;

typedef struct xrank {
  char *path;
  uint64_t max_id;
  xcoll *v;
  size_t n, cap;
  uint32_t *by_id;        /* indexes of v sorted by id */
} xrank;

typedef struct xstate {
  const chakra_set *in;   /* the workload */
  const chakra_coll_expand_options *o;
  chakra_error *err;
  uint32_t npus;
  xrank *ranks;
  coll_groups groups;
  xlib *libs;
  size_t n_libs;
  int64_t tag_floor;      /* 1 + the largest point-to-point tag in the workload */
  uint64_t left_alone[4]; /* no rule, unsupported type, single member, other */
  struct xused {          /* (algorithm, type, size) met, each checked once (madefor.h) */
    int64_t lib;
    int type;
    uint64_t size;
  } *used;
  size_t n_used, cap_used;
  coll_dag dag;           /* scratch */
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
  xlib *v = realloc(x->libs, (x->n_libs + 1) * sizeof *v);
  if (!v) return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  x->libs = v;
  int rc = lib_load(&x->libs[x->n_libs], prefix, x->err);
  x->n_libs++; /* kept so that it is freed */
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
  char note[320], what[640];
  if (!x->o->diag || !coll_madefor_note(&l->made, c->type, c->size, other, x->o->custom_as_is, note, sizeof note))
    return 0;
  snprintf(what, sizeof what, "%s of %llu bytes (node %llu of rank %u) expanded with the algorithm %s, %s",
           chakra_coll_type_name((chakra_coll_type)c->type), (unsigned long long)c->size, (unsigned long long)c->id,
           r, l->prefix, note);
  chakra_problem p = chakra_problem_make(CHAKRA_SEV_WARNING, what);
  x->o->diag(x->o->diag_ctx, &p);
  return 0;
}

/* Chooses c's rule: the first that matches and can run it. */
static int choose(xstate *x, xcoll *c, const char *pg, uint32_t rank) {
  const coll_group *g = group_of(x, c);
  c->rule = -1;
  if (c->type < 0) {
    x->left_alone[1]++;
    return 0;
  }
  if (g->n < 2) {
    x->left_alone[2]++;
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
  x->left_alone[0]++;
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

/* ---- pass 1: what each rank holds ---------------------------------------- */

static int add_coll(xrank *k, const xcoll *c) {
  xcoll *v = coll_grow(k->v, k->n, &k->cap, sizeof *v);
  if (!v) return -1;
  k->v = v;
  k->v[k->n++] = *c;
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

/* Reads rank r: its collectives (pg names in *pgs, parallel to v), groups
 * from METADATA nodes, the largest id and tag. */
static int pass1_rank(xstate *x, uint32_t r, char ***pgs) {
  xrank *k = &x->ranks[r];
  chakra_reader *rd;
  int rc = chakra_set_reader(x->in, r, NULL, &rd, x->err);
  if (rc) return rc;
  size_t cap_pg = 0;
  chakra_node *n;
  while (!rc && (rc = chakra_reader_next(rd, &n, x->err)) == 1) {
    rc = 0;
    if (n->id > k->max_id) k->max_id = n->id;
    chakra_kind kind = chakra_node_kind_of((int32_t)n->type, 0);
    if (kind == CHAKRA_KIND_METADATA && n->inputs && n->inputs->values) {
      char where[4200];
      snprintf(where, sizeof where, "%s: rank %u: node %llu", k->path, r, (unsigned long long)n->id);
      rc = coll_groups_add_metadata(&x->groups, n->inputs->values, where, x->err);
      continue;
    }
    if (kind != CHAKRA_KIND_COLL && kind != CHAKRA_KIND_SEND && kind != CHAKRA_KIND_RECV) continue;
    chakra_gnode gn;
    chakra_std_attrs a;
    chakra_node_resolve(n, &gn, &a, NULL, NULL);
    chakra_node_class cl;
    chakra_node_classify(&gn, r, 0, &cl);
    if (kind != CHAKRA_KIND_COLL) {
      if ((a.present & CHAKRA_HAS_COMM_TAG) && (int64_t)a.comm_tag + 1 > x->tag_floor) x->tag_floor = (int64_t)a.comm_tag + 1;
      continue;
    }
    xcoll c = {0};
    c.id = n->id;
    c.size = a.comm_size;
    c.type = cl.problems & CHAKRA_NP_NO_COMM_SIZE ? -1 : cl.coll;
    c.deps = copy_deps(n, &c.n_deps);
    if (k->n == cap_pg) {
      cap_pg = cap_pg ? cap_pg * 2 : 64;
      char **v = realloc(*pgs, cap_pg * sizeof *v);
      if (v) *pgs = v;
      else c.deps = (free(c.deps), NULL);
    }
    char *pg = c.deps ? strdup(a.pg_name ? a.pg_name : "") : NULL;
    if (!pg || add_coll(k, &c)) {
      free(pg), free(c.deps);
      rc = chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
      break;
    }
    (*pgs)[k->n - 1] = pg;
  }
  chakra_reader_close(rd);
  return rc < 0 ? rc : 0;
}

static int cmp_by_id(const void *a, const void *b, void *ctx) {
  const xcoll *v = ctx;
  uint64_t x = v[*(const uint32_t *)a].id, y = v[*(const uint32_t *)b].id;
  return x < y ? -1 : x > y;
}

static xcoll *find_coll(const xrank *k, uint64_t id) {
  uint32_t lo = 0, hi = (uint32_t)k->n;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (k->v[k->by_id[mid]].id < id) lo = mid + 1;
    else hi = mid;
  }
  return lo < k->n && k->v[k->by_id[lo]].id == id ? &k->v[k->by_id[lo]] : NULL;
}

/* Resolves communicators, chooses algorithms, numbers instances and places
 * ids for rank r. */
static int plan_rank(xstate *x, uint32_t r, char **pgs, uint32_t *inst_ctr) {
  xrank *k = &x->ranks[r];
  memset(inst_ctr, 0, x->groups.n * sizeof *inst_ctr);
  uint64_t next = k->max_id + 1;
  for (size_t i = 0; i < k->n; i++) {
    xcoll *c = &k->v[i];
    long g = coll_groups_find(&x->groups, pgs[i]);
    if (g < 0 && strcmp(pgs[i], "0") == 0) g = coll_groups_find(&x->groups, "");
    if (g < 0)
      return chakra_error_set(x->err, CHAKRA_EINVAL, "%s: rank %u: node %llu: pg_name '%s' names no communicator group (give comm_groups, or a METADATA node defining it)",
                              k->path, r, (unsigned long long)c->id, pgs[i]);
    c->group = (uint32_t)g;
    const coll_group *grp = &x->groups.v[g];
    uint32_t pos = group_pos(grp, r);
    if (pos >= grp->n || grp->members[pos] != r)
      return chakra_error_set(x->err, CHAKRA_EINVAL, "%s: rank %u: node %llu: the rank is not a member of communicator '%s'",
                              k->path, r, (unsigned long long)c->id, grp->name);
    c->inst = inst_ctr[g]++;
    int rc = choose(x, c, pgs[i], r);
    if (!rc && c->rule >= 0) rc = place_coll(x, c, r, &next);
    if (rc) return rc;
  }
  k->by_id = malloc((k->n ? k->n : 1) * sizeof *k->by_id);
  if (!k->by_id) return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  for (uint32_t i = 0; i < k->n; i++) k->by_id[i] = i;
  qsort_r(k->by_id, k->n, sizeof *k->by_id, cmp_by_id, k->v);
  for (size_t i = 1; i < k->n; i++)
    if (k->v[k->by_id[i]].id == k->v[k->by_id[i - 1]].id)
      return chakra_error_set(x->err, CHAKRA_EFORMAT, "%s: node id %llu used twice", k->path,
                              (unsigned long long)k->v[k->by_id[i]].id);
  return 0;
}

/* Tag bases: per communicator, per instance, in one global order, taken
 * from the communicator's lowest rank; every member must agree. */
static int plan_tags(xstate *x) {
  int64_t next = x->tag_floor;
  for (size_t g = 0; g < x->groups.n; g++) {
    const coll_group *grp = &x->groups.v[g];
    if (grp->n < 2) continue;
    const xrank *ref = &x->ranks[grp->members[0]];
    size_t count = 0;
    for (size_t i = 0; i < ref->n; i++) count += ref->v[i].group == g;
    int64_t *base = malloc((count ? count : 1) * sizeof *base);
    const xcoll **refc = malloc((count ? count : 1) * sizeof *refc);
    if (!base || !refc) {
      free(base), free(refc);
      return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
    }
    for (size_t i = 0, j = 0; i < ref->n; i++) {
      if (ref->v[i].group != g) continue;
      refc[j] = &ref->v[i];
      base[j++] = next;
      if (ref->v[i].rule >= 0) next += span_of(x, &ref->v[i]);
    }
    int rc = 0;
    if (next > INT32_MAX) rc = chakra_error_set(x->err, CHAKRA_EINVAL, "expanded collectives need more than 2^31 message tags");
    for (uint32_t m = 0; !rc && m < grp->n; m++) {
      xrank *k = &x->ranks[grp->members[m]];
      size_t seen = 0;
      for (size_t i = 0; !rc && i < k->n; i++) {
        xcoll *c = &k->v[i];
        if (c->group != g) continue;
        if (seen >= count || c->type != refc[seen]->type || c->size != refc[seen]->size || c->rule != refc[seen]->rule)
          rc = chakra_error_set(x->err, CHAKRA_EFORMAT, "%s: node %llu: collective #%zu of communicator '%s' differs from rank %u's (type, size or count): the ranks would never match",
                                k->path, (unsigned long long)c->id, seen, grp->name, grp->members[0]);
        else c->tag_base = base[seen++];
      }
      if (!rc && seen != count)
        rc = chakra_error_set(x->err, CHAKRA_EFORMAT, "%s: %zu collectives on communicator '%s', rank %u has %zu", k->path,
                              seen, grp->name, grp->members[0], count);
    }
    free(base), free(refc);
    if (rc) return rc;
  }
  return 0;
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

static int pass2_rank(xstate *x, uint32_t r, coll_set *set) {
  xrank *k = &x->ranks[r];
  p2 w = {x, r, k, {0}, 0, {0}, {0}};
  w.next_extra = k->max_id + 1;
  for (size_t i = 0; i < k->n; i++)
    if (k->v[i].rule >= 0 && k->v[i].id_base + k->v[i].n_nodes > w.next_extra)
      w.next_extra = k->v[i].id_base + k->v[i].n_nodes;
  chakra_reader *rd;
  int rc = chakra_set_reader(x->in, r, NULL, &rd, x->err);
  if (rc) return rc;
  enc_message(&w.buf, &chakra_reader_metadata(rd)->base);
  const uint8_t *raw;
  size_t len;
  while (!rc && (rc = chakra_reader_next_raw(rd, &raw, &len, x->err)) == 1) {
    rc = 0;
    chakra_node *n = chakra_node_decode(raw, len);
    if (!n) {
      rc = chakra_error_set(x->err, CHAKRA_EFORMAT, "%s: node at offset %llu does not decode", k->path,
                            (unsigned long long)chakra_reader_message_offset(rd));
      break;
    }
    const xcoll *c = chakra_node_kind_of((int32_t)n->type, 0) == CHAKRA_KIND_COLL ? find_coll(k, n->id) : NULL;
    const xcoll *src;
    if (c && c->rule >= 0) rc = write_coll(&w, c, n);
    else if ((src = overlap_source(&w, n)) != NULL) rc = write_overlap(&w, src, n);
    else rc = write_node(&w, n, raw, len);
    protobuf_c_message_free_unpacked(&n->base, NULL);
    if (!rc && w.buf.n >= (4u << 20)) {
      rc = coll_set_write(set, r, &w.buf, x->err);
      w.buf.n = 0;
    }
  }
  chakra_reader_close(rd);
  if (rc >= 0) rc = coll_set_write(set, r, &w.buf, x->err);
  enc_buf_free(&w.buf);
  free(w.a.v), free(w.b.v);
  return rc;
}

/* Pass 2 on worker threads: each has its own view of the plan (read
 * only) with its own scratch DAG, node count and error. */
typedef struct p2job {
  xstate *w; /* one per worker */
  chakra_error *errs;
} p2job;

static int pass2_one(void *ctx, unsigned worker, uint32_t r, coll_set *set, chakra_error *err) {
  p2job *j = ctx;
  int rc = pass2_rank(&j->w[worker], r, set);
  if (rc && err) *err = j->errs[worker];
  return rc;
}

static int pass2(xstate *x, coll_set *set, chakra_error *err) {
  unsigned nt = coll_set_threads(x->o->threads);
  p2job j = {calloc(nt, sizeof *j.w), calloc(nt, sizeof *j.errs)};
  int rc = j.w && j.errs ? 0 : chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (unsigned t = 0; !rc && t < nt; t++) {
    j.w[t] = *x;
    j.w[t].err = &j.errs[t];
    j.w[t].nodes_out = 0;
    coll_dag_init(&j.w[t].dag);
  }
  if (!rc) rc = coll_set_fill(set, x->o->threads, pass2_one, &j, err);
  for (unsigned t = 0; !rc && t < nt; t++) x->nodes_out += j.w[t].nodes_out;
  for (unsigned t = 0; j.w && t < nt; t++) coll_dag_free(&j.w[t].dag);
  free(j.w);
  free(j.errs);
  return rc;
}

/* ---- driver ---------------------------------------------------------------- */

static void xstate_free(xstate *x) {
  for (uint32_t r = 0; x->ranks && r < x->npus; r++) {
    xrank *k = &x->ranks[r];
    for (size_t i = 0; i < k->n; i++) free(k->v[i].deps), free(k->v[i].sinks);
    free(k->v), free(k->by_id), free(k->path);
  }
  free(x->ranks);
  for (size_t i = 0; i < x->n_libs; i++) lib_free(&x->libs[i]);
  free(x->libs);
  free(x->used);
  coll_groups_free(&x->groups);
  coll_dag_free(&x->dag);
}

static void warn(const xstate *x, const char *fmt, unsigned long long n) {
  if (!x->o->diag || !n) return;
  char what[256];
  snprintf(what, sizeof what, fmt, n);
  chakra_problem p = chakra_problem_make(CHAKRA_SEV_WARNING, what);
  x->o->diag(x->o->diag_ctx, &p);
}

static int take_ranks(xstate *x) {
  x->npus = chakra_set_ranks(x->in);
  x->ranks = calloc(x->npus, sizeof *x->ranks);
  if (!x->ranks) return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  for (uint32_t r = 0; r < x->npus; r++)
    if (!(x->ranks[r].path = strdup(chakra_set_rank_name(x->in, r)))) return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  return 0;
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
  char ***pgs = calloc(x->npus, sizeof *pgs);
  if (!pgs) return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  int rc = 0;
  for (uint32_t r = 0; !rc && r < x->npus; r++) rc = pass1_rank(x, r, &pgs[r]);
  if (!rc && coll_groups_find(&x->groups, "") < 0) {
    /* the whole world, for collectives without pg_name */
    coll_group *v = coll_grow(x->groups.v, x->groups.n, &x->groups.cap, sizeof *v);
    if (!v) rc = chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
    else {
      x->groups.v = v;
      v[x->groups.n] = (coll_group){strdup(""), malloc(sizeof(uint32_t)), 0};
      if (!v[x->groups.n].name || !v[x->groups.n].members) rc = chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
      x->groups.n++;
    }
  }
  if (!rc) rc = coll_groups_finish(&x->groups, x->npus, x->err);
  uint32_t *ctr = rc ? NULL : malloc((x->groups.n ? x->groups.n : 1) * sizeof *ctr);
  if (!rc && !ctr) rc = chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  for (uint32_t r = 0; !rc && r < x->npus; r++) rc = plan_rank(x, r, pgs[r], ctr);
  if (!rc) rc = plan_tags(x);
  free(ctr);
  for (uint32_t r = 0; r < x->npus; r++) {
    for (size_t i = 0; pgs[r] && i < x->ranks[r].n; i++) free(pgs[r][i]);
    free(pgs[r]);
  }
  free(pgs);
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

int chakra_coll_expand_set(const chakra_set *in, const char *out_prefix, const chakra_coll_expand_options *o,
                           uint64_t *nodes_out, chakra_error *err) {
  xstate x = {0};
  x.in = in;
  x.o = o;
  x.err = err;
  coll_dag_init(&x.dag);
  if (nodes_out) *nodes_out = 0;
  if (!o->n_rules) return chakra_error_set(err, CHAKRA_EINVAL, "give at least one algo rule");
  int rc = take_ranks(&x);
  if (!rc) rc = take_set_groups(&x);
  if (!rc) rc = plan(&x);
  coll_set *set = NULL;
  if (!rc) rc = coll_set_open(&set, out_prefix, x.npus, err);
  if (!rc) rc = pass2(&x, set, err);
  if (set) {
    if (rc) coll_set_abort(set);
    else rc = coll_set_commit(set, err);
  }
  if (!rc) {
    warn(&x, "%llu collective(s) left as COMM_COLL nodes: no algo rule matches them", x.left_alone[0]);
    warn(&x, "%llu collective(s) left as COMM_COLL nodes: type not expandable (only all-reduce, all-gather, reduce-scatter, all-to-all)", x.left_alone[1]);
    warn(&x, "%llu collective(s) left as COMM_COLL nodes: single-member communicator", x.left_alone[2]);
  }
  if (nodes_out) *nodes_out = x.nodes_out;
  xstate_free(&x);
  return rc;
}
