/* test_collgen.c - the generated algorithms' rotation property
 * (lib/coll/gen.c, coll_gen_equivariant): coll expand shares one
 * expansion between ranks at different places of a group only when every
 * rank's DAG is rank 0's rotated. Above 64 ranks that is decided by a rule
 * (a ring of equal blocks) instead of generating every rank's DAG; here
 * the rule is held against the DAGs themselves: never "rotated" where the
 * DAGs say otherwise, and for rings exactly what they say. */
#include "testutil.h"

#include <stdlib.h>

#include "dag.h"
#include "gen.h"

/* 1 when the case runs (the algorithm implements it), 0 when not. */
static int check_case(chakra_coll_type t, chakra_coll_algo a, uint32_t n, uint64_t size, coll_dag *x, coll_dag *y) {
  chakra_coll_gen_options o = {.coll = t, .algo = a, .ranks = n, .size = size, .chunks = 1, .reduce_bw = 50};
  chakra_error e;
  if (chakra_coll_gen_check(&o, &e)) return 0;
  int rule = coll_gen_equivariant_rule(&o), dags = coll_gen_equivariant_by_dags(&o, x, y);
  assert_true(dags >= 0);
  if (rule && !dags) fail_msg("%s %s on %u ranks, %llu bytes: the rule says rotated, the DAGs differ",
                              chakra_coll_algo_name(a), chakra_coll_type_name(t), n, (unsigned long long)size);
  if (a == CHAKRA_ALGO_RING && rule != dags)
    fail_msg("ring %s on %u ranks, %llu bytes: rule %d, DAGs %d", chakra_coll_type_name(t), n,
             (unsigned long long)size, rule, dags);
  /* what coll expand asks: the DAGs up to 64 ranks, the rule above */
  assert_int_equal(coll_gen_equivariant(&o, x, y), n <= 64 ? dags : rule);
  return 1 + dags; /* 2: rotated */
}

static void test_rule_agrees_with_the_dags(void **state) {
  (void)state;
  coll_dag x, y;
  coll_dag_init(&x), coll_dag_init(&y);
  static const chakra_coll_type types[] = {CHAKRA_COLL_ALLREDUCE, CHAKRA_COLL_ALLGATHER, CHAKRA_COLL_REDUCESCATTER,
                                           CHAKRA_COLL_ALLTOALL};
  static const chakra_coll_algo algos[] = {CHAKRA_ALGO_RING, CHAKRA_ALGO_DIRECT, CHAKRA_ALGO_HD, CHAKRA_ALGO_TREE,
                                           CHAKRA_ALGO_DBT};
  static const uint32_t ranks[] = {2, 3, 4, 5, 8, 12, 16, 64, 65, 96, 128};
  int ran = 0, rotated = 0;
  for (size_t t = 0; t < sizeof types / sizeof *types; t++)
    for (size_t a = 0; a < sizeof algos / sizeof *algos; a++)
      for (size_t k = 0; k < sizeof ranks / sizeof *ranks; k++) {
        uint32_t n = ranks[k];
        /* a multiple of n, one more (the last block larger) and a prime */
        uint64_t sizes[] = {(uint64_t)n * 4096, (uint64_t)n * 4096 + 1, 1000003};
        for (size_t s = 0; s < 3; s++) {
          int k2 = check_case(types[t], algos[a], n, sizes[s], &x, &y);
          ran += k2 > 0, rotated += k2 == 2;
        }
      }
  /* ring, direct and hd on every type they implement, trees on all-reduce */
  if (ran != 321 || rotated != 66) fail_msg("%d cases, %d rotated (321 and 66 expected)", ran, rotated);
  coll_dag_free(&x), coll_dag_free(&y);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_rule_agrees_with_the_dags)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
