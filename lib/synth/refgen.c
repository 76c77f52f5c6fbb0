/* refgen.c - the reference generator's fourteen test workloads
 * (mlcommons/chakra chakra_generator); see include/chakra/gen.h. */
#define CHAKRA_EXPERIMENTAL 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra/build.h"
#include "chakra/et_def.pb-c.h"
#include "chakra/gen.h"
#include "chakra/trace.h"

typedef ChakraProtoMsg__AttributeProto attr_t;

/* One workload being written: its files, its builder, and the id counter
 * the reference shares between every node of every file it writes. */
typedef struct refgen {
  const chakra_gen_reference_options *o;
  const char *dir;
  uint64_t *next_id;
  chakra_builder *b;
  chakra_workload_writer *w;
} refgen;

enum { KIND_COMP, KIND_MEM, KIND_COLL, KIND_P2P };

/* The node every workload but the metadata one holds: is_cpu_op false and
 * the attribute or duration its kind takes. */
static void build_node(refgen *g, const char *name, int type, int kind, int64_t comm_type, uint64_t size) {
  chakra_builder_node(g->b, (*g->next_id)++, name, type);
  chakra_builder_bool(g->b, "is_cpu_op", 0);
  if (kind == KIND_COMP) chakra_builder_duration(g->b, g->o->runtime);
  if (kind == KIND_MEM || kind == KIND_P2P) chakra_builder_uint64(g->b, "tensor_size", size);
  if (kind == KIND_COLL) {
    chakra_builder_int64(g->b, "comm_type", comm_type);
    chakra_builder_int64(g->b, "comm_size", (int64_t)size);
  }
}

static int put(refgen *g, uint32_t rank, chakra_error *err) {
  int rc = chakra_builder_put(g->b, err);
  if (!rc) rc = chakra_workload_writer_put_built(g->w, rank, g->b, err);
  chakra_builder_clear(g->b);
  return rc;
}

#define LIST(T, INIT, field, kind, ...)                                                              \
  static T field##_v[] = {__VA_ARGS__};                                                              \
  static ChakraProtoMsg__##INIT field##_l = CHAKRA_PROTO_MSG__##kind##__INIT;                        \
  field##_l.n_values = sizeof field##_v / sizeof *field##_v;                                         \
  field##_l.values = field##_v;

/* The METADATA_NODE with one attribute of every kind, values as the
 * reference's. */
static int put_metadata_node(refgen *g, uint32_t rank, chakra_error *err) {
  LIST(double, DoubleList, dl, DOUBLE_LIST, 1.2345, 2.3456)
  LIST(float, FloatList, fl, FLOAT_LIST, 1.2345f, 2.3456f)
  LIST(int32_t, Int32List, i32, INT32_LIST, 12345, 23456)
  LIST(int64_t, Int64List, i64, INT64_LIST, 9876543210, 1234567890)
  LIST(uint32_t, Uint32List, u32, UINT32_LIST, 12345, 23456)
  LIST(uint64_t, Uint64List, u64, UINT64_LIST, 9876543210, 1234567890)
  LIST(int32_t, Sint32List, s32, SINT32_LIST, 12345, -23456)
  LIST(int64_t, Sint64List, s64, SINT64_LIST, 9876543210, -1234567890)
  LIST(uint32_t, Fixed32List, f32, FIXED32_LIST, 12345, 23456)
  LIST(uint64_t, Fixed64List, f64, FIXED64_LIST, 9876543210, 1234567890)
  LIST(int32_t, Sfixed32List, sf32, SFIXED32_LIST, 12345, -23456)
  LIST(int64_t, Sfixed64List, sf64, SFIXED64_LIST, 9876543210, -1234567890)
  LIST(protobuf_c_boolean, BoolList, bl, BOOL_LIST, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0)
  LIST(char *, StringList, sl, STRING_LIST, "12345", "12346", "12347", "12348", "12349", "12350", "12351", "12352",
       "12353", "12354")
  /* "12345" .. "12354", as the string list, as bytes */
  static uint8_t digits[10][6];
  static ProtobufCBinaryData byl_v[10];
  static ChakraProtoMsg__BytesList byl_l = CHAKRA_PROTO_MSG__BYTES_LIST__INIT;
  for (int i = 0; i < 10; i++) {
    snprintf((char *)digits[i], sizeof digits[i], "%d", 12345 + i);
    byl_v[i] = (ProtobufCBinaryData){5, digits[i]};
  }
  byl_l.n_values = 10;
  byl_l.values = byl_v;
#define A(n, c, member, v, doc) \
  {PROTOBUF_C_MESSAGE_INIT(&chakra_proto_msg__attribute_proto__descriptor), n, doc, CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_##c, {.member = v}}
  static char empty[] = "";
  attr_t attrs[] = {
      A("double", DOUBLE_VAL, double_val, 1.2345, "double"),
      A("double_list", DOUBLE_LIST, double_list, &dl_l, empty),
      A("float", FLOAT_VAL, float_val, 1.2345f, "float"),
      A("float_list", FLOAT_LIST, float_list, &fl_l, empty),
      A("int32", INT32_VAL, int32_val, 12345, "int32"),
      A("int32_list", INT32_LIST, int32_list, &i32_l, empty),
      A("int64", INT64_VAL, int64_val, 9876543210, "int64"),
      A("int64_list", INT64_LIST, int64_list, &i64_l, empty),
      A("uint32", UINT32_VAL, uint32_val, 12345, "uint32"),
      A("uint32_list", UINT32_LIST, uint32_list, &u32_l, empty),
      A("uint64", UINT64_VAL, uint64_val, 9876543210, "uint64"),
      A("uint64_list", UINT64_LIST, uint64_list, &u64_l, empty),
      A("sint32", SINT32_VAL, sint32_val, -12345, "sint32"),
      A("sint32_list", SINT32_LIST, sint32_list, &s32_l, empty),
      A("sint64", SINT64_VAL, sint64_val, -9876543210, "sint64"),
      A("sint64_list", SINT64_LIST, sint64_list, &s64_l, empty),
      A("fixed32", FIXED32_VAL, fixed32_val, 12345, empty),
      A("fixed32_list", FIXED32_LIST, fixed32_list, &f32_l, empty),
      A("fixed64", FIXED64_VAL, fixed64_val, 9876543210, empty),
      A("fixed64_list", FIXED64_LIST, fixed64_list, &f64_l, empty),
      A("sfixed32", SFIXED32_VAL, sfixed32_val, -12345, empty),
      A("sfixed32_list", SFIXED32_LIST, sfixed32_list, &sf32_l, empty),
      A("sfixed64", SFIXED64_VAL, sfixed64_val, -9876543210, empty),
      A("sfixed64_list", SFIXED64_LIST, sfixed64_list, &sf64_l, empty),
      A("bool", BOOL_VAL, bool_val, 1, "bool"),
      A("bool_list", BOOL_LIST, bool_list, &bl_l, empty),
      A("string", STRING_VAL, string_val, "12345", "string"),
      A("string_list", STRING_LIST, string_list, &sl_l, empty),
      A("bytes", BYTES_VAL, bytes_val, ((ProtobufCBinaryData){5, digits[0]}), empty),
      A("bytes_list", BYTES_LIST, bytes_list, &byl_l, empty),
  };
#undef A
  attr_t *ptrs[sizeof attrs / sizeof *attrs];
  for (size_t i = 0; i < sizeof attrs / sizeof *attrs; i++) ptrs[i] = &attrs[i];
  ChakraProtoMsg__Node node = CHAKRA_PROTO_MSG__NODE__INIT;
  node.id = (*g->next_id)++;
  node.name = "METADATA_NODE";
  node.type = CHAKRA_PROTO_MSG__NODE_TYPE__METADATA_NODE;
  node.n_attr = sizeof ptrs / sizeof *ptrs;
  node.attr = ptrs;
  return chakra_workload_writer_put(g->w, rank, &node.base, err);
}

/* The reference's workloads, in the order it writes them (which numbers
 * the nodes). */
static const struct {
  const char *file, *name;
  int type, kind, nodes, dependent;
  int64_t comm_type;
} workloads[] = {
    {"one_metadata_node_all_types", "METADATA_NODE", CHAKRA_PROTO_MSG__NODE_TYPE__METADATA_NODE, -1, 1, 0, 0},
    {"one_remote_mem_load_node", "MEM_LOAD_NODE", CHAKRA_PROTO_MSG__NODE_TYPE__MEM_LOAD_NODE, KIND_MEM, 1, 0, 0},
    {"one_remote_mem_store_node", "MEM_STORE_NODE", CHAKRA_PROTO_MSG__NODE_TYPE__MEM_STORE_NODE, KIND_MEM, 1, 0, 0},
    {"one_comp_node", "COMP_NODE", CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE, KIND_COMP, 1, 0, 0},
    {"two_comp_nodes_independent", "COMP_NODE", CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE, KIND_COMP, 2, 0, 0},
    {"two_comp_nodes_dependent", "COMP_NODE", CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE, KIND_COMP, 2, 1, 0},
    {"ALL_REDUCE", "ALL_REDUCE", CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE, KIND_COLL, 1, 0,
     CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_REDUCE},
    {"ALL_TO_ALL", "ALL_TO_ALL", CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE, KIND_COLL, 1, 0,
     CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_TO_ALL},
    {"ALL_GATHER", "ALL_GATHER", CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE, KIND_COLL, 1, 0,
     CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_GATHER},
    {"REDUCE_SCATTER", "REDUCE_SCATTER", CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE, KIND_COLL, 1, 0,
     CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__REDUCE_SCATTER},
    {"BROADCAST", "BROADCAST", CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE, KIND_COLL, 1, 0,
     CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__BROADCAST},
    {"BARRIER", "BARRIER", CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE, KIND_COLL, 1, 0,
     CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__BARRIER},
    {"one_comm_send_node", "COMM_SEND_NODE", CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE, KIND_P2P, 1, 0, 0},
    {"one_comm_recv_node", "COMM_RECV_NODE", CHAKRA_PROTO_MSG__NODE_TYPE__COMM_RECV_NODE, KIND_P2P, 1, 0, 0},
};

static uint64_t size_of(const refgen *g, int k) {
  if (workloads[k].kind == KIND_COLL)
    return workloads[k].comm_type == CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__BARRIER ? 0 : g->o->comm_size;
  return g->o->tensor_size;
}

/* Rank r's file of workload k. */
static int put_rank(refgen *g, int k, uint32_t r, chakra_error *err) {
  chakra_builder_metadata(g->b, "1.0.0");
  int rc = put(g, r, err);
  if (!rc && workloads[k].kind < 0) return put_metadata_node(g, r, err);
  for (int i = 0; !rc && i < workloads[k].nodes; i++) {
    build_node(g, workloads[k].name, workloads[k].type, workloads[k].kind, workloads[k].comm_type, size_of(g, k));
    if (i && workloads[k].dependent) chakra_builder_add_data_dep(g->b, *g->next_id - 2);
    rc = put(g, r, err);
  }
  return rc;
}

static int put_workload(refgen *g, int k, chakra_error *err) {
  size_t n = strlen(g->dir) + strlen(workloads[k].file) + 2;
  char *prefix = malloc(n);
  if (!prefix) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  snprintf(prefix, n, "%s/%s", g->dir, workloads[k].file);
  int rc = chakra_workload_writer_open(&g->w, prefix, g->o->npus, NULL, err);
  free(prefix);
  for (uint32_t r = 0; r < g->o->npus && !rc; r++) rc = put_rank(g, k, r, err);
  if (rc) {
    if (g->w) chakra_workload_writer_discard(g->w);
    return rc;
  }
  return chakra_workload_writer_commit(g->w, err);
}

int chakra_gen_reference(const char *dir, const chakra_gen_reference_options *o, chakra_error *err) {
  if (!o->npus) return chakra_error_set(err, CHAKRA_EINVAL, "npus must be at least 1");
  if (o->comm_size > INT64_MAX)
    return chakra_error_set(err, CHAKRA_EINVAL, "comm_size %llu is larger than a comm_size can hold",
                            (unsigned long long)o->comm_size);
  uint64_t next_id = 0;
  refgen g = {.o = o, .dir = dir, .next_id = &next_id};
  int rc = chakra_builder_new(&g.b);
  if (rc) return chakra_error_set(err, rc, "out of memory");
  for (size_t k = 0; !rc && k < sizeof workloads / sizeof *workloads; k++) rc = put_workload(&g, (int)k, err);
  chakra_builder_free(g.b);
  return rc;
}
