/* groups.c - communicator groups from JSON and METADATA nodes; see groups.h. */
#include "groups.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "dag.h"

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* Adds (name, ranks); an existing name keeps its first definition. */
static int add_group(coll_groups *g, const char *name, yajl_val ranks, const char *src, chakra_error *err) {
  if (coll_groups_find(g, name) >= 0) return 0;
  if (!YAJL_IS_ARRAY(ranks))
    return chakra_error_set(err, CHAKRA_EFORMAT, "%s: group '%s': expected a list of ranks", src, name);
  coll_group *v = coll_grow(g->v, g->n, &g->cap, sizeof *v);
  if (!v) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  g->v = v;
  size_t n = ranks->u.array.len;
  coll_group x = {strdup(name), malloc((n ? n : 1) * sizeof(uint32_t)), (uint32_t)n};
  if (!x.name || !x.members) {
    free(x.name), free(x.members);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < n; i++) {
    yajl_val r = ranks->u.array.values[i];
    if (!YAJL_IS_INTEGER(r) || YAJL_GET_INTEGER(r) < 0 || YAJL_GET_INTEGER(r) > UINT32_MAX) {
      free(x.name), free(x.members);
      return chakra_error_set(err, CHAKRA_EFORMAT, "%s: group '%s': rank %zu is not a non-negative integer", src, name, i);
    }
    x.members[i] = (uint32_t)YAJL_GET_INTEGER(r);
  }
  qsort(x.members, n, sizeof *x.members, cmp_u32);
  for (size_t i = 1; i < n; i++)
    if (x.members[i] == x.members[i - 1]) {
      free(x.name), free(x.members);
      return chakra_error_set(err, CHAKRA_EFORMAT, "%s: group '%s': rank %u listed twice", src, name, x.members[i]);
    }
  g->v[g->n++] = x;
  return 0;
}

int coll_groups_load_json(coll_groups *g, const char *path, chakra_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f) return chakra_error_set(err, CHAKRA_EIO, "%s: cannot open", path);
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  for (size_t k; buf && (k = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
    n += k;
    if (n + 1 == cap) {
      char *b = realloc(buf, cap *= 2);
      if (!b) free(buf);
      buf = b;
    }
  }
  fclose(f);
  if (!buf) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  buf[n] = 0;
  char why[256];
  yajl_val v = yajl_tree_parse(buf, why, sizeof why);
  free(buf);
  if (!v || !YAJL_IS_OBJECT(v)) {
    if (v) yajl_tree_free(v);
    return chakra_error_set(err, CHAKRA_EFORMAT, "%s: expected a JSON object of group lists: %s", path, v ? "" : why);
  }
  int rc = 0;
  for (size_t i = 0; !rc && i < v->u.object.len; i++)
    rc = add_group(g, v->u.object.keys[i], v->u.object.values[i], path, err);
  yajl_tree_free(v);
  return rc;
}

int coll_groups_add_metadata(coll_groups *g, const char *text, chakra_error *err) {
  size_t len = strlen(text);
  if (len <= 4 || !strstr(text, "pg_name")) return 0;
  char *json = strndup(text + 2, len - 4); /* ['...'] around the JSON */
  if (!json) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  char why[256];
  yajl_val v = yajl_tree_parse(json, why, sizeof why);
  free(json);
  if (!v || !YAJL_IS_ARRAY(v)) {
    if (v) yajl_tree_free(v);
    return 0; /* not a process-group list */
  }
  int rc = 0;
  for (size_t i = 0; !rc && i < v->u.array.len; i++) {
    yajl_val o = v->u.array.values[i];
    const char *pn[] = {"pg_name", NULL}, *rk[] = {"ranks", NULL};
    yajl_val name = yajl_tree_get(o, pn, yajl_t_string), ranks = yajl_tree_get(o, rk, yajl_t_array);
    if (name && ranks) rc = add_group(g, YAJL_GET_STRING(name), ranks, "METADATA node", err);
  }
  yajl_tree_free(v);
  return rc;
}

long coll_groups_find(const coll_groups *g, const char *name) {
  for (size_t i = 0; i < g->n; i++)
    if (strcmp(g->v[i].name, name) == 0) return (long)i;
  return -1;
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
  memset(g, 0, sizeof *g);
}
