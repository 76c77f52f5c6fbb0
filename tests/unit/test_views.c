/* test_views.c - pins the views in the library: DOT and GraphML of a rank
 * (chakra_view_write: what each view draws, how names are escaped, views
 * refused whole), the Chrome trace-event writer and a trace's own timeline
 * (chakra_timeline_*: valid JSON, microseconds with nanosecond decimals,
 * names escaped, dependencies scheduled, lanes for overlaps, recorded
 * starts), and diff (chakra_diff_files, _summary, _write: matching by id
 * or by name, what changed in each node, the report as JSON). JSON is read
 * back with yajl and XML with expat, the parsers the project uses. */
#include <expat.h>
#include <stdio.h>
#include <stdlib.h>
#include <yajl/yajl_tree.h>

#include "chakra/build.h"
#include "chakra/diff.h"
#include "chakra/graph.h"
#include "chakra/timeline.h"
#include "chakra/views.h"
#include "testutil.h"

#define COMP(i, us, ...) TU_COMP(i, us, 0, __VA_ARGS__)

static const char odd_name[] = "mm \"big\"\nx & <y> \\N \x01 caf\xc3\xa9";

/* load (10 us) -> mm (20 us, an awkward name) -> all-reduce, then "after"
 * (5 us) on a control dependency; "side" (3 us) beside load. */
static chakra_graph *small_graph(const char *name) {
  char *p = tu_join(tu_dir, name);
  const tu_wnode n[] = {
      COMP(1, 10, .name = "load"),
      COMP(2, 20, TU_DEPS(1), .name = odd_name),
      TU_COLL(3, CHAKRA_ALL_REDUCE, 1024, TU_DEPS(2), .name = "ar"),
      COMP(4, 5, TU_CTRL(3), .name = "after"),
      COMP(5, 3, .name = "side"),
  };
  tu_write_rank(p, 0, n, 5);
  chakra_graph *g = tu_rank_graph(p, 0);
  free(p);
  return g;
}

static char *view(const chakra_graph *g, chakra_view_options o, chakra_view_info *info) {
  char *out = tu_join(tu_dir, "view.out");
  chakra_error err = {0};
  if (chakra_view_write(g, out, &o, info, &err)) fail_msg("%s", err.msg);
  char *text = tu_read_text(out, NULL);
  free(out);
  return text;
}

static void dot_draws_nodes_edges_and_escaped_names(void **state) {
  (void)state;
  chakra_graph *g = small_graph("v");
  chakra_view_info info;
  char *dot = view(g, (chakra_view_options){.format = CHAKRA_VIEW_DOT, .title = "t \"1\""}, &info);
  assert_int_equal(info.nodes, 5);
  assert_int_equal(info.edges, 3);
  assert_int_equal(info.graph_nodes, 5);
  assert_true(strncmp(dot, "digraph chakra {\n", 17) == 0);
  assert_contains(dot, "label=\"t \\\"1\\\"\"");
  /* quotes and backslashes escaped (\N stays literal), a line break as \n, control characters as spaces */
  assert_contains(dot, "n1 [label=\"mm \\\"big\\\"\\nx & <y> \\\\N   caf\xc3\xa9\\n#2 COMP 20 us\"");
  assert_contains(dot, "n2 [label=\"ar\\n#3 COLL ALL_REDUCE 1024 B\"");
  assert_contains(dot, "n0 -> n1;\n");
  assert_contains(dot, "n1 -> n2;\n");
  assert_contains(dot, "n2 -> n3 [style=dashed];\n"); /* a control dependency */
  free(dot);
  chakra_graph_free(g);
}

typedef struct xml_seen {
  int nodes, edges;
  char name[128];
} xml_seen;

static void XMLCALL xml_start(void *ctx, const XML_Char *el, const XML_Char **attr) {
  (void)attr;
  xml_seen *x = ctx;
  x->nodes += strcmp(el, "node") == 0;
  x->edges += strcmp(el, "edge") == 0;
}

static void graphml_is_xml_with_the_names(void **state) {
  (void)state;
  chakra_graph *g = small_graph("v");
  char *xml = view(g, (chakra_view_options){.format = CHAKRA_VIEW_GRAPHML}, NULL);
  XML_Parser p = XML_ParserCreate(NULL);
  xml_seen seen = {0};
  XML_SetUserData(p, &seen);
  XML_SetElementHandler(p, xml_start, NULL);
  if (XML_Parse(p, xml, (int)strlen(xml), 1) != XML_STATUS_OK)
    fail_msg("GraphML: line %lu: %s", (unsigned long)XML_GetCurrentLineNumber(p), XML_ErrorString(XML_GetErrorCode(p)));
  XML_ParserFree(p);
  assert_int_equal(seen.nodes, 5);
  assert_int_equal(seen.edges, 3);
  /* XML's escapes; a control character XML cannot hold becomes U+FFFD */
  assert_contains(xml, "<data key=\"name\">mm &quot;big&quot;&#10;x &amp; &lt;y&gt; \\N \xef\xbf\xbd caf\xc3\xa9</data>");
  assert_contains(xml, "<data key=\"kind\">ctrl</data>");
  free(xml);
  chakra_graph_free(g);
}

/* A chain of compute, 1 to 8 us, with an all-reduce (5) after the fourth:
 * the views that choose what to draw, and those refused whole. */
static void views_choose_and_refuse(void **state) {
  (void)state;
  char *p = tu_join(tu_dir, "chain"), *out = tu_join(tu_dir, "never.dot");
  const tu_wnode n[] = {COMP(1, 1), COMP(2, 2, TU_DEPS(1)), COMP(3, 3, TU_DEPS(2)), COMP(4, 4, TU_DEPS(3)),
                        TU_COLL(5, CHAKRA_ALL_REDUCE, 64, TU_DEPS(4)), COMP(6, 5, TU_DEPS(5)), COMP(7, 6, TU_DEPS(6)),
                        COMP(8, 7, TU_DEPS(7)), COMP(9, 8, TU_DEPS(8))};
  tu_write_rank(p, 0, n, 9);
  chakra_graph *g = tu_rank_graph(p, 0);
  chakra_view_info info;
  char *dot = view(g, (chakra_view_options){.around = 1, .around_id = 5, .depth = 1}, &info);
  assert_int_equal(info.nodes, 3); /* 4, the all-reduce, 6 */
  assert_contains(dot, "#4 COMP");
  assert_contains(dot, "#6 COMP");
  assert_not_contains(dot, "#3 COMP");
  free(dot);
  dot = view(g, (chakra_view_options){.critical_path = 1}, &info);
  assert_int_equal(info.critical_us, 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8);
  free(dot);
  dot = view(g, (chakra_view_options){.collapse = 1}, &info);
  assert_int_equal(info.boxes, 2); /* compute before the all-reduce, compute after it */
  assert_int_equal(info.nodes, 3);
  assert_int_equal(info.graph_nodes, 9);
  free(dot);
  chakra_error err = {0};
  assert_int_equal(chakra_view_write(g, out, &(chakra_view_options){.max_nodes = 4}, NULL, &err), CHAKRA_EINVAL);
  assert_contains(err.msg, "9");
  assert_int_equal(chakra_view_write(g, out, &(chakra_view_options){.around = 1, .around_id = 77}, NULL, &err),
                   CHAKRA_EINVAL);
  assert_contains(err.msg, "77");
  assert_false(tu_exists(out));
  chakra_graph_free(g);
  free(p), free(out);
}

/* ---- timelines ---- */

static yajl_val parse_json(const char *path) {
  char *text = tu_read_text(path, NULL);
  char why[256];
  yajl_val v = yajl_tree_parse(text, why, sizeof why);
  if (!v) fail_msg("%s: not JSON: %s", path, why);
  free(text);
  return v;
}

static yajl_val field(yajl_val obj, const char *key) {
  const char *path[] = {key, NULL};
  return yajl_tree_get(obj, path, yajl_t_any);
}

/* The complete ("X") events of a trace-event document, in order. */
static size_t slices(yajl_val doc, yajl_val *out, size_t max) {
  yajl_val ev = YAJL_IS_ARRAY(doc) ? doc : field(doc, "traceEvents");
  assert_true(YAJL_IS_ARRAY(ev));
  size_t n = 0;
  for (size_t i = 0; i < ev->u.array.len; i++) {
    const char *ph = YAJL_GET_STRING(field(ev->u.array.values[i], "ph"));
    if (ph && strcmp(ph, "X") == 0 && n < max) out[n++] = ev->u.array.values[i];
  }
  return n;
}

static void timeline_writer_makes_valid_json(void **state) {
  (void)state;
  char *path = tu_join(tu_dir, "t.json");
  chakra_timeline *t;
  chakra_error err = {0};
  assert_int_equal(chakra_timeline_open(&t, path, &err), 0);
  chakra_timeline_process(t, 3, "rank \"3\"");
  chakra_timeline_track(t, 3, 1, "GPU compute");
  chakra_timeline_slice(t, 3, 1, odd_name, strlen(odd_name), "COMP_NODE", 1500, 2500, 42);
  assert_false(tu_exists(path)); /* nothing until closed */
  assert_int_equal(chakra_timeline_close(t, &err), 0);
  yajl_val doc = parse_json(path), x[4];
  assert_int_equal(slices(doc, x, 4), 1);
  assert_string_equal(YAJL_GET_STRING(field(x[0], "name")), odd_name);
  assert_string_equal(YAJL_GET_STRING(field(x[0], "cat")), "COMP_NODE");
  assert_true(YAJL_GET_DOUBLE(field(x[0], "ts")) == 1.5); /* microseconds, nanoseconds as decimals */
  assert_true(YAJL_GET_DOUBLE(field(x[0], "dur")) == 2.5);
  assert_int_equal(YAJL_GET_INTEGER(field(x[0], "pid")), 3);
  assert_int_equal(YAJL_GET_INTEGER(field(x[0], "tid")), 1);
  const char *id[] = {"args", "node_id", NULL};
  assert_int_equal(YAJL_GET_INTEGER(yajl_tree_get(x[0], id, yajl_t_number)), 42);
  yajl_tree_free(doc);
  /* abandoned: nothing written */
  char *gone = tu_join(tu_dir, "gone.json");
  assert_int_equal(chakra_timeline_open(&t, gone, &err), 0);
  chakra_timeline_slice(t, 0, 0, "x", 1, "COMP_NODE", 0, 1, 1);
  chakra_timeline_discard(t);
  assert_false(tu_exists(gone));
  free(gone), free(path);
}

/* The start of node id among a rank's slices, in us (-1 when absent), and
 * its track's name. */
static double start_of(yajl_val *x, size_t n, uint64_t id, long long *tid) {
  const char *key[] = {"args", "node_id", NULL};
  for (size_t i = 0; i < n; i++)
    if ((uint64_t)YAJL_GET_INTEGER(yajl_tree_get(x[i], key, yajl_t_number)) == id) {
      *tid = YAJL_GET_INTEGER(field(x[i], "tid"));
      return YAJL_GET_DOUBLE(field(x[i], "ts"));
    }
  return -1;
}

static void graph_timeline_schedules_dependencies_and_lanes(void **state) {
  (void)state;
  chakra_graph *g = small_graph("v");
  char *path = tu_join(tu_dir, "t.json");
  chakra_timeline *t;
  chakra_error err = {0};
  chakra_timeline_rank_info info;
  assert_int_equal(chakra_timeline_open(&t, path, &err), 0);
  assert_int_equal(chakra_timeline_add_graph(t, 0, g, &info, &err), 0);
  assert_int_equal(chakra_timeline_close(t, &err), 0);
  assert_int_equal(info.nodes, 5);
  assert_int_equal(info.recorded, 0);
  assert_int_equal(info.end_ns, 35000); /* load, mm, the instant all-reduce, after */
  assert_int_equal(info.lanes[CHAKRA_TL_GPU], 2); /* side overlaps load */
  yajl_val doc = parse_json(path), x[8];
  size_t n = slices(doc, x, 8);
  assert_int_equal(n, 5);
  long long tid_load, tid_side, tid_mm;
  assert_true(start_of(x, n, 1, &tid_load) == 0);
  assert_true(start_of(x, n, 5, &tid_side) == 0);
  assert_true(start_of(x, n, 2, &tid_mm) == 10);
  assert_true(tid_load != tid_side); /* the overlap on a lane of its own */
  long long tid;
  assert_true(start_of(x, n, 4, &tid) == 30); /* a control dependency counts */
  yajl_tree_free(doc);
  chakra_graph_free(g);
  /* recorded starts are kept; roots without one start at the earliest */
  char *p = tu_join(tu_dir, "rec");
  const tu_wnode r[] = {COMP(1, 4, .start_us = 100), COMP(2, 4, TU_DEPS(1)), COMP(3, 1, .start_us = 200), COMP(4, 1)};
  tu_write_rank(p, 0, r, 4);
  g = tu_rank_graph(p, 0);
  assert_int_equal(chakra_timeline_open(&t, path, &err), 0);
  assert_int_equal(chakra_timeline_add_graph(t, 0, g, &info, &err), 0);
  assert_int_equal(chakra_timeline_close(t, &err), 0);
  assert_int_equal(info.recorded, 2);
  doc = parse_json(path);
  n = slices(doc, x, 8);
  assert_true(start_of(x, n, 1, &tid) == 100);
  assert_true(start_of(x, n, 2, &tid) == 104);
  assert_true(start_of(x, n, 3, &tid) == 200);
  assert_true(start_of(x, n, 4, &tid) == 100);
  yajl_tree_free(doc);
  chakra_graph_free(g);
  free(p), free(path);
}

/* ---- diff ---- */

static char *side(const char *name, const tu_wnode *n, size_t k) {
  char *p = tu_join(tu_dir, name);
  tu_write_rank(p, 0, n, k);
  char *file = chakra_rank_path_dup(p, 0);
  free(p);
  return file;
}

static const chakra_diff_node *listed(const chakra_diff_rank *r, chakra_diff_kind kind, uint64_t id) {
  for (size_t i = 0; i < r->n_listed; i++)
    if (r->listed[i].kind == kind && (kind == CHAKRA_DIFF_REMOVED ? r->listed[i].id_a : r->listed[i].id_b) == id)
      return &r->listed[i];
  fail_msg("no change of kind %d for node %llu", (int)kind, (unsigned long long)id);
  return NULL;
}

static void diff_names_what_changed(void **state) {
  (void)state;
  const tu_wnode a[] = {COMP(1, 20, .name = "comp1"), TU_COLL(2, CHAKRA_ALL_REDUCE, 1024, TU_DEPS(1)),
                        COMP(3, 5, TU_DEPS(2)), COMP(4, 1)};
  const tu_wnode b[] = {COMP(1, 25, .name = "comp1"), TU_COLL(2, CHAKRA_ALL_REDUCE, 4096, TU_DEPS(1)),
                        COMP(3, 5, TU_DEPS(1)), COMP(6, 1, .name = "new one")};
  char *fa = side("a", a, 4), *fb = side("b", b, 4);
  chakra_diff_options by_id = {0};
  chakra_diff_rank r;
  chakra_error err = {0};
  assert_int_equal(chakra_diff_files(fa, fa, &by_id, &r, &err), 0);
  assert_true(chakra_diff_rank_equal(&r));
  assert_int_equal(r.same, 4);
  chakra_diff_rank_free(&r);
  assert_int_equal(chakra_diff_files(fa, fb, &by_id, &r, &err), 0);
  assert_false(chakra_diff_rank_equal(&r));
  assert_int_equal(r.added, 1);
  assert_int_equal(r.removed, 1);
  assert_int_equal(r.changed, 3);
  assert_int_equal(r.same, 0);
  assert_int_equal(r.changed_fields[2], 1); /* duration: bit 2 */
  const chakra_diff_node *d = listed(&r, CHAKRA_DIFF_CHANGED, 1);
  assert_int_equal(d->what, CHAKRA_DIFF_DURATION);
  assert_string_equal(d->details, "duration 20 -> 25 us");
  d = listed(&r, CHAKRA_DIFF_CHANGED, 2);
  assert_int_equal(d->what, CHAKRA_DIFF_ATTRS);
  assert_contains(d->details, "attr comm_size 1024 -> 4096");
  d = listed(&r, CHAKRA_DIFF_CHANGED, 3);
  assert_int_equal(d->what, CHAKRA_DIFF_DATA_DEPS);
  assert_contains(d->details, "data deps +{1} -{2}");
  assert_string_equal(listed(&r, CHAKRA_DIFF_ADDED, 6)->name, "new one");
  listed(&r, CHAKRA_DIFF_REMOVED, 4);
  /* the summary figures that differ, from both sides' statistics */
  chakra_diff_figure *fig;
  long nf = chakra_diff_summary(&r.stats_a, &r.stats_b, &fig);
  assert_true(nf > 0);
  int bytes = 0;
  for (long i = 0; i < nf; i++)
    if (strcmp(fig[i].label, "collective ALL_REDUCE bytes") == 0) bytes = fig[i].a == 1024 && fig[i].b == 4096;
  assert_true(bytes);
  free(fig);
  /* the report as JSON */
  char *paths_a[] = {fa}, *paths_b[] = {fb}, *out = tu_join(tu_dir, "d.json");
  chakra_diff_set set = {.paths_a = paths_a, .paths_b = paths_b, .ranks_a = 1, .ranks_b = 1, .ranks = &r};
  assert_false(chakra_diff_set_equal(&set));
  assert_int_equal(chakra_diff_write(&set, out, 1, &err), 0);
  yajl_val doc = parse_json(out);
  assert_true(YAJL_IS_FALSE(field(doc, "equal")));
  yajl_val ranks = field(doc, "ranks");
  assert_int_equal(ranks->u.array.len, 1);
  assert_int_equal(YAJL_GET_INTEGER(field(ranks->u.array.values[0], "changed")), 3);
  assert_int_equal(field(ranks->u.array.values[0], "nodes")->u.array.len, 5);
  yajl_tree_free(doc);
  chakra_diff_rank_free(&r);
  free(fa), free(fb), free(out);
}

/* The same graph numbered from 100: every node added and removed by id,
 * none by name and position. */
static void diff_by_name_matches_renumbered_ids(void **state) {
  (void)state;
  const tu_wnode a[] = {COMP(1, 2, .name = "x"), COMP(2, 3, TU_DEPS(1), .name = "y"), COMP(3, 3, TU_DEPS(1), .name = "y")};
  const tu_wnode b[] = {COMP(101, 2, .name = "x"), COMP(102, 3, TU_DEPS(101), .name = "y"),
                        COMP(103, 3, TU_DEPS(101), .name = "y")};
  char *fa = side("a", a, 3), *fb = side("b", b, 3);
  chakra_diff_options by_id = {0};
  chakra_diff_rank r;
  chakra_error err = {0};
  assert_int_equal(chakra_diff_files(fa, fb, &by_id, &r, &err), 0);
  assert_int_equal(r.added, 3);
  assert_int_equal(r.removed, 3);
  chakra_diff_rank_free(&r);
  assert_int_equal(chakra_diff_files(fa, fb, &(chakra_diff_options){.by_name = 1}, &r, &err), 0);
  assert_true(chakra_diff_rank_equal(&r));
  assert_int_equal(r.same, 3);
  chakra_diff_rank_free(&r);
  free(fa), free(fb);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(dot_draws_nodes_edges_and_escaped_names, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(graphml_is_xml_with_the_names, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(views_choose_and_refuse, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(timeline_writer_makes_valid_json, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(graph_timeline_schedules_dependencies_and_lanes, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(diff_names_what_changed, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(diff_by_name_matches_renumbered_ids, tu_dir_setup, tu_dir_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
