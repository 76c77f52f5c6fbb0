/* validate.c - per-file and cross-rank trace checks; see include/chakra/validate.h. */
#include "chakra/validate.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../trace/setint.h"
#include "../util/cmp.h"
#include "../util/commgroups.h"
#include "chakra/graph.h"
#include "chakra/node.h"
#include "chakra/trace.h"
#include "deadlock.h"
#include "../util/diag.h"
#include "../util/vec.h"
#include "../util/hmap.h"

typedef struct p2p {
  int32_t src, dst, tag;
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
  int oom;
} vstate;

static void report(vstate *s, chakra_severity sev, int file, int has_node, uint64_t id, uint64_t off,
                   const char *fmt, ...) __attribute__((format(printf, 7, 8)));

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
  vreport(s, sev, chakra_set_rank_name(s->set, (uint32_t)file), has_node, id, off, fmt, ap);
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
  p.file = chakra_set_rank_name(s->set, (uint32_t)s->cur);
  deliver(s, &p);
}

static const char *group_name(const void *ctx, uint32_t gi, size_t *len) {
  const char *name = ((const vstate *)ctx)->groups[gi];
  *len = strlen(name);
  return name;
}

static uint32_t group_index(vstate *s, const char *name) {
  if (chakra_pg_is_world(name)) name = "";
  size_t len = strlen(name);
  uint64_t h = hmap_hash_str(name, len);
  uint32_t gi = hmap_find_str(&s->group_ids, h, name, len, group_name, s);
  if (gi != HMAP_NONE) return gi;
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
  p2p m = {is_send ? s->cur : c->peer, is_send ? c->peer : s->cur, n->comm_tag, n->size, n->id,
           n->offset, s->cur, (uint32_t)(n - s->g->nodes)};
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
  chakra_graph_options opt = {.tolerant = 1, .diag = graph_problem, .diag_ctx = s};
  chakra_graph *g;
  chakra_error err = {0};
  if (chakra_set_load_rank(s->set, (uint32_t)r, &opt, &g, &err)) {
    /* The message already names the file and offset; strip the file name. */
    const char *what = err.msg, *name = chakra_set_rank_name(s->set, (uint32_t)r);
    size_t plen = strlen(name);
    if (strncmp(what, name, plen) == 0 && what[plen] == ':') what += plen + 2;
    s->sum->unreadable++;
    report(s, CHAKRA_SEV_UNREADABLE, r, 0, 0, 0, "%s", what);
    return;
  }
  s->sum->nodes += g->n;
  s->g = g;
  for (uint32_t t = 0; t < g->n; t++) check_node(s, g, &g->nodes[g->topo[t]]);
  if (s->dl && dl_rank_init(&s->dl[r], g, node_group, s)) s->oom = 1;
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
           "send to rank %d (tag %d, %llu bytes) has no matching receive", m->dst, m->tag,
           (unsigned long long)m->size);
  else
    report(s, CHAKRA_SEV_ERROR, m->file, 1, m->node_id, m->offset,
           "receive from rank %d (tag %d, %llu bytes) has no matching send", m->src, m->tag,
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

/* A group's name for messages: quoted to one line (it comes from the trace). */
static const char *group_label(const vstate *s, uint32_t gi, char *buf, size_t size) {
  if (gi == WORLD) return "(every rank, any name: the simulator runs them as one sequence)";
  return s->groups[gi][0] ? cg_quote(s->groups[gi], buf, size) : "(all ranks)";
}

static int in_seq(const vstate *s, uint32_t gi, uint32_t g) { return gi == WORLD ? s->whole[g] : g == gi; }

/* Compares rank r's collectives of group gi (or WORLD) against the
 * reference rank's. */
static void compare_group(vstate *s, uint32_t gi, int ref, int r) {
  const rank_colls *a = &s->colls[ref], *b = &s->colls[r];
  size_t i = 0, j = 0, pos = 0;
  char qn[200];
  const char *gname = group_label(s, gi, qn, sizeof qn);
  for (;; pos++) {
    while (i < a->n && !in_seq(s, gi, a->v[i].group)) i++;
    while (j < b->n && !in_seq(s, gi, b->v[j].group)) j++;
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
  for (int r = 1; used > 1 && r < s->n_files; r++) compare_group(s, WORLD, 0, r);
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

/* Each group's members against its first, and the ranks that name it
 * without being one, in rank order: members and users merged. */
static void match_collectives(vstate *s) {
  uint64_t errors = s->sum->errors;
  for (uint32_t gi = 0; gi < s->n_groups; gi++) {
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
    s->dl[a->file].key[a->idx] = k - 1;
    s->dl[b->file].key[b->idx] = k - 1;
  }
}


/* What the stuck node waits for, as "..." after "never completes: ". */
static void stuck_reason(const vstate *s, const dl_stuck *x, char *buf, size_t size) {
  if (x->kind == DL_COLL) {
    snprintf(buf, size, "rank %d never issues its collective #%llu of the group", x->missing_rank,
             (unsigned long long)x->ordinal);
  } else {
    const p2p *k = &s->keys[x->key];
    if (x->kind == DL_RECV) snprintf(buf, size, "rank %d cannot reach its send", k->src);
    else snprintf(buf, size, "rank %d cannot reach its receive (rendezvous: the receiver invites each send)", k->dst);
  }
}

/* "group G: collective #k (TYPE, N bytes)" or "send to rank D (tag T, N bytes)" ... */
static void stuck_what(const vstate *s, const dl_stuck *x, char *buf, size_t size) {
  const dl_rank *g = &s->dl[x->rank];
  char qn[200];
  if (x->kind == DL_COLL) {
    snprintf(buf, size, "group %s: collective #%llu (%s, %llu bytes)", group_label(s, x->key, qn, sizeof qn),
             (unsigned long long)x->ordinal, chakra_comm_type_name(g->comm_type[x->node]),
             (unsigned long long)g->size[x->node]);
  } else {
    const p2p *k = &s->keys[x->key];
    if (x->kind == DL_RECV)
      snprintf(buf, size, "receive from rank %d (tag %d, %llu bytes)", k->src, k->tag, (unsigned long long)k->size);
    else
      snprintf(buf, size, "send to rank %d (tag %d, %llu bytes)", k->dst, k->tag, (unsigned long long)k->size);
  }
}

static void report_stuck(void *ctx, const dl_stuck *x) {
  vstate *s = ctx;
  const dl_rank *g = &s->dl[x->rank];
  uint64_t id = g->id[x->node], off = g->offset[x->node];
  char what[400], why[200];
  if (x->kind == DL_LOCAL) {
    report(s, CHAKRA_SEV_ERROR, x->rank, 1, id, off,
           "deadlock: node never becomes ready (%u node(s) of this rank never finish)", x->unfinished);
    return;
  }
  stuck_what(s, x, what, sizeof what);
  stuck_reason(s, x, why, sizeof why);
  if (x->waiter == UINT32_MAX) {
    report(s, CHAKRA_SEV_ERROR, x->rank, 1, id, off, "deadlock: %s never completes: %s (%u node(s) of this rank never finish)",
           what, why, x->unfinished);
    return;
  }
  int wk = g->kind[x->waiter];
  report(s, CHAKRA_SEV_ERROR, x->rank, 1, id, off,
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
  for (int r = 0; r < s->n_files && world != UINT32_MAX; r++) {
    dl_rank *g = &s->dl[r];
    for (uint32_t i = 0; i < g->n; i++)
      if (g->kind[i] == DL_COLL && s->whole[g->key[i]]) g->key[i] = world;
  }
}

/* Runs the untimed execution (deadlock.h) once the workload is otherwise
 * sound: with unmatched messages or disagreeing collectives the errors
 * above already say why ranks would stop. */
static void check_deadlock(vstate *s) {
  assign_keys(s);
  uint32_t *members = calloc(s->n_groups ? s->n_groups : 1, sizeof *members);
  if (s->oom || !members) {
    free(members);
    s->oom = 1;
    return;
  }
  for (uint32_t gi = 0; gi < s->n_groups; gi++) members[gi] = s->all[gi] ? (uint32_t)s->n_files : s->n_mem[gi];
  one_world(s);
  uint32_t n_keys = s->n_sends ? (uint32_t)s->n_sends : 1;
  if (dl_run(s->dl, s->n_files, n_keys, (uint32_t)s->n_groups, members, (const uint32_t *const *)s->mem,
             s->rendezvous, report_stuck, s) < 0)
    s->oom = 1;
  free(members);
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

int chakra_validate_set(const chakra_set *set, const chakra_validate_options *opt, chakra_diag_fn fn, void *ctx,
                        chakra_validate_summary *sum, chakra_error *err) {
  memset(sum, 0, sizeof *sum);
  int n = (int)chakra_set_ranks(set);
  vstate s = {.set = set, .n_files = n, .fn = fn, .ctx = ctx, .sum = sum};
  s.groups_path = chakra_set_groups_path(set);
  s.rendezvous = opt ? opt->rendezvous : 0;
  int rc = copy_definitions(&s, err);
  if (rc) {
    cg_set_free(&s.defs);
    return rc;
  }
  s.colls = calloc(n ? (size_t)n : 1, sizeof *s.colls);
  if (n > 1) s.dl = calloc((size_t)n, sizeof *s.dl);
  if (!s.colls || (n > 1 && !s.dl)) {
    free(s.colls);
    cg_set_free(&s.defs);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  for (int r = 0; r < n && !s.oom; r++) {
    validate_file(&s, r);
    sum->files++;
  }
  if (n > 1 && !s.oom && !sum->unreadable) {
    match_p2p(&s);
    check_definitions(&s);
    resolve_groups(&s);
    if (!s.oom) match_collectives(&s);
    if (!sum->errors && !s.oom) check_deadlock(&s);
  }
  for (int r = 0; s.dl && r < n; r++) dl_rank_free(&s.dl[r]);
  free(s.dl);
  free(s.keys);
  for (size_t i = 0; s.mem && i < s.n_groups; i++) free(s.mem[i]);
  free(s.mem), free(s.n_mem), free(s.all);
  free(s.uses), free(s.use_off), free(s.users), free(s.user_off);
  free(s.def_of);
  free(s.whole);
  cg_set_free(&s.defs);
  for (int r = 0; r < n; r++) free(s.colls[r].v);
  for (size_t i = 0; i < s.n_groups; i++) free(s.groups[i]);
  hmap_free(&s.group_ids);
  free(s.groups);
  free(s.colls);
  free(s.sends);
  free(s.recvs);
  return s.oom ? chakra_error_set(err, CHAKRA_ENOMEM, "out of memory") : 0;
}
