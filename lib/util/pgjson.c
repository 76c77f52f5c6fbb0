/* pgjson.c - see pgjson.h. */
#include "pgjson.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

static int entry_read(yajl_val g, pg_entry *e) {
  const char *pn[] = {"pg_name", NULL}, *rk[] = {"ranks", NULL}, *gs[] = {"group_size", NULL},
             *bi[] = {"backend_id", NULL};
  yajl_val name = yajl_tree_get(g, pn, yajl_t_any), ranks = yajl_tree_get(g, rk, yajl_t_array),
           size = yajl_tree_get(g, gs, yajl_t_number), bid = yajl_tree_get(g, bi, yajl_t_number);
  char buf[32];
  if (name && YAJL_IS_STRING(name)) e->name = strdup(name->u.string);
  else if (name && YAJL_IS_INTEGER(name)) snprintf(buf, sizeof buf, "%lld", YAJL_GET_INTEGER(name)), e->name = strdup(buf);
  if (name && (YAJL_IS_STRING(name) || YAJL_IS_INTEGER(name)) && !e->name) return PG_ENOMEM;
  if (size && YAJL_IS_INTEGER(size)) e->size = YAJL_GET_INTEGER(size), e->has_size = 1;
  if (bid && YAJL_IS_INTEGER(bid)) e->backend_id = YAJL_GET_INTEGER(bid), e->has_backend_id = 1;
  if (!ranks) return PG_OK;
  e->has_ranks = 1;
  size_t n = ranks->u.array.len;
  if (n == 0) return PG_OK;
  if (!(e->ranks = malloc(n * sizeof *e->ranks))) return PG_ENOMEM;
  for (size_t j = 0; j < n; j++) {
    yajl_val r = ranks->u.array.values[j];
    if (!YAJL_IS_INTEGER(r) || YAJL_GET_INTEGER(r) < 0) {
      free(e->ranks);
      e->ranks = NULL;
      e->bad_rank = 1;
      return PG_OK;
    }
    e->ranks[j] = YAJL_GET_INTEGER(r);
  }
  e->n_ranks = n;
  return PG_OK;
}

int pg_list_parse(const char *json, pg_list *out, char *why, size_t why_size) {
  memset(out, 0, sizeof *out);
  if (why_size) why[0] = 0;
  yajl_val v = yajl_tree_parse(json, why, why_size);
  if (!v || !YAJL_IS_ARRAY(v)) {
    if (v) yajl_tree_free(v);
    return PG_ENOTLIST;
  }
  int rc = PG_OK;
  size_t n = v->u.array.len;
  out->v = calloc(n ? n : 1, sizeof *out->v);
  if (!out->v) rc = PG_ENOMEM;
  for (size_t i = 0; i < n && !rc; i++, out->n++) rc = entry_read(v->u.array.values[i], &out->v[i]);
  yajl_tree_free(v);
  return rc;
}

void pg_list_free(pg_list *l) {
  for (size_t i = 0; i < l->n; i++) {
    free(l->v[i].name);
    free(l->v[i].ranks);
  }
  free(l->v);
  memset(l, 0, sizeof *l);
}
