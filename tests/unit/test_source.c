/* test_source.c - pins what tests/unit/test_set.c leaves of the trace-set
 * source (chakra/set.h): where a class's bytes are (chakra_set_input) for
 * files and for a source's path, FILE* and buffer; the source's names in
 * messages; its errors passed on; a comm-group file given to a source read
 * instead of the source's groups; groups read once, a failure remembered;
 * and a source's callbacks never entered by two threads at once however
 * many threads load ranks. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "chakra/build.h"
#include "chakra/set.h"
#include "testutil.h"

#define NPUS 4

/* A 4-rank all-reduce microbenchmark at tu_dir/NAME. */
static char *workload(const char *name) { return tu_microbench(name, NPUS); }

/* Rank r's bytes handed out as a path (r = 0), a FILE* (r = 1) or a buffer
 * (r >= 2); calls counted, overlapping calls detected. */
typedef struct src_ctx {
  char *paths[NPUS];
  uint8_t *bytes[NPUS];
  size_t len[NPUS];
  FILE *files[NPUS];
  int named, fail_class, group_calls, closed;
  int inside, overlapped, calls;
  pthread_mutex_t count; /* guards calls, inside and overlapped: the test's own, not the set's */
} src_ctx;

static void enter(src_ctx *c) {
  pthread_mutex_lock(&c->count);
  if (c->inside) c->overlapped = 1;
  c->inside = 1;
  c->calls++;
  pthread_mutex_unlock(&c->count);
  usleep(2000); /* widen the window a missing lock would leave open */
}

static void leave(src_ctx *c) {
  pthread_mutex_lock(&c->count);
  c->inside = 0;
  pthread_mutex_unlock(&c->count);
}

static int src_input(void *ctx, uint32_t cls, chakra_input *out, chakra_error *err) {
  src_ctx *c = ctx;
  enter(c);
  int rc = 0;
  if ((int)cls == c->fail_class) rc = chakra_error_set(err, CHAKRA_EIO, "my source: class %u is offline", cls);
  else if (cls == 0) out->path = c->paths[0];
  else if (cls == 1) {
    rewind(c->files[1]);
    out->file = c->files[1];
  } else if (cls == 3 && c->fail_class == -2) out->size = 5; /* bytes announced, none given */
  else {
    out->data = c->bytes[cls];
    out->size = c->len[cls];
  }
  leave(c);
  return rc;
}

static const char *src_name(void *ctx, uint32_t cls) {
  static const char *const names[] = {"mem:zero", "mem:one", "mem:two", "mem:three"};
  src_ctx *c = ctx;
  return c->named && cls < NPUS ? names[cls] : NULL;
}

static int src_groups(void *ctx, chakra_set *s, chakra_error *err) {
  src_ctx *c = ctx;
  static const uint32_t all[] = {0, 1, 2, 3}, out[] = {0, 9};
  c->group_calls++;
  int rc = chakra_set_add_group(s, "all", all, 4, err);
  return rc ? rc : c->fail_class == -3 ? chakra_set_add_group(s, "bad", out, 2, err) : 0;
}

static void src_close(void *ctx) { ((src_ctx *)ctx)->closed++; }

static void src_load(src_ctx *c, const char *prefix) {
  memset(c, 0, sizeof *c);
  c->fail_class = -1;
  pthread_mutex_init(&c->count, NULL);
  for (uint32_t r = 0; r < NPUS; r++) {
    c->paths[r] = chakra_rank_path_dup(prefix, r);
    c->bytes[r] = tu_read_file(c->paths[r], &c->len[r]);
  }
  c->files[1] = fopen(c->paths[1], "rb");
  assert_non_null(c->files[1]);
}

static void src_free(src_ctx *c) {
  for (uint32_t r = 0; r < NPUS; r++) free(c->paths[r]), free(c->bytes[r]);
  fclose(c->files[1]);
  pthread_mutex_destroy(&c->count);
}

static chakra_set *src_open(src_ctx *c, const chakra_set_options *opt) {
  chakra_set_source src = {.ranks = NPUS, .input = src_input, .name = src_name, .groups = src_groups,
                           .close = src_close};
  chakra_set *s;
  chakra_error err = {0};
  if (chakra_set_from_source(&s, &src, c, opt, &err)) fail_msg("%s", err.msg);
  return s;
}

static void input_of_files_and_of_a_source(void **state) {
  (void)state;
  char *prefix = workload("ar");
  chakra_set *s;
  chakra_error err = {0};
  assert_int_equal(chakra_set_open(&s, prefix, NULL, &err), 0);
  chakra_input in;
  assert_int_equal(chakra_set_input(s, 2, &in, &err), 0);
  assert_string_equal(in.path, chakra_set_rank_path(s, 2));
  assert_null(in.file);
  assert_null(in.data);
  assert_int_equal(chakra_set_input(s, NPUS, &in, &err), CHAKRA_EINVAL);
  assert_contains(err.msg, "trace set: class 4 does not exist (4 classes)");
  chakra_set_close(s);

  src_ctx c;
  src_load(&c, prefix);
  s = src_open(&c, NULL);
  assert_int_equal(chakra_set_input(s, 0, &in, &err), 0);
  assert_string_equal(in.path, c.paths[0]);
  assert_int_equal(chakra_set_input(s, 1, &in, &err), 0);
  assert_ptr_equal(in.file, c.files[1]);
  assert_string_equal(in.name, "<rank 1>"); /* a stream is named for messages */
  assert_int_equal(chakra_set_input(s, 2, &in, &err), 0);
  assert_ptr_equal(in.data, c.bytes[2]);
  assert_int_equal(in.size, c.len[2]);
  /* each form loads the same graph as the file */
  for (uint32_t r = 0; r < NPUS; r++) {
    chakra_graph *g, *want;
    assert_int_equal(chakra_set_load_rank(s, r, NULL, &g, &err), 0);
    assert_int_equal(chakra_graph_load(&want, c.paths[r], NULL, &err), 0);
    assert_int_equal(g->n, want->n);
    for (size_t i = 0; i < g->n; i++) {
      assert_int_equal(g->nodes[i].id, want->nodes[i].id);
      assert_int_equal(g->nodes[i].size, want->nodes[i].size);
    }
    chakra_graph_free(g);
    chakra_graph_free(want);
  }
  chakra_set_close(s);
  assert_int_equal(c.closed, 1);
  src_free(&c);
  free(prefix);
}

static void source_names_and_errors_reach_messages(void **state) {
  (void)state;
  char *prefix = workload("ar");
  src_ctx c;
  src_load(&c, prefix);
  c.named = 1;
  c.fail_class = 2;
  chakra_set *s = src_open(&c, NULL);
  chakra_error err = {0};
  assert_string_equal(chakra_set_rank_name(s, 3), "mem:three");
  chakra_input in;
  assert_int_equal(chakra_set_input(s, 3, &in, &err), 0);
  assert_string_equal(in.name, "mem:three");
  /* the source's failure is the caller's, word for word */
  chakra_graph *g;
  assert_int_equal(chakra_set_load_rank(s, 2, NULL, &g, &err), CHAKRA_EIO);
  assert_null(g);
  assert_string_equal(err.msg, "my source: class 2 is offline");
  chakra_reader *rd;
  assert_int_equal(chakra_set_reader(s, 2, NULL, &rd, &err), CHAKRA_EIO);
  assert_null(rd);
  /* a truncated buffer is reported under the source's name */
  c.len[3] -= 3;
  assert_int_not_equal(chakra_set_load_rank(s, 3, NULL, &g, &err), 0);
  assert_contains(err.msg, "mem:three: ");
  chakra_set_close(s);
  /* bytes announced but none given */
  c.fail_class = -2;
  c.named = 0;
  s = src_open(&c, NULL);
  assert_int_equal(chakra_set_input(s, 3, &in, &err), CHAKRA_EINVAL);
  assert_contains(err.msg, "the source gave class 3 no path, stream or bytes");
  chakra_set_close(s);
  src_free(&c);
  free(prefix);
}

static void given_groups_file_replaces_the_source_groups_read_once(void **state) {
  (void)state;
  char *prefix = workload("ar");
  char *given = tu_join(tu_dir, "g.json");
  tu_write_text(given, "{\"lo\": [0, 1], \"hi\": [2, 3]}");
  src_ctx c;
  src_load(&c, prefix);
  chakra_set *s = src_open(&c, &(chakra_set_options){.comm_groups = given});
  assert_int_equal(chakra_set_groups_origin(s), CHAKRA_GROUPS_GIVEN);
  assert_string_equal(chakra_set_groups_path(s), given);
  chakra_error err = {0};
  assert_int_equal(chakra_set_load_groups(s, &err), 0);
  assert_int_equal(c.group_calls, 0);
  assert_int_equal(chakra_set_group_count(s), 2);
  assert_int_equal(chakra_set_group_find(s, "all"), -1);
  assert_int_equal(chakra_set_group_find(s, "hi"), 1);
  chakra_set_close(s);
  /* the source's groups: asked for once, however often they are wanted */
  s = src_open(&c, NULL);
  assert_int_equal(chakra_set_groups_origin(s), CHAKRA_GROUPS_SOURCE);
  assert_null(chakra_set_groups_path(s));
  for (int i = 0; i < 3; i++) assert_int_equal(chakra_set_load_groups(s, &err), 0);
  assert_int_equal(c.group_calls, 1);
  uint32_t n;
  assert_int_equal(chakra_set_group_members(s, 0, &n)[3], 3);
  assert_int_equal(n, 4);
  chakra_set_close(s);
  /* a failure too: the same error each time, one call */
  c.fail_class = -3;
  c.group_calls = 0;
  s = src_open(&c, NULL);
  for (int i = 0; i < 2; i++) {
    memset(&err, 0, sizeof err);
    assert_int_equal(chakra_set_load_groups(s, &err), CHAKRA_EINVAL);
    assert_string_equal(err.msg, "trace set: group \"bad\" names rank 9, but the set has 4 rank(s)");
  }
  assert_int_equal(c.group_calls, 1);
  chakra_set_close(s);
  src_free(&c);
  free(given);
  free(prefix);
}

typedef struct loader {
  const chakra_set *s;
  uint32_t rank;
  int rc;
  size_t nodes;
} loader;

static void *load_one(void *arg) {
  loader *l = arg;
  chakra_graph *g;
  chakra_error err = {0};
  l->rc = chakra_set_load_rank(l->s, l->rank, NULL, &g, &err);
  if (!l->rc) l->nodes = g->n;
  chakra_graph_free(g);
  return NULL;
}

/* Loaders on eight threads: the set calls into the source one at a time
 * (docs: its callbacks run under the set's lock). */
static void callbacks_never_overlap(void **state) {
  (void)state;
  char *prefix = workload("ar");
  src_ctx c;
  src_load(&c, prefix);
  chakra_set *s = src_open(&c, NULL);
  pthread_t t[8];
  loader l[8];
  for (int i = 0; i < 8; i++) {
    l[i] = (loader){.s = s, .rank = (uint32_t)(2 + i % 2)}; /* the buffers: no shared FILE* position */
    assert_int_equal(pthread_create(&t[i], NULL, load_one, &l[i]), 0);
  }
  for (int i = 0; i < 8; i++) {
    assert_int_equal(pthread_join(t[i], NULL), 0);
    assert_int_equal(l[i].rc, 0);
    assert_int_equal(l[i].nodes, 1);
  }
  assert_true(c.calls >= 8);
  assert_false(c.overlapped);
  chakra_set_close(s);
  src_free(&c);
  free(prefix);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(input_of_files_and_of_a_source, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(source_names_and_errors_reach_messages, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(given_groups_file_replaces_the_source_groups_read_once, tu_dir_setup,
                                      tu_dir_teardown),
      cmocka_unit_test_setup_teardown(callbacks_never_overlap, tu_dir_setup, tu_dir_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
