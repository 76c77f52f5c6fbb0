/* test_vec.c - pins lib/util/vec.h: appends keep every element through
 * growth, capacity doubles (amortised) instead of growing by one, size_t
 * and uint32_t capacities both work, and a size that would overflow fails
 * with the array and capacity left as they were. */
#include <stdint.h>
#include <stdlib.h>

#include "testutil.h"
#include "vec.h"

static void test_push_keeps_elements_and_doubles(void **state) {
  (void)state;
  uint64_t *v = NULL;
  size_t n = 0, cap = 0, grown = 0, last = 0;
  for (uint64_t i = 0; i < 100000; i++) {
    uint64_t *e = VEC_PUSH(v, n, cap);
    assert_non_null(e);
    *e = i * 3;
    if (cap != last) grown++, last = cap;
  }
  assert_int_equal(n, 100000);
  for (size_t i = 0; i < n; i++) assert_int_equal(v[i], i * 3);
  assert_true(cap >= n && cap < 2 * n + VEC_MIN_CAP);
  assert_true(grown <= 14); /* 16 doubled to 131072: 14 sizes, not 100000 */
  free(v);
}

static void test_u32_capacity_and_room(void **state) {
  (void)state;
  struct pair { uint32_t a, b; } *v = NULL;
  uint32_t n = 0, cap = 0;
  assert_int_equal(VEC_ROOM(v, n, cap, 1000), 0);
  assert_true(cap >= 1000);
  uint32_t before = cap;
  assert_int_equal(VEC_ROOM(v, n, cap, cap), 0); /* already fits: unchanged */
  assert_int_equal(cap, before);
  for (uint32_t i = 0; i < 5000; i++) {
    struct pair *p = VEC_PUSH(v, n, cap);
    assert_non_null(p);
    p->a = i, p->b = ~i;
  }
  for (uint32_t i = 0; i < n; i++) assert_int_equal(v[i].b, ~i);
  free(v);
}

static void test_overflow_fails_and_leaves_the_array(void **state) {
  (void)state;
  uint64_t *v = NULL;
  size_t n = 0, cap = 0;
  *(uint64_t *)VEC_PUSH(v, n, cap) = 7;
  uint64_t *was = v;
  size_t was_cap = cap;
  assert_int_equal(VEC_RESERVE(v, cap, SIZE_MAX / 4), -1); /* SIZE_MAX / 4 * 8 bytes overflows */
  assert_int_equal(VEC_ROOM(v, n, cap, SIZE_MAX), -1);     /* n + k overflows */
  assert_ptr_equal(v, was);
  assert_int_equal(cap, was_cap);
  assert_int_equal(v[0], 7);
  uint32_t *w = NULL;
  uint32_t wcap = 0;
  size_t past = (size_t)UINT32_MAX + 1;
  assert_int_equal(vec_room_u32(&w, &wcap, 0, past, sizeof *w), -1); /* past a 32-bit capacity */
  assert_null(w);
  assert_int_equal(wcap, 0);
  free(v);
}

static void test_next_cap(void **state) {
  (void)state;
  assert_int_equal(vec_next_cap(0, 1, 64, 8, SIZE_MAX), 64);
  assert_int_equal(vec_next_cap(64, 64, 64, 8, SIZE_MAX), 64);
  assert_int_equal(vec_next_cap(64, 65, 64, 8, SIZE_MAX), 128);
  assert_int_equal(vec_next_cap(64, 1000, 64, 8, SIZE_MAX), 1024);
  assert_int_equal(vec_next_cap(0, 100, 64, 1, 100), 100); /* clamped to the maximum */
  assert_int_equal(vec_next_cap(0, 101, 64, 1, 100), 0);
  assert_int_equal(vec_next_cap(0, SIZE_MAX / 2, 1, 4, SIZE_MAX), 0);
}

static void test_resize_exact(void **state) {
  (void)state;
  int *v = NULL;
  assert_int_equal(vec_resize(&v, 10, sizeof *v), 0);
  for (int i = 0; i < 10; i++) v[i] = i;
  assert_int_equal(vec_resize(&v, 20, sizeof *v), 0);
  assert_int_equal(v[9], 9);
  int *was = v;
  assert_int_equal(vec_resize(&v, SIZE_MAX / 2, sizeof *v), -1);
  assert_ptr_equal(v, was);
  free(v);
}

static int reallocs;
static void *counting(void *p, size_t n) { return reallocs++ < 3 ? realloc(p, n) : NULL; }

static void test_room_by_uses_the_allocator_and_its_bounds(void **state) {
  (void)state;
  uint16_t *v = NULL;
  size_t n = 0, cap = 0;
  assert_int_equal(vec_room_by(&v, &cap, n, 1, sizeof *v, 1000, 5000, counting), 0);
  assert_int_equal(cap, 1000); /* from min */
  assert_int_equal(vec_room_by(&v, &cap, 1000, 1, sizeof *v, 1000, 5000, counting), 0);
  assert_int_equal(cap, 2000);
  assert_int_equal(vec_room_by(&v, &cap, 2000, 2500, sizeof *v, 1000, 5000, counting), 0);
  assert_int_equal(cap, 5000); /* doubling stops at max */
  assert_int_equal(vec_room_by(&v, &cap, 5000, 1, sizeof *v, 1000, 5000, counting), -1);
  assert_int_equal(reallocs, 3);
  v[4999] = 7;
  assert_int_equal(vec_room_by(&v, &cap, 10, 10, sizeof *v, 1000, 1 << 20, counting), 0); /* fits: no call */
  assert_int_equal(vec_room_by(&v, &cap, 5000, 1, sizeof *v, 1000, 1 << 20, counting), -1); /* allocator fails */
  assert_int_equal(cap, 5000);
  assert_int_equal(v[4999], 7);
  free(v);
}

static void test_append_with_implied_capacity(void **state) {
  (void)state;
  uint32_t *v = NULL;
  uint64_t n = 0; /* a public struct's count type */
  for (uint32_t i = 0; i < 3000; i++) {
    uint32_t *e = VEC_APPEND(v, n);
    assert_non_null(e);
    *e = i ^ 0x5a5a;
  }
  assert_int_equal(n, 3000);
  for (uint32_t i = 0; i < 3000; i++) assert_int_equal(v[i], i ^ 0x5a5a);
  free(v);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_push_keeps_elements_and_doubles),
      cmocka_unit_test(test_u32_capacity_and_room),
      cmocka_unit_test(test_overflow_fails_and_leaves_the_array),
      cmocka_unit_test(test_next_cap),
      cmocka_unit_test(test_resize_exact),
      cmocka_unit_test(test_append_with_implied_capacity),
      cmocka_unit_test(test_room_by_uses_the_allocator_and_its_bounds),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
