/* test_json.c - pins chakra_jsonize() and chakra_pack() (spec section 5):
 * the three layouts byte for byte on small inputs, the protobuf JSON
 * mapping details (64-bit integers as strings, enums by name and unknown
 * enum values as numbers, set oneof members printed even when 0/false,
 * defaults omitted), pack reading every layout and both field spellings back
 * to the identical .et for every attribute kind, invalid UTF-8 replaced by
 * U+FFFD with a warning naming the node, and errors that name file and
 * line/offset and leave no output behind. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "chakra/json.h"
#include "testutil.h"

static char *path(const char *name) { return tu_join(tu_dir, name); }

static void jsonize_ok(const char *in, const char *out, int layout, tu_lines *warn) {
  chakra_error err = {0};
  if (chakra_jsonize(in, out, layout, 0, NULL, warn ? tu_collect_line : NULL, warn, NULL, &err))
    fail_msg("jsonize: %s", err.msg);
}

static void pack_ok(const char *in, const char *out, tu_lines *warn) {
  chakra_error err = {0};
  if (chakra_pack(in, out, 0, NULL, warn ? tu_collect_line : NULL, warn, NULL, &err))
    fail_msg("pack: %s", err.msg);
}

static void assert_same_file(const char *a, const char *b) {
  size_t na, nb;
  uint8_t *x = tu_read_file(a, &na), *y = tu_read_file(b, &nb);
  assert_int_equal(na, nb);
  assert_memory_equal(x, y, na);
  free(x);
  free(y);
}

/* A small trace: metadata {version}, node 1 (name "a", duration 3), then
 * node 5 (name "n", data dep 1). */
static void small_trace(const char *p) {
  tu_node nodes[] = {{.id = 1, .name = "a", .duration = 3}, {.id = 5, .name = "n", TU_DATA(1)}};
  tu_write_trace(p, nodes, 2);
}

/* ---- layouts ---------------------------------------------------------------- */

static void test_jsonize_lines_is_metadata_then_one_compact_node_per_line(void **state) {
  (void)state;
  char *in = path("small.et"), *out = path("small.jsonl");
  small_trace(in);
  jsonize_ok(in, out, CHAKRA_JSON_LINES, NULL);
  char *text = tu_read_text(out, NULL);
  assert_string_equal(text,
                      "{\"version\":\"1.0.0\"}\n"
                      "{\"id\":\"1\",\"name\":\"a\",\"type\":\"COMP_NODE\",\"duration_micros\":\"3\"}\n"
                      "{\"id\":\"5\",\"name\":\"n\",\"type\":\"COMP_NODE\",\"data_deps\":[\"1\"]}\n");
  free(text);
  free(in);
  free(out);
}

static void test_jsonize_document_is_one_valid_document(void **state) {
  (void)state;
  char *in = path("small.et"), *out = path("small.json");
  small_trace(in);
  jsonize_ok(in, out, CHAKRA_JSON_DOCUMENT, NULL);
  char *text = tu_read_text(out, NULL);
  assert_string_equal(text,
                      "{\"global_metadata\":{\"version\":\"1.0.0\"},\"nodes\":[\n"
                      "{\"id\":\"1\",\"name\":\"a\",\"type\":\"COMP_NODE\",\"duration_micros\":\"3\"},\n"
                      "{\"id\":\"5\",\"name\":\"n\",\"type\":\"COMP_NODE\",\"data_deps\":[\"1\"]}\n"
                      "]}\n");
  free(text);
  free(in);
  free(out);
}

static void test_jsonize_compat_is_the_reference_concatenated_indented_camel_case(void **state) {
  (void)state;
  char *in = path("small.et"), *out = path("small.compat.json");
  small_trace(in);
  jsonize_ok(in, out, CHAKRA_JSON_COMPAT, NULL);
  char *text = tu_read_text(out, NULL);
  /* json_format.MessageToJson(msg) per message, written with no separator */
  assert_string_equal(text,
                      "{\n  \"version\": \"1.0.0\"\n}"
                      "{\n  \"id\": \"1\",\n  \"name\": \"a\",\n  \"type\": \"COMP_NODE\",\n"
                      "  \"durationMicros\": \"3\"\n}"
                      "{\n  \"id\": \"5\",\n  \"name\": \"n\",\n  \"type\": \"COMP_NODE\",\n"
                      "  \"dataDeps\": [\n    \"1\"\n  ]\n}");
  free(text);
  free(in);
  free(out);
}

static void test_jsonize_empty_messages_print_as_empty_objects(void **state) {
  (void)state;
  char *in = path("empty_msgs.et"), *out = path("empty_msgs.jsonl"), *out2 = path("empty_msgs.compat");
  tu_buf b = {0};
  tu_put_byte(&b, 0); /* all-default GlobalMetadata */
  tu_put_byte(&b, 0); /* node id 0, INVALID_NODE */
  tu_write_bytes(in, b.p, b.n);
  jsonize_ok(in, out, CHAKRA_JSON_LINES, NULL);
  char *text = tu_read_text(out, NULL);
  assert_string_equal(text, "{}\n{}\n");
  free(text);
  jsonize_ok(in, out2, CHAKRA_JSON_COMPAT, NULL);
  text = tu_read_text(out2, NULL);
  assert_string_equal(text, "{}{}");
  free(text);
  /* and they pack back to the same two zero-length messages */
  char *back = path("empty_msgs.back.et");
  pack_ok(out, back, NULL);
  assert_same_file(in, back);
  pack_ok(out2, back, NULL);
  assert_same_file(in, back);
  tu_buf_free(&b);
  free(in);
  free(out);
  free(out2);
  free(back);
}

static void test_jsonize_prints_unknown_node_type_as_a_number(void **state) {
  (void)state;
  char *in = path("type99.et"), *out = path("type99.jsonl"), *back = path("type99.back.et");
  tu_buf b = {0};
  tu_put_metadata(&b);
  tu_put_framed(&b, "\x08\x05\x18\x63", 4); /* id 5, type 99 */
  tu_write_bytes(in, b.p, b.n);
  jsonize_ok(in, out, CHAKRA_JSON_LINES, NULL);
  char *text = tu_read_text(out, NULL);
  assert_contains(text, "{\"id\":\"5\",\"type\":99}\n");
  free(text);
  pack_ok(out, back, NULL);
  assert_same_file(in, back);
  tu_buf_free(&b);
  free(in);
  free(out);
  free(back);
}

static void test_jsonize_compat_escapes_non_ascii_like_python_json(void **state) {
  (void)state;
  char *in = path("utf.et"), *out = path("utf.compat"), *lines = path("utf.jsonl");
  /* e-acute, an astral code point (U+1F600), a control char, DEL, quote, backslash */
  tu_node nodes[] = {{.id = 1, .name = "caf\xc3\xa9 \xf0\x9f\x98\x80 \x01\x7f\"\\"}};
  tu_write_trace(in, nodes, 1);
  jsonize_ok(in, out, CHAKRA_JSON_COMPAT, NULL);
  char *text = tu_read_text(out, NULL);
  assert_contains(text, "\"name\": \"caf\\u00e9 \\ud83d\\ude00 \\u0001\\u007f\\\"\\\\\"");
  free(text);
  jsonize_ok(in, lines, CHAKRA_JSON_LINES, NULL);
  text = tu_read_text(lines, NULL);
  assert_contains(text, "\"name\":\"caf\xc3\xa9 \xf0\x9f\x98\x80 \\u0001\x7f\\\"\\\\\"");
  free(text);
  free(in);
  free(out);
  free(lines);
}

/* ---- round trip of every kind ---------------------------------------------- */

#define KIND(field, vcase) \
  a[k].name = #field; a[k].value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_##vcase

static void rich_trace(const char *p) {
  ChakraProtoMsg__AttributeProto a[40];
  ChakraProtoMsg__AttributeProto *ap[40];
  for (int i = 0; i < 40; i++) {
    ChakraProtoMsg__AttributeProto init = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT;
    a[i] = init;
    ap[i] = &a[i];
  }
  int k = 0;
  KIND(double_val, DOUBLE_VAL); a[k++].double_val = 0.1;
  KIND(double_nan, DOUBLE_VAL); a[k++].double_val = NAN;
  KIND(double_inf, DOUBLE_VAL); a[k++].double_val = -INFINITY;
  KIND(double_tiny, DOUBLE_VAL); a[k++].double_val = 1.5e-300;
  KIND(double_big, DOUBLE_VAL); a[k++].double_val = 6.02214076e23;
  KIND(double_zero, DOUBLE_VAL); a[k++].double_val = 0.0; /* oneof: printed although 0 */
  KIND(float_val, FLOAT_VAL); a[k++].float_val = 0.1f;
  KIND(float_big, FLOAT_VAL); a[k++].float_val = 3.4e38f;
  KIND(int32_val, INT32_VAL); a[k++].int32_val = INT32_MIN;
  KIND(int64_val, INT64_VAL); a[k++].int64_val = INT64_MIN;
  KIND(uint32_val, UINT32_VAL); a[k++].uint32_val = UINT32_MAX;
  KIND(uint64_val, UINT64_VAL); a[k++].uint64_val = UINT64_MAX;
  KIND(sint32_val, SINT32_VAL); a[k++].sint32_val = -5;
  KIND(sint64_val, SINT64_VAL); a[k++].sint64_val = -(1ll << 40);
  KIND(fixed32_val, FIXED32_VAL); a[k++].fixed32_val = 0xdeadbeef;
  KIND(fixed64_val, FIXED64_VAL); a[k++].fixed64_val = 0xfeedfacecafebeefull;
  KIND(sfixed32_val, SFIXED32_VAL); a[k++].sfixed32_val = -1;
  KIND(sfixed64_val, SFIXED64_VAL); a[k++].sfixed64_val = INT64_MAX;
  KIND(bool_false, BOOL_VAL); a[k++].bool_val = 0;
  KIND(string_val, STRING_VAL); a[k++].string_val = "tab\there \"q\" \xe2\x82\xac";
  static uint8_t raw[] = {0, 1, 2, 0xfb, 0xff};
  KIND(bytes_val, BYTES_VAL); a[k].bytes_val.len = 5; a[k++].bytes_val.data = raw;
  static double dl[] = {1.0, -0.0, 2.5e-8, 1e16};
  ChakraProtoMsg__DoubleList dlist = CHAKRA_PROTO_MSG__DOUBLE_LIST__INIT;
  dlist.n_values = 4; dlist.values = dl;
  KIND(double_list, DOUBLE_LIST); a[k++].double_list = &dlist;
  static float fl[] = {0.5f, 1e-7f};
  ChakraProtoMsg__FloatList flist = CHAKRA_PROTO_MSG__FLOAT_LIST__INIT;
  flist.n_values = 2; flist.values = fl;
  KIND(float_list, FLOAT_LIST); a[k++].float_list = &flist;
  static int32_t il[] = {-1, 0, 7};
  ChakraProtoMsg__Int32List ilist = CHAKRA_PROTO_MSG__INT32_LIST__INIT;
  ilist.n_values = 3; ilist.values = il;
  KIND(int32_list, INT32_LIST); a[k++].int32_list = &ilist;
  static int64_t ll[] = {INT64_MIN, 0, INT64_MAX};
  ChakraProtoMsg__Int64List llist = CHAKRA_PROTO_MSG__INT64_LIST__INIT;
  llist.n_values = 3; llist.values = ll;
  KIND(int64_list, INT64_LIST); a[k++].int64_list = &llist;
  static uint32_t ul[] = {UINT32_MAX};
  ChakraProtoMsg__Uint32List ulist = CHAKRA_PROTO_MSG__UINT32_LIST__INIT;
  ulist.n_values = 1; ulist.values = ul;
  KIND(uint32_list, UINT32_LIST); a[k++].uint32_list = &ulist;
  static uint64_t ql[] = {UINT64_MAX, 1};
  ChakraProtoMsg__Uint64List qlist = CHAKRA_PROTO_MSG__UINT64_LIST__INIT;
  qlist.n_values = 2; qlist.values = ql;
  KIND(uint64_list, UINT64_LIST); a[k++].uint64_list = &qlist;
  static int32_t sl[] = {-3, 3};
  ChakraProtoMsg__Sint32List slist = CHAKRA_PROTO_MSG__SINT32_LIST__INIT;
  slist.n_values = 2; slist.values = sl;
  KIND(sint32_list, SINT32_LIST); a[k++].sint32_list = &slist;
  static int64_t s64[] = {-3, INT64_MIN};
  ChakraProtoMsg__Sint64List s64list = CHAKRA_PROTO_MSG__SINT64_LIST__INIT;
  s64list.n_values = 2; s64list.values = s64;
  KIND(sint64_list, SINT64_LIST); a[k++].sint64_list = &s64list;
  static uint32_t f32[] = {1, 2};
  ChakraProtoMsg__Fixed32List f32list = CHAKRA_PROTO_MSG__FIXED32_LIST__INIT;
  f32list.n_values = 2; f32list.values = f32;
  KIND(fixed32_list, FIXED32_LIST); a[k++].fixed32_list = &f32list;
  static uint64_t f64[] = {UINT64_MAX};
  ChakraProtoMsg__Fixed64List f64list = CHAKRA_PROTO_MSG__FIXED64_LIST__INIT;
  f64list.n_values = 1; f64list.values = f64;
  KIND(fixed64_list, FIXED64_LIST); a[k++].fixed64_list = &f64list;
  static int32_t sf32[] = {INT32_MIN};
  ChakraProtoMsg__Sfixed32List sf32list = CHAKRA_PROTO_MSG__SFIXED32_LIST__INIT;
  sf32list.n_values = 1; sf32list.values = sf32;
  KIND(sfixed32_list, SFIXED32_LIST); a[k++].sfixed32_list = &sf32list;
  static int64_t sf64[] = {-2};
  ChakraProtoMsg__Sfixed64List sf64list = CHAKRA_PROTO_MSG__SFIXED64_LIST__INIT;
  sf64list.n_values = 1; sf64list.values = sf64;
  KIND(sfixed64_list, SFIXED64_LIST); a[k++].sfixed64_list = &sf64list;
  static protobuf_c_boolean bl[] = {1, 0, 1};
  ChakraProtoMsg__BoolList blist = CHAKRA_PROTO_MSG__BOOL_LIST__INIT;
  blist.n_values = 3; blist.values = bl;
  KIND(involved_dim, BOOL_LIST); a[k++].bool_list = &blist;
  static char *strs[] = {"x", "", "1048576", "\xe4\xb8\xad"};
  ChakraProtoMsg__StringList strlist = CHAKRA_PROTO_MSG__STRING_LIST__INIT;
  strlist.n_values = 4; strlist.values = strs;
  KIND(inputs, STRING_LIST); a[k++].string_list = &strlist;
  static ProtobufCBinaryData bys[] = {{1, raw}, {0, NULL}, {5, raw}};
  ChakraProtoMsg__BytesList bylist = CHAKRA_PROTO_MSG__BYTES_LIST__INIT;
  bylist.n_values = 3; bylist.values = bys;
  KIND(bytes_list, BYTES_LIST); a[k++].bytes_list = &bylist;
  a[k].name = "outputs"; /* present, no value (STAGE) */
  a[k++].doc_string = "a doc string";

  chakra_error err = {0};
  chakra_writer *w;
  assert_int_equal(chakra_writer_open(&w, p, 0, &err), 0);
  ChakraProtoMsg__GlobalMetadata meta = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
  meta.n_attr = 3;
  meta.attr = ap + 9; /* int64, uint32, uint64 */
  assert_int_equal(chakra_writer_put(w, &meta.base, &err), 0);
  ChakraProtoMsg__IOInfo io = CHAKRA_PROTO_MSG__IOINFO__INIT;
  io.values = "[[1, 2], 'x']";
  io.shapes = "[[2]]";
  io.types = "['Tensor(float)']";
  static uint64_t data[] = {3, 1, 3}, ctrl[] = {9};
  ChakraProtoMsg__Node n = CHAKRA_PROTO_MSG__NODE__INIT;
  n.id = 216;
  n.name = "aten::mm";
  n.type = CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE;
  n.n_ctrl_deps = 1;
  n.ctrl_deps = ctrl;
  n.n_data_deps = 3;
  n.data_deps = data;
  n.start_time_micros = 1700000000000000ull;
  n.duration_micros = 318;
  n.inputs = &io;
  n.outputs = &io;
  n.n_attr = (size_t)k;
  n.attr = ap;
  assert_int_equal(chakra_writer_put(w, &n.base, &err), 0);
  ChakraProtoMsg__Node m = CHAKRA_PROTO_MSG__NODE__INIT; /* id 0, nothing else */
  assert_int_equal(chakra_writer_put(w, &m.base, &err), 0);
  assert_int_equal(chakra_writer_close(w, &err), 0);
}

static void test_pack_reads_every_layout_back_to_the_identical_et(void **state) {
  (void)state;
  char *in = path("rich.et");
  rich_trace(in);
  const int layouts[] = {CHAKRA_JSON_LINES, CHAKRA_JSON_DOCUMENT, CHAKRA_JSON_COMPAT};
  for (int i = 0; i < 3; i++) {
    char *js = path(tu_fmt("rich.%d.json", i)), *back = path(tu_fmt("rich.%d.et", i));
    tu_lines warn = {0};
    jsonize_ok(in, js, layouts[i], &warn);
    assert_int_equal(warn.n, 0);
    pack_ok(js, back, &warn);
    assert_int_equal(warn.n, 0);
    assert_same_file(in, back);
    free(js);
    free(back);
  }
  free(in);
}

static void test_jsonize_prints_set_oneof_zero_and_special_floats(void **state) {
  (void)state;
  char *in = path("rich.et"), *out = path("rich.jsonl");
  rich_trace(in);
  jsonize_ok(in, out, CHAKRA_JSON_LINES, NULL);
  char *t = tu_read_text(out, NULL);
  assert_contains(t, "{\"name\":\"double_zero\",\"double_val\":0}");
  assert_contains(t, "{\"name\":\"bool_false\",\"bool_val\":false}");
  assert_contains(t, "{\"name\":\"double_nan\",\"double_val\":\"NaN\"}");
  assert_contains(t, "{\"name\":\"double_inf\",\"double_val\":\"-Infinity\"}");
  assert_contains(t, "{\"name\":\"int64_val\",\"int64_val\":\"-9223372036854775808\"}");
  assert_contains(t, "{\"name\":\"uint64_val\",\"uint64_val\":\"18446744073709551615\"}");
  assert_contains(t, "{\"name\":\"uint32_val\",\"uint32_val\":4294967295}");
  assert_contains(t, "{\"name\":\"bytes_val\",\"bytes_val\":\"AAEC+/8=\"}");
  assert_contains(t, "{\"name\":\"outputs\",\"doc_string\":\"a doc string\"}");
  assert_contains(t, "\"ctrl_deps\":[\"9\"],\"data_deps\":[\"3\",\"1\",\"3\"]");
  assert_contains(t, "\n{}\n"); /* the all-default node */
  free(t);
  free(in);
  free(out);
}

static void test_pack_accepts_camel_case_names_and_unquoted_64bit_numbers(void **state) {
  (void)state;
  char *js = path("hand.json"), *out = path("hand.et");
  tu_write_text(js,
             "{\"version\": \"1.0.0\"}\n"
             "{\"id\": 216, \"name\": \"x\", \"type\": \"COMP_NODE\", \"dataDeps\": [1, \"2\"],\n"
             " \"durationMicros\": 7, \"attr\": [{\"name\": \"comm_size\", \"int64Val\": 1048576},\n"
             " {\"name\": \"is_cpu_op\", \"boolVal\": true}], \"ctrl_deps\": null}\n"
             "{\"id\": \"3\", \"type\": 7}\n");
  pack_ok(js, out, NULL);
  chakra_error err = {0};
  chakra_reader *r;
  assert_int_equal(chakra_reader_open(&r, out, NULL, &err), 0);
  chakra_node *n;
  assert_int_equal(chakra_reader_next(r, &n, &err), 1);
  assert_int_equal(n->id, 216);
  assert_int_equal(n->n_data_deps, 2);
  assert_int_equal(n->data_deps[1], 2);
  assert_int_equal(n->duration_micros, 7);
  assert_int_equal(n->n_attr, 2);
  assert_int_equal(n->attr[0]->int64_val, 1048576);
  assert_int_equal(n->attr[1]->value_case, CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL);
  assert_int_equal(n->n_ctrl_deps, 0);
  assert_int_equal(chakra_reader_next(r, &n, &err), 1);
  assert_int_equal(n->id, 3);
  assert_int_equal(n->type, CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE);
  assert_int_equal(chakra_reader_next(r, &n, &err), 0);
  chakra_reader_close(r);
  free(js);
  free(out);
}

static void test_pack_reads_gzip_json_and_jsonize_writes_it(void **state) {
  (void)state;
  char *in = path("small.et"), *js = path("small.jsonl.gz"), *back = path("small.back.et");
  small_trace(in);
  chakra_error err = {0};
  assert_int_equal(chakra_jsonize(in, js, CHAKRA_JSON_LINES, 1, NULL, NULL, NULL, NULL, &err), 0);
  size_t n;
  uint8_t *b = tu_read_file(js, &n);
  assert_true(n > 2 && b[0] == 0x1f && b[1] == 0x8b);
  free(b);
  pack_ok(js, back, NULL);
  assert_same_file(in, back);
  free(in);
  free(js);
  free(back);
}

/* ---- invalid UTF-8 ------------------------------------------------------------ */

static void test_jsonize_replaces_invalid_utf8_and_warns_naming_the_node(void **state) {
  (void)state;
  char *in = path("bad_utf8.et"), *out = path("bad_utf8.jsonl");
  tu_node nodes[] = {{.id = 1, .name = "fine"}, {.id = 42, .name = "a\xff" "b\xc3"}};
  tu_write_trace(in, nodes, 2);
  tu_lines warn = {0};
  chakra_json_stats st;
  chakra_error err = {0};
  assert_int_equal(chakra_jsonize(in, out, CHAKRA_JSON_LINES, 0, &st, tu_collect_line, &warn, NULL, &err), 0);
  assert_int_equal(st.bad_utf8, 2);
  assert_int_equal(st.nodes, 2);
  assert_int_equal(warn.n, 1);
  assert_contains(warn.line[0], in);
  assert_contains(warn.line[0], "node 42");
  assert_contains(warn.line[0], "U+FFFD");
  char *t = tu_read_text(out, NULL);
  assert_contains(t, "\"name\":\"a\xef\xbf\xbd" "b\xef\xbf\xbd\"");
  free(t);
  free(in);
  free(out);
}

static void test_pack_replaces_invalid_utf8_and_warns_naming_the_node(void **state) {
  (void)state;
  char *js = path("bad_utf8.json"), *out = path("bad_utf8.et");
  tu_write_text(js, "{}\n{\"id\":\"1\"}\n{\"id\":\"77\",\"name\":\"x\xfe\xffy\"}\n");
  tu_lines warn = {0};
  chakra_json_stats st;
  chakra_error err = {0};
  assert_int_equal(chakra_pack(js, out, 0, &st, tu_collect_line, &warn, NULL, &err), 0);
  assert_int_equal(st.bad_utf8, 2);
  assert_int_equal(st.nodes, 2);
  assert_int_equal(warn.n, 1);
  assert_contains(warn.line[0], js);
  assert_contains(warn.line[0], "node 77");
  chakra_reader *r;
  assert_int_equal(chakra_reader_open(&r, out, NULL, &err), 0);
  chakra_node *n;
  assert_int_equal(chakra_reader_next(r, &n, &err), 1);
  assert_int_equal(chakra_reader_next(r, &n, &err), 1);
  assert_string_equal(n->name, "x\xef\xbf\xbd\xef\xbf\xbdy");
  chakra_reader_close(r);
  free(js);
  free(out);
}

/* ---- errors ------------------------------------------------------------------- */

/* Packs text; expects failure naming the file and the given line, and no
 * output (nor temporary) in the directory afterwards. */
static void expect_pack_error(const char *text, const char *line, const char *what) {
  char *js = path("bad.json"), *out = path("bad.et");
  tu_write_text(js, text);
  chakra_error err = {0};
  assert_int_equal(chakra_pack(js, out, 0, NULL, NULL, NULL, NULL, &err), CHAKRA_EFORMAT);
  assert_contains(err.msg, js);
  if (line) assert_contains(err.msg, line);
  assert_contains(err.msg, what);
  assert_null(strchr(err.msg, '\n'));
  assert_false(tu_exists(out));
  assert_int_equal(tu_dir_count(tu_dir, NULL), 1); /* only bad.json */
  free(js);
  free(out);
}

static void test_pack_syntax_error_names_file_and_line(void **state) {
  (void)state;
  expect_pack_error("{\"version\":\"1\"}\n{\"id\":\"1\"}\n{\"id\":\"2\",,}\n", "line 3", "invalid JSON");
}

static void test_pack_unknown_field_names_file_line_and_field(void **state) {
  (void)state;
  expect_pack_error("{\"version\":\"1\"}\n{\"id\":\"1\",\n\"colour\":\"red\"}\n", "line 3",
                    "unknown field 'colour' in Node");
}

static void test_pack_wrong_value_type_names_file_line_and_field(void **state) {
  (void)state;
  expect_pack_error("{}\n{\"id\":\"abc\"}\n", "line 2", "field 'id'");
  expect_pack_error("{}\n{\"name\":5}\n", "line 2", "field 'name'");
  expect_pack_error("{}\n{\"data_deps\":\"1\"}\n", "line 2", "repeated");
  expect_pack_error("{}\n{\"id\":\"1\",\"attr\":[{\"name\":\"x\",\"bool_val\":\"yes\"}]}\n", "line 2",
                    "field 'bool_val'");
  expect_pack_error("{}\n{\"id\":-1}\n", "line 2", "field 'id'");
  expect_pack_error("{}\n{\"type\":\"NOT_A_TYPE\"}\n", "line 2", "NodeType");
}

static void test_pack_out_of_range_int32_names_file_and_line(void **state) {
  (void)state;
  expect_pack_error("{}\n{\"attr\":[{\"name\":\"comm_src\",\n\"int32_val\":2147483648}]}\n", "line 3",
                    "32-bit range");
  expect_pack_error("{}\n{\"attr\":[{\"name\":\"x\",\"uint32_val\":-1}]}\n", "line 2", "uint32_val");
}

static void test_pack_empty_input_is_missing_global_metadata(void **state) {
  (void)state;
  expect_pack_error("", NULL, "no GlobalMetadata");
  expect_pack_error("   \n\n", NULL, "no GlobalMetadata");
}

static void test_pack_input_ending_inside_a_message_is_an_error(void **state) {
  (void)state;
  expect_pack_error("{\"version\":\"1\"}\n{\"id\":\"1\"", "line 2", "invalid JSON");
}

static void test_pack_document_layout_errors(void **state) {
  (void)state;
  expect_pack_error("{\"nodes\":[{\"id\":\"1\"}]}", "line 1", "before \"global_metadata\"");
  expect_pack_error("{\"global_metadata\":{},\"global_metadata\":{}}", "line 1", "twice");
  expect_pack_error("{\"global_metadata\":{},\"extra\":1}", "line 1", "unknown key 'extra'");
}

static void test_jsonize_error_leaves_no_output(void **state) {
  (void)state;
  char *in = path("cut.et"), *out = path("cut.jsonl");
  tu_buf b = {0};
  tu_put_metadata(&b);
  tu_put(&b, "\x10\x08\x01", 3); /* declares 16, has 2 */
  tu_write_bytes(in, b.p, b.n);
  chakra_error err = {0};
  assert_int_equal(chakra_jsonize(in, out, CHAKRA_JSON_LINES, 0, NULL, NULL, NULL, NULL, &err),
                   CHAKRA_EFORMAT);
  assert_contains(err.msg, in);
  assert_contains(err.msg, "offset 8");
  assert_false(tu_exists(out));
  assert_int_equal(tu_dir_count(tu_dir, NULL), 1);
  tu_buf_free(&b);
  free(in);
  free(out);
}

static void test_jsonize_warns_that_unknown_fields_are_left_out(void **state) {
  (void)state;
  char *in = path("unknown.et"), *out = path("unknown.jsonl");
  tu_buf b = {0};
  tu_put_metadata(&b);
  tu_put_framed(&b, "\x08\x01\x98\x06\x05", 5); /* id 1, field 99 = 5 */
  tu_write_bytes(in, b.p, b.n);
  tu_lines warn = {0};
  chakra_json_stats st;
  chakra_error err = {0};
  assert_int_equal(chakra_jsonize(in, out, CHAKRA_JSON_LINES, 0, &st, tu_collect_line, &warn, NULL, &err), 0);
  assert_int_equal(st.unknown_fields, 1);
  assert_int_equal(warn.n, 1);
  assert_contains(warn.line[0], "unknown protobuf field");
  tu_buf_free(&b);
  free(in);
  free(out);
}

/* ---- progress ------------------------------------------------------------------ */

typedef struct seen_bytes {
  uint64_t calls, last, total, stop_at; /* stop_at: the call that asks to stop (0: none) */
  int rising;
} seen_bytes;

static int count_bytes(void *ctx, const char *phase, uint64_t done, uint64_t total) {
  seen_bytes *s = ctx;
  assert_string_equal(phase, "bytes");
  if (s->calls && done < s->last) s->rising = 0;
  s->calls++, s->last = done, s->total = total;
  return s->stop_at && s->calls >= s->stop_at;
}

static long file_size(const char *p) {
  FILE *f = fopen(p, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fclose(f);
  return n;
}

/* jsonize and pack report the bytes they read, rising to the input's size;
 * a callback asking to stop cancels them and leaves no output. */
static void test_jsonize_and_pack_report_bytes_read_and_stop_when_asked(void **state) {
  (void)state;
  char *in = path("many.et"), *js = path("many.jsonl"), *back = path("many.back.et");
  enum { N = 5000 }; /* more than one look at the offset (every 1,024 nodes) */
  tu_node *nodes = calloc(N, sizeof *nodes);
  for (int i = 0; i < N; i++) nodes[i].id = (uint64_t)i + 1, nodes[i].name = "aten::mul";
  tu_write_trace(in, nodes, N);
  free(nodes);
  chakra_error err = {0};
  seen_bytes s = {.rising = 1};
  chakra_json_options o = {.progress = count_bytes, .progress_ctx = &s};
  assert_int_equal(chakra_jsonize(in, js, CHAKRA_JSON_LINES, 0, NULL, NULL, NULL, &o, &err), 0);
  assert_true(s.calls >= 2 && s.rising);
  assert_int_equal(s.total, (uint64_t)file_size(in));
  assert_int_equal(s.last, s.total);
  s = (seen_bytes){.rising = 1};
  assert_int_equal(chakra_pack(js, back, 0, NULL, NULL, NULL, &o, &err), 0);
  assert_true(s.calls >= 1 && s.rising);
  assert_int_equal(s.total, (uint64_t)file_size(js));
  assert_int_equal(s.last, s.total);
  /* asked to stop: cancelled, nothing written */
  char *js2 = path("stopped.jsonl"), *back2 = path("stopped.et");
  s = (seen_bytes){.stop_at = 1};
  assert_int_equal(chakra_jsonize(in, js2, CHAKRA_JSON_LINES, 0, NULL, NULL, NULL, &o, &err), CHAKRA_ECANCELED);
  assert_false(tu_exists(js2));
  s = (seen_bytes){.stop_at = 1};
  assert_int_equal(chakra_pack(js, back2, 0, NULL, NULL, NULL, &o, &err), CHAKRA_ECANCELED);
  assert_false(tu_exists(back2));
  free(in), free(js), free(back), free(js2), free(back2);
}

#define T(f) cmocka_unit_test_setup_teardown(f, tu_dir_setup, tu_dir_teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      T(test_jsonize_lines_is_metadata_then_one_compact_node_per_line),
      T(test_jsonize_document_is_one_valid_document),
      T(test_jsonize_compat_is_the_reference_concatenated_indented_camel_case),
      T(test_jsonize_empty_messages_print_as_empty_objects),
      T(test_jsonize_prints_unknown_node_type_as_a_number),
      T(test_jsonize_compat_escapes_non_ascii_like_python_json),
      T(test_pack_reads_every_layout_back_to_the_identical_et),
      T(test_jsonize_prints_set_oneof_zero_and_special_floats),
      T(test_pack_accepts_camel_case_names_and_unquoted_64bit_numbers),
      T(test_pack_reads_gzip_json_and_jsonize_writes_it),
      T(test_jsonize_replaces_invalid_utf8_and_warns_naming_the_node),
      T(test_pack_replaces_invalid_utf8_and_warns_naming_the_node),
      T(test_pack_syntax_error_names_file_and_line),
      T(test_pack_unknown_field_names_file_line_and_field),
      T(test_pack_wrong_value_type_names_file_line_and_field),
      T(test_pack_out_of_range_int32_names_file_and_line),
      T(test_pack_empty_input_is_missing_global_metadata),
      T(test_pack_input_ending_inside_a_message_is_an_error),
      T(test_pack_document_layout_errors),
      T(test_jsonize_error_leaves_no_output),
      T(test_jsonize_warns_that_unknown_fields_are_left_out),
      T(test_jsonize_and_pack_report_bytes_read_and_stop_when_asked),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
