/* test_ingest.c - unit tests of the ingest subsystem without ../shared:
 * Python repr of JSON values, the host ET reader (both layouts, tensor
 * sizes, errors, parallel parsing), the PyTorch converter's typing and
 * dependency rules on small hand-written linked traces, and the text
 * workload converter. Expected values are Python's own repr() output and
 * the rules of spec pytorch-ingest.md, not earlier runs of this code. */
#include <math.h>
#include <stdio.h>

#include "chakra/ingest.h"
#include "hostet.h"
#include "ingest_testutil.h"
#include "pyrepr.h"

/* ------------------------------------------------------------- repr */

static const char *repr_str(const char *s) {
  static char out[256];
  strbuf b = {0};
  pyrepr_str(&b, (const unsigned char *)s, strlen(s));
  snprintf(out, sizeof out, "%.*s", (int)b.n, b.s);
  strbuf_free(&b);
  return out;
}

static const char *repr_num(const char *s) {
  static char out[64];
  strbuf b = {0};
  pyrepr_number(&b, s, strlen(s));
  snprintf(out, sizeof out, "%.*s", (int)b.n, b.s);
  strbuf_free(&b);
  return out;
}

static void test_pyrepr_strings_match_python(void **state) {
  (void)state;
  /* expected: Python 3 repr() of the same strings */
  assert_string_equal(repr_str("cpu"), "'cpu'");
  assert_string_equal(repr_str("it's"), "\"it's\"");
  assert_string_equal(repr_str("say \"hi\""), "'say \"hi\"'");
  assert_string_equal(repr_str("both ' and \""), "'both \\' and \"'");
  assert_string_equal(repr_str("tab\there"), "'tab\\there'");
  assert_string_equal(repr_str("nl\nx"), "'nl\\nx'");
  assert_string_equal(repr_str("back\\slash"), "'back\\\\slash'");
  assert_string_equal(repr_str("\x01\x7f"), "'\\x01\\x7f'");
  assert_string_equal(repr_str("caf\xc3\xa9"), "'caf\xc3\xa9'");
  assert_string_equal(repr_str("\xc2\xa0nbsp"), "'\\xa0nbsp'");
  assert_string_equal(repr_str("\xc2\x85" "c1"), "'\\x85c1'");
  assert_string_equal(repr_str("\xe2\x80\xa8ls"), "'\\u2028ls'");
  assert_string_equal(repr_str("\xf0\x9f\x98\x80"), "'\xf0\x9f\x98\x80'");
  assert_string_equal(repr_str("\xee\x80\x80pua"), "'\\ue000pua'");
  /* the process-group list the reference stores in a METADATA node */
  assert_string_equal(repr_str("[{\"pg_name\": \"0\"}]"), "'[{\"pg_name\": \"0\"}]'");
}

static void test_pyrepr_numbers_match_python(void **state) {
  (void)state;
  assert_string_equal(repr_num("0"), "0");
  assert_string_equal(repr_num("-0"), "0");
  assert_string_equal(repr_num("12345678901234567890123"), "12345678901234567890123");
  assert_string_equal(repr_num("0.0"), "0.0");
  assert_string_equal(repr_num("0.000000"), "0.0");
  assert_string_equal(repr_num("-0.0"), "-0.0");
  assert_string_equal(repr_num("1.0"), "1.0");
  assert_string_equal(repr_num("1e-05"), "1e-05");
  assert_string_equal(repr_num("0.0001"), "0.0001");
  assert_string_equal(repr_num("1E16"), "1e+16");
  assert_string_equal(repr_num("15000000000000000.0"), "1.5e+16");
  assert_string_equal(repr_num("123.456"), "123.456");
  assert_string_equal(repr_num("1e22"), "1e+22");
  assert_string_equal(repr_num("2.5e-7"), "2.5e-07");
  assert_string_equal(repr_num("100.0"), "100.0");
  assert_string_equal(repr_num("1234567890123456.0"), "1234567890123456.0");
  assert_string_equal(repr_num("12345678901234567.0"), "1.2345678901234568e+16");
  assert_string_equal(repr_num("0.1"), "0.1");
  assert_string_equal(repr_num("0.3333333333333333"), "0.3333333333333333");
  assert_string_equal(repr_num("1e999"), "inf");
}

/* -------------------------------------------------------- host ET reader */

static const char *ATTRS(int rf) {
  static char b[512];
  snprintf(b, sizeof b,
           "\"attrs\":[{\"name\":\"rf_id\",\"type\":\"uint64\",\"value\":%d},{\"name\":\"fw_parent\",\"type\":\"uint64\","
           "\"value\":0},{\"name\":\"seq_id\",\"type\":\"int64\",\"value\":-1},{\"name\":\"scope\",\"type\":\"uint64\","
           "\"value\":0},{\"name\":\"tid\",\"type\":\"uint64\",\"value\":1},{\"name\":\"fw_tid\",\"type\":\"uint64\","
           "\"value\":0},{\"name\":\"op_schema\",\"type\":\"string\",\"value\":\"\"}]",
           rf);
  return b;
}

#define EMPTY_IO "{\"values\":[],\"shapes\":[],\"types\":[]}"

static hostet *read_host(const char *path, int mode, int versions, int threads, chakra_error *err) {
  hostet_options o = {.mode = mode, .versions = versions, .threads = threads};
  hostet *h = NULL;
  if (hostet_read(&h, path, &o, err)) return NULL;
  return h;
}

static void test_hostet_reads_both_layouts(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  char *flat = tu_join(dir, "flat.json"), *nested = tu_join(dir, "nested.json");
  tu_write_text(flat,
           "{\"schema\":\"1.0.1\",\"pid\":7,\"time\":\"t\",\"start_ts\":1,\"nodes\":["
           "{\"name\":\"aten::add\",\"id\":5,\"rf_id\":3,\"parent\":2,\"fw_parent\":0,\"seq_id\":-1,\"scope\":0,"
           "\"tid\":1,\"fw_tid\":0,\"op_schema\":\"s\",\"inputs\":[[6,7,0,4,8,\"cuda:0\"],1],\"input_shapes\":[[4],[]],"
           "\"input_types\":[\"Tensor(double)\",\"Int\"],\"outputs\":[],\"output_shapes\":[],\"output_types\":[]}"
           "],\"finish_ts\":2}");
  char buf[4096];
  snprintf(buf, sizeof buf,
           "{\"schema\":\"1.1.1-chakra.1.0.0\",\"pid\":7,\"time\":\"t\",\"start_ts\":1,\"nodes\":["
           "{\"id\":5,\"name\":\"aten::add\",\"ctrl_deps\":2,\"inputs\":{\"values\":[[6,7,0,4,8,\"cuda:0\"],1],"
           "\"shapes\":[[4],[]],\"types\":[\"Tensor(double)\",\"Int\"],\"strides\":[[1],[]]},\"outputs\":" EMPTY_IO
           ",%s}],\"finish_ts\":2}",
           ATTRS(3));
  tu_write_text(nested, buf);
  chakra_error err = {0};
  hostet *a = read_host(flat, HT_MODE_CONVERT, HT_VERSIONS_KNOWN, 1, &err);
  if (!a) fail_msg("%s", err.msg);
  hostet *b = read_host(nested, HT_MODE_CONVERT, HT_VERSIONS_KNOWN, 1, &err);
  if (!b) fail_msg("%s", err.msg);
  assert_int_equal(a->n, 1);
  assert_int_equal(b->n, 1);
  const ht_node *x = &a->nodes[0], *y = &b->nodes[0];
  assert_int_equal(x->id, 5);
  assert_int_equal(x->parent, 2);
  assert_int_equal(y->parent, 2);
  assert_true(x->flags & HT_FLAT);
  assert_false(y->flags & HT_FLAT);
  assert_int_equal(x->a[HT_A_RF_ID], 3);
  assert_int_equal(y->a[HT_A_RF_ID], 3);
  assert_int_equal(x->a[HT_A_SEQ_ID], -1);
  /* 4 doubles of 8 bytes */
  assert_int_equal(x->comm_bytes, 32);
  assert_int_equal(y->comm_bytes, 32);
  /* the same IOInfo texts whatever the layout (strides are not kept) */
  assert_int_equal(x->blob_len, y->blob_len);
  assert_memory_equal(x->blob, y->blob, x->blob_len);
  hostet_free(a);
  hostet_free(b);
  tu_rmtree(dir);
  free(dir), free(flat), free(nested);
}

static void test_hostet_sizes_tensor_lists(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  char *p = tu_join(dir, "h.json");
  char buf[4096];
  /* GenericList[Tensor] of two tensors, a nested list of tensors, a tensor
   * typed as something else (not counted), an optional tensor given as None */
  snprintf(buf, sizeof buf,
           "{\"schema\":\"1.0.2-chakra.0.0.4\",\"nodes\":[{\"id\":3,\"name\":\"x\",\"ctrl_deps\":1,\"inputs\":{"
           "\"values\":[[[1,2,0,10,4,\"cuda:0\"],[3,4,0,5,2,\"cuda:0\"]],[[[5,6,0,3,8,\"cpu\"]]],[7,8,0,100,4,\"cpu\"],"
           "\"<None>\"],\"shapes\":[],\"types\":[\"GenericList[Tensor(float),Tensor(half)]\","
           "\"GenericList[GenericList[Tensor(double)]]\",\"Int\",\"Tensor(float)\"]},\"outputs\":" EMPTY_IO ",%s}]}",
           ATTRS(1));
  tu_write_text(p, buf);
  chakra_error err = {0};
  hostet *h = read_host(p, HT_MODE_CONVERT, HT_VERSIONS_KNOWN, 1, &err);
  if (!h) fail_msg("%s", err.msg);
  assert_int_equal(h->nodes[0].comm_bytes, 10 * 4 + 5 * 2 + 3 * 8);
  hostet_free(h);
  tu_rmtree(dir);
  free(dir), free(p);
}

static void expect_error(const char *json, int versions, const char *needle1, const char *needle2) {
  char *dir = tu_mkdtemp();
  char *p = tu_join(dir, "bad.json");
  tu_write_text(p, json);
  chakra_error err = {0};
  hostet *h = read_host(p, HT_MODE_CONVERT, versions, 1, &err);
  if (h) fail_msg("expected an error for %s", json);
  assert_contains(err.msg, p);
  assert_contains(err.msg, needle1);
  if (needle2) assert_contains(err.msg, needle2);
  assert_null(strchr(err.msg, '\n'));
  tu_rmtree(dir);
  free(dir), free(p);
}

static void test_hostet_errors_name_file_and_place(void **state) {
  (void)state;
  expect_error("{\"schema\":\"1.0.0\",\"nodes\":[]}", HT_VERSIONS_KNOWN, "unsupported host ET schema version '1.0.0'",
               "1.0.1, 1.0.2-chakra.0.0.4, 1.0.3-chakra.0.0.4, 1.1.0-chakra.0.0.4, 1.1.1-chakra.0.0.4, 1.1.1-chakra.1.0.0");
  expect_error("{\"schema\":\"1.0.1\",\"nodes\":[]}", HT_VERSIONS_REFERENCE, "not read by the reference converter", NULL);
  expect_error("{\"schema\":\"1.0.2-chakra.0.0.4\",\"nodes\":[{\"id\":9,\"name\":\"n\",\"ctrl_deps\":1,"
               "\"outputs\":" EMPTY_IO "}]}",
               HT_VERSIONS_KNOWN, "node 9 (byte 40)", "missing 'inputs'");
  expect_error("{\"schema\":\"1.0.2-chakra.0.0.4\",\"nodes\":[{\"id\":\"9\"}]}", HT_VERSIONS_KNOWN, "'id' is not a non-negative integer", NULL);
  expect_error("{\"schema\":\"1.0.2-chakra.0.0.4\",\"nodes\":[{\"id\":9,\"name\":\"n\",\"ctrl_deps\":1,\"inputs\":{\"values\":[1,}",
               HT_VERSIONS_KNOWN, "invalid JSON", "in node 9");
  expect_error("{\"schema\":\"1.0.2-chakra.0.0.4\",\"nodes\":[", HT_VERSIONS_KNOWN, "byte 40", "invalid JSON");
  expect_error("{\"nodes\":[]}", HT_VERSIONS_KNOWN, "no 'schema'", NULL);
  expect_error("[1,2]", HT_VERSIONS_KNOWN, "not a host ET object", NULL);
  expect_error("", HT_VERSIONS_KNOWN, "empty file", NULL);
}

static void test_hostet_newer_schema_is_read_with_a_warning(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  char *p = tu_join(dir, "h.json");
  tu_write_text(p, "{\"schema\":\"1.2.0-chakra.0.0.4\",\"nodes\":[]}");
  chakra_error err = {0};
  tu_lines warnings = {0};
  hostet_options o = {.mode = HT_MODE_CONVERT, .versions = HT_VERSIONS_NEWER_OK, .threads = 1,
                      .diag = tu_collect_line, .diag_ctx = &warnings};
  hostet *h = NULL;
  if (hostet_read(&h, p, &o, &err)) fail_msg("%s", err.msg);
  assert_true(h->newer_schema);
  assert_int_equal(warnings.n, 1);
  assert_contains(warnings.line[0], p);
  assert_contains(warnings.line[0], "schema '1.2.0-chakra.0.0.4' is newer than this version of chakra knows");
  hostet_free(h);
  assert_null(read_host(p, HT_MODE_CONVERT, HT_VERSIONS_KNOWN, 1, &err));
  tu_rmtree(dir);
  free(dir), free(p);
}

/* A file big enough to be split: the parallel parse must give exactly the
 * records of the sequential one, also when a node's string contains what
 * looks like a node boundary. */
static void test_hostet_parallel_parse_equals_sequential(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  char *p = tu_join(dir, "big.json");
  FILE *f = fopen(p, "w");
  fputs("{\"schema\":\"1.0.2-chakra.0.0.4\",\"pid\":1,\"time\":\"t\",\"start_ts\":1,\"nodes\":[\n", f);
  int n = 60000;
  for (int i = 0; i < n; i++) {
    /* every 7th node carries a string with "},\n{" in it */
    fprintf(f,
            "%s  {\"id\":%d,\"name\":\"op%d\",\"ctrl_deps\":%d,\"inputs\":{\"values\":[[%d,1,0,%d,4,\"cuda:0\"],\"%s\"],"
            "\"shapes\":[[%d],[]],\"types\":[\"Tensor(float)\",\"String\"]},\"outputs\":" EMPTY_IO ",%s}",
            i ? ",\n" : "", i + 2, i % 13, i ? 2 : 1, i, i % 100, i % 7 ? "x" : "a},\\n{b", i % 100, ATTRS(i));
  }
  fputs("\n],\"finish_ts\":2}\n", f);
  fclose(f);
  chakra_error err = {0};
  hostet *a = read_host(p, HT_MODE_CONVERT, HT_VERSIONS_KNOWN, 1, &err);
  if (!a) fail_msg("%s", err.msg);
  hostet *b = read_host(p, HT_MODE_CONVERT, HT_VERSIONS_KNOWN, 4, &err);
  if (!b) fail_msg("%s", err.msg);
  assert_int_equal(a->segments, 1);
  assert_true(b->segments > 1);
  assert_int_equal(a->n, (size_t)n);
  assert_int_equal(b->n, (size_t)n);
  assert_true(b->has_finish_ts);
  for (int i = 0; i < n; i++) {
    const ht_node *x = &a->nodes[i], *y = &b->nodes[i];
    assert_int_equal(x->id, y->id);
    assert_int_equal(x->parent, y->parent);
    assert_int_equal(x->offset, y->offset);
    assert_int_equal(x->comm_bytes, y->comm_bytes);
    assert_int_equal(x->a[HT_A_RF_ID], y->a[HT_A_RF_ID]);
    assert_string_equal(strtab_str(&a->strings, x->name), strtab_str(&b->strings, y->name));
    assert_int_equal(x->blob_len, y->blob_len);
    assert_memory_equal(x->blob, y->blob, x->blob_len);
  }
  hostet_free(a);
  hostet_free(b);
  tu_rmtree(dir);
  free(dir), free(p);
}

/* ------------------------------------------------------ convert pytorch */

/* One host op of a linked trace. */
static void op(FILE *f, int *first, int id, const char *name, int parent, const char *values, const char *types,
               const char *extra) {
  fprintf(f, "%s{\"id\":%d,\"name\":\"%s\",\"ctrl_deps\":%d,\"inputs\":{\"values\":%s,\"shapes\":[],\"types\":%s},"
             "\"outputs\":" EMPTY_IO ",%s%s%s}",
          *first ? "" : ",\n", id, name, parent, values, types, ATTRS(id), extra ? "," : "", extra ? extra : "");
  *first = 0;
}

#define T1 "[[1,2,0,256,4,\"cuda:0\"]]"
#define TT "[\"Tensor(float)\"]"

/* rank 0 of a 2-rank job: an all-gather, a send to rank 1, two compute
 * kernels on another stream, a host op that synchronised */
static void write_linked(const char *path) {
  FILE *f = fopen(path, "w");
  int first = 1;
  fputs("{\"schema\":\"1.0.2-chakra.0.0.4\",\"pid\":1,\"time\":\"t\",\"start_ts\":1,\"finish_ts\":2,\"nodes\":[\n", f);
  op(f, &first, 1, "[pytorch|profiler|execution_trace|process]", 1, "[]", "[]", NULL);
  op(f, &first, 2, "[pytorch|profiler|execution_trace|thread]", 1, "[]", "[]", NULL);
  op(f, &first, 3, "## process_group:init ##", 2,
     "[\"[{\\\"pg_name\\\": \\\"0\\\", \\\"backend_id\\\": 77, \\\"ranks\\\": [], \\\"group_size\\\": 2}, "
     "{\\\"pg_name\\\": \\\"5\\\", \\\"backend_id\\\": 99, \\\"ranks\\\": [1, 0], \\\"group_size\\\": 2}]\"]",
     "[\"String\"]", "\"ts\":10,\"exclusive_dur\":1");
  op(f, &first, 4, "c10d::allgather_", 2, T1, TT, "\"ts\":20,\"exclusive_dur\":2");
  op(f, &first, 5, "record_param_comms", 4, "[" T1 ",12,77,0,\"all_gather\",[],[],2]",
     "[\"GenericList[Tensor(float)]\",\"Int\",\"Int\",\"Int\",\"String\",\"GenericList[]\",\"GenericList[]\",\"Int\"]",
     "\"ts\":21,\"exclusive_dur\":1");
  op(f, &first, 6, "nccl:all_gather", 5, T1, TT, "\"ts\":22,\"exclusive_dur\":3.5");
  op(f, &first, 7, "ncclDevKernel_AllGather_RING_LL", 6, T1, TT,
     "\"cat\":\"kernel\",\"ph\":\"X\",\"ts\":30,\"exclusive_dur\":40,\"stream\":20,\"device\":0");
  op(f, &first, 8, "c10d::send", 2, T1, TT, "\"ts\":50,\"exclusive_dur\":2");
  /* peer 0 within group "5" (ranks [1, 0]) is global rank 1 */
  op(f, &first, 9, "record_param_comms", 8, "[" T1 ",13,99,0,\"send\",[],[],2]",
     "[\"GenericList[Tensor(float)]\",\"Int\",\"Int\",\"Int\",\"String\",\"GenericList[]\",\"GenericList[]\",\"Int\"]",
     "\"ts\":51,\"exclusive_dur\":1");
  op(f, &first, 10, "ncclDevKernel_SendRecv", 9, "[" T1 ",13,99,0,\"send\",[],[],2]",
     "[\"GenericList[Tensor(float)]\",\"Int\",\"Int\",\"Int\",\"String\",\"GenericList[]\",\"GenericList[]\",\"Int\"]",
     "\"cat\":\"kernel\",\"ph\":\"X\",\"ts\":60,\"exclusive_dur\":10,\"stream\":20,\"device\":0");
  op(f, &first, 11, "aten::mul", 2, T1, TT, "\"ts\":70,\"exclusive_dur\":5,\"note\":\"fast\",\"list\":[1,2]");
  op(f, &first, 12, "void mul_kernel", 11, T1, TT, "\"cat\":\"kernel\",\"ph\":\"X\",\"ts\":80,\"exclusive_dur\":7,\"stream\":7,\"device\":0");
  op(f, &first, 13, "aten::add", 2, T1, TT, "\"ts\":75,\"exclusive_dur\":5");
  op(f, &first, 14, "void add_kernel", 13, T1, TT, "\"cat\":\"kernel\",\"ph\":\"X\",\"ts\":90,\"exclusive_dur\":0.4,\"stream\":7,\"device\":0");
  /* waited for the add kernel (sync_dep 14); sync_dep 7 started after
   * nothing: 7 began at 30 < 100, kept too */
  op(f, &first, 15, "aten::item", 2, T1, TT, "\"ts\":100,\"exclusive_dur\":1,\"sync_dep\":[14,7]");
  fputs("\n]}\n", f);
  fclose(f);
}

typedef struct membuf {
  uint8_t *p;
  size_t n;
} membuf;

static int append(void *ctx, const void *data, size_t len) {
  membuf *b = ctx;
  b->p = realloc(b->p, b->n + len);
  if (!b->p) return -1;
  memcpy(b->p + b->n, data, len);
  b->n += len;
  return 0;
}

/* convert from a host ET in memory to a callback writes what the file
 * form writes, byte for byte (one thread or several). */
static void test_convert_from_memory_to_a_callback(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  char *in = tu_join(dir, "r0.json"), *out = tu_join(dir, "r0.et");
  write_linked(in);
  chakra_convert_options o = {.threads = 1};
  chakra_error err = {0};
  if (chakra_convert_pytorch(in, NULL, out, &o, NULL, &err)) fail_msg("%s", err.msg);
  size_t want_n, host_n;
  uint8_t *want = tu_read_file(out, &want_n), *host = tu_read_file(in, &host_n);
  for (int threads = 1; threads <= 4; threads += 3) {
    membuf got = {0};
    chakra_input src = {.data = host, .size = host_n, .name = "host in memory"};
    chakra_sink dst = {.write = append, .ctx = &got};
    o.threads = threads;
    chakra_convert_report rep;
    if (chakra_convert_pytorch_io(&src, &dst, &o, &rep, &err)) fail_msg("%s", err.msg);
    assert_int_equal(got.n, want_n);
    assert_memory_equal(got.p, want, want_n);
    assert_int_equal(rep.nodes_out, 14);
    free(got.p);
  }
  chakra_input cut = {.data = host, .size = host_n / 2, .name = "half a host ET"};
  membuf none = {0};
  chakra_sink dst = {.write = append, .ctx = &none};
  assert_int_not_equal(chakra_convert_pytorch_io(&cut, &dst, &o, NULL, &err), 0);
  assert_contains(err.msg, "half a host ET");
  free(none.p), free(want), free(host);
  tu_rmtree(dir);
  free(in), free(out), free(dir);
}

static void test_convert_types_collectives_and_p2p(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  char *in = tu_join(dir, "r0.json"), *out = tu_join(dir, "r0.et"), *groups = tu_join(dir, "g.json");
  write_linked(in);
  chakra_convert_options o = {.comm_groups_path = groups};
  chakra_convert_report rep;
  chakra_error err = {0};
  if (chakra_convert_pytorch(in, NULL, out, &o, &rep, &err)) fail_msg("%s", err.msg);
  it_trace t = it_load(out);
  /* the process root has no dependencies either way and is dropped */
  assert_int_equal(t.n, 14);
  assert_int_equal(rep.coll, 1);
  assert_int_equal(rep.send, 1);
  assert_int_equal(rep.metadata, 1);
  const chakra_node *ag = it_by_id(&t, 7), *snd = it_by_id(&t, 10), *mulk = it_by_id(&t, 12), *addk = it_by_id(&t, 14);
  assert_int_equal(ag->type, CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE);
  assert_int_equal(it_attr_int(ag, "comm_type"), CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_GATHER);
  /* bytes of the launching op's input tensors: 256 floats */
  assert_int_equal(it_attr_int(ag, "comm_size"), 1024);
  /* found through record_param_comms' process-group id 77 -> "0" */
  assert_string_equal(chakra_attr_find(ag, "pg_name")->string_val, "0");
  assert_int_equal(it_attr_int(ag, "is_cpu_op"), 0);
  assert_int_equal(snd->type, CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE);
  assert_int_equal(it_attr_int(snd, "comm_dst"), 1);
  assert_int_equal(it_attr_int(snd, "comm_tag"), 0);
  assert_string_equal(chakra_attr_find(snd, "pg_name")->string_val, "5");
  /* device ops: on their launcher, and on the previous op of their stream */
  assert_true(it_has_dep(snd, 9));
  assert_true(it_has_dep(snd, 7)); /* stream 20: the all-gather before it */
  assert_true(it_has_dep(addk, 13));
  assert_true(it_has_dep(addk, 12)); /* stream 7 */
  assert_false(it_has_dep(mulk, 10));
  /* host ops: one chain in start order; the synchronising op waits for both */
  const chakra_node *item = it_by_id(&t, 15);
  assert_true(it_has_dep(item, 13));
  assert_true(it_has_dep(item, 14));
  assert_true(it_has_dep(item, 7));
  /* durations: whole microseconds, exact value in duration_ns */
  assert_int_equal(it_by_id(&t, 6)->duration_micros, 3);
  assert_int_equal(it_attr_int(it_by_id(&t, 6), "duration_ns"), 3500);
  assert_int_equal(addk->duration_micros, 0);
  assert_int_equal(it_attr_int(addk, "duration_ns"), 400);
  assert_int_equal(it_by_id(&t, 13)->start_time_micros, 75);
  /* stream only on device ops; ctrl deps on the parent */
  assert_null(chakra_attr_find(it_by_id(&t, 13), "stream"));
  assert_int_equal(it_attr_int(addk, "stream"), 7);
  assert_int_equal(it_by_id(&t, 6)->n_ctrl_deps, 1);
  assert_int_equal(it_by_id(&t, 6)->ctrl_deps[0], 5);
  /* unknown scalar members are kept as attributes, lists are not */
  assert_string_equal(chakra_attr_find(it_by_id(&t, 11), "note")->string_val, "fast");
  assert_null(chakra_attr_find(it_by_id(&t, 11), "list"));
  it_free(&t);
  /* the comm-group file: group "5" (the default group "0" is all ranks) */
  char *g = tu_read_text(groups, NULL);
  assert_string_equal(g, "{\"5\": [1, 0]}\n");
  free(g);
  tu_rmtree(dir);
  free(dir), free(in), free(out), free(groups);
}

static void test_convert_compat_keeps_reference_rules(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  char *in = tu_join(dir, "r0.json"), *out = tu_join(dir, "r0.et");
  write_linked(in);
  chakra_convert_options o = {.compat = 1};
  chakra_error err = {0};
  if (chakra_convert_pytorch(in, NULL, out, &o, NULL, &err)) fail_msg("%s", err.msg);
  it_trace t = it_load(out);
  const chakra_node *snd = it_by_id(&t, 10), *addk = it_by_id(&t, 14), *item = it_by_id(&t, 15);
  /* same typing and sizes ... */
  assert_int_equal(it_by_id(&t, 7)->type, CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE);
  assert_int_equal(it_attr_int(it_by_id(&t, 7), "comm_size"), 1024);
  assert_int_equal(snd->type, CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE);
  /* ... but the reference's defects: no peer or tag, no stream order, no
   * sync deps, stream on host ops, no start times */
  assert_null(chakra_attr_find(snd, "comm_dst"));
  assert_null(chakra_attr_find(snd, "comm_tag"));
  assert_int_equal(addk->n_data_deps, 1);
  assert_int_equal(addk->data_deps[0], 13);
  assert_false(it_has_dep(item, 14));
  assert_non_null(chakra_attr_find(it_by_id(&t, 13), "stream"));
  assert_int_equal(it_by_id(&t, 13)->start_time_micros, 0);
  assert_string_equal(t.meta->version, ""); /* unset */
  it_free(&t);
  tu_rmtree(dir);
  free(dir), free(in), free(out);
}

static void test_convert_failure_leaves_no_file(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  char *in = tu_join(dir, "bad.json"), *out = tu_join(dir, "out.et");
  /* a send kernel whose peer cannot be known */
  FILE *f = fopen(in, "w");
  int first = 1;
  fputs("{\"schema\":\"1.0.2-chakra.0.0.4\",\"nodes\":[", f);
  op(f, &first, 2, "[pytorch|profiler|execution_trace|thread]", 1, "[]", "[]", NULL);
  op(f, &first, 3, "c10d::send", 2, T1, TT, NULL);
  op(f, &first, 4, "ncclDevKernel_SendRecv", 3, T1, TT, "\"cat\":\"kernel\"");
  fputs("]}", f);
  fclose(f);
  chakra_convert_options o = {0};
  chakra_error err = {0};
  assert_int_not_equal(chakra_convert_pytorch(in, NULL, out, &o, NULL, &err), 0);
  assert_contains(err.msg, "node 4");
  assert_contains(err.msg, "peer rank");
  assert_false(tu_exists(out));
  assert_int_equal(tu_dir_count(dir, NULL), 1);
  /* --p2p-missing=drop converts it to a compute node */
  o.p2p_missing = CHAKRA_P2P_MISSING_DROP;
  chakra_convert_report rep;
  if (chakra_convert_pytorch(in, NULL, out, &o, &rep, &err)) fail_msg("%s", err.msg);
  assert_int_equal(rep.p2p_dropped, 1);
  it_trace t = it_load(out);
  const chakra_node *k = it_by_id(&t, 4);
  assert_non_null(k);
  assert_int_equal(k->type, CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE);
  it_free(&t);
  tu_rmtree(dir);
  free(dir), free(in), free(out);
}

/* error.h: err may be NULL. The entry points once crashed copying into it. */
static void test_entry_points_accept_a_null_error(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  char *missing = tu_join(dir, "missing.json"), *out = tu_join(dir, "out.et");
  assert_int_not_equal(chakra_convert_pytorch(missing, NULL, out, NULL, NULL, NULL), 0);
  assert_int_not_equal(chakra_link(missing, missing, out, NULL, NULL, NULL), 0);
  assert_int_not_equal(chakra_convert_text(missing, out, NULL, NULL, NULL), 0);
  assert_int_equal(tu_dir_count(dir, NULL), 0);
  tu_rmtree(dir);
  free(dir), free(missing), free(out);
}

/* The reference writes Optimizer.step with duration 0; --log must say what
 * was written, not the recorded exclusive_dur. */
static void test_convert_log_shows_the_written_duration(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  char *in = tu_join(dir, "o.json"), *out = tu_join(dir, "o.et"), *log = tu_join(dir, "o.log");
  FILE *f = fopen(in, "w");
  int first = 1;
  fputs("{\"schema\":\"1.0.2-chakra.0.0.4\",\"nodes\":[", f);
  op(f, &first, 2, "[pytorch|profiler|execution_trace|thread]", 1, "[]", "[]", NULL);
  op(f, &first, 3, "Optimizer.step#SGD.step", 2, "[]", "[]", "\"ts\":10,\"exclusive_dur\":9");
  op(f, &first, 4, "aten::add", 2, T1, TT, "\"ts\":30,\"exclusive_dur\":5");
  fputs("]}", f);
  fclose(f);
  chakra_convert_options o = {.log_path = log};
  chakra_error err = {0};
  if (chakra_convert_pytorch(in, NULL, out, &o, NULL, &err)) fail_msg("%s", err.msg);
  it_trace t = it_load(out);
  assert_int_equal(it_by_id(&t, 3)->duration_micros, 0);
  assert_int_equal(it_by_id(&t, 4)->duration_micros, 5);
  it_free(&t);
  char *text = tu_read_text(log, NULL);
  int lines = 0;
  for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
    if (strstr(l, "Optimizer.step")) assert_non_null(strstr(l, "duration_micros 0")), lines++;
    if (strstr(l, "aten::add")) assert_non_null(strstr(l, "duration_micros 5")), lines++;
  }
  assert_int_equal(lines, 2);
  free(text);
  tu_rmtree(dir);
  free(dir), free(in), free(out), free(log);
}

static void test_convert_detects_cycles(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  char *in = tu_join(dir, "c.json"), *out = tu_join(dir, "c.et");
  FILE *f = fopen(in, "w");
  int first = 1;
  fputs("{\"schema\":\"1.0.2-chakra.0.0.4\",\"nodes\":[", f);
  op(f, &first, 2, "[pytorch|profiler|execution_trace|thread]", 1, "[]", "[]", NULL);
  op(f, &first, 3, "a", 2, "[]", "[]", "\"inter_thread_dep\":4");
  op(f, &first, 4, "b", 2, "[]", "[]", NULL);
  fputs("]}", f);
  fclose(f);
  chakra_error err = {0};
  assert_int_not_equal(chakra_convert_pytorch(in, NULL, out, NULL, NULL, &err), 0);
  assert_contains(err.msg, "dependency cycle");
  assert_false(tu_exists(out));
  tu_rmtree(dir);
  free(dir), free(in), free(out);
}

/* ---------------------------------------------------------- text workloads */

static const char *DATA2 =
    "DATA\n"
    "2\n"
    "conv1 -1 5 NONE 0 6 NONE 0 7 ALLREDUCE 100 1\n"
    "fc -1 8 NONE 0 9 NONE 0 10 NONE 0 1\n";

static void test_text_data_parallel_graph(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  char *in = tu_join(dir, "w.txt"), *prefix = tu_join(dir, "w"), *f0 = tu_join(dir, "w.0.et"), *f1 = tu_join(dir, "w.1.et");
  tu_write_text(in, DATA2);
  chakra_text_options o = {.npus = 2, .passes = 1};
  chakra_text_report rep;
  chakra_error err = {0};
  if (chakra_convert_text(in, prefix, &o, &rep, &err)) fail_msg("%s", err.msg);
  assert_string_equal(rep.parallelism, "DATA");
  /* fwd conv1, fwd fc, wg fc (NONE: no collective), ig fc, wg conv1, all-reduce conv1 */
  assert_int_equal(rep.nodes_per_npu, 6);
  it_trace t = it_load(f0);
  assert_int_equal(t.n, 6);
  assert_string_equal(t.v[0]->name, "COMP_NODE_conv1_FWD");
  assert_int_equal(t.v[0]->duration_micros, 5);
  assert_string_equal(t.v[2]->name, "COMP_NODE_fc_BWD_WG");
  assert_true(it_has_dep(t.v[2], 1));
  assert_string_equal(t.v[3]->name, "COMP_NODE_fc_BWD_IG");
  assert_string_equal(t.v[4]->name, "COMP_NODE_conv1_BWD_WG");
  assert_true(it_has_dep(t.v[4], 3));
  assert_string_equal(t.v[5]->name, "COMM_COLL_NODE_conv1_ALLREDUCE");
  assert_int_equal(it_attr_int(t.v[5], "comm_size"), 100);
  assert_int_equal(it_attr_int(t.v[5], "comm_type"), 0);
  assert_true(it_has_dep(t.v[5], 4));
  /* identical files, ids from 0 in each */
  size_t n0, n1;
  uint8_t *a = tu_read_file(f0, &n0), *b = tu_read_file(f1, &n1);
  assert_int_equal(n0, n1);
  assert_memory_equal(a, b, n0);
  free(a), free(b);
  it_free(&t);
  /* --compat: NONE becomes an all-reduce node; ids go on across files */
  o.compat = 1;
  if (chakra_convert_text(in, prefix, &o, &rep, &err)) fail_msg("%s", err.msg);
  assert_int_equal(rep.nodes_per_npu, 7);
  it_trace c1 = it_load(f1);
  assert_int_equal(c1.v[0]->id, 7);
  assert_string_equal(c1.v[3]->name, "COMM_COLL_NODE_fc_NONE");
  it_free(&c1);
  tu_rmtree(dir);
  free(dir), free(in), free(prefix), free(f0), free(f1);
}

static void expect_deps(const it_trace *t, uint64_t id, const char *name, const uint64_t *deps, size_t n) {
  const chakra_node *x = it_by_id(t, id);
  if (!x) fail_msg("no node %llu", (unsigned long long)id);
  assert_string_equal(x->name, name);
  assert_int_equal(x->n_data_deps, n);
  for (size_t k = 0; k < n; k++) assert_int_equal(x->data_deps[k], deps[k]);
}
#define DEPS(t, id, name, ...) \
  expect_deps(t, id, name, (const uint64_t[]){__VA_ARGS__}, sizeof((uint64_t[]){__VA_ARGS__}) / sizeof(uint64_t))
#define NODEPS(t, id, name) expect_deps(t, id, name, NULL, 0)

/* HYBRID_DLRM, the most intricate kind: the bottom MLP's last layer waits
 * for the embedding's all-to-all, the embedding's input-gradient all-to-all
 * comes after the first top layer's input gradient, and the next pass
 * waits for the weight-gradient collectives (or computations, for NONE). */
static void test_text_dlrm_graph(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  char *in = tu_join(dir, "d.txt"), *prefix = tu_join(dir, "d"), *f0 = tu_join(dir, "d.0.et");
  tu_write_text(in,
           "HYBRID_DLRM\t1\t\t\n4\t\t\n"
           "E\t-1\t300\tALLTOALL\t98304\t300\tALLTOALL\t98304\t300\tNONE\t0\t98\n"
           "B0\t-1\t1280\tNONE\t0\t794\tNONE\t0\t896\tALLREDUCE\t13312\t13\n"
           "T0\t-1\t6400\tNONE\t0\t6400\tNONE\t0\t4480\tALLREDUCE\t1064960\t1065\n"
           "T1\t-1\t2560\tNONE\t0\t2560\tNONE\t0\t1792\tALLREDUCE\t524288\t524\n");
  chakra_text_options o = {.npus = 1, .passes = 2};
  chakra_text_report rep;
  chakra_error err = {0};
  if (chakra_convert_text(in, prefix, &o, &rep, &err)) fail_msg("%s", err.msg);
  assert_int_equal(rep.nodes_per_npu, 32);
  it_trace t = it_load(f0);
  NODEPS(&t, 0, "COMP_NODE_E_FWD");
  DEPS(&t, 1, "COMM_COLL_NODE_E_ALLTOALL", 0);
  DEPS(&t, 2, "COMP_NODE_B0_FWD", 0, 1);
  DEPS(&t, 4, "COMP_NODE_T1_FWD", 3);
  DEPS(&t, 5, "COMP_NODE_T1_BWD_WG", 4);
  DEPS(&t, 6, "COMM_COLL_NODE_T1_ALLREDUCE", 5);
  DEPS(&t, 7, "COMP_NODE_T1_BWD_IG", 5);
  DEPS(&t, 8, "COMP_NODE_T0_BWD_WG", 7);
  DEPS(&t, 11, "COMM_COLL_NODE_E_ALLTOALL", 10);
  DEPS(&t, 12, "COMP_NODE_B0_BWD_WG", 10);
  DEPS(&t, 15, "COMP_NODE_E_BWD_WG", 14, 11);
  /* second pass */
  DEPS(&t, 16, "COMP_NODE_E_FWD", 15);
  DEPS(&t, 18, "COMP_NODE_B0_FWD", 13, 16, 17);
  assert_int_equal(it_attr_int(it_by_id(&t, 11), "comm_type"), CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_TO_ALL);
  assert_int_equal(it_attr_int(it_by_id(&t, 11), "comm_size"), 98304);
  assert_int_equal(it_by_id(&t, 3)->duration_micros, 6400);
  it_free(&t);
  tu_rmtree(dir);
  free(dir), free(in), free(prefix), free(f0);
}

static void test_text_errors_name_the_line(void **state) {
  (void)state;
  struct { const char *text, *needle; } cases[] = {
      {"HYBRID_TRANSFORMER\n1\nl -1 1 NONE 0 1 NONE 0 1 NONE 0 1 HYBRID\n", "line 1: parallelism 'HYBRID_TRANSFORMER' is not supported"},
      {"DATA\nx\n", "line 2: expected the number of layers"},
      {"DATA\n1\nl -1 1 NONE 0 1 NONE 0 1 NONE\n", "line 3: a layer needs 12 columns"},
      {"DATA\n1\nl -1 1 NONE 0 1 NONE 0 z NONE 0 1\n", "line 3: column 9 (weight-gradient time) 'z' is not an integer"},
      {"MODEL\n1\nl -1 -4 NONE 0 1 NONE 0 1 NONE 0 1\n", "line 3: column 3 (forward time) is negative"},
      {"HYBRID_DLRM\n1\n", "line 1: HYBRID_DLRM needs the index of the last bottom layer"},
      {"", "the file ends before the number of layers"},
  };
  char *dir = tu_mkdtemp();
  char *in = tu_join(dir, "w.txt"), *prefix = tu_join(dir, "w");
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    tu_write_text(in, cases[i].text);
    chakra_error err = {0};
    assert_int_not_equal(chakra_convert_text(in, prefix, NULL, NULL, &err), 0);
    assert_contains(err.msg, in);
    assert_contains(err.msg, cases[i].needle);
    assert_int_equal(tu_dir_count(dir, NULL), 1); /* nothing written */
  }
  tu_rmtree(dir);
  free(dir), free(in), free(prefix);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pyrepr_strings_match_python),
      cmocka_unit_test(test_pyrepr_numbers_match_python),
      cmocka_unit_test(test_hostet_reads_both_layouts),
      cmocka_unit_test(test_hostet_sizes_tensor_lists),
      cmocka_unit_test(test_hostet_errors_name_file_and_place),
      cmocka_unit_test(test_hostet_newer_schema_is_read_with_a_warning),
      cmocka_unit_test(test_hostet_parallel_parse_equals_sequential),
      cmocka_unit_test(test_convert_types_collectives_and_p2p),
      cmocka_unit_test(test_convert_from_memory_to_a_callback),
      cmocka_unit_test(test_convert_compat_keeps_reference_rules),
      cmocka_unit_test(test_convert_failure_leaves_no_file),
      cmocka_unit_test(test_entry_points_accept_a_null_error),
      cmocka_unit_test(test_convert_log_shows_the_written_duration),
      cmocka_unit_test(test_convert_detects_cycles),
      cmocka_unit_test(test_text_data_parallel_graph),
      cmocka_unit_test(test_text_dlrm_graph),
      cmocka_unit_test(test_text_errors_name_the_line),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
