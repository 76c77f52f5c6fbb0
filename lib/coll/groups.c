/* groups.c - communicator groups from JSON and METADATA nodes; see groups.h. */
#include "groups.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cmp.h"
#include "../util/commgroups.h"
#include "dag.h"

static nameidx_recs recs(const coll_groups *g) { return (nameidx_recs){g->v, sizeof *g->v, offsetof(coll_group, name)}; }

/* Appends what src read, members sorted; names g already has keep their
 * first definition. */
static int take(coll_groups *g, cg_set *src, chakra_error *err) {
  int rc = 0;
  for (size_t i = 0; i < src->n && !rc; i++) {
    cg_group *x = &src->v[i];
    if (coll_groups_find(g, x->name) >= 0) continue;
    coll_group *v = coll_grow(g->v, g->n, &g->cap, sizeof *v);
    if (!v) {
      rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
      break;
    }
    g->v = v;
    if (!x->members && !(x->members = malloc(sizeof *x->members))) {
      rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
      break;
    }
    qsort(x->members, x->n, sizeof *x->members, cmp_u32);
    g->v[g->n++] = (coll_group){x->name, x->members, x->n};
    x->name = NULL, x->members = NULL;
    if (nameidx_sync(&g->idx, recs(g), g->n)) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  cg_set_free(src);
  return rc;
}

int coll_groups_add(coll_groups *g, const char *name, const uint32_t *members, uint32_t n, chakra_error *err) {
  cg_set got = {0};
  if (cg_add_group(&got, name, members, n)) {
    cg_set_free(&got);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  return take(g, &got, err);
}

int coll_groups_add_metadata(coll_groups *g, const char *text, const char *where, chakra_error *err) {
  cg_set got = {0};
  int rc = cg_add_metadata(&got, text, where, 0, err);
  if (rc) {
    cg_set_free(&got);
    return rc;
  }
  return take(g, &got, err);
}

long coll_groups_find(const coll_groups *g, const char *name) {
  long i = nameidx_find(&g->idx, recs(g), name);
  for (size_t k = g->idx.n; i < 0 && k < g->n; k++) /* not indexed: out of memory for the index */
    if (strcmp(g->v[k].name, name) == 0) i = (long)k;
  return i;
}

int coll_groups_finish(coll_groups *g, uint32_t npus, chakra_error *err) {
  for (size_t i = 0; i < g->n; i++) {
    coll_group *x = &g->v[i];
    if (x->n == 0) {
      uint32_t *m = realloc(x->members, (npus ? npus : 1) * sizeof *m);
      if (!m) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
      for (uint32_t r = 0; r < npus; r++) m[r] = r;
      x->members = m;
      x->n = npus;
    }
    if (x->members[x->n - 1] >= npus)
      return chakra_error_set(err, CHAKRA_EINVAL, "group '%s': rank %u, but the workload has %u ranks", x->name,
                              x->members[x->n - 1], npus);
  }
  return 0;
}

void coll_groups_free(coll_groups *g) {
  for (size_t i = 0; i < g->n; i++) free(g->v[i].name), free(g->v[i].members);
  free(g->v);
  nameidx_free(&g->idx);
  memset(g, 0, sizeof *g);
}
