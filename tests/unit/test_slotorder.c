/* test_slotorder.c - pins the orders the communication slot imposes in
 * every timing, and the places in a group or key they give a node
 * (lib/analyze/slotorder.h), on small hand-drawn ranks. */
#include <stdlib.h>
#include <string.h>

#include "slotorder.h"
#include "testutil.h"

/* A rank as parent lists (-1 ends each); children CSR built from them. */
typedef struct rank {
  uint32_t n;
  uint64_t id[16];
  uint32_t child_off[17], children[32];
  uint8_t slot[16];
} rank;

static void build(rank *r, uint32_t n, const int parents[][3], const uint8_t *slot) {
  memset(r, 0, sizeof *r);
  r->n = n;
  uint32_t e = 0;
  for (uint32_t u = 0; u < n; u++) {
    r->id[u] = u;
    r->slot[u] = slot[u];
    r->child_off[u] = e;
    for (uint32_t c = 0; c < n; c++)
      for (int k = 0; k < 3 && parents[c][k] >= 0; k++)
        if ((uint32_t)parents[c][k] == u) r->children[e++] = c;
  }
  r->child_off[n] = e;
}

static void expect_after(const so_order *o, uint32_t s, const uint32_t *want, uint32_t n) {
  assert_int_equal(o->off[s + 1] - o->off[s], n);
  for (uint32_t k = 0; k < n; k++) assert_int_equal(o->after[o->off[s] + k], want[k]);
}

/* 0 compute; 1, 2 slot nodes after 0; 3 a slot node without parents;
 * 4 compute after 3; 5 slot after 4; 6 slot after 2.
 * 1 goes before 2 and 6 (its parent 0 is theirs too, and its id is lower);
 * 3 before 6 (ready from the start); 3 before 5 is already a dependency;
 * 2 and 5, 1 and 3 race (neither is ready whenever the other is). */
static void test_lower_id_ready_whenever_the_other_is_goes_first(void **state) {
  (void)state;
  static const int par[7][3] = {{-1}, {0, -1}, {0, -1}, {-1}, {3, -1}, {4, -1}, {2, -1}};
  static const uint8_t slot[7] = {0, 1, 1, 1, 0, 1, 1};
  rank r;
  build(&r, 7, par, slot);
  so_order o;
  assert_int_equal(so_compute(&o, r.n, r.id, r.child_off, r.children, r.slot), 0);
  static const uint32_t after1[] = {2, 6}, after3[] = {6};
  expect_after(&o, 1, after1, 2);
  expect_after(&o, 3, after3, 1);
  for (uint32_t i = 0; i < 7; i++)
    if (i != 1 && i != 3) expect_after(&o, i, NULL, 0);
  static const uint32_t count[7] = {0, 0, 1, 0, 0, 0, 2};
  for (uint32_t i = 0; i < 7; i++) assert_int_equal(o.count[i], count[i]);
  so_free(&o);
}

/* Four slot nodes after one compute node are issued in id order: a chain
 * 1 -> 2 -> 3 -> 4, not all six pairs. */
static void test_siblings_chain_in_id_order(void **state) {
  (void)state;
  static const int par[5][3] = {{-1}, {0, -1}, {0, -1}, {0, -1}, {0, -1}};
  static const uint8_t slot[5] = {0, 1, 1, 1, 1};
  rank r;
  build(&r, 5, par, slot);
  so_order o;
  assert_int_equal(so_compute(&o, r.n, r.id, r.child_off, r.children, r.slot), 0);
  for (uint32_t s = 1; s < 4; s++) {
    uint32_t next = s + 1;
    expect_after(&o, s, &next, 1);
  }
  expect_after(&o, 4, NULL, 0);
  so_free(&o);
}

/* Class A: 0 (slot, no parents), 2 (slot, after compute 1), 3 (slot,
 * after 2); 6 (slot, after compute 5, which has no parents either). Class
 * B: receives 4 (no parents) and 7 (after 1). 0 goes before 2 (slot order)
 * and 3 after 2, so they are the 0th, 1st and 2nd of A in every run; 6 is
 * after 0 (0 has no parents) but unordered with 2 and 3: at least the 1st.
 * The receives are unordered: each at least the 0th. Node 1 has no class. */
static void test_places_count_what_goes_before_in_every_run(void **state) {
  (void)state;
  static const int par[8][3] = {{-1}, {-1}, {1, -1}, {2, -1}, {-1}, {-1}, {5, -1}, {1, -1}};
  static const uint8_t slot[8] = {1, 0, 1, 1, 0, 0, 1, 0};
  rank r;
  build(&r, 8, par, slot);
  so_order o;
  assert_int_equal(so_compute(&o, r.n, r.id, r.child_off, r.children, r.slot), 0);
  const uint64_t A = 7, B = 9, N = SO_NO_CLASS;
  const uint64_t cls[8] = {A, N, A, A, B, N, A, B};
  uint64_t ord[8];
  assert_int_equal(so_ordinals(&o, r.n, r.child_off, r.children, cls, ord), 0);
  static const uint64_t want[8] = {0, 0, 1, 2, 0, 0, 1, 0};
  for (uint32_t i = 0; i < 8; i++) assert_int_equal(ord[i], want[i]);
  so_free(&o);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lower_id_ready_whenever_the_other_is_goes_first),
      cmocka_unit_test(test_siblings_chain_in_id_order),
      cmocka_unit_test(test_places_count_what_goes_before_in_every_run),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
