/* test_diag.c - pins lib/util/diag.h: a formatted problem reaches the
 * callback with every field of the base kept and the text formatted;
 * no callback, no call; long texts are cut at CHAKRA_DIAG_TEXT - 1 bytes,
 * not overrun; the error form is "WHERE: text" and returns the code. */
#include <stdarg.h>
#include <stdlib.h>

#include "diag.h"
#include "testutil.h"

typedef struct seen {
  int calls;
  chakra_problem p;
  char what[2 * CHAKRA_DIAG_TEXT];
} seen;

static void keep(void *ctx, const chakra_problem *p) {
  seen *s = ctx;
  s->calls++;
  s->p = *p;
  snprintf(s->what, sizeof s->what, "%s", p->what);
}

static void test_emitf_fills_the_text_and_keeps_the_base(void **state) {
  (void)state;
  seen s = {0};
  chakra_problem base = chakra_diag_on(CHAKRA_SEV_ERROR, "rank.0.et");
  base.has_node = 1;
  base.node_id = 42;
  base.line = 3;
  chakra_diag_emitf(keep, &s, base, "%s %d", "bad", 7);
  assert_int_equal(s.calls, 1);
  assert_string_equal(s.what, "bad 7");
  assert_int_equal(s.p.severity, CHAKRA_SEV_ERROR);
  assert_string_equal(s.p.file, "rank.0.et");
  assert_int_equal(s.p.node_id, 42);
  assert_int_equal(s.p.line, 3);
  assert_int_equal(s.p.rank, -1);
  chakra_diag_warnf(keep, &s, NULL, "w%u", 1u);
  assert_int_equal(s.calls, 2);
  assert_int_equal(s.p.severity, CHAKRA_SEV_WARNING);
  assert_null(s.p.file);
  assert_string_equal(s.what, "w1");
  chakra_diag_warnf(NULL, &s, "f", "not sent");
  assert_int_equal(s.calls, 2);
}

static int set_fail(chakra_error *err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = chakra_diag_failv(err, CHAKRA_EFORMAT, "in.json", fmt, ap);
  va_end(ap);
  return rc;
}

static void test_fail_names_the_place(void **state) {
  (void)state;
  chakra_error err = {0};
  assert_int_equal(set_fail(&err, "line %d: %s", 4, "expected ]"), CHAKRA_EFORMAT);
  assert_int_equal(err.code, CHAKRA_EFORMAT);
  assert_string_equal(err.msg, "in.json: line 4: expected ]");
  assert_int_equal(set_fail(NULL, "x"), CHAKRA_EFORMAT); /* no error to fill */
}

static void test_long_text_is_cut(void **state) {
  (void)state;
  seen s = {0};
  char *big = malloc(3000);
  memset(big, 'x', 2999);
  big[2999] = 0;
  chakra_diag_warnf(keep, &s, "f", "%s", big);
  assert_int_equal(strlen(s.what), CHAKRA_DIAG_TEXT - 1);
  chakra_error err = {0};
  assert_int_equal(set_fail(&err, "%s", big), CHAKRA_EFORMAT);
  assert_int_equal(strlen(err.msg), sizeof err.msg - 1);
  assert_memory_equal(err.msg, "in.json: xxx", 12);
  free(big);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_emitf_fills_the_text_and_keeps_the_base),
      cmocka_unit_test(test_fail_names_the_place),
      cmocka_unit_test(test_long_text_is_cut),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
