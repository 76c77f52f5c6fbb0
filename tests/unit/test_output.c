/* test_output.c - pins the rules of include/chakra/output.h: outputs never
 * destroy what they should not. Special files are written in place, a
 * symbolic link's target is replaced and the link kept, an output that is
 * an input (by any name: links, prefixes, folders reached through links)
 * or another output is refused before anything is written, an unusable
 * destination is found before any work, a set of outputs is put in place
 * all together or not at all (the old files come back when one cannot be
 * placed), library functions with several outputs (synth, coll synth)
 * commit them together, and an interrupted program with eight threads
 * writing leaves no temporary behind. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "chakra/coll.h"
#include "chakra/output.h"
#include "chakra/synth.h"
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

/* ---- the output set --------------------------------------------------------- */

/* Files in tu_dir whose name starts with a dot (temporaries). */
static size_t hidden_files(void) {
  DIR *d = opendir(tu_dir);
  size_t n = 0;
  for (struct dirent *e; d && (e = readdir(d)) != NULL;)
    if (e->d_name[0] == '.' && strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
  if (d) closedir(d);
  return n;
}

static int exists_in(const char *name) {
  char *p = tu_join(tu_dir, name);
  int yes = tu_exists(p);
  free(p);
  return yes;
}

/* The version a one-message trace carries (write_meta). */
static char *version_of(const char *path) {
  chakra_error err = {0};
  chakra_reader *r;
  if (chakra_reader_open(&r, path, NULL, &err)) fail_msg("read %s: %s", path, err.msg);
  char *v = strdup(chakra_reader_metadata(r)->version);
  chakra_reader_close(r);
  return v;
}

static void assert_version(const char *dir, const char *name, const char *version) {
  char *p = tu_join(dir, name), *v = version_of(p);
  assert_string_equal(v, version);
  free(v);
  free(p);
}

/* chdir to tu_dir for short relative names; back to where we were after. */
static char *enter_dir(void) {
  char *cwd = getcwd(NULL, 0);
  assert_int_equal(chdir(tu_dir), 0);
  return cwd;
}

static void leave_dir(char *cwd) {
  assert_int_equal(chdir(cwd), 0);
  free(cwd);
}

/* Checks a set of one output (a file, or with prefix set a prefix) against
 * inputs (trace FILEs or PREFIXes); returns the status, message in err. */
static int check_one(const char *out, int prefix, const char *const *ins, size_t n, chakra_error *err) {
  chakra_output_set *s = chakra_output_set_new();
  assert_non_null(s);
  if (prefix) chakra_output_set_output_prefix(s, out, "-o");
  else chakra_output_set_output(s, out, "-o");
  for (size_t i = 0; i < n; i++) chakra_output_set_input_traces(s, ins[i]);
  int rc = chakra_output_set_check(s, err);
  chakra_output_set_free(s);
  return rc;
}

static void test_output_set_finds_an_input_behind_any_name(void **state) {
  (void)state;
  char *cwd = enter_dir();
  write_meta("in.0.et", "1"), write_meta("in.1.et", "1"), write_meta("cfg.et", "1");
  assert_int_equal(mkdir("sub", 0777), 0);
  write_meta("sub/x.et", "1");
  assert_int_equal(symlink("sub", "alias"), 0);
  assert_int_equal(symlink("cfg.et", "cfg-link.et"), 0);
  assert_int_equal(link("in.1.et", "q.3.et"), 0);
  size_t before = tu_dir_count(".", NULL);
  chakra_error err = {0};
  const char *prefix_in[] = {"in"}, *cfg_in[] = {"cfg.et"}, *sub_in[] = {"sub/x.et"};
  /* -o PREFIX writes PREFIX.<r>.et: the input's own ranks */
  assert_int_equal(check_one("in", 1, prefix_in, 1, &err), CHAKRA_EINVAL);
  assert_string_equal(err.msg, "in.0.et: is the same file as the input in.0.et; writing it (-o in, rank 0) would "
                               "destroy the input");
  /* a rank of an input prefix named as a file */
  assert_int_equal(check_one("in.1.et", 0, prefix_in, 1, &err), CHAKRA_EINVAL);
  /* a symbolic link to the input, the input through a linked folder, a
   * hard link among a prefix's ranks */
  assert_int_equal(check_one("cfg-link.et", 0, cfg_in, 1, &err), CHAKRA_EINVAL);
  assert_int_equal(check_one("alias/x.et", 0, sub_in, 1, &err), CHAKRA_EINVAL);
  assert_int_equal(check_one("q", 1, prefix_in, 1, &err), CHAKRA_EINVAL);
  assert_non_null(strstr(err.msg, "q.3.et: is the same file as the input in.1.et"));
  /* what is no input passes: another prefix, a file that a prefix does not
   * denote, standard streams */
  assert_int_equal(check_one("out", 1, prefix_in, 1, &err), 0);
  assert_int_equal(check_one("in.0.et", 1, prefix_in, 1, &err), 0); /* writes in.0.et.0.et */
  assert_int_equal(check_one("-", 0, prefix_in, 1, &err), 0);
  assert_int_equal(check_one("/dev/null", 0, cfg_in, 1, &err), 0);
  assert_int_equal(tu_dir_count(".", NULL), before); /* nothing created */
  leave_dir(cwd);
}

static int check_pair(const char *a, int a_prefix, const char *b, int b_prefix, chakra_error *err) {
  chakra_output_set *s = chakra_output_set_new();
  if (a_prefix) chakra_output_set_output_prefix(s, a, "-o");
  else chakra_output_set_output(s, a, "--xml");
  if (b_prefix) chakra_output_set_output_prefix(s, b, "-o");
  else chakra_output_set_output(s, b, "--report");
  int rc = chakra_output_set_check(s, err);
  chakra_output_set_free(s);
  return rc;
}

static void test_output_set_finds_two_outputs_that_are_one_file(void **state) {
  (void)state;
  char *cwd = enter_dir();
  assert_int_equal(mkdir("sub", 0777), 0);
  assert_int_equal(symlink("sub", "alias"), 0);
  assert_int_equal(symlink("t.json", "l.json"), 0); /* dangling: written through */
  write_meta("old.json", "1");
  assert_int_equal(link("old.json", "hard.json"), 0);
  chakra_error err = {0};
  assert_int_equal(check_pair("o.0.et", 0, "o", 1, &err), CHAKRA_EINVAL); /* coll synth -o o --xml o.0.et */
  assert_string_equal(err.msg, "o.0.et: written twice, as --xml and as -o o, rank 0; give the outputs different names");
  assert_int_equal(check_pair("a.json", 0, "./a.json", 0, &err), CHAKRA_EINVAL);
  assert_int_equal(check_pair("sub/a.json", 0, "alias/a.json", 0, &err), CHAKRA_EINVAL);
  assert_int_equal(check_pair("l.json", 0, "t.json", 0, &err), CHAKRA_EINVAL);
  assert_int_equal(check_pair("old.json", 0, "hard.json", 0, &err), CHAKRA_EINVAL);
  assert_int_equal(check_pair("p", 1, "./p", 1, &err), CHAKRA_EINVAL);
  assert_int_equal(check_pair("alias/p.7.et", 0, "sub/p", 1, &err), CHAKRA_EINVAL);
  /* different files */
  assert_int_equal(check_pair("o.json", 0, "o", 1, &err), 0);
  assert_int_equal(check_pair("o", 1, "o.1", 1, &err), 0);
  assert_int_equal(check_pair("o.01.et", 0, "o", 1, &err), 0); /* not a name the writer gives a rank */
  assert_int_equal(check_pair("-", 0, "-", 0, &err), 0);
  leave_dir(cwd);
}

/* Writes version into each of names (relative to tu_dir) through the
 * library's writer, inside the active set. */
static void write_all(const char *const *names, size_t n, const char *version) {
  for (size_t i = 0; i < n; i++) {
    char *p = tu_join(tu_dir, names[i]);
    write_meta(p, version);
    free(p);
  }
}

static void begin_set(const char *const *files, size_t n, const char *prefix) {
  chakra_output_set *s = chakra_output_set_new();
  for (size_t i = 0; i < n; i++) {
    char *p = tu_join(tu_dir, files[i]);
    chakra_output_set_output(s, p, NULL);
    free(p);
  }
  if (prefix) {
    char *p = tu_join(tu_dir, prefix);
    chakra_output_set_output_prefix(s, p, NULL);
    free(p);
  }
  chakra_error err = {0};
  if (chakra_output_set_begin(s, &err)) fail_msg("begin: %s", err.msg);
}

static void test_output_set_holds_its_outputs_until_commit_or_abort(void **state) {
  (void)state;
  const char *names[] = {"a.et", "r.0.et", "r.1.et"};
  begin_set(names, 1, "r");
  write_all(names, 3, "new");
  assert_false(exists_in("a.et"));
  assert_int_equal(hidden_files(), 3); /* complete, under temporary names */
  chakra_error err = {0};
  assert_int_equal(chakra_output_set_commit(&err), 0);
  assert_int_equal(hidden_files(), 0);
  for (int i = 0; i < 3; i++) assert_version(tu_dir, names[i], "new");
  /* abort: what was there stays */
  begin_set(names, 1, "r");
  write_all(names, 3, "newer");
  chakra_output_set_abort();
  assert_int_equal(hidden_files(), 0);
  for (int i = 0; i < 3; i++) assert_version(tu_dir, names[i], "new");
  assert_int_equal(chakra_output_set_commit(&err), 0); /* none active: nothing to do */
}

static void test_output_set_refuses_an_output_it_was_not_told_of(void **state) {
  (void)state;
  const char *names[] = {"a.et"};
  begin_set(names, 1, NULL);
  char *b = tu_join(tu_dir, "b.et");
  chakra_writer *w = NULL;
  chakra_error err = {0};
  assert_int_not_equal(chakra_writer_open(&w, b, 0, &err), 0);
  assert_non_null(strstr(err.msg, "not among the outputs checked"));
  assert_int_equal(tu_dir_count(tu_dir, NULL), 0);
  chakra_output_set_abort();
  free(b);
}

static void test_output_set_puts_the_old_files_back_when_one_cannot_be_placed(void **state) {
  (void)state;
  const char *names[] = {"a.et", "b.et", "c.et"};
  write_all(names, 3, "old");
  begin_set(names, 3, NULL);
  write_all(names, 3, "new");
  /* b cannot be placed any more: a folder took its name */
  char *b = tu_join(tu_dir, "b.et");
  assert_int_equal(unlink(b), 0);
  assert_int_equal(mkdir(b, 0777), 0);
  chakra_error err = {0};
  assert_int_equal(chakra_output_set_commit(&err), CHAKRA_EIO);
  assert_non_null(strstr(err.msg, "b.et: cannot rename into place"));
  assert_version(tu_dir, "a.et", "old"); /* a had been placed: it is put back */
  assert_version(tu_dir, "c.et", "old");
  assert_int_equal(hidden_files(), 0);
  rmdir(b);
  free(b);
}

static void test_output_set_with_an_output_lost_writes_none(void **state) {
  (void)state;
  const char *names[] = {"a.et", "b.et"};
  begin_set(names, 2, NULL);
  write_all(names, 1, "new");
  char *b = tu_join(tu_dir, "b.et");
  chakra_writer *w;
  chakra_error err = {0};
  assert_int_equal(chakra_writer_open(&w, b, 0, &err), 0);
  chakra_writer_discard(w); /* a failed write */
  assert_int_equal(chakra_output_set_commit(&err), CHAKRA_EIO);
  assert_non_null(strstr(err.msg, "b.et: not written completely, so none of the outputs was written"));
  assert_int_equal(tu_dir_count(tu_dir, NULL), 0);
  free(b);
}

/* ---- library functions with several outputs ---------------------------------- */

static void small_synth(chakra_synth_config *c) {
  chakra_synth_config_default(c);
  c->num_stacks = 1, c->dmodel = 64, c->dff = 128, c->head = 4, c->kvhead = 4, c->seq = 16, c->dvocal = 128;
  c->batch = 4, c->dp = 4;
}

/* synth -o P that fails at one rank keeps the P.json of the previous run
 * (it used to write the groups first and remove them on failure). */
static void test_output_failed_synth_keeps_the_previous_groups_file(void **state) {
  (void)state;
  chakra_synth_config c;
  small_synth(&c);
  char *prefix = tu_join(tu_dir, "P"), *json = tu_join(tu_dir, "P.json"), *r2 = tu_join(tu_dir, "P.2.et");
  tu_write_text(json, "{\"old\": [0]}");
  assert_int_equal(mkdir(r2, 0777), 0); /* rank 2 cannot be written */
  chakra_error err = {0};
  assert_int_not_equal(chakra_synth_write(&c, prefix, NULL, &err), 0);
  char *text = tu_read_text(json, NULL);
  assert_string_equal(text, "{\"old\": [0]}");
  assert_false(exists_in("P.0.et"));
  assert_int_equal(hidden_files(), 0);
  rmdir(r2);
  assert_int_equal(chakra_synth_write(&c, prefix, NULL, &err), 0); /* and then it works */
  free(text), free(prefix), free(json), free(r2);
}

/* coll synth --xml X -o P that fails writing the ranks leaves no X. */
static void test_output_failed_coll_synth_writes_no_xml(void **state) {
  (void)state;
  char *prefix = tu_join(tu_dir, "P"), *xml = tu_join(tu_dir, "x.xml"), *r1 = tu_join(tu_dir, "P.1.et");
  assert_int_equal(mkdir(r1, 0777), 0);
  chakra_coll_synth_options o = {.coll = CHAKRA_COLL_ALLGATHER, .topology = "ring:4", .size = 4096, .xml_path = xml};
  chakra_coll_synth_result r;
  chakra_error err = {0};
  assert_int_not_equal(chakra_coll_synth(prefix, &o, &r, &err), 0);
  assert_false(tu_exists(xml));
  assert_int_equal(hidden_files(), 0);
  rmdir(r1);
  assert_int_equal(chakra_coll_synth(prefix, &o, &r, &err), 0);
  assert_true(tu_exists(xml));
  free(prefix), free(xml), free(r1);
}

/* ---- interrupted writers -------------------------------------------------------- */

static const char *writers_dir;

/* In the child: no cmocka here. Once the program is being interrupted,
 * opens fail; the thread waits for the end. */
static void *keep_writing(void *arg) {
  long t = (long)arg;
  char path[4200];
  ChakraProtoMsg__GlobalMetadata m = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
  m.version = "complete";
  for (unsigned long i = 0;; i++) {
    snprintf(path, sizeof path, "%s/t%ld_%lu.et", writers_dir, t, i);
    chakra_error err = {0};
    chakra_writer *w;
    if (chakra_writer_open(&w, path, 0, &err)) break;
    if (chakra_writer_put(w, &m.base, &err)) chakra_writer_discard(w);
    else chakra_writer_close(w, &err);
  }
  for (;;) pause();
  return NULL;
}

static void die_cleanly(int sig) {
  if (chakra_output_interrupt(sig)) return;
  signal(sig, SIG_DFL);
  raise(sig);
}

/* A child with eight threads creating, writing and committing outputs as
 * fast as they can, killed by sig mid-run; then no temporary may be left
 * and every output under its final name must be complete. */
static void interrupt_eight_writers(int sig) {
  writers_dir = tu_dir;
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    struct sigaction sa = {0};
    sa.sa_handler = die_cleanly;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    pthread_t th[8];
    for (long t = 0; t < 8; t++) pthread_create(&th[t], NULL, keep_writing, (void *)t);
    for (;;) pause();
  }
  struct timespec nap = {0, 2000000};
  while (tu_dir_count(tu_dir, NULL) < 200) nanosleep(&nap, NULL); /* well under way */
  kill(pid, sig);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFSIGNALED(status) && WTERMSIG(status) == sig);
  assert_int_equal(hidden_files(), 0);
  DIR *d = opendir(tu_dir);
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    if (e->d_name[0] != '.') assert_version(tu_dir, e->d_name, "complete");
  closedir(d);
}

static void test_output_sigint_with_eight_writers_leaves_no_temporary(void **state) {
  (void)state;
  for (int round = 0; round < 5; round++) {
    interrupt_eight_writers(SIGINT);
    tu_dir_teardown(NULL), tu_dir_setup(NULL);
  }
}

static void test_output_sigterm_with_eight_writers_leaves_no_temporary(void **state) {
  (void)state;
  for (int round = 0; round < 5; round++) {
    interrupt_eight_writers(SIGTERM);
    tu_dir_teardown(NULL), tu_dir_setup(NULL);
  }
}

/* Last: it closes the door for the rest of the process. */
static void test_output_remove_temporaries_unlinks_live_outputs_only(void **state) {
  (void)state;
  char *done = tu_join(tu_dir, "done.et");
  write_meta(done, "1.0.0");
  char *p = tu_join(tu_dir, "live.et");
  chakra_error err = {0};
  chakra_writer *w;
  assert_int_equal(chakra_writer_open(&w, p, 0, &err), 0);
  assert_int_equal(tu_dir_count(tu_dir, NULL), 2); /* the temporary */
  chakra_output_remove_temporaries();
  assert_int_equal(tu_dir_count(tu_dir, NULL), 1); /* finished outputs stay */
  chakra_writer_discard(w);
  /* and no temporary can be created any more */
  assert_int_not_equal(chakra_writer_open(&w, p, 0, &err), 0);
  assert_non_null(strstr(err.msg, "interrupted"));
  assert_int_equal(tu_dir_count(tu_dir, NULL), 1);
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
      cmocka_unit_test_setup_teardown(test_output_set_finds_an_input_behind_any_name, tu_dir_setup,
                                      tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_output_set_finds_two_outputs_that_are_one_file, tu_dir_setup,
                                      tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_output_set_holds_its_outputs_until_commit_or_abort, tu_dir_setup,
                                      tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_output_set_refuses_an_output_it_was_not_told_of, tu_dir_setup,
                                      tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_output_set_puts_the_old_files_back_when_one_cannot_be_placed,
                                      tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_output_set_with_an_output_lost_writes_none, tu_dir_setup,
                                      tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_output_failed_synth_keeps_the_previous_groups_file, tu_dir_setup,
                                      tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_output_failed_coll_synth_writes_no_xml, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_output_sigint_with_eight_writers_leaves_no_temporary, tu_dir_setup,
                                      tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_output_sigterm_with_eight_writers_leaves_no_temporary, tu_dir_setup,
                                      tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_output_remove_temporaries_unlinks_live_outputs_only, tu_dir_setup,
                                      tu_dir_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
