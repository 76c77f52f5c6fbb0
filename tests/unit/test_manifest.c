/* test_manifest.c - pins the shared form's manifest (PREFIX.set.json,
 * include/chakra/set.h): a grid's classes, bindings and group names by
 * rule (STAGE's numbering, checked against an enumeration), a table's
 * roles and rows, what is written reading back to the same manifest, and
 * every malformed manifest refused in one line naming the file, the line
 * and the member (an unknown version among them). */
#include <stdio.h>
#include <stdlib.h>

#include "chakra/set.h"
#include "testutil.h"

static chakra_manifest *parse_ok(const char *text) {
  chakra_manifest *m = NULL;
  chakra_error err = {0};
  if (chakra_manifest_parse(&m, text, strlen(text), "t.set.json", &err)) fail_msg("%s", err.msg);
  return m;
}

static const char *parse_fails(const char *text) {
  static chakra_error err;
  memset(&err, 0, sizeof err);
  chakra_manifest *m = (chakra_manifest *)1;
  assert_int_not_equal(chakra_manifest_parse(&m, text, strlen(text), "t.set.json", &err), 0);
  assert_null(m);
  assert_null(strchr(err.msg, '\n'));
  return err.msg;
}

/* dp 2, tp 2, pp 2 as chakra synth lays them out: rank = (pp*TP + tp)*DP + dp. */
static const char grid_text[] =
    "{\"chakra_trace_set\": 1, \"ranks\": 8,\n"
    " \"classes\": [{\"template\": \"g.class0.et\", \"rep\": 0}, {\"template\": \"g.class1.et\", \"rep\": 4}],\n"
    " \"layout\": {\"kind\": \"grid\",\n"
    "  \"axes\": [{\"name\": \"dp\", \"size\": 2}, {\"name\": \"tp\", \"size\": 2}, {\"name\": \"pp\", \"size\": 2}],\n"
    "  \"class_axes\": [\"pp\"],\n"
    "  \"groups\": [{\"axes\": [\"dp\"], \"order\": [\"pp\", \"tp\"], \"first\": 1},\n"
    "             {\"axes\": [\"tp\"], \"order\": [\"pp\", \"dp\"], \"first\": 5}]}}\n";

static void grid_classes_bindings_and_groups(void **state) {
  (void)state;
  chakra_manifest *m = parse_ok(grid_text);
  assert_int_equal(chakra_manifest_kind(m), CHAKRA_MANIFEST_GRID);
  assert_int_equal(chakra_manifest_ranks(m), 8);
  assert_int_equal(chakra_manifest_classes(m), 2);
  for (uint32_t r = 0; r < 8; r++) assert_int_equal(chakra_manifest_class_of(m, r), r / 4);
  assert_string_equal(chakra_manifest_template(m, 1), "g.class1.et");
  assert_int_equal(chakra_manifest_rep(m, 1), 4);
  /* peers: rank 0's pipeline peer is 4; rank 3 (dp 1, tp 1) talks to 7 */
  assert_int_equal(chakra_manifest_bind_peer(m, 3, 4), 7);
  assert_int_equal(chakra_manifest_bind_peer(m, 6, 0), 2);
  assert_int_equal(chakra_manifest_bind_peer(m, 0, 4), 4);
  assert_int_equal(chakra_manifest_bind_peer(m, 5, 99), 99); /* outside the set: unchanged */
  /* groups by STAGE's numbering: dp groups 1-4 ([0,1] [2,3] [4,5] [6,7]), tp 5-8 ([0,2] [1,3] [4,6] [5,7]) */
  static const char *dp_of[8] = {"1", "1", "2", "2", "3", "3", "4", "4"}, *tp_of[8] = {"5", "6", "5", "6", "7", "8", "7", "8"};
  for (uint32_t r = 0; r < 8; r++) {
    uint32_t rep = r / 4 * 4;
    assert_string_equal(chakra_manifest_bind_group(m, r, dp_of[rep]), dp_of[r]);
    assert_string_equal(chakra_manifest_bind_group(m, r, tp_of[rep]), tp_of[r]);
  }
  assert_string_equal(chakra_manifest_bind_group(m, 3, "42"), "42");  /* no rule numbers it */
  assert_string_equal(chakra_manifest_bind_group(m, 3, "dp"), "dp");
  assert_null(chakra_manifest_bind_group(m, 3, NULL));
  /* the same string each time (names live as long as the manifest) */
  assert_ptr_equal(chakra_manifest_bind_group(m, 3, "1"), chakra_manifest_bind_group(m, 2, "1"));
  uint32_t n;
  const uint32_t *ax = chakra_manifest_rule_axes(m, 1, &n);
  assert_int_equal(n, 1);
  assert_string_equal(chakra_manifest_axis_name(m, ax[0]), "tp");
  assert_int_equal(chakra_manifest_rule_first(m, 1), 5);
  assert_true(chakra_manifest_axis_is_class(m, 2));
  chakra_manifest_free(m);
}

static void written_reads_back(void **state) {
  (void)state;
  chakra_manifest *m = parse_ok(grid_text);
  char *path = tu_join(tu_dir, "g.set.json");
  chakra_error err = {0};
  if (chakra_manifest_write(m, path, &err)) fail_msg("%s", err.msg);
  chakra_manifest *back = NULL;
  if (chakra_manifest_read(&back, path, &err)) fail_msg("%s", err.msg);
  for (uint32_t r = 0; r < 8; r++)
    for (int32_t p = 0; p < 8; p++) assert_int_equal(chakra_manifest_bind_peer(back, r, p), chakra_manifest_bind_peer(m, r, p));
  /* writing again gives the same bytes */
  char *again = tu_join(tu_dir, "h.set.json");
  if (chakra_manifest_write(back, again, &err)) fail_msg("%s", err.msg);
  size_t a, b;
  char *ta = tu_read_text(path, &a), *tb = tu_read_text(again, &b);
  assert_string_equal(ta, tb);
  free(ta), free(tb), free(again), free(path);
  chakra_manifest_free(back);
  chakra_manifest_free(m);
}

/* A table: two classes, roles and rows; built, written, read, copied. */
static void table_roles_rows_and_copy(void **state) {
  (void)state;
  chakra_manifest *m;
  chakra_error err = {0};
  assert_int_equal(chakra_manifest_new(&m, CHAKRA_MANIFEST_TABLE, 4, &err), 0);
  assert_int_equal(chakra_manifest_add_class(m, "t.class0.et", 0, &err), 0);
  assert_int_equal(chakra_manifest_add_class(m, "t.class1.et", 3, &err), 0);
  const char *g0[] = {"a", "b"}, *g1[] = {"x"};
  int32_t p0[] = {1}, p1[] = {2, 0};
  assert_int_equal(chakra_manifest_set_roles(m, 0, g0, 2, p0, 1, &err), 0);
  assert_int_equal(chakra_manifest_set_roles(m, 1, g1, 1, p1, 2, &err), 0);
  const char *r1[] = {"c", "d"}, *r2[] = {"e", "a"}, *r3[] = {"x"};
  int32_t q1[] = {0}, q2[] = {3};
  assert_int_equal(chakra_manifest_set_rank(m, 0, 0, g0, p0, &err), 0);
  assert_int_equal(chakra_manifest_set_rank(m, 1, 0, r1, q1, &err), 0);
  assert_int_equal(chakra_manifest_set_rank(m, 2, 0, r2, q2, &err), 0);
  /* the representative must bind to its own template: refused until it does */
  int32_t wrong[] = {2, 1};
  assert_int_equal(chakra_manifest_set_rank(m, 3, 1, r3, wrong, &err), 0);
  assert_int_not_equal(chakra_manifest_check(m, &err), 0);
  assert_non_null(strstr(err.msg, "representative of class 1"));
  assert_int_equal(chakra_manifest_set_rank(m, 3, 1, r3, p1, &err), 0);
  assert_int_equal(chakra_manifest_set_groups_file(m, "t.json", &err), 0);
  assert_int_equal(chakra_manifest_check(m, &err), 0);
  assert_string_equal(chakra_manifest_bind_group(m, 1, "b"), "d");
  assert_string_equal(chakra_manifest_bind_group(m, 2, "a"), "e");
  assert_string_equal(chakra_manifest_bind_group(m, 2, "zz"), "zz"); /* not a role */
  assert_int_equal(chakra_manifest_bind_peer(m, 1, 1), 0);
  assert_int_equal(chakra_manifest_bind_peer(m, 2, 5), 5);
  char *path = tu_join(tu_dir, "t.set.json");
  if (chakra_manifest_write(m, path, &err)) fail_msg("%s", err.msg);
  chakra_manifest *back = NULL, *copy = NULL;
  if (chakra_manifest_read(&back, path, &err)) fail_msg("%s", err.msg);
  if (chakra_manifest_copy(&copy, back, &err)) fail_msg("%s", err.msg);
  assert_string_equal(chakra_manifest_groups_file(copy), "t.json");
  assert_int_equal(chakra_manifest_class_of(copy, 3), 1);
  assert_int_equal(chakra_manifest_group_roles(copy, 0), 2);
  assert_int_equal(chakra_manifest_peer_roles(copy, 1), 2);
  assert_string_equal(chakra_manifest_rank_group(copy, 2, 1), "a");
  assert_int_equal(chakra_manifest_rank_peer(copy, 2, 0), 3);
  assert_int_equal(chakra_manifest_bind_peer(copy, 1, 1), 0);
  free(path);
  chakra_manifest_free(copy);
  chakra_manifest_free(back);
  chakra_manifest_free(m);
}

/* A million ranks by rule cost nothing per rank. */
static void million_ranks_by_rule(void **state) {
  (void)state;
  chakra_manifest *m;
  chakra_error err = {0};
  assert_int_equal(chakra_manifest_new(&m, CHAKRA_MANIFEST_GRID, 1u << 20, &err), 0);
  assert_int_equal(chakra_manifest_add_axis(m, "dp", 32768, 0, &err), 0);
  assert_int_equal(chakra_manifest_add_axis(m, "tp", 8, 0, &err), 0);
  assert_int_equal(chakra_manifest_add_axis(m, "pp", 4, 1, &err), 0);
  const char *dp[] = {"dp"}, *tp[] = {"tp"}, *o1[] = {"pp", "tp"}, *o2[] = {"pp", "dp"};
  assert_int_equal(chakra_manifest_add_group_rule(m, dp, 1, o1, 2, 1, &err), 0);
  assert_int_equal(chakra_manifest_add_group_rule(m, tp, 1, o2, 2, 33, &err), 0);
  for (uint32_t k = 0; k < 4; k++) assert_int_equal(chakra_manifest_add_class(m, "c.et", k * 262144, &err), 0);
  assert_int_equal(chakra_manifest_check(m, &err), 0);
  /* rank (dp 5, tp 3, pp 2): its tp group is 33 + (2*32768 + 5) */
  uint32_t r = (2 * 8 + 3) * 32768 + 5;
  char want[32];
  snprintf(want, sizeof want, "%u", 33 + 2 * 32768 + 5);
  assert_string_equal(chakra_manifest_bind_group(m, r, "65569"), want); /* rep 524288's tp group: 33 + 65536 */
  assert_int_equal(chakra_manifest_bind_peer(m, r, 3 * 262144), (3 * 8 + 3) * 32768 + 5);
  /* overlapping numbers and a missing axis refused */
  assert_int_not_equal(chakra_manifest_add_group_rule(m, dp, 1, o1, 2, 40, &err), 0);
  assert_non_null(strstr(err.msg, "numbered by another rule"));
  assert_int_not_equal(chakra_manifest_add_group_rule(m, dp, 1, o1, 1, 1000000, &err), 0);
  chakra_manifest_free(m);
}

static void malformed_manifests_one_line_each(void **state) {
  (void)state;
  static const struct {
    const char *text, *want;
  } cases[] = {
      {"", "t.set.json: line 1: empty"},
      {"{\"chakra_trace_set\": 1,", "t.set.json: line 1: not JSON"},
      {"[1]", "line 1: (top): expected a trace-set manifest"},
      {"{\"ranks\": 2}", "no \"chakra_trace_set\" member"},
      {"{\"chakra_trace_set\": 2, \"ranks\": 1}", "line 1: chakra_trace_set: version 2 is not one this chakra reads (it reads version 1)"},
      {"{\"chakra_trace_set\": \"1\"}", "chakra_trace_set: expected the version number 1, found a string"},
      {"{\"chakra_trace_set\": 1,\n \"ranks\": 0}", "line 2: ranks: 0 is out of range"},
      {"{\"chakra_trace_set\": 1, \"ranks\": 2, \"rank\": 2}", "unknown member \"rank\""},
      {"{\"chakra_trace_set\": 1, \"ranks\": 2, \"ranks\": 3}", "member \"ranks\" given twice"},
      {"{\"chakra_trace_set\": 1, \"ranks\": 2, \"classes\": [], \"layout\": {\"kind\": \"tree\"}}",
       "layout.kind: \"tree\": expected \"grid\" or \"table\""},
      {"{\"chakra_trace_set\": 1, \"ranks\": 2, \"classes\": [{\"template\": \"a\", \"rep\": 0}],\n"
       " \"layout\": {\"kind\": \"grid\", \"axes\": [{\"name\": \"dp\", \"size\": 3}], \"class_axes\": [], \"groups\": []}}",
       "line 2: layout.axes: the axes make 3 ranks, but \"ranks\" is 2"},
      {"{\"chakra_trace_set\": 1, \"ranks\": 2, \"classes\": [{\"template\": \"a\", \"rep\": 0}],\n"
       " \"layout\": {\"kind\": \"grid\", \"axes\": [{\"name\": \"dp\", \"size\": 2}], \"class_axes\": [\"pp\"], \"groups\": []}}",
       "layout.class_axes[0]: no axis \"pp\""},
      {"{\"chakra_trace_set\": 1, \"ranks\": 2, \"classes\": [{\"template\": \"a\", \"rep\": 0}],\n"
       " \"layout\": {\"kind\": \"grid\", \"axes\": [{\"name\": \"dp\", \"size\": 2}], \"class_axes\": [\"dp\"], \"groups\": []}}",
       "classes: the class axes make 2 classes, but 1 are listed"},
      {"{\"chakra_trace_set\": 1, \"ranks\": 2, \"classes\": [{\"template\": \"a\", \"rep\": 1}, {\"template\": \"b\", \"rep\": 0}],\n"
       " \"layout\": {\"kind\": \"grid\", \"axes\": [{\"name\": \"dp\", \"size\": 2}], \"class_axes\": [\"dp\"], \"groups\": []}}",
       "line 1: classes[0].rep: rank 1 is in class 1"},
      {"{\"chakra_trace_set\": 1, \"ranks\": 4, \"classes\": [{\"template\": \"a\", \"rep\": 0}],\n"
       " \"layout\": {\"kind\": \"grid\", \"axes\": [{\"name\": \"dp\", \"size\": 2}, {\"name\": \"tp\", \"size\": 2}],\n"
       "  \"class_axes\": [], \"groups\": [{\"axes\": [\"dp\"], \"order\": [], \"first\": 1}]}}",
       "line 3: layout.groups[0]: a group rule names every axis once"},
      {"{\"chakra_trace_set\": 1, \"ranks\": 2, \"classes\": [{\"template\": \"a\", \"rep\": 0, \"groups\": []}],\n"
       " \"layout\": {\"kind\": \"grid\", \"axes\": [{\"name\": \"dp\", \"size\": 2}], \"class_axes\": [], \"groups\": []}}",
       "classes[0]: unknown member \"groups\""},
      {"{\"chakra_trace_set\": 1, \"ranks\": 2, \"classes\": [{\"template\": \"a\", \"rep\": 0, \"groups\": [\"1\"], \"peers\": []}],\n"
       " \"layout\": {\"kind\": \"table\", \"ranks\": [[0, [\"1\"], []], [0, [], []]]}}",
       "line 2: layout.ranks[1]: expected a list of 1 group name(s), one per group role of class 0"},
      {"{\"chakra_trace_set\": 1, \"ranks\": 3, \"classes\": [{\"template\": \"a\", \"rep\": 0, \"groups\": [], \"peers\": []}],\n"
       " \"layout\": {\"kind\": \"table\", \"ranks\": [[0, [], []]]}}",
       "layout.ranks: 1 rows for 3 ranks"},
      {"{\"chakra_trace_set\": 1, \"ranks\": 2, \"classes\": [{\"template\": \"a\", \"rep\": 0, \"groups\": [\"1\", \"1\"], \"peers\": []}],\n"
       " \"layout\": {\"kind\": \"table\", \"ranks\": [[0, [\"1\", \"1\"], []], [0, [\"2\", \"3\"], []]]}}",
       "classes[0]: class 0: the group \"1\" is a role twice"},
      {"{\"chakra_trace_set\": 1, \"ranks\": 2, \"classes\": [{\"template\": \"a\", \"rep\": 0, \"groups\": [], \"peers\": [1]}],\n"
       " \"layout\": {\"kind\": \"table\", \"ranks\": [[0, [], [1]], [0, [], [9999999999]]]}}",
       "layout.ranks[1][2][0]: 9999999999 is out of range"},
      {"{\"chakra_trace_set\": 1, \"ranks\": 2, \"classes\": [{\"template\": \"a\", \"rep\": 1, \"groups\": [], \"peers\": [1]}],\n"
       " \"layout\": {\"kind\": \"table\", \"ranks\": [[0, [], [1]], [0, [], [0]]]}}",
       "layout.ranks[1]: the representative of class 0 binds peer role 0 to 0, not to its template's 1"},
      {"{\"chakra_trace_set\": 1, \"ranks\": 1, \"classes\": [{\"template\": \"a\\u0000b\", \"rep\": 0}],\n"
       " \"layout\": {\"kind\": \"grid\", \"axes\": [{\"name\": \"x\", \"size\": 1}], \"class_axes\": [], \"groups\": []}}",
       "classes[0].template: a NUL character"},
      {"[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]", "nested too deeply"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const char *msg = parse_fails(cases[i].text);
    if (!strstr(msg, cases[i].want)) fail_msg("case %zu: got \"%s\", expected \"%s\"", i, msg, cases[i].want);
    assert_true(strncmp(msg, "t.set.json: ", 12) == 0);
  }
  /* a file that does not exist */
  chakra_manifest *m;
  chakra_error err = {0};
  assert_int_not_equal(chakra_manifest_read(&m, "/nonexistent/x.set.json", &err), 0);
  assert_non_null(strstr(err.msg, "/nonexistent/x.set.json: cannot open"));
}

static void names_of_the_files(void **state) {
  (void)state;
  char *a = chakra_manifest_path_dup("out/gpt"), *b = chakra_class_path_dup("out/gpt", 12);
  assert_string_equal(a, "out/gpt.set.json");
  assert_string_equal(b, "out/gpt.class12.et");
  free(a), free(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(grid_classes_bindings_and_groups),
      cmocka_unit_test_setup_teardown(written_reads_back, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(table_roles_rows_and_copy, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test(million_ranks_by_rule),
      cmocka_unit_test(malformed_manifests_one_line_each),
      cmocka_unit_test(names_of_the_files),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
