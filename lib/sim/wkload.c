/* wkload.c - loading a workload by rank classes; see wkload.h. */
#include "wkload.h"

#include "chakra/build.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../trace/canon.h"
#include "../util/hmap.h"
#include "../util/vec.h"
#include "../trace/nodekind.h"
#include "../util/bigmem.h"
#include "../util/tasks.h"
#include "chakra/graph.h"
#include "chakra/set.h"

/* ---- one template ---- */

/* One class's load. Classes load on several threads, so nothing here
 * touches shared state: warnings and process groups from METADATA nodes
 * are kept and applied in rank order afterwards, which keeps every message
 * and error exactly as a one-thread, rank-by-rank load gives them. */
typedef struct load_ctx {
  uint32_t npus;
  uint32_t rank;          /* the representative */
  uint32_t set_cls;       /* the set's class (source classes), else UINT32_MAX: the rank's own trace */
  char *path;
  int rc;
  chakra_error err;
  sim_lines warns, groups; /* warnings; group lists (JSON) from METADATA nodes */
  int oom;                /* a warning, group list or peer role could not be kept */
  int comm_rc;            /* the first communication node that cannot run, kept for */
  chakra_error comm_err;  /* runs that are not replay-only */
  int32_t *peer;          /* peer roles so far */
  uint32_t n_peer, cap_peer;
  hmap pidx;              /* value -> role */
} load_ctx;

static void load_warn(void *ctx, const char *msg) {
  load_ctx *L = ctx;
  if (sim_lines_add(&L->warns, msg)) L->oom = 1;
}

/* The graph loader's warnings, kept as lines like the others. */
static void load_diag(void *ctx, const chakra_problem *p) {
  char msg[1024];
  chakra_problem_format(p, msg, sizeof msg);
  load_warn(ctx, msg);
}

static int node_error(load_ctx *L, const chakra_gnode *g, const char *what) {
  return chakra_error_set(&L->err, CHAKRA_EINVAL, "%s: rank %u: node %llu: %s", L->path, L->rank,
                          (unsigned long long)g->id, what);
}

/* The node's first error in the vocabulary's words (chakra/node.h). */
static int node_problem(load_ctx *L, const chakra_gnode *g, uint32_t problems) {
  char msg[160];
  return node_error(L, g, chakra_node_problem_text(g, L->rank, L->npus, chakra_node_first_problem(problems & CHAKRA_NP_ERRORS), msg, sizeof msg));
}

/* The role of peer p in this template (its distinct peers in node order);
 * UINT32_MAX when out of memory. */
static uint32_t peer_role(load_ctx *L, int32_t p) {
  int oom = 0;
  if (VEC_ROOM(L->peer, L->n_peer, L->cap_peer, 1)) return UINT32_MAX; /* before the map names the new role */
  uint32_t had = hmap_put_u64(&L->pidx, (uint32_t)p, L->n_peer, &oom);
  if (oom) return UINT32_MAX;
  if (had != HMAP_NONE) return had;
  L->peer[L->n_peer] = p;
  return L->n_peer++;
}

/* Communication as the simulator runs it: four collectives natively,
 * BROADCAST replayed with its recorded duration, anything else refused. */
static int convert_comm(load_ctx *L, const chakra_gnode *g, const chakra_node_class *c, wl_node *n) {
  if (c->problems & CHAKRA_NP_ERRORS) return node_problem(L, g, c->problems);
  if (c->kind == CHAKRA_KIND_COLL) {
    if (c->comm_type == CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__BROADCAST) {
      n->kind = WK_DELAY;
      n->value = g->duration_micros ? g->duration_micros * 1000 : 1;
      return 0;
    }
    if (c->coll < 0) {
      char msg[160];
      snprintf(msg, sizeof msg, "unsupported collective comm type %s", chakra_comm_type_name(c->comm_type));
      return node_error(L, g, msg);
    }
    n->kind = WK_COLL;
    n->coll = (uint8_t)c->coll;
    n->value = g->size;
    n->u.cl.involved_dim = g->involved_dim;
    n->u.cl.pg = g->pg;
    n->n_involved = g->n_involved_dim < 15 ? g->n_involved_dim : 15; /* > any dimension count */
    return 0;
  }
  if (c->problems & CHAKRA_NP_NO_COMM_TAG) {
    char line[512];
    snprintf(line, sizeof line, "%s: node %llu: no comm_tag; using 0", L->path, (unsigned long long)g->id);
    load_warn(L, line);
  }
  n->kind = c->kind == CHAKRA_KIND_SEND ? WK_SEND : WK_RECV;
  n->u.p2p.role = peer_role(L, c->peer);
  if (n->u.p2p.role == UINT32_MAX) L->oom = 1;
  n->u.p2p.tag = g->comm_tag;
  n->value = g->size;
  return 0;
}

/* PyTorch METADATA nodes carry process groups, kept as text for
 * util/commgroups when a run applies them. */
static int read_metadata_groups(load_ctx *L, const chakra_graph *g, uint32_t i) {
  chakra_node *full;
  chakra_error e;
  if (chakra_graph_read_node(g, i, &full, &e)) return chakra_error_set(&L->err, e.code, "%s", e.msg);
  const char *v = chakra_node_process_groups(full);
  if (v && sim_lines_add(&L->groups, v)) L->oom = 1;
  chakra_node_free(full);
  return 0;
}

/* Everything about a node that does not depend on the configuration;
 * what does is settled per run (wl_kind(), wl_check_rank()). */
static int convert_node(load_ctx *L, const chakra_graph *gr, uint32_t i, wl_node *n) {
  const chakra_gnode *g = &gr->nodes[i];
  const char *too_long = nodekind_duration_problem(g);
  if (too_long) return node_error(L, g, too_long);
  chakra_node_class c;
  nodekind_classify(g, L->rank, L->npus, &c); /* inline: millions of nodes */
  memset(n, 0, sizeof *n);
  n->id = g->id;
  n->slot = c.slot;
  n->cat = c.category;
  n->replay_us = g->duration_micros < UINT32_MAX ? (uint32_t)g->duration_micros : UINT32_MAX;
  if (g->present & CHAKRA_HAS_TENSOR_SIZE) n->flags |= WF_TENSOR_SIZE;
  switch (c.kind) {
    case CHAKRA_KIND_COMPUTE:
    case CHAKRA_KIND_CPU: {
      int cpu = c.kind == CHAKRA_KIND_CPU;
      n->kind = cpu ? WK_DELAY : WK_COMP;
      n->value = cpu ? (g->duration_micros ? g->duration_micros * 1000 : 1) : g->size;
      n->u.num_ops = g->num_ops;
      if (c.roofline) n->flags |= WF_ROOFLINE_ATTRS;
      return 0;
    }
    case CHAKRA_KIND_COLL:
    case CHAKRA_KIND_SEND:
    case CHAKRA_KIND_RECV:
      if (convert_comm(L, g, &c, n)) { /* an error only for runs that do not replay */
        if (!L->comm_rc) L->comm_rc = CHAKRA_EINVAL, L->comm_err = L->err;
        n->kind = WK_NOOP;
      }
      return 0;
    case CHAKRA_KIND_MEM_LOAD:
    case CHAKRA_KIND_MEM_STORE:
      n->kind = WK_MEM;
      n->value = g->size;
      if (c.kind == CHAKRA_KIND_MEM_STORE) n->flags |= WF_STORE;
      return 0;
    case CHAKRA_KIND_METADATA:
      n->kind = WK_NOOP;
      return read_metadata_groups(L, gr, i);
    case CHAKRA_KIND_NOOP:
      n->kind = WK_NOOP;
      return 0;
    default:
      return node_problem(L, g, c.problems);
  }
}

/* A template's per-node arrays share one block: one huge-page mapping
 * instead of three, so a 100k-node rank faults a few times, not 1,000. */
static int class_arrays(wl_class *k, size_t n, size_t n_children) {
  size_t sz[] = {n * sizeof *k->nodes, (n + 1) * sizeof *k->child_off, (n_children ? n_children : 1) * sizeof *k->children};
  size_t off[3], total = 0;
  for (int i = 0; i < 3; i++) {
    off[i] = total;
    total += (sz[i] + 15) & ~(size_t)15;
  }
  char *b = bigmem_alloc(total);
  if (!b) return -1;
  k->nodes = (wl_node *)b;
  k->child_off = (uint32_t *)(b + off[1]);
  k->children = (uint32_t *)(b + off[2]);
  return 0;
}

static int keep_graph(load_ctx *L, const chakra_graph *g, wl_class *k) {
  int rc = 0;
  size_t n = g->n ? g->n : 1;
  for (uint32_t i = 0; i < g->n && !rc && !k->replay_wide; i++) /* a duration of 2^32 us or more: keep them all */
    if (g->nodes[i].duration_micros >= UINT32_MAX) {
      if (!(k->replay_wide = malloc(n * sizeof *k->replay_wide))) return chakra_error_set(&L->err, CHAKRA_ENOMEM, "out of memory");
      for (uint32_t j = 0; j < g->n; j++)
        k->replay_wide[j] = g->nodes[j].duration_micros ? g->nodes[j].duration_micros * 1000 : 1;
    }
  memcpy(k->child_off, g->child_off, (g->n + 1) * sizeof *k->child_off);
  if (g->child_off[g->n]) memcpy(k->children, g->children, g->child_off[g->n] * sizeof *k->children); /* no edge: NULL */
  /* Keep the group names; the graph goes away. */
  k->n_pg = (uint32_t)g->n_pg_names;
  k->pg_names = calloc(g->n_pg_names + 1, sizeof *k->pg_names);
  for (size_t i = 1; k->pg_names && i < g->n_pg_names && !rc; i++)
    if (!(k->pg_names[i] = strdup(g->pg_names[i]))) rc = -1;
  return !k->pg_names || rc ? chakra_error_set(&L->err, CHAKRA_ENOMEM, "out of memory") : 0;
}

static int load_template(load_ctx *L, const chakra_set *set, wl_class *k) {
  chakra_graph_options opt = {.diag = load_diag, .diag_ctx = L};
  chakra_graph *g;
  int rc = L->set_cls == UINT32_MAX ? chakra_set_load_rank(set, L->rank, &opt, &g, &L->err)
                                    : chakra_set_load_class(set, L->set_cls, &opt, &g, &L->err);
  if (rc) return rc;
  k->n = (uint32_t)g->n;
  k->rep = L->rank;
  if (class_arrays(k, g->n ? g->n : 1, g->child_off[g->n])) rc = chakra_error_set(&L->err, CHAKRA_ENOMEM, "%s: out of memory", L->path);
  for (uint32_t i = 0; i < g->n && !rc; i++) rc = convert_node(L, g, i, &k->nodes[i]);
  if (!rc) rc = keep_graph(L, g, k);
  chakra_graph_free(g);
  if (!rc && L->oom) rc = chakra_error_set(&L->err, CHAKRA_ENOMEM, "out of memory");
  if (!rc) {
    k->peer = L->peer, L->peer = NULL;
    k->n_peer = L->n_peer;
  }
  return rc;
}

static void free_ctx(load_ctx *L) {
  sim_lines_free(&L->warns);
  sim_lines_free(&L->groups);
  free(L->path);
  free(L->peer);
  hmap_free(&L->pidx);
}

/* Ranks are independent: on T threads the reading and decoding, the
 * largest part of a load, take about 1/T of the time. */
static uint32_t load_threads(uint32_t asked, uint32_t jobs) {
  uint32_t t = asked ? asked : tasks_cpus();
  if (t > 64) t = 64;
  return t < jobs ? t : jobs ? jobs : 1;
}

typedef struct class_pool {
  chakra_sim_workload *w;
  const chakra_set *set;
  load_ctx *ctx;
} class_pool;

static int class_job(void *arg, size_t c) {
  class_pool *p = arg;
  load_ctx *L = &p->ctx[c];
  L->rc = load_template(L, p->set, &p->w->cls[c]);
  return L->rc;
}

/* Loads every class's template (w->cls[c].rep set; set_cls[c] the set's
 * class or UINT32_MAX) and keeps its warnings, groups and first error. */
static int load_classes(chakra_sim_workload *w, const chakra_set *set, const uint32_t *set_cls, uint32_t threads,
                        load_ctx **ctx_out, chakra_error *err) {
  load_ctx *ctx = calloc(w->n_cls ? w->n_cls : 1, sizeof *ctx);
  *ctx_out = ctx;
  if (!ctx) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (uint32_t c = 0; c < w->n_cls; c++) {
    uint32_t rep = w->cls[c].rep;
    ctx[c] = (load_ctx){.npus = w->npus, .rank = rep, .set_cls = set_cls ? set_cls[c] : UINT32_MAX,
                        .path = strdup(chakra_set_rank_name(set, rep))};
    if (!ctx[c].path) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  class_pool p = {w, set, ctx};
  /* every class is loaded: the error reported is the first in rank order */
  tasks_run(w->n_cls, load_threads(threads, w->n_cls), class_job, &p, 0);
  for (uint32_t c = 0; c < w->n_cls; c++) {
    wl_class *k = &w->cls[c];
    load_ctx *L = &ctx[c];
    k->warns = L->warns, L->warns = (sim_lines){0};
    k->groups = L->groups, L->groups = (sim_lines){0};
    k->comm_rc = L->comm_rc;
    k->comm_err = L->comm_err;
  }
  return 0;
}

/* What a one-thread load of the rank files in order would have said:
 * each rank's warnings (its class's, naming the rank's own trace), until
 * the first rank that cannot load. */
static int report_in_rank_order(const chakra_sim_workload *w, const load_ctx *ctx, chakra_diag_fn diag, void *dctx,
                                chakra_error *err) {
  for (uint32_t r = 0; r < w->npus; r++) {
    const wl_class *k = &w->cls[w->cls_of[r]];
    const load_ctx *L = &ctx[w->cls_of[r]];
    size_t plen = strlen(L->path);
    for (size_t i = 0; diag && i < k->warns.n; i++) {
      const char *msg = k->warns.v[i];
      if (r == k->rep || strncmp(msg, L->path, plen) != 0) {
        sim_warn_line(diag, dctx, msg);
        continue;
      }
      char *line = malloc(strlen(w->name[r]) + strlen(msg + plen) + 1);
      if (!line) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
      strcpy(line, w->name[r]);
      strcat(line, msg + plen);
      sim_warn_line(diag, dctx, line);
      free(line);
    }
    if (L->rc) {
      if (err) *err = L->err;
      return L->rc;
    }
  }
  return 0;
}

/* ---- bindings ---- */

static const char *keep_str(chakra_sim_workload *w, const char *s) {
  size_t n = strlen(s) + 1;
  char *p = arena_alloc(&w->strs, n);
  if (p) memcpy(p, s, n);
  return p;
}

/* The per-rank arrays, sized by each rank's class. */
static int binding_arrays(chakra_sim_workload *w) {
  uint64_t np = 0, ng = 0;
  w->peer_off = malloc(((size_t)w->npus + 1) * sizeof *w->peer_off);
  w->pg_off = malloc(((size_t)w->npus + 1) * sizeof *w->pg_off);
  w->name = calloc(w->npus, sizeof *w->name);
  w->names_path = calloc(w->npus, sizeof *w->names_path);
  if (!w->peer_off || !w->pg_off || !w->name || !w->names_path) return -1;
  for (uint32_t r = 0; r < w->npus; r++) {
    const wl_class *k = &w->cls[w->cls_of[r]];
    w->peer_off[r] = (uint32_t)np;
    w->pg_off[r] = (uint32_t)ng;
    np += k->n_peer;
    ng += k->n_pg ? k->n_pg - 1 : 0;
    if (np > UINT32_MAX || ng > UINT32_MAX) return -1;
  }
  w->peer_off[w->npus] = (uint32_t)np;
  w->pg_off[w->npus] = (uint32_t)ng;
  w->bind_peer = malloc((np ? np : 1) * sizeof *w->bind_peer);
  w->bind_pg = malloc((ng ? ng : 1) * sizeof *w->bind_pg);
  return w->bind_peer && w->bind_pg ? 0 : -1;
}

/* Every rank's name, and the file its node names can be read from: its
 * own, else its class template's. */
static int rank_names(chakra_sim_workload *w, const chakra_set *set, const uint32_t *set_cls) {
  const char **tpath = set_cls ? calloc(w->n_cls ? w->n_cls : 1, sizeof *tpath) : NULL;
  if (set_cls && !tpath) return -1;
  for (uint32_t c = 0; set_cls && c < w->n_cls; c++) {
    chakra_input in;
    chakra_error e;
    if (!chakra_set_input(set, set_cls[c], &in, &e) && in.path && !(tpath[c] = keep_str(w, in.path))) return free(tpath), -1;
  }
  int rc = 0;
  for (uint32_t r = 0; r < w->npus && !rc; r++) {
    const char *p = chakra_set_rank_path(set, r);
    if (!(w->name[r] = keep_str(w, chakra_set_rank_name(set, r)))) rc = -1;
    else if (p) rc = (w->names_path[r] = keep_str(w, p)) ? 0 : -1;
    else if (tpath) w->names_path[r] = tpath[w->cls_of[r]];
  }
  free(tpath);
  return rc;
}

/* A binding that would change what a node of the template means. */
static int bad_binding(const chakra_sim_workload *w, uint32_t r, const char *what, int32_t tv, int32_t v,
                       chakra_error *err) {
  return chakra_error_set(err, CHAKRA_EINVAL, "%s: rank %u: the trace set binds the template's %s %d to %d, %s",
                          w->name[r], r, what, tv, v, "which is not a rank of the set");
}

/* Source classes: the set binds each rank's names and peers. */
static int bind_from_set(chakra_sim_workload *w, const chakra_set *set, chakra_error *err) {
  for (uint32_t r = 0; r < w->npus; r++) {
    const wl_class *k = &w->cls[w->cls_of[r]];
    int32_t *pv = w->bind_peer + w->peer_off[r];
    for (uint32_t i = 0; i < k->n_peer; i++) {
      pv[i] = r == k->rep ? k->peer[i] : chakra_set_bind_peer(set, r, k->peer[i]);
      if (pv[i] < 0 || (uint32_t)pv[i] >= w->npus) return bad_binding(w, r, "peer", k->peer[i], pv[i], err);
    }
    const char **gv = w->bind_pg + w->pg_off[r];
    for (uint32_t i = 1; i < k->n_pg; i++) {
      const char *name = r == k->rep ? k->pg_names[i] : chakra_set_bind_group(set, r, k->pg_names[i]);
      if (!name)
        return chakra_error_set(err, CHAKRA_EINVAL, "%s: rank %u: the trace set binds no group to the template's '%s'",
                                w->name[r], r, k->pg_names[i]);
      if (!(gv[i - 1] = keep_str(w, name))) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    }
  }
  return 0;
}

/* ---- classes from the rank files ---- */

/* What reading rank r's file gave: its class so far and its roles. */
typedef struct scan_rank {
  uint32_t cls;        /* scan class, or UINT32_MAX: a class of its own */
  uint32_t n_peer, n_pg;
  int32_t *peer;       /* one block: peers, then group name offsets, then names */
  uint32_t *pg_off;
  char *pg;
} scan_rank;

typedef struct scan_class {
  uint8_t *form;       /* the canonical form; NULL past the memory budget */
  size_t len;
  uint32_t rep;        /* lowest rank seen */
} scan_class;

typedef struct scan_pool {
  const chakra_set *set;
  canon *cw;           /* per worker */
  scan_rank *sr;
  pthread_mutex_t lock;
  scan_class *cls;
  uint32_t n_cls, cap_cls;
  hmap by_form;        /* canonical form's hash -> class */
  size_t budget;       /* bytes of canonical forms still allowed */
  int oom;
} scan_pool;

/* Canonical forms kept to compare ranks with: every distinct one up to
 * this much; past it, ranks of new forms are read on their own. */
#define SCAN_BUDGET ((size_t)512 << 20)

static int keep_roles(scan_rank *s, const canon *c) {
  size_t sz = c->n_peer * sizeof(int32_t) + c->n_pg * sizeof(uint32_t) + c->pg_len;
  char *b = malloc(sz ? sz : 1);
  if (!b) return -1;
  s->peer = (int32_t *)b;
  s->pg_off = (uint32_t *)(b + c->n_peer * sizeof(int32_t));
  s->pg = b + c->n_peer * sizeof(int32_t) + c->n_pg * sizeof(uint32_t);
  for (uint32_t i = 0; i < c->n_peer; i++) s->peer[i] = (int32_t)c->peer[i]; /* the walk keeps int32 peers only */
  if (c->n_pg) memcpy(s->pg_off, c->pg_off, c->n_pg * sizeof(uint32_t)); /* none: NULL, not to be copied from */
  if (c->pg_len) memcpy(s->pg, c->pg, c->pg_len);
  s->n_peer = c->n_peer;
  s->n_pg = c->n_pg;
  return 0;
}

typedef struct form_key {
  const scan_pool *p;
  const canon *c;
} form_key;

/* Whether class i kept this form (a class past the budget matches none). */
static int form_eq(const void *ctx, uint32_t i) {
  const form_key *f = ctx;
  const scan_class *k = &f->p->cls[i];
  return k->len == f->c->n && k->form && memcmp(k->form, f->c->b, f->c->n) == 0;
}

/* Finds rank r's class by its form, or starts one (under the lock). */
static int place(scan_pool *p, uint32_t r, const canon *c) {
  uint64_t h = canon_hash(c);
  uint32_t i = hmap_find(&p->by_form, h, form_eq, &(form_key){p, c});
  if (i != HMAP_NONE) {
    if (r < p->cls[i].rep) p->cls[i].rep = r;
    p->sr[r].cls = i;
    return 0;
  }
  if (VEC_ROOM(p->cls, p->n_cls, p->cap_cls, 1) || hmap_add(&p->by_form, h, p->n_cls)) return -1;
  scan_class *k = &p->cls[p->n_cls];
  *k = (scan_class){.len = c->n, .rep = r};
  if (c->n <= p->budget && (k->form = malloc(c->n ? c->n : 1))) {
    if (c->n) memcpy(k->form, c->b, c->n);
    p->budget -= c->n;
  }
  p->sr[r].cls = p->n_cls++;
  return 0;
}

static int scan_job(void *arg, unsigned worker, size_t r) {
  scan_pool *p = arg;
  scan_rank *s = &p->sr[r];
  s->cls = UINT32_MAX;
  chakra_reader *rd;
  chakra_error e;
  if (chakra_set_reader(p->set, (uint32_t)r, NULL, &rd, &e)) return 0; /* read on its own: it says why */
  canon *c = &p->cw[worker];
  int rc = canon_read(c, rd, &e);
  chakra_reader_close(rd);
  if (rc == CHAKRA_ENOMEM || (rc == CANON_OK && keep_roles(s, c))) {
    p->oom = 1;
    return -1;
  }
  if (rc != CANON_OK) return 0;
  pthread_mutex_lock(&p->lock);
  if (place(p, (uint32_t)r, c)) p->oom = 1;
  pthread_mutex_unlock(&p->lock);
  return p->oom ? -1 : 0;
}

static int in_set(int32_t v, uint32_t n) { return v >= 0 && (uint32_t)v < n; }

/* Whether rank r's values read its class's nodes as its representative's
 * read them: its own rank where the representative's is its own, a rank
 * of the set where the representative's is one. */
static int same_reading(const scan_rank *sr, uint32_t r, uint32_t rep, uint32_t npus) {
  const scan_rank *a = &sr[r], *b = &sr[rep];
  if (a->n_peer != b->n_peer || a->n_pg != b->n_pg) return 0;
  for (uint32_t i = 0; i < a->n_peer; i++)
    if ((a->peer[i] == (int32_t)r) != (b->peer[i] == (int32_t)rep) || in_set(a->peer[i], npus) != in_set(b->peer[i], npus))
      return 0;
  return 1;
}

/* Final classes, numbered by representative: each scan class with its
 * members that read alike, and every other rank on its own. */
static int settle_classes(chakra_sim_workload *w, scan_pool *p) {
  scan_rank *sr = p->sr;
  for (uint32_t r = 0; r < w->npus; r++)
    if (sr[r].cls != UINT32_MAX && !same_reading(sr, r, p->cls[sr[r].cls].rep, w->npus)) sr[r].cls = UINT32_MAX;
  uint32_t *final = malloc((p->n_cls ? p->n_cls : 1) * sizeof *final);
  w->cls_of = malloc(w->npus * sizeof *w->cls_of);
  w->cls = calloc(w->npus, sizeof *w->cls); /* at most one class per rank; shrunk below */
  if (!final || !w->cls_of || !w->cls) return free(final), -1;
  for (uint32_t i = 0; i < p->n_cls; i++) final[i] = UINT32_MAX;
  w->n_cls = 0;
  for (uint32_t r = 0; r < w->npus; r++) { /* in rank order, so a class's number follows its representative */
    uint32_t sc = sr[r].cls;
    if (sc != UINT32_MAX && final[sc] != UINT32_MAX) {
      w->cls_of[r] = final[sc];
    } else {
      w->cls_of[r] = w->n_cls;
      w->cls[w->n_cls].rep = r;
      if (sc != UINT32_MAX) final[sc] = w->n_cls;
      w->n_cls++;
    }
    w->cls[w->cls_of[r]].members++;
  }
  free(final);
  wl_class *v = realloc(w->cls, (w->n_cls ? w->n_cls : 1) * sizeof *v);
  if (v) w->cls = v;
  return 0;
}

/* Rank r's values for its template's roles, through the representative's
 * scan roles (sr NULL: every rank its own class). Every group name and
 * peer a template holds is one of the scan's roles (the walk takes every
 * such attribute or calls the file unusual): the fallback to the
 * template's value is for ranks of their own. */
static int bind_from_scan(chakra_sim_workload *w, const scan_rank *sr, chakra_error *err) {
  for (uint32_t r = 0; r < w->npus; r++) {
    const wl_class *k = &w->cls[w->cls_of[r]];
    const scan_rank *a = sr ? &sr[r] : NULL, *b = sr ? &sr[k->rep] : NULL;
    int32_t *pv = w->bind_peer + w->peer_off[r];
    const char **gv = w->bind_pg + w->pg_off[r];
    int scanned = r != k->rep && a && a->peer && b->peer;
    for (uint32_t i = 0; i < k->n_peer; i++) {
      pv[i] = k->peer[i];
      for (uint32_t j = 0; scanned && j < b->n_peer; j++)
        if (b->peer[j] == k->peer[i]) {
          pv[i] = a->peer[j];
          break;
        }
    }
    for (uint32_t i = 1; i < k->n_pg; i++) {
      const char *name = k->pg_names[i];
      for (uint32_t j = 0; scanned && j < b->n_pg; j++)
        if (strcmp(b->pg + b->pg_off[j], name) == 0) {
          name = a->pg + a->pg_off[j];
          break;
        }
      if (!(gv[i - 1] = keep_str(w, name))) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    }
  }
  return 0;
}

static void scan_free(scan_pool *p, uint32_t npus, unsigned workers) {
  for (uint32_t r = 0; p->sr && r < npus; r++) free(p->sr[r].peer);
  for (uint32_t i = 0; i < p->n_cls; i++) free(p->cls[i].form);
  for (unsigned t = 0; p->cw && t < workers; t++) canon_free(&p->cw[t]);
  free(p->cw);
  free(p->sr);
  free(p->cls);
  hmap_free(&p->by_form);
  pthread_mutex_destroy(&p->lock);
}

/* Reads every rank file once (canonical forms) and sorts the ranks into
 * classes. */
static int scan_ranks(chakra_sim_workload *w, const chakra_set *set, uint32_t threads, scan_pool *p,
                      unsigned *workers, chakra_error *err) {
  *workers = load_threads(threads, w->npus);
  p->set = set;
  p->budget = SCAN_BUDGET;
  p->sr = calloc(w->npus, sizeof *p->sr);
  p->cw = calloc(*workers, sizeof *p->cw);
  if (!p->sr || !p->cw) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (unsigned t = 0; t < *workers; t++) canon_init(&p->cw[t]);
  tasks_run_workers(w->npus, *workers, scan_job, p, TASKS_STOP_ON_ERROR);
  if (p->oom || settle_classes(w, p)) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  w->detected = 1;
  return 0;
}

/* Every rank its own class (one rank: nothing to share). */
static int own_classes(chakra_sim_workload *w) {
  w->cls_of = malloc(w->npus * sizeof *w->cls_of);
  w->cls = calloc(w->npus, sizeof *w->cls);
  if (!w->cls_of || !w->cls) return -1;
  for (uint32_t r = 0; r < w->npus; r++) w->cls_of[r] = r, w->cls[r].rep = r, w->cls[r].members = 1;
  w->n_cls = w->npus;
  return 0;
}

/* The set's own classes. */
static int set_classes(chakra_sim_workload *w, const chakra_set *set, uint32_t **set_cls, chakra_error *err) {
  uint32_t n = chakra_set_classes(set);
  w->cls_of = malloc(w->npus * sizeof *w->cls_of);
  w->cls = calloc(n ? n : 1, sizeof *w->cls);
  *set_cls = malloc((n ? n : 1) * sizeof **set_cls);
  if (!w->cls_of || !w->cls || !*set_cls) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  w->n_cls = n;
  for (uint32_t c = 0; c < n; c++) {
    (*set_cls)[c] = c;
    w->cls[c].rep = chakra_set_class_rep(set, c);
    if (w->cls[c].rep >= w->npus || chakra_set_class_of(set, w->cls[c].rep) != c)
      return chakra_error_set(err, CHAKRA_EINVAL, "trace set: class %u's representative %u is not one of its ranks", c, w->cls[c].rep);
  }
  for (uint32_t r = 0; r < w->npus; r++) {
    uint32_t c = chakra_set_class_of(set, r);
    if (c >= n) return chakra_error_set(err, CHAKRA_EINVAL, "trace set: rank %u is in class %u of %u", r, c, n);
    w->cls_of[r] = c;
    w->cls[c].members++;
  }
  return 0;
}

static int has_set_classes(const chakra_set *set) {
  uint32_t n = chakra_set_ranks(set);
  if (chakra_set_classes(set) != n) return 1;
  for (uint32_t r = 0; r < n; r++)
    if (chakra_set_class_of(set, r) != r) return 1;
  return 0;
}

/* The set's communicator groups, applied by every run before the METADATA
 * nodes' (after the configuration's). */
static int keep_set_groups(chakra_sim_workload *w, const chakra_set *set, chakra_error *err) {
  if (chakra_set_groups_origin(set) == CHAKRA_GROUPS_NONE) return 0;
  int rc = chakra_set_load_groups(set, err);
  for (size_t i = 0; !rc && i < chakra_set_group_count(set); i++) {
    uint32_t n;
    const uint32_t *m = chakra_set_group_members(set, i, &n);
    if (sim_groups_add(&w->groups, chakra_set_group_name(set, i), m, n)) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  return rc;
}

static int load_workload(chakra_sim_workload *w, const chakra_set *set, uint32_t threads, chakra_diag_fn diag,
                         void *dctx, chakra_error *err) {
  uint32_t *set_cls = NULL;
  scan_pool sp = {0};
  pthread_mutex_init(&sp.lock, NULL);
  unsigned workers = 0;
  load_ctx *ctx = NULL;
  int rc = keep_set_groups(w, set, err);
  if (!rc) {
    if (has_set_classes(set)) rc = set_classes(w, set, &set_cls, err);
    else if (w->npus > 1) rc = scan_ranks(w, set, threads, &sp, &workers, err);
    else if (own_classes(w)) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  if (!rc) rc = load_classes(w, set, set_cls, threads, &ctx, err);
  if (!rc && (binding_arrays(w) || rank_names(w, set, set_cls))) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  if (!rc) rc = report_in_rank_order(w, ctx, diag, dctx, err);
  if (!rc) rc = set_cls ? bind_from_set(w, set, err) : bind_from_scan(w, sp.sr, err);
  for (uint32_t c = 0; ctx && c < w->n_cls; c++) free_ctx(&ctx[c]);
  free(ctx);
  free(set_cls);
  scan_free(&sp, w->npus, workers);
  return rc;
}

int chakra_sim_workload_load_set(chakra_sim_workload **out, const chakra_set *set, uint32_t threads,
                                 chakra_diag_fn diag, void *diag_ctx, chakra_error *err) {
  *out = NULL;
  chakra_sim_workload *w = calloc(1, sizeof *w);
  if (!w) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  w->npus = chakra_set_ranks(set);
  arena_init(&w->strs, 64 * 1024);
  int rc = load_workload(w, set, threads, diag, diag_ctx, err);
  if (rc) chakra_sim_workload_free(w);
  else *out = w;
  return rc;
}

int chakra_sim_workload_load(chakra_sim_workload **out, const char *prefix, uint32_t npus, uint32_t threads,
                             chakra_diag_fn diag, void *diag_ctx, chakra_error *err) {
  *out = NULL;
  if (npus == 0) return chakra_error_set(err, CHAKRA_EINVAL, "workload: the NPU count must be at least 1");
  char why[64];
  snprintf(why, sizeof why, "the network has %u NPUs", npus);
  chakra_set_options so = {.ranks = npus, .ranks_reason = why, .first_ranks = 1, .no_default_groups = 1};
  chakra_set *set;
  int rc = chakra_set_open(&set, prefix, &so, err);
  if (rc) return rc;
  rc = chakra_sim_workload_load_set(out, set, threads, diag, diag_ctx, err);
  chakra_set_close(set);
  return rc;
}

uint32_t chakra_sim_workload_npus(const chakra_sim_workload *w) { return w->npus; }

void chakra_sim_workload_free(chakra_sim_workload *w) {
  if (!w) return;
  for (uint32_t c = 0; w->cls && c < w->n_cls; c++) {
    wl_class *k = &w->cls[c];
    bigmem_free(k->nodes);
    for (uint32_t i = 1; k->pg_names && i < k->n_pg; i++) free(k->pg_names[i]);
    free(k->pg_names);
    sim_lines_free(&k->groups);
    sim_lines_free(&k->warns);
    free(k->peer);
    free(k->replay_wide);
  }
  free(w->cls);
  free(w->cls_of);
  free(w->peer_off);
  free(w->pg_off);
  free(w->bind_peer);
  free(w->bind_pg);
  free(w->name);
  free(w->names_path);
  arena_free(&w->strs);
  sim_config_groups_free(&w->groups);
  free(w);
}
