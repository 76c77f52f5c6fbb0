/* test_strbuf.c - pins lib/util/strbuf.h: appends of every kind in order,
 * numbers as jsonw writes them, the text view NUL-terminated without
 * counting the NUL, room then a manual advance, and sticky out-of-memory
 * (a size that cannot be had sets oom; later appends do nothing); a
 * stream read whole (after what b holds), up to a limit exactly, past it
 * refused, a read error told apart from the end. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "strbuf.h"
#include "testutil.h"

static void test_appends_in_order(void **state) {
  (void)state;
  strbuf b = {0};
  strbuf_puts(&b, "n=");
  strbuf_u64(&b, 18446744073709551615ull);
  strbuf_putc(&b, ' ');
  strbuf_i64(&b, INT64_MIN);
  strbuf_putc(&b, ' ');
  strbuf_i64(&b, 0);
  strbuf_put(&b, "xyz", 0);
  strbuf_put(&b, "\0!", 2);
  assert_int_equal(b.oom, 0);
  const char want[] = "n=18446744073709551615 -9223372036854775808 0\0!";
  assert_int_equal(b.n, sizeof want - 1);
  assert_memory_equal(b.s, want, sizeof want - 1);
  assert_ptr_equal(b.s, (char *)b.p); /* one pointer, two views */
  strbuf_free(&b);
  assert_null(b.p);
  assert_int_equal(b.n, 0);
}

static void test_cstr_and_growth(void **state) {
  (void)state;
  strbuf b = {0};
  assert_string_equal(strbuf_cstr(&b), ""); /* an empty buffer is the empty text */
  for (int i = 0; i < 10000; i++) strbuf_putc(&b, (char)('a' + i % 26));
  assert_int_equal(b.n, 10000);
  const char *s = strbuf_cstr(&b);
  assert_non_null(s);
  assert_int_equal(strlen(s), 10000);
  assert_int_equal(b.n, 10000); /* the NUL is not counted */
  assert_int_equal(s[9999], 'a' + 9999 % 26);
  strbuf_free(&b);
}

static void test_room_then_advance(void **state) {
  (void)state;
  strbuf b = {0};
  uint8_t *p = strbuf_room(&b, 5000);
  assert_non_null(p);
  assert_true(b.cap >= 5000);
  memset(p, 7, 5000);
  b.n += 5000;
  size_t cap = b.cap;
  assert_ptr_equal(strbuf_room(&b, cap - 5000), b.p + 5000); /* fits: no growth */
  assert_int_equal(b.cap, cap);
  strbuf_free(&b);
}

static void test_oom_is_sticky(void **state) {
  (void)state;
  strbuf b = {0};
  strbuf_puts(&b, "kept");
  assert_null(strbuf_room(&b, SIZE_MAX - 2)); /* n + k overflows */
  assert_int_equal(b.oom, 1);
  strbuf_puts(&b, "dropped");
  strbuf_putc(&b, 'x');
  strbuf_u64(&b, 1);
  assert_int_equal(b.n, 4);
  assert_memory_equal(b.s, "kept", 4);
  assert_null(strbuf_cstr(&b));
  strbuf_free(&b);
  assert_int_equal(b.oom, 0);
}

static FILE *file_of(size_t n) {
  FILE *f = tmpfile();
  assert_non_null(f);
  for (size_t i = 0; i < n; i++) fputc('a' + (int)(i % 26), f);
  rewind(f);
  return f;
}

static void test_read_stream_whole_and_limits(void **state) {
  (void)state;
  enum { N = 200000 };
  strbuf b = {0};
  strbuf_puts(&b, "head:");
  FILE *f = file_of(N);
  assert_int_equal(strbuf_read_stream(&b, f, SIZE_MAX), 0);
  assert_int_equal(b.n, 5 + N);
  assert_memory_equal(b.s, "head:abc", 8);
  assert_int_equal(b.s[5 + N - 1], 'a' + (N - 1) % 26);
  strbuf_free(&b);
  rewind(f);
  assert_int_equal(strbuf_read_stream(&b, f, N), 0); /* exactly the limit */
  assert_int_equal(b.n, N);
  strbuf_free(&b);
  rewind(f);
  assert_int_equal(strbuf_read_stream(&b, f, N - 1), STRBUF_EBIG); /* one byte more */
  assert_int_equal(b.n, N - 1);
  strbuf_free(&b);
  fclose(f);
  f = file_of(0);
  assert_int_equal(strbuf_read_stream(&b, f, 0), 0);
  assert_int_equal(b.n, 0);
  fclose(f);
  FILE *w = fopen("/dev/null", "w"); /* reading a stream open for writing fails */
  assert_non_null(w);
  assert_int_equal(strbuf_read_stream(&b, w, SIZE_MAX), STRBUF_EREAD);
  fclose(w);
  strbuf_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_appends_in_order),
      cmocka_unit_test(test_cstr_and_growth),
      cmocka_unit_test(test_room_then_advance),
      cmocka_unit_test(test_oom_is_sticky),
      cmocka_unit_test(test_read_stream_whole_and_limits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
