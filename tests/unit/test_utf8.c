/* test_utf8.c - pins the UTF-8 checks every text path shares (lib/util/utf8.c,
 * private): which sequences are valid (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF, no truncated sequences) and that each
 * invalid byte becomes one U+FFFD, as jsonize and pack promise (spec 5.2). */
#include "testutil.h"
#include "utf8.h"

static void expect_valid(const char *s, size_t len, uint32_t cp) {
  uint32_t got = 0;
  assert_int_equal(utf8_decode((const unsigned char *)s, len, &got), len);
  assert_int_equal(got, cp);
}

static void expect_invalid(const char *s, size_t len) {
  uint32_t got;
  assert_int_equal(utf8_decode((const unsigned char *)s, len, &got), 0);
}

static void test_utf8_decodes_two_three_and_four_byte_sequences(void **state) {
  (void)state;
  expect_valid("\xc2\x80", 2, 0x80);
  expect_valid("\xc3\xa9", 2, 0xe9);
  expect_valid("\xdf\xbf", 2, 0x7ff);
  expect_valid("\xe0\xa0\x80", 3, 0x800);
  expect_valid("\xe2\x82\xac", 3, 0x20ac);
  expect_valid("\xef\xbf\xbd", 3, 0xfffd);
  expect_valid("\xed\x9f\xbf", 3, 0xd7ff);
  expect_valid("\xee\x80\x80", 3, 0xe000);
  expect_valid("\xf0\x90\x80\x80", 4, 0x10000);
  expect_valid("\xf4\x8f\xbf\xbf", 4, 0x10ffff);
}

static void test_utf8_refuses_overlongs_surrogates_and_out_of_range(void **state) {
  (void)state;
  expect_invalid("\xc0\x80", 2);         /* overlong NUL */
  expect_invalid("\xc1\xbf", 2);         /* overlong */
  expect_invalid("\xe0\x80\x80", 3);     /* overlong */
  expect_invalid("\xe0\x9f\xbf", 3);     /* overlong U+07FF */
  expect_invalid("\xf0\x8f\xbf\xbf", 4); /* overlong U+FFFF */
  expect_invalid("\xed\xa0\x80", 3);     /* U+D800 */
  expect_invalid("\xed\xbf\xbf", 3);     /* U+DFFF */
  expect_invalid("\xf4\x90\x80\x80", 4); /* U+110000 */
  expect_invalid("\xf5\x80\x80\x80", 4);
  expect_invalid("\xff", 1);
  expect_invalid("\x80", 1);             /* lone continuation */
}

static void test_utf8_refuses_truncated_and_interrupted_sequences(void **state) {
  (void)state;
  expect_invalid("\xc3", 1);
  expect_invalid("\xe2\x82", 2);
  expect_invalid("\xf0\x9f\x98", 3);
  expect_invalid("\xe2\x41\xac", 3);
  expect_invalid("\xc3\xc3", 2);
}

static void test_utf8_counts_each_invalid_byte(void **state) {
  (void)state;
  const char *s = "ok \xff\xfe caf\xc3\xa9 \xe2\x82 end\xc3";
  size_t n = strlen(s);
  /* ff, fe, the e2 of the cut euro sign, its 82, the final c3 */
  assert_int_equal(utf8_count_invalid((const unsigned char *)s, n), 5);
  assert_int_equal(utf8_count_invalid((const unsigned char *)"plain ascii", 11), 0);
  assert_int_equal(utf8_count_invalid((const unsigned char *)"", 0), 0);
}

static void test_utf8_sanitize_replaces_each_invalid_byte_with_u_fffd(void **state) {
  (void)state;
  const char *s = "a\xff" "b\xc3\xa9\xe2\x82";
  size_t n = strlen(s);
  char out[64];
  size_t k = utf8_sanitize((const unsigned char *)s, n, out);
  const char *want = "a\xef\xbf\xbd" "b\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd";
  assert_int_equal(k, strlen(want));
  assert_string_equal(out, want);
  /* worst case fits the documented 3n + 1 */
  char worst[3 * 4 + 1];
  assert_int_equal(utf8_sanitize((const unsigned char *)"\x80\x80\x80\x80", 4, worst), 12);
  assert_int_equal(utf8_count_invalid((const unsigned char *)worst, 12), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_utf8_decodes_two_three_and_four_byte_sequences),
      cmocka_unit_test(test_utf8_refuses_overlongs_surrogates_and_out_of_range),
      cmocka_unit_test(test_utf8_refuses_truncated_and_interrupted_sequences),
      cmocka_unit_test(test_utf8_counts_each_invalid_byte),
      cmocka_unit_test(test_utf8_sanitize_replaces_each_invalid_byte_with_u_fffd),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
