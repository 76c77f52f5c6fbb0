/* convgroups.c - process groups for chakra convert pytorch; see
 * convgroups.h. */
#include "convgroups.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../util/commgroups.h"
#include "../util/outfile.h"
#include "../util/strbuf.h"
#include "pyrepr.h"
#include "../util/vec.h"

pgroup *conv_pg_by_name(const conv *c, const char *name) {
  for (size_t j = 0; j < c->n_pgs; j++)
    if (strcmp(c->pgs[j].name, name) == 0) return &c->pgs[j];
  return NULL;
}

/* Applies one entry of a process-group list; 1 = stop reading (compat). */
static int apply_group(conv *c, uint32_t i, size_t k, const cg_pg_entry *e) {
  if (!e->name) return c->compat ? 0 : conv_node_err(c, i, "process group #%zu has no pg_name", k);
  if (e->bad_rank) {
    if (c->compat) return 1;
    return conv_node_err(c, i, "process group '%s' lists a rank that is not a non-negative integer", e->name);
  }
  pgroup *slot = conv_pg_by_name(c, e->name);
  if (!slot) {
    if (!(slot = VEC_PUSH(c->pgs, c->n_pgs, c->cap_pgs))) return conv_oom(c);
    memset(slot, 0, sizeof *slot);
    if (!(slot->name = strdup(e->name))) return conv_oom(c);
  } else {
    free(slot->ranks);
    slot->ranks = NULL;
    slot->n_ranks = 0;
  }
  if (e->has_backend_id) slot->backend_id = e->backend_id, slot->has_backend_id = 1;
  if (e->has_size) slot->size = e->size;
  if (e->n_ranks) {
    if (!(slot->ranks = malloc(e->n_ranks * sizeof *slot->ranks))) return conv_oom(c);
    memcpy(slot->ranks, e->ranks, e->n_ranks * sizeof *slot->ranks);
    slot->n_ranks = e->n_ranks;
  }
  return 0;
}

int conv_parse_groups(conv *c) {
  for (size_t s = 0; s < c->h->n_side; s++) {
    const ht_side *sd = &c->h->side[s];
    if (!sd->pg_json) continue;
    uint32_t i = sd->node;
    char why[256] = "";
    cg_pg_list l;
    int rc = cg_pg_parse(sd->pg_json, &l, why, sizeof why);
    if (rc == CG_PG_ENOMEM) {
      cg_pg_free(&l);
      return conv_oom(c);
    }
    if (rc == CG_PG_ENOTLIST) {
      cg_pg_free(&l);
      if (c->compat) continue; /* the reference does not look inside */
      return conv_node_err(c, i, "the process-group list is not a JSON list%s%s", why[0] ? ": " : "", why);
    }
    for (size_t k = 0; k < l.n && !rc; k++) rc = apply_group(c, i, k, &l.v[k]);
    cg_pg_free(&l);
    if (rc == 1) return 0;
    if (rc) return rc;
  }
  c->rep->process_groups = c->n_pgs;
  return 0;
}

const pgroup *conv_pg_by_backend(const conv *c, int64_t id) {
  for (size_t j = 0; j < c->n_pgs; j++)
    if (c->pgs[j].has_backend_id && c->pgs[j].backend_id == id) return &c->pgs[j];
  return NULL;
}

int conv_write_groups(conv *c, const char *path) {
  outfile *f;
  int rc = outfile_open(&f, path, outfile_name_is_gzip(path), c->err);
  if (rc) return rc;
  strbuf b = {0};
  strbuf_putc(&b, '{');
  int first = 1;
  for (size_t j = 0; j < c->n_pgs; j++) {
    const pgroup *g = &c->pgs[j];
    /* "0" (and "") is the default group: ASTRA-sim takes it as all ranks
     * and group ids in this file must be > 0 */
    if (!g->name[0] || strcmp(g->name, "0") == 0) continue;
    char *end;
    errno = 0;
    long long num = strtoll(g->name, &end, 10);
    if (*end || errno || num <= 0)
      conv_warnf(c, c->h->path, "process group '%s' is not a positive number: ASTRA-sim cannot read it from %s (chakra sim can)",
            g->name, path);
    if (!first) strbuf_put(&b, ", ", 2);
    first = 0;
    json_str(&b, (const unsigned char *)g->name, strlen(g->name));
    strbuf_put(&b, ": [", 3);
    size_t cnt = g->ranks ? g->n_ranks : (size_t)(g->size > 0 ? g->size : 0);
    for (size_t r = 0; r < cnt; r++) {
      if (r) strbuf_put(&b, ", ", 2);
      strbuf_i64(&b, g->ranks ? g->ranks[r] : (int64_t)r);
    }
    strbuf_putc(&b, ']');
  }
  strbuf_put(&b, "}\n", 2);
  if (b.oom) rc = conv_oom(c);
  if (!rc) rc = outfile_write(f, b.s, b.n, c->err);
  strbuf_free(&b);
  if (rc) {
    outfile_discard(f);
    return rc;
  }
  return outfile_commit(f, c->err);
}
