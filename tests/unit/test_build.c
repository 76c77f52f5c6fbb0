/* test_build.c - the message builder and the multi-rank workload writer
 * (include/chakra/build.h): the builder's bytes are protobuf-c's own
 * packing of the same message with the full descriptors, for every
 * attribute kind; the writer names files PREFIX.<r>.et, keeps at most
 * max_open descriptors, refuses oversized and misordered messages, and
 * leaves all ranks or none; ranks made on several threads give the same
 * bytes as on one, within the same descriptor cap, and the failure
 * reported is the lowest failing rank's. */
#include <dirent.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "chakra/build.h"
#include "testutil.h"

/* ------------------------------------------------------------ helpers */

static chakra_attr full_attr(const char *name, ChakraProtoMsg__AttributeProto__ValueCase vc) {
  chakra_attr a = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT;
  a.name = (char *)name;
  a.value_case = vc;
  return a;
}

/* Requires b's buffer to be exactly the framed packing of msg. */
static void assert_built_equals(const chakra_builder *b, const ProtobufCMessage *msg) {
  tu_buf want = {0};
  tu_put_msg(&want, msg);
  size_t n;
  const uint8_t *p = chakra_builder_bytes(b, &n);
  assert_int_equal(n, want.n);
  assert_memory_equal(p, want.p, n);
  tu_buf_free(&want);
}

static size_t open_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  if (!d) return 0;
  size_t n = 0;
  while (readdir(d)) n++;
  closedir(d);
  return n;
}

/* A node message of about 100 bytes for rank r. */
static void build_node(chakra_builder *b, uint64_t id) {
  chakra_builder_node(b, id, "COMP_NODE_layer_FWD", CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE);
  chakra_builder_duration(b, 5);
  chakra_builder_string(b, "pad", "................................................................");
  assert_int_equal(chakra_builder_put(b, NULL), 0);
}

static int count_nodes(const char *path) {
  chakra_reader *r;
  chakra_error err = {0};
  assert_int_equal(chakra_reader_open(&r, path, NULL, &err), 0);
  chakra_node *nd;
  int n = 0, rc;
  while ((rc = chakra_reader_next(r, &nd, &err)) == 1) n++;
  assert_int_equal(rc, 0);
  chakra_reader_close(r);
  return n;
}

/* ------------------------------------------------------------ builder */

static void test_builder_packs_every_attribute_kind_like_protobuf_c(void **state) {
  (void)state;
  static const int64_t i64s[] = {-1, 0, 1ll << 40};
  static const uint64_t u64s[] = {0, UINT64_MAX};
  static const double dbls[] = {0.1, -0.0};
  static const char *const strs[] = {"a", "", "c"};
  static const uint64_t data[] = {1, 2, 300};
  chakra_builder *b;
  assert_int_equal(chakra_builder_new(&b), 0);
  chakra_builder_node(b, 7, "mm", CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE);
  chakra_builder_data_deps(b, data, 3);
  chakra_builder_add_ctrl_dep(b, 6);
  chakra_builder_start_time(b, 11);
  chakra_builder_duration(b, 12);
  chakra_builder_io(b, 0, "[1]", "[[2]]", "['int']");
  chakra_builder_io(b, 1, "", "[]", "[]");
  chakra_builder_int64(b, "rf_id", -5);
  chakra_builder_int64(b, "zero", 0);
  chakra_builder_uint64(b, "duration_ns", UINT64_MAX);
  chakra_builder_int32(b, "comm_src", -1);
  chakra_builder_bool(b, "is_cpu_op", 1);
  chakra_builder_bool(b, "false", 0);
  chakra_builder_double(b, "ratio", 0.1);
  chakra_builder_string(b, "op_schema", "aten::mm(Tensor self) -> Tensor");
  chakra_builder_string(b, "empty", "");
  chakra_builder_int64_list(b, "i64s", i64s, 3);
  chakra_builder_uint64_list(b, "u64s", u64s, 2);
  chakra_builder_double_list(b, "dbls", dbls, 2);
  chakra_builder_string_list(b, "strs", strs, 3);
  assert_int_equal(chakra_builder_put(b, NULL), 0);
  assert_int_equal(chakra_builder_count(b), 1);

  /* the same node, filled by hand with protobuf-c's full descriptors */
  chakra_attr a[13];
  a[0] = full_attr("rf_id", CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL), a[0].int64_val = -5;
  a[1] = full_attr("zero", CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL), a[1].int64_val = 0;
  a[2] = full_attr("duration_ns", CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL), a[2].uint64_val = UINT64_MAX;
  a[3] = full_attr("comm_src", CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL), a[3].int32_val = -1;
  a[4] = full_attr("is_cpu_op", CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL), a[4].bool_val = 1;
  a[5] = full_attr("false", CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL), a[5].bool_val = 0;
  a[6] = full_attr("ratio", CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_DOUBLE_VAL), a[6].double_val = 0.1;
  a[7] = full_attr("op_schema", CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL);
  a[7].string_val = "aten::mm(Tensor self) -> Tensor";
  a[8] = full_attr("empty", CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL), a[8].string_val = "";
  ChakraProtoMsg__Int64List li = CHAKRA_PROTO_MSG__INT64_LIST__INIT;
  ChakraProtoMsg__Uint64List lu = CHAKRA_PROTO_MSG__UINT64_LIST__INIT;
  ChakraProtoMsg__DoubleList ld = CHAKRA_PROTO_MSG__DOUBLE_LIST__INIT;
  ChakraProtoMsg__StringList ls = CHAKRA_PROTO_MSG__STRING_LIST__INIT;
  li.values = (int64_t *)i64s, li.n_values = 3;
  lu.values = (uint64_t *)u64s, lu.n_values = 2;
  ld.values = (double *)dbls, ld.n_values = 2;
  ls.values = (char **)strs, ls.n_values = 3;
  a[9] = full_attr("i64s", CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_LIST), a[9].int64_list = &li;
  a[10] = full_attr("u64s", CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_LIST), a[10].uint64_list = &lu;
  a[11] = full_attr("dbls", CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_DOUBLE_LIST), a[11].double_list = &ld;
  a[12] = full_attr("strs", CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_LIST), a[12].string_list = &ls;
  chakra_attr *ap[13];
  for (int k = 0; k < 13; k++) ap[k] = &a[k];
  ChakraProtoMsg__IOInfo in = CHAKRA_PROTO_MSG__IOINFO__INIT, out = CHAKRA_PROTO_MSG__IOINFO__INIT;
  in.values = "[1]", in.shapes = "[[2]]", in.types = "['int']";
  out.values = "", out.shapes = "[]", out.types = "[]";
  uint64_t ctrl = 6;
  ChakraProtoMsg__Node nd = CHAKRA_PROTO_MSG__NODE__INIT;
  nd.id = 7, nd.name = "mm", nd.type = CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE;
  nd.data_deps = (uint64_t *)data, nd.n_data_deps = 3, nd.ctrl_deps = &ctrl, nd.n_ctrl_deps = 1;
  nd.start_time_micros = 11, nd.duration_micros = 12, nd.inputs = &in, nd.outputs = &out;
  nd.attr = ap, nd.n_attr = 13;
  assert_built_equals(b, &nd.base);
  chakra_builder_free(b);
}

/* chakra_builder_message() is protobuf-c's view of the message being
 * built: packing it gives the bytes put gives. */
static void test_builder_message_is_what_put_writes(void **state) {
  (void)state;
  static const uint64_t data[] = {4, 5};
  chakra_builder *b;
  assert_int_equal(chakra_builder_new(&b), 0);
  assert_null(chakra_builder_message(b));
  chakra_builder_node(b, 9, "all_reduce", CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE);
  chakra_builder_int64(b, "comm_size", 1 << 20);
  chakra_builder_data_deps(b, data, 2);
  chakra_builder_string(b, "pg_name", "0");
  const ProtobufCMessage *m = chakra_builder_message(b);
  assert_non_null(m);
  assert_ptr_equal(m->descriptor, &chakra_proto_msg__node__descriptor);
  const chakra_node *n = (const chakra_node *)m;
  assert_int_equal(n->id, 9);
  assert_string_equal(n->name, "all_reduce");
  assert_int_equal(n->n_data_deps, 2);
  assert_int_equal(n->n_attr, 2);
  assert_string_equal(n->attr[1]->string_val, "0");
  assert_int_equal(chakra_builder_put(b, NULL), 0);
  assert_built_equals(b, m);
  chakra_builder_metadata(b, "0.0.4");
  m = chakra_builder_message(b);
  assert_ptr_equal(m->descriptor, &chakra_proto_msg__global_metadata__descriptor);
  assert_string_equal(((const chakra_metadata *)m)->version, "0.0.4");
  chakra_builder_free(b);
}

static void test_builder_metadata_and_several_messages_concatenate(void **state) {
  (void)state;
  chakra_builder *b;
  assert_int_equal(chakra_builder_new(&b), 0);
  chakra_builder_metadata(b, "0.0.4");
  chakra_builder_string(b, "schema", "1.0.2-chakra.0.0.4");
  assert_int_equal(chakra_builder_put(b, NULL), 0);
  chakra_builder_node(b, 0, "n", CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE);
  chakra_builder_int64(b, "comm_type", 0);
  assert_int_equal(chakra_builder_put(b, NULL), 0);
  assert_int_equal(chakra_builder_count(b), 2);

  chakra_attr s = full_attr("schema", CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL);
  s.string_val = "1.0.2-chakra.0.0.4";
  chakra_attr *sp = &s;
  ChakraProtoMsg__GlobalMetadata m = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
  m.version = "0.0.4", m.attr = &sp, m.n_attr = 1;
  chakra_attr c = full_attr("comm_type", CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL);
  chakra_attr *cp = &c;
  ChakraProtoMsg__Node nd = CHAKRA_PROTO_MSG__NODE__INIT;
  nd.name = "n", nd.type = CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE, nd.attr = &cp, nd.n_attr = 1;
  tu_buf want = {0};
  tu_put_msg(&want, &m.base);
  tu_put_msg(&want, &nd.base);
  size_t n;
  const uint8_t *p = chakra_builder_bytes(b, &n);
  assert_int_equal(n, want.n);
  assert_memory_equal(p, want.p, n);
  chakra_builder_clear(b);
  chakra_builder_bytes(b, &n);
  assert_int_equal(n, 0);
  assert_int_equal(chakra_builder_count(b), 0);
  tu_buf_free(&want);
  chakra_builder_free(b);
}

static void test_builder_put_without_a_message_is_refused(void **state) {
  (void)state;
  chakra_builder *b;
  assert_int_equal(chakra_builder_new(&b), 0);
  chakra_error err = {0};
  assert_int_equal(chakra_builder_put(b, &err), CHAKRA_EINVAL);
  assert_contains(err.msg, "no message");
  chakra_builder_free(b);
}

/* ---------------------------------------------------- workload writer */

static void test_rank_path_spelling(void **state) {
  (void)state;
  char buf[64];
  assert_int_equal(chakra_rank_path(buf, sizeof buf, "out/w", 4095), strlen("out/w.4095.et"));
  assert_string_equal(buf, "out/w.4095.et");
  char small[8];
  assert_int_equal(chakra_rank_path(small, sizeof small, "prefix", 12), strlen("prefix.12.et"));
  assert_string_equal(small, "prefix.");
  char *d = chakra_rank_path_dup("p", UINT32_MAX);
  assert_string_equal(d, "p.4294967295.et");
  free(d);
}

static void test_workload_writer_names_ranks_and_keeps_few_files_open(void **state) {
  (void)state;
  enum { RANKS = 40, NODES = 60 };
  char *prefix = tu_join(tu_dir, "w");
  chakra_workload_options opt = {.max_open = 2, .buffer_bytes = 4096};
  chakra_workload_writer *w;
  chakra_builder *b;
  chakra_error err = {0};
  size_t base = open_fds();
  assert_int_equal(chakra_workload_writer_open(&w, prefix, RANKS, &opt, &err), 0);
  assert_int_equal(chakra_builder_new(&b), 0);
  assert_string_equal(chakra_workload_writer_path(w, 7), tu_fmt("%s.7.et", prefix));
  for (uint32_t r = 0; r < RANKS; r++) {
    chakra_builder_metadata(b, "1.0.0");
    assert_int_equal(chakra_builder_put(b, NULL), 0);
    assert_int_equal(chakra_workload_writer_put_built(w, r, b, &err), 0);
    chakra_builder_clear(b);
  }
  size_t peak = 0;
  for (uint64_t k = 0; k < NODES; k++)
    for (uint32_t r = 0; r < RANKS; r++) { /* round robin: every rank spills again and again */
      build_node(b, k);
      assert_int_equal(chakra_workload_writer_put_built(w, r, b, &err), 0);
      chakra_builder_clear(b);
      size_t now = open_fds();
      if (now > peak) peak = now;
    }
  assert_true(peak <= base + 2);
  assert_true(tu_dir_count(tu_dir, NULL) > 0); /* temporaries; no final name yet */
  assert_false(tu_exists(tu_fmt("%s.0.et", prefix)));
  assert_int_equal(chakra_workload_writer_commit(w, &err), 0);
  assert_int_equal(tu_dir_count(tu_dir, NULL), RANKS);
  for (uint32_t r = 0; r < RANKS; r += 13) assert_int_equal(count_nodes(tu_fmt("%s.%u.et", prefix, r)), NODES);
  chakra_builder_free(b);
  free(prefix);
}

static void test_workload_writer_discard_after_spills_leaves_nothing(void **state) {
  (void)state;
  char *prefix = tu_join(tu_dir, "d");
  chakra_workload_options opt = {.max_open = 1, .buffer_bytes = 1024};
  chakra_workload_writer *w;
  chakra_builder *b;
  assert_int_equal(chakra_workload_writer_open(&w, prefix, 5, &opt, NULL), 0);
  assert_int_equal(chakra_builder_new(&b), 0);
  for (uint32_t r = 0; r < 5; r++) {
    chakra_builder_metadata(b, NULL);
    assert_int_equal(chakra_builder_put(b, NULL), 0);
    for (int k = 0; k < 30; k++) build_node(b, (uint64_t)k);
    assert_int_equal(chakra_workload_writer_put_built(w, r, b, NULL), 0);
    chakra_builder_clear(b);
  }
  assert_true(tu_dir_count(tu_dir, NULL) > 0);
  chakra_workload_writer_discard(w);
  assert_int_equal(tu_dir_count(tu_dir, NULL), 0);
  chakra_builder_free(b);
  free(prefix);
}

static void test_workload_writer_rank_without_metadata_fails_commit_leaving_nothing(void **state) {
  (void)state;
  char *prefix = tu_join(tu_dir, "m");
  chakra_workload_writer *w;
  chakra_error err = {0};
  assert_int_equal(chakra_workload_writer_open(&w, prefix, 3, NULL, &err), 0);
  ChakraProtoMsg__GlobalMetadata m = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
  assert_int_equal(chakra_workload_writer_put(w, 0, &m.base, &err), 0);
  assert_int_equal(chakra_workload_writer_put(w, 2, &m.base, &err), 0);
  assert_int_equal(chakra_workload_writer_commit(w, &err), CHAKRA_EINVAL);
  assert_contains(err.msg, "m.1.et");
  assert_int_equal(tu_dir_count(tu_dir, NULL), 0);
  free(prefix);
}

static void test_workload_writer_refuses_misordered_and_oversized_messages(void **state) {
  (void)state;
  char *prefix = tu_join(tu_dir, "o");
  chakra_workload_writer *w;
  chakra_builder *b;
  chakra_error err = {0};
  assert_int_equal(chakra_builder_new(&b), 0);
  /* a Node first */
  assert_int_equal(chakra_workload_writer_open(&w, prefix, 2, NULL, &err), 0);
  build_node(b, 1);
  assert_int_equal(chakra_workload_writer_put_built(w, 0, b, &err), CHAKRA_EINVAL);
  assert_contains(err.msg, "GlobalMetadata");
  /* after a failure only discard or a failing commit */
  ChakraProtoMsg__GlobalMetadata m = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
  assert_int_not_equal(chakra_workload_writer_put(w, 1, &m.base, &err), 0);
  chakra_workload_writer_discard(w);
  /* a message above CHAKRA_DEFAULT_MAX_MESSAGE: refused before its bytes are read */
  assert_int_equal(chakra_workload_writer_open(&w, prefix, 1, NULL, &err), 0);
  assert_int_equal(chakra_workload_writer_put(w, 0, &m.base, &err), 0);
  static const uint8_t one = 0;
  assert_int_equal(chakra_workload_writer_put_raw(w, 0, &one, (size_t)CHAKRA_DEFAULT_MAX_MESSAGE + 1, &err),
                   CHAKRA_EINVAL);
  assert_contains(err.msg, "exceeds the limit");
  assert_int_equal(chakra_workload_writer_commit(w, &err), CHAKRA_EINVAL);
  /* a rank outside the workload */
  assert_int_equal(chakra_workload_writer_open(&w, prefix, 1, NULL, &err), 0);
  assert_int_equal(chakra_workload_writer_put(w, 1, &m.base, &err), CHAKRA_EINVAL);
  chakra_workload_writer_discard(w);
  assert_int_equal(tu_dir_count(tu_dir, NULL), 0);
  chakra_builder_free(b);
  free(prefix);
}

static void test_workload_writer_failed_rename_removes_the_ranks_already_renamed(void **state) {
  (void)state;
  char *prefix = tu_join(tu_dir, "r");
  chakra_workload_options opt = {.max_open = 1, .buffer_bytes = 1};
  chakra_workload_writer *w;
  chakra_error err = {0};
  assert_int_equal(chakra_workload_writer_open(&w, prefix, 4, &opt, &err), 0);
  ChakraProtoMsg__GlobalMetadata m = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
  m.version = "1.0.0";
  for (uint32_t r = 0; r < 4; r++) assert_int_equal(chakra_workload_writer_put(w, r, &m.base, &err), 0);
  /* every rank has a temporary now; rank 2's name becomes a non-empty folder */
  const char *dir = tu_fmt("%s.2.et", prefix);
  char *d2 = strdup(dir);
  assert_int_equal(mkdir(d2, 0777), 0);
  char *keep = tu_join(d2, "keep");
  tu_write_text(keep, "x");
  free(keep);
  assert_int_not_equal(chakra_workload_writer_commit(w, &err), 0);
  assert_contains(err.msg, "r.2.et");
  assert_int_equal(tu_dir_count(tu_dir, NULL), 1); /* the folder only: ranks 0 and 1 went again */
  assert_false(tu_exists(tu_fmt("%s.0.et", prefix)));
  free(d2);
  free(prefix);
}

/* ---------------------------------------------- ranks on several threads */

/* Descriptors open now, counted without opening one (threads call it). */
static size_t fds_now(void) {
  size_t n = 0;
  for (int fd = 0; fd < 1024; fd++) n += fcntl(fd, F_GETFD) != -1;
  return n;
}

typedef struct pjob {
  unsigned threads;
  uint32_t fail_a, fail_b; /* ranks whose maker fails (UINT32_MAX = none) */
  uint32_t oversize;       /* rank that puts a message above the limit */
  atomic_size_t peak;
} pjob;

static void note_fds(pjob *j) {
  size_t now = fds_now(), cur = atomic_load(&j->peak);
  while (now > cur && !atomic_compare_exchange_weak(&j->peak, &cur, now)) {
  }
}

/* Rank r: its metadata, then rounds of nodes through every kind of put
 * (small ones that collect, blocks above the direct-write size, a flush
 * in the middle), so that budget spills, parking and reopening all happen
 * while other threads write. No cmocka assertion here: failures return. */
static int make_rank(void *ctx, unsigned worker, uint32_t r, chakra_workload_writer *w, chakra_error *err) {
  pjob *j = ctx;
  if (worker >= j->threads) return chakra_error_set(err, CHAKRA_EINVAL, "worker %u of %u threads", worker, j->threads);
  if (r == j->fail_a || r == j->fail_b) return chakra_error_set(err, CHAKRA_EINVAL, "rank %u refuses", r);
  chakra_builder *b;
  if (chakra_builder_new(&b)) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  chakra_builder_metadata(b, "1.0.0");
  int rc = chakra_builder_put(b, err);
  if (!rc) rc = chakra_workload_writer_put_built(w, r, b, err);
  uint64_t id = 0;
  for (int round = 0; !rc && round < 4; round++) {
    chakra_builder_clear(b);
    unsigned nodes = r % 7 == 0 && round == 1 ? 900 : (r % 5 + 1) * 8; /* 900 nodes: about 90 KB */
    for (unsigned k = 0; k < nodes && !rc; k++) {
      chakra_builder_node(b, ++id, "COMP_NODE_layer_FWD", CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE);
      chakra_builder_uint64(b, "rank", r);
      rc = chakra_builder_put(b, err);
    }
    if (!rc && round % 2) rc = chakra_workload_writer_put_built(w, r, b, err);
    else if (!rc) {
      size_t len;
      const uint8_t *p = chakra_builder_bytes(b, &len);
      rc = chakra_workload_writer_put_framed(w, r, p, len, err);
    }
    if (!rc && r == j->oversize && round == 2) {
      static const uint8_t one = 0;
      rc = chakra_workload_writer_put_raw(w, r, &one, (size_t)CHAKRA_DEFAULT_MAX_MESSAGE + 1, err);
    }
    if (!rc && r % 3 == 0 && round == 2) rc = chakra_workload_writer_flush_rank(w, r, err);
    note_fds(j);
  }
  chakra_builder_free(b);
  return rc;
}

/* Makes RANKS ranks under prefix on `threads` threads; returns the status. */
static int make_workload(const char *prefix, unsigned threads, pjob *j, chakra_error *err) {
  enum { RANKS = 37 };
  chakra_workload_options opt = {.max_open = 2, .buffer_bytes = 8192};
  chakra_workload_writer *w;
  j->threads = threads;
  atomic_init(&j->peak, 0);
  assert_int_equal(chakra_workload_writer_open(&w, prefix, RANKS, &opt, err), 0);
  int rc = chakra_workload_writer_put_ranks(w, threads, make_rank, j, err);
  if (rc) {
    chakra_workload_writer_discard(w);
    return rc;
  }
  return chakra_workload_writer_commit(w, err);
}

static void test_ranks_on_threads_give_the_same_bytes_within_the_descriptor_cap(void **state) {
  (void)state;
  chakra_error err = {0};
  size_t base = fds_now();
  const unsigned counts[] = {1, 2, 4, 7};
  for (size_t t = 0; t < sizeof counts / sizeof counts[0]; t++) {
    pjob j = {.fail_a = UINT32_MAX, .fail_b = UINT32_MAX, .oversize = UINT32_MAX};
    char *prefix = tu_join(tu_dir, tu_fmt("t%u", counts[t]));
    assert_int_equal(make_workload(prefix, counts[t], &j, &err), 0);
    assert_true(atomic_load(&j.peak) <= base + 2); /* max_open, whatever the thread count */
    free(prefix);
  }
  assert_int_equal(tu_dir_count(tu_dir, NULL), 4 * 37); /* no temporaries left */
  for (uint32_t r = 0; r < 37; r++) {
    size_t n1, nk;
    uint8_t *one = tu_read_file(tu_fmt("%s/t1.%u.et", tu_dir, r), &n1);
    assert_true(n1 > 0);
    for (size_t t = 1; t < 4; t++) {
      uint8_t *other = tu_read_file(tu_fmt("%s/t%u.%u.et", tu_dir, counts[t], r), &nk);
      assert_int_equal(nk, n1);
      assert_memory_equal(other, one, n1);
      free(other);
    }
    free(one);
  }
  assert_int_equal(count_nodes(tu_fmt("%s/t4.7.et", tu_dir)), 3 * 24 + 900); /* rank 7: 24 nodes a round, 900 in round 1 */
}

static void test_ranks_on_threads_report_the_lowest_failing_rank_and_leave_nothing(void **state) {
  (void)state;
  for (unsigned threads = 1; threads <= 4; threads += 3) {
    chakra_error err = {0};
    pjob j = {.fail_a = 5, .fail_b = 20, .oversize = UINT32_MAX};
    char *prefix = tu_join(tu_dir, "f");
    assert_int_equal(make_workload(prefix, threads, &j, &err), CHAKRA_EINVAL);
    assert_contains(err.msg, "rank 5 refuses");
    assert_int_equal(tu_dir_count(tu_dir, NULL), 0);
    /* a failure inside the writer names the rank's file */
    j = (pjob){.fail_a = UINT32_MAX, .fail_b = UINT32_MAX, .oversize = 3};
    assert_int_equal(make_workload(prefix, threads, &j, &err), CHAKRA_EINVAL);
    assert_contains(err.msg, "f.3.et");
    assert_contains(err.msg, "exceeds the limit");
    assert_int_equal(tu_dir_count(tu_dir, NULL), 0);
    free(prefix);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_builder_packs_every_attribute_kind_like_protobuf_c),
      cmocka_unit_test(test_builder_message_is_what_put_writes),
      cmocka_unit_test(test_builder_metadata_and_several_messages_concatenate),
      cmocka_unit_test(test_builder_put_without_a_message_is_refused),
      cmocka_unit_test(test_rank_path_spelling),
      cmocka_unit_test_setup_teardown(test_workload_writer_names_ranks_and_keeps_few_files_open, tu_dir_setup,
                                      tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_workload_writer_discard_after_spills_leaves_nothing, tu_dir_setup,
                                      tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_workload_writer_rank_without_metadata_fails_commit_leaving_nothing,
                                      tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_workload_writer_refuses_misordered_and_oversized_messages, tu_dir_setup,
                                      tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_ranks_on_threads_give_the_same_bytes_within_the_descriptor_cap,
                                      tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_ranks_on_threads_report_the_lowest_failing_rank_and_leave_nothing,
                                      tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_workload_writer_failed_rename_removes_the_ranks_already_renamed,
                                      tu_dir_setup, tu_dir_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
