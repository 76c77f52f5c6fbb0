/* pbmsg.c - narrow views of AttributeProto for packing; see pbmsg.h. */
#include "pbmsg.h"

#include <pthread.h>

/* The value members the converters write, by kind (pbmsg.h). */
const ChakraProtoMsg__AttributeProto__ValueCase pbmsg_attr_case[PBMSG_ATTR_KINDS] = {
    CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL,  CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL,
    CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL,  CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL,
    CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_DOUBLE_VAL, CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL};

typedef struct attr_view {
  ProtobufCFieldDescriptor fields[3]; /* name, doc_string, the member */
  unsigned by_name[3];
  ProtobufCIntRange ranges[3];
} attr_view;

static attr_view views[PBMSG_ATTR_KINDS];
static ProtobufCMessageDescriptor view_desc[PBMSG_ATTR_KINDS];
const ProtobufCMessageDescriptor *pbmsg_attr_desc[PBMSG_ATTR_KINDS];
static pthread_once_t views_once = PTHREAD_ONCE_INIT;

static const ProtobufCFieldDescriptor *full_field(unsigned id) {
  const ProtobufCMessageDescriptor *d = &chakra_proto_msg__attribute_proto__descriptor;
  for (unsigned i = 0; i < d->n_fields; i++)
    if (d->fields[i].id == id) return &d->fields[i];
  return NULL;
}

/* The full descriptor with only three fields: the same offsets and
 * flags, so protobuf-c writes the same bytes while visiting 3 fields
 * instead of 32. */
static void build_view(int k) {
  const ProtobufCMessageDescriptor *full = &chakra_proto_msg__attribute_proto__descriptor;
  attr_view *v = &views[k];
  unsigned member = (unsigned)pbmsg_attr_case[k];
  v->fields[0] = *full_field(1);
  v->fields[1] = *full_field(2);
  v->fields[2] = *full_field(member);
  for (unsigned i = 0; i < 3; i++) v->by_name[i] = i;
  for (unsigned i = 0; i < 3; i++) /* three names: a bubble sort is plenty */
    for (unsigned j = 0; j + 1 < 3 - i; j++)
      if (strcmp(v->fields[v->by_name[j]].name, v->fields[v->by_name[j + 1]].name) > 0) {
        unsigned t = v->by_name[j];
        v->by_name[j] = v->by_name[j + 1];
        v->by_name[j + 1] = t;
      }
  /* number ranges, protobuf-c style: runs of consecutive ids, then a
   * sentinel holding the field count */
  unsigned nr = 0;
  v->ranges[nr++] = (ProtobufCIntRange){1, 0};
  if (member != 3) v->ranges[nr++] = (ProtobufCIntRange){(int)member, 2};
  v->ranges[nr] = (ProtobufCIntRange){0, 3};
  ProtobufCMessageDescriptor *d = &view_desc[k];
  *d = *full;
  d->n_fields = 3;
  d->fields = v->fields;
  d->fields_sorted_by_name = v->by_name;
  d->n_field_ranges = nr;
  d->field_ranges = v->ranges;
  pbmsg_attr_desc[k] = d;
}

static void build_views(void) {
  for (int k = 0; k < PBMSG_ATTR_KINDS; k++) build_view(k);
}

void pbmsg_init(void) { pthread_once(&views_once, build_views); }
