/* test_hmap.c - pins lib/util/hmap.h: integer keys (found, absent, the
 * value already there returned on a second put, growth keeps every entry,
 * keys that collide in the low bits), string keys held by the caller
 * (equal hashes still compared by content, different lengths), the
 * general find with an equality test, reserve and clear; nameidx over
 * it (records that move as their array grows, the lowest record of a
 * repeated name, clear). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "hmap.h"
#include "nameidx.h"
#include "testutil.h"

static void test_u64_put_get_and_growth(void **state) {
  (void)state;
  hmap m = {0};
  int oom = 0;
  assert_int_equal(hmap_get_u64(&m, 5), HMAP_NONE); /* empty map */
  for (uint32_t i = 0; i < 50000; i++) assert_int_equal(hmap_put_u64(&m, (uint64_t)i << 32, i, &oom), HMAP_NONE);
  assert_int_equal(oom, 0);
  assert_int_equal(m.n, 50000);
  assert_true(m.n * 4 <= (m.mask + 1) * 3);
  for (uint32_t i = 0; i < 50000; i++) assert_int_equal(hmap_get_u64(&m, (uint64_t)i << 32), i);
  assert_int_equal(hmap_get_u64(&m, 1), HMAP_NONE);
  assert_int_equal(hmap_put_u64(&m, 7ull << 32, 99, &oom), 7); /* already there: the old value */
  assert_int_equal(hmap_get_u64(&m, 7ull << 32), 7);
  assert_int_equal(hmap_set_u64(&m, 7ull << 32, 99, &oom), 7); /* replaced: the old value */
  assert_int_equal(hmap_get_u64(&m, 7ull << 32), 99);
  assert_int_equal(m.n, 50000);
  assert_int_equal(hmap_get_u64(&m, UINT64_MAX), HMAP_NONE);
  assert_int_equal(hmap_put_u64(&m, UINT64_MAX, 3, &oom), HMAP_NONE);
  assert_int_equal(hmap_get_u64(&m, UINT64_MAX), 3);
  assert_true(hmap_memory(&m) >= (m.mask + 1) * 12);
  hmap_free(&m);
  assert_null(m.val);
}

typedef struct names {
  char **s;
} names;

static const char *name_of(const void *ctx, uint32_t v, size_t *len) {
  const names *t = ctx;
  *len = strlen(t->s[v]);
  return t->s[v];
}

static void test_string_keys(void **state) {
  (void)state;
  enum { N = 3000 };
  names t = {calloc(N, sizeof(char *))};
  hmap m = {0};
  for (uint32_t i = 0; i < N; i++) {
    char k[32];
    snprintf(k, sizeof k, "group.%u", i);
    assert_int_equal(hmap_find_str(&m, hmap_hash_str(k, strlen(k)), k, strlen(k), name_of, &t), HMAP_NONE);
    t.s[i] = strdup(k);
    assert_int_equal(hmap_add(&m, hmap_hash_str(k, strlen(k)), i), 0);
  }
  for (uint32_t i = 0; i < N; i++) assert_int_equal(hmap_find_str(&m, hmap_hash_str(t.s[i], strlen(t.s[i])), t.s[i], strlen(t.s[i]), name_of, &t), i);
  assert_int_equal(hmap_find_str(&m, hmap_hash_str("group.1", 6), "group.1", 6, name_of, &t), HMAP_NONE); /* a prefix is another key */
  assert_int_equal(hmap_find_str(&m, hmap_hash_str("", 0), "", 0, name_of, &t), HMAP_NONE);
  for (uint32_t i = 0; i < N; i++) free(t.s[i]);
  free(t.s);
  hmap_free(&m);
}

/* Every entry under one hash: the equality test alone tells them apart. */
static int eq_int(const void *ctx, uint32_t v) { return (uint32_t)(uintptr_t)ctx == v * 10; }

static void test_find_compares_keys_under_equal_hashes(void **state) {
  (void)state;
  hmap m = {0};
  for (uint32_t i = 0; i < 100; i++) assert_int_equal(hmap_add(&m, 42, i), 0);
  for (uint32_t i = 0; i < 100; i++) assert_int_equal(hmap_find(&m, 42, eq_int, (void *)(uintptr_t)(i * 10)), i);
  assert_int_equal(hmap_find(&m, 42, eq_int, (void *)(uintptr_t)5), HMAP_NONE);
  assert_int_equal(hmap_find(&m, 43, eq_int, (void *)(uintptr_t)0), HMAP_NONE);
  assert_int_equal(hmap_add(&m, 42, HMAP_NONE), -1); /* would read as an empty slot */
  assert_int_equal(m.n, 100);
  hmap_free(&m);
}

static void test_reserve_sizes_once(void **state) {
  (void)state;
  hmap m = {0};
  assert_int_equal(hmap_reserve(&m, 1000), 0);
  size_t slots = m.mask + 1;
  assert_true(slots * 3 / 4 >= 1000);
  int oom = 0;
  for (uint32_t i = 0; i < 1000; i++) hmap_put_u64(&m, i, i, &oom);
  assert_int_equal(m.mask + 1, slots); /* no growth */
  assert_int_equal(hmap_reserve(&m, SIZE_MAX), -1);
  assert_int_equal(hmap_get_u64(&m, 999), 999); /* a failed reserve keeps the map */
  hmap_free(&m);
}

static void test_hash_bytes_depends_on_every_byte_and_length(void **state) {
  (void)state;
  const char a[] = "abcdefghijklmnopq";
  uint64_t h = hmap_hash_bytes(a, 17);
  for (size_t i = 0; i < 17; i++) {
    char b[17];
    memcpy(b, a, 17);
    b[i] ^= 1;
    assert_true(hmap_hash_bytes(b, 17) != h);
  }
  assert_true(hmap_hash_bytes(a, 16) != h);
  assert_true(hmap_hash_bytes("", 0) != hmap_hash_bytes("\0", 1));
}

static void test_clear_keeps_room_and_forgets(void **state) {
  (void)state;
  hmap m = {0};
  int oom = 0;
  for (uint32_t i = 0; i < 100; i++) hmap_put_u64(&m, i, i, &oom);
  size_t mask = m.mask;
  hmap_clear(&m);
  assert_int_equal(m.n, 0);
  assert_int_equal(m.mask, mask);
  for (uint32_t i = 0; i < 100; i++) assert_int_equal(hmap_get_u64(&m, i), HMAP_NONE);
  assert_int_equal(hmap_put_u64(&m, 5, 1, &oom), HMAP_NONE);
  assert_int_equal(hmap_get_u64(&m, 5), 1);
  hmap_free(&m);
}

typedef struct rec {
  int pad;
  const char *name;
} rec;

static void test_nameidx_lowest_record_as_array_grows(void **state) {
  (void)state;
  enum { N = 5000 };
  static char text[N][16];
  rec *v = NULL;
  nameidx x = {0};
  for (size_t i = 0; i < N; i++) {
    snprintf(text[i], sizeof text[i], "g%zu", i % (N / 2)); /* every name twice: i and i + N/2 */
    rec *nv = realloc(v, (i + 1) * sizeof *v);            /* the array moves under the index */
    assert_non_null(nv);
    v = nv;
    v[i] = (rec){0, text[i]};
    assert_int_equal(nameidx_sync(&x, (nameidx_recs){v, sizeof *v, offsetof(rec, name)}, i + 1), 0);
  }
  nameidx_recs r = {v, sizeof *v, offsetof(rec, name)};
  for (size_t i = 0; i < N; i++) assert_int_equal(nameidx_find(&x, r, text[i]), (long)(i % (N / 2)));
  assert_int_equal(nameidx_find(&x, r, "g"), -1);
  assert_int_equal(nameidx_find(&x, r, "nothing"), -1);
  nameidx_clear(&x);
  assert_int_equal(nameidx_find(&x, r, "g1"), -1);
  assert_int_equal(nameidx_sync(&x, r, 3), 0); /* g0 g1 g2 again */
  assert_int_equal(nameidx_find(&x, r, "g2"), 2);
  assert_int_equal(nameidx_find(&x, r, "g3"), -1);
  nameidx_free(&x);
  free(v);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_u64_put_get_and_growth),
      cmocka_unit_test(test_string_keys),
      cmocka_unit_test(test_find_compares_keys_under_equal_hashes),
      cmocka_unit_test(test_reserve_sizes_once),
      cmocka_unit_test(test_hash_bytes_depends_on_every_byte_and_length),
      cmocka_unit_test(test_clear_keeps_room_and_forgets),
      cmocka_unit_test(test_nameidx_lowest_record_as_array_grows),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
