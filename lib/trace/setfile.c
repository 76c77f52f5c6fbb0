/* setfile.c - the shared form's manifest (PREFIX.set.json); see setfile.h
 * and include/chakra/set.h. */
#include "setfile.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "../util/commgroups.h"
#include "../util/diag.h"
#include "../util/jsonw.h"
#include "../util/nameidx.h"
#include "../util/outfile.h"
#include "../util/strbuf.h"
#include "../util/vec.h"

/* ---- the manifest in memory ---------------------------------------------------- */

typedef struct maxis {
  char *name;
  uint32_t size;
  int is_class;
  uint64_t stride;  /* ranks per step along this axis */
  uint64_t cstride; /* classes per step, for a class axis */
} maxis;

typedef struct mrule {
  uint32_t *axes, n_axes;   /* the axes a group spans */
  uint32_t *order, n_order; /* the others, slowest first: they number the groups */
  uint64_t first, count;
  _Atomic(char *) *names;   /* names made on first use (a grid binds without tables) */
} mrule;

typedef struct mclass {
  char *tmpl;
  uint32_t rep;
  /* table: the roles, and their indexes sorted by value for lookups */
  char **groups;
  uint32_t ng, *gsorted;
  int32_t *peers;
  uint32_t np, *psorted;
} mclass;

struct chakra_manifest {
  _Atomic long refs;
  chakra_manifest_layout kind;
  uint32_t ranks;
  mclass *cls;
  uint32_t ncls, capcls;
  /* grid */
  maxis *axes;
  uint32_t naxes;
  mrule *rules;
  size_t nrules;
  pthread_mutex_t names_lock; /* a rule's name array, made once */
  /* table */
  char *groups_file;
  uint32_t *rank_cls;        /* UINT32_MAX: not set yet */
  size_t *rank_g, *rank_p;   /* offsets into gvals, pvals */
  uint32_t *gvals;           /* indexes into pool */
  int32_t *pvals;
  size_t ngvals, capg, npvals, capp;
  char **pool;               /* distinct group values */
  size_t npool, cappool;
  nameidx pool_idx;          /* their names */
};

#define OOM(err) chakra_error_set(err, CHAKRA_ENOMEM, "out of memory")

/* A name from the input as one printable line for messages (cg_quote). */
typedef struct quoted {
  char s[120];
} quoted;
static quoted q(const char *name) {
  quoted x;
  cg_quote(name ? name : "", x.s, sizeof x.s);
  return x;
}

static chakra_manifest *man_new(chakra_manifest_layout kind, uint32_t ranks) {
  chakra_manifest *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  atomic_init(&m->refs, 1);
  m->kind = kind;
  m->ranks = ranks;
  pthread_mutex_init(&m->names_lock, NULL);
  return m;
}

static void class_free(mclass *c) {
  free(c->tmpl);
  for (uint32_t i = 0; i < c->ng; i++) free(c->groups[i]);
  free(c->groups), free(c->gsorted), free(c->peers), free(c->psorted);
}

static void man_free(chakra_manifest *m) {
  for (uint32_t i = 0; i < m->ncls; i++) class_free(&m->cls[i]);
  for (uint32_t i = 0; i < m->naxes; i++) free(m->axes[i].name);
  for (size_t i = 0; i < m->nrules; i++) {
    mrule *r = &m->rules[i];
    for (uint64_t k = 0; r->names && k < r->count; k++) free(atomic_load(&r->names[k]));
    free(r->names), free(r->axes), free(r->order);
  }
  for (size_t i = 0; i < m->npool; i++) free(m->pool[i]);
  free(m->cls), free(m->axes), free(m->rules), free(m->groups_file);
  free(m->rank_cls), free(m->rank_g), free(m->rank_p), free(m->gvals), free(m->pvals);
  free(m->pool), nameidx_free(&m->pool_idx);
  pthread_mutex_destroy(&m->names_lock);
  free(m);
}

void chakra_manifest_free(chakra_manifest *m) {
  if (m && atomic_fetch_sub(&m->refs, 1) == 1) man_free(m);
}

chakra_manifest *setfile_ref(const chakra_manifest *cm) {
  chakra_manifest *m = (chakra_manifest *)cm;
  atomic_fetch_add(&m->refs, 1);
  return m;
}

/* ---- names ---------------------------------------------------------------------- */

static char *suffixed(const char *prefix, const char *fmt, uint32_t k) {
  size_t n = strlen(prefix) + 32;
  char *p = malloc(n);
  if (p) {
    memcpy(p, prefix, strlen(prefix));
    snprintf(p + strlen(prefix), 32, fmt, k);
  }
  return p;
}

char *chakra_manifest_path_dup(const char *prefix) { return suffixed(prefix, ".set.json", 0); }
char *chakra_class_path_dup(const char *prefix, uint32_t cls) { return suffixed(prefix, ".class%u.et", cls); }

char *setfile_resolve(const char *manifest_path, const char *name) {
  const char *slash = strrchr(manifest_path, '/');
  if (name[0] == '/' || !slash) return strdup(name);
  size_t d = (size_t)(slash - manifest_path) + 1, n = strlen(name);
  char *p = malloc(d + n + 1);
  if (p) memcpy(p, manifest_path, d), memcpy(p + d, name, n + 1);
  return p;
}

/* ---- the grid's arithmetic ------------------------------------------------------------ */

static uint32_t coord(const chakra_manifest *m, uint32_t rank, uint32_t a) {
  return (uint32_t)((rank / m->axes[a].stride) % m->axes[a].size);
}

static uint32_t grid_class(const chakra_manifest *m, uint32_t rank) {
  uint64_t k = 0;
  for (uint32_t a = 0; a < m->naxes; a++)
    if (m->axes[a].is_class) k += coord(m, rank, a) * m->axes[a].cstride;
  return (uint32_t)k;
}

/* Moves coordinate c of axis a by the offset from rank `from` to rank `to`. */
static uint32_t translate(const chakra_manifest *m, uint32_t a, uint32_t c, uint32_t to, uint32_t from) {
  uint64_t size = m->axes[a].size;
  return (uint32_t)((c + size - coord(m, from, a) + coord(m, to, a)) % size);
}

uint32_t setfile_grid_move(const chakra_manifest *m, uint32_t x, uint32_t from, uint32_t to) {
  uint64_t r = 0;
  for (uint32_t a = 0; a < m->naxes; a++) {
    uint32_t c = coord(m, x, a);
    if (!m->axes[a].is_class) c = translate(m, a, c, to, from);
    r += c * m->axes[a].stride;
  }
  return (uint32_t)r;
}

static int32_t grid_peer(const chakra_manifest *m, uint32_t rank, int32_t p) {
  if (p < 0 || (uint32_t)p >= m->ranks) return p;
  uint32_t rep = m->cls[grid_class(m, rank)].rep;
  return rep == rank ? p : (int32_t)setfile_grid_move(m, (uint32_t)p, rep, rank);
}

/* A group number as written: decimal digits, no sign or leading zero. */
static int parse_number(const char *s, uint64_t *out) {
  uint64_t v = 0;
  if (!*s || (s[0] == '0' && s[1]) || strlen(s) > 19) return -1;
  for (; *s; s++) {
    if (*s < '0' || *s > '9') return -1;
    v = v * 10 + (uint64_t)(*s - '0');
  }
  *out = v;
  return 0;
}

static const char *rule_name(const chakra_manifest *cm, size_t i, uint64_t idx) {
  chakra_manifest *m = (chakra_manifest *)cm;
  mrule *r = &m->rules[i];
  if (!r->names) {
    pthread_mutex_lock(&m->names_lock);
    if (!r->names) r->names = calloc(r->count, sizeof *r->names);
    pthread_mutex_unlock(&m->names_lock);
    if (!r->names) return NULL;
  }
  char *have = atomic_load(&r->names[idx]);
  if (have) return have;
  char buf[24];
  snprintf(buf, sizeof buf, "%llu", (unsigned long long)(r->first + idx));
  char *mine = strdup(buf), *expected = NULL;
  if (!mine) return NULL;
  if (atomic_compare_exchange_strong(&r->names[idx], &expected, mine)) return mine;
  free(mine);
  return expected;
}

long setfile_grid_rule_of(const chakra_manifest *m, const char *pg, uint64_t *idx) {
  uint64_t id;
  if (m->kind != CHAKRA_MANIFEST_GRID || parse_number(pg, &id)) return -1;
  for (size_t i = 0; i < m->nrules; i++)
    if (id >= m->rules[i].first && id - m->rules[i].first < m->rules[i].count) {
      if (idx) *idx = id - m->rules[i].first;
      return (long)i;
    }
  return -1;
}

static const char *grid_group(const chakra_manifest *m, uint32_t rank, const char *pg) {
  uint64_t idx;
  long i = setfile_grid_rule_of(m, pg, &idx);
  uint32_t rep = m->cls[grid_class(m, rank)].rep;
  if (i < 0 || rep == rank) return pg;
  const mrule *r = &m->rules[i];
  uint64_t out = 0, scale = 1;
  for (uint32_t k = r->n_order; k-- > 0;) { /* fastest last */
    uint32_t a = r->order[k], size = m->axes[a].size;
    uint32_t c = (uint32_t)(idx % size);
    idx /= size;
    if (!m->axes[a].is_class) c = translate(m, a, c, rank, rep);
    out += c * scale;
    scale *= size;
  }
  const char *name = rule_name(m, (size_t)i, out);
  return name ? name : pg;
}

/* ---- the table's lookups --------------------------------------------------------------- */

static const mclass *sort_ctx_class;
static int by_group(const void *a, const void *b) {
  return strcmp(sort_ctx_class->groups[*(const uint32_t *)a], sort_ctx_class->groups[*(const uint32_t *)b]);
}
static int by_peer(const void *a, const void *b) {
  int32_t x = sort_ctx_class->peers[*(const uint32_t *)a], y = sort_ctx_class->peers[*(const uint32_t *)b];
  return (x > y) - (x < y);
}

static long find_group_role(const mclass *c, const char *pg) {
  size_t lo = 0, hi = c->ng;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int k = strcmp(c->groups[c->gsorted[mid]], pg);
    if (!k) return c->gsorted[mid];
    if (k < 0) lo = mid + 1;
    else hi = mid;
  }
  return -1;
}

static long find_peer_role(const mclass *c, int32_t p) {
  size_t lo = 0, hi = c->np;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int32_t v = c->peers[c->psorted[mid]];
    if (v == p) return c->psorted[mid];
    if (v < p) lo = mid + 1;
    else hi = mid;
  }
  return -1;
}

/* ---- what a manifest says -------------------------------------------------------------- */

chakra_manifest_layout chakra_manifest_kind(const chakra_manifest *m) { return m->kind; }
uint32_t chakra_manifest_ranks(const chakra_manifest *m) { return m->ranks; }
uint32_t chakra_manifest_classes(const chakra_manifest *m) { return m->ncls; }
const char *chakra_manifest_template(const chakra_manifest *m, uint32_t cls) {
  return cls < m->ncls ? m->cls[cls].tmpl : NULL;
}
uint32_t chakra_manifest_rep(const chakra_manifest *m, uint32_t cls) { return cls < m->ncls ? m->cls[cls].rep : 0; }

uint32_t chakra_manifest_class_of(const chakra_manifest *m, uint32_t rank) {
  if (rank >= m->ranks) return 0;
  if (m->kind == CHAKRA_MANIFEST_GRID) return grid_class(m, rank);
  return m->rank_cls && m->rank_cls[rank] != UINT32_MAX ? m->rank_cls[rank] : 0;
}

int setfile_is_rep(const chakra_manifest *m, uint32_t rank) {
  uint32_t c = chakra_manifest_class_of(m, rank);
  return c < m->ncls && m->cls[c].rep == rank;
}

const char *chakra_manifest_bind_group(const chakra_manifest *m, uint32_t rank, const char *pg) {
  if (!pg || !*pg || rank >= m->ranks) return pg;
  if (m->kind == CHAKRA_MANIFEST_GRID) return grid_group(m, rank, pg);
  uint32_t c = chakra_manifest_class_of(m, rank);
  long role = c < m->ncls ? find_group_role(&m->cls[c], pg) : -1;
  if (role < 0 || !m->rank_cls || m->rank_cls[rank] == UINT32_MAX) return pg;
  return m->pool[m->gvals[m->rank_g[rank] + (size_t)role]];
}

int32_t chakra_manifest_bind_peer(const chakra_manifest *m, uint32_t rank, int32_t p) {
  if (rank >= m->ranks) return p;
  if (m->kind == CHAKRA_MANIFEST_GRID) return grid_peer(m, rank, p);
  uint32_t c = chakra_manifest_class_of(m, rank);
  long role = c < m->ncls ? find_peer_role(&m->cls[c], p) : -1;
  if (role < 0 || !m->rank_cls || m->rank_cls[rank] == UINT32_MAX) return p;
  return m->pvals[m->rank_p[rank] + (size_t)role];
}

const char *chakra_manifest_groups_file(const chakra_manifest *m) { return m->groups_file; }
uint32_t chakra_manifest_axes(const chakra_manifest *m) { return m->naxes; }
const char *chakra_manifest_axis_name(const chakra_manifest *m, uint32_t a) { return a < m->naxes ? m->axes[a].name : NULL; }
uint32_t chakra_manifest_axis_size(const chakra_manifest *m, uint32_t a) { return a < m->naxes ? m->axes[a].size : 0; }
int chakra_manifest_axis_is_class(const chakra_manifest *m, uint32_t a) { return a < m->naxes && m->axes[a].is_class; }
size_t chakra_manifest_group_rules(const chakra_manifest *m) { return m->nrules; }
const uint32_t *chakra_manifest_rule_axes(const chakra_manifest *m, size_t i, uint32_t *n) {
  *n = i < m->nrules ? m->rules[i].n_axes : 0;
  return i < m->nrules ? m->rules[i].axes : NULL;
}
const uint32_t *chakra_manifest_rule_order(const chakra_manifest *m, size_t i, uint32_t *n) {
  *n = i < m->nrules ? m->rules[i].n_order : 0;
  return i < m->nrules ? m->rules[i].order : NULL;
}
uint64_t chakra_manifest_rule_first(const chakra_manifest *m, size_t i) { return i < m->nrules ? m->rules[i].first : 0; }
uint32_t chakra_manifest_group_roles(const chakra_manifest *m, uint32_t cls) { return cls < m->ncls ? m->cls[cls].ng : 0; }
uint32_t chakra_manifest_peer_roles(const chakra_manifest *m, uint32_t cls) { return cls < m->ncls ? m->cls[cls].np : 0; }

static int rank_set(const chakra_manifest *m, uint32_t rank) {
  return rank < m->ranks && m->rank_cls && m->rank_cls[rank] != UINT32_MAX;
}
const char *chakra_manifest_rank_group(const chakra_manifest *m, uint32_t rank, uint32_t role) {
  if (!rank_set(m, rank) || role >= m->cls[m->rank_cls[rank]].ng) return NULL;
  return m->pool[m->gvals[m->rank_g[rank] + role]];
}
int32_t chakra_manifest_rank_peer(const chakra_manifest *m, uint32_t rank, uint32_t role) {
  if (!rank_set(m, rank) || role >= m->cls[m->rank_cls[rank]].np) return -1;
  return m->pvals[m->rank_p[rank] + role];
}

/* ---- building ---------------------------------------------------------------------------- */

int chakra_manifest_new(chakra_manifest **out, chakra_manifest_layout kind, uint32_t ranks, chakra_error *err) {
  *out = NULL;
  if (kind != CHAKRA_MANIFEST_GRID && kind != CHAKRA_MANIFEST_TABLE)
    return chakra_error_set(err, CHAKRA_EINVAL, "manifest: layout %d is neither grid nor table", (int)kind);
  if (!ranks) return chakra_error_set(err, CHAKRA_EINVAL, "manifest: a trace set needs at least one rank");
  chakra_manifest *m = man_new(kind, ranks);
  if (m && kind == CHAKRA_MANIFEST_TABLE) {
    m->rank_cls = malloc((size_t)ranks * sizeof *m->rank_cls);
    m->rank_g = malloc((size_t)ranks * sizeof *m->rank_g);
    m->rank_p = malloc((size_t)ranks * sizeof *m->rank_p);
    if (m->rank_cls) memset(m->rank_cls, 0xff, (size_t)ranks * sizeof *m->rank_cls);
    if (!m->rank_cls || !m->rank_g || !m->rank_p) man_free(m), m = NULL;
  }
  if (!m) return OOM(err);
  *out = m;
  return 0;
}

static long axis_index(const chakra_manifest *m, const char *name) {
  for (uint32_t a = 0; a < m->naxes; a++)
    if (strcmp(m->axes[a].name, name) == 0) return a;
  return -1;
}

/* Strides and the rank count they make; 0, or -1 when the grid does not
 * hold `ranks` ranks. */
static int grid_strides(chakra_manifest *m) {
  uint64_t s = 1, cs = 1;
  for (uint32_t a = 0; a < m->naxes; a++) {
    m->axes[a].stride = s;
    m->axes[a].cstride = m->axes[a].is_class ? cs : 0;
    s *= m->axes[a].size;
    if (m->axes[a].is_class) cs *= m->axes[a].size;
    if (s > UINT32_MAX) return -1;
  }
  return 0;
}

int chakra_manifest_add_axis(chakra_manifest *m, const char *name, uint32_t size, int class_axis, chakra_error *err) {
  if (m->kind != CHAKRA_MANIFEST_GRID) return chakra_error_set(err, CHAKRA_EINVAL, "manifest: axes belong to a grid");
  if (!name || !*name) return chakra_error_set(err, CHAKRA_EINVAL, "manifest: an axis needs a name");
  if (axis_index(m, name) >= 0) return chakra_error_set(err, CHAKRA_EINVAL, "manifest: axis \"%s\" given twice", q(name).s);
  if (!size) return chakra_error_set(err, CHAKRA_EINVAL, "manifest: axis \"%s\" has size 0", q(name).s);
  if (m->nrules) return chakra_error_set(err, CHAKRA_EINVAL, "manifest: axes come before the group rules");
  maxis x = {.name = strdup(name), .size = size, .is_class = class_axis != 0};
  maxis *v = x.name ? VEC_APPEND(m->axes, m->naxes) : NULL;
  if (!v) return free(x.name), OOM(err);
  *v = x;
  if (grid_strides(m)) {
    free(m->axes[--m->naxes].name);
    return chakra_error_set(err, CHAKRA_EINVAL, "manifest: the axes make more than 4294967295 ranks");
  }
  return 0;
}

/* Axis indexes of names, each once, into idx (n of them); seen marks them. */
static int rule_axes(const chakra_manifest *m, const char *const *names, uint32_t n, uint32_t *idx, uint8_t *seen,
                     chakra_error *err) {
  for (uint32_t i = 0; i < n; i++) {
    long a = names[i] ? axis_index(m, names[i]) : -1;
    if (a < 0) return chakra_error_set(err, CHAKRA_EINVAL, "manifest: group rule: no axis \"%s\"", q(names[i]).s);
    if (seen[a]) return chakra_error_set(err, CHAKRA_EINVAL, "manifest: group rule: axis \"%s\" named twice", q(names[i]).s);
    seen[a] = 1;
    idx[i] = (uint32_t)a;
  }
  return 0;
}

static int rules_overlap(const chakra_manifest *m, const mrule *r) {
  for (size_t i = 0; i < m->nrules; i++) {
    const mrule *o = &m->rules[i];
    if (r->first < o->first + o->count && o->first < r->first + r->count) return 1;
  }
  return 0;
}

int chakra_manifest_add_group_rule(chakra_manifest *m, const char *const *axes, uint32_t n_axes,
                                   const char *const *order, uint32_t n_order, uint64_t first, chakra_error *err) {
  if (m->kind != CHAKRA_MANIFEST_GRID) return chakra_error_set(err, CHAKRA_EINVAL, "manifest: group rules belong to a grid");
  if (!n_axes) return chakra_error_set(err, CHAKRA_EINVAL, "manifest: a group rule spans at least one axis");
  if (n_axes + n_order != m->naxes)
    return chakra_error_set(err, CHAKRA_EINVAL,
                            "manifest: a group rule names every axis once, in its axes or its order (%u axes, %u named)",
                            m->naxes, n_axes + n_order);
  mrule r = {.first = first, .count = 1, .n_axes = n_axes, .n_order = n_order};
  uint8_t *seen = calloc(m->naxes, 1);
  r.axes = malloc(n_axes * sizeof *r.axes);
  r.order = malloc((n_order ? n_order : 1) * sizeof *r.order);
  int rc = !seen || !r.axes || !r.order ? OOM(err) : rule_axes(m, axes, n_axes, r.axes, seen, err);
  if (!rc) rc = rule_axes(m, order, n_order, r.order, seen, err);
  for (uint32_t i = 0; !rc && i < n_order; i++) r.count *= m->axes[r.order[i]].size;
  if (!rc && (first == 0 || first > UINT64_MAX / 2 || r.count > UINT64_MAX / 2 - first))
    rc = chakra_error_set(err, CHAKRA_EINVAL, "manifest: group rule: first group number %llu is not from 1 to 2^63",
                          (unsigned long long)first);
  if (!rc && rules_overlap(m, &r))
    rc = chakra_error_set(err, CHAKRA_EINVAL, "manifest: group rule: groups %llu..%llu are numbered by another rule too",
                          (unsigned long long)first, (unsigned long long)(first + r.count - 1));
  mrule *v = rc ? NULL : VEC_APPEND(m->rules, m->nrules);
  if (!rc && !v) rc = OOM(err);
  free(seen);
  if (rc) {
    free(r.axes), free(r.order);
    return rc;
  }
  *v = r;
  return 0;
}

int chakra_manifest_add_class(chakra_manifest *m, const char *tmpl, uint32_t rep, chakra_error *err) {
  if (!tmpl || !*tmpl) return chakra_error_set(err, CHAKRA_EINVAL, "manifest: a class needs a template");
  if (rep >= m->ranks)
    return chakra_error_set(err, CHAKRA_EINVAL, "manifest: class %u: representative %u is not a rank (0..%u)", m->ncls,
                            rep, m->ranks - 1);
  if (VEC_ROOM(m->cls, m->ncls, m->capcls, 1)) return OOM(err);
  mclass c = {.tmpl = strdup(tmpl), .rep = rep};
  if (!c.tmpl) return OOM(err);
  m->cls[m->ncls++] = c;
  return 0;
}

int chakra_manifest_set_template(chakra_manifest *m, uint32_t cls, const char *tmpl, chakra_error *err) {
  if (cls >= m->ncls) return chakra_error_set(err, CHAKRA_EINVAL, "manifest: class %u does not exist", cls);
  if (!tmpl || !*tmpl) return chakra_error_set(err, CHAKRA_EINVAL, "manifest: a class needs a template");
  char *t = strdup(tmpl);
  if (!t) return OOM(err);
  free(m->cls[cls].tmpl);
  m->cls[cls].tmpl = t;
  return 0;
}

static int sort_roles(mclass *c) {
  c->gsorted = malloc((c->ng ? c->ng : 1) * sizeof *c->gsorted);
  c->psorted = malloc((c->np ? c->np : 1) * sizeof *c->psorted);
  if (!c->gsorted || !c->psorted) return -1;
  for (uint32_t i = 0; i < c->ng; i++) c->gsorted[i] = i;
  for (uint32_t i = 0; i < c->np; i++) c->psorted[i] = i;
  sort_ctx_class = c; /* qsort has no context; building is single-threaded per manifest */
  qsort(c->gsorted, c->ng, sizeof *c->gsorted, by_group);
  qsort(c->psorted, c->np, sizeof *c->psorted, by_peer);
  return 0;
}

/* The first role given twice, as text, or NULL. */
static const char *repeated_role(const mclass *c, char *buf, size_t size) {
  for (uint32_t i = 1; i < c->ng; i++)
    if (strcmp(c->groups[c->gsorted[i]], c->groups[c->gsorted[i - 1]]) == 0) {
      snprintf(buf, size, "group \"%s\"", q(c->groups[c->gsorted[i]]).s);
      return buf;
    }
  for (uint32_t i = 1; i < c->np; i++)
    if (c->peers[c->psorted[i]] == c->peers[c->psorted[i - 1]]) {
      snprintf(buf, size, "peer %d", c->peers[c->psorted[i]]);
      return buf;
    }
  return NULL;
}

static pthread_mutex_t sort_lock = PTHREAD_MUTEX_INITIALIZER;

int chakra_manifest_set_roles(chakra_manifest *m, uint32_t cls, const char *const *groups, uint32_t ng,
                              const int32_t *peers, uint32_t np, chakra_error *err) {
  if (m->kind != CHAKRA_MANIFEST_TABLE) return chakra_error_set(err, CHAKRA_EINVAL, "manifest: roles belong to a table");
  if (cls >= m->ncls) return chakra_error_set(err, CHAKRA_EINVAL, "manifest: class %u does not exist", cls);
  mclass c = {.ng = ng, .np = np};
  c.groups = calloc(ng ? ng : 1, sizeof *c.groups);
  c.peers = malloc((np ? np : 1) * sizeof *c.peers);
  int rc = c.groups && c.peers ? 0 : -1;
  for (uint32_t i = 0; !rc && i < ng; i++)
    if (!groups[i] || !(c.groups[i] = strdup(groups[i]))) rc = -1;
  if (!rc && np) memcpy(c.peers, peers, np * sizeof *peers);
  pthread_mutex_lock(&sort_lock);
  if (!rc) rc = sort_roles(&c);
  pthread_mutex_unlock(&sort_lock);
  char what[300];
  const char *rep = rc ? NULL : repeated_role(&c, what, sizeof what);
  if (rc || rep) {
    class_free(&c);
    return rep ? chakra_error_set(err, CHAKRA_EINVAL, "manifest: class %u: the %s is a role twice", cls, rep) : OOM(err);
  }
  mclass *o = &m->cls[cls];
  c.tmpl = o->tmpl, c.rep = o->rep;
  o->tmpl = NULL;
  class_free(o);
  *o = c;
  return 0;
}

/* Index of s in the pool, added when new; -1 when out of memory. */
static long pool_intern(chakra_manifest *m, const char *s) {
  nameidx_recs r = {m->pool, sizeof *m->pool, 0};
  long i = nameidx_find(&m->pool_idx, r, s);
  if (i >= 0) return i;
  char **v = m->npool < UINT32_MAX - 1 ? VEC_PUSH(m->pool, m->npool, m->cappool) : NULL;
  if (!v) return -1;
  if ((*v = strdup(s)) && !nameidx_sync(&m->pool_idx, (nameidx_recs){m->pool, sizeof *m->pool, 0}, m->npool))
    return (long)m->npool - 1;
  free(m->pool[--m->npool]);
  return -1;
}

int chakra_manifest_set_rank(chakra_manifest *m, uint32_t rank, uint32_t cls, const char *const *groups,
                             const int32_t *peers, chakra_error *err) {
  if (m->kind != CHAKRA_MANIFEST_TABLE) return chakra_error_set(err, CHAKRA_EINVAL, "manifest: rank rows belong to a table");
  if (rank >= m->ranks) return chakra_error_set(err, CHAKRA_EINVAL, "manifest: rank %u does not exist", rank);
  if (cls >= m->ncls) return chakra_error_set(err, CHAKRA_EINVAL, "manifest: rank %u: class %u does not exist", rank, cls);
  const mclass *c = &m->cls[cls];
  if (VEC_ROOM(m->gvals, m->ngvals, m->capg, c->ng) || VEC_ROOM(m->pvals, m->npvals, m->capp, c->np))
    return OOM(err);
  for (uint32_t i = 0; i < c->ng; i++) {
    long k = groups && groups[i] ? pool_intern(m, groups[i]) : -2;
    if (k == -2) return chakra_error_set(err, CHAKRA_EINVAL, "manifest: rank %u: group role %u has no name", rank, i);
    if (k < 0) return OOM(err);
    m->gvals[m->ngvals + i] = (uint32_t)k;
  }
  if (c->np) memcpy(m->pvals + m->npvals, peers, c->np * sizeof *peers);
  m->rank_cls[rank] = cls;
  m->rank_g[rank] = m->ngvals, m->rank_p[rank] = m->npvals;
  m->ngvals += c->ng, m->npvals += c->np;
  return 0;
}

int chakra_manifest_set_groups_file(chakra_manifest *m, const char *path, chakra_error *err) {
  if (m->kind != CHAKRA_MANIFEST_TABLE)
    return chakra_error_set(err, CHAKRA_EINVAL, "manifest: a grid's groups are its rules, not a file");
  char *p = path ? strdup(path) : NULL;
  if (path && !p) return OOM(err);
  free(m->groups_file);
  m->groups_file = p;
  return 0;
}

int chakra_manifest_copy(chakra_manifest **out, const chakra_manifest *m, chakra_error *err) {
  int rc = chakra_manifest_new(out, m->kind, m->ranks, err);
  chakra_manifest *c = *out;
  for (uint32_t a = 0; !rc && a < m->naxes; a++)
    rc = chakra_manifest_add_axis(c, m->axes[a].name, m->axes[a].size, m->axes[a].is_class, err);
  for (size_t i = 0; !rc && i < m->nrules; i++) {
    const mrule *r = &m->rules[i];
    const char *ax[64], *ord[64];
    for (uint32_t k = 0; k < r->n_axes; k++) ax[k] = m->axes[r->axes[k]].name;
    for (uint32_t k = 0; k < r->n_order; k++) ord[k] = m->axes[r->order[k]].name;
    rc = chakra_manifest_add_group_rule(c, ax, r->n_axes, ord, r->n_order, r->first, err);
  }
  for (uint32_t k = 0; !rc && k < m->ncls; k++) {
    const mclass *cl = &m->cls[k];
    rc = chakra_manifest_add_class(c, cl->tmpl, cl->rep, err);
    if (!rc && m->kind == CHAKRA_MANIFEST_TABLE)
      rc = chakra_manifest_set_roles(c, k, (const char *const *)cl->groups, cl->ng, cl->peers, cl->np, err);
  }
  const char **g = NULL;
  for (uint32_t r = 0; !rc && m->kind == CHAKRA_MANIFEST_TABLE && r < m->ranks; r++) {
    if (!rank_set(m, r)) continue;
    const mclass *cl = &m->cls[m->rank_cls[r]];
    const char **ng = realloc(g, (cl->ng ? cl->ng : 1) * sizeof *g);
    if (!ng) {
      rc = OOM(err);
      break;
    }
    g = ng;
    for (uint32_t i = 0; i < cl->ng; i++) g[i] = m->pool[m->gvals[m->rank_g[r] + i]];
    rc = chakra_manifest_set_rank(c, r, m->rank_cls[r], g, m->pvals + m->rank_p[r], err);
  }
  free(g);
  if (!rc && m->groups_file) rc = chakra_manifest_set_groups_file(c, m->groups_file, err);
  if (rc) {
    chakra_manifest_free(*out);
    *out = NULL;
  }
  return rc;
}

/* ---- checking the whole --------------------------------------------------------------------- */

/* What a reader checks beyond the pieces: the classes fit the layout. The
 * message is placed by the caller (a reader names the line). */
static int check_whole(const chakra_manifest *m, chakra_error *err) {
  if (!m->ncls) return chakra_error_set(err, CHAKRA_EINVAL, "classes: a trace set needs at least one class");
  if (m->kind == CHAKRA_MANIFEST_GRID) {
    if (!m->naxes) return chakra_error_set(err, CHAKRA_EINVAL, "layout.axes: a grid needs at least one axis");
    uint64_t n = 1, nc = 1;
    for (uint32_t a = 0; a < m->naxes; a++) {
      n *= m->axes[a].size;
      if (m->axes[a].is_class) nc *= m->axes[a].size;
    }
    if (n != m->ranks)
      return chakra_error_set(err, CHAKRA_EINVAL, "layout.axes: the axes make %llu ranks, but \"ranks\" is %u",
                              (unsigned long long)n, m->ranks);
    if (nc != m->ncls)
      return chakra_error_set(err, CHAKRA_EINVAL,
                              "classes: the class axes make %llu classes, but %u are listed",
                              (unsigned long long)nc, m->ncls);
    for (uint32_t k = 0; k < m->ncls; k++)
      if (grid_class(m, m->cls[k].rep) != k)
        return chakra_error_set(err, CHAKRA_EINVAL,
                                "classes[%u].rep: rank %u is in class %u by its coordinates on the class axes", k,
                                m->cls[k].rep, grid_class(m, m->cls[k].rep));
    return 0;
  }
  for (uint32_t r = 0; r < m->ranks; r++)
    if (!rank_set(m, r)) return chakra_error_set(err, CHAKRA_EINVAL, "layout.ranks[%u]: the rank has no row", r);
  for (uint32_t k = 0; k < m->ncls; k++) {
    const mclass *c = &m->cls[k];
    uint32_t rep = c->rep;
    if (m->rank_cls[rep] != k)
      return chakra_error_set(err, CHAKRA_EINVAL, "classes[%u].rep: rank %u is listed in class %u", k, rep,
                              m->rank_cls[rep]);
    for (uint32_t i = 0; i < c->ng; i++)
      if (strcmp(m->pool[m->gvals[m->rank_g[rep] + i]], c->groups[i]) != 0)
        return chakra_error_set(err, CHAKRA_EINVAL,
                                "layout.ranks[%u]: the representative of class %u binds group role %u to \"%s\", "
                                "not to its template's \"%s\"",
                                rep, k, i, q(m->pool[m->gvals[m->rank_g[rep] + i]]).s, q(c->groups[i]).s);
    for (uint32_t i = 0; i < c->np; i++)
      if (m->pvals[m->rank_p[rep] + i] != c->peers[i])
        return chakra_error_set(err, CHAKRA_EINVAL,
                                "layout.ranks[%u]: the representative of class %u binds peer role %u to %d, not to "
                                "its template's %d",
                                rep, k, i, m->pvals[m->rank_p[rep] + i], c->peers[i]);
  }
  return 0;
}

int chakra_manifest_check(const chakra_manifest *m, chakra_error *err) {
  chakra_error e = {0};
  int rc = check_whole(m, &e);
  if (rc) chakra_error_set(err, rc, "manifest: %s", e.msg);
  return rc;
}

/* ---- reading: a JSON tree that remembers lines ------------------------------------------------- */

enum { JT_NULL, JT_BOOL, JT_NUM, JT_STR, JT_ARR, JT_OBJ };

typedef struct jt {
  uint8_t t;
  uint8_t isint;     /* JT_NUM: a whole number within int64 */
  uint32_t line;
  uint32_t n, cap;   /* JT_ARR, JT_OBJ: children */
  struct jt *kids;
  char **keys;       /* JT_OBJ */
  char *s;           /* JT_STR */
  size_t slen;
  int64_t i;
} jt;

#define JT_DEPTH 16

typedef struct jp {
  yajl_handle h;
  const char *text, *name;
  size_t counted;
  uint32_t line;
  jt root;
  int have_root;
  jt *stack[JT_DEPTH];
  int depth;
  char *key;
  uint32_t key_line;
  chakra_error *err;
  int failed;
} jp;

static void jt_free(jt *v) {
  if (!v) return;
  for (uint32_t i = 0; i < v->n; i++) {
    jt_free(&v->kids[i]);
    if (v->keys) free(v->keys[i]);
  }
  free(v->kids), free(v->keys), free(v->s);
}

static uint32_t jp_line(jp *p) {
  size_t off = yajl_get_bytes_consumed(p->h);
  for (; p->counted < off; p->counted++) p->line += p->text[p->counted] == '\n';
  return p->line;
}

static int jp_fail(jp *p, const char *what) {
  if (!p->failed) chakra_error_set(p->err, CHAKRA_EFORMAT, "%s: line %u: %s", p->name, jp_line(p), what);
  p->failed = 1;
  return 0;
}

/* Places v (moved) in the open container, or as the root. */
static jt *jp_add(jp *p, jt *v) {
  v->line = jp_line(p);
  if (p->depth == 0) {
    if (p->have_root) return jp_fail(p, "text after the manifest"), NULL;
    p->root = *v;
    p->have_root = 1;
    return &p->root;
  }
  jt *c = p->stack[p->depth - 1];
  if (c->t == JT_OBJ) {
    for (uint32_t i = 0; i < c->n; i++)
      if (strcmp(c->keys[i], p->key) == 0) {
        char what[200];
        snprintf(what, sizeof what, "member \"%s\" given twice", q(p->key).s);
        return jp_fail(p, what), NULL;
      }
  }
  if (c->n == c->cap) { /* an object's keys beside its members, one capacity */
    size_t nc = vec_next_cap(c->cap, (size_t)c->n + 1, 4, sizeof *c->kids, UINT32_MAX / 2);
    if (!nc || vec_resize(&c->kids, nc, sizeof *c->kids) || (c->t == JT_OBJ && vec_resize(&c->keys, nc, sizeof *c->keys)))
      return jp_fail(p, "out of memory"), NULL;
    c->cap = (uint32_t)nc;
  }
  if (c->t == JT_OBJ) {
    c->keys[c->n] = p->key;
    p->key = NULL;
    v->line = p->key_line;
  }
  c->kids[c->n] = *v;
  return &c->kids[c->n++];
}

static int jp_scalar(jp *p, jt v) {
  if (jp_add(p, &v)) return 1;
  free(v.s);
  return 0;
}

static int on_null(void *ctx) { return jp_scalar(ctx, (jt){.t = JT_NULL}); }
static int on_bool(void *ctx, int b) { return jp_scalar(ctx, (jt){.t = JT_BOOL, .i = b}); }

static int on_number(void *ctx, const char *s, size_t len) {
  jt v = {.t = JT_NUM};
  char buf[32];
  if (len < sizeof buf) {
    memcpy(buf, s, len);
    buf[len] = 0;
    char *end;
    errno = 0;
    long long x = strtoll(buf, &end, 10);
    if (!*end && errno == 0) v.isint = 1, v.i = x;
  }
  return jp_scalar(ctx, v);
}

static int on_string(void *ctx, const unsigned char *s, size_t len) {
  jt v = {.t = JT_STR, .s = malloc(len + 1), .slen = len};
  if (!v.s) return jp_fail(ctx, "out of memory");
  memcpy(v.s, s, len);
  v.s[len] = 0;
  return jp_scalar(ctx, v);
}

static int jp_open(jp *p, int t) {
  if (p->depth == JT_DEPTH) return jp_fail(p, "nested too deeply for a manifest");
  jt v = {.t = (uint8_t)t};
  jt *at = jp_add(p, &v);
  if (!at) return 0;
  p->stack[p->depth++] = at;
  return 1;
}

static int on_start_map(void *ctx) { return jp_open(ctx, JT_OBJ); }
static int on_start_array(void *ctx) { return jp_open(ctx, JT_ARR); }
static int on_end(void *ctx) {
  ((jp *)ctx)->depth--;
  return 1;
}

static int on_key(void *ctx, const unsigned char *s, size_t len) {
  jp *p = ctx;
  free(p->key);
  p->key = malloc(len + 1);
  if (!p->key) return jp_fail(p, "out of memory");
  memcpy(p->key, s, len);
  p->key[len] = 0;
  p->key_line = jp_line(p);
  return 1;
}

static const yajl_callbacks jp_callbacks = {on_null, on_bool, NULL, NULL, on_number, on_string,
                                            on_start_map, on_key, on_end, on_start_array, on_end};

static int jp_parse(jp *p, const char *text, size_t len) {
  p->h = yajl_alloc(&jp_callbacks, NULL, p);
  if (!p->h) return chakra_error_set(p->err, CHAKRA_ENOMEM, "%s: out of memory", p->name);
  p->text = text;
  p->line = 1;
  size_t lead = 0;
  while (lead < len && memchr(" \t\r\n", text[lead], 4)) lead++;
  yajl_status st = lead < len ? yajl_parse(p->h, (const unsigned char *)text, len) : yajl_status_ok;
  if (st == yajl_status_ok && lead < len) st = yajl_complete_parse(p->h);
  if (st != yajl_status_ok && !p->failed) {
    unsigned char *msg = yajl_get_error(p->h, 0, (const unsigned char *)text, len);
    char why[240];
    snprintf(why, sizeof why, "not JSON (%s)", msg ? (const char *)msg : "invalid");
    if (msg) yajl_free_error(p->h, msg);
    char *nl = strchr(why, '\n');
    if (nl) *nl = ')', nl[1] = 0;
    jp_fail(p, why);
  }
  if (!p->failed && !p->have_root)
    chakra_error_set(p->err, CHAKRA_EFORMAT, "%s: line 1: empty, expected a trace-set manifest (a JSON object)", p->name),
        p->failed = 1;
  yajl_free(p->h);
  free(p->key);
  p->key = NULL;
  return p->failed ? p->err->code : 0;
}

/* ---- reading: the tree into a manifest ------------------------------------------------------------ */

typedef struct rd {
  const char *name;
  chakra_error *err;
} rd;

static int bad(const rd *r, const jt *v, const char *path, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int bad(const rd *r, const jt *v, const char *path, const char *fmt, ...) {
  char where[sizeof r->err->msg]; /* a message holds no more */
  snprintf(where, sizeof where, "%s: line %u: %s", r->name, v->line, path);
  va_list ap;
  va_start(ap, fmt);
  int rc = chakra_diag_failv(r->err, CHAKRA_EFORMAT, where, fmt, ap);
  va_end(ap);
  return rc;
}

static const char *type_name(const jt *v) {
  static const char *n[] = {"null", "a boolean", "a number", "a string", "a list", "an object"};
  return n[v->t];
}

static const jt *member(const jt *o, const char *key) {
  for (uint32_t i = 0; i < o->n; i++)
    if (strcmp(o->keys[i], key) == 0) return &o->kids[i];
  return NULL;
}

/* Refuses members other than the allowed ones (a misspelt member must not
 * be silently ignored). */
static int only(const rd *r, const jt *o, const char *path, const char *const *allowed) {
  for (uint32_t i = 0; i < o->n; i++) {
    int ok = 0;
    for (const char *const *a = allowed; *a && !ok; a++) ok = strcmp(*a, o->keys[i]) == 0;
    if (!ok) {
      char list[200] = "";
      for (const char *const *a = allowed; *a; a++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s\"%s\"", a == allowed ? "" : ", ", *a);
      return bad(r, &o->kids[i], path, "unknown member \"%s\" (expected %s)", q(o->keys[i]).s, list);
    }
  }
  return 0;
}

static int need(const rd *r, const jt *o, const char *path, const char *key, int type, const jt **out) {
  const jt *v = member(o, key);
  if (!v) return bad(r, o, path, "no \"%s\" member", key);
  char p[200];
  snprintf(p, sizeof p, "%s%s%s", path, *path ? "." : "", key);
  if (v->t != type) {
    static const char *want[] = {"null", "a boolean", "a number", "a string", "a list", "an object"};
    return bad(r, v, p, "expected %s, found %s", want[type], type_name(v));
  }
  *out = v;
  return 0;
}

/* A whole number in [lo, hi]. */
static int whole(const rd *r, const jt *v, const char *path, int64_t lo, int64_t hi, int64_t *out) {
  if (v->t != JT_NUM || !v->isint || v->i < lo || v->i > hi)
    return v->t == JT_NUM && v->isint ? bad(r, v, path, "%lld is out of range (%lld..%lld)", (long long)v->i,
                                            (long long)lo, (long long)hi)
                                      : bad(r, v, path, "expected a whole number from %lld to %lld, found %s",
                                            (long long)lo, (long long)hi, type_name(v));
  *out = v->i;
  return 0;
}

/* A string without NUL characters. */
static int text(const rd *r, const jt *v, const char *path, int allow_empty, const char **out) {
  if (v->t != JT_STR) return bad(r, v, path, "expected a string, found %s", type_name(v));
  if (strlen(v->s) != v->slen) return bad(r, v, path, "a NUL character in the string");
  if (!allow_empty && !v->slen) return bad(r, v, path, "empty string");
  *out = v->s;
  return 0;
}

/* A list of axis names, as indexes into names[]; each once. */
static int name_list(const rd *r, const chakra_manifest *m, const jt *v, const char *path, const char **out,
                     uint32_t *n) {
  if (v->t != JT_ARR) return bad(r, v, path, "expected a list of axis names, found %s", type_name(v));
  if (v->n > 64) return bad(r, v, path, "more than 64 axes");
  for (uint32_t i = 0; i < v->n; i++) {
    char p[220];
    snprintf(p, sizeof p, "%s[%u]", path, i);
    int rc = text(r, &v->kids[i], p, 0, &out[i]);
    if (rc) return rc;
    if (axis_index(m, out[i]) < 0) return bad(r, &v->kids[i], p, "no axis \"%s\" in layout.axes", q(out[i]).s);
    for (uint32_t k = 0; k < i; k++)
      if (strcmp(out[k], out[i]) == 0) return bad(r, &v->kids[i], p, "axis \"%s\" named twice", q(out[i]).s);
  }
  *n = v->n;
  return 0;
}

/* A library error (from the building calls) placed at v. */
static int at(const rd *r, const jt *v, const char *path, int rc, const chakra_error *e) {
  if (rc == CHAKRA_ENOMEM) return chakra_error_set(r->err, rc, "%s: out of memory", r->name);
  const char *msg = strncmp(e->msg, "manifest: ", 10) == 0 ? e->msg + 10 : e->msg;
  return bad(r, v, path, "%s", msg);
}

static int read_axes(const rd *r, chakra_manifest *m, const jt *lay) {
  const jt *axes, *cls;
  int rc = need(r, lay, "layout", "axes", JT_ARR, &axes);
  if (!rc) rc = need(r, lay, "layout", "class_axes", JT_ARR, &cls);
  if (rc) return rc;
  if (!axes->n) return bad(r, axes, "layout.axes", "a grid needs at least one axis");
  if (axes->n > 64) return bad(r, axes, "layout.axes", "more than 64 axes");
  for (uint32_t i = 0; i < axes->n; i++) {
    const jt *a = &axes->kids[i], *nm, *sz;
    char p[64];
    snprintf(p, sizeof p, "layout.axes[%u]", i);
    if (a->t != JT_OBJ) return bad(r, a, p, "expected an object {\"name\": ..., \"size\": ...}, found %s", type_name(a));
    static const char *const keys[] = {"name", "size", NULL};
    const char *name = NULL;
    int64_t size = 0;
    rc = only(r, a, p, keys);
    if (!rc) rc = need(r, a, p, "name", JT_STR, &nm);
    if (!rc) rc = need(r, a, p, "size", JT_NUM, &sz);
    char q[80];
    snprintf(q, sizeof q, "%s.name", p);
    if (!rc) rc = text(r, nm, q, 0, &name);
    snprintf(q, sizeof q, "%s.size", p);
    if (!rc) rc = whole(r, sz, q, 1, UINT32_MAX, &size);
    chakra_error e = {0};
    if (!rc && (rc = chakra_manifest_add_axis(m, name, (uint32_t)size, 0, &e)) != 0) rc = at(r, a, p, rc, &e);
    if (rc) return rc;
  }
  const char *names[64];
  uint32_t n;
  rc = name_list(r, m, cls, "layout.class_axes", names, &n);
  for (uint32_t i = 0; !rc && i < n; i++) m->axes[axis_index(m, names[i])].is_class = 1;
  if (!rc) grid_strides(m);
  if (!rc && m->axes[m->naxes - 1].stride * m->axes[m->naxes - 1].size != m->ranks)
    rc = bad(r, axes, "layout.axes", "the axes make %llu ranks, but \"ranks\" is %u",
             (unsigned long long)(m->axes[m->naxes - 1].stride * m->axes[m->naxes - 1].size), m->ranks);
  return rc;
}

static int read_rules(const rd *r, chakra_manifest *m, const jt *lay) {
  const jt *groups;
  int rc = need(r, lay, "layout", "groups", JT_ARR, &groups);
  for (uint32_t i = 0; !rc && i < groups->n; i++) {
    const jt *g = &groups->kids[i], *ax, *ord, *first;
    char p[64], q[128];
    snprintf(p, sizeof p, "layout.groups[%u]", i);
    if (g->t != JT_OBJ)
      return bad(r, g, p, "expected an object {\"axes\": [...], \"order\": [...], \"first\": N}, found %s", type_name(g));
    static const char *const keys[] = {"axes", "order", "first", NULL};
    rc = only(r, g, p, keys);
    if (!rc) rc = need(r, g, p, "axes", JT_ARR, &ax);
    if (!rc) rc = need(r, g, p, "order", JT_ARR, &ord);
    if (!rc) rc = need(r, g, p, "first", JT_NUM, &first);
    const char *an[64], *on[64];
    uint32_t na = 0, no = 0;
    int64_t f = 0;
    snprintf(q, sizeof q, "%s.axes", p);
    if (!rc) rc = name_list(r, m, ax, q, an, &na);
    snprintf(q, sizeof q, "%s.order", p);
    if (!rc) rc = name_list(r, m, ord, q, on, &no);
    snprintf(q, sizeof q, "%s.first", p);
    if (!rc) rc = whole(r, first, q, 1, INT64_MAX / 2, &f);
    chakra_error e = {0};
    if (!rc && (rc = chakra_manifest_add_group_rule(m, an, na, on, no, (uint64_t)f, &e)) != 0) rc = at(r, g, p, rc, &e);
  }
  return rc;
}

/* Group names (gs, at gpath) and peers (ps, at ppath), element by element. */
static int roles_lists(const rd *r, const jt *gs, const char *gpath, const char **g, const jt *ps, const char *ppath,
                       int32_t *pv) {
  char q[160];
  int rc = 0;
  for (uint32_t i = 0; !rc && i < gs->n; i++) {
    snprintf(q, sizeof q, "%s[%u]", gpath, i);
    rc = text(r, &gs->kids[i], q, 0, &g[i]);
  }
  for (uint32_t i = 0; !rc && i < ps->n; i++) {
    int64_t v = 0;
    snprintf(q, sizeof q, "%s[%u]", ppath, i);
    rc = whole(r, &ps->kids[i], q, INT32_MIN, INT32_MAX, &v);
    if (!rc) pv[i] = (int32_t)v;
  }
  return rc;
}

static int read_classes(const rd *r, chakra_manifest *m, const jt *classes) {
  if (!classes->n) return bad(r, classes, "classes", "a trace set needs at least one class");
  if (classes->n > m->ranks) return bad(r, classes, "classes", "%u classes for %u ranks", classes->n, m->ranks);
  int table = m->kind == CHAKRA_MANIFEST_TABLE;
  for (uint32_t k = 0; k < classes->n; k++) {
    const jt *c = &classes->kids[k], *t, *rep;
    char p[64], q[128];
    snprintf(p, sizeof p, "classes[%u]", k);
    if (c->t != JT_OBJ) return bad(r, c, p, "expected an object {\"template\": ..., \"rep\": ...}, found %s", type_name(c));
    static const char *const grid_keys[] = {"template", "rep", NULL}, *const table_keys[] = {"template", "rep", "groups", "peers", NULL};
    const char *tmpl = NULL;
    int64_t rank = 0;
    int rc = only(r, c, p, table ? table_keys : grid_keys);
    if (!rc) rc = need(r, c, p, "template", JT_STR, &t);
    if (!rc) rc = need(r, c, p, "rep", JT_NUM, &rep);
    snprintf(q, sizeof q, "%s.template", p);
    if (!rc) rc = text(r, t, q, 0, &tmpl);
    snprintf(q, sizeof q, "%s.rep", p);
    if (!rc) rc = whole(r, rep, q, 0, (int64_t)m->ranks - 1, &rank);
    chakra_error e = {0};
    if (!rc && (rc = chakra_manifest_add_class(m, tmpl, (uint32_t)rank, &e)) != 0) rc = at(r, c, p, rc, &e);
    if (rc || !table) {
      if (rc) return rc;
      continue;
    }
    const jt *gs, *ps;
    rc = need(r, c, p, "groups", JT_ARR, &gs);
    if (!rc) rc = need(r, c, p, "peers", JT_ARR, &ps);
    const char **g = rc ? NULL : malloc((gs->n ? gs->n : 1) * sizeof *g);
    int32_t *pv = rc ? NULL : malloc((ps->n ? ps->n : 1) * sizeof *pv);
    if (!rc && (!g || !pv)) rc = chakra_error_set(r->err, CHAKRA_ENOMEM, "%s: out of memory", r->name);
    snprintf(q, sizeof q, "%s.groups", p);
    char q2[128];
    snprintf(q2, sizeof q2, "%s.peers", p);
    if (!rc) rc = roles_lists(r, gs, q, g, ps, q2, pv);
    if (!rc && (rc = chakra_manifest_set_roles(m, k, g, gs->n, pv, ps->n, &e)) != 0) rc = at(r, c, p, rc, &e);
    free(g), free(pv);
    if (rc) return rc;
  }
  return 0;
}

static int read_row(const rd *r, chakra_manifest *m, const jt *row, uint32_t rank, const char **g, int32_t *pv) {
  char p[64], q[128];
  snprintf(p, sizeof p, "layout.ranks[%u]", rank);
  if (row->t != JT_ARR || row->n != 3)
    return bad(r, row, p, "expected [class, [group per role], [peer per role]], found %s", row->t == JT_ARR ? "another list" : type_name(row));
  int64_t cls = 0;
  snprintf(q, sizeof q, "%s[0]", p);
  int rc = whole(r, &row->kids[0], q, 0, (int64_t)m->ncls - 1, &cls);
  if (rc) return rc;
  const mclass *c = &m->cls[cls];
  const jt *gs = &row->kids[1], *ps = &row->kids[2];
  if (gs->t != JT_ARR || gs->n != c->ng)
    return bad(r, gs, p, "expected a list of %u group name(s), one per group role of class %lld", c->ng, (long long)cls);
  if (ps->t != JT_ARR || ps->n != c->np)
    return bad(r, ps, p, "expected a list of %u peer(s), one per peer role of class %lld", c->np, (long long)cls);
  char q2[128];
  snprintf(q, sizeof q, "%s[1]", p);
  snprintf(q2, sizeof q2, "%s[2]", p);
  rc = roles_lists(r, gs, q, g, ps, q2, pv);
  chakra_error e = {0};
  if (!rc && (rc = chakra_manifest_set_rank(m, rank, (uint32_t)cls, g, pv, &e)) != 0) rc = at(r, row, p, rc, &e);
  return rc;
}

static int read_table(const rd *r, chakra_manifest *m, const jt *lay) {
  const jt *rows, *gf = member(lay, "groups_file");
  int rc = need(r, lay, "layout", "ranks", JT_ARR, &rows);
  if (rc) return rc;
  if (rows->n != m->ranks) return bad(r, rows, "layout.ranks", "%u rows for %u ranks", rows->n, m->ranks);
  const char *file = NULL;
  if (gf && (rc = text(r, gf, "layout.groups_file", 0, &file)) != 0) return rc;
  chakra_error e = {0};
  if (gf && (rc = chakra_manifest_set_groups_file(m, file, &e)) != 0) return at(r, gf, "layout.groups_file", rc, &e);
  uint32_t most = 1;
  for (uint32_t k = 0; k < m->ncls; k++) {
    if (m->cls[k].ng > most) most = m->cls[k].ng;
    if (m->cls[k].np > most) most = m->cls[k].np;
  }
  const char **g = malloc(most * sizeof *g);
  int32_t *pv = malloc(most * sizeof *pv);
  if (!g || !pv) rc = chakra_error_set(r->err, CHAKRA_ENOMEM, "%s: out of memory", r->name);
  for (uint32_t i = 0; !rc && i < rows->n; i++) rc = read_row(r, m, &rows->kids[i], i, g, pv);
  free(g), free(pv);
  return rc;
}

/* The checks of the whole, placed at the member they concern. */
static int read_whole(const rd *r, const chakra_manifest *m, const jt *root) {
  chakra_error e = {0};
  int rc = check_whole(m, &e);
  if (!rc) return 0;
  /* "classes[3].rep: ..." -> the line of that member where it can be found */
  const jt *v = root;
  const jt *classes = member(root, "classes"), *lay = member(root, "layout");
  unsigned k;
  if (sscanf(e.msg, "classes[%u]", &k) == 1 && classes && k < classes->n) v = &classes->kids[k];
  else if (strncmp(e.msg, "classes", 7) == 0 && classes) v = classes;
  else if (sscanf(e.msg, "layout.ranks[%u]", &k) == 1 && lay && member(lay, "ranks") && k < member(lay, "ranks")->n)
    v = &member(lay, "ranks")->kids[k];
  else if (lay) v = lay;
  return chakra_error_set(r->err, CHAKRA_EFORMAT, "%s: line %u: %s", r->name, v->line, e.msg);
}

static int read_root(const rd *r, const jt *root, chakra_manifest **out) {
  *out = NULL;
  if (root->t != JT_OBJ)
    return bad(r, root, "(top)", "expected a trace-set manifest (an object with \"chakra_trace_set\"), found %s",
               type_name(root));
  const jt *ver = member(root, "chakra_trace_set"), *ranks = NULL, *classes = NULL, *lay = NULL, *kind = NULL;
  if (!ver) return bad(r, root, "(top)", "not a trace-set manifest: no \"chakra_trace_set\" member");
  if (ver->t != JT_NUM || !ver->isint || ver->i != CHAKRA_SET_MANIFEST_VERSION)
    return ver->t == JT_NUM && ver->isint
               ? bad(r, ver, "chakra_trace_set", "version %lld is not one this chakra reads (it reads version %d)",
                     (long long)ver->i, CHAKRA_SET_MANIFEST_VERSION)
               : bad(r, ver, "chakra_trace_set", "expected the version number %d, found %s", CHAKRA_SET_MANIFEST_VERSION,
                     type_name(ver));
  static const char *const keys[] = {"chakra_trace_set", "ranks", "classes", "layout", NULL};
  int64_t n = 0;
  const char *k = NULL;
  int rc = only(r, root, "(top)", keys);
  if (!rc) rc = need(r, root, "", "ranks", JT_NUM, &ranks);
  if (!rc) rc = whole(r, ranks, "ranks", 1, UINT32_MAX, &n);
  if (!rc) rc = need(r, root, "", "classes", JT_ARR, &classes);
  if (!rc) rc = need(r, root, "", "layout", JT_OBJ, &lay);
  if (!rc) rc = need(r, lay, "layout", "kind", JT_STR, &kind);
  if (!rc) rc = text(r, kind, "layout.kind", 0, &k);
  if (rc) return rc;
  int grid = strcmp(k, "grid") == 0;
  if (!grid && strcmp(k, "table") != 0) return bad(r, kind, "layout.kind", "\"%s\": expected \"grid\" or \"table\"", q(k).s);
  static const char *const grid_keys[] = {"kind", "axes", "class_axes", "groups", NULL},
                           *const table_keys[] = {"kind", "ranks", "groups_file", NULL};
  if ((rc = only(r, lay, "layout", grid ? grid_keys : table_keys)) != 0) return rc;
  /* a table's rows are read before the memory for them is taken: a file
   * claiming 4 billion ranks in a few bytes is refused cheaply */
  const jt *rows = grid ? NULL : member(lay, "ranks");
  if (rows && rows->t == JT_ARR && rows->n != n)
    return bad(r, rows, "layout.ranks", "%u rows for %lld ranks", rows->n, (long long)n);
  chakra_error e = {0};
  chakra_manifest *m;
  if ((rc = chakra_manifest_new(&m, grid ? CHAKRA_MANIFEST_GRID : CHAKRA_MANIFEST_TABLE, (uint32_t)n, &e)) != 0)
    return at(r, root, "ranks", rc, &e);
  if (grid) rc = read_axes(r, m, lay);
  if (!rc && grid) rc = read_rules(r, m, lay);
  if (!rc) rc = read_classes(r, m, classes);
  if (!rc && !grid) rc = read_table(r, m, lay);
  if (!rc) rc = read_whole(r, m, root);
  if (rc) {
    chakra_manifest_free(m);
    return rc;
  }
  *out = m;
  return 0;
}

int chakra_manifest_parse(chakra_manifest **out, const char *text, size_t len, const char *name, chakra_error *err) {
  *out = NULL;
  chakra_error local;
  jp p = {.name = name ? name : "<manifest>", .err = err ? err : &local};
  int rc = jp_parse(&p, text, len);
  if (!rc) {
    rd r = {p.name, p.err};
    rc = read_root(&r, &p.root, out);
  }
  jt_free(&p.root);
  return rc;
}

int chakra_manifest_read(chakra_manifest **out, const char *path, chakra_error *err) {
  *out = NULL;
  FILE *f = fopen(path, "rb");
  if (!f) return chakra_error_set(err, CHAKRA_EIO, "%s: cannot open: %s", path, strerror(errno));
  strbuf text = {0};
  int got = strbuf_read_stream(&text, f, ((size_t)1 << 40) - 1);
  fclose(f);
  int rc = got == STRBUF_EREAD ? chakra_error_set(err, CHAKRA_EIO, "%s: read error", path)
           : got ? chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", path)
                 : chakra_manifest_parse(out, text.s, text.n, path, err);
  strbuf_free(&text);
  return rc;
}

/* ---- writing ---------------------------------------------------------------------------------------------- */

static void w_names(jsonw *w, const chakra_manifest *m, const uint32_t *idx, uint32_t n) {
  jsonw_char(w, '[');
  for (uint32_t i = 0; i < n; i++) {
    if (i) jsonw_lit(w, ", ");
    jsonw_string(w, m->axes[idx[i]].name, strlen(m->axes[idx[i]].name));
  }
  jsonw_char(w, ']');
}

static void w_grid(jsonw *w, const chakra_manifest *m) {
  jsonw_lit(w, " \"layout\": {\"kind\": \"grid\",\n  \"axes\": [");
  for (uint32_t a = 0; a < m->naxes; a++) {
    jsonw_lit(w, a ? ", {\"name\": " : "{\"name\": ");
    jsonw_string(w, m->axes[a].name, strlen(m->axes[a].name));
    jsonw_lit(w, ", \"size\": ");
    jsonw_u64(w, m->axes[a].size);
    jsonw_char(w, '}');
  }
  jsonw_lit(w, "],\n  \"class_axes\": [");
  for (uint32_t a = 0, k = 0; a < m->naxes; a++)
    if (m->axes[a].is_class) {
      if (k++) jsonw_lit(w, ", ");
      jsonw_string(w, m->axes[a].name, strlen(m->axes[a].name));
    }
  jsonw_lit(w, "],\n  \"groups\": [");
  for (size_t i = 0; i < m->nrules; i++) {
    const mrule *r = &m->rules[i];
    jsonw_lit(w, i ? ",\n   {\"axes\": " : "\n   {\"axes\": ");
    w_names(w, m, r->axes, r->n_axes);
    jsonw_lit(w, ", \"order\": ");
    w_names(w, m, r->order, r->n_order);
    jsonw_lit(w, ", \"first\": ");
    jsonw_u64(w, r->first);
    jsonw_char(w, '}');
  }
  jsonw_lit(w, m->nrules ? "\n  ]}\n" : "]}\n");
}

static void w_table(jsonw *w, const chakra_manifest *m) {
  jsonw_lit(w, " \"layout\": {\"kind\": \"table\",\n");
  if (m->groups_file) {
    jsonw_lit(w, "  \"groups_file\": ");
    jsonw_string(w, m->groups_file, strlen(m->groups_file));
    jsonw_lit(w, ",\n");
  }
  jsonw_lit(w, "  \"ranks\": [");
  for (uint32_t r = 0; r < m->ranks; r++) {
    const mclass *c = &m->cls[m->rank_cls[r]];
    jsonw_lit(w, r ? ",\n   [" : "\n   [");
    jsonw_u64(w, m->rank_cls[r]);
    jsonw_lit(w, ", [");
    for (uint32_t i = 0; i < c->ng; i++) {
      const char *g = m->pool[m->gvals[m->rank_g[r] + i]];
      if (i) jsonw_lit(w, ", ");
      jsonw_string(w, g, strlen(g));
    }
    jsonw_lit(w, "], [");
    for (uint32_t i = 0; i < c->np; i++) {
      if (i) jsonw_lit(w, ", ");
      jsonw_i64(w, m->pvals[m->rank_p[r] + i]);
    }
    jsonw_lit(w, "]]");
  }
  jsonw_lit(w, "\n  ]}\n");
}

static int write_out(const chakra_manifest *m, outfile *f, chakra_error *err) {
  jsonw w;
  if (jsonw_init(&w, f)) return OOM(err);
  jsonw_lit(&w, "{\"chakra_trace_set\": ");
  jsonw_u64(&w, CHAKRA_SET_MANIFEST_VERSION);
  jsonw_lit(&w, ",\n \"ranks\": ");
  jsonw_u64(&w, m->ranks);
  jsonw_lit(&w, ",\n \"classes\": [");
  for (uint32_t k = 0; k < m->ncls; k++) {
    const mclass *c = &m->cls[k];
    jsonw_lit(&w, k ? ",\n  {\"template\": " : "\n  {\"template\": ");
    jsonw_string(&w, c->tmpl, strlen(c->tmpl));
    jsonw_lit(&w, ", \"rep\": ");
    jsonw_u64(&w, c->rep);
    if (m->kind == CHAKRA_MANIFEST_TABLE) {
      jsonw_lit(&w, ", \"groups\": [");
      for (uint32_t i = 0; i < c->ng; i++) {
        if (i) jsonw_lit(&w, ", ");
        jsonw_string(&w, c->groups[i], strlen(c->groups[i]));
      }
      jsonw_lit(&w, "], \"peers\": [");
      for (uint32_t i = 0; i < c->np; i++) {
        if (i) jsonw_lit(&w, ", ");
        jsonw_i64(&w, c->peers[i]);
      }
      jsonw_char(&w, ']');
    }
    jsonw_char(&w, '}');
  }
  jsonw_lit(&w, "\n ],\n");
  if (m->kind == CHAKRA_MANIFEST_GRID) w_grid(&w, m);
  else w_table(&w, m);
  jsonw_lit(&w, "}\n");
  int rc = jsonw_flush(&w);
  if (rc) *err = w.err;
  jsonw_free(&w);
  return rc;
}

static int write_file(const chakra_manifest *m, outfile *f, chakra_error *err) {
  int rc = chakra_manifest_check(m, err);
  if (!rc) rc = write_out(m, f, err);
  if (rc) {
    outfile_discard(f);
    return rc;
  }
  return outfile_commit(f, err);
}

int chakra_manifest_write(const chakra_manifest *m, const char *path, chakra_error *err) {
  outfile *f;
  int rc = outfile_open(&f, path, 0, err);
  return rc ? rc : write_file(m, f, err);
}

int chakra_manifest_write_to(const chakra_manifest *m, const chakra_sink *out, chakra_error *err) {
  outfile *f;
  int rc = outfile_open_sink(&f, out, err);
  return rc ? rc : write_file(m, f, err);
}

/* ---- a grid's groups ---------------------------------------------------------------------------------------- */

/* Members of group idx of rule r, ascending, into out (size: the product
 * of the rule's axes). */
static uint32_t rule_members(const chakra_manifest *m, const mrule *r, uint64_t idx, uint32_t *out) {
  uint64_t base = 0;
  for (uint32_t k = r->n_order; k-- > 0;) {
    uint32_t a = r->order[k];
    base += (idx % m->axes[a].size) * m->axes[a].stride;
    idx /= m->axes[a].size;
  }
  /* the spanned axes as a mixed radix in rank order: axes sorted by stride */
  uint32_t ax[64], n = r->n_axes, total = 1;
  memcpy(ax, r->axes, n * sizeof *ax);
  for (uint32_t i = 1; i < n; i++)
    for (uint32_t j = i; j > 0 && ax[j] < ax[j - 1]; j--) {
      uint32_t t = ax[j];
      ax[j] = ax[j - 1], ax[j - 1] = t;
    }
  for (uint32_t i = 0; i < n; i++) total *= m->axes[ax[i]].size;
  for (uint32_t k = 0; k < total; k++) {
    uint64_t rest = k, rank = base;
    for (uint32_t i = 0; i < n; i++) {
      rank += (rest % m->axes[ax[i]].size) * m->axes[ax[i]].stride;
      rest /= m->axes[ax[i]].size;
    }
    out[k] = (uint32_t)rank;
  }
  return total;
}

int setfile_each_grid_group(const chakra_manifest *m, setfile_group_fn fn, void *ctx) {
  uint32_t *members = malloc((size_t)m->ranks * sizeof *members);
  if (!members) return CHAKRA_ENOMEM;
  int rc = 0;
  char name[24];
  for (size_t i = 0; !rc && i < m->nrules; i++)
    for (uint64_t g = 0; !rc && g < m->rules[i].count; g++) {
      uint32_t n = rule_members(m, &m->rules[i], g, members);
      snprintf(name, sizeof name, "%llu", (unsigned long long)(m->rules[i].first + g));
      rc = fn(ctx, name, members, n);
    }
  free(members);
  return rc;
}
