/* test_commgroups.c - util/commgroups: the comm-group file as ASTRA-sim and
 * STAGE write it, and METADATA process groups, with the one-line messages
 * every consumer (sim, validate, coll expand, replay) shows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commgroups.h"
#include "testutil.h"

static int parse(cg_set *s, const char *text, uint32_t npus, chakra_error *err) {
  return cg_parse_file(s, text, strlen(text), "g.json", npus, err);
}

static void test_file_groups_keep_file_order_and_members_order(void **state) {
  (void)state;
  cg_set s = {0};
  chakra_error err;
  assert_int_equal(parse(&s, "{\"2\": [4, 5, 6, 7],\n \"1\": [3, 0, 1, 2]}", 8, &err), 0);
  assert_int_equal(s.n, 2);
  assert_string_equal(s.v[0].name, "2");
  assert_string_equal(s.v[1].name, "1");
  assert_int_equal(s.v[1].n, 4);
  assert_int_equal(s.v[1].members[0], 3);
  assert_int_equal(s.v[1].line, 2);
  assert_int_equal(cg_find(&s, "1"), 1);
  assert_int_equal(cg_find(&s, "3"), -1);
  assert_true(cg_has(&s.v[0], 6));
  assert_false(cg_has(&s.v[0], 3));
  cg_set_free(&s);
}

/* Each bad file gets one line naming file, line, group and what was wanted. */
static void test_file_errors_name_line_group_and_expectation(void **state) {
  (void)state;
  static const struct {
    const char *text, *want;
  } cases[] = {
      {"{\"1\": [0, 1],\n \"2\": [2, 9]}", "g.json: line 2: group \"2\": entry 1 is 9, expected a rank (integer 0..3)"},
      {"{\"1\": [0, \"x\"]}", "g.json: line 1: group \"1\": entry 1 is a string, expected a rank (integer 0..3)"},
      {"{\"1\": [0, -1]}", "entry 1 is -1"},
      {"{\"1\": [0, 1.5]}", "entry 1 is a fraction"},
      {"{\"1\": []}", "group \"1\": the list of ranks is empty"},
      {"{\"1\": [0, 2, 0]}", "group \"1\": rank 0 is listed twice"},
      {"{\"1\": [0],\n\n \"1\": [1]}", "g.json: line 3: group \"1\" is defined twice (first on line 1)"},
      {"{\"1\": 3}", "group \"1\": a number, expected a list of ranks"},
      {"{\"1\": {\"a\": 1}}", "group \"1\": an object, expected a list of ranks"},
      {"[0, 1]", "a list, expected a JSON object of group name -> list of ranks"},
      {"", "empty, expected a JSON object"},
      {"{\"1\": [0, 1]", "not JSON"},
      {"{\"1\": [0]} {}", "not JSON"},
      {"{\"1\": [[0]]}", "entry 0 is a list"},
      /* a name with a line break stays on one line (a fuzzing finding) */
      {"{\"a\\nb\\u0001\": []}", "group \"a\\nb\\x01\": the list of ranks is empty"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    cg_set s = {0};
    chakra_error err = {0};
    int rc = parse(&s, cases[i].text, 4, &err);
    if (rc == 0 || !strstr(err.msg, cases[i].want)) fail_msg("case %zu: rc %d, message '%s'", i, rc, err.msg);
    assert_int_equal(s.n, 0);
    assert_null(strchr(err.msg, '\n'));
    cg_set_free(&s);
  }
}

static void test_file_without_rank_count_accepts_any_rank(void **state) {
  (void)state;
  cg_set s = {0};
  chakra_error err;
  assert_int_equal(parse(&s, "{\"tp\": [100, 7]}", 0, &err), 0);
  assert_int_equal(s.v[0].members[0], 100);
  cg_set_free(&s);
}

static void test_metadata_repr_and_bare_json_read_alike(void **state) {
  (void)state;
  const char *repr = "['[{\"pg_name\": \"0\", \"ranks\": [], \"group_size\": 4}, "
                     "{\"pg_name\": \"5\", \"ranks\": [2, 0], \"backend_id\": 9}, {\"pg_name\": 6, \"ranks\": []}]']";
  cg_set s = {0};
  chakra_error err;
  assert_int_equal(cg_add_metadata(&s, repr, "t.0.et: node 1", 4, &err), 0);
  /* "0" is the world and is not added; 6 (an integer name) is every rank */
  assert_int_equal(s.n, 2);
  assert_string_equal(s.v[0].name, "5");
  assert_int_equal(s.v[0].n, 2);
  assert_int_equal(s.v[0].members[0], 2);
  assert_string_equal(s.v[1].name, "6");
  assert_int_equal(s.v[1].n, 4);
  /* first definition wins, from the bare form too */
  assert_int_equal(cg_add_metadata(&s, "[{\"pg_name\": \"5\", \"ranks\": [1, 3]}]", "w", 4, &err), 0);
  assert_int_equal(s.n, 2);
  assert_int_equal(s.v[0].members[0], 2);
  /* text without process groups is not an error */
  assert_int_equal(cg_add_metadata(&s, "['some other metadata']", "w", 4, &err), 0);
  cg_set_free(&s);
}

static void test_metadata_errors_name_the_node_and_group(void **state) {
  (void)state;
  static const struct {
    const char *text, *want;
  } cases[] = {
      {"['[{\"pg_name\": \"5\", \"ranks\": [0, 8]}]']", "N: process group 0 (\"5\"): rank 8 is outside 0..3"},
      {"['[{\"pg_name\": \"5\", \"ranks\": [0, \"a\"]}]']", "N: process group 0 (\"5\"): entry 1 of ranks is not a non-negative integer"},
      {"['[{\"pg_name\": \"5\"}]']", "N: process group 0: expected pg_name and ranks"},
      {"['{\"pg_name\": \"5\"}']", "N: the process groups are not a JSON list"},
      {"['[{\"pg_name\": \"0\", \"ranks\": [0, 1]}]']", "this name means all 4 ranks, but it lists 2"},
      {"['[{\"pg_name\": \"3\", \"ranks\": [1, 1]}]']", "rank 1 is listed twice"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    cg_set s = {0};
    chakra_error err = {0};
    int rc = cg_add_metadata(&s, cases[i].text, "N", 4, &err);
    if (rc == 0 || !strstr(err.msg, cases[i].want)) fail_msg("case %zu: rc %d, message '%s'", i, rc, err.msg);
    cg_set_free(&s);
  }
}

static void test_is_all(void **state) {
  (void)state;
  assert_true(cg_is_all(NULL));
  assert_true(cg_is_all(""));
  assert_true(cg_is_all("0"));
  assert_false(cg_is_all("00"));
  assert_false(cg_is_all("1"));
}

/* {"g0": [0, 1], "g1": [2, 3], ...}: n groups of two ranks each, one per
 * line, and then extra (a line of its own, or ""). Free with free(). */
static char *many_groups(uint32_t n, const char *extra, size_t *len) {
  size_t cap = (size_t)n * 48 + strlen(extra) + 16, o = 0;
  char *t = malloc(cap);
  assert_non_null(t);
  o += (size_t)snprintf(t + o, cap - o, "{");
  for (uint32_t i = 0; i < n; i++)
    o += (size_t)snprintf(t + o, cap - o, "%s\"g%u\": [%u, %u]\n", i ? ", " : "", i, 2 * i, 2 * i + 1);
  o += (size_t)snprintf(t + o, cap - o, "%s}", extra);
  *len = o;
  return t;
}

/* A name defined twice is still found among tens of thousands (and named
 * with the line of its first definition); every name finds its own group,
 * and of two groups added under one name the first. */
static void test_many_groups_by_name(void **state) {
  (void)state;
  size_t len;
  char *t = many_groups(50000, ", \"g31337\": [0]", &len);
  cg_set s = {0};
  chakra_error err = {0};
  assert_int_not_equal(cg_parse_file(&s, t, len, "g.json", 0, &err), 0);
  assert_string_equal(err.msg, "g.json: line 50001: group \"g31337\" is defined twice (first on line 31338)");
  assert_int_equal(s.n, 0);
  t[len - strlen(", \"g31337\": [0]}")] = '}';
  assert_int_equal(cg_parse_file(&s, t, len - strlen(", \"g31337\": [0]"), "g.json", 0, &err), 0);
  assert_int_equal(s.n, 50000);
  char name[32];
  for (uint32_t i = 0; i < 50000; i++) {
    snprintf(name, sizeof name, "g%u", i);
    assert_int_equal(cg_find(&s, name), (long)i);
  }
  assert_int_equal(cg_find(&s, "g50000"), -1);
  uint32_t m[2] = {5, 6};
  assert_int_equal(cg_add_group(&s, "g7", m, 2), 0);
  assert_int_equal(cg_find(&s, "g7"), 7);
  assert_int_equal(cg_add_group(&s, "new", m, 2), 0);
  assert_int_equal(cg_add_group(&s, "new", m, 1), 0);
  assert_int_equal(cg_find(&s, "new"), 50001);
  cg_set_free(&s);
  free(t);
}

static double cpu_seconds(void) { return (double)clock() / CLOCKS_PER_SEC; }

/* Reading a groups file costs time linear in its groups: 2^16 groups once
 * against 2^12 sixteen times (the duplicate check by scanning it had
 * before took 10.2 s of CPU for the large file, 0.6 s for the 16 small
 * ones). CPU time, so that load on the machine does not matter. */
static void test_groups_file_read_in_linear_time(void **state) {
  (void)state;
  size_t small_len, big_len;
  char *small = many_groups(1u << 12, "", &small_len), *big = many_groups(1u << 16, "", &big_len);
  chakra_error err;
  double t0 = cpu_seconds();
  for (int k = 0; k < 16; k++) {
    cg_set s = {0};
    assert_int_equal(cg_parse_file(&s, small, small_len, "s.json", 0, &err), 0);
    cg_set_free(&s);
  }
  double t1 = cpu_seconds();
  cg_set s = {0};
  assert_int_equal(cg_parse_file(&s, big, big_len, "b.json", 0, &err), 0);
  assert_int_equal(s.n, 1u << 16);
  cg_set_free(&s);
  double t2 = cpu_seconds();
  if (t2 - t1 > 4 * (t1 - t0) + 0.05)
    fail_msg("2^16 groups took %.3f s of CPU, 16 x 2^12 groups %.3f s: not linear", t2 - t1, t1 - t0);
  free(small), free(big);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_file_groups_keep_file_order_and_members_order),
      cmocka_unit_test(test_file_errors_name_line_group_and_expectation),
      cmocka_unit_test(test_file_without_rank_count_accepts_any_rank),
      cmocka_unit_test(test_metadata_repr_and_bare_json_read_alike),
      cmocka_unit_test(test_metadata_errors_name_the_node_and_group),
      cmocka_unit_test(test_is_all),
      cmocka_unit_test(test_many_groups_by_name),
      cmocka_unit_test(test_groups_file_read_in_linear_time),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
