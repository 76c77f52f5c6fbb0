/* test_topo.c - util/topo: Kahn's order with ties broken by ascending id
 * (not by index), skipped nodes, cycles reported through the remaining
 * in-degrees and a node on the cycle, and the id heap on its own. */
#include <stdlib.h>

#include "testutil.h"
#include "toposort.h"

typedef struct nd {
  uint64_t id;
  char pad[24]; /* the ids are read with a stride, as in a node array */
} nd;

static void test_topo_ties_go_by_id_not_by_index(void **state) {
  (void)state;
  /* indexes 0..4 with ids 50, 10, 40, 20, 30; 0 depends on 1, 2 on 3 */
  nd n[5] = {{50, ""}, {10, ""}, {40, ""}, {20, ""}, {30, ""}};
  uint32_t off[6] = {0, 1, 1, 2, 2, 2}, deps[2] = {1, 3};
  topo_graph g = {.n = 5, .dep_off = off, .deps = deps, .keys = &n[0].id, .stride = sizeof *n};
  uint32_t order[5], rem[5];
  size_t done;
  assert_int_equal(topo_sort(&g, order, &done, rem), 0);
  assert_int_equal(done, 5);
  /* ready: 10 20 30; 10 frees 50, 20 frees 40: 10 20 30 40 50 */
  uint32_t want[5] = {1, 3, 4, 2, 0};
  assert_memory_equal(order, want, sizeof want);
  for (int i = 0; i < 5; i++) assert_int_equal(rem[i], 0);
}

static void test_topo_dependency_on_a_larger_id_waits(void **state) {
  (void)state;
  /* id 1 depends on id 9: 9 comes first although 1 is smaller */
  nd n[3] = {{1, ""}, {9, ""}, {5, ""}};
  uint32_t off[4] = {0, 1, 1, 1}, deps[1] = {1};
  topo_graph g = {.n = 3, .dep_off = off, .deps = deps, .keys = &n[0].id, .stride = sizeof *n};
  uint32_t order[3];
  size_t done;
  assert_int_equal(topo_sort(&g, order, &done, NULL), 0);
  uint32_t want[3] = {2, 1, 0};
  assert_int_equal(done, 3);
  assert_memory_equal(order, want, sizeof want);
}

static void test_topo_skipped_nodes_are_left_out(void **state) {
  (void)state;
  nd n[3] = {{3, ""}, {1, ""}, {2, ""}};
  uint32_t off[4] = {0, 0, 0, 0};
  uint8_t skip[3] = {0, 1, 0};
  topo_graph g = {.n = 3, .dep_off = off, .deps = off, .skip = skip, .keys = &n[0].id, .stride = sizeof *n};
  uint32_t order[3];
  size_t done;
  assert_int_equal(topo_sort(&g, order, &done, NULL), 0);
  assert_int_equal(done, 2);
  assert_int_equal(order[0], 2);
  assert_int_equal(order[1], 0);
}

static void test_topo_cycle_leaves_its_nodes_and_names_one_on_it(void **state) {
  (void)state;
  /* 0 -> 1 -> 2 -> 1 (a cycle of 1 and 2 behind which 0 waits); 3 free */
  nd n[4] = {{10, ""}, {11, ""}, {12, ""}, {13, ""}};
  uint32_t off[5] = {0, 1, 2, 3, 3}, deps[3] = {1, 2, 1};
  topo_graph g = {.n = 4, .dep_off = off, .deps = deps, .keys = &n[0].id, .stride = sizeof *n};
  uint32_t order[4], rem[4];
  size_t done;
  assert_int_equal(topo_sort(&g, order, &done, rem), 0);
  assert_int_equal(done, 1);
  assert_int_equal(order[0], 3);
  assert_true(rem[0] && rem[1] && rem[2]);
  assert_int_equal(rem[3], 0);
  uint32_t c = topo_cycle_node(&g, rem, 0); /* 0 is behind the cycle, not on it */
  assert_true(c == 1 || c == 2);
  assert_int_equal(c, 1); /* the walk 0 -> 1 -> 2 -> 1 repeats at 1 */
}

static void test_idheap_pops_in_id_order_and_grows(void **state) {
  (void)state;
  enum { N = 1000 };
  nd *n = calloc(N, sizeof *n);
  for (uint32_t i = 0; i < N; i++) n[i].id = (uint64_t)((i * 7919u) % N);
  idheap h = {0};
  for (uint32_t i = 0; i < N; i++) assert_int_equal(idheap_push(&h, i, &n[0].id, sizeof *n), 0);
  for (uint64_t want = 0; want < N; want++) assert_int_equal(n[idheap_pop(&h, &n[0].id, sizeof *n)].id, want);
  assert_int_equal(h.n, 0);
  free(h.v);
  free(n);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_topo_ties_go_by_id_not_by_index),
      cmocka_unit_test(test_topo_dependency_on_a_larger_id_waits),
      cmocka_unit_test(test_topo_skipped_nodes_are_left_out),
      cmocka_unit_test(test_topo_cycle_leaves_its_nodes_and_names_one_on_it),
      cmocka_unit_test(test_idheap_pops_in_id_order_and_grows),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
