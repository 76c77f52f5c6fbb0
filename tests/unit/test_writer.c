/* test_writer.c - pins the all-or-nothing .et writer (chakra_writer_*):
 * bytes go to a hidden temporary file beside the destination and appear at
 * the destination only on close; discard and failures leave neither the
 * file nor the temporary behind (spec 1.4, last paragraph); gzip only when
 * asked by flag or ".gz" name (spec 1.2); the framing is varint length +
 * message, nothing else (spec 1.1). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "testutil.h"

static void put_node(chakra_writer *w, uint64_t id, const char *name) {
  ChakraProtoMsg__Node n = CHAKRA_PROTO_MSG__NODE__INIT;
  n.id = id;
  n.name = (char *)name;
  n.type = CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE;
  chakra_error err = {0};
  if (chakra_writer_put(w, &n.base, &err)) fail_msg("put: %s", err.msg);
}

static void put_meta(chakra_writer *w, const char *version) {
  ChakraProtoMsg__GlobalMetadata m = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
  m.version = (char *)version;
  chakra_error err = {0};
  if (chakra_writer_put(w, &m.base, &err)) fail_msg("put: %s", err.msg);
}

static uint64_t count_nodes(const char *path, int *is_gzip) {
  chakra_error err = {0};
  chakra_reader *r;
  if (chakra_reader_open(&r, path, NULL, &err)) fail_msg("%s", err.msg);
  if (is_gzip) *is_gzip = chakra_reader_is_gzip(r);
  chakra_node *n;
  uint64_t k = 0;
  int rc;
  while ((rc = chakra_reader_next(r, &n, &err)) == 1) k++;
  if (rc) fail_msg("%s", err.msg);
  chakra_reader_close(r);
  return k;
}

static void test_writer_output_appears_only_after_close(void **state) {
  (void)state;
  char *p = tu_join(tu_dir, "out.et");
  chakra_error err = {0};
  chakra_writer *w;
  assert_int_equal(chakra_writer_open(&w, p, 0, &err), 0);
  put_meta(w, "1.0.0");
  for (int i = 0; i < 100; i++) put_node(w, (uint64_t)i, "n");
  assert_false(tu_exists(p));
  char name[256];
  assert_int_equal(tu_dir_count(tu_dir, name), 1);
  assert_int_equal(strncmp(name, ".out.et.", 8), 0); /* .NAME.XXXXXX, hidden */
  assert_int_equal(strlen(name), strlen(".out.et.XXXXXX"));
  assert_int_equal(chakra_writer_close(w, &err), 0);
  assert_true(tu_exists(p));
  assert_int_equal(tu_dir_count(tu_dir, name), 1);
  assert_string_equal(name, "out.et");
  assert_int_equal(count_nodes(p, NULL), 100);
  free(p);
}

static void test_writer_discard_leaves_no_file_and_no_temp(void **state) {
  (void)state;
  char *p = tu_join(tu_dir, "gone.et");
  chakra_error err = {0};
  chakra_writer *w;
  assert_int_equal(chakra_writer_open(&w, p, 0, &err), 0);
  put_meta(w, "1.0.0");
  put_node(w, 1, "n");
  chakra_writer_discard(w);
  assert_false(tu_exists(p));
  assert_int_equal(tu_dir_count(tu_dir, NULL), 0);
  chakra_writer_discard(NULL); /* harmless */
  free(p);
}

static void test_writer_discard_of_gzip_output_leaves_nothing(void **state) {
  (void)state;
  char *p = tu_join(tu_dir, "gone.et.gz");
  chakra_error err = {0};
  chakra_writer *w;
  assert_int_equal(chakra_writer_open(&w, p, 0, &err), 0);
  put_meta(w, "1.0.0");
  chakra_writer_discard(w);
  assert_int_equal(tu_dir_count(tu_dir, NULL), 0);
  free(p);
}

static void test_writer_replaces_an_existing_file_only_on_close(void **state) {
  (void)state;
  char *p = tu_join(tu_dir, "keep.et");
  tu_write_bytes(p, "old", 3);
  chakra_error err = {0};
  chakra_writer *w;
  assert_int_equal(chakra_writer_open(&w, p, 0, &err), 0);
  put_meta(w, "1.0.0");
  put_node(w, 1, "n");
  size_t n;
  uint8_t *old = tu_read_file(p, &n);
  assert_int_equal(n, 3);
  free(old);
  chakra_writer_discard(w); /* a failed run keeps the old file */
  old = tu_read_file(p, &n);
  assert_int_equal(n, 3);
  assert_memory_equal(old, "old", 3);
  free(old);
  assert_int_equal(chakra_writer_open(&w, p, 0, &err), 0);
  put_meta(w, "1.0.0");
  put_node(w, 1, "n");
  assert_int_equal(chakra_writer_close(w, &err), 0);
  assert_int_equal(count_nodes(p, NULL), 1);
  assert_int_equal(tu_dir_count(tu_dir, NULL), 1);
  free(p);
}

static void test_writer_gz_name_compresses(void **state) {
  (void)state;
  char *p = tu_join(tu_dir, "out.et.gz");
  chakra_error err = {0};
  chakra_writer *w;
  assert_int_equal(chakra_writer_open(&w, p, 0, &err), 0);
  put_meta(w, "1.0.0");
  for (int i = 0; i < 1000; i++) put_node(w, (uint64_t)i, "a name repeated a thousand times");
  assert_int_equal(chakra_writer_close(w, &err), 0);
  size_t n;
  uint8_t *bytes = tu_read_file(p, &n);
  assert_true(n > 2 && bytes[0] == 0x1f && bytes[1] == 0x8b);
  assert_true(n < 1000 * 20); /* it did compress */
  free(bytes);
  int gz;
  assert_int_equal(count_nodes(p, &gz), 1000);
  assert_int_equal(gz, 1);
  assert_int_equal(tu_dir_count(tu_dir, NULL), 1);
  free(p);
}

static void test_writer_gzip_flag_compresses_any_name_and_plain_flag_wins(void **state) {
  (void)state;
  char *a = tu_join(tu_dir, "flagged.et");
  char *b = tu_join(tu_dir, "plain.et.gz");
  chakra_error err = {0};
  chakra_writer *w;
  assert_int_equal(chakra_writer_open(&w, a, CHAKRA_WRITE_GZIP, &err), 0);
  put_meta(w, "1.0.0");
  assert_int_equal(chakra_writer_close(w, &err), 0);
  assert_int_equal(chakra_writer_open(&w, b, CHAKRA_WRITE_PLAIN, &err), 0);
  put_meta(w, "1.0.0");
  assert_int_equal(chakra_writer_close(w, &err), 0);
  size_t n;
  uint8_t *bytes = tu_read_file(a, &n);
  assert_true(n > 2 && bytes[0] == 0x1f && bytes[1] == 0x8b);
  free(bytes);
  bytes = tu_read_file(b, &n);
  assert_int_equal(n, 8);
  assert_memory_equal(bytes, "\x07\x0a\x05" "1.0.0", 8);
  free(bytes);
  free(a);
  free(b);
}

static void test_writer_frames_messages_as_varint_length_and_body_only(void **state) {
  (void)state;
  char *p = tu_join(tu_dir, "framed.et");
  chakra_error err = {0};
  chakra_writer *w;
  assert_int_equal(chakra_writer_open(&w, p, 0, &err), 0);
  put_meta(w, "0.0.4");
  ChakraProtoMsg__Node empty = CHAKRA_PROTO_MSG__NODE__INIT;
  assert_int_equal(chakra_writer_put(w, &empty.base, &err), 0); /* length 0 */
  uint8_t raw[200];
  memset(raw, 0x42, sizeof raw);
  assert_int_equal(chakra_writer_put_raw(w, raw, sizeof raw, &err), 0);
  assert_int_equal(chakra_writer_close(w, &err), 0);
  size_t n;
  uint8_t *bytes = tu_read_file(p, &n);
  tu_buf want = {0};
  tu_put(&want, "\x07\x0a\x05" "0.0.4", 8); /* as in all_reduce.0.et (spec 1.3) */
  tu_put_byte(&want, 0x00);
  tu_put(&want, "\xc8\x01", 2);
  tu_put(&want, raw, sizeof raw);
  assert_int_equal(n, want.n);
  assert_memory_equal(bytes, want.p, n);
  free(bytes);
  tu_buf_free(&want);
  free(p);
}

/* Messages above the writer's in-buffer limit take another path; order and
 * content must not change. */
static void test_writer_keeps_order_across_large_and_small_messages(void **state) {
  (void)state;
  char *p = tu_join(tu_dir, "mixed.et");
  size_t sizes[] = {10, 600 * 1024, 20, 3 * 1024 * 1024, 5, 1024 * 1024 - 3, 7};
  size_t k = sizeof sizes / sizeof *sizes;
  chakra_error err = {0};
  chakra_writer *w;
  assert_int_equal(chakra_writer_open(&w, p, 0, &err), 0);
  put_meta(w, "1.0.0");
  for (size_t i = 0; i < k; i++) {
    char *name = malloc(sizes[i] + 1);
    memset(name, (int)('a' + i), sizes[i]);
    name[sizes[i]] = 0;
    put_node(w, i, name);
    free(name);
  }
  assert_int_equal(chakra_writer_close(w, &err), 0);
  chakra_reader *r;
  assert_int_equal(chakra_reader_open(&r, p, NULL, &err), 0);
  chakra_node *nd;
  for (size_t i = 0; i < k; i++) {
    assert_int_equal(chakra_reader_next(r, &nd, &err), 1);
    assert_int_equal(nd->id, i);
    assert_int_equal(strlen(nd->name), sizes[i]);
    assert_int_equal(nd->name[sizes[i] / 2], 'a' + i);
  }
  assert_int_equal(chakra_reader_next(r, &nd, &err), 0);
  chakra_reader_close(r);
  free(p);
}

static void test_writer_open_in_missing_directory_fails_naming_the_path(void **state) {
  (void)state;
  char *p = tu_join(tu_dir, "no/such/dir/out.et");
  chakra_error err = {0};
  chakra_writer *w = (chakra_writer *)1;
  assert_int_equal(chakra_writer_open(&w, p, 0, &err), CHAKRA_EIO);
  assert_null(w);
  assert_contains(err.msg, p);
  free(p);
}

static void test_writer_close_failure_removes_the_temporary(void **state) {
  (void)state;
  /* The destination becomes a directory while the output is written: the
   * final rename fails. */
  char *p = tu_join(tu_dir, "adir");
  chakra_error err = {0};
  chakra_writer *w;
  assert_int_equal(chakra_writer_open(&w, p, 0, &err), 0);
  put_meta(w, "1.0.0");
  assert_int_equal(mkdir(p, 0700), 0);
  assert_int_equal(chakra_writer_close(w, &err), CHAKRA_EIO);
  assert_contains(err.msg, p);
  char name[256];
  assert_int_equal(tu_dir_count(tu_dir, name), 1);
  assert_string_equal(name, "adir");
  free(p);
}

static void test_writer_output_mode_follows_umask(void **state) {
  (void)state;
  char *p = tu_join(tu_dir, "mode.et");
  mode_t old = umask(027);
  chakra_error err = {0};
  chakra_writer *w;
  assert_int_equal(chakra_writer_open(&w, p, 0, &err), 0);
  put_meta(w, "1.0.0");
  assert_int_equal(chakra_writer_close(w, &err), 0);
  umask(old);
  struct stat st;
  assert_int_equal(stat(p, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0640);
  free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_writer_output_appears_only_after_close, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_writer_discard_leaves_no_file_and_no_temp, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_writer_discard_of_gzip_output_leaves_nothing, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_writer_replaces_an_existing_file_only_on_close, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_writer_gz_name_compresses, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_writer_gzip_flag_compresses_any_name_and_plain_flag_wins, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_writer_frames_messages_as_varint_length_and_body_only, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_writer_keeps_order_across_large_and_small_messages, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_writer_open_in_missing_directory_fails_naming_the_path, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_writer_close_failure_removes_the_temporary, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_writer_output_mode_follows_umask, tu_dir_setup, tu_dir_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
