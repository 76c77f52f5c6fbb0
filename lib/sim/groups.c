/* groups.c - communicator groups; see groups.h. */
#include "groups.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/pgjson.h"

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

int groups_add_pytorch(sim *s, const char *json, uint32_t rank, chakra_error *err) {
  pg_list l;
  char why[256];
  int rc = pg_list_parse(json, &l, why, sizeof why);
  if (rc == PG_ENOMEM) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  if (rc == PG_ENOTLIST) return chakra_error_set(err, CHAKRA_EFORMAT, "rank %u: METADATA node: process groups are not a JSON list", rank);
  for (size_t i = 0; i < l.n && !rc; i++) {
    const pg_entry *e = &l.v[i];
    if (!e->name || !e->has_ranks || e->bad_rank) {
      if (e->bad_rank && e->name) {
        rc = chakra_error_set(err, CHAKRA_EFORMAT, "rank %u: METADATA node: group '%s' lists a rank outside 0..%u", rank, e->name, s->npus - 1);
        break;
      }
      rc = chakra_error_set(err, CHAKRA_EFORMAT, "rank %u: METADATA node: a process group without pg_name or ranks", rank);
      break;
    }
    if (groups_find(s, e->name) >= 0 || groups_is_all(e->name)) continue;
    size_t n = e->n_ranks;
    uint32_t *m = malloc((n ? n : s->npus) * sizeof *m);
    if (!m) {
      rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
      break;
    }
    if (n == 0) for (uint32_t k = 0; k < s->npus; k++) m[k] = k;
    for (size_t k = 0; k < n && !rc; k++) {
      if (e->ranks[k] < 0 || (uint64_t)e->ranks[k] >= s->npus)
        rc = chakra_error_set(err, CHAKRA_EFORMAT, "rank %u: METADATA node: group '%s' lists a rank outside 0..%u", rank, e->name, s->npus - 1);
      else m[k] = (uint32_t)e->ranks[k];
    }
    if (!rc && sim_groups_add(&s->groups, e->name, m, n ? (uint32_t)n : s->npus))
      rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    free(m);
  }
  pg_list_free(&l);
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
