/* validate.c - per-file and cross-rank trace checks; see include/chakra/validate.h. */
#include "chakra/validate.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../trace/setfile.h"
#include "../trace/setint.h"
#include "../util/cmp.h"
#include "../util/commgroups.h"
#include "chakra/graph.h"
#include "chakra/node.h"
#include "chakra/trace.h"
#include "deadlock.h"
#include "vclass.h"
#include "../util/diag.h"
#include "../util/vec.h"
#include "../util/hmap.h"

typedef struct p2p {
  int32_t src, dst, tag;
  int32_t peer;  /* the node's own peer, for messages (by class, src and dst are moved: note_p2p) */
  uint64_t size, node_id, offset;
  int file;
  uint32_t idx;  /* node index in its rank's graph */
} p2p;

typedef struct coll {
  uint32_t group;  /* index into vstate.groups */
  int32_t type;
  uint64_t size, node_id, offset;
} coll;

typedef struct use {
  uint32_t group, first;  /* a group a rank's collectives name, and the first of them (index in its colls) */
} use;

typedef struct rank_colls {
  coll *v;
  size_t n, cap;
} rank_colls;

typedef struct vstate {
  const chakra_set *set;
  int n_files, cur;
  chakra_diag_fn fn;
  void *ctx;
  chakra_validate_summary *sum;
  p2p *sends, *recvs;
  size_t n_sends, n_recvs, cap_sends, cap_recvs;
  rank_colls *colls;
  char **groups;
  size_t n_groups;
  hmap group_ids;        /* name -> index into groups */
  dl_rank *dl;           /* per rank, for the deadlock check (multi-rank only) */
  const chakra_graph *g; /* the graph being checked */
  p2p *keys;             /* receive key index -> its (src, dst, tag, size) */
  uint32_t **mem;        /* per used group: its members below n_files, ascending (NULL with all[]) */
  uint32_t *n_mem;       /* their counts */
  uint8_t *all;          /* per used group: every rank, whatever the rank count ("" or a list-less METADATA group) */
  const char *groups_path; /* the comm-group configuration, NULL if none */
  uint32_t groups_for;     /* the rank count the configuration seems written for, if short (check_rank_count) */
  int told_rank_count;
  int rendezvous;        /* sends wait for their receives (chakra sim --rendezvous-protocol) */
  cg_set defs;           /* groups it and the METADATA nodes define */
  long *def_of;          /* per used group: index into defs, -1 = all ranks or unknown */
  struct use *uses;      /* per rank, the groups its collectives name with the first of them, by group */
  size_t *use_off;       /* rank r's are uses[use_off[r] .. use_off[r + 1]) */
  uint32_t *users;       /* per group, the ranks that name it, ascending: users[user_off[g] .. user_off[g + 1]) */
  size_t *user_off;
  uint8_t *whole;        /* per group: every rank is a member (the simulator's one world sequence) */
  /* By class (vclass.h): only the class representatives are read; dl,
   * the deadlock check's ranks, is then per class. */
  int by_class;
  const chakra_manifest *man;
  uint32_t n_cls, cls_size;
  char **cls_name;       /* per class: what its problems are named by */
  uint32_t *orbit;       /* per group: its translations' index in the deadlock check */
  int oom;
} vstate;

static void report(vstate *s, chakra_severity sev, int file, int has_node, uint64_t id, uint64_t off,
                   const char *fmt, ...) __attribute__((format(printf, 7, 8)));

static uint32_t class_of(const vstate *s, int r) { return chakra_set_class_of(s->set, (uint32_t)r); }
static int rep_of(const vstate *s, uint32_t c) { return (int)chakra_set_class_rep(s->set, c); }

/* What problems of rank r are named by: its trace, or by class its class. */
static const char *name_of(const vstate *s, int r) {
  return s->by_class ? s->cls_name[class_of(s, r)] : chakra_set_rank_name(s->set, (uint32_t)r);
}

/* Rank r's skeleton for the deadlock check: its own, or by class its class's. */
static dl_rank *dl_of(vstate *s, int r) { return &s->dl[s->by_class ? class_of(s, r) : (uint32_t)r]; }

static void deliver(void *ctx, const chakra_problem *p) {
  vstate *s = ctx;
  if (p->severity == CHAKRA_SEV_WARNING) s->sum->warnings++;
  else if (p->severity >= CHAKRA_SEV_ERROR) s->sum->errors++;
  if (s->fn) s->fn(s->ctx, p);
}

static void vreport(vstate *s, chakra_severity sev, const char *file, int has_node, uint64_t id, uint64_t off,
                    const char *fmt, va_list ap) {
  chakra_problem p = chakra_diag_on(sev, file);
  p.has_node = has_node;
  p.node_id = id;
  p.has_offset = has_node;
  p.offset = off;
  chakra_diag_emitv(deliver, s, p, fmt, ap);
}

static void report(vstate *s, chakra_severity sev, int file, int has_node, uint64_t id, uint64_t off,
                   const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vreport(s, sev, name_of(s, file), has_node, id, off, fmt, ap);
  va_end(ap);
}

static void report_on(vstate *s, const char *file, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* An error in a file that is not a rank's (the comm-group configuration). */
static void report_on(vstate *s, const char *file, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vreport(s, CHAKRA_SEV_ERROR, file, 0, 0, 0, fmt, ap);
  va_end(ap);
}

/* The loader's findings, named by the path as given ("-" rather than <stdin>). */
static void graph_problem(void *ctx, const chakra_problem *gp) {
  vstate *s = ctx;
  chakra_problem p = *gp;
  p.file = name_of(s, s->cur);
  deliver(s, &p);
}

static const char *group_name(const void *ctx, uint32_t gi, size_t *len) {
  const char *name = ((const vstate *)ctx)->groups[gi];
  *len = strlen(name);
  return name;
}

/* The index of group name, or HMAP_NONE when no rank has named it. */
static uint32_t group_find(vstate *s, const char *name, uint64_t *hash) {
  if (chakra_pg_is_world(name)) name = "";
  size_t len = strlen(name);
  *hash = hmap_hash_str(name, len);
  return hmap_find_str(&s->group_ids, *hash, name, len, group_name, s);
}

static uint32_t group_index(vstate *s, const char *name) {
  uint64_t h;
  uint32_t gi = group_find(s, name, &h);
  if (gi != HMAP_NONE) return gi;
  if (chakra_pg_is_world(name)) name = "";
  char **g = VEC_APPEND(s->groups, s->n_groups);
  if (g && !(*g = strdup(name))) s->n_groups--;
  if (!g || !*g || hmap_add(&s->group_ids, h, (uint32_t)(s->n_groups - 1))) {
    s->oom = 1;
    return 0;
  }
  return (uint32_t)(s->n_groups - 1);
}

static uint32_t node_group(void *ctx, uint32_t i) {
  vstate *s = ctx;
  return group_index(s, chakra_node_pg(s->g, &s->g->nodes[i]));
}

/* Every problem the node vocabulary finds in n, one line each, in its order. */
static void report_problems(vstate *s, const chakra_gnode *n, uint32_t problems) {
  uint32_t nranks = s->n_files > 1 ? (uint32_t)s->n_files : 0;
  char what[300];
  for (uint32_t left = problems, bit; (bit = chakra_node_first_problem(left)) != 0; left &= ~bit)
    report(s, bit & CHAKRA_NP_ERRORS ? CHAKRA_SEV_ERROR : CHAKRA_SEV_WARNING, s->cur, 1, n->id, n->offset, "%s",
           chakra_node_problem_text(n, (uint32_t)s->cur, nranks, bit, what, sizeof what));
}

static void note_p2p(vstate *s, const chakra_gnode *n, const chakra_node_class *c) {
  int is_send = c->kind == CHAKRA_KIND_SEND;
  if (c->problems & CHAKRA_NP_NO_PEER) return;
  p2p m = {is_send ? s->cur : c->peer, is_send ? c->peer : s->cur, n->comm_tag, c->peer, n->size, n->id,
           n->offset, s->cur, (uint32_t)(n - s->g->nodes)};
  /* By class a send is its representative's, as written; a receive moves
   * so that its source is its class's representative, where that rank's
   * sends are (one message of each orbit has it). */
  if (s->by_class && !is_send && !(c->problems & CHAKRA_NP_PEER_RANGE)) {
    int src_rep = rep_of(s, class_of(s, m.src));
    m.dst = (int32_t)setfile_grid_move(s->man, (uint32_t)m.dst, (uint32_t)m.src, (uint32_t)src_rep);
    m.src = src_rep;
  }
  p2p *slot = is_send ? VEC_PUSH(s->sends, s->n_sends, s->cap_sends) : VEC_PUSH(s->recvs, s->n_recvs, s->cap_recvs);
  if (slot) *slot = m;
  else s->oom = 1;
}

/* PyTorch process groups (et-format.md 4.1): a definition the workload's
 * collectives are checked against; a malformed one is this node's error. */
static void read_metadata_groups(vstate *s, const chakra_graph *g, const chakra_gnode *n) {
  if (s->n_files < 2) return;
  chakra_node *full;
  chakra_error e = {0};
  if (chakra_graph_read_node(g, (size_t)(n - g->nodes), &full, &e)) {
    report(s, CHAKRA_SEV_ERROR, s->cur, 1, n->id, n->offset, "%s", e.msg);
    return;
  }
  int rc = cg_add_metadata(&s->defs, chakra_node_process_groups(full), "METADATA", (uint32_t)s->n_files, &e);
  if (rc == CHAKRA_ENOMEM) s->oom = 1;
  else if (rc) report(s, CHAKRA_SEV_ERROR, s->cur, 1, n->id, n->offset, "%s", e.msg);
  chakra_node_free(full);
}

static void check_node(vstate *s, const chakra_graph *g, const chakra_gnode *n) {
  chakra_node_class c;
  chakra_node_classify(n, (uint32_t)s->cur, s->n_files > 1 ? (uint32_t)s->n_files : 0, &c);
  report_problems(s, n, c.problems);
  switch (c.kind) {
    case CHAKRA_KIND_COLL:
      if (!(c.problems & (CHAKRA_NP_NO_COMM_TYPE | CHAKRA_NP_BAD_COMM_TYPE | CHAKRA_NP_NO_COMM_SIZE))) {
        coll x = {group_index(s, chakra_node_pg(g, n)), c.comm_type, n->size, n->id, n->offset};
        rank_colls *rc = &s->colls[s->cur];
        coll *slot = VEC_PUSH(rc->v, rc->n, rc->cap);
        if (slot) *slot = x;
        else s->oom = 1;
      }
      break;
    case CHAKRA_KIND_SEND:
    case CHAKRA_KIND_RECV: note_p2p(s, n, &c); break;
    case CHAKRA_KIND_METADATA: read_metadata_groups(s, g, n); break;
    default: break;
  }
}

static void validate_file(vstate *s, int r) {
  s->cur = r;
  uint32_t ranks = s->by_class ? s->cls_size : 1; /* those r stands for */
  chakra_graph_options opt = {.tolerant = 1, .diag = graph_problem, .diag_ctx = s};
  chakra_graph *g;
  chakra_error err = {0};
  if (chakra_set_load_rank(s->set, (uint32_t)r, &opt, &g, &err)) {
    /* The message already names the file and offset; strip the file name. */
    const char *what = err.msg, *name = chakra_set_rank_name(s->set, (uint32_t)r);
    size_t plen = strlen(name);
    if (strncmp(what, name, plen) == 0 && what[plen] == ':') what += plen + 2;
    s->sum->unreadable += ranks;
    report(s, CHAKRA_SEV_UNREADABLE, r, 0, 0, 0, "%s", what);
    return;
  }
  s->sum->nodes += g->n * (uint64_t)ranks;
  s->g = g;
  for (uint32_t t = 0; t < g->n; t++) check_node(s, g, &g->nodes[g->topo[t]]);
  if (s->dl && dl_rank_init(dl_of(s, r), g, node_group, s)) s->oom = 1;
  s->g = NULL;
  chakra_graph_free(g);
}

static int cmp_p2p(const void *a, const void *b) {
  const p2p *x = a, *y = b;
  if (x->src != y->src) return x->src < y->src ? -1 : 1;
  if (x->dst != y->dst) return x->dst < y->dst ? -1 : 1;
  if (x->tag != y->tag) return x->tag < y->tag ? -1 : 1;
  if (x->size != y->size) return x->size < y->size ? -1 : 1;
  return x->node_id < y->node_id ? -1 : x->node_id > y->node_id;
}

static void unmatched(vstate *s, const p2p *m, int is_send) {
  if (is_send)
    report(s, CHAKRA_SEV_ERROR, m->file, 1, m->node_id, m->offset,
           "send to rank %d (tag %d, %llu bytes) has no matching receive", m->peer, m->tag,
           (unsigned long long)m->size);
  else
    report(s, CHAKRA_SEV_ERROR, m->file, 1, m->node_id, m->offset,
           "receive from rank %d (tag %d, %llu bytes) has no matching send", m->peer, m->tag,
           (unsigned long long)m->size);
}

static void match_p2p(vstate *s) {
  /* qsort(NULL, 0, ...) is undefined behaviour: a workload without
   * point-to-point nodes has no arrays at all. */
  if (s->n_sends) qsort(s->sends, s->n_sends, sizeof *s->sends, cmp_p2p);
  if (s->n_recvs) qsort(s->recvs, s->n_recvs, sizeof *s->recvs, cmp_p2p);
  size_t i = 0, j = 0;
  while (i < s->n_sends || j < s->n_recvs) {
    int c = i == s->n_sends ? 1 : j == s->n_recvs ? -1 : 0;
    if (!c) {
      p2p a = s->sends[i], b = s->recvs[j];
      a.node_id = b.node_id = 0;
      c = cmp_p2p(&a, &b);
    }
    if (c == 0) i++, j++;
    else if (c < 0) unmatched(s, &s->sends[i++], 1);
    else unmatched(s, &s->recvs[j++], 0);
  }
}

/* compare_group's gi for the collectives of every group of all ranks. */
#define WORLD UINT32_MAX
/* A group no rank names (by class: a representative's translated group
 * that it never uses), whose sequence is empty. */
#define NO_GROUP (UINT32_MAX - 1)

/* A group's name for messages: quoted to one line (it comes from the trace). */
static const char *group_label(const vstate *s, uint32_t gi, char *buf, size_t size) {
  if (gi == WORLD) return "(every rank, any name: the simulator runs them as one sequence)";
  return s->groups[gi][0] ? cg_quote(s->groups[gi], buf, size) : "(all ranks)";
}

static int in_seq(const vstate *s, uint32_t gi, uint32_t g) { return gi == WORLD ? s->whole[g] : g == gi; }

/* Compares rank r's collectives of group gr (or WORLD), called gname,
 * against the reference rank's of group gref. */
static void compare_seq(vstate *s, uint32_t gref, int ref, uint32_t gr, int r, const char *gname) {
  const rank_colls *a = &s->colls[ref], *b = &s->colls[r];
  size_t i = 0, j = 0, pos = 0;
  for (;; pos++) {
    while (i < a->n && !in_seq(s, gref, a->v[i].group)) i++;
    while (j < b->n && !in_seq(s, gr, b->v[j].group)) j++;
    if (i == a->n && j == b->n) return;
    if (i == a->n || j == b->n) {
      if (j < b->n)
        report(s, CHAKRA_SEV_ERROR, r, 1, b->v[j].node_id, b->v[j].offset,
               "group %s: this rank has more collectives than rank %d (first difference at collective #%zu)",
               gname, ref, pos);
      else
        report(s, CHAKRA_SEV_ERROR, r, 0, 0, 0,
               "group %s: this rank has fewer collectives than rank %d (first difference at collective #%zu: "
               "rank %d's node %llu, %s of %llu bytes, has no counterpart here)",
               gname, ref, pos, ref, (unsigned long long)a->v[i].node_id, chakra_comm_type_name(a->v[i].type),
               (unsigned long long)a->v[i].size);
      return;
    }
    const coll *x = &a->v[i++], *y = &b->v[j++];
    if (x->type != y->type || x->size != y->size) {
      report(s, CHAKRA_SEV_ERROR, r, 1, y->node_id, y->offset,
             "group %s: collective #%zu is %s of %llu bytes, but rank %d has %s of %llu bytes (node %llu)",
             gname, pos, chakra_comm_type_name(y->type), (unsigned long long)y->size, ref,
             chakra_comm_type_name(x->type), (unsigned long long)x->size, (unsigned long long)x->node_id);
      return;
    }
  }
}

/* Compares rank r's collectives of group gi (or WORLD) against the
 * reference rank's. */
static void compare_group(vstate *s, uint32_t gi, int ref, int r) {
  char qn[200];
  compare_seq(s, gi, ref, gi, r, group_label(s, gi, qn, sizeof qn));
}


/* Membership and first uses are kept per group and per rank, never as a
 * group x rank table: a job of 32,768 ranks has thousands of groups. */

/* The first collective of rank r on group gi, or NULL. */
static const coll *first_use(const vstate *s, uint32_t gi, int r) {
  const use *u = NULL;
  size_t lo = s->use_off[r], hi = s->use_off[r + 1];
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (s->uses[mid].group < gi) lo = mid + 1;
    else hi = mid;
  }
  if (lo < s->use_off[r + 1] && s->uses[lo].group == gi) u = &s->uses[lo];
  return u ? &s->colls[r].v[u->first] : NULL;
}

static int cmp_use(const void *a, const void *b) {
  const use *x = a, *y = b;
  if (x->group != y->group) return x->group < y->group ? -1 : 1;
  return x->first < y->first ? -1 : x->first > y->first;
}

/* uses (per rank, by group) and users (per group, by rank), in one pass
 * over every rank's collectives. */
static int index_uses(vstate *s) {
  size_t total = 0;
  for (int r = 0; r < s->n_files; r++) total += s->colls[r].n;
  s->uses = malloc((total ? total : 1) * sizeof *s->uses);
  s->use_off = malloc(((size_t)s->n_files + 1) * sizeof *s->use_off);
  s->user_off = calloc(s->n_groups + 1, sizeof *s->user_off);
  if (!s->uses || !s->use_off || !s->user_off) return -1;
  size_t o = 0;
  for (int r = 0; r < s->n_files; r++) {
    s->use_off[r] = o;
    const rank_colls *c = &s->colls[r];
    for (size_t i = 0; i < c->n; i++) s->uses[o + i] = (use){c->v[i].group, (uint32_t)i};
    qsort(s->uses + o, c->n, sizeof *s->uses, cmp_use);
    size_t k = o;
    for (size_t i = o; i < o + c->n; i++)
      if (i == o || s->uses[i].group != s->uses[k - 1].group) s->uses[k++] = s->uses[i];
    for (size_t i = o; i < k; i++) s->user_off[s->uses[i].group + 1]++;
    o = k;
  }
  s->use_off[s->n_files] = o;
  for (size_t g = 0; g < s->n_groups; g++) s->user_off[g + 1] += s->user_off[g];
  s->users = malloc((o ? o : 1) * sizeof *s->users);
  size_t *at = malloc((s->n_groups ? s->n_groups : 1) * sizeof *at);
  if (!s->users || !at) {
    free(at);
    return -1;
  }
  memcpy(at, s->user_off, s->n_groups * sizeof *at);
  for (int r = 0; r < s->n_files; r++)
    for (size_t i = s->use_off[r]; i < s->use_off[r + 1]; i++) s->users[at[s->uses[i].group]++] = (uint32_t)r;
  free(at);
  return 0;
}

/* Group gi's members: the definition's (those below the rank count), or
 * the ranks that name it. */
static int set_members(vstate *s, uint32_t gi, long d) {
  const uint32_t *src = d >= 0 ? s->defs.v[d].members : s->users + s->user_off[gi];
  size_t n = d >= 0 ? s->defs.v[d].n : s->user_off[gi + 1] - s->user_off[gi], k = 0;
  uint32_t *m = malloc((n ? n : 1) * sizeof *m);
  if (!m) return -1;
  for (size_t i = 0; i < n; i++)
    if (src[i] < (uint32_t)s->n_files) m[k++] = src[i];
  qsort(m, k, sizeof *m, cmp_u32);
  s->mem[gi] = m;
  s->n_mem[gi] = (uint32_t)k;
  return 0;
}

/* A configuration that names every rank below k and none above, k short
 * of the workload's count, may be for a workload of k ranks, or may leave
 * the ranks from k on out of every group on purpose: s->groups_for is k,
 * and the first rank from k on that uses a group it lacks says which. */
static void check_rank_count(vstate *s) {
  uint32_t n = (uint32_t)s->n_files, k = 0;
  uint8_t *named = calloc(n ? n : 1, 1);
  if (!named) return;
  for (size_t d = 0; d < s->defs.n; d++) {
    const cg_group *g = &s->defs.v[d];
    for (uint32_t m = 0; g->line && m < g->n; m++)
      if (g->members[m] < n) {
        named[g->members[m]] = 1;
        if (g->members[m] + 1 > k) k = g->members[m] + 1;
      }
  }
  uint32_t below = 0;
  for (uint32_t r = 0; r < k; r++) below += named[r];
  free(named);
  s->groups_for = k && k < n && below == k ? k : 0;
}

/* Rank r uses a group the configuration lacks, or is no member of: if the
 * configuration stops short of r (check_rank_count), that is why, said once. */
static void wrong_rank_count(vstate *s, int r) {
  if (!s->groups_for || (uint32_t)r < s->groups_for || s->told_rank_count) return;
  s->told_rank_count = 1;
  report_on(s, s->groups_path, "names ranks 0..%u only, but the workload has %d rank(s) (0..%d): a groups file "
            "for %u rank(s)?", s->groups_for - 1, s->n_files, s->n_files - 1, s->groups_for);
}

/* Ranks of the comm-group configuration that have no file. */
static void check_definitions(vstate *s) {
  check_rank_count(s);
  for (size_t d = 0; d < s->defs.n; d++) {
    const cg_group *g = &s->defs.v[d];
    for (uint32_t k = 0; g->line && k < g->n; k++)
      if (g->members[k] >= (uint32_t)s->n_files) {
        char what[400];
        report_on(s, s->groups_path, "%s", set_group_range_text(g, g->members[k], (uint32_t)s->n_files, what, sizeof what));
        break;
      }
  }
}

/* Who is in each group the collectives name: every rank for "" and "0";
 * the definition's members when the configuration or a METADATA node
 * defines the name; otherwise (no definitions at all) the ranks that use
 * it, with a warning, since the simulator needs the definition. */
static void resolve_groups(vstate *s) {
  int have_defs = s->groups_path || s->defs.n;
  size_t ng = s->n_groups ? s->n_groups : 1;
  s->mem = calloc(ng, sizeof *s->mem);
  s->n_mem = calloc(ng, sizeof *s->n_mem);
  s->all = calloc(ng, 1);
  s->def_of = malloc(ng * sizeof *s->def_of);
  s->whole = calloc(ng, 1);
  if (!s->mem || !s->n_mem || !s->all || !s->def_of || !s->whole || index_uses(s)) {
    s->oom = 1;
    return;
  }
  for (uint32_t gi = 0; gi < s->n_groups; gi++) {
    long d = s->groups[gi][0] ? cg_find(&s->defs, s->groups[gi]) : -1;
    s->def_of[gi] = d;
    s->all[gi] = !s->groups[gi][0] || (d >= 0 && s->defs.v[d].n == 0);
    if (!s->all[gi] && set_members(s, gi, d)) {
      s->oom = 1;
      return;
    }
    s->whole[gi] = s->all[gi] || s->n_mem[gi] == (uint32_t)s->n_files;
    if (!s->groups[gi][0] || d >= 0) continue;
    /* unknown: every rank that names it is told (once per group without definitions) */
    for (size_t k = s->user_off[gi]; k < s->user_off[gi + 1]; k++) {
      int r = (int)s->users[k];
      const coll *u = first_use(s, gi, r);
      char qn[200];
      group_label(s, gi, qn, sizeof qn);
      if (have_defs) wrong_rank_count(s, r);
      if (have_defs)
        report(s, CHAKRA_SEV_ERROR, r, 1, u->node_id, u->offset,
               "pg_name '%s' names no communicator group (none in %s%s; chakra sim refuses it)", qn,
               s->groups_path ? s->groups_path : "", s->groups_path ? " or the METADATA nodes" : "the METADATA nodes");
      else
        report(s, CHAKRA_SEV_WARNING, r, 1, u->node_id, u->offset,
               "pg_name '%s': no comm-group configuration or METADATA node defines it, so its members are taken "
               "to be the ranks that use it (chakra sim needs --comm-group-configuration)",
               qn);
      if (!have_defs) break; /* the warning once per group */
    }
  }
}

/* "0, 1, 2, 3" or "0, 1, ... (12 ranks)", and where the group is defined. */
static void describe_members(const vstate *s, const cg_group *g, char *buf, size_t size) {
  size_t len = 0;
  for (uint32_t k = 0; k < g->n && k < 8 && len < size; k++)
    len += (size_t)snprintf(buf + len, size - len, "%s%u", k ? ", " : "", g->members[k]);
  if (g->n > 8 && len < size) len += (size_t)snprintf(buf + len, size - len, ", ... (%u ranks)", g->n);
  if (len >= size) return;
  if (g->line) snprintf(buf + len, size - len, "; %s line %u", s->groups_path, g->line);
  else snprintf(buf + len, size - len, "; a METADATA node");
}

/* The simulator runs a collective on a group of every rank as one on ""
 * (resolve_group in lib/sim/coll.c) and numbers their streams in one
 * sequence per rank, so with two such names in use it pairs across them:
 * that sequence must agree too. */
static void match_world(vstate *s) {
  uint32_t used = 0;
  for (uint32_t gi = 0; gi < s->n_groups; gi++) used += s->whole[gi];
  /* by class: a group of every rank is every translation's, so each rank's
   * sequence is its representative's */
  int ref = s->by_class ? rep_of(s, class_of(s, 0)) : 0;
  for (uint32_t k = 0; used > 1 && k < (s->by_class ? s->n_cls : (uint32_t)s->n_files); k++) {
    int r = s->by_class ? rep_of(s, k) : (int)k;
    if (r != ref) compare_group(s, WORLD, ref, r);
  }
}

/* Rank r of group gi issues collectives on it but is not a member. */
static void not_a_member(vstate *s, uint32_t gi, int r) {
  const coll *u = first_use(s, gi, r);
  if (!u || s->def_of[gi] < 0) return;
  wrong_rank_count(s, r);
  char who[300], qn[200];
  describe_members(s, &s->defs.v[s->def_of[gi]], who, sizeof who);
  report(s, CHAKRA_SEV_ERROR, r, 1, u->node_id, u->offset, "group %s: this rank issues %s on it but is not a member (members %s)",
         group_label(s, gi, qn, sizeof qn), chakra_comm_type_name(u->type), who);
}

/* Group gi's members against its first, and the ranks that name it
 * without being one, in rank order: members and users merged. */
static void match_group(vstate *s, uint32_t gi) {
  size_t nm = s->all[gi] ? (size_t)s->n_files : s->n_mem[gi], i = 0;
  const uint32_t *us = s->users + s->user_off[gi];
  size_t nu = s->user_off[gi + 1] - s->user_off[gi], j = 0;
  int ref = -1;
  while (i < nm || j < nu) {
    uint32_t m = i < nm ? (s->all[gi] ? (uint32_t)i : s->mem[gi][i]) : UINT32_MAX;
    uint32_t u = j < nu ? us[j] : UINT32_MAX;
    int r = (int)(m < u ? m : u);
    j += u == (uint32_t)r;
    if (m != (uint32_t)r) {
      not_a_member(s, gi, r);
      continue;
    }
    i++;
    if (ref < 0) ref = r;
    else compare_group(s, gi, ref, r);
  }
}

/* The group that member m's representative uses where m uses gi: gi moved
 * back by m's offset from its representative (vclass.h). Its name is what
 * the binding makes of gi for the rank that far on the other side of the
 * representative. NO_GROUP when no representative names it. */
static uint32_t moved_group(vstate *s, uint32_t gi, int m, const char **name) {
  int mr = rep_of(s, class_of(s, m));
  *name = s->groups[gi];
  if (mr == m || s->all[gi]) return gi;
  uint32_t y = setfile_grid_move(s->man, (uint32_t)mr, (uint32_t)m, (uint32_t)mr);
  *name = chakra_set_bind_group(s->set, y, s->groups[gi]);
  uint64_t h;
  uint32_t gj = *name ? group_find(s, *name, &h) : HMAP_NONE;
  return gj == HMAP_NONE ? NO_GROUP : gj;
}

static int is_member(const vstate *s, uint32_t gi, int r) {
  return s->all[gi] || bsearch(&(uint32_t){(uint32_t)r}, s->mem[gi], s->n_mem[gi], sizeof *s->mem[gi], cmp_u32);
}

/* By class: every member m of a group a representative r uses issues on
 * it what m's representative issues on the group moved back (moved_group),
 * so each class among the members is compared with r once; a
 * representative that is no member is one per class. */
static void match_group_by_class(vstate *s, uint32_t gi, uint8_t *seen) {
  const uint32_t *us = s->users + s->user_off[gi];
  size_t nu = s->user_off[gi + 1] - s->user_off[gi];
  size_t nm = s->all[gi] ? s->n_cls : s->n_mem[gi];
  for (size_t j = 0; j < nu; j++) {
    int r = (int)us[j];
    if (!is_member(s, gi, r)) {
      not_a_member(s, gi, r);
      continue;
    }
    memset(seen, 0, s->n_cls);
    for (size_t k = 0; k < nm; k++) {
      int m = s->all[gi] ? rep_of(s, (uint32_t)k) : (int)s->mem[gi][k];
      uint32_t c = class_of(s, m);
      if (seen[c]) continue;
      seen[c] = 1;
      const char *name;
      uint32_t gj = moved_group(s, gi, m, &name);
      int mr = rep_of(s, c);
      if (mr == r && gj == gi) continue;
      char qn[200];
      const char *label = gj == NO_GROUP ? cg_quote(name ? name : "", qn, sizeof qn) : group_label(s, gj, qn, sizeof qn);
      compare_seq(s, gi, r, gj, mr, label);
    }
  }
}

/* Each group's members agree, and only members use it; by class for the
 * groups a definition gives (an unknown group's members are its users,
 * here the representatives: match_group). */
static void match_collectives(vstate *s) {
  uint64_t errors = s->sum->errors;
  uint8_t *seen = s->by_class ? malloc(s->n_cls) : NULL;
  if (s->by_class && !seen) {
    s->oom = 1;
    return;
  }
  for (uint32_t gi = 0; gi < s->n_groups; gi++) {
    if (s->by_class && (s->all[gi] || s->def_of[gi] >= 0)) match_group_by_class(s, gi, seen);
    else match_group(s, gi);
  }
  free(seen);
  if (s->sum->errors == errors) match_world(s); /* one first difference per group is enough */
}

/* Matched sends and receives share a key index; the arrays are sorted and
 * every send has its receive, so they pair up in order. */
static void assign_keys(vstate *s) {
  s->keys = malloc((s->n_sends ? s->n_sends : 1) * sizeof *s->keys);
  if (!s->keys) {
    s->oom = 1;
    return;
  }
  uint32_t k = 0;
  for (size_t i = 0; i < s->n_sends; i++) {
    const p2p *a = &s->sends[i], *b = &s->recvs[i], *last = k ? &s->keys[k - 1] : NULL;
    if (!last || a->src != last->src || a->dst != last->dst || a->tag != last->tag || a->size != last->size)
      s->keys[k++] = *a;
    dl_of(s, a->file)->key[a->idx] = k - 1;
    dl_of(s, b->file)->key[b->idx] = k - 1;
  }
}


/* The rank of the deadlock check's rank i (by class, its class's representative). */
static int dl_rank_of(const vstate *s, int i) { return s->by_class ? rep_of(s, (uint32_t)i) : i; }

/* The source of receive key k as the receiving rank of the deadlock check,
 * i, has it: by class the key's source is a representative (note_p2p), moved
 * back by i's offset. */
static int recv_source(const vstate *s, const p2p *k, int i) {
  if (!s->by_class) return k->src;
  return (int)setfile_grid_move(s->man, (uint32_t)k->src, (uint32_t)k->dst, (uint32_t)dl_rank_of(s, i));
}

/* What the stuck node waits for, as "..." after "never completes: ". */
static void stuck_reason(const vstate *s, const dl_stuck *x, char *buf, size_t size) {
  if (x->kind == DL_COLL && s->by_class) {
    snprintf(buf, size, "the ranks of class %d (rank %d and its translations) never issue their collective #%llu "
             "of the group", x->missing_rank, rep_of(s, (uint32_t)x->missing_rank), (unsigned long long)x->ordinal);
  } else if (x->kind == DL_COLL) {
    snprintf(buf, size, "rank %d never issues its collective #%llu of the group", x->missing_rank,
             (unsigned long long)x->ordinal);
  } else {
    const p2p *k = &s->keys[x->key];
    if (x->kind == DL_RECV) snprintf(buf, size, "rank %d cannot reach its send", recv_source(s, k, x->rank));
    else snprintf(buf, size, "rank %d cannot reach its receive (rendezvous: the receiver invites each send)", k->dst);
  }
}

/* The group of the stuck collective x as its rank names it (by class the
 * check's groups are orbits: check_deadlock). */
static uint32_t own_group(const vstate *s, const dl_stuck *x) {
  if (!s->by_class) return x->key;
  const rank_colls *c = &s->colls[dl_rank_of(s, x->rank)];
  for (size_t i = 0; i < c->n; i++)
    if (s->orbit[c->v[i].group] == x->key) return c->v[i].group;
  return x->key;
}

/* "group G: collective #k (TYPE, N bytes)" or "send to rank D (tag T, N bytes)" ... */
static void stuck_what(const vstate *s, const dl_stuck *x, char *buf, size_t size) {
  const dl_rank *g = &s->dl[x->rank];
  char qn[200];
  if (x->kind == DL_COLL) {
    snprintf(buf, size, "group %s: collective #%llu (%s, %llu bytes)", group_label(s, own_group(s, x), qn, sizeof qn),
             (unsigned long long)x->ordinal, chakra_comm_type_name(g->comm_type[x->node]),
             (unsigned long long)g->size[x->node]);
  } else {
    const p2p *k = &s->keys[x->key];
    if (x->kind == DL_RECV)
      snprintf(buf, size, "receive from rank %d (tag %d, %llu bytes)", recv_source(s, k, x->rank), k->tag,
               (unsigned long long)k->size);
    else
      snprintf(buf, size, "send to rank %d (tag %d, %llu bytes)", k->dst, k->tag, (unsigned long long)k->size);
  }
}

static void report_stuck(void *ctx, const dl_stuck *x) {
  vstate *s = ctx;
  const dl_rank *g = &s->dl[x->rank];
  uint64_t id = g->id[x->node], off = g->offset[x->node];
  int rank = dl_rank_of(s, x->rank);
  char what[400], why[200];
  if (x->kind == DL_LOCAL) {
    report(s, CHAKRA_SEV_ERROR, rank, 1, id, off,
           "deadlock: node never becomes ready (%u node(s) of this rank never finish)", x->unfinished);
    return;
  }
  stuck_what(s, x, what, sizeof what);
  stuck_reason(s, x, why, sizeof why);
  if (x->waiter == UINT32_MAX) {
    report(s, CHAKRA_SEV_ERROR, rank, 1, id, off, "deadlock: %s never completes: %s (%u node(s) of this rank never finish)",
           what, why, x->unfinished);
    return;
  }
  int wk = g->kind[x->waiter];
  report(s, CHAKRA_SEV_ERROR, rank, 1, id, off,
         "deadlock: %s holds the communication slot and never completes: %s; the %s node %llu waits behind it for "
         "the slot (the simulator gives a free slot to the lowest-id ready node) (%u node(s) of this rank never "
         "finish)",
         what, why, wk == DL_SEND ? "send" : wk == DL_COLL ? "collective" : "communication",
         (unsigned long long)g->id[x->waiter], x->unfinished);
}

/* The groups of every rank are one sequence to the simulator
 * (match_world): for the deadlock check they are one group, the first. */
static void one_world(vstate *s) {
  uint32_t world = UINT32_MAX;
  for (uint32_t gi = 0; gi < s->n_groups && world == UINT32_MAX; gi++)
    if (s->whole[gi]) world = gi;
  int n_dl = s->by_class ? (int)s->n_cls : s->n_files;
  for (int r = 0; r < n_dl && world != UINT32_MAX; r++) {
    dl_rank *g = &s->dl[r];
    for (uint32_t i = 0; i < g->n; i++)
      if (g->kind[i] == DL_COLL && s->whole[g->key[i]]) g->key[i] = world;
  }
}

/* The deadlock check's groups, per rank: each group as it is. */
static dl_group *rank_groups(vstate *s) {
  dl_group *gr = calloc(s->n_groups ? s->n_groups : 1, sizeof *gr);
  for (uint32_t gi = 0; gr && gi < s->n_groups; gi++) {
    gr[gi].need = gr[gi].n = s->all[gi] ? (uint32_t)s->n_files : s->n_mem[gi];
    gr[gi].list = s->mem[gi];
  }
  return gr;
}

/* One orbit of groups by class: gi, used by a representative, and the
 * groups its members' representatives use in its place (moved_group),
 * each class weighing its members in gi. 0, or -1 when out of memory. */
static int add_orbit(vstate *s, uint32_t gi, uint32_t o, dl_group *gr, uint32_t *weight, int *first) {
  uint32_t nc = s->n_cls, *list = malloc(nc * sizeof *list), *w = calloc(nc, sizeof *w);
  if (!list || !w) {
    free(list), free(w);
    return -1;
  }
  size_t nm = s->all[gi] ? (size_t)s->n_files : s->n_mem[gi];
  for (uint32_t c = 0; c < nc; c++) weight[c] = 0, first[c] = -1;
  for (size_t k = 0; k < nm; k++) {
    int m = s->all[gi] ? (int)k : (int)s->mem[gi][k];
    uint32_t c = class_of(s, m);
    if (!weight[c]++) first[c] = m;
  }
  uint32_t n = 0;
  for (uint32_t c = 0; c < nc; c++) {
    if (!weight[c]) continue;
    const char *name;
    int m = is_member(s, gi, rep_of(s, c)) ? rep_of(s, c) : first[c];
    uint32_t gj = moved_group(s, gi, m, &name);
    if (gj != NO_GROUP) s->orbit[gj] = o;
    list[n] = c, w[n++] = weight[c];
  }
  gr[o] = (dl_group){.need = (uint32_t)nm, .n = n, .list = list, .weight = w};
  return 0;
}

/* By class the execution runs on the representatives (vclass.h): a
 * group's translations are one group there, in which each class counts
 * for as many members as it has in the group. The ranks' collectives are
 * renumbered to those orbits; *n receives their count. */
static dl_group *class_groups(vstate *s, uint32_t *n) {
  dl_group *gr = calloc(s->n_groups ? s->n_groups : 1, sizeof *gr);
  uint32_t *weight = malloc(s->n_cls * sizeof *weight);
  int *first = malloc(s->n_cls * sizeof *first);
  s->orbit = malloc((s->n_groups ? s->n_groups : 1) * sizeof *s->orbit);
  *n = 0;
  for (uint32_t gi = 0; s->orbit && gi < s->n_groups; gi++) s->orbit[gi] = UINT32_MAX;
  for (uint32_t c = 0; gr && weight && first && s->orbit && c < s->n_cls; c++) {
    dl_rank *g = &s->dl[c];
    for (uint32_t i = 0; i < g->n; i++) {
      if (g->kind[i] != DL_COLL || s->orbit[g->key[i]] != UINT32_MAX) continue;
      if (add_orbit(s, g->key[i], *n, gr, weight, first)) goto oom;
      s->orbit[g->key[i]] = (*n)++;
    }
  }
  if (!gr || !weight || !first || !s->orbit) goto oom;
  /* one_world made every group of all ranks the first: they are its orbit */
  for (uint32_t gi = 0, world = UINT32_MAX; gi < s->n_groups; gi++)
    if (s->whole[gi] && world == UINT32_MAX) world = gi;
    else if (s->whole[gi]) s->orbit[gi] = s->orbit[world];
  for (uint32_t c = 0; c < s->n_cls; c++)
    for (uint32_t i = 0; i < s->dl[c].n; i++)
      if (s->dl[c].kind[i] == DL_COLL) s->dl[c].key[i] = s->orbit[s->dl[c].key[i]];
  free(weight), free(first);
  return gr;
oom:
  for (uint32_t o = 0; gr && o < *n; o++) free((void *)gr[o].list), free((void *)gr[o].weight);
  free(gr), free(weight), free(first);
  return NULL;
}

/* Runs the untimed execution (deadlock.h) once the workload is otherwise
 * sound: with unmatched messages or disagreeing collectives the errors
 * above already say why ranks would stop. By class it runs on the
 * representatives, with message keys and groups taken up to translation
 * (docs/validate.md says why that is the same run). */
static void check_deadlock(vstate *s) {
  assign_keys(s);
  if (s->oom) return;
  one_world(s);
  uint32_t n_groups = (uint32_t)s->n_groups;
  dl_group *gr = s->by_class ? class_groups(s, &n_groups) : rank_groups(s);
  if (!gr) {
    s->oom = 1;
    return;
  }
  uint32_t n_keys = s->n_sends ? (uint32_t)s->n_sends : 1;
  int n_dl = s->by_class ? (int)s->n_cls : s->n_files;
  if (dl_run(s->dl, n_dl, n_keys, n_groups, gr, s->rendezvous, report_stuck, s) < 0) s->oom = 1;
  for (uint32_t o = 0; s->by_class && o < n_groups; o++) free((void *)gr[o].list), free((void *)gr[o].weight);
  free(gr);
}

int chakra_validate(char *const *paths, int n, chakra_diag_fn fn, void *ctx,
                    chakra_validate_summary *sum, chakra_error *err) {
  return chakra_validate_with(paths, n, NULL, fn, ctx, sum, err);
}

int chakra_validate_with(char *const *paths, int n, const chakra_validate_options *opt, chakra_diag_fn fn,
                         void *ctx, chakra_validate_summary *sum, chakra_error *err) {
  memset(sum, 0, sizeof *sum);
  if (n <= 0) return 0;
  chakra_set_options so = {.comm_groups = opt ? opt->comm_groups : NULL, .no_default_groups = 1};
  chakra_set *set;
  int rc = chakra_set_open_files(&set, (const char *const *)paths, (uint32_t)n, &so, err);
  if (rc) return rc;
  rc = chakra_validate_set(set, opt, fn, ctx, sum, err);
  chakra_set_close(set);
  return rc;
}

/* The comm-group file's groups (the set's), to which METADATA nodes add. */
static int copy_definitions(vstate *s, chakra_error *err) {
  int rc = set_groups_load(s->set, err);
  const cg_set *g = set_groups(s->set);
  for (size_t i = 0; !rc && i < g->n; i++) {
    if (cg_add_group(&s->defs, g->v[i].name, g->v[i].members, g->v[i].n))
      rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    else s->defs.v[s->defs.n - 1].line = g->v[i].line;
  }
  return rc;
}

/* By class: the classes' names in problems, "TEMPLATE (class C, rank R
 * and its translations)". 0, or -1 when out of memory. */
static int class_names(vstate *s) {
  s->man = chakra_set_manifest(s->set);
  s->n_cls = chakra_set_classes(s->set);
  s->cls_size = (uint32_t)s->n_files / s->n_cls;
  s->cls_name = calloc(s->n_cls, sizeof *s->cls_name);
  for (uint32_t c = 0; s->cls_name && c < s->n_cls; c++) {
    chakra_input in;
    chakra_error e = {0};
    const char *path = NULL;
    if (chakra_set_input(s->set, c, &in, &e) || !(path = in.path))
      path = chakra_set_rank_name(s->set, (uint32_t)rep_of(s, c));
    size_t len = strlen(path) + 80;
    if (!(s->cls_name[c] = malloc(len))) return -1;
    snprintf(s->cls_name[c], len, "%s (class %u, rank %d and its translations)", path, c, rep_of(s, c));
  }
  return s->cls_name ? 0 : -1;
}

static void vstate_free(vstate *s) {
  int n_dl = s->by_class ? (int)s->n_cls : s->n_files;
  for (int r = 0; s->dl && r < n_dl; r++) dl_rank_free(&s->dl[r]);
  free(s->dl);
  free(s->keys);
  for (size_t i = 0; s->mem && i < s->n_groups; i++) free(s->mem[i]);
  free(s->mem), free(s->n_mem), free(s->all);
  free(s->uses), free(s->use_off), free(s->users), free(s->user_off);
  free(s->def_of);
  free(s->whole);
  free(s->orbit);
  cg_set_free(&s->defs);
  for (int r = 0; s->colls && r < s->n_files; r++) free(s->colls[r].v);
  for (size_t i = 0; i < s->n_groups; i++) free(s->groups[i]);
  hmap_free(&s->group_ids);
  free(s->groups);
  free(s->colls);
  free(s->sends);
  free(s->recvs);
  for (uint32_t c = 0; s->cls_name && c < s->n_cls; c++) free(s->cls_name[c]);
  free(s->cls_name);
}

int chakra_validate_set(const chakra_set *set, const chakra_validate_options *opt, chakra_diag_fn fn, void *ctx,
                        chakra_validate_summary *sum, chakra_error *err) {
  memset(sum, 0, sizeof *sum);
  int n = (int)chakra_set_ranks(set);
  vstate s = {.set = set, .n_files = n, .fn = fn, .ctx = ctx, .sum = sum};
  s.groups_path = chakra_set_groups_path(set);
  s.rendezvous = opt ? opt->rendezvous : 0;
  s.by_class = !(opt && opt->per_rank) && vc_grid(set) && !vc_metadata(set) && vc_bindings_hold(set);
  int rc = copy_definitions(&s, err);
  if (rc) {
    cg_set_free(&s.defs);
    return rc;
  }
  int n_dl = s.by_class ? (int)chakra_set_classes(set) : n;
  s.colls = calloc(n ? (size_t)n : 1, sizeof *s.colls);
  if (n > 1) s.dl = calloc((size_t)n_dl, sizeof *s.dl);
  if (!s.colls || (n > 1 && !s.dl) || (s.by_class && class_names(&s))) {
    vstate_free(&s);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  for (int k = 0; k < n_dl && !s.oom; k++) {
    validate_file(&s, s.by_class ? rep_of(&s, (uint32_t)k) : k);
    sum->files += s.by_class ? (int)s.cls_size : 1;
  }
  sum->classes = s.by_class ? s.n_cls : 0;
  if (n > 1 && !s.oom && !sum->unreadable) {
    match_p2p(&s);
    check_definitions(&s);
    resolve_groups(&s);
    if (!s.oom) match_collectives(&s);
    if (!sum->errors && !s.oom) check_deadlock(&s);
  }
  int oom = s.oom;
  vstate_free(&s);
  return oom ? chakra_error_set(err, CHAKRA_ENOMEM, "out of memory") : 0;
}
