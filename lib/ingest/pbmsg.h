/* pbmsg.h - Chakra messages built for protobuf-c (private to lib/ingest).
 *
 * The converters fill ChakraProtoMsg structs for one message at a time in
 * an arena that is reset before the next (so no malloc per node) and let
 * protobuf-c serialize them; chakra_varint_encode() frames each message.
 * Strings are borrowed, never copied: they must outlive the packing. */
#ifndef CHAKRA_INGEST_PBMSG_H
#define CHAKRA_INGEST_PBMSG_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../util/arena.h"
#include "chakra/et_def.pb-c.h"
#include "chakra/trace.h"
#include "ibuf.h"

typedef ChakraProtoMsg__AttributeProto pbattr;

/* protobuf-c packs a message by visiting every field of its descriptor,
 * and AttributeProto has 32, one set. Each attribute is therefore packed
 * through a view of the descriptor with just name, doc_string and its own
 * value member (pbmsg.c): identical bytes, a third of the converter's
 * packing work. The views are built by pbmsg_init() (pbattrs_start()
 * calls it). */
enum { PBMSG_INT64, PBMSG_UINT64, PBMSG_INT32, PBMSG_BOOL, PBMSG_DOUBLE, PBMSG_STRING, PBMSG_ATTR_KINDS };
extern const ProtobufCMessageDescriptor *pbmsg_attr_desc[PBMSG_ATTR_KINDS];
extern const ChakraProtoMsg__AttributeProto__ValueCase pbmsg_attr_case[PBMSG_ATTR_KINDS];
void pbmsg_init(void);

/* A growing list of attributes in an arena; a failed allocation is sticky
 * (oom) and later additions are dropped. */
typedef struct pbattrs {
  arena *a;
  pbattr **v;
  size_t n, cap;
  int oom;
} pbattrs;

static inline void pbattrs_start(pbattrs *l, arena *a, size_t cap) {
  pbmsg_init();
  l->a = a;
  l->n = 0;
  l->cap = cap ? cap : 1;
  l->v = arena_alloc(a, l->cap * sizeof *l->v);
  l->oom = l->v == NULL;
}

/* A new attribute called name with the value member of kind `kind`, to
 * be set by the caller; NULL once out of memory. The name is borrowed. */
static inline pbattr *pbattrs_add(pbattrs *l, const char *name, int kind) {
  if (l->oom) return NULL;
  if (l->n == l->cap) {
    pbattr **v = arena_alloc(l->a, 2 * l->cap * sizeof *v);
    if (!v) {
      l->oom = 1;
      return NULL;
    }
    memcpy(v, l->v, l->n * sizeof *v);
    l->v = v;
    l->cap *= 2;
  }
  pbattr *x = arena_alloc(l->a, sizeof *x);
  if (!x) {
    l->oom = 1;
    return NULL;
  }
  chakra_proto_msg__attribute_proto__init(x);
  x->base.descriptor = pbmsg_attr_desc[kind];
  x->name = (char *)name;
  x->value_case = pbmsg_attr_case[kind];
  l->v[l->n++] = x;
  return x;
}

static inline void pbattrs_int64(pbattrs *l, const char *name, int64_t v) {
  pbattr *x = pbattrs_add(l, name, PBMSG_INT64);
  if (x) x->int64_val = v;
}

static inline void pbattrs_uint64(pbattrs *l, const char *name, uint64_t v) {
  pbattr *x = pbattrs_add(l, name, PBMSG_UINT64);
  if (x) x->uint64_val = v;
}

static inline void pbattrs_int32(pbattrs *l, const char *name, int32_t v) {
  pbattr *x = pbattrs_add(l, name, PBMSG_INT32);
  if (x) x->int32_val = v;
}

static inline void pbattrs_bool(pbattrs *l, const char *name, int v) {
  pbattr *x = pbattrs_add(l, name, PBMSG_BOOL);
  if (x) x->bool_val = v != 0;
}

static inline void pbattrs_double(pbattrs *l, const char *name, double v) {
  pbattr *x = pbattrs_add(l, name, PBMSG_DOUBLE);
  if (x) x->double_val = v;
}

/* s is borrowed. An empty string is still written (a oneof member is
 * present whatever its value) because s is never protobuf-c's own
 * default-value pointer. */
static inline void pbattrs_str(pbattrs *l, const char *name, const char *s) {
  pbattr *x = pbattrs_add(l, name, PBMSG_STRING);
  if (x) x->string_val = (char *)s;
}

/* Appends msg with its length prefix to b (b->oom on failure). */
static inline void pbmsg_put(ibuf *b, const ProtobufCMessage *msg) {
  size_t len = protobuf_c_message_get_packed_size(msg);
  uint8_t pre[10];
  size_t k = chakra_varint_encode(len, pre);
  char *d = ibuf_room(b, k + len);
  if (!d) return;
  memcpy(d, pre, k);
  protobuf_c_message_pack(msg, (uint8_t *)d + k);
  b->n += k + len;
}

#endif
