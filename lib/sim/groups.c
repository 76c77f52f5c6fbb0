/* groups.c - communicator groups; see groups.h. */
#include "groups.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/commgroups.h"

struct groups_state {
  /* Name index: open addressing, slot = group index + 1 (0 = empty). A
   * workload of 32,768 ranks has thousands of groups and a lookup per
   * collective, so a scan per lookup was most of such a run. */
  int *slot;
  size_t cap, indexed;   /* groups 0..indexed-1 are in the index */
  uint32_t **sorted;     /* member lists sorted ascending, per group */
  size_t *next_off;      /* per group: where its members' counters start in next */
  uint64_t *next;        /* per group and member (sorted order): the next stream id */
  int ready;             /* sorted, next_off and next are complete */
};

static uint64_t name_hash(const char *s) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static groups_state *state(sim *s) {
  if (!s->grp) s->grp = calloc(1, sizeof *s->grp);
  return s->grp;
}

static void index_put(groups_state *g, const sim_groups *v, int i) {
  size_t k = name_hash(v->v[i].name) & (g->cap - 1);
  while (g->slot[k]) k = (k + 1) & (g->cap - 1);
  g->slot[k] = i + 1;
}

/* Brings the index up to the groups defined so far; -1 out of memory. */
static int index_update(sim *s) {
  groups_state *g = state(s);
  if (!g) return -1;
  size_t n = (size_t)s->groups.n;
  if (g->indexed == n) return 0;
  if (2 * n > g->cap) {
    size_t cap = 64;
    while (cap < 2 * n) cap *= 2;
    int *slot = calloc(cap, sizeof *slot);
    if (!slot) return -1;
    free(g->slot);
    g->slot = slot, g->cap = cap, g->indexed = 0;
  }
  for (; g->indexed < n; g->indexed++) index_put(g, &s->groups, (int)g->indexed);
  return 0;
}

int groups_find(sim *s, const char *name) {
  if (index_update(s)) { /* no memory for the index: scan */
    for (int i = 0; i < s->groups.n; i++)
      if (strcmp(s->groups.v[i].name, name) == 0) return i;
    return -1;
  }
  const groups_state *g = s->grp;
  if (!g->cap) return -1; /* no group defined yet */
  for (size_t k = name_hash(name) & (g->cap - 1); g->slot[k]; k = (k + 1) & (g->cap - 1))
    if (strcmp(s->groups.v[g->slot[k] - 1].name, name) == 0) return g->slot[k] - 1;
  return -1;
}

int groups_is_all(const char *pg) { return !pg || !*pg || strcmp(pg, "0") == 0; }

int groups_known(sim *s, const char *pg_name) { return groups_is_all(pg_name) || groups_find(s, pg_name) >= 0; }

int groups_add_pytorch(sim *s, const char *json, const char *path, uint32_t rank, chakra_error *err) {
  char where[4200];
  snprintf(where, sizeof where, "%s: rank %u: METADATA node", path, rank);
  cg_set got = {0};
  int rc = cg_add_metadata(&got, json, where, s->npus, err);
  for (size_t i = 0; i < got.n && !rc; i++)
    if (groups_find(s, got.v[i].name) < 0 && sim_groups_add(&s->groups, got.v[i].name, got.v[i].members, got.v[i].n))
      rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  cg_set_free(&got);
  return rc;
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

int groups_ready(sim *s) {
  groups_state *g = state(s);
  if (!g) return -1;
  if (g->ready) return 0;
  if (g->sorted) return -1; /* an earlier attempt ran out of memory: the run stops */
  size_t ng = (size_t)s->groups.n, total = 0;
  g->sorted = calloc(ng + 1, sizeof *g->sorted);
  g->next_off = malloc((ng + 1) * sizeof *g->next_off);
  if (!g->sorted || !g->next_off) return -1;
  for (size_t i = 0; i < ng; i++) {
    const sim_group *x = &s->groups.v[i];
    if (!(g->sorted[i] = malloc((x->n ? x->n : 1) * sizeof(uint32_t)))) return -1;
    memcpy(g->sorted[i], x->members, x->n * sizeof(uint32_t));
    qsort(g->sorted[i], x->n, sizeof(uint32_t), cmp_u32);
    g->next_off[i] = total;
    total += x->n;
  }
  if (!(g->next = malloc((total ? total : 1) * sizeof *g->next))) return -1;
  for (size_t i = 0; i < ng; i++)
    for (uint32_t k = 0; k < s->groups.v[i].n; k++) g->next[g->next_off[i] + k] = (uint64_t)(i + 1) * 1000000u;
  g->ready = 1;
  return 0;
}

const uint32_t *groups_sorted(const sim *s, int g) { return s->grp->sorted[g]; }

/* Position of rank in group g's sorted members, or -1. */
static long member_pos(const sim *s, int g, uint32_t rank) {
  const uint32_t *v = s->grp->sorted[g];
  size_t lo = 0, hi = s->groups.v[g].n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (v[mid] < rank) lo = mid + 1;
    else hi = mid;
  }
  return lo < s->groups.v[g].n && v[lo] == rank ? (long)lo : -1;
}

int groups_is_member(const sim *s, int g, uint32_t rank) { return member_pos(s, g, rank) >= 0; }

uint64_t groups_next_stream(sim *s, uint32_t rank, int g) {
  long pos = member_pos(s, g, rank); /* a member: coll_start checked it */
  return s->grp->next[s->grp->next_off[g] + (size_t)(pos < 0 ? 0 : pos)]++;
}

void groups_free(sim *s) {
  groups_state *g = s->grp;
  if (!g) return;
  for (int i = 0; g->sorted && i < s->groups.n; i++) free(g->sorted[i]);
  free(g->sorted);
  free(g->next_off);
  free(g->next);
  free(g->slot);
  free(g);
  s->grp = NULL;
}
