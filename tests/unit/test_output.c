/* test_output.c - pins the rules of include/chakra/output.h: outputs never
 * destroy what they should not. Special files are written in place, a
 * symbolic link's target is replaced and the link kept, an output that is
 * an input is refused before anything is written, an unusable destination
 * is found by chakra_output_check() before any work, and live temporaries
 * can be removed from a signal handler. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chakra/output.h"
#include "testutil.h"

static void write_meta(const char *path, const char *version) {
  chakra_error err = {0};
  chakra_writer *w;
  if (chakra_writer_open(&w, path, 0, &err)) fail_msg("open: %s", err.msg);
  ChakraProtoMsg__GlobalMetadata m = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
  m.version = (char *)version;
  if (chakra_writer_put(w, &m.base, &err)) fail_msg("put: %s", err.msg);
  if (chakra_writer_close(w, &err)) fail_msg("close: %s", err.msg);
}

static void test_output_to_a_fifo_is_written_in_place(void **state) {
  (void)state;
  char *p = tu_join(tu_dir, "pipe");
  assert_int_equal(mkfifo(p, 0600), 0);
  /* Holding the read end open lets the writer's open() return at once. */
  int rd = open(p, O_RDONLY | O_NONBLOCK);
  assert_true(rd >= 0);
  write_meta(p, "1.0.0");
  struct stat st;
  assert_int_equal(lstat(p, &st), 0);
  assert_true(S_ISFIFO(st.st_mode));
  char buf[64];
  ssize_t k = read(rd, buf, sizeof buf);
  /* length prefix, then field 1 (version): tag, length, 5 bytes */
  assert_int_equal(k, 8);
  assert_memory_equal(buf, "\x07\x0a\x05" "1.0.0", 8);
  close(rd);
  assert_int_equal(tu_dir_count(tu_dir, NULL), 1); /* no temporary beside it */
  free(p);
}

static void test_output_to_dev_null_keeps_the_device(void **state) {
  (void)state;
  write_meta("/dev/null", "1.0.0");
  struct stat st;
  assert_int_equal(stat("/dev/null", &st), 0);
  assert_true(S_ISCHR(st.st_mode));
}

static void test_output_through_a_symlink_replaces_the_target_and_keeps_the_link(void **state) {
  (void)state;
  char *target = tu_join(tu_dir, "real.et");
  char *link = tu_join(tu_dir, "link.et");
  write_meta(target, "old");
  assert_int_equal(symlink("real.et", link), 0);
  write_meta(link, "new");
  struct stat st;
  assert_int_equal(lstat(link, &st), 0);
  assert_true(S_ISLNK(st.st_mode));
  chakra_error err = {0};
  chakra_reader *r;
  assert_int_equal(chakra_reader_open(&r, target, NULL, &err), 0);
  assert_string_equal(chakra_reader_metadata(r)->version, "new");
  chakra_reader_close(r);
  free(target);
  free(link);
}

static void test_output_through_a_dangling_symlink_creates_the_target(void **state) {
  (void)state;
  char *link = tu_join(tu_dir, "link.et");
  char *target = tu_join(tu_dir, "made.et");
  assert_int_equal(symlink("made.et", link), 0);
  write_meta(link, "1.0.0");
  struct stat st;
  assert_int_equal(stat(target, &st), 0);
  assert_true(S_ISREG(st.st_mode));
  assert_int_equal(lstat(link, &st), 0);
  assert_true(S_ISLNK(st.st_mode));
  free(link);
  free(target);
}

static void test_output_check_refuses_an_input_as_output(void **state) {
  (void)state;
  char *in = tu_join(tu_dir, "in.et");
  char *hard = tu_join(tu_dir, "hard.et");
  write_meta(in, "1.0.0");
  assert_int_equal(link(in, hard), 0);
  const char *inputs[] = {"-", in};
  chakra_error err = {0};
  assert_int_equal(chakra_output_check(in, inputs, 2, &err), CHAKRA_EINVAL);
  assert_non_null(strstr(err.msg, "same file as the input"));
  /* another name of the same file is the same file */
  assert_int_equal(chakra_output_check(hard, inputs, 2, &err), CHAKRA_EINVAL);
  char *other = tu_join(tu_dir, "other.et");
  assert_int_equal(chakra_output_check(other, inputs, 2, &err), 0);
  free(in);
  free(hard);
  free(other);
}

static void test_output_check_finds_unusable_destinations_before_work(void **state) {
  (void)state;
  chakra_error err = {0};
  assert_int_equal(chakra_output_check("", NULL, 0, &err), CHAKRA_EINVAL);
  assert_non_null(strstr(err.msg, "empty"));
  assert_int_equal(chakra_output_check(tu_dir, NULL, 0, &err), CHAKRA_EINVAL);
  assert_non_null(strstr(err.msg, "is a directory"));
  char *missing = tu_join(tu_dir, "no/such/folder/r.json");
  assert_int_equal(chakra_output_check(missing, NULL, 0, &err), CHAKRA_EIO);
  assert_non_null(strstr(err.msg, "does not exist"));
  assert_int_equal(chakra_output_check("-", NULL, 0, &err), 0);
  assert_int_equal(chakra_output_check("/dev/null", NULL, 0, &err), 0);
  free(missing);
}

static void test_output_empty_path_is_refused_when_opened(void **state) {
  (void)state;
  chakra_error err = {0};
  chakra_writer *w;
  assert_int_equal(chakra_writer_open(&w, "", 0, &err), CHAKRA_EINVAL);
  assert_null(w);
}

static void test_output_remove_temporaries_unlinks_live_outputs_only(void **state) {
  (void)state;
  char *p = tu_join(tu_dir, "live.et");
  chakra_error err = {0};
  chakra_writer *w;
  assert_int_equal(chakra_writer_open(&w, p, 0, &err), 0);
  assert_int_equal(tu_dir_count(tu_dir, NULL), 1); /* the temporary */
  chakra_output_remove_temporaries();
  assert_int_equal(tu_dir_count(tu_dir, NULL), 0);
  chakra_writer_discard(w);
  char *done = tu_join(tu_dir, "done.et");
  write_meta(done, "1.0.0");
  chakra_output_remove_temporaries();
  assert_int_equal(tu_dir_count(tu_dir, NULL), 1); /* finished outputs stay */
  free(p);
  free(done);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_output_to_a_fifo_is_written_in_place, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_output_to_dev_null_keeps_the_device, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_output_through_a_symlink_replaces_the_target_and_keeps_the_link,
                                      tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_output_through_a_dangling_symlink_creates_the_target, tu_dir_setup,
                                      tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_output_check_refuses_an_input_as_output, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_output_check_finds_unusable_destinations_before_work, tu_dir_setup,
                                      tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_output_empty_path_is_refused_when_opened, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_output_remove_temporaries_unlinks_live_outputs_only, tu_dir_setup,
                                      tu_dir_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
