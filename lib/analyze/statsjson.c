/* statsjson.c - the JSON document of workload statistics; see
 * include/chakra/stats.h (chakra_stats_write_json).
 *
 * The layout is the one `chakra stats --json` has always printed (yajl's
 * beautified generator, which it used before): four-space indents, one
 * member per line, ": " after keys, and an empty object as "{", an empty
 * line and "}". Scripts and `chakra plot` read it; keeping it byte for byte
 * keeps their diffs quiet. */
#include <string.h>

#include "chakra/attr.h"
#include "chakra/stats.h"
#include "../util/textout.h"

/* Where the writer is: depth of nesting, and whether the next member is
 * its container's first (no comma before it). */
typedef struct pretty {
  jsonw *w;
  int depth, first;
} pretty;

static void pretty_item(pretty *p) {
  if (!p->first) jsonw_lit(p->w, ",\n");
  p->first = 0;
  for (int i = 0; i < p->depth; i++) jsonw_lit(p->w, "    ");
}

static void pretty_open(pretty *p, char c) {
  jsonw_char(p->w, c);
  jsonw_char(p->w, '\n');
  p->depth++;
  p->first = 1;
}

static void pretty_close(pretty *p, char c) {
  p->depth--;
  jsonw_char(p->w, '\n');
  for (int i = 0; i < p->depth; i++) jsonw_lit(p->w, "    ");
  jsonw_char(p->w, c);
  p->first = 0;
}

static void pretty_key(pretty *p, const char *k) {
  pretty_item(p);
  jsonw_string(p->w, k, strlen(k));
  jsonw_lit(p->w, ": ");
}

static void key_u(pretty *p, const char *k, uint64_t v) {
  pretty_key(p, k);
  jsonw_u64(p->w, v);
}

static void key_s(pretty *p, const char *k, const char *v) {
  pretty_key(p, k);
  jsonw_string(p->w, v ? v : "", v ? strlen(v) : 0);
}

static const char *type_name(int i) { return i < 8 ? chakra_node_type_name(i) : "UNKNOWN_TYPE"; }
static const char *coll_name(int i) { return i < 10 ? chakra_comm_type_name(i) : "UNSPECIFIED"; }

/* {"ops": N, "bytes": B} under key k. */
static void ops_bytes(pretty *p, const char *k, uint64_t ops, uint64_t bytes) {
  pretty_key(p, k);
  pretty_open(p, '{');
  key_u(p, "ops", ops);
  key_u(p, "bytes", bytes);
  pretty_close(p, '}');
}

static void counts(pretty *p, const chakra_rank_stats *s) {
  pretty_key(p, "nodes_by_type");
  pretty_open(p, '{');
  for (int i = 0; i < CHAKRA_STATS_TYPES; i++)
    if (s->by_type[i]) key_u(p, type_name(i), s->by_type[i]);
  pretty_close(p, '}');
  pretty_key(p, "collectives");
  pretty_open(p, '{');
  for (int i = 0; i < CHAKRA_STATS_COLLS; i++)
    if (s->coll_ops[i]) ops_bytes(p, coll_name(i), s->coll_ops[i], s->coll_bytes[i]);
  pretty_close(p, '}');
  key_u(p, "send_ops", s->send_ops), key_u(p, "send_bytes", s->send_bytes);
  key_u(p, "recv_ops", s->recv_ops), key_u(p, "recv_bytes", s->recv_bytes);
  key_u(p, "remote_mem_ops", s->mem_ops), key_u(p, "remote_mem_bytes", s->mem_bytes);
  pretty_key(p, "groups");
  pretty_open(p, '{');
  for (uint64_t i = 0; i < s->n_groups; i++) ops_bytes(p, s->groups[i].name, s->groups[i].ops, s->groups[i].bytes);
  pretty_close(p, '}');
}

/* One rank (path given) or the total (path NULL). */
static void one_stats(pretty *p, const char *path, const chakra_rank_stats *s) {
  pretty_open(p, '{');
  if (path) key_s(p, "file", path), key_s(p, "version", s->version), key_s(p, "schema", s->schema);
  else key_u(p, "ranks", (uint64_t)s->ranks);
  key_u(p, "nodes", s->nodes);
  counts(p, s);
  key_u(p, "gpu_compute_nodes", s->gpu_ops), key_u(p, "gpu_compute_us", s->gpu_us);
  key_u(p, "cpu_compute_nodes", s->cpu_ops), key_u(p, "cpu_compute_us", s->cpu_us);
  key_u(p, "num_ops", s->num_ops), key_u(p, "tensor_bytes", s->tensor_bytes);
  key_u(p, "data_deps", s->data_deps), key_u(p, "ctrl_deps", s->ctrl_deps);
  key_u(p, "edges", s->edges), key_u(p, "forward_deps", s->forward_deps);
  key_u(p, "missing_ctrl_deps", s->missing_ctrl_deps), key_u(p, "self_ctrl_deps", s->self_ctrl_deps);
  key_u(p, "duplicate_deps", s->duplicate_deps), key_u(p, "max_deps_per_node", s->max_deps);
  key_u(p, "roots", s->roots), key_u(p, "leaves", s->leaves);
  pretty_key(p, "critical_path_us");
  if (s->unordered) jsonw_lit(p->w, "null");
  else jsonw_u64(p->w, s->critical_path_us);
  key_u(p, "nodes_on_cycles", s->unordered);
  pretty_close(p, '}');
}

static int write_json(textout *t0, const char *const *paths, const chakra_rank_stats *ranks, size_t n,
                      const chakra_rank_stats *total, chakra_error *err) {
  textout t = *t0;
  pretty p = {&t.w, 0, 1};
  pretty_open(&p, '{');
  pretty_key(&p, "ranks");
  pretty_open(&p, '[');
  for (size_t r = 0; r < n; r++) {
    pretty_item(&p);
    one_stats(&p, paths[r], &ranks[r]);
  }
  pretty_close(&p, ']');
  pretty_key(&p, "total");
  one_stats(&p, NULL, total);
  pretty_close(&p, '}');
  jsonw_char(&t.w, '\n');
  return textout_close(&t, 0, err);
}

int chakra_stats_write_json(const char *out_path, const char *const *paths, const chakra_rank_stats *ranks, size_t n,
                            const chakra_rank_stats *total, chakra_error *err) {
  textout t;
  int rc = textout_open(&t, out_path, err);
  return rc ? rc : write_json(&t, paths, ranks, n, total, err);
}

int chakra_stats_write_json_to(const chakra_sink *out, const char *const *paths, const chakra_rank_stats *ranks,
                               size_t n, const chakra_rank_stats *total, chakra_error *err) {
  textout t;
  int rc = textout_open_sink(&t, out, err);
  return rc ? rc : write_json(&t, paths, ranks, n, total, err);
}
