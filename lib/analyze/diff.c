/* diff.c - comparing two traces of one rank; see include/chakra/diff.h.
 *
 * Each side is first read on the wire for a fingerprint of every node
 * (nodescan), both sides at once on threads of their own (by name, also
 * into a graph for the topological positions). Matching and comparing
 * fingerprints is then one hash lookup per node. Only when something
 * differs are the statistics computed (a graph load per side, again on two
 * threads) and the listed changes decoded in full. */
#include "chakra/diff.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra/attr.h"
#include "chakra/graph.h"
#include "chakra/trace.h"
#include "keyhash.h"
#include "nodescan.h"
#include "../util/cmp.h"
#include "../util/hmap.h"
#include "../util/vec.h"

#define NONE UINT32_MAX

typedef struct fingerprint {
  uint64_t id, key, dur, start, h_name, h_attr, h_io, h_data, h_ctrl, h_other;
  int32_t type;
} fingerprint;

typedef struct side {
  const chakra_set *set;  /* the rank read through its set (a shared set's rank is bound) */
  uint32_t rank;
  const char *path;       /* what messages call it */
  const chakra_diff_options *opt;
  fingerprint *fp;
  size_t n, cap;
  chakra_rank_stats st;
  uint64_t h_meta;
  int rc;
  chakra_error err;
} side;

/* ---- reading one side ---- */

static int keep_fp(void *ctx, uint32_t i, const nodescan *n, const uint8_t *raw, size_t len) {
  (void)i, (void)raw, (void)len;
  side *s = ctx;
  fingerprint *f = VEC_PUSH(s->fp, s->n, s->cap);
  if (!f) return CHAKRA_ENOMEM;
  f->id = f->key = n->id;
  f->type = (int32_t)n->type;
  f->dur = n->duration;
  f->start = n->start_time;
  f->h_name = keyhash_fast(n->name ? n->name : "", n->name_len, 7);
  f->h_attr = n->h_attr;
  f->h_io = n->h_io;
  f->h_data = n->h_data;
  f->h_ctrl = n->h_ctrl;
  f->h_other = n->h_other;
  return 0;
}

/* The hash of the GlobalMetadata r read (r stays open, at the first node). */
static int hash_metadata(side *s, chakra_reader *r) {
  const chakra_metadata *m = chakra_reader_metadata(r);
  size_t len = protobuf_c_message_get_packed_size(&m->base);
  uint8_t *buf = malloc(len ? len : 1);
  if (buf) {
    protobuf_c_message_pack(&m->base, buf);
    s->h_meta = keyhash_fast(buf, len, 1);
  }
  free(buf);
  return buf ? 0 : chakra_error_set(&s->err, CHAKRA_ENOMEM, "out of memory");
}


/* By name: key = (name, how many nodes of that name came before in
 * topological order); dependencies hash their keys, since ids differ. */
static int name_keys(side *s) {
  /* tolerant, and nothing reported: diff describes, validate judges */
  chakra_graph_options o = {.ignore_ctrl_deps = s->opt->ignore_ctrl_deps, .tolerant = 1};
  chakra_graph *g;
  int rc = chakra_set_load_rank(s->set, s->rank, &o, &g, &s->err);
  if (rc) return rc;
  if (g->n != s->n) {
    chakra_graph_free(g);
    return chakra_error_set(&s->err, CHAKRA_EIO, "%s: changed while being read", s->path);
  }
  hmap seen = {0}; /* name -> how many nodes of that name came before, less one */
  int oom = hmap_reserve(&seen, g->n);
  for (size_t t = 0; t < g->n && !oom; t++) {
    fingerprint *f = &s->fp[g->topo[t]];
    uint32_t before = hmap_get_u64(&seen, f->h_name);
    uint32_t k = before == NONE ? 0 : before + 1;
    hmap_set_u64(&seen, f->h_name, k, &oom);
    f->key = hmap_mix(f->h_name ^ hmap_mix(k + 1));
  }
  if (oom) {
    hmap_free(&seen);
    chakra_graph_free(g);
    return chakra_error_set(&s->err, CHAKRA_ENOMEM, "out of memory");
  }
  for (uint32_t x = 0; x < g->n; x++) {
    fingerprint *f = &s->fp[x];
    f->h_data = f->h_ctrl = 0;
    for (uint32_t k = g->dep_off[x]; k < g->dep_off[x + 1]; k++) {
      uint64_t h = hmap_mix(s->fp[g->deps[k]].key);
      if (k - g->dep_off[x] < g->n_data[x]) f->h_data += h;
      else f->h_ctrl += h;
    }
  }
  hmap_free(&seen);
  chakra_graph_free(g);
  return 0;
}

static void *read_side(void *arg) {
  side *s = arg;
  chakra_reader *r;
  if ((s->rc = chakra_set_reader(s->set, s->rank, NULL, &r, &s->err)) == 0) { /* opened once: metadata, then nodes */
    if ((s->rc = hash_metadata(s, r)) != 0) chakra_reader_close(r);
    else s->rc = nodescan_reader(r, 1, keep_fp, s, &s->err);
  }
  if (s->rc == CHAKRA_ENOMEM) chakra_error_set(&s->err, CHAKRA_ENOMEM, "%s: out of memory", s->path);
  if (!s->rc && s->opt->by_name) s->rc = name_keys(s);
  return NULL;
}

/* ---- matching ---- */

static unsigned compare(const fingerprint *a, const fingerprint *b, int by_name) {
  unsigned w = 0;
  if (a->type != b->type) w |= CHAKRA_DIFF_TYPE;
  if (!by_name && a->h_name != b->h_name) w |= CHAKRA_DIFF_NAME;
  if (a->dur != b->dur) w |= CHAKRA_DIFF_DURATION;
  if (a->start != b->start) w |= CHAKRA_DIFF_START;
  if (a->h_attr != b->h_attr) w |= CHAKRA_DIFF_ATTRS;
  if (a->h_io != b->h_io) w |= CHAKRA_DIFF_IO;
  if (a->h_data != b->h_data) w |= CHAKRA_DIFF_DATA_DEPS;
  if (a->h_ctrl != b->h_ctrl) w |= CHAKRA_DIFF_CTRL_DEPS;
  if (a->h_other != b->h_other) w |= CHAKRA_DIFF_OTHER;
  return w;
}

typedef struct listed_ix {
  uint32_t a, b;  /* file indexes, NONE when absent on that side */
} listed_ix;

typedef struct matcher {
  chakra_diff_rank *out;
  listed_ix *ix;
  size_t cap;
  size_t max;
} matcher;

static int list(matcher *m, chakra_diff_kind kind, const fingerprint *a, const fingerprint *b, uint32_t ia,
                uint32_t ib, unsigned what) {
  chakra_diff_rank *o = m->out;
  if (m->max && o->n_listed >= m->max) return 0;
  if (o->n_listed == m->cap) {
    size_t cap = vec_next_cap(m->cap, m->cap + 1, 64, sizeof *o->listed, SIZE_MAX);
    if (!cap || vec_resize(&o->listed, cap, sizeof *o->listed) || vec_resize(&m->ix, cap, sizeof *m->ix))
      return CHAKRA_ENOMEM;
    m->cap = cap;
  }
  chakra_diff_node *d = &o->listed[o->n_listed];
  memset(d, 0, sizeof *d);
  d->kind = kind;
  d->id_a = a ? a->id : 0;
  d->id_b = b ? b->id : 0;
  d->type = b ? b->type : a->type;
  d->what = what;
  m->ix[o->n_listed++] = (listed_ix){ia, ib};
  return 0;
}

static int match(const side *A, const side *B, matcher *m, int by_name) {
  chakra_diff_rank *o = m->out;
  hmap map = {0}; /* key -> the first node of A with it */
  uint8_t *used = calloc(A->n ? A->n : 1, 1);
  int oom = hmap_reserve(&map, A->n) || !used;
  for (uint32_t i = 0; !oom && i < A->n; i++) hmap_put_u64(&map, A->fp[i].key, i, &oom);
  int rc = oom ? CHAKRA_ENOMEM : 0;
  for (uint32_t j = 0; !rc && j < B->n; j++) {
    const fingerprint *b = &B->fp[j];
    uint32_t i = hmap_get_u64(&map, b->key);
    if (i == NONE || used[i]) {
      o->added++;
      rc = list(m, CHAKRA_DIFF_ADDED, NULL, b, NONE, j, 0);
      continue;
    }
    used[i] = 1;
    unsigned what = compare(&A->fp[i], b, by_name);
    if (!what) {
      o->same++;
      continue;
    }
    o->changed++;
    for (int f = 0; f < CHAKRA_DIFF_FIELDS; f++) o->changed_fields[f] += (what >> f) & 1;
    rc = list(m, CHAKRA_DIFF_CHANGED, &A->fp[i], b, i, j, what);
  }
  for (uint32_t i = 0; !rc && i < A->n; i++) {
    if (used[i]) continue;
    o->removed++;
    rc = list(m, CHAKRA_DIFF_REMOVED, &A->fp[i], NULL, i, NONE, 0);
  }
  hmap_free(&map);
  free(used);
  return rc;
}

/* ---- details of listed changes ---- */

typedef struct node_grab {
  const uint32_t *want;    /* file indexes, ascending */
  size_t n_want, next;
  chakra_node **got;       /* decoded, in want order */
} node_grab;

static int grab(void *ctx, uint32_t i, const nodescan *n, const uint8_t *raw, size_t len) {
  (void)n;
  node_grab *g = ctx;
  while (g->next < g->n_want && g->want[g->next] == i) {
    if (!(g->got[g->next++] = chakra_node_decode(raw, len))) return CHAKRA_EFORMAT;
  }
  return g->next == g->n_want ? 1 : 0; /* 1 stops the scan early */
}

/* Decodes the nodes at the given file indexes (any order, NONE skipped);
 * nodes[k] receives the node of idx[k] (NULL for NONE). */
static int grab_nodes(const side *s, const uint32_t *idx, size_t n, chakra_node **nodes, chakra_error *err) {
  const char *path = s->path;
  uint32_t *want = malloc((n ? n : 1) * sizeof *want);
  chakra_node **got = calloc(n ? n : 1, sizeof *got);
  if (!want || !got) {
    free(want), free(got);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  size_t m = 0;
  for (size_t k = 0; k < n; k++)
    if (idx[k] != NONE) want[m++] = idx[k];
  qsort(want, m, sizeof *want, cmp_u32);
  node_grab g = {want, m, 0, got};
  chakra_reader *r = NULL;
  int rc = m ? chakra_set_reader(s->set, s->rank, NULL, &r, err) : 0;
  if (m && !rc) rc = nodescan_reader(r, 0, grab, &g, err);
  if (rc == 1) rc = 0;
  if (rc == CHAKRA_EFORMAT) rc = chakra_error_set(err, rc, "%s: a node no longer decodes", path);
  for (size_t k = 0; k < n; k++) {
    nodes[k] = NULL;
    if (idx[k] == NONE || rc) continue;
    uint32_t *at = bsearch(&idx[k], want, m, sizeof *want, cmp_u32);
    while (at > want && at[-1] == idx[k]) at--;
    size_t pos = (size_t)(at - want);
    nodes[k] = got[pos];
    got[pos] = NULL; /* handed over; duplicates of an index cannot occur */
  }
  for (size_t k = 0; k < m; k++)
    if (got[k]) protobuf_c_message_free_unpacked(&got[k]->base, NULL);
  free(want), free(got);
  return rc;
}

static void attr_text(const chakra_attr *a, char *out, size_t size) {
  int64_t v;
  int inexact;
  switch (a->value_case) {
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE__NOT_SET: snprintf(out, size, "(no value)"); return;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL:
      snprintf(out, size, "\"%.40s%s\"", a->string_val, strlen(a->string_val) > 40 ? "..." : "");
      return;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_DOUBLE_VAL: snprintf(out, size, "%.17g", a->double_val); return;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_FLOAT_VAL: snprintf(out, size, "%.9g", a->float_val); return;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL: snprintf(out, size, a->bool_val ? "true" : "false"); return;
    default:
      if (chakra_attr_as_int(a, &v, &inexact) == 0) snprintf(out, size, "%lld", (long long)v);
      else snprintf(out, size, "(list or bytes)");
  }
}

static int attrs_equal(const chakra_attr *x, const chakra_attr *y) {
  size_t nx = protobuf_c_message_get_packed_size(&x->base), ny = protobuf_c_message_get_packed_size(&y->base);
  if (nx != ny) return 0;
  uint8_t sx[256], sy[256];
  uint8_t *bx = nx <= sizeof sx ? sx : malloc(nx), *by = ny <= sizeof sy ? sy : malloc(ny);
  int eq = bx && by;
  if (eq) {
    protobuf_c_message_pack(&x->base, bx);
    protobuf_c_message_pack(&y->base, by);
    eq = memcmp(bx, by, nx) == 0;
  }
  if (bx != sx) free(bx);
  if (by != sy) free(by);
  return eq;
}

static void attr_changes(FILE *m, const chakra_node *a, const chakra_node *b) {
  char va[96], vb[96];
  for (size_t i = 0; i < a->n_attr; i++) {
    const chakra_attr *x = a->attr[i], *y = chakra_attr_find(b, x->name);
    if (chakra_attr_find(a, x->name) != x) continue; /* only the first of a name counts */
    attr_text(x, va, sizeof va);
    if (!y) {
      fprintf(m, "; attr %s removed (was %s)", x->name, va);
    } else if (!attrs_equal(x, y)) {
      attr_text(y, vb, sizeof vb);
      fprintf(m, "; attr %s %s -> %s", x->name, va, vb);
    }
  }
  for (size_t i = 0; i < b->n_attr; i++) {
    const chakra_attr *y = b->attr[i];
    if (chakra_attr_find(b, y->name) != y || chakra_attr_find(a, y->name)) continue;
    attr_text(y, vb, sizeof vb);
    fprintf(m, "; attr %s added (%s)", y->name, vb);
  }
}

static int in_list(const uint64_t *v, size_t n, uint64_t x) {
  for (size_t i = 0; i < n; i++)
    if (v[i] == x) return 1;
  return 0;
}

/* "+{5, 9} -{3}" for dependency ids (by id only: by name, ids differ). */
static void dep_changes(FILE *m, const char *what, const uint64_t *a, size_t na, const uint64_t *b, size_t nb) {
  fprintf(m, "; %s", what);
  int first = 1, shown = 0;
  for (size_t i = 0; i < nb && shown < 8; i++)
    if (!in_list(a, na, b[i])) fprintf(m, "%s%llu", first ? " +{" : ", ", (unsigned long long)b[i]), first = 0, shown++;
  if (!first) fputs(shown == 8 ? ", ...}" : "}", m);
  first = 1, shown = 0;
  for (size_t i = 0; i < na && shown < 8; i++)
    if (!in_list(b, nb, a[i])) fprintf(m, "%s%llu", first ? " -{" : ", ", (unsigned long long)a[i]), first = 0, shown++;
  if (!first) fputs(shown == 8 ? ", ...}" : "}", m);
  fprintf(m, " (%zu -> %zu)", na, nb);
}

static char *details(const chakra_node *a, const chakra_node *b, unsigned what, int by_name) {
  char *text = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&text, &len);
  if (!m) return NULL;
  if (what & CHAKRA_DIFF_TYPE) {
    const char *ta = chakra_node_type_name(a->type), *tb = chakra_node_type_name(b->type);
    fprintf(m, "; type %s -> %s", ta ? ta : "UNKNOWN", tb ? tb : "UNKNOWN");
  }
  if (what & CHAKRA_DIFF_NAME) fprintf(m, "; name \"%.60s\" -> \"%.60s\"", a->name ? a->name : "", b->name ? b->name : "");
  if (what & CHAKRA_DIFF_DURATION)
    fprintf(m, "; duration %llu -> %llu us", (unsigned long long)a->duration_micros,
            (unsigned long long)b->duration_micros);
  if (what & CHAKRA_DIFF_START)
    fprintf(m, "; start %llu -> %llu us", (unsigned long long)a->start_time_micros,
            (unsigned long long)b->start_time_micros);
  if (what & CHAKRA_DIFF_ATTRS) attr_changes(m, a, b);
  if (what & CHAKRA_DIFF_IO) fputs("; inputs/outputs differ", m);
  if ((what & CHAKRA_DIFF_DATA_DEPS) && !by_name)
    dep_changes(m, "data deps", a->data_deps, a->n_data_deps, b->data_deps, b->n_data_deps);
  else if (what & CHAKRA_DIFF_DATA_DEPS)
    fprintf(m, "; data deps differ (%zu -> %zu)", a->n_data_deps, b->n_data_deps);
  if ((what & CHAKRA_DIFF_CTRL_DEPS) && !by_name)
    dep_changes(m, "ctrl deps", a->ctrl_deps, a->n_ctrl_deps, b->ctrl_deps, b->n_ctrl_deps);
  else if (what & CHAKRA_DIFF_CTRL_DEPS)
    fprintf(m, "; ctrl deps differ (%zu -> %zu)", a->n_ctrl_deps, b->n_ctrl_deps);
  if (what & CHAKRA_DIFF_OTHER) fputs("; fields outside the schema differ", m);
  if (fclose(m)) {
    free(text);
    return NULL;
  }
  if (len >= 2) memmove(text, text + 2, len - 1); /* the leading "; " */
  return text;
}

static int add_details(chakra_diff_rank *o, const listed_ix *ix, const side *pa, const side *pb, int by_name,
                       chakra_error *err) {
  size_t n = o->n_listed;
  uint32_t *ia = malloc((n ? n : 1) * sizeof *ia), *ib = malloc((n ? n : 1) * sizeof *ib);
  chakra_node **na = calloc(n ? n : 1, sizeof *na), **nb = calloc(n ? n : 1, sizeof *nb);
  int rc = !ia || !ib || !na || !nb ? chakra_error_set(err, CHAKRA_ENOMEM, "out of memory") : 0;
  for (size_t k = 0; !rc && k < n; k++) ia[k] = ix[k].a, ib[k] = ix[k].b;
  if (!rc) rc = grab_nodes(pa, ia, n, na, err);
  if (!rc) rc = grab_nodes(pb, ib, n, nb, err);
  for (size_t k = 0; !rc && k < n; k++) {
    chakra_diff_node *d = &o->listed[k];
    const chakra_node *shown = nb[k] ? nb[k] : na[k];
    d->name = strdup(shown && shown->name ? shown->name : "");
    if (d->kind == CHAKRA_DIFF_CHANGED && na[k] && nb[k]) d->details = details(na[k], nb[k], d->what, by_name);
    if (!d->name || (d->kind == CHAKRA_DIFF_CHANGED && !d->details))
      rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  for (size_t k = 0; k < n; k++) {
    if (na && na[k]) protobuf_c_message_free_unpacked(&na[k]->base, NULL);
    if (nb && nb[k]) protobuf_c_message_free_unpacked(&nb[k]->base, NULL);
  }
  free(ia), free(ib), free(na), free(nb);
  return rc;
}

/* ---- entry points ---- */

const char *chakra_diff_field_name(int bit) {
  static const char *const names[CHAKRA_DIFF_FIELDS] = {"type", "name", "duration", "start", "attributes",
                                                        "inputs/outputs", "data deps", "ctrl deps", "other fields"};
  return bit >= 0 && bit < CHAKRA_DIFF_FIELDS ? names[bit] : "?";
}

static void *stats_side(void *arg) {
  side *s = arg;
  s->rc = chakra_stats_set_rank(s->set, s->rank, s->opt->ignore_ctrl_deps, &s->st, &s->err);
  return NULL;
}

/* Runs fn on both sides, B on a thread of its own when one can be made. */
static void both(void *(*fn)(void *), side *A, side *B) {
  pthread_t t;
  int threaded = pthread_create(&t, NULL, fn, B) == 0;
  fn(A);
  if (threaded) pthread_join(t, NULL);
  else fn(B);
}

int chakra_diff_files(const char *a, const char *b, const chakra_diff_options *opt, chakra_diff_rank *out,
                      chakra_error *err) {
  memset(out, 0, sizeof *out);
  chakra_set *sa = NULL, *sb = NULL;
  chakra_set_options so = {.no_default_groups = 1};
  int rc = chakra_set_open_files(&sa, &a, 1, &so, err);
  if (!rc) rc = chakra_set_open_files(&sb, &b, 1, &so, err);
  if (!rc) rc = chakra_diff_ranks(sa, 0, sb, 0, opt, out, err);
  chakra_set_close(sa), chakra_set_close(sb);
  return rc;
}

int chakra_diff_ranks(const chakra_set *a, uint32_t ra, const chakra_set *b, uint32_t rb,
                      const chakra_diff_options *opt, chakra_diff_rank *out, chakra_error *err) {
  memset(out, 0, sizeof *out);
  side A = {.set = a, .rank = ra, .path = chakra_set_rank_name(a, ra), .opt = opt},
       B = {.set = b, .rank = rb, .path = chakra_set_rank_name(b, rb), .opt = opt};
  both(read_side, &A, &B);
  int rc = A.rc ? A.rc : B.rc;
  if (rc && err) *err = A.rc ? A.err : B.err;
  matcher m = {.out = out, .max = opt->max_listed};
  if (!rc) {
    out->nodes_a = A.n, out->nodes_b = B.n;
    out->metadata_differs = A.h_meta != B.h_meta;
    rc = match(&A, &B, &m, opt->by_name);
    if (rc) chakra_error_set(err, rc, "out of memory");
  }
  /* Equal nodes and metadata make equal statistics: skip the graphs. */
  if (!rc && !chakra_diff_rank_equal(out)) {
    both(stats_side, &A, &B);
    rc = A.rc ? A.rc : B.rc;
    if (rc && err) *err = A.rc ? A.err : B.err;
  }
  if (!rc) rc = add_details(out, m.ix, &A, &B, opt->by_name, err);
  free(A.fp), free(B.fp), free(m.ix);
  out->stats_a = A.st, out->stats_b = B.st;
  if (rc) chakra_diff_rank_free(out);
  return rc;
}

void chakra_diff_rank_free(chakra_diff_rank *r) {
  for (size_t k = 0; k < r->n_listed; k++) {
    free(r->listed[k].name);
    free(r->listed[k].details);
  }
  free(r->listed);
  chakra_stats_free(&r->stats_a);
  chakra_stats_free(&r->stats_b);
  memset(r, 0, sizeof *r);
}

int chakra_diff_rank_equal(const chakra_diff_rank *r) {
  return !r->added && !r->removed && !r->changed && !r->metadata_differs;
}
