/* groups.c - communicator groups; see groups.h. */
#include "groups.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cmp.h"
#include "../util/commgroups.h"
#include "../util/nameidx.h"

struct groups_state {
  /* A workload of 32,768 ranks has thousands of groups and a lookup per
   * collective, so a scan per lookup was most of such a run. */
  nameidx idx;           /* the names of s->groups */
  uint32_t **sorted;     /* member lists sorted ascending, per group */
  size_t *next_off;      /* per group: where its members' counters start in next */
  uint64_t *next;        /* per group and member (sorted order): the next stream id */
  int ready;             /* sorted, next_off and next are complete */
};

static groups_state *state(sim *s) {
  if (!s->grp) s->grp = calloc(1, sizeof *s->grp);
  return s->grp;
}

static nameidx_recs recs(const sim_groups *v) { return (nameidx_recs){v->v, sizeof *v->v, offsetof(sim_group, name)}; }

int groups_find(sim *s, const char *name) {
  groups_state *g = state(s);
  if (!g || nameidx_sync(&g->idx, recs(&s->groups), (size_t)s->groups.n)) { /* no memory for the index: scan */
    for (int i = 0; i < s->groups.n; i++)
      if (strcmp(s->groups.v[i].name, name) == 0) return i;
    return -1;
  }
  return (int)nameidx_find(&g->idx, recs(&s->groups), name);
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
  nameidx_free(&g->idx);
  free(g);
  s->grp = NULL;
}
