/* test_graph.c - pins chakra_graph_load() and what it derives, quirks 3-9 of
 * the format spec: duplicate ids are an error naming both offsets; a data
 * dep on an absent id is an error (or dropped and counted on request);
 * absent ctrl deps are ignored and counted; duplicate deps are deduped;
 * forward references are fine; cycles (and self-deps) are found
 * iteratively and named by a node on the cycle; the topological order
 * breaks ties by ascending id; the critical path follows data and ctrl deps.
 * A million-node chain stored in reverse (every dep a forward reference)
 * proves there is no recursion. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chakra/graph.h"
#include "testutil.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static char *trace(const char *name, const tu_node *nodes, size_t n) {
  char *p = tu_join(tu_dir, name);
  tu_write_trace(p, nodes, n);
  return p;
}

/* File offsets of the nodes' length prefixes, in file order. */
static void node_offsets(const char *path, uint64_t *off, size_t n) {
  chakra_error err = {0};
  chakra_reader *r;
  if (chakra_reader_open(&r, path, NULL, &err)) fail_msg("%s", err.msg);
  chakra_node *nd;
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(chakra_reader_next(r, &nd, &err), 1);
    off[i] = chakra_reader_message_offset(r);
  }
  chakra_reader_close(r);
}

static chakra_graph *load_ok(const char *path, const chakra_graph_options *opt) {
  chakra_graph *g = NULL;
  chakra_error err = {0};
  int rc = chakra_graph_load(&g, path, opt, &err);
  if (rc) fail_msg("load failed: %s", err.msg);
  assert_non_null(g);
  return g;
}

static uint64_t id_at(const chakra_graph *g, uint32_t idx) { return g->nodes[idx].id; }

/* The ids of node i's deps (data first), in stored order. */
static size_t dep_ids(const chakra_graph *g, uint64_t id, uint64_t *out) {
  uint32_t i = chakra_graph_find(g, id);
  assert_int_not_equal(i, UINT32_MAX);
  size_t k = 0;
  for (uint32_t d = g->dep_off[i]; d < g->dep_off[i + 1]; d++) out[k++] = id_at(g, g->deps[d]);
  return k;
}

/* ---- errors ----------------------------------------------------------------- */

static void test_graph_duplicate_ids_error_names_both_offsets(void **state) {
  (void)state;
  tu_node nodes[] = {{.id = 1}, {.id = 2}, {.id = 1, .name = "again"}};
  char *p = trace("dup.et", nodes, N_OF(nodes));
  uint64_t off[3];
  node_offsets(p, off, 3);
  chakra_graph *g = (chakra_graph *)1;
  chakra_error err = {0};
  assert_int_equal(chakra_graph_load(&g, p, NULL, &err), CHAKRA_EGRAPH);
  assert_null(g);
  assert_int_equal(err.code, CHAKRA_EGRAPH);
  assert_contains(err.msg, p);
  assert_contains(err.msg, "duplicate node id");
  assert_contains(err.msg, tu_fmt("node 1 at offset %llu", (unsigned long long)off[2]));
  assert_contains(err.msg, tu_fmt("first defined at offset %llu", (unsigned long long)off[0]));
  free(p);
}

static void test_graph_missing_data_dep_is_an_error_naming_node_and_dep(void **state) {
  (void)state;
  tu_node nodes[] = {{.id = 1}, {.id = 2, TU_DATA(1, 99)}};
  char *p = trace("missing_data.et", nodes, N_OF(nodes));
  uint64_t off[2];
  node_offsets(p, off, 2);
  chakra_graph *g;
  chakra_error err = {0};
  assert_int_equal(chakra_graph_load(&g, p, NULL, &err), CHAKRA_EGRAPH);
  assert_null(g);
  assert_contains(err.msg, p);
  assert_contains(err.msg, tu_fmt("node 2 at offset %llu", (unsigned long long)off[1]));
  assert_contains(err.msg, "data dep 99 not found");
  free(p);
}

static void test_graph_missing_data_deps_are_dropped_and_counted_on_request(void **state) {
  (void)state;
  tu_node nodes[] = {{.id = 1}, {.id = 2, TU_DATA(99, 1, 98)}};
  char *p = trace("drop_data.et", nodes, N_OF(nodes));
  tu_lines warn = {0};
  chakra_graph_options opt = {.drop_missing_data_deps = 1, .diag = tu_collect_line, .diag_ctx = &warn};
  chakra_graph *g = load_ok(p, &opt);
  assert_int_equal(g->missing_data_deps_dropped, 2);
  uint64_t d[4];
  assert_int_equal(dep_ids(g, 2, d), 1);
  assert_int_equal(d[0], 1);
  assert_int_equal(warn.n, 1);
  assert_contains(warn.line[0], p);
  assert_contains(warn.line[0], "2 data deps on absent ids dropped");
  chakra_graph_free(g);
  free(p);
}

static void test_graph_missing_ctrl_deps_are_ignored_and_counted(void **state) {
  (void)state;
  /* like pytorch_converted.0.et, where 851 ctrl deps point at absent id 3 */
  tu_node nodes[] = {{.id = 216, TU_CTRL(3)}, {.id = 217, TU_DATA(216), TU_CTRL(3)},
                     {.id = 218, TU_CTRL(217, 5)}};
  char *p = trace("missing_ctrl.et", nodes, N_OF(nodes));
  tu_lines warn = {0};
  chakra_graph_options opt = {.diag = tu_collect_line, .diag_ctx = &warn};
  chakra_graph *g = load_ok(p, &opt);
  assert_int_equal(g->n, 3);
  assert_int_equal(g->missing_ctrl_deps, 3);
  assert_int_equal(g->raw_ctrl_deps, 4);
  assert_int_equal(g->raw_data_deps, 1);
  uint64_t d[4];
  assert_int_equal(dep_ids(g, 218, d), 1); /* an existing ctrl dep is honoured */
  assert_int_equal(d[0], 217);
  assert_int_equal(g->n_data[chakra_graph_find(g, 218)], 0);
  assert_int_equal(warn.n, 1); /* once, with the count */
  assert_contains(warn.line[0], "3 control deps on absent ids ignored");
  chakra_graph_free(g);
  /* without a warn callback the load is just as good */
  g = load_ok(p, NULL);
  assert_int_equal(g->missing_ctrl_deps, 3);
  chakra_graph_free(g);
  free(p);
}

static void test_graph_duplicate_deps_are_deduped_and_counted(void **state) {
  (void)state;
  tu_node nodes[] = {{.id = 1}, {.id = 2}, {.id = 3, TU_DATA(1, 1, 2), TU_CTRL(2, 1, 2)}};
  char *p = trace("dup_deps.et", nodes, N_OF(nodes));
  tu_lines warn = {0};
  chakra_graph_options opt = {.diag = tu_collect_line, .diag_ctx = &warn};
  chakra_graph *g = load_ok(p, &opt);
  uint64_t d[8];
  assert_int_equal(dep_ids(g, 3, d), 2);
  assert_int_equal(d[0], 1);
  assert_int_equal(d[1], 2);
  uint32_t i3 = chakra_graph_find(g, 3);
  assert_int_equal(g->n_data[i3], 2); /* both kept as data deps */
  /* data 1 twice and ctrl 2 twice are duplicates; ctrl 2 and 1 repeating
   * data deps are the legal "parent in both lists" */
  assert_int_equal(g->duplicate_deps, 2);
  assert_int_equal(g->ctrl_also_data, 2);
  uint32_t i1 = chakra_graph_find(g, 1);
  assert_int_equal(g->child_off[i1 + 1] - g->child_off[i1], 1); /* one edge 1->3 */
  assert_int_equal(warn.n, 1);
  assert_contains(warn.line[0], "2 duplicate deps removed");
  chakra_graph_free(g);
  free(p);
}

static void test_graph_cycle_is_detected_naming_a_node_on_the_cycle(void **state) {
  (void)state;
  /* 2 -> 4 -> 3 -> 2 is the cycle; 10 hangs off it and comes first in the
   * file, so the first unorderable node is not on the cycle. */
  tu_node nodes[] = {{.id = 10, TU_DATA(2)}, {.id = 2, TU_DATA(4)}, {.id = 3, TU_DATA(2)},
                     {.id = 4, TU_CTRL(3)}, {.id = 1}, {.id = 5, TU_DATA(1)}};
  char *p = trace("cycle.et", nodes, N_OF(nodes));
  uint64_t off[6];
  node_offsets(p, off, 6);
  chakra_graph *g;
  chakra_error err = {0};
  assert_int_equal(chakra_graph_load(&g, p, NULL, &err), CHAKRA_EGRAPH);
  assert_null(g);
  assert_contains(err.msg, p);
  assert_contains(err.msg, "cycle");
  assert_contains(err.msg, "(4 nodes cannot be ordered)");
  const char *at = strstr(err.msg, "node ");
  assert_non_null(at);
  unsigned long long id = strtoull(at + 5, NULL, 10);
  assert_true(id == 2 || id == 3 || id == 4);
  size_t idx = id == 2 ? 1 : id == 3 ? 2 : 3;
  assert_contains(err.msg, tu_fmt("node %llu at offset %llu", id, (unsigned long long)off[idx]));
  free(p);
}

static void test_graph_data_dep_on_itself_is_an_error(void **state) {
  (void)state;
  tu_node nodes[] = {{.id = 1}, {.id = 7, TU_DATA(1, 7)}};
  char *p = trace("self.et", nodes, N_OF(nodes));
  chakra_graph *g;
  chakra_error err = {0};
  assert_int_equal(chakra_graph_load(&g, p, NULL, &err), CHAKRA_EGRAPH);
  assert_contains(err.msg, "node 7 at offset");
  assert_contains(err.msg, "on itself");
  free(p);
}

/* Older converters emit ctrl deps of a node on itself (383 in
 * pytorch_converted.0.et): nothing to wait for, ignored and counted. */
static void test_graph_ctrl_dep_on_itself_is_ignored_and_counted(void **state) {
  (void)state;
  tu_node nodes[] = {{.id = 1, TU_CTRL(1)}, {.id = 2, TU_DATA(1), TU_CTRL(2, 1)}};
  char *p = trace("self_ctrl.et", nodes, N_OF(nodes));
  tu_lines warn = {0};
  chakra_graph_options opt = {.diag = tu_collect_line, .diag_ctx = &warn};
  chakra_graph *g = load_ok(p, &opt);
  assert_int_equal(g->self_ctrl_deps, 2);
  uint64_t d[4];
  assert_int_equal(dep_ids(g, 2, d), 1);
  assert_int_equal(dep_ids(g, 1, d), 0);
  int found = 0;
  for (int i = 0; i < warn.n; i++) found += strstr(warn.line[i], "2 control deps of nodes on themselves") != NULL;
  assert_int_equal(found, 1);
  chakra_graph_free(g);
  free(p);
}

static void test_graph_ignore_ctrl_deps_reads_data_deps_only(void **state) {
  (void)state;
  /* cyclic through a ctrl dep, and a ctrl dep on an absent id */
  tu_node nodes[] = {{.id = 1, TU_CTRL(2, 77)}, {.id = 2, TU_DATA(1)}};
  char *p = trace("ctrl_cycle.et", nodes, N_OF(nodes));
  chakra_graph *g;
  chakra_error err = {0};
  assert_int_equal(chakra_graph_load(&g, p, NULL, &err), CHAKRA_EGRAPH);
  assert_contains(err.msg, "cycle");
  chakra_graph_options opt = {.ignore_ctrl_deps = 1};
  g = load_ok(p, &opt);
  assert_int_equal(g->dep_off[g->n], 1);
  assert_int_equal(g->missing_ctrl_deps, 0);
  assert_int_equal(id_at(g, g->topo[0]), 1);
  chakra_graph_free(g);
  free(p);
}

static void test_graph_reader_errors_come_through_with_their_offset(void **state) {
  (void)state;
  tu_node nodes[] = {{.id = 1, .name = "a fairly long name to cut"}};
  char *p = trace("cut.et", nodes, N_OF(nodes));
  size_t n;
  uint8_t *bytes = tu_read_file(p, &n);
  tu_write_bytes(p, bytes, n - 4);
  free(bytes);
  chakra_graph *g;
  chakra_error err = {0};
  assert_int_equal(chakra_graph_load(&g, p, NULL, &err), CHAKRA_EFORMAT);
  assert_null(g);
  assert_contains(err.msg, p);
  assert_contains(err.msg, "offset 8: message 1: truncated");
  free(p);
}

typedef struct problems {
  int errors, warnings;
  char what[8][600];
  uint64_t id[8];
  int n;
} problems;

static void collect_problem(void *ctx, const chakra_problem *p) {
  problems *pr = ctx;
  if (p->severity == CHAKRA_SEV_ERROR) pr->errors++;
  else pr->warnings++;
  if (pr->n < 8) {
    snprintf(pr->what[pr->n], sizeof pr->what[0], "%s", p->what);
    pr->id[pr->n] = p->node_id;
  }
  pr->n++;
}

static void test_graph_validate_mode_reports_every_problem_and_still_builds(void **state) {
  (void)state;
  tu_node nodes[] = {{.id = 1}, {.id = 2, TU_DATA(1, 42)}, {.id = 3, TU_DATA(4)},
                     {.id = 4, TU_DATA(3)}, {.id = 1, .name = "dup"}};
  char *p = trace("validate.et", nodes, N_OF(nodes));
  problems pr = {0};
  chakra_graph_options opt = {.tolerant = 1, .diag = collect_problem, .diag_ctx = &pr};
  chakra_graph *g = NULL;
  chakra_error err = {0};
  assert_int_equal(chakra_graph_load(&g, p, &opt, &err), 0);
  assert_non_null(g);
  assert_int_equal(pr.errors, 3); /* duplicate id, missing dep, cycle */
  assert_contains(pr.what[0], "duplicate node id");
  assert_contains(pr.what[1], "data dep 42 not found");
  assert_int_equal(pr.id[1], 2);
  assert_contains(pr.what[2], "cycle");
  assert_true(pr.id[2] == 3 || pr.id[2] == 4);
  assert_int_equal(g->unordered, 2);
  /* every node appears once in topo, cycle members at the end */
  int seen[5] = {0};
  for (size_t t = 0; t < g->n; t++) seen[g->topo[t]]++;
  for (int i = 0; i < 5; i++) assert_int_equal(seen[i], 1);
  /* the last two are the cycle 3 <-> 4 (file indexes 2 and 3), in either order */
  assert_int_equal(g->n, 5);
  uint64_t last_a = g->nodes[g->topo[3]].id, last_b = g->nodes[g->topo[4]].id;
  assert_true((last_a == 3 && last_b == 4) || (last_a == 4 && last_b == 3));
  chakra_graph_free(g);
  free(p);
}

/* ---- structure ---------------------------------------------------------------- */

static void test_graph_forward_references_are_accepted_and_counted(void **state) {
  (void)state;
  tu_node nodes[] = {{.id = 3, TU_DATA(1)}, {.id = 1}, {.id = 2, TU_DATA(3)}};
  char *p = trace("forward.et", nodes, N_OF(nodes));
  chakra_graph *g = load_ok(p, NULL);
  assert_int_equal(g->forward_deps, 1);
  uint64_t want[] = {1, 3, 2};
  for (size_t t = 0; t < 3; t++) assert_int_equal(id_at(g, g->topo[t]), want[t]);
  chakra_graph_free(g);
  free(p);
}

static void test_graph_topological_order_breaks_ties_by_ascending_id(void **state) {
  (void)state;
  tu_node roots[] = {{.id = 5}, {.id = 3}, {.id = 9}, {.id = 1}, {.id = 7}};
  char *p = trace("ties.et", roots, N_OF(roots));
  chakra_graph *g = load_ok(p, NULL);
  uint64_t want[] = {1, 3, 5, 7, 9};
  for (size_t t = 0; t < 5; t++) assert_int_equal(id_at(g, g->topo[t]), want[t]);
  chakra_graph_free(g);
  free(p);
  /* a node becomes available only when its deps are done; among the
   * available ones the smallest id goes first */
  tu_node dag[] = {{.id = 10}, {.id = 2, TU_DATA(10)}, {.id = 1, TU_DATA(10)}, {.id = 20},
                   {.id = 15, TU_DATA(20)}, {.id = 0, TU_CTRL(15)}};
  p = trace("ties_dag.et", dag, N_OF(dag));
  g = load_ok(p, NULL);
  uint64_t want2[] = {10, 1, 2, 20, 15, 0};
  for (size_t t = 0; t < 6; t++) assert_int_equal(id_at(g, g->topo[t]), want2[t]);
  chakra_graph_free(g);
  free(p);
}

static void test_graph_children_are_the_reverse_of_deps(void **state) {
  (void)state;
  tu_node nodes[] = {{.id = 216}, {.id = 217, TU_DATA(216)}, {.id = 430, TU_DATA(216)},
                     {.id = 435, TU_CTRL(216)}, {.id = 500, TU_DATA(217, 430)}};
  char *p = trace("children.et", nodes, N_OF(nodes));
  chakra_graph *g = load_ok(p, NULL);
  uint32_t i = chakra_graph_find(g, 216);
  assert_int_equal(g->child_off[i + 1] - g->child_off[i], 3);
  uint64_t kids[3];
  for (uint32_t k = g->child_off[i], j = 0; k < g->child_off[i + 1]; k++) kids[j++] = id_at(g, g->children[k]);
  assert_int_equal(kids[0], 217);
  assert_int_equal(kids[1], 430);
  assert_int_equal(kids[2], 435);
  size_t edges = 0;
  for (uint32_t v = 0; v < g->n; v++) edges += g->child_off[v + 1] - g->child_off[v];
  assert_int_equal(edges, g->dep_off[g->n]);
  chakra_graph_free(g);
  free(p);
}

static void test_graph_find_maps_sparse_and_extreme_ids(void **state) {
  (void)state;
  tu_node nodes[] = {{.id = UINT64_MAX}, {.id = 0}, {.id = 12345678901234ull, TU_DATA(UINT64_MAX, 0)}};
  char *p = trace("ids.et", nodes, N_OF(nodes));
  chakra_graph *g = load_ok(p, NULL);
  assert_int_equal(chakra_graph_find(g, UINT64_MAX), 0);
  assert_int_equal(chakra_graph_find(g, 0), 1);
  assert_int_equal(chakra_graph_find(g, 12345678901234ull), 2);
  assert_int_equal(chakra_graph_find(g, 1), UINT32_MAX);
  assert_int_equal(id_at(g, g->topo[0]), 0);
  assert_true(chakra_graph_memory(g) > 0);
  chakra_graph_free(g);
  free(p);
}

static void test_graph_critical_path_on_a_small_dag(void **state) {
  (void)state;
  /*      1(5)
   *     /    \
   *  2(10)   3(3)      7(15)
   *     \    /
   *      4(1)
   *       : ctrl
   *      6(2)
   * longest: 1-2-4-6 = 18 (7 alone is 15) */
  tu_node nodes[] = {{.id = 1, .duration = 5},  {.id = 2, .duration = 10, TU_DATA(1)},
                     {.id = 3, .duration = 3, TU_DATA(1)}, {.id = 4, .duration = 1, TU_DATA(2, 3)},
                     {.id = 7, .duration = 15}, {.id = 6, .duration = 2, TU_CTRL(4)}};
  char *p = trace("critical.et", nodes, N_OF(nodes));
  chakra_graph *g = load_ok(p, NULL);
  uint32_t end;
  assert_int_equal(chakra_graph_critical_path(g, &end), 18);
  assert_int_equal(id_at(g, end), 6);
  chakra_graph_free(g);
  free(p);
}

static void test_graph_of_metadata_only_file_is_empty(void **state) {
  (void)state;
  char *p = trace("empty_graph.et", NULL, 0);
  chakra_graph *g = load_ok(p, NULL);
  assert_int_equal(g->n, 0);
  uint32_t end = 0;
  assert_int_equal(chakra_graph_critical_path(g, &end), 0);
  assert_int_equal(end, UINT32_MAX);
  assert_non_null(g->metadata);
  assert_string_equal(g->metadata->version, "1.0.0");
  chakra_graph_free(g);
  free(p);
}

/* Plain files are counted first and then read; a pipe cannot be read twice,
 * so a FIFO given by name must load in one pass, to the same graph. */
static void test_graph_loads_the_same_from_a_file_and_from_a_named_pipe(void **state) {
  (void)state;
  enum { N = 3000 };
  tu_node *nodes = calloc(N, sizeof *nodes);
  for (uint64_t i = 0; i < N; i++) nodes[i] = (tu_node){.id = i + 1, .duration = i};
  char *p = trace("chain.et", nodes, N);
  char *fifo = tu_join(tu_dir, "chain.fifo");
  assert_int_equal(mkfifo(fifo, 0600), 0);
  pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) { /* the writer end: the file's bytes into the pipe */
    size_t n;
    uint8_t *b = tu_read_file(p, &n);
    FILE *f = fopen(fifo, "wb");
    _exit(f && fwrite(b, 1, n, f) == n && fclose(f) == 0 ? 0 : 1);
  }
  chakra_graph *a = load_ok(p, NULL), *b = load_ok(fifo, NULL);
  int status = 0;
  assert_int_equal(waitpid(child, &status, 0), child);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  assert_int_equal(a->n, N);
  assert_int_equal(b->n, N);
  for (size_t i = 0; i < N; i++) {
    assert_int_equal(a->nodes[i].id, b->nodes[i].id);
    assert_int_equal(a->nodes[i].offset, b->nodes[i].offset);
  }
  assert_memory_equal(a->deps, b->deps, a->dep_off[N] * sizeof *a->deps);
  chakra_graph_free(a);
  chakra_graph_free(b);
  free(nodes);
  free(fifo);
  free(p);
}

/* ---- what the gnodes carry ---------------------------------------------------- */

static void write_attr_trace(const char *path, int gzip) {
  chakra_error err = {0};
  chakra_writer *w;
  assert_int_equal(chakra_writer_open(&w, path, gzip ? CHAKRA_WRITE_GZIP : 0, &err), 0);
  ChakraProtoMsg__GlobalMetadata meta = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
  meta.version = "1.0.0";
  assert_int_equal(chakra_writer_put(w, &meta.base, &err), 0);
  ChakraProtoMsg__AttributeProto cpu = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT, ty = cpu, sz = cpu,
                                 pg = cpu, ts = cpu, bad = cpu;
  cpu.name = "is_cpu_op";
  cpu.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL;
  cpu.bool_val = 1;
  ty.name = "comm_type";
  ty.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
  ty.int64_val = 2;
  sz.name = "comm_size";
  sz.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
  sz.int64_val = 1048576;
  pg.name = "pg_name";
  pg.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL;
  pg.string_val = "tp0";
  ts.name = "tensor_size";
  ts.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL;
  ts.uint64_val = 4096;
  bad.name = "comm_size";
  bad.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL;
  bad.string_val = "big";
  ChakraProtoMsg__AttributeProto *coll_attrs[] = {&ty, &sz, &pg};
  ChakraProtoMsg__AttributeProto *comp_attrs[] = {&cpu, &ts};
  ChakraProtoMsg__AttributeProto *bad_attrs[] = {&bad, &pg};
  ChakraProtoMsg__Node n = CHAKRA_PROTO_MSG__NODE__INIT;
  n.id = 1;
  n.name = "compute";
  n.type = CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE;
  n.duration_micros = 11;
  n.n_attr = 2;
  n.attr = comp_attrs;
  assert_int_equal(chakra_writer_put(w, &n.base, &err), 0);
  uint64_t dep = 1;
  n.id = 2;
  n.name = "allgather";
  n.type = CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE;
  n.duration_micros = 0;
  n.n_data_deps = 1;
  n.data_deps = &dep;
  n.n_attr = 3;
  n.attr = coll_attrs;
  assert_int_equal(chakra_writer_put(w, &n.base, &err), 0);
  n.id = 3;
  n.name = "odd";
  n.type = (ChakraProtoMsg__NodeType)99;
  n.n_attr = 2;
  n.attr = bad_attrs;
  assert_int_equal(chakra_writer_put(w, &n.base, &err), 0);
  assert_int_equal(chakra_writer_close(w, &err), 0);
}

static void test_graph_nodes_carry_resolved_standard_attributes(void **state) {
  (void)state;
  char *p = tu_join(tu_dir, "attrs.et");
  write_attr_trace(p, 0);
  chakra_graph *g = load_ok(p, NULL);
  const chakra_gnode *c = &g->nodes[chakra_graph_find(g, 1)];
  assert_int_equal(c->type, CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE);
  assert_int_equal(c->duration_micros, 11);
  assert_int_equal(c->size, 4096); /* tensor_size for non-comm nodes */
  assert_true(c->flags & CHAKRA_GNODE_CPU);
  assert_int_equal(c->comm_type, -1);
  assert_int_equal(c->pg, 0);
  const chakra_gnode *a = &g->nodes[chakra_graph_find(g, 2)];
  assert_int_equal(a->size, 1048576); /* comm_size for comm nodes */
  assert_int_equal(a->comm_type, 2);
  assert_false(a->flags & CHAKRA_GNODE_CPU);
  assert_int_not_equal(a->pg, 0);
  assert_string_equal(g->pg_names[a->pg], "tp0");
  const chakra_gnode *o = &g->nodes[chakra_graph_find(g, 3)];
  assert_int_equal(o->type, 99);              /* unknown types are kept */
  assert_true(o->flags & CHAKRA_GNODE_BAD_ATTRS); /* but loading goes on */
  assert_int_equal(o->pg, a->pg);             /* pg names are interned */
  assert_int_equal(g->n_pg_names, 2);
  chakra_graph_free(g);
  free(p);
}

static void test_graph_read_node_returns_the_full_node_from_plain_and_gzip(void **state) {
  (void)state;
  for (int gz = 0; gz < 2; gz++) {
    char *p = tu_join(tu_dir, gz ? "full.et.gz" : "full.et");
    write_attr_trace(p, gz);
    chakra_graph *g = load_ok(p, NULL);
    for (uint32_t i = 0; i < g->n; i++) {
      chakra_node *n;
      chakra_error err = {0};
      assert_int_equal(chakra_graph_read_node(g, i, &n, &err), 0);
      assert_int_equal(n->id, g->nodes[i].id);
      assert_string_equal(n->name, i == 0 ? "compute" : i == 1 ? "allgather" : "odd");
      assert_int_equal(n->n_attr, i == 1 ? 3 : 2);
      chakra_node_free(n);
    }
    chakra_graph_free(g);
    free(p);
  }
}

/* ---- scale without recursion ------------------------------------------------- */

/* Writes ids n-1 .. 0 in that order, id k depending on k-1 (data), so every
 * dep points at a node stored later. close_cycle: 0 also depends on n-1. */
static void write_reverse_chain(const char *path, uint32_t n, int close_cycle) {
  chakra_error err = {0};
  chakra_writer *w;
  assert_int_equal(chakra_writer_open(&w, path, 0, &err), 0);
  ChakraProtoMsg__GlobalMetadata meta = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
  assert_int_equal(chakra_writer_put(w, &meta.base, &err), 0);
  ChakraProtoMsg__Node nd = CHAKRA_PROTO_MSG__NODE__INIT;
  nd.type = CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE;
  nd.duration_micros = 1;
  for (uint32_t k = n; k-- > 0;) {
    uint64_t dep = k ? k - 1 : n - 1;
    nd.id = k;
    nd.n_data_deps = k || close_cycle ? 1 : 0;
    nd.data_deps = &dep;
    if (chakra_writer_put(w, &nd.base, &err)) fail_msg("%s", err.msg);
  }
  assert_int_equal(chakra_writer_close(w, &err), 0);
}

static void test_graph_million_node_chain_loads_without_recursion(void **state) {
  (void)state;
  const uint32_t n = 1000000;
  char *p = tu_join(tu_dir, "chain.et");
  write_reverse_chain(p, n, 0);
  chakra_graph *g = load_ok(p, NULL);
  assert_int_equal(g->n, n);
  assert_int_equal(g->forward_deps, n - 1);
  assert_int_equal(g->raw_data_deps, n - 1);
  for (uint32_t t = 0; t < n; t += 99991) assert_int_equal(id_at(g, g->topo[t]), t);
  assert_int_equal(id_at(g, g->topo[n - 1]), n - 1);
  uint32_t end;
  assert_int_equal(chakra_graph_critical_path(g, &end), n);
  assert_int_equal(id_at(g, end), n - 1);
  chakra_graph_free(g);
  unlink(p);
  free(p);
}

static void test_graph_long_cycle_is_found_without_recursion(void **state) {
  (void)state;
  const uint32_t n = 100000;
  char *p = tu_join(tu_dir, "long_cycle.et");
  write_reverse_chain(p, n, 1);
  chakra_graph *g;
  chakra_error err = {0};
  assert_int_equal(chakra_graph_load(&g, p, NULL, &err), CHAKRA_EGRAPH);
  assert_contains(err.msg, "cycle");
  assert_contains(err.msg, tu_fmt("(%u nodes cannot be ordered)", n));
  unlink(p);
  free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_graph_duplicate_ids_error_names_both_offsets),
      cmocka_unit_test(test_graph_missing_data_dep_is_an_error_naming_node_and_dep),
      cmocka_unit_test(test_graph_missing_data_deps_are_dropped_and_counted_on_request),
      cmocka_unit_test(test_graph_missing_ctrl_deps_are_ignored_and_counted),
      cmocka_unit_test(test_graph_duplicate_deps_are_deduped_and_counted),
      cmocka_unit_test(test_graph_cycle_is_detected_naming_a_node_on_the_cycle),
      cmocka_unit_test(test_graph_data_dep_on_itself_is_an_error),
      cmocka_unit_test(test_graph_ctrl_dep_on_itself_is_ignored_and_counted),
      cmocka_unit_test(test_graph_ignore_ctrl_deps_reads_data_deps_only),
      cmocka_unit_test(test_graph_reader_errors_come_through_with_their_offset),
      cmocka_unit_test(test_graph_validate_mode_reports_every_problem_and_still_builds),
      cmocka_unit_test(test_graph_forward_references_are_accepted_and_counted),
      cmocka_unit_test(test_graph_topological_order_breaks_ties_by_ascending_id),
      cmocka_unit_test(test_graph_children_are_the_reverse_of_deps),
      cmocka_unit_test(test_graph_find_maps_sparse_and_extreme_ids),
      cmocka_unit_test(test_graph_critical_path_on_a_small_dag),
      cmocka_unit_test(test_graph_of_metadata_only_file_is_empty),
      cmocka_unit_test(test_graph_loads_the_same_from_a_file_and_from_a_named_pipe),
      cmocka_unit_test(test_graph_nodes_carry_resolved_standard_attributes),
      cmocka_unit_test(test_graph_read_node_returns_the_full_node_from_plain_and_gzip),
      cmocka_unit_test(test_graph_million_node_chain_loads_without_recursion),
      cmocka_unit_test(test_graph_long_cycle_is_found_without_recursion),
  };
  return cmocka_run_group_tests(tests, tu_dir_setup, tu_dir_teardown);
}
