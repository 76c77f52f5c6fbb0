/* comms.c - communicators for groups, MPI tags for messages; see comms.h. */
#include "comms.h"
#include "../util/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/commgroups.h"
#include "../util/cmp.h"
#include "../util/vec.h"

#define WAIT_GROUPS "the other ranks to agree on the communicator groups"
#define WAIT_TAGS "the other ranks to agree on the message tags"

/* ---- this rank's definitions, as "name<TAB>r,r,r<LF>" lines ---- */

/* The groups util/commgroups read, as definition lines. */
static int put_defs(strbuf *t, cg_set *got, chakra_error *err) {
  int rc = 0;
  for (size_t i = 0; i < got->n && !rc; i++) {
    const cg_group *g = &got->v[i];
    if (strpbrk(g->name, "\t\n")) {
      rc = chakra_error_set(err, CHAKRA_EINVAL, "group \"%s\": a name with a tab or line break", g->name);
      break;
    }
    strbuf_puts(t, g->name);
    strbuf_putc(t, '\t');
    for (uint32_t k = 0; k < g->n; k++) {
      if (k) strbuf_putc(t, ',');
      strbuf_u64(t, g->members[k]);
    }
    strbuf_putc(t, '\n');
  }
  cg_set_free(got);
  return rc;
}

/* The trace set's groups (its file: members outside the job are an error). */
static int set_defs(strbuf *t, const chakra_set *set, chakra_error *err) {
  if (chakra_set_groups_origin(set) == CHAKRA_GROUPS_NONE) return 0;
  int rc = chakra_set_load_groups(set, err);
  cg_set got = {0};
  for (size_t i = 0; !rc && i < chakra_set_group_count(set); i++) {
    uint32_t n;
    const uint32_t *m = chakra_set_group_members(set, i, &n);
    if (cg_add_group(&got, chakra_set_group_name(set, i), m, n)) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  if (rc) {
    cg_set_free(&got);
    return rc;
  }
  return put_defs(t, &got, err);
}

static int meta_defs(strbuf *t, const rp_plan *p, const char *json, uint32_t world, chakra_error *err) {
  char where[4200];
  snprintf(where, sizeof where, "%s: rank %u: METADATA node", p->path, p->rank);
  cg_set got = {0};
  int rc = cg_add_metadata(&got, json, where, world, err);
  if (rc) {
    cg_set_free(&got);
    return rc;
  }
  return put_defs(t, &got, err);
}

int rp_comms_local(rp_comms *c, const rp_plan *p, const chakra_set *set, chakra_error *err) {
  memset(c, 0, sizeof *c);
  c->all = MPI_COMM_NULL;
  uint32_t world = chakra_set_ranks(set);
  strbuf t = {0};
  int rc = set_defs(&t, set, err);
  for (uint32_t k = 0; k < p->n_meta && !rc; k++) rc = meta_defs(&t, p, p->meta_groups[k], world, err);
  if (!rc && !strbuf_cstr(&t)) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  c->local = t.s;
  c->local_len = t.n;
  return rc;
}

/* ---- the job's table ---- */

static int find(const rp_comms *c, const char *name) {
  for (uint32_t i = 0; i < c->n_groups; i++)
    if (strcmp(c->groups[i].name, name) == 0) return (int)i;
  return -1;
}

/* Adds one "name\tr,r" line unless the name is known already. */
static int add_line(rp_comms *c, char *line) {
  char *tab = strchr(line, '\t');
  if (!tab) return 0;
  *tab = 0;
  if (find(c, line) >= 0) return 0;
  rp_group *g = VEC_APPEND(c->groups, c->n_groups);
  if (!g) return -1;
  c->n_groups--; /* counted once complete */
  size_t cap = 1;
  for (const char *s = tab + 1; *s; s++) cap += *s == ',';
  g->name = strdup(line);
  g->members = malloc(cap * sizeof *g->members);
  g->n = 0;
  if (!g->name || !g->members) {
    free(g->name);
    free(g->members);
    return -1;
  }
  for (char *s = tab + 1, *end; *s; s = *end ? end + 1 : end) {
    g->members[g->n++] = (uint32_t)strtoul(s, &end, 10);
    if (end == s) break;
  }
  c->n_groups++;
  return 0;
}

int rp_comms_exchange(rp_comms *c, rp_peers *w, chakra_error *err) {
  int mine = (int)c->local_len, *lens = malloc((size_t)w->size * sizeof *lens);
  int *displs = malloc((size_t)w->size * sizeof *displs);
  int rc = lens && displs ? 0 : chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  char *all = NULL;
  MPI_Request r;
  if (!(rc = rp_agree(w, rc, WAIT_GROUPS, err))) {
    MPI_Iallgather(&mine, 1, MPI_INT, lens, 1, MPI_INT, w->comm, &r);
    rc = rp_wait(w, &r, WAIT_GROUPS, err);
  }
  size_t total = 0;
  for (int k = 0; !rc && k < w->size; k++) displs[k] = (int)total, total += (size_t)lens[k];
  if (!rc && !(all = malloc(total + 1))) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  if (!w->timed_out && !(rc = rp_agree(w, rc, WAIT_GROUPS, err))) {
    MPI_Iallgatherv(c->local, mine, MPI_CHAR, all, lens, displs, MPI_CHAR, w->comm, &r);
    rc = rp_wait(w, &r, WAIT_GROUPS, err);
  }
  if (!rc) all[total] = 0;
  for (char *s = all, *nl; !rc && *s; s = nl + 1) {
    if (!(nl = strchr(s, '\n'))) break;
    *nl = 0;
    if (add_line(c, s)) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  free(all);
  free(lens);
  free(displs);
  return rc;
}

int rp_comms_resolve(rp_comms *c, const rp_plan *p, chakra_error *err) {
  uint32_t n = p->n_pg ? p->n_pg : 1;
  c->group_of = malloc(n * sizeof *c->group_of);
  c->comm = malloc(n * sizeof *c->comm);
  c->size = calloc(n, sizeof *c->size);
  if (!c->group_of || !c->comm || !c->size) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (uint32_t k = 0; k < n; k++) c->group_of[k] = -1, c->comm[k] = MPI_COMM_NULL;
  for (uint32_t k = 1; k < p->n_pg; k++) {
    if (cg_is_all(p->pg_names[k])) continue;
    int g = find(c, p->pg_names[k]);
    if (g < 0)
      return chakra_error_set(err, CHAKRA_EINVAL,
                              "%s: rank %u: pg_name '%s' names no communicator group (give "
                              "--comm-group-configuration, or a METADATA node defining it)",
                              p->path, p->rank, p->pg_names[k]);
    int member = 0;
    for (uint32_t i = 0; i < c->groups[g].n; i++) member |= c->groups[g].members[i] == p->rank;
    if (!member)
      return chakra_error_set(err, CHAKRA_EINVAL, "%s: rank %u: collectives on group '%s', which does not list this rank",
                              p->path, p->rank, p->pg_names[k]);
    c->group_of[k] = g;
  }
  return 0;
}

/* Position of rank in g, or MPI_UNDEFINED. */
static int position(const rp_group *g, uint32_t rank) {
  for (uint32_t i = 0; i < g->n; i++)
    if (g->members[i] == rank) return (int)i;
  return MPI_UNDEFINED;
}

int rp_comms_build(rp_comms *c, const rp_plan *p, rp_peers *w, chakra_error *err) {
  unsigned char *used = calloc(c->n_groups + 1, 1), *any = calloc(c->n_groups + 1, 1);
  MPI_Comm *made = calloc(c->n_groups + 1, sizeof *made);
  int rc = used && any && made ? 0 : chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  MPI_Request r;
  if (!(rc = rp_agree(w, rc, WAIT_GROUPS, err))) {
    for (uint32_t k = 1; k < p->n_pg; k++)
      if (c->group_of[k] >= 0) used[c->group_of[k]] = 1;
    MPI_Iallreduce(used, any, (int)c->n_groups + 1, MPI_UNSIGNED_CHAR, MPI_MAX, w->comm, &r);
    rc = rp_wait(w, &r, WAIT_GROUPS, err);
  }
  /* Every rank makes the same calls from here on, with the same table. */
  int mpi = rc ? MPI_SUCCESS : MPI_Comm_dup(w->comm, &c->all);
  for (uint32_t g = 0; !rc && g < c->n_groups && mpi == MPI_SUCCESS; g++) {
    made[g] = MPI_COMM_NULL;
    if (!any[g]) continue;
    int pos = position(&c->groups[g], p->rank);
    mpi = MPI_Comm_split(w->comm, pos == MPI_UNDEFINED ? MPI_UNDEFINED : 0, pos, &made[g]);
  }
  if (!rc && mpi == MPI_SUCCESS) {
    MPI_Comm_size(c->all, &c->size[0]);
    c->comm[0] = c->all;
  }
  for (uint32_t k = 1; !rc && k < p->n_pg && mpi == MPI_SUCCESS; k++) {
    int g = c->group_of[k];
    c->comm[k] = g < 0 ? c->all : made[g];
    MPI_Comm_size(c->comm[k], &c->size[k]);
  }
  /* The plan's pg indexes own the communicators from here on; unused
   * ones (groups of other ranks) were MPI_COMM_NULL for this rank. */
  free(used);
  free(any);
  free(made);
  if (!rc && mpi != MPI_SUCCESS)
    rc = chakra_error_set(err, CHAKRA_EIO, "rank %u: MPI could not build a communicator", p->rank);
  return rc;
}

void rp_comms_free(rp_comms *c) {
  for (uint32_t i = 0; i < c->n_groups; i++) {
    free(c->groups[i].name);
    free(c->groups[i].members);
  }
  free(c->groups);
  free(c->local);
  free(c->group_of);
  free(c->comm);
  free(c->size);
  memset(c, 0, sizeof *c);
}

/* ---- MPI tags for (comm_tag, size) ---- */

typedef struct pair {
  uint64_t tag, size;
} pair;

static size_t unique(pair *v, size_t n) {
  if (n) qsort(v, n, sizeof *v, cmp_u64_pair);
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (!k || cmp_u64_pair(&v[k - 1], &v[i])) v[k++] = v[i];
  return k;
}

/* Every rank's pairs on every rank. */
static int gather_pairs(pair *mine, int n_mine, rp_peers *w, pair **all, size_t *n_all, chakra_error *err) {
  int *cnt = malloc((size_t)w->size * sizeof *cnt), *dsp = malloc((size_t)w->size * sizeof *dsp);
  int words = 2 * n_mine, rc = cnt && dsp ? 0 : chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  MPI_Request r;
  if (!(rc = rp_agree(w, rc, WAIT_TAGS, err))) {
    MPI_Iallgather(&words, 1, MPI_INT, cnt, 1, MPI_INT, w->comm, &r);
    rc = rp_wait(w, &r, WAIT_TAGS, err);
  }
  size_t total = 0;
  for (int k = 0; !rc && k < w->size; k++) dsp[k] = (int)total, total += (size_t)cnt[k];
  if (!rc && !(*all = malloc((total ? total : 2) * sizeof(uint64_t))))
    rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  if (!w->timed_out && !(rc = rp_agree(w, rc, WAIT_TAGS, err))) {
    MPI_Iallgatherv(mine, words, MPI_UINT64_T, *all, cnt, dsp, MPI_UINT64_T, w->comm, &r);
    rc = rp_wait(w, &r, WAIT_TAGS, err);
  }
  free(cnt);
  free(dsp);
  *n_all = total / 2;
  return rc;
}

int rp_tags_assign(rp_plan *p, rp_peers *w, chakra_error *err) {
  pair *mine = malloc((p->n_p2p ? p->n_p2p : 1) * sizeof *mine), *all = NULL;
  size_t n = 0, n_all = 0;
  for (uint32_t i = 0; mine && i < p->n; i++)
    if (p->nodes[i].kind == RP_SEND || p->nodes[i].kind == RP_RECV)
      mine[n++] = (pair){(uint64_t)p->nodes[i].tag, p->nodes[i].value};
  n = unique(mine, n);
  int rc = mine ? 0 : chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  if (!(rc = rp_agree(w, rc, WAIT_TAGS, err))) rc = gather_pairs(mine, (int)n, w, &all, &n_all, err);
  if (!rc) n_all = unique(all, n_all);
  int *ub, flag = 0;
  MPI_Comm_get_attr(w->comm, MPI_TAG_UB, &ub, &flag);
  if (!rc && flag && n_all > (size_t)*ub + 1)
    rc = chakra_error_set(err, CHAKRA_EINVAL, "the job's messages use %zu distinct (tag, size) pairs; MPI offers %d tags",
                          n_all, *ub + 1);
  for (uint32_t i = 0; i < p->n && !rc; i++) {
    rp_node *x = &p->nodes[i];
    if (x->kind != RP_SEND && x->kind != RP_RECV) continue;
    pair key = {(uint64_t)x->tag, x->value};
    pair *hit = bsearch(&key, all, n_all, sizeof *all, cmp_u64_pair);
    x->tag = (int32_t)(hit - all);
  }
  free(mine);
  free(all);
  return rc;
}
