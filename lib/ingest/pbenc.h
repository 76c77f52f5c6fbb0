/* pbenc.h - protobuf wire encoding of Chakra messages by hand (private).
 *
 * The converters write hundreds of thousands of nodes whose attributes are
 * a fixed pattern; encoding the bytes directly (fields in field-number
 * order, as protobuf's serializers do) avoids building protobuf-c structs.
 * Field numbers and tags are those of proto/et_def.proto. */
#ifndef CHAKRA_INGEST_PBENC_H
#define CHAKRA_INGEST_PBENC_H

#include <stdint.h>
#include <string.h>

#include "ibuf.h"

/* Node fields */
#define PB_NODE_ID 0x08
#define PB_NODE_NAME 0x12
#define PB_NODE_TYPE 0x18
#define PB_NODE_CTRL 0x22
#define PB_NODE_DATA 0x2a
#define PB_NODE_START 0x30
#define PB_NODE_DUR 0x38
#define PB_NODE_INPUTS 0x42
#define PB_NODE_OUTPUTS 0x4a
#define PB_NODE_ATTR 0x52
/* GlobalMetadata fields */
#define PB_META_VERSION 0x0a
#define PB_META_ATTR 0x12
/* IOInfo fields */
#define PB_IO_VALUES 0x0a
#define PB_IO_SHAPES 0x12
#define PB_IO_TYPES 0x1a

static inline size_t pb_varint_len(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) v >>= 7, n++;
  return n;
}

static inline size_t pb_put_varint(unsigned char *d, uint64_t v) {
  size_t n = 0;
  while (v >= 0x80) {
    d[n++] = (unsigned char)(v | 0x80);
    v >>= 7;
  }
  d[n++] = (unsigned char)v;
  return n;
}

static inline void pb_varint(ibuf *b, uint64_t v) {
  unsigned char *d = (unsigned char *)ibuf_room(b, 10);
  if (d) b->n += pb_put_varint(d, v);
}

/* tag + varint */
static inline void pb_uint(ibuf *b, unsigned tag, uint64_t v) {
  unsigned char *d = (unsigned char *)ibuf_room(b, 12);
  if (!d) return;
  size_t n = 0;
  if (tag > 0x7f) d[n++] = (unsigned char)(tag | 0x80), d[n++] = (unsigned char)(tag >> 7);
  else d[n++] = (unsigned char)tag;
  b->n += n + pb_put_varint(d + n, v);
}

/* tag + length + bytes (tag may be a two-byte tag such as 0xea 0x01) */
static inline void pb_bytes(ibuf *b, unsigned tag, const void *s, size_t len) {
  unsigned char *d = (unsigned char *)ibuf_room(b, len + 12);
  if (!d) return;
  size_t n = 0;
  if (tag > 0x7f) d[n++] = (unsigned char)(tag | 0x80), d[n++] = (unsigned char)(tag >> 7);
  else d[n++] = (unsigned char)tag;
  n += pb_put_varint(d + n, len);
  if (len) memcpy(d + n, s, len);
  b->n += n + len;
}

/* AttributeProto value tags (field number << 3 | wire type) */
#define PB_ATTR_NAME 0x0a
#define PB_ATTR_DOUBLE ((3u << 3) | 1)
#define PB_ATTR_INT32 (7u << 3)
#define PB_ATTR_INT64 (9u << 3)
#define PB_ATTR_UINT64 (13u << 3)
#define PB_ATTR_BOOL (27u << 3)
#define PB_ATTR_STRING ((29u << 3) | 2)

/* One `attr` entry (Node field 10 or GlobalMetadata field 2) holding an
 * integer kind; a oneof member is written even when zero. */
static inline void pb_attr_int(ibuf *b, unsigned field_tag, const char *name, unsigned kind,
                               uint64_t v) {
  size_t nl = strlen(name);
  size_t body = 1 + pb_varint_len(nl) + nl + (kind > 0x7f ? 2 : 1) + pb_varint_len(v);
  pb_uint(b, field_tag, body); /* tag + length */
  pb_bytes(b, PB_ATTR_NAME, name, nl);
  pb_uint(b, kind, v);
}

static inline void pb_attr_str(ibuf *b, unsigned field_tag, const char *name, const char *s,
                               size_t sl) {
  size_t nl = strlen(name);
  size_t body = 1 + pb_varint_len(nl) + nl + 2 + pb_varint_len(sl) + sl;
  pb_uint(b, field_tag, body);
  pb_bytes(b, PB_ATTR_NAME, name, nl);
  pb_bytes(b, PB_ATTR_STRING, s, sl);
}

static inline void pb_attr_double(ibuf *b, unsigned field_tag, const char *name, double v) {
  size_t nl = strlen(name);
  size_t body = 1 + pb_varint_len(nl) + nl + 1 + 8;
  pb_uint(b, field_tag, body);
  pb_bytes(b, PB_ATTR_NAME, name, nl);
  unsigned char *d = (unsigned char *)ibuf_room(b, 9);
  if (!d) return;
  d[0] = PB_ATTR_DOUBLE;
  memcpy(d + 1, &v, 8); /* little-endian hosts only, as the rest of the library */
  b->n += 9;
}

/* pb_attr_int() for a name of known length below 128 and a one-byte kind
 * tag: one bounds check, no strlen (the per-node hot path). */
static inline void pb_attr_kind_n(ibuf *b, const char *name, size_t nl, unsigned kind, uint64_t v) {
  unsigned char *d = (unsigned char *)ibuf_room(b, nl + 18);
  if (!d) return;
  size_t vl = pb_varint_len(v);
  size_t k = 0;
  d[k++] = PB_NODE_ATTR;
  d[k++] = (unsigned char)(2 + nl + (kind > 0x7f ? 2 : 1) + vl);
  d[k++] = PB_ATTR_NAME;
  d[k++] = (unsigned char)nl;
  memcpy(d + k, name, nl);
  k += nl;
  if (kind > 0x7f) d[k++] = (unsigned char)(kind | 0x80), d[k++] = (unsigned char)(kind >> 7);
  else d[k++] = (unsigned char)kind;
  k += pb_put_varint(d + k, v);
  b->n += k;
}
#define PB_ATTR_KIND_LIT(b, lit, kind, v) pb_attr_kind_n(b, lit, sizeof(lit) - 1, kind, v)

/* packed repeated uint64 (field tag with wire type 2) */
static inline void pb_packed(ibuf *b, unsigned tag, const uint64_t *v, size_t n) {
  if (!n) return;
  size_t len = 0;
  for (size_t i = 0; i < n; i++) len += pb_varint_len(v[i]);
  pb_uint(b, tag, len);
  unsigned char *d = (unsigned char *)ibuf_room(b, len);
  if (!d) return;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) k += pb_put_varint(d + k, v[i]);
  b->n += k;
}

#endif
