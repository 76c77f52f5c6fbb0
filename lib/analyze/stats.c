/* stats.c - per-rank statistics; see include/chakra/stats.h. */
#include "chakra/stats.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../util/nameidx.h"

#include "chakra/graph.h"
#include "chakra/node.h"
#include "chakra/set.h"
#include "../util/vec.h"

/* Sums of durations, bytes and ops saturate at 2^64 - 1 instead of
 * wrapping (two nodes of 2^63 us once summed to 0), and say so. */
static inline void sat_add(uint64_t *acc, uint64_t v, chakra_rank_stats *s) {
  if (*acc > UINT64_MAX - v) {
    *acc = UINT64_MAX;
    s->saturated = 1;
  } else {
    *acc += v;
  }
}

static nameidx_recs group_recs(const chakra_rank_stats *s) {
  return (nameidx_recs){s->groups, sizeof *s->groups, offsetof(chakra_group_stats, name)};
}

/* Adds ops and bytes to s's group of that name (made when new); with idx
 * (a sum of many ranks has thousands of groups) found through it, else by
 * a scan (a rank has few groups). */
static int add_group(chakra_rank_stats *s, const char *name, uint64_t ops, uint64_t bytes, nameidx *idx) {
  long found = idx ? nameidx_find(idx, group_recs(s), name) : -1;
  for (uint64_t i = 0; !idx && found < 0 && i < s->n_groups; i++)
    if (strcmp(s->groups[i].name, name) == 0) found = (long)i;
  if (found >= 0) {
    s->groups[found].ops += ops;
    sat_add(&s->groups[found].bytes, bytes, s);
    return 0;
  }
  chakra_group_stats *g = VEC_APPEND(s->groups, s->n_groups);
  if (!g) return -1;
  *g = (chakra_group_stats){strdup(name), ops, bytes};
  if (!g->name) {
    s->n_groups--;
    return -1;
  }
  return idx ? nameidx_sync(idx, group_recs(s), s->n_groups) : 0;
}

static int count_node(chakra_rank_stats *s, const chakra_graph *g, uint32_t i) {
  const chakra_gnode *n = &g->nodes[i];
  s->by_type[n->type >= 0 && n->type < 8 ? n->type : 8]++;
  chakra_node_class c;
  chakra_node_classify(n, 0, 0, &c);
  switch (c.kind) {
    case CHAKRA_KIND_CPU:
    case CHAKRA_KIND_COMPUTE:
      if (c.kind == CHAKRA_KIND_CPU) s->cpu_ops++, sat_add(&s->cpu_us, n->duration_micros, s);
      else s->gpu_ops++, sat_add(&s->gpu_us, n->duration_micros, s);
      sat_add(&s->num_ops, n->num_ops, s);
      sat_add(&s->tensor_bytes, n->size, s);
      return 0;
    case CHAKRA_KIND_COLL: {
      int t = c.comm_type >= 0 ? c.comm_type : 10;
      s->coll_ops[t]++;
      sat_add(&s->coll_bytes[t], n->size, s);
      return add_group(s, chakra_node_pg(g, n), 1, n->size, NULL);
    }
    case CHAKRA_KIND_SEND:
      s->send_ops++, sat_add(&s->send_bytes, n->size, s);
      return add_group(s, chakra_node_pg(g, n), 1, n->size, NULL);
    case CHAKRA_KIND_RECV:
      s->recv_ops++, sat_add(&s->recv_bytes, n->size, s);
      return 0; /* bytes counted once, at the sender */
    case CHAKRA_KIND_MEM_LOAD:
    case CHAKRA_KIND_MEM_STORE:
      s->mem_ops++, sat_add(&s->mem_bytes, n->size, s);
      return 0;
    default:
      return 0;
  }
}

static char *attr_string(const chakra_metadata *m, const char *name) {
  for (size_t i = 0; i < m->n_attr; i++)
    if (m->attr[i]->name && strcmp(m->attr[i]->name, name) == 0 &&
        m->attr[i]->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL)
      return strdup(m->attr[i]->string_val);
  return strdup("");
}

int chakra_stats_graph(const chakra_graph *g, chakra_rank_stats *s, chakra_error *err) {
  memset(s, 0, sizeof *s);
  int rc = 0;
  s->ranks = 1;
  s->version = strdup(g->metadata->version ? g->metadata->version : "");
  s->schema = attr_string(g->metadata, "schema");
  s->nodes = g->n;
  s->data_deps = g->raw_data_deps;
  s->ctrl_deps = g->raw_ctrl_deps;
  s->edges = g->dep_off[g->n];
  s->missing_ctrl_deps = g->missing_ctrl_deps;
  s->self_ctrl_deps = g->self_ctrl_deps;
  s->duplicate_deps = g->duplicate_deps;
  s->forward_deps = g->forward_deps;
  s->unordered = g->unordered;
  for (uint32_t i = 0; i < g->n && !rc; i++) {
    uint32_t nd = g->dep_off[i + 1] - g->dep_off[i];
    if (nd > s->max_deps) s->max_deps = nd;
    s->roots += nd == 0;
    s->leaves += g->child_off[i + 1] == g->child_off[i];
    if (count_node(s, g, i)) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  if (!g->unordered) {
    uint32_t end;
    s->critical_path_us = chakra_graph_critical_path(g, &end);
    s->critical_end_id = end == UINT32_MAX ? 0 : g->nodes[end].id;
  }
  if (!rc && (!s->version || !s->schema)) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  if (rc) chakra_stats_free(s); /* a failed call leaves nothing to free */
  return rc;
}

/* Tolerant and silent: stats describes what is there; validate is the
 * tool that judges. */
static int stats_of(const chakra_set *set, uint32_t rank, const char *path, int ignore_ctrl_deps, chakra_rank_stats *s,
                    chakra_error *err) {
  memset(s, 0, sizeof *s);
  chakra_graph_options opt = {.ignore_ctrl_deps = ignore_ctrl_deps, .tolerant = 1};
  chakra_graph *g;
  int rc = set ? chakra_set_load_rank(set, rank, &opt, &g, err) : chakra_graph_load(&g, path, &opt, err);
  if (rc) return rc;
  rc = chakra_stats_graph(g, s, err);
  chakra_graph_free(g);
  return rc;
}

int chakra_stats_file(const char *path, int ignore_ctrl_deps, chakra_rank_stats *s, chakra_error *err) {
  return stats_of(NULL, 0, path, ignore_ctrl_deps, s, err);
}

int chakra_stats_set_rank(const chakra_set *set, uint32_t rank, int ignore_ctrl_deps, chakra_rank_stats *s,
                          chakra_error *err) {
  return stats_of(set, rank, NULL, ignore_ctrl_deps, s, err);
}

/* t += r but the groups. */
static void add_counts(chakra_rank_stats *t, const chakra_rank_stats *r) {
  t->ranks += r->ranks;
  t->nodes += r->nodes;
  for (int i = 0; i < CHAKRA_STATS_TYPES; i++) t->by_type[i] += r->by_type[i];
  for (int i = 0; i < CHAKRA_STATS_COLLS; i++) {
    t->coll_ops[i] += r->coll_ops[i];
    sat_add(&t->coll_bytes[i], r->coll_bytes[i], t);
  }
  t->send_ops += r->send_ops, sat_add(&t->send_bytes, r->send_bytes, t);
  t->recv_ops += r->recv_ops, sat_add(&t->recv_bytes, r->recv_bytes, t);
  t->mem_ops += r->mem_ops, sat_add(&t->mem_bytes, r->mem_bytes, t);
  t->cpu_ops += r->cpu_ops, t->gpu_ops += r->gpu_ops;
  sat_add(&t->cpu_us, r->cpu_us, t), sat_add(&t->gpu_us, r->gpu_us, t);
  sat_add(&t->num_ops, r->num_ops, t), sat_add(&t->tensor_bytes, r->tensor_bytes, t);
  t->saturated |= r->saturated;
  t->data_deps += r->data_deps, t->ctrl_deps += r->ctrl_deps, t->edges += r->edges;
  t->missing_ctrl_deps += r->missing_ctrl_deps, t->self_ctrl_deps += r->self_ctrl_deps;
  t->duplicate_deps += r->duplicate_deps, t->forward_deps += r->forward_deps;
  t->roots += r->roots, t->leaves += r->leaves, t->unordered += r->unordered;
  if (r->max_deps > t->max_deps) t->max_deps = r->max_deps;
  if (r->critical_path_us > t->critical_path_us) t->critical_path_us = r->critical_path_us;
}

int chakra_stats_add(chakra_rank_stats *t, const chakra_rank_stats *r) {
  add_counts(t, r);
  for (uint64_t i = 0; i < r->n_groups; i++)
    if (add_group(t, r->groups[i].name, r->groups[i].ops, r->groups[i].bytes, NULL)) return CHAKRA_ENOMEM;
  return 0;
}

int chakra_stats_sum(chakra_rank_stats *t, const chakra_rank_stats *ranks, size_t n) {
  memset(t, 0, sizeof *t);
  nameidx x = {0};
  int rc = 0;
  for (size_t k = 0; k < n && !rc; k++) {
    add_counts(t, &ranks[k]);
    for (uint64_t i = 0; i < ranks[k].n_groups && !rc; i++)
      if (add_group(t, ranks[k].groups[i].name, ranks[k].groups[i].ops, ranks[k].groups[i].bytes, &x)) rc = CHAKRA_ENOMEM;
  }
  nameidx_free(&x);
  return rc;
}

void chakra_stats_free(chakra_rank_stats *s) {
  if (!s) return;
  for (uint64_t i = 0; i < s->n_groups; i++) free(s->groups[i].name);
  free(s->groups);
  free(s->version);
  free(s->schema);
  memset(s, 0, sizeof *s);
}
