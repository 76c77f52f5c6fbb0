/* test_varint.c - pins chakra_varint_encode(): protobuf base-128 varints,
 * 7 bits per byte, least significant group first, high bit = more follows
 * (spec 1.1), as used for every length prefix the writers emit. */
#include "testutil.h"

static void expect_encoding(uint64_t v, const uint8_t *want, size_t n) {
  uint8_t out[16];
  memset(out, 0xee, sizeof out);
  size_t k = chakra_varint_encode(v, out);
  assert_int_equal(k, n);
  assert_memory_equal(out, want, n);
  assert_int_equal(out[n], 0xee); /* writes nothing past its length */
}

static void test_varint_zero_is_one_zero_byte(void **state) {
  (void)state;
  expect_encoding(0, (const uint8_t[]){0x00}, 1);
}

static void test_varint_127_is_the_largest_one_byte_value(void **state) {
  (void)state;
  expect_encoding(127, (const uint8_t[]){0x7f}, 1);
  expect_encoding(128, (const uint8_t[]){0x80, 0x01}, 2);
}

static void test_varint_matches_spec_examples(void **state) {
  (void)state;
  expect_encoding(300, (const uint8_t[]){0xac, 0x02}, 2);
  /* comm_size 1048576 in the microbench files: 48 80 80 40 */
  expect_encoding(1048576, (const uint8_t[]){0x80, 0x80, 0x40}, 3);
  /* the 5,948-byte first node of pytorch_converted.0.et: bc 2e */
  expect_encoding(5948, (const uint8_t[]){0xbc, 0x2e}, 2);
}

static void test_varint_group_boundaries_grow_by_one_byte(void **state) {
  (void)state;
  uint8_t out[16];
  for (unsigned bits = 7; bits < 64; bits += 7) {
    uint64_t below = (1ull << bits) - 1, at = 1ull << bits;
    assert_int_equal(chakra_varint_encode(below, out), bits / 7);
    assert_int_equal(chakra_varint_encode(at, out), bits / 7 + 1);
  }
}

static void test_varint_uint64_max_is_ten_bytes(void **state) {
  (void)state;
  expect_encoding(UINT64_MAX,
                  (const uint8_t[]){0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 10);
}

static void test_varint_decodes_back_to_the_same_value(void **state) {
  (void)state;
  uint64_t vals[] = {0, 1, 127, 128, 16383, 16384, 1u << 31, (1ull << 35) + 17, UINT64_MAX / 3,
                     UINT64_MAX};
  for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
    uint8_t out[10];
    size_t n = chakra_varint_encode(vals[i], out);
    uint64_t v = 0;
    for (size_t k = 0; k < n; k++) {
      v |= (uint64_t)(out[k] & 0x7f) << (7 * k);
      assert_int_equal(!!(out[k] & 0x80), k + 1 < n);
    }
    assert_true(v == vals[i]);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_varint_zero_is_one_zero_byte),
      cmocka_unit_test(test_varint_127_is_the_largest_one_byte_value),
      cmocka_unit_test(test_varint_matches_spec_examples),
      cmocka_unit_test(test_varint_group_boundaries_grow_by_one_byte),
      cmocka_unit_test(test_varint_uint64_max_is_ten_bytes),
      cmocka_unit_test(test_varint_decodes_back_to_the_same_value),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
