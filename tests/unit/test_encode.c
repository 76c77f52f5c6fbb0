/* test_encode.c - the one node encoder (lib/trace/encode.h) against
 * protobuf-c: random Nodes and GlobalMetadata messages, written field by
 * field (as coll, synth and the builder write them) and as protobuf-c
 * structs (as the trace writers hand them over), must give exactly the
 * bytes protobuf_c_message_pack gives for the same message, with its
 * length prefix: every attribute kind, empty and NULL strings, names and
 * strings long enough for multi-byte lengths, negative int32 values,
 * nodes over 128 bytes (a moved frame) and unknown fields. (NULL list
 * elements are left out: protobuf-c cannot size them.) */
#include <stdlib.h>

#include "chakra/build.h"
#include "encode.h"
#include "testutil.h"

/* ------------------------------------------------------------ random values */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void) {
  uint64_t x = rng_state;
  x ^= x << 13, x ^= x >> 7, x ^= x << 17;
  return rng_state = x;
}

/* Values around every varint length boundary, zero and negatives. */
static uint64_t rnd_u64(void) {
  switch (rnd() % 6) {
    case 0: return 0;
    case 1: return rnd() % 128;
    case 2: return (uint64_t)1 << (rnd() % 64);
    case 3: return ((uint64_t)1 << (rnd() % 64)) - 1;
    case 4: return (uint64_t)-(int64_t)(rnd() % 1000);
    default: return rnd();
  }
}

/* Strings live in an arena freed after each message. */
typedef struct pool {
  void *p[4096];
  size_t n;
} pool;

static void *pool_alloc(pool *P, size_t n) {
  assert_true(P->n < sizeof P->p / sizeof P->p[0]);
  void *x = calloc(1, n ? n : 1);
  assert_non_null(x);
  return P->p[P->n++] = x;
}

static void pool_free(pool *P) {
  for (size_t i = 0; i < P->n; i++) free(P->p[i]);
  P->n = 0;
}

/* A string of 0..3 bytes, ~10, ~130 (two-byte length) or ~17000 (three). */
static char *rnd_str(pool *P) {
  static const size_t lens[] = {0, 1, 3, 9, 12, 130, 17000};
  size_t k = rnd() % 20, n = k < 14 ? lens[k % 5] : lens[5 + k % 2];
  if (k == 19) n = lens[6];
  char *s = pool_alloc(P, n + 1);
  for (size_t i = 0; i < n; i++) s[i] = (char)('a' + rnd() % 26);
  return s;
}

/* NULL sometimes: protobuf-c leaves a NULL string out. */
static char *rnd_str_or_null(pool *P) { return rnd() % 8 == 0 ? NULL : rnd_str(P); }

/* ------------------------------------------------------------ expectations */

/* Requires got[0..n) to be protobuf-c's packing of m, length prefix first. */
static void assert_encodes(const uint8_t *got, size_t n, const ProtobufCMessage *m) {
  tu_buf want = {0};
  tu_put_msg(&want, m);
  if (n != want.n || memcmp(got, want.p, n) != 0) {
    size_t i = 0;
    while (i < n && i < want.n && got[i] == want.p[i]) i++;
    fail_msg("encoder gave %zu bytes, protobuf-c %zu; first difference at byte %zu", n, want.n, i);
  }
  tu_buf_free(&want);
}

/* ------------------------------------------------------------ random structs */

#define LIST(T, INIT, member, elem_expr)                       \
  do {                                                         \
    T *l = pool_alloc(P, sizeof *l);                           \
    *l = (T)INIT;                                              \
    l->n_values = rnd() % 5;                                   \
    l->values = pool_alloc(P, l->n_values * sizeof *l->values + 1); \
    for (size_t i = 0; i < l->n_values; i++) l->values[i] = elem_expr; \
    a->member = l;                                             \
  } while (0)

static double rnd_double(void) {
  static const double v[] = {0.0, -0.0, 1.5, -3.25e300, 1e-310};
  return v[rnd() % 5];
}

/* Every value kind of AttributeProto, and none. */
static void rnd_value(pool *P, chakra_attr *a) {
  unsigned f = 3 + (unsigned)(rnd() % 31); /* 3..33: 33 is no member at all */
  a->value_case = (ChakraProtoMsg__AttributeProto__ValueCase)(f == 33 ? 0 : f);
  switch (f) {
    case 3: a->double_val = rnd_double(); break;
    case 4: LIST(ChakraProtoMsg__DoubleList, CHAKRA_PROTO_MSG__DOUBLE_LIST__INIT, double_list, rnd_double()); break;
    case 5: a->float_val = (float)rnd_double(); break;
    case 6: LIST(ChakraProtoMsg__FloatList, CHAKRA_PROTO_MSG__FLOAT_LIST__INIT, float_list, (float)rnd_double()); break;
    case 7: a->int32_val = (int32_t)rnd_u64(); break;
    case 8: LIST(ChakraProtoMsg__Int32List, CHAKRA_PROTO_MSG__INT32_LIST__INIT, int32_list, (int32_t)rnd_u64()); break;
    case 9: a->int64_val = (int64_t)rnd_u64(); break;
    case 10: LIST(ChakraProtoMsg__Int64List, CHAKRA_PROTO_MSG__INT64_LIST__INIT, int64_list, (int64_t)rnd_u64()); break;
    case 11: a->uint32_val = (uint32_t)rnd_u64(); break;
    case 12: LIST(ChakraProtoMsg__Uint32List, CHAKRA_PROTO_MSG__UINT32_LIST__INIT, uint32_list, (uint32_t)rnd_u64()); break;
    case 13: a->uint64_val = rnd_u64(); break;
    case 14: LIST(ChakraProtoMsg__Uint64List, CHAKRA_PROTO_MSG__UINT64_LIST__INIT, uint64_list, rnd_u64()); break;
    case 15: a->sint32_val = (int32_t)rnd_u64(); break;
    case 16: LIST(ChakraProtoMsg__Sint32List, CHAKRA_PROTO_MSG__SINT32_LIST__INIT, sint32_list, (int32_t)rnd_u64()); break;
    case 17: a->sint64_val = (int64_t)rnd_u64(); break;
    case 18: LIST(ChakraProtoMsg__Sint64List, CHAKRA_PROTO_MSG__SINT64_LIST__INIT, sint64_list, (int64_t)rnd_u64()); break;
    case 19: a->fixed32_val = (uint32_t)rnd_u64(); break;
    case 20: LIST(ChakraProtoMsg__Fixed32List, CHAKRA_PROTO_MSG__FIXED32_LIST__INIT, fixed32_list, (uint32_t)rnd_u64()); break;
    case 21: a->fixed64_val = rnd_u64(); break;
    case 22: LIST(ChakraProtoMsg__Fixed64List, CHAKRA_PROTO_MSG__FIXED64_LIST__INIT, fixed64_list, rnd_u64()); break;
    case 23: a->sfixed32_val = (int32_t)rnd_u64(); break;
    case 24: LIST(ChakraProtoMsg__Sfixed32List, CHAKRA_PROTO_MSG__SFIXED32_LIST__INIT, sfixed32_list, (int32_t)rnd_u64()); break;
    case 25: a->sfixed64_val = (int64_t)rnd_u64(); break;
    case 26: LIST(ChakraProtoMsg__Sfixed64List, CHAKRA_PROTO_MSG__SFIXED64_LIST__INIT, sfixed64_list, (int64_t)rnd_u64()); break;
    case 27: a->bool_val = (protobuf_c_boolean)(rnd() % 2); break;
    case 28: LIST(ChakraProtoMsg__BoolList, CHAKRA_PROTO_MSG__BOOL_LIST__INIT, bool_list, (protobuf_c_boolean)(rnd() % 2)); break;
    case 29:
      /* protobuf-c's own empty string is its default: not written */
      a->string_val = rnd() % 10 == 0 ? (char *)protobuf_c_empty_string : rnd_str_or_null(P);
      break;
    case 30: LIST(ChakraProtoMsg__StringList, CHAKRA_PROTO_MSG__STRING_LIST__INIT, string_list, rnd_str(P)); break;
    case 31: {
      size_t n = rnd() % 4;
      a->bytes_val.len = n;
      a->bytes_val.data = n ? (uint8_t *)rnd_str(P) : NULL;
      if (n && strlen((char *)a->bytes_val.data) < n) a->bytes_val.len = strlen((char *)a->bytes_val.data);
      break;
    }
    case 32: {
      ChakraProtoMsg__BytesList *l = pool_alloc(P, sizeof *l);
      *l = (ChakraProtoMsg__BytesList)CHAKRA_PROTO_MSG__BYTES_LIST__INIT;
      l->n_values = rnd() % 3;
      l->values = pool_alloc(P, l->n_values * sizeof *l->values + 1);
      for (size_t i = 0; i < l->n_values; i++) l->values[i] = (ProtobufCBinaryData){1, (uint8_t *)"z"};
      a->bytes_list = l;
      break;
    }
    default: break;
  }
  /* a oneof message left NULL is absent, like a value never set */
  if (f % 2 == 0 && f <= 32 && rnd() % 10 == 0) a->double_list = NULL;
}

static void rnd_unknown(pool *P, ProtobufCMessage *m) {
  if (rnd() % 6) return;
  m->n_unknown_fields = 1 + rnd() % 2;
  m->unknown_fields = pool_alloc(P, m->n_unknown_fields * sizeof *m->unknown_fields);
  for (unsigned i = 0; i < m->n_unknown_fields; i++) {
    ProtobufCMessageUnknownField *u = &m->unknown_fields[i];
    u->tag = 40 + (uint32_t)(rnd() % 100000);
    u->wire_type = PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED;
    u->len = 2;
    u->data = pool_alloc(P, 2);
    u->data[0] = 1, u->data[1] = 'x';
  }
}

static chakra_attr **rnd_attrs(pool *P, size_t *n) {
  *n = rnd() % 6;
  chakra_attr **v = pool_alloc(P, *n * sizeof *v);
  for (size_t i = 0; i < *n; i++) {
    chakra_attr *a = v[i] = pool_alloc(P, sizeof *a);
    *a = (chakra_attr)CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT;
    a->name = rnd_str_or_null(P);
    if (rnd() % 10 == 0) a->doc_string = rnd_str(P);
    rnd_value(P, a);
    rnd_unknown(P, &a->base);
  }
  return v;
}

static uint64_t *rnd_ids(pool *P, size_t *n) {
  *n = rnd() % 4 == 0 ? 0 : rnd() % 70;
  uint64_t *v = pool_alloc(P, *n * sizeof *v);
  for (size_t i = 0; i < *n; i++) v[i] = rnd_u64();
  return v;
}

static ChakraProtoMsg__IOInfo *rnd_io(pool *P) {
  if (rnd() % 3) return NULL;
  ChakraProtoMsg__IOInfo *io = pool_alloc(P, sizeof *io);
  *io = (ChakraProtoMsg__IOInfo)CHAKRA_PROTO_MSG__IOINFO__INIT;
  io->values = rnd_str_or_null(P);
  io->shapes = rnd_str_or_null(P);
  io->types = rnd_str_or_null(P);
  rnd_unknown(P, &io->base);
  return io;
}

static void rnd_node(pool *P, chakra_node *n) {
  *n = (chakra_node)CHAKRA_PROTO_MSG__NODE__INIT;
  n->id = rnd_u64();
  n->name = rnd_str_or_null(P);
  n->type = (ChakraProtoMsg__NodeType)(rnd() % 16 == 0 ? -1 : (int)(rnd() % 8));
  n->ctrl_deps = rnd_ids(P, &n->n_ctrl_deps);
  n->data_deps = rnd_ids(P, &n->n_data_deps);
  n->start_time_micros = rnd_u64();
  n->duration_micros = rnd_u64();
  n->inputs = rnd_io(P);
  n->outputs = rnd_io(P);
  n->attr = rnd_attrs(P, &n->n_attr);
  rnd_unknown(P, &n->base);
}

/* ------------------------------------------------------------ structs */

static void test_random_node_structs_encode_as_protobuf_c_packs_them(void **state) {
  (void)state;
  pool P = {0};
  enc_buf b = {0};
  for (int i = 0; i < 20000; i++) {
    chakra_node n;
    rnd_node(&P, &n);
    b.n = 0;
    size_t len = enc_message(&b, &n.base);
    assert_false(b.oom);
    assert_int_equal(len, protobuf_c_message_get_packed_size(&n.base));
    assert_encodes(b.p, b.n, &n.base);
    pool_free(&P);
  }
  enc_buf_free(&b);
}

static void test_random_metadata_structs_encode_as_protobuf_c_packs_them(void **state) {
  (void)state;
  pool P = {0};
  enc_buf b = {0};
  for (int i = 0; i < 5000; i++) {
    chakra_metadata m = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
    m.version = rnd_str_or_null(&P);
    m.attr = rnd_attrs(&P, &m.n_attr);
    rnd_unknown(&P, &m.base);
    b.n = 0;
    enc_message(&b, &m.base);
    assert_encodes(b.p, b.n, &m.base);
    pool_free(&P);
  }
  enc_buf_free(&b);
}

/* Messages that are not ET messages are still framed and packed. */
static void test_other_messages_are_packed_by_protobuf_c(void **state) {
  (void)state;
  ChakraProtoMsg__Tensor t = CHAKRA_PROTO_MSG__TENSOR__INIT;
  t.tensor_id = 300, t.device = "cuda:0";
  enc_buf b = {0};
  enc_message(&b, &t.base);
  assert_encodes(b.p, b.n, &t.base);
  enc_buf_free(&b);
}

/* ------------------------------------------------------------ field writers */

/* One attribute written through the field writers and the same one as a
 * struct (the expectation). */
static uint8_t *rnd_written_attr(pool *P, uint8_t *p, int owner, chakra_attr *a) {
  *a = (chakra_attr)CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT;
  char *name = rnd_str(P);
  size_t nl = strlen(name);
  a->name = name;
  switch (rnd() % 11) {
    case 0:
      a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL, a->int64_val = (int64_t)rnd_u64();
      return enc_attr_i64(p, owner, name, nl, a->int64_val);
    case 1:
      a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL, a->uint64_val = rnd_u64();
      return enc_attr_u64(p, owner, name, nl, a->uint64_val);
    case 2:
      a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL, a->int32_val = (int32_t)rnd_u64();
      return enc_attr_i32(p, owner, name, nl, a->int32_val);
    case 3:
      a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL, a->bool_val = rnd() % 2;
      return enc_attr_bool(p, owner, name, nl, a->bool_val);
    case 4:
      a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_DOUBLE_VAL, a->double_val = rnd_double();
      return enc_attr_double(p, owner, name, nl, a->double_val);
    case 5:
      a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL, a->string_val = rnd_str(P);
      return enc_attr_str(p, owner, name, nl, a->string_val, strlen(a->string_val));
    case 6: return enc_attr_empty(p, owner, name, nl);
    case 7: {
      size_t n = rnd() % 4;
      ChakraProtoMsg__StringList *l = pool_alloc(P, sizeof *l);
      *l = (ChakraProtoMsg__StringList)CHAKRA_PROTO_MSG__STRING_LIST__INIT;
      l->n_values = n;
      l->values = pool_alloc(P, (n + 1) * sizeof(char *));
      for (size_t i = 0; i < n; i++) l->values[i] = rnd_str(P);
      a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_LIST, a->string_list = l;
      const char *const *v = (const char *const *)l->values;
      return enc_attr_strlist(p, owner, name, nl, v, n, enc_strlist_payload(v, n));
    }
    case 8: {
      ChakraProtoMsg__Int64List *l = pool_alloc(P, sizeof *l);
      *l = (ChakraProtoMsg__Int64List)CHAKRA_PROTO_MSG__INT64_LIST__INIT;
      l->n_values = rnd() % 4;
      l->values = pool_alloc(P, (l->n_values + 1) * 8);
      for (size_t i = 0; i < l->n_values; i++) l->values[i] = (int64_t)rnd_u64();
      a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_LIST, a->int64_list = l;
      return enc_attr_i64list(p, owner, name, nl, l->values, l->n_values);
    }
    case 9: {
      ChakraProtoMsg__Uint64List *l = pool_alloc(P, sizeof *l);
      *l = (ChakraProtoMsg__Uint64List)CHAKRA_PROTO_MSG__UINT64_LIST__INIT;
      l->n_values = rnd() % 4;
      l->values = pool_alloc(P, (l->n_values + 1) * 8);
      for (size_t i = 0; i < l->n_values; i++) l->values[i] = rnd_u64();
      a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_LIST, a->uint64_list = l;
      return enc_attr_u64list(p, owner, name, nl, l->values, l->n_values);
    }
    default: {
      ChakraProtoMsg__DoubleList *l = pool_alloc(P, sizeof *l);
      *l = (ChakraProtoMsg__DoubleList)CHAKRA_PROTO_MSG__DOUBLE_LIST__INIT;
      l->n_values = rnd() % 4;
      l->values = pool_alloc(P, (l->n_values + 1) * 8);
      for (size_t i = 0; i < l->n_values; i++) l->values[i] = rnd_double();
      a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_DOUBLE_LIST, a->double_list = l;
      return enc_attr_doublelist(p, owner, name, nl, l->values, l->n_values);
    }
  }
}

/* Generous room for one random node: strings are at most 17000 bytes. */
#define NODE_ROOM (1u << 20)

static void test_random_nodes_written_field_by_field_match_protobuf_c(void **state) {
  (void)state;
  pool P = {0};
  enc_buf b = {0};
  for (int i = 0; i < 20000; i++) {
    chakra_node n = CHAKRA_PROTO_MSG__NODE__INIT;
    char *name = rnd_str(&P), *sfx = rnd() % 2 ? rnd_str(&P) : "";
    size_t an = strlen(name), bn = strlen(sfx);
    n.name = pool_alloc(&P, an + bn + 1);
    memcpy(n.name, name, an), memcpy(n.name + an, sfx, bn);
    n.id = rnd_u64();
    n.type = (ChakraProtoMsg__NodeType)(rnd() % 8);
    n.ctrl_deps = rnd_ids(&P, &n.n_ctrl_deps);
    n.data_deps = rnd_ids(&P, &n.n_data_deps);
    n.start_time_micros = rnd_u64();
    n.duration_micros = rnd_u64();
    b.n = 0;
    uint8_t *p = enc_room(&b, NODE_ROOM), *at = p;
    assert_non_null(p);
    p = enc_frame_open(p);
    p = enc_node_id(p, n.id);
    p = enc_node_name2(p, name, an, sfx, bn);
    p = enc_node_type(p, (int32_t)n.type);
    p = enc_node_deps(p, ENC_CTRL_DEPS, n.ctrl_deps, n.n_ctrl_deps);
    p = enc_node_deps(p, ENC_DATA_DEPS, n.data_deps, n.n_data_deps);
    p = enc_node_start_time(p, n.start_time_micros);
    p = enc_node_duration(p, n.duration_micros);
    if (rnd() % 3 == 0) {
      ChakraProtoMsg__IOInfo *io = pool_alloc(&P, sizeof *io);
      *io = (ChakraProtoMsg__IOInfo)CHAKRA_PROTO_MSG__IOINFO__INIT;
      io->values = rnd_str_or_null(&P), io->shapes = rnd_str_or_null(&P), io->types = rnd_str_or_null(&P);
      n.outputs = io;
      p = enc_node_io(p, 1, io->values, io->shapes, io->types);
    }
    n.n_attr = rnd() % 7;
    n.attr = pool_alloc(&P, n.n_attr * sizeof *n.attr);
    for (size_t k = 0; k < n.n_attr; k++)
      p = rnd_written_attr(&P, p, ENC_IN_NODE, n.attr[k] = pool_alloc(&P, sizeof(chakra_attr)));
    enc_done(&b, enc_frame_close(at, p));
    assert_encodes(b.p, b.n, &n.base);
    pool_free(&P);
  }
  enc_buf_free(&b);
}

static void test_metadata_written_field_by_field_matches_protobuf_c(void **state) {
  (void)state;
  pool P = {0};
  enc_buf b = {0};
  for (int i = 0; i < 5000; i++) {
    chakra_metadata m = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
    m.version = rnd_str(&P);
    b.n = 0;
    uint8_t *p = enc_room(&b, NODE_ROOM), *at = p;
    p = enc_meta_version(enc_frame_open(p), m.version, strlen(m.version));
    m.n_attr = rnd() % 5;
    m.attr = pool_alloc(&P, m.n_attr * sizeof *m.attr);
    for (size_t k = 0; k < m.n_attr; k++)
      p = rnd_written_attr(&P, p, ENC_IN_META, m.attr[k] = pool_alloc(&P, sizeof(chakra_attr)));
    enc_done(&b, enc_frame_close(at, p));
    assert_encodes(b.p, b.n, &m.base);
    pool_free(&P);
  }
  enc_buf_free(&b);
}

/* ------------------------------------------------------------ the builder */

/* Random builder calls in any order (attributes before or after the deps
 * and times) give protobuf-c's bytes of the message they describe. */
static void test_random_built_nodes_match_protobuf_c(void **state) {
  (void)state;
  pool P = {0};
  chakra_builder *bld;
  assert_int_equal(chakra_builder_new(&bld), 0);
  for (int i = 0; i < 5000; i++) {
    chakra_node n = CHAKRA_PROTO_MSG__NODE__INIT;
    n.id = rnd_u64(), n.name = rnd_str(&P), n.type = (ChakraProtoMsg__NodeType)(rnd() % 8);
    chakra_builder_node(bld, n.id, n.name, (int)n.type);
    n.n_attr = rnd() % 6;
    n.attr = pool_alloc(&P, n.n_attr * sizeof *n.attr);
    int deps_at = (int)(rnd() % (n.n_attr + 1));
    for (size_t k = 0; k <= n.n_attr; k++) {
      if ((int)k == deps_at) {
        n.data_deps = rnd_ids(&P, &n.n_data_deps);
        chakra_builder_data_deps(bld, n.data_deps, n.n_data_deps);
        n.ctrl_deps = rnd_ids(&P, &n.n_ctrl_deps);
        for (size_t j = 0; j < n.n_ctrl_deps; j++) chakra_builder_add_ctrl_dep(bld, n.ctrl_deps[j]);
        n.duration_micros = rnd_u64();
        chakra_builder_duration(bld, n.duration_micros);
        n.start_time_micros = rnd_u64();
        chakra_builder_start_time(bld, n.start_time_micros);
      }
      if (k == n.n_attr) break;
      chakra_attr *a = n.attr[k] = pool_alloc(&P, sizeof *a);
      *a = (chakra_attr)CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT;
      a->name = rnd_str(&P);
      switch (rnd() % 4) {
        case 0:
          a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL, a->int32_val = (int32_t)rnd_u64();
          chakra_builder_int32(bld, a->name, a->int32_val);
          break;
        case 1:
          a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL, a->string_val = rnd_str(&P);
          chakra_builder_string(bld, a->name, a->string_val);
          break;
        case 2:
          a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_DOUBLE_VAL, a->double_val = rnd_double();
          chakra_builder_double(bld, a->name, a->double_val);
          break;
        default:
          a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL, a->uint64_val = rnd_u64();
          chakra_builder_uint64(bld, a->name, a->uint64_val);
      }
    }
    if (rnd() % 3 == 0) {
      ChakraProtoMsg__IOInfo *io = pool_alloc(&P, sizeof *io);
      *io = (ChakraProtoMsg__IOInfo)CHAKRA_PROTO_MSG__IOINFO__INIT;
      io->values = rnd_str_or_null(&P), io->types = rnd_str_or_null(&P);
      n.inputs = io;
      chakra_builder_io(bld, 0, io->values, NULL, io->types);
    }
    chakra_builder_clear(bld);
    assert_int_equal(chakra_builder_put(bld, NULL), 0);
    size_t len;
    const uint8_t *got = chakra_builder_bytes(bld, &len);
    assert_encodes(got, len, &n.base);
    pool_free(&P);
  }
  chakra_builder_free(bld);
}

/* ------------------------------------------------------------ buffer */

static void test_append_framed_and_growth_keep_bytes(void **state) {
  (void)state;
  enc_buf b = {0};
  uint8_t big[300];
  for (size_t i = 0; i < sizeof big; i++) big[i] = (uint8_t)i;
  for (int i = 0; i < 100; i++) enc_append_framed(&b, big, sizeof big);
  assert_false(b.oom);
  assert_int_equal(b.n, 100 * (2 + sizeof big));
  for (int i = 0; i < 100; i++) {
    const uint8_t *m = b.p + i * (2 + sizeof big);
    assert_int_equal(m[0], 0xac), assert_int_equal(m[1], 0x02); /* 300 */
    assert_memory_equal(m + 2, big, sizeof big);
  }
  enc_buf_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_node_structs_encode_as_protobuf_c_packs_them),
      cmocka_unit_test(test_random_metadata_structs_encode_as_protobuf_c_packs_them),
      cmocka_unit_test(test_other_messages_are_packed_by_protobuf_c),
      cmocka_unit_test(test_random_nodes_written_field_by_field_match_protobuf_c),
      cmocka_unit_test(test_metadata_written_field_by_field_matches_protobuf_c),
      cmocka_unit_test(test_random_built_nodes_match_protobuf_c),
      cmocka_unit_test(test_append_framed_and_growth_keep_bytes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
