/* encode.c - the Chakra message encoder; see encode.h.
 *
 * Where a rule below looks arbitrary it is protobuf-c's (1.4, protobuf-c.c):
 * proto3 scalars and strings are left out when zero or empty, a oneof
 * member is written whatever its value (except a NULL string or message,
 * or a string that is the descriptor's default pointer), a NULL element of
 * a repeated message field is written as an empty message, unknown fields
 * follow the known ones as they were read. */
#include "encode.h"

#include <stdlib.h>

/* ------------------------------------------------------------ buffer */

void enc_append(enc_buf *b, const void *data, size_t len) {
  uint8_t *p = len ? enc_room(b, len) : NULL;
  if (p) enc_done(b, enc_copy(p, data, len));
}

void enc_append_framed(enc_buf *b, const void *msg, size_t len) {
  uint8_t *p = enc_room(b, len + ENC_VARINT_MAX);
  if (!p) return;
  p = enc_varint(p, len);
  if (len) memcpy(p, msg, len);
  enc_done(b, p + len);
}

uint8_t *enc_frame_close_long(uint8_t *at, uint8_t *end) {
  size_t n = (size_t)(end - at) - 1, k = enc_vlen(n);
  memmove(at + k, at + 1, n);
  enc_varint(at, n);
  return at + k + n;
}

/* ------------------------------------------------------------ fields */

/* A string whose length is not known yet: 0 for NULL. */
static size_t slen(const char *s) { return s ? strlen(s) : 0; }

static uint8_t *put_str(uint8_t *p, unsigned key, const char *s, size_t n) {
  if (!n) return p;
  p = enc_varint(p, key);
  p = enc_varint(p, n);
  memcpy(p, s, n);
  return p + n;
}

uint8_t *enc_node_io(uint8_t *p, int which, const char *values, const char *shapes, const char *types) {
  *p++ = (uint8_t)((which ? 9 : 8) << 3 | 2);
  uint8_t *at = p;
  p = enc_frame_open(p);
  p = put_str(p, 1 << 3 | 2, values, slen(values));
  p = put_str(p, 2 << 3 | 2, shapes, slen(shapes));
  p = put_str(p, 3 << 3 | 2, types, slen(types));
  return enc_frame_close(at, p);
}

size_t enc_strlist_payload(const char *const *v, size_t n) {
  size_t len = 0;
  for (size_t i = 0; i < n; i++) {
    size_t l = slen(v[i]);
    len += 1 + enc_vlen(l) + l;
  }
  return len;
}

/* A list value: the attribute's head, the list's key and length. */
static uint8_t *list_head(uint8_t *p, int owner, const char *name, size_t nl, unsigned key, size_t list) {
  p = enc_attr_head(p, owner, name, nl, enc_attr_name_len(nl) + enc_vlen(key) + enc_vlen(list) + list);
  p = enc_varint(p, key);
  return enc_varint(p, list);
}

uint8_t *enc_attr_strlist(uint8_t *p, int owner, const char *name, size_t nl, const char *const *v, size_t n,
                          size_t payload) {
  p = list_head(p, owner, name, nl, ENC_STRING_LIST, payload);
  for (size_t i = 0; i < n; i++) { /* empty strings too: a list keeps every element */
    size_t l = slen(v[i]);
    *p++ = 1 << 3 | 2;
    p = enc_varint(p, l);
    if (l) memcpy(p, v[i], l);
    p += l;
  }
  return p;
}

/* A packed list message of n varints (payload bytes): key, length, body. */
static size_t packed_len(size_t payload) { return payload ? 1 + enc_vlen(payload) + payload : 0; }

uint8_t *enc_attr_i64list(uint8_t *p, int owner, const char *name, size_t nl, const int64_t *v, size_t n) {
  size_t payload = 0;
  for (size_t i = 0; i < n; i++) payload += enc_vlen((uint64_t)v[i]);
  p = list_head(p, owner, name, nl, ENC_INT64_LIST, packed_len(payload));
  if (!n) return p;
  *p++ = 1 << 3 | 2;
  p = enc_varint(p, payload);
  for (size_t i = 0; i < n; i++) p = enc_varint(p, (uint64_t)v[i]);
  return p;
}

uint8_t *enc_attr_u64list(uint8_t *p, int owner, const char *name, size_t nl, const uint64_t *v, size_t n) {
  size_t payload = 0;
  for (size_t i = 0; i < n; i++) payload += enc_vlen(v[i]);
  p = list_head(p, owner, name, nl, ENC_UINT64_LIST, packed_len(payload));
  if (!n) return p;
  *p++ = 1 << 3 | 2;
  p = enc_varint(p, payload);
  for (size_t i = 0; i < n; i++) p = enc_varint(p, v[i]);
  return p;
}

static uint8_t *put_fixed(uint8_t *p, uint64_t bits, int bytes) {
  for (int i = 0; i < bytes; i++) *p++ = (uint8_t)(bits >> 8 * i);
  return p;
}

uint8_t *enc_attr_doublelist(uint8_t *p, int owner, const char *name, size_t nl, const double *v, size_t n) {
  p = list_head(p, owner, name, nl, ENC_DOUBLE_LIST, packed_len(8 * n));
  if (!n) return p;
  *p++ = 1 << 3 | 2;
  p = enc_varint(p, 8 * n);
  for (size_t i = 0; i < n; i++) {
    uint64_t bits;
    memcpy(&bits, &v[i], 8);
    p = put_fixed(p, bits, 8);
  }
  return p;
}

/* ------------------------------------------------------------ protobuf-c structs
 * Field by field into a buffer that grows: each writer reserves its own
 * room, and a nested message is a frame kept by its offset (the buffer may
 * move while it is open). */

static void key_varint(enc_buf *b, unsigned key, uint64_t v) {
  uint8_t *p = enc_room(b, 2 * ENC_VARINT_MAX);
  if (p) enc_done(b, enc_varint(enc_varint(p, key), v));
}

static void key_bytes(enc_buf *b, unsigned key, const void *d, size_t n) {
  uint8_t *p = enc_room(b, ENC_FIELD_MAX(n));
  if (!p) return;
  p = enc_varint(enc_varint(p, key), n);
  if (n) memcpy(p, d, n);
  enc_done(b, p + n);
}

static void key_fixed(enc_buf *b, unsigned key, uint64_t bits, int bytes) {
  uint8_t *p = enc_room(b, ENC_FIELD_MAX(8));
  if (p) enc_done(b, put_fixed(enc_varint(p, key), bits, bytes));
}

/* A proto3 string field: left out when NULL or empty. */
static void str_field(enc_buf *b, unsigned key, const char *s) {
  if (s && *s) key_bytes(b, key, s, strlen(s));
}

/* Opens a nested message under key; returns the offset of its length. */
static size_t sub_open(enc_buf *b, unsigned key) {
  uint8_t *p = enc_room(b, ENC_VARINT_MAX + 1);
  if (!p) return 0;
  p = enc_varint(p, key);
  size_t at = (size_t)(p - b->p);
  enc_done(b, enc_frame_open(p));
  return at;
}

static void sub_close(enc_buf *b, size_t at) {
  uint8_t *p = enc_room(b, ENC_FRAME_GROWTH);
  if (p) enc_done(b, enc_frame_close(b->p + at, p));
}

static void unknown_fields(enc_buf *b, const ProtobufCMessage *m) {
  for (unsigned i = 0; i < m->n_unknown_fields; i++) {
    const ProtobufCMessageUnknownField *u = &m->unknown_fields[i];
    uint8_t *p = enc_room(b, ENC_FIELD_MAX(u->len));
    if (!p) return;
    p = enc_varint(p, (uint64_t)u->tag << 3 | u->wire_type);
    if (u->len) memcpy(p, u->data, u->len);
    enc_done(b, p + u->len);
  }
}

static uint32_t zigzag32(int32_t v) { return v < 0 ? (-(uint32_t)v) * 2 - 1 : (uint32_t)v * 2; }
static uint64_t zigzag64(int64_t v) { return v < 0 ? (-(uint64_t)v) * 2 - 1 : (uint64_t)v * 2; }

/* How the elements of a list are laid out in memory and on the wire. */
enum { E_U64, E_I32, E_U32, E_S32, E_S64, E_BOOL, E_F32, E_F64 };

static uint64_t elem(const void *arr, size_t i, int kind) {
  switch (kind) {
    case E_I32: return (uint64_t)(int64_t)((const int32_t *)arr)[i];
    case E_U32: case E_F32: return ((const uint32_t *)arr)[i];
    case E_S32: return zigzag32(((const int32_t *)arr)[i]);
    case E_S64: return zigzag64(((const int64_t *)arr)[i]);
    case E_BOOL: return ((const protobuf_c_boolean *)arr)[i] ? 1 : 0;
    default: return ((const uint64_t *)arr)[i]; /* E_U64, E_F64 */
  }
}

/* A packed repeated field of n elements (nothing when n is 0). */
static void packed(enc_buf *b, unsigned key, const void *arr, size_t n, int kind) {
  if (!n) return;
  size_t fixed = kind == E_F32 ? 4 : kind == E_F64 ? 8 : 0, payload = fixed * n;
  for (size_t i = 0; !fixed && i < n; i++) payload += enc_vlen(elem(arr, i, kind));
  uint8_t *p = enc_room(b, ENC_FIELD_MAX(payload));
  if (!p) return;
  p = enc_varint(enc_varint(p, key), payload);
  for (size_t i = 0; i < n; i++) p = fixed ? put_fixed(p, elem(arr, i, kind), (int)fixed) : enc_varint(p, elem(arr, i, kind));
  enc_done(b, p);
}

/* The list messages share one layout; each has the field `values` (1). */
#define LIST_BODY(T, kind)                                     \
  do {                                                         \
    const T *l = (const void *)m;                              \
    packed(b, 1 << 3 | 2, l->values, l->n_values, kind);       \
  } while (0)

static void strings(enc_buf *b, char *const *v, size_t n) {
  for (size_t i = 0; i < n; i++) key_bytes(b, 1 << 3 | 2, v[i], slen(v[i]));
}

static void list_value(enc_buf *b, unsigned field, const ProtobufCMessage *m) {
  if (!m) return; /* a NULL oneof message is absent */
  size_t at = sub_open(b, field << 3 | 2);
  switch (field) {
    case 4: LIST_BODY(ChakraProtoMsg__DoubleList, E_F64); break;
    case 6: LIST_BODY(ChakraProtoMsg__FloatList, E_F32); break;
    case 8: LIST_BODY(ChakraProtoMsg__Int32List, E_I32); break;
    case 10: LIST_BODY(ChakraProtoMsg__Int64List, E_U64); break;
    case 12: LIST_BODY(ChakraProtoMsg__Uint32List, E_U32); break;
    case 14: LIST_BODY(ChakraProtoMsg__Uint64List, E_U64); break;
    case 16: LIST_BODY(ChakraProtoMsg__Sint32List, E_S32); break;
    case 18: LIST_BODY(ChakraProtoMsg__Sint64List, E_S64); break;
    case 20: LIST_BODY(ChakraProtoMsg__Fixed32List, E_F32); break;
    case 22: LIST_BODY(ChakraProtoMsg__Fixed64List, E_F64); break;
    case 24: LIST_BODY(ChakraProtoMsg__Sfixed32List, E_F32); break;
    case 26: LIST_BODY(ChakraProtoMsg__Sfixed64List, E_F64); break;
    case 28: LIST_BODY(ChakraProtoMsg__BoolList, E_BOOL); break;
    case 30: {
      const ChakraProtoMsg__StringList *l = (const void *)m;
      strings(b, l->values, l->n_values);
      break;
    }
    default: { /* 32 */
      const ChakraProtoMsg__BytesList *l = (const void *)m;
      for (size_t i = 0; i < l->n_values; i++) key_bytes(b, 1 << 3 | 2, l->values[i].data, l->values[i].len);
    }
  }
  unknown_fields(b, m);
  sub_close(b, at);
}

static void attr_value(enc_buf *b, const ChakraProtoMsg__AttributeProto *a) {
  unsigned f = (unsigned)a->value_case, key = f << 3;
  uint64_t bits;
  switch (f) {
    case 3: memcpy(&bits, &a->double_val, 8), key_fixed(b, key | 1, bits, 8); break;
    case 5: {
      uint32_t w;
      memcpy(&w, &a->float_val, 4);
      key_fixed(b, key | 5, w, 4);
      break;
    }
    case 7: key_varint(b, key, (uint64_t)(int64_t)a->int32_val); break;
    case 9: key_varint(b, key, (uint64_t)a->int64_val); break;
    case 11: key_varint(b, key, a->uint32_val); break;
    case 13: key_varint(b, key, a->uint64_val); break;
    case 15: key_varint(b, key, zigzag32(a->sint32_val)); break;
    case 17: key_varint(b, key, zigzag64(a->sint64_val)); break;
    case 19: key_fixed(b, key | 5, a->fixed32_val, 4); break;
    case 21: key_fixed(b, key | 1, a->fixed64_val, 8); break;
    case 23: key_fixed(b, key | 5, (uint32_t)a->sfixed32_val, 4); break;
    case 25: key_fixed(b, key | 1, (uint64_t)a->sfixed64_val, 8); break;
    case 27: key_varint(b, key, a->bool_val ? 1 : 0); break;
    case 29:
      if (a->string_val && a->string_val != protobuf_c_empty_string)
        key_bytes(b, key | 2, a->string_val, strlen(a->string_val));
      break;
    case 31: key_bytes(b, key | 2, a->bytes_val.data, a->bytes_val.len); break;
    case 4: list_value(b, f, (const ProtobufCMessage *)a->double_list); break;
    case 6: list_value(b, f, (const ProtobufCMessage *)a->float_list); break;
    case 8: list_value(b, f, (const ProtobufCMessage *)a->int32_list); break;
    case 10: list_value(b, f, (const ProtobufCMessage *)a->int64_list); break;
    case 12: list_value(b, f, (const ProtobufCMessage *)a->uint32_list); break;
    case 14: list_value(b, f, (const ProtobufCMessage *)a->uint64_list); break;
    case 16: list_value(b, f, (const ProtobufCMessage *)a->sint32_list); break;
    case 18: list_value(b, f, (const ProtobufCMessage *)a->sint64_list); break;
    case 20: list_value(b, f, (const ProtobufCMessage *)a->fixed32_list); break;
    case 22: list_value(b, f, (const ProtobufCMessage *)a->fixed64_list); break;
    case 24: list_value(b, f, (const ProtobufCMessage *)a->sfixed32_list); break;
    case 26: list_value(b, f, (const ProtobufCMessage *)a->sfixed64_list); break;
    case 28: list_value(b, f, (const ProtobufCMessage *)a->bool_list); break;
    case 30: list_value(b, f, (const ProtobufCMessage *)a->string_list); break;
    case 32: list_value(b, f, (const ProtobufCMessage *)a->bytes_list); break;
    default: break; /* no value, or a case protobuf-c would not write either */
  }
}

static void attrs(enc_buf *b, unsigned key, ChakraProtoMsg__AttributeProto *const *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    size_t at = sub_open(b, key);
    if (v[i]) {
      str_field(b, 1 << 3 | 2, v[i]->name);
      str_field(b, 2 << 3 | 2, v[i]->doc_string);
      attr_value(b, v[i]);
      unknown_fields(b, &v[i]->base);
    }
    sub_close(b, at);
  }
}

static void io_struct(enc_buf *b, unsigned field, const ChakraProtoMsg__IOInfo *io) {
  if (!io) return;
  size_t at = sub_open(b, field << 3 | 2);
  str_field(b, 1 << 3 | 2, io->values);
  str_field(b, 2 << 3 | 2, io->shapes);
  str_field(b, 3 << 3 | 2, io->types);
  unknown_fields(b, &io->base);
  sub_close(b, at);
}

static void node_struct(enc_buf *b, const ChakraProtoMsg__Node *n) {
  uint8_t *p = enc_room(b, ENC_FIELD_MAX(0));
  if (!p) return;
  enc_done(b, enc_node_id(p, n->id));
  str_field(b, 2 << 3 | 2, n->name);
  if ((p = enc_room(b, ENC_FIELD_MAX(0)))) enc_done(b, enc_node_type(p, (int32_t)n->type));
  packed(b, ENC_CTRL_DEPS << 3 | 2, n->ctrl_deps, n->n_ctrl_deps, E_U64);
  packed(b, ENC_DATA_DEPS << 3 | 2, n->data_deps, n->n_data_deps, E_U64);
  if ((p = enc_room(b, 2 * ENC_FIELD_MAX(0))))
    enc_done(b, enc_node_duration(enc_node_start_time(p, n->start_time_micros), n->duration_micros));
  io_struct(b, 8, n->inputs);
  io_struct(b, 9, n->outputs);
  attrs(b, ENC_IN_NODE, n->attr, n->n_attr);
  unknown_fields(b, &n->base);
}

static void meta_struct(enc_buf *b, const ChakraProtoMsg__GlobalMetadata *m) {
  str_field(b, 1 << 3 | 2, m->version);
  attrs(b, ENC_IN_META, m->attr, m->n_attr);
  unknown_fields(b, &m->base);
}

size_t enc_message(enc_buf *b, const ProtobufCMessage *m) {
  uint8_t *p = enc_room(b, 1);
  if (!p) return 0;
  size_t at = b->n;
  enc_done(b, enc_frame_open(p));
  if (m->descriptor == &chakra_proto_msg__node__descriptor) {
    node_struct(b, (const ChakraProtoMsg__Node *)m);
  } else if (m->descriptor == &chakra_proto_msg__global_metadata__descriptor) {
    meta_struct(b, (const ChakraProtoMsg__GlobalMetadata *)m);
  } else { /* not an ET message: protobuf-c's own packing */
    size_t len = protobuf_c_message_get_packed_size(m);
    if ((p = enc_room(b, len))) enc_done(b, p + protobuf_c_message_pack(m, p));
  }
  size_t len = b->n - at - 1;
  sub_close(b, at);
  return b->oom ? 0 : len;
}
