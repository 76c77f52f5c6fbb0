/* pbfield.h - how protobuf-c lays out one field value in memory (private).
 *
 * jsonize walks protobuf-c messages and pack fills them, both generically
 * through descriptors; both need the size of one element of a field. */
#ifndef CHAKRA_PBFIELD_H
#define CHAKRA_PBFIELD_H

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>

static inline size_t pbfield_elem_size(const ProtobufCFieldDescriptor *f) {
  switch (f->type) {
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_DOUBLE:
      return 8;
    case PROTOBUF_C_TYPE_STRING: case PROTOBUF_C_TYPE_MESSAGE:
      return sizeof(void *);
    case PROTOBUF_C_TYPE_BYTES:
      return sizeof(ProtobufCBinaryData);
    case PROTOBUF_C_TYPE_BOOL:
      return sizeof(protobuf_c_boolean);
    default:
      return 4;
  }
}

#endif
