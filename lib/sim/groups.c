/* groups.c - communicator groups; see groups.h. */
#include "groups.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/commgroups.h"

struct groups_state {
  uint32_t **sorted;     /* member lists sorted ascending, per group */
  uint64_t *next;        /* per NPU and group: the next stream id */
};

int groups_find(const sim *s, const char *name) {
  for (int i = 0; i < s->groups.n; i++)
    if (strcmp(s->groups.v[i].name, name) == 0) return i;
  return -1;
}

int groups_is_all(const char *pg) { return !pg || !*pg || strcmp(pg, "0") == 0; }

int groups_known(const sim *s, const char *pg_name) { return groups_is_all(pg_name) || groups_find(s, pg_name) >= 0; }

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
  if (s->grp) return 0;
  groups_state *g = calloc(1, sizeof *g);
  if (!g) return -1;
  s->grp = g;
  size_t ng = (size_t)s->groups.n;
  g->sorted = calloc(ng + 1, sizeof *g->sorted);
  g->next = malloc(((size_t)s->npus * ng + 1) * sizeof *g->next);
  if (!g->sorted || !g->next) return -1;
  for (size_t i = 0; i < ng; i++) {
    const sim_group *x = &s->groups.v[i];
    if (!(g->sorted[i] = malloc(x->n * sizeof(uint32_t)))) return -1;
    memcpy(g->sorted[i], x->members, x->n * sizeof(uint32_t));
    qsort(g->sorted[i], x->n, sizeof(uint32_t), cmp_u32);
  }
  for (uint32_t r = 0; r < s->npus; r++)
    for (size_t i = 0; i < ng; i++) g->next[r * ng + i] = (uint64_t)(i + 1) * 1000000u;
  return 0;
}

const uint32_t *groups_sorted(const sim *s, int g) { return s->grp->sorted[g]; }

uint64_t groups_next_stream(sim *s, uint32_t rank, int g) { return s->grp->next[(size_t)rank * (size_t)s->groups.n + (size_t)g]++; }

void groups_free(sim *s) {
  groups_state *g = s->grp;
  if (!g) return;
  for (int i = 0; g->sorted && i < s->groups.n; i++) free(g->sorted[i]);
  free(g->sorted);
  free(g->next);
  free(g);
  s->grp = NULL;
}
