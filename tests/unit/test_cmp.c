/* test_cmp.c - pins lib/util/cmp.h: each comparator sorts ascending over
 * the whole range of its type (no subtraction that wraps: 0 against the
 * maximum, negative against positive), equal values compare 0, and the
 * 64-bit one orders records by their leading key. */
#include <float.h>
#include <stdint.h>
#include <stdlib.h>

#include "cmp.h"
#include "testutil.h"

static void test_u32(void **state) {
  (void)state;
  uint32_t v[] = {UINT32_MAX, 0, 7, 0x80000000u, 1, 7};
  qsort(v, 6, sizeof *v, cmp_u32);
  uint32_t want[] = {0, 1, 7, 7, 0x80000000u, UINT32_MAX};
  assert_memory_equal(v, want, sizeof v);
  assert_int_equal(cmp_u32(&v[2], &v[3]), 0);
  assert_true(cmp_u32(&want[0], &want[5]) < 0);
  assert_true(cmp_u32(&want[5], &want[0]) > 0);
}

static void test_u64_and_keys(void **state) {
  (void)state;
  uint64_t v[] = {UINT64_MAX, 0, 1ull << 63, 5};
  qsort(v, 4, sizeof *v, cmp_u64);
  uint64_t want[] = {0, 5, 1ull << 63, UINT64_MAX};
  assert_memory_equal(v, want, sizeof v);
  struct rec { uint64_t key; uint32_t payload; } r[] = {{9, 1}, {UINT64_MAX, 2}, {0, 3}};
  qsort(r, 3, sizeof *r, cmp_u64);
  assert_int_equal(r[0].payload, 3);
  assert_int_equal(r[1].payload, 1);
  assert_int_equal(r[2].payload, 2);
}

static void test_i64(void **state) {
  (void)state;
  int64_t v[] = {INT64_MAX, -1, INT64_MIN, 0};
  qsort(v, 4, sizeof *v, cmp_i64);
  int64_t want[] = {INT64_MIN, -1, 0, INT64_MAX};
  assert_memory_equal(v, want, sizeof v);
}

static void test_double(void **state) {
  (void)state;
  double v[] = {DBL_MAX, -0.5, 1e-300, -DBL_MAX, 0.25};
  qsort(v, 5, sizeof *v, cmp_double);
  double want[] = {-DBL_MAX, -0.5, 1e-300, 0.25, DBL_MAX};
  assert_memory_equal(v, want, sizeof v);
  double z = 0.0, nz = -0.0;
  assert_int_equal(cmp_double(&z, &nz), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_u32),
      cmocka_unit_test(test_u64_and_keys),
      cmocka_unit_test(test_i64),
      cmocka_unit_test(test_double),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
