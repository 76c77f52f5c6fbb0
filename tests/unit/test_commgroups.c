/* test_commgroups.c - util/commgroups: the comm-group file as ASTRA-sim and
 * STAGE write it, and METADATA process groups, with the one-line messages
 * every consumer (sim, validate, coll expand, replay) shows. */
#include <stdlib.h>
#include <string.h>

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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_file_groups_keep_file_order_and_members_order),
      cmocka_unit_test(test_file_errors_name_line_group_and_expectation),
      cmocka_unit_test(test_file_without_rank_count_accepts_any_rank),
      cmocka_unit_test(test_metadata_repr_and_bare_json_read_alike),
      cmocka_unit_test(test_metadata_errors_name_the_node_and_group),
      cmocka_unit_test(test_is_all),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
