/* test_vclass.c - pins validating a shared grid set by class
 * (chakra_validate_set, chakra/validate.h): the same verdict as checking
 * every rank (--per-rank), on a set whose partners are translated along
 * the grid by non-zero vectors and whose groups span both classes, for
 * each kind of check (messages, collectives, membership, cycles, both kinds
 * of deadlock), reading each template once; and the cases that keep the
 * per-rank path.
 *
 * The set: 8 ranks, dp 4 (rank = dp + 4 pp) and pp 2, the pipeline stage
 * the class (representatives 0 and 4); groups "1" and "2" are the stages'
 * dp groups, "3".."6" the pairs {dp, 4 + dp}. Stage 0 sends to its dp + 1
 * on stage 1 and receives from its dp + 2 there. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra/build.h"
#include "chakra/set.h"
#include "chakra/validate.h"
#include "testutil.h"

#define SEND(i, peer, ...) TU_SEND(i, peer, 64, __VA_ARGS__)
#define RECV(i, peer, ...) TU_RECV(i, peer, 64, __VA_ARGS__)
#define ALLREDUCE(i, pg_, ...) TU_COLL(i, CHAKRA_ALL_REDUCE, 1024, .pg = (pg_), __VA_ARGS__)

static const char manifest[] =
    "{\"chakra_trace_set\": 1, \"ranks\": 8,\n"
    " \"classes\": [{\"template\": \"%s.class0.et\", \"rep\": 0}, {\"template\": \"%s.class1.et\", \"rep\": 4}],\n"
    " \"layout\": {\"kind\": \"grid\", \"axes\": [{\"name\": \"dp\", \"size\": 4}, {\"name\": \"pp\", \"size\": 2}],\n"
    "  \"class_axes\": [\"pp\"],\n"
    "  \"groups\": [{\"axes\": [\"dp\"], \"order\": [\"pp\"], \"first\": 1},\n"
    "             {\"axes\": [\"pp\"], \"order\": [\"dp\"], \"first\": 3}]}}\n";

/* The sound templates; the tests change a node or two. */
static const tu_wnode stage0[] = {TU_COMP(1, 10, 0), SEND(2, 5), RECV(3, 6), ALLREDUCE(4, "1", TU_DEPS(1)),
                                  ALLREDUCE(5, "3", TU_DEPS(4)), ALLREDUCE(6, "", TU_DEPS(5))};
static const tu_wnode stage1[] = {RECV(1, 3), SEND(2, 2, TU_DEPS(1)), ALLREDUCE(3, "2"), ALLREDUCE(4, "3", TU_DEPS(3)),
                                  ALLREDUCE(5, "", TU_DEPS(4))};
enum { N0 = sizeof stage0 / sizeof *stage0, N1 = sizeof stage1 / sizeof *stage1 };

/* Writes the templates as tu_dir/NAME.class<k>.et and the manifest; the
 * prefix, malloc'd. */
static char *write_set(const char *name, const tu_wnode *t0, const tu_wnode *t1) {
  char *prefix = tu_join(tu_dir, name);
  for (uint32_t c = 0; c < 2; c++) {
    tu_write_rank(prefix, c, c ? t1 : t0, c ? N1 : N0);
    char *from = chakra_rank_path_dup(prefix, c), *to = chakra_class_path_dup(prefix, c);
    assert_int_equal(rename(from, to), 0);
    free(from), free(to);
  }
  char text[2048], *path = chakra_manifest_path_dup(prefix);
  snprintf(text, sizeof text, manifest, name, name);
  tu_write_text(path, text);
  free(path);
  return prefix;
}

typedef struct run {
  chakra_validate_summary sum;
  unsigned loads;
  tu_lines lines;
} run;

static int count_load(void *ctx, const char *phase, uint64_t done, uint64_t total) {
  (void)done, (void)total;
  if (strcmp(phase, "load") == 0) ++*(unsigned *)ctx;
  return 0;
}

/* Validates prefix (per rank when asked; with a comm-group file when
 * groups is not NULL). */
static run validate(const char *prefix, int per_rank, const char *groups) {
  run r;
  memset(&r, 0, sizeof r);
  chakra_set_options so = {.progress = count_load, .progress_ctx = &r.loads, .comm_groups = groups};
  chakra_set *set;
  chakra_error err = {0};
  if (chakra_set_open(&set, prefix, &so, &err)) fail_msg("%s", err.msg);
  chakra_validate_options vo = {.per_rank = per_rank};
  if (chakra_validate_set(set, &vo, tu_collect_line, &r.lines, &r.sum, &err)) fail_msg("%s", err.msg);
  chakra_set_close(set);
  return r;
}

/* Both ways: by class (each template read once) and every rank; returns
 * the by-class run, after checking the verdicts agree and the counts of
 * ranks and nodes are every rank's in both. */
static run both(const char *prefix) {
  run c = validate(prefix, 0, NULL), r = validate(prefix, 1, NULL);
  assert_int_equal(c.sum.classes, 2);
  assert_int_equal(c.loads, 2);
  assert_int_equal(r.sum.classes, 0);
  assert_int_equal(r.loads, 8);
  assert_int_equal(c.sum.files, 8);
  assert_int_equal(r.sum.files, 8);
  assert_int_equal(c.sum.nodes, r.sum.nodes);
  assert_int_equal(c.sum.errors > 0, r.sum.errors > 0);
  assert_true(c.sum.errors <= r.sum.errors);
  return c;
}

static void sound_set_agrees(void **state) {
  (void)state;
  char *p = write_set("ok", stage0, stage1);
  run c = both(p);
  assert_int_equal(c.sum.errors, 0);
  assert_int_equal(c.sum.nodes, 4 * N0 + 4 * N1);
  free(p);
}

/* Stage 1's receive from the rank one short of it on dp (rank 3 for rank
 * 4), taken from rank 0 instead: every rank of stage 1 now names the wrong
 * sender, which only translating the tuples shows. */
static void untranslated_peer_is_an_error(void **state) {
  (void)state;
  tu_wnode t1[N1];
  memcpy(t1, stage1, sizeof t1);
  t1[0].peer = 0;
  char *p = write_set("peer", stage0, t1);
  run c = both(p);
  assert_true(c.sum.errors > 0);
  assert_contains(c.lines.line[0], "peer.class1.et (class 1, rank 4 and its translations)");
  assert_contains(c.lines.line[0], "receive from rank 0 (tag 3, 64 bytes) has no matching send");
  free(p);
}

static void message_size_is_an_error(void **state) {
  (void)state;
  tu_wnode t0[N0];
  memcpy(t0, stage0, sizeof t0);
  t0[1].size = 128;
  char *p = write_set("size", t0, stage1);
  assert_int_equal(both(p).sum.errors, 2); /* the send and the receive, once per class */
  free(p);
}

/* A group spanning both classes: stage 1's part of the pairs is bigger. */
static void collective_size_across_classes_is_an_error(void **state) {
  (void)state;
  tu_wnode t1[N1];
  memcpy(t1, stage1, sizeof t1);
  t1[3].size = 2048;
  char *p = write_set("coll", stage0, t1);
  run c = both(p);
  assert_int_equal(c.sum.errors, 2); /* each class against the other */
  assert_contains(c.lines.line[1], "collective #0 is ALL_REDUCE of 1024 bytes, but rank 4 has ALL_REDUCE of 2048");
  assert_contains(c.lines.line[0], "collective #0 is ALL_REDUCE of 2048 bytes, but rank 0 has ALL_REDUCE of 1024");
  free(p);
}

static void not_a_member_is_an_error(void **state) {
  (void)state;
  tu_wnode t1[N1];
  memcpy(t1, stage1, sizeof t1);
  t1[2].pg = "1"; /* stage 0's dp group */
  char *p = write_set("member", stage0, t1);
  run c = both(p);
  assert_true(c.sum.errors > 0);
  assert_contains(c.lines.line[0], "this rank issues ALL_REDUCE on it but is not a member");
  free(p);
}

static void cycle_is_an_error(void **state) {
  (void)state;
  tu_wnode t1[N1];
  memcpy(t1, stage1, sizeof t1);
  t1[0].deps[0] = 2, t1[0].n_deps = 1; /* the receive after the send after the receive */
  char *p = write_set("cycle", stage0, t1);
  assert_true(both(p).sum.errors > 0);
  free(p);
}

/* Every message and group agrees; only the untimed run finds that each
 * stage-0 rank receives before it sends, as stage 1 does. */
static void crossed_messages_deadlock(void **state) {
  (void)state;
  tu_wnode t0[N0];
  memcpy(t0, stage0, sizeof t0);
  t0[1].deps[0] = 3, t0[1].n_deps = 1;
  char *p = write_set("p2pdead", t0, stage1);
  run c = both(p);
  assert_int_equal(c.sum.errors, 2);
  assert_contains(c.lines.line[0], "deadlock: receive from rank 6 (tag 3, 64 bytes) never completes");
  assert_contains(c.lines.line[1], "deadlock: receive from rank 3 (tag 3, 64 bytes) never completes");
  free(p);
}

/* Stage 1 runs the every-rank collective before its pair's: each waits
 * for the other. The weights of the classes in each group decide it: with
 * the world group counted once per class instead of per rank, the sound
 * order would deadlock too (sound_set_agrees). */
static void crossed_collectives_deadlock(void **state) {
  (void)state;
  tu_wnode t1[N1];
  memcpy(t1, stage1, sizeof t1);
  t1[3].pg = "", t1[4].pg = "3";
  char *p = write_set("colldead", stage0, t1);
  run c = both(p);
  assert_int_equal(c.sum.errors, 2);
  assert_contains(c.lines.line[0], "deadlock: group 3: collective #0 (ALL_REDUCE, 1024 bytes) never completes");
  free(p);
}

/* What keeps the per-rank path: a comm-group file, the table layout,
 * per-rank files. */
static void per_rank_path_kept(void **state) {
  (void)state;
  char *p = write_set("given", stage0, stage1);
  char *groups = tu_join(tu_dir, "given.groups.json");
  tu_write_text(groups, "{\"1\": [0, 1, 2, 3], \"2\": [4, 5, 6, 7], \"3\": [0, 4], \"4\": [1, 5], \"5\": [2, 6], "
                        "\"6\": [3, 7]}");
  run g = validate(p, 0, groups);
  assert_int_equal(g.sum.classes, 0);
  assert_int_equal(g.sum.errors, 0);

  chakra_set *set;
  chakra_error err = {0};
  if (chakra_set_open(&set, p, NULL, &err)) fail_msg("%s", err.msg);
  char *flat = tu_join(tu_dir, "flat"), *table = tu_join(tu_dir, "table");
  if (chakra_set_unshare(set, flat, 1, &err)) fail_msg("%s", err.msg);
  chakra_set_close(set);
  /* chakra share writes no group role "" (every rank): none here */
  tu_wnode t0[N0], t1[N1];
  memcpy(t0, stage0, sizeof t0), memcpy(t1, stage1, sizeof t1);
  t0[5].pg = t1[4].pg = "3";
  char *nw = write_set("noworld", t0, t1);
  if (chakra_set_open(&set, nw, NULL, &err)) fail_msg("%s", err.msg);
  if (chakra_set_share(set, table, 1, NULL, &err)) fail_msg("%s", err.msg);
  chakra_set_close(set);
  run f = validate(flat, 0, NULL), t = validate(table, 0, NULL);
  assert_int_equal(f.sum.classes, 0);
  assert_int_equal(f.loads, 8);
  assert_int_equal(f.sum.errors, 0);
  assert_int_equal(t.sum.classes, 0);
  assert_int_equal(t.loads, 8);
  assert_int_equal(t.sum.errors, 0);
  free(flat), free(table), free(nw), free(groups), free(p);
}

/* A METADATA node in a template keeps the per-rank path too (its checks
 * are per rank); found by reading the template, no graph built. */
static void metadata_node_keeps_per_rank_path(void **state) {
  (void)state;
  tu_wnode t0[N0];
  memcpy(t0, stage0, sizeof t0);
  t0[0].type = CHAKRA_METADATA_NODE;
  char *p = write_set("meta", t0, stage1);
  run r = validate(p, 0, NULL);
  assert_int_equal(r.sum.classes, 0);
  assert_int_equal(r.loads, 8);
  free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sound_set_agrees),
      cmocka_unit_test(untranslated_peer_is_an_error),
      cmocka_unit_test(message_size_is_an_error),
      cmocka_unit_test(collective_size_across_classes_is_an_error),
      cmocka_unit_test(not_a_member_is_an_error),
      cmocka_unit_test(cycle_is_an_error),
      cmocka_unit_test(crossed_messages_deadlock),
      cmocka_unit_test(crossed_collectives_deadlock),
      cmocka_unit_test(per_rank_path_kept),
      cmocka_unit_test(metadata_node_keeps_per_rank_path),
  };
  return cmocka_run_group_tests(tests, tu_dir_setup, tu_dir_teardown);
}
