/* test_util_mem.c - pins lib/util's memory helpers (private): the arena
 * (alignment, blocks larger than the default, reset keeping the largest
 * block, the protobuf-c view), idmap (dense and sparse layouts answer the
 * same, duplicates, absent ids at both ends of the range), ipool growth,
 * and bigmem (zeroing, growth across the malloc/mmap boundary keeps
 * contents, impossible sizes fail instead of wrapping). */
#include <stdint.h>
#include <stdlib.h>

#include "arena.h"
#include "bigmem.h"
#include "idmap.h"
#include "ipool.h"
#include "testutil.h"

/* ---- arena ------------------------------------------------------------- */

static void test_arena_returns_aligned_disjoint_memory(void **state) {
  (void)state;
  arena a;
  arena_init(&a, 256);
  unsigned char *prev = NULL;
  for (size_t n = 0; n < 100; n++) {
    unsigned char *p = arena_alloc(&a, n);
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % 16, 0);
    memset(p, 0xab, n);
    if (prev && p > prev) assert_true(p >= prev + (n - 1 ? n - 1 : 1)); /* no overlap with the last one */
    prev = p;
  }
  assert_int_equal(a.failed, 0);
  arena_free(&a);
}

static void test_arena_large_allocation_gets_its_own_block_and_reset_keeps_the_largest(void **state) {
  (void)state;
  arena a;
  arena_init(&a, 1024);
  assert_non_null(arena_alloc(&a, 100));
  unsigned char *big = arena_alloc(&a, 1 << 20);
  assert_non_null(big);
  memset(big, 1, 1 << 20);
  unsigned char *small = arena_alloc(&a, 32); /* the big block is full: another block */
  assert_non_null(small);
  memset(small, 2, 32);
  assert_int_equal(big[(1 << 20) - 1], 1);
  arena_reset(&a);
  assert_int_equal(a.lim - a.cur, 1 << 20); /* only the megabyte block is left, empty */
  /* The kept block is the megabyte one: the same allocation lands at its start again. */
  assert_ptr_equal(arena_alloc(&a, 1 << 20), big);
  arena_free(&a);
  assert_null(a.head);
}

static void test_arena_impossible_size_fails_and_marks_the_arena(void **state) {
  (void)state;
  arena a;
  arena_init(&a, 0); /* 0 = the default block size */
  assert_int_equal(a.default_size, 64 * 1024);
  assert_non_null(arena_alloc(&a, 8)); /* a block exists, so a wrapped size would "fit" */
  assert_null(arena_alloc(&a, SIZE_MAX));
  assert_null(arena_alloc(&a, SIZE_MAX - 8));
  assert_int_equal(a.failed, 1);
  arena_reset(&a);
  assert_int_equal(a.failed, 0);
  assert_non_null(arena_alloc(&a, 8));
  arena_free(&a);
}

static void test_arena_serves_protobuf_c_unpacking(void **state) {
  (void)state;
  ChakraProtoMsg__Node nd = CHAKRA_PROTO_MSG__NODE__INIT;
  uint64_t deps[] = {1, 2, 3};
  nd.id = 42;
  nd.name = "conv";
  nd.data_deps = deps;
  nd.n_data_deps = 3;
  uint8_t buf[64];
  size_t len = protobuf_c_message_pack(&nd.base, buf);
  arena a;
  arena_init(&a, 128);
  for (int round = 0; round < 3; round++) {
    ChakraProtoMsg__Node *got = chakra_proto_msg__node__unpack(&a.pb, len, buf);
    assert_non_null(got);
    assert_int_equal(got->id, 42);
    assert_string_equal(got->name, "conv");
    assert_int_equal(got->n_data_deps, 3);
    assert_int_equal(got->data_deps[2], 3);
    arena_reset(&a);
  }
  arena_free(&a);
}

/* ---- idmap ------------------------------------------------------------- */

typedef struct rec {
  uint64_t id;
  char pad[8]; /* the map reads ids at a stride */
} rec;

static void check_map(const uint64_t *ids, size_t n, int want_direct, const uint64_t *absent, size_t n_absent) {
  rec *r = calloc(n ? n : 1, sizeof *r);
  assert_non_null(r);
  for (size_t i = 0; i < n; i++) r[i].id = ids[i];
  idmap m;
  assert_int_equal(idmap_init(&m, n, r, sizeof *r), 0);
  assert_int_equal(m.direct, want_direct);
  for (size_t i = 0; i < n; i++) assert_int_equal(idmap_find(&m, ids[i]), IDMAP_NONE);
  for (size_t i = 0; i < n; i++) assert_int_equal(idmap_insert(&m, (uint32_t)i), IDMAP_NONE);
  for (size_t i = 0; i < n; i++) assert_int_equal(idmap_find(&m, ids[i]), i);
  for (size_t i = 0; i < n_absent; i++) assert_int_equal(idmap_find(&m, absent[i]), IDMAP_NONE);
  if (n) {
    /* A second record with the first id: insert names the first holder. */
    rec *r2 = realloc(r, (n + 1) * sizeof *r);
    assert_non_null(r2);
    r = r2;
    r[n].id = ids[0];
    m.base = (const unsigned char *)r; /* the records moved */
    assert_int_equal(idmap_insert(&m, (uint32_t)n), 0);
    assert_int_equal(idmap_find(&m, ids[0]), 0);
  }
  idmap_free(&m);
  assert_null(m.slots);
  free(r);
}

static void test_idmap_dense_ids_use_the_direct_table(void **state) {
  (void)state;
  uint64_t ids[] = {1000, 1001, 1003, 1002, 1005, 1007};
  uint64_t absent[] = {0, 999, 1004, 1006, 1008, UINT64_MAX};
  check_map(ids, 6, 1, absent, 6);
  rec r[6];
  for (int i = 0; i < 6; i++) r[i].id = ids[i];
  idmap m;
  assert_int_equal(idmap_init(&m, 6, r, sizeof *r), 0);
  assert_int_equal(idmap_memory(&m), 8 * sizeof(uint32_t)); /* 1000..1007 */
  idmap_free(&m);
}

static void test_idmap_sparse_ids_use_the_hash_and_answer_the_same(void **state) {
  (void)state;
  uint64_t ids[] = {0, UINT64_MAX, 1ull << 40, 7, 123456789, (1ull << 63) + 5, 8};
  uint64_t absent[] = {1, 6, 9, UINT64_MAX - 1, 1ull << 41};
  check_map(ids, 7, 0, absent, 5);
  /* Many colliding-looking ids (multiples of a large power of two). */
  uint64_t many[3000];
  for (size_t i = 0; i < 3000; i++) many[i] = (uint64_t)i << 32;
  uint64_t miss[] = {1, (1ull << 32) + 1, 3000ull << 32};
  check_map(many, 3000, 0, miss, 3);
}

static void test_idmap_single_and_empty(void **state) {
  (void)state;
  uint64_t one[] = {5};
  uint64_t absent[] = {4, 6, 0};
  check_map(one, 1, 1, absent, 3);
  check_map(NULL, 0, 0, absent, 3);
}

/* ---- ipool ------------------------------------------------------------- */

static void test_ipool_grows_from_1024_by_doubling_only_when_needed(void **state) {
  (void)state;
  uint32_t cap = 0;
  int *a = ipool_reserve(NULL, &cap, 0, sizeof *a);
  assert_non_null(a);
  assert_int_equal(cap, 1024);
  assert_ptr_equal(ipool_reserve(a, &cap, 1023, sizeof *a), a);
  assert_int_equal(cap, 1024);
  a[1023] = 7;
  a = ipool_reserve(a, &cap, 1024, sizeof *a);
  assert_non_null(a);
  assert_int_equal(cap, 2048);
  assert_int_equal(a[1023], 7);
  free(a);
}

/* ---- bigmem ------------------------------------------------------------ */

static int all_zero(const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i]) return 0;
  return 1;
}

static void test_bigmem_calloc_is_zeroed_small_and_large(void **state) {
  (void)state;
  size_t sizes[] = {0, 1, 100, (1u << 20) - 1, 1u << 20, 3u << 20};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    unsigned char *p = bigmem_calloc(sizes[i]);
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % 16, 0);
    assert_true(all_zero(p, sizes[i]));
    memset(p, 0xcd, sizes[i]);
    bigmem_free(p);
  }
  bigmem_free(NULL);
}

static void test_bigmem_realloc_keeps_contents_across_the_mmap_boundary(void **state) {
  (void)state;
  unsigned char *p = bigmem_realloc(NULL, 1000);
  assert_non_null(p);
  for (size_t i = 0; i < 1000; i++) p[i] = (unsigned char)i;
  size_t steps[] = {5000, 2u << 20, 7u << 20, 3u << 20, 9u << 20};
  size_t filled = 1000;
  for (size_t s = 0; s < sizeof steps / sizeof *steps; s++) {
    p = bigmem_realloc(p, steps[s]);
    assert_non_null(p);
    size_t keep = filled < steps[s] ? filled : steps[s];
    for (size_t i = 0; i < keep; i++)
      if (p[i] != (unsigned char)i) fail_msg("byte %zu lost growing to %zu", i, steps[s]);
    for (size_t i = keep; i < steps[s]; i++) p[i] = (unsigned char)i;
    filled = steps[s];
  }
  bigmem_free(p);
}

static void test_bigmem_impossible_sizes_fail_and_leave_the_block(void **state) {
  (void)state;
  assert_null(bigmem_alloc(SIZE_MAX));
  assert_null(bigmem_calloc(SIZE_MAX - 10));
  unsigned char *small = bigmem_alloc(64), *big = bigmem_alloc(2u << 20);
  assert_non_null(small);
  assert_non_null(big);
  small[0] = 1, big[0] = 2;
  assert_null(bigmem_realloc(small, SIZE_MAX - 10));
  assert_null(bigmem_realloc(big, SIZE_MAX - 10));
  assert_int_equal(small[0], 1);
  assert_int_equal(big[0], 2);
  bigmem_free(small);
  bigmem_free(big);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_arena_returns_aligned_disjoint_memory),
      cmocka_unit_test(test_arena_large_allocation_gets_its_own_block_and_reset_keeps_the_largest),
      cmocka_unit_test(test_arena_impossible_size_fails_and_marks_the_arena),
      cmocka_unit_test(test_arena_serves_protobuf_c_unpacking),
      cmocka_unit_test(test_idmap_dense_ids_use_the_direct_table),
      cmocka_unit_test(test_idmap_sparse_ids_use_the_hash_and_answer_the_same),
      cmocka_unit_test(test_idmap_single_and_empty),
      cmocka_unit_test(test_ipool_grows_from_1024_by_doubling_only_when_needed),
      cmocka_unit_test(test_bigmem_calloc_is_zeroed_small_and_large),
      cmocka_unit_test(test_bigmem_realloc_keeps_contents_across_the_mmap_boundary),
      cmocka_unit_test(test_bigmem_impossible_sizes_fail_and_leave_the_block),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
