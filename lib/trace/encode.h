/* encode.h - the one encoder of Chakra messages (private to libchakra).
 *
 * Every Node and GlobalMetadata that chakra-c writes is encoded here
 * (synth, coll, the builder of include/chakra/build.h and the trace
 * writers), byte for byte as protobuf-c packs it: fields in number order,
 * proto3 zero values left out, dependency lists packed, int32 values
 * sign-extended to ten bytes. tests/unit/test_encode.c holds random
 * messages against protobuf_c_message_pack; protobuf-c stays the decoder.
 *
 * Two ways in. Producers that know the shape of their nodes reserve room
 * once per node (enc_room, with the ENC_*_MAX bounds) and write the
 * fields in number order through the inline writers below: no descriptor
 * walk, no size pass. Messages that exist as protobuf-c structs (read from
 * a file, built by pack) go through enc_message(). bench/encbench.c
 * measures both. */
#ifndef CHAKRA_TRACE_ENCODE_H
#define CHAKRA_TRACE_ENCODE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "chakra/et_def.pb-c.h"
#include "../util/strbuf.h"

/* ------------------------------------------------------------ buffer */

/* The output is lib/util's byte buffer: oom is set, and stays set, when a
 * growth failed; writers then stop writing (enc_room returns NULL). */
typedef strbuf enc_buf;

static inline void enc_buf_free(enc_buf *b) { strbuf_free(b); }

/* Where the next k bytes go (b->p + b->n), or NULL when out of memory. */
static inline uint8_t *enc_room(enc_buf *b, size_t k) { return strbuf_room(b, k); }

/* The bytes up to end (inside the room last reserved) are written. */
static inline void enc_done(enc_buf *b, const uint8_t *end) { b->n = (size_t)(end - b->p); }

/* Appends bytes as they are; appends one message with its length prefix. */
void enc_append(enc_buf *b, const void *data, size_t len);
void enc_append_framed(enc_buf *b, const void *msg, size_t len);

/* ------------------------------------------------------------ bounds */

/* One field carrying len bytes: key (two bytes: field numbers up to 2047),
 * a length or varint (ten), the bytes. */
#define ENC_FIELD_MAX(len) ((size_t)(len) + 12)
/* An attribute whose name has nl bytes and whose value needs vl. */
#define ENC_ATTR_MAX(nl, vl) ENC_FIELD_MAX(ENC_FIELD_MAX(nl) + ENC_FIELD_MAX(vl))
/* What closing a frame may add to its one reserved byte. */
#define ENC_FRAME_GROWTH 9
/* A length prefix. */
#define ENC_VARINT_MAX 10

/* ------------------------------------------------------------ varints */

static inline size_t enc_vlen(uint64_t v) {
#if defined(__GNUC__)
  return (size_t)(63 - __builtin_clzll(v | 1)) / 7 + 1;
#else
  size_t n = 1;
  while (v >= 0x80) v >>= 7, n++;
  return n;
#endif
}

static inline uint8_t *enc_varint(uint8_t *p, uint64_t v) {
  while (v >= 0x80) *p++ = (uint8_t)(v | 0x80), v >>= 7;
  *p++ = (uint8_t)v;
  return p;
}

/* Short copies (attribute names are 4 to 16 bytes) as two overlapping
 * fixed-size moves rather than a memcpy call: this runs several times per
 * node, millions of times per run. */
static inline uint8_t *enc_copy(uint8_t *p, const void *s, size_t n) {
  const uint8_t *c = s;
  if (n >= 8 && n <= 16) {
    memcpy(p, c, 8);
    memcpy(p + n - 8, c + n - 8, 8);
  } else if (n >= 4 && n < 8) {
    memcpy(p, c, 4);
    memcpy(p + n - 4, c + n - 4, 4);
  } else if (n) {
    memcpy(p, c, n);
  }
  return p + n;
}

/* ------------------------------------------------------------ frames */

/* A message whose length is not known in advance: open reserves one byte
 * for the length at p; close writes it and, for a body of 128 bytes or
 * more, moves the body up (the room reserved must allow ENC_FRAME_GROWTH
 * more). Returns the end of the framed message. */
static inline uint8_t *enc_frame_open(uint8_t *p) { return p + 1; }
uint8_t *enc_frame_close_long(uint8_t *at, uint8_t *end);
static inline uint8_t *enc_frame_close(uint8_t *at, uint8_t *end) {
  size_t n = (size_t)(end - at) - 1;
  if (n < 0x80) {
    *at = (uint8_t)n;
    return end;
  }
  return enc_frame_close_long(at, end);
}

/* ------------------------------------------------------------ Node fields
 * In this order; each zero value, empty name or empty list is left out, as
 * protobuf-c leaves out proto3 defaults. */

enum { ENC_CTRL_DEPS = 4, ENC_DATA_DEPS = 5 };

static inline uint8_t *enc_node_id(uint8_t *p, uint64_t id) {
  if (!id) return p;
  *p++ = 1 << 3;
  return enc_varint(p, id);
}

/* The id even when it is 0 (08 00), which protobuf-c leaves out: chakra
 * synth has always written its node 0 so, and its files stay byte for byte
 * what they were. Readers see the same id either way. */
static inline uint8_t *enc_node_id_always(uint8_t *p, uint64_t id) {
  *p++ = 1 << 3;
  return enc_varint(p, id);
}

/* The name in two parts (a name and a suffix), either may be empty. */
static inline uint8_t *enc_node_name2(uint8_t *p, const char *a, size_t an, const char *b, size_t bn) {
  if (!an && !bn) return p;
  *p++ = 2 << 3 | 2;
  p = enc_varint(p, an + bn);
  if (an) memcpy(p, a, an);
  if (bn) memcpy(p + an, b, bn);
  return p + an + bn;
}
static inline uint8_t *enc_node_name(uint8_t *p, const char *s, size_t n) { return enc_node_name2(p, s, n, NULL, 0); }

/* An enum is an int32: a negative one takes ten bytes. */
static inline uint8_t *enc_node_type(uint8_t *p, int32_t type) {
  if (!type) return p;
  *p++ = 3 << 3;
  return enc_varint(p, (uint64_t)(int64_t)type);
}

/* A packed list's key and length; the caller writes the payload (varints
 * of total length payload). For lists that are computed, not stored. */
static inline uint8_t *enc_node_deps_head(uint8_t *p, int which, size_t payload) {
  *p++ = (uint8_t)(which << 3 | 2);
  return enc_varint(p, payload);
}

/* Bound: ENC_FIELD_MAX(10 * n). */
static inline uint8_t *enc_node_deps(uint8_t *p, int which, const uint64_t *ids, size_t n) {
  if (!n) return p;
  size_t len = 0;
  for (size_t i = 0; i < n; i++) len += enc_vlen(ids[i]);
  p = enc_node_deps_head(p, which, len);
  for (size_t i = 0; i < n; i++) p = enc_varint(p, ids[i]);
  return p;
}

static inline uint8_t *enc_node_start_time(uint8_t *p, uint64_t micros) {
  if (!micros) return p;
  *p++ = 6 << 3;
  return enc_varint(p, micros);
}

static inline uint8_t *enc_node_duration(uint8_t *p, uint64_t micros) {
  if (!micros) return p;
  *p++ = 7 << 3;
  return enc_varint(p, micros);
}

/* inputs (which = 0) or outputs (1): present even when all three strings
 * are NULL or empty (then left out). Bound: ENC_IO_MAX of their lengths. */
#define ENC_IO_MAX(a, b, c) ENC_FIELD_MAX(ENC_FIELD_MAX(a) + ENC_FIELD_MAX(b) + ENC_FIELD_MAX(c))
uint8_t *enc_node_io(uint8_t *p, int which, const char *values, const char *shapes, const char *types);

/* ------------------------------------------------------------ GlobalMetadata */

static inline uint8_t *enc_meta_version(uint8_t *p, const char *s, size_t n) {
  if (!n) return p;
  *p++ = 1 << 3 | 2;
  p = enc_varint(p, n);
  memcpy(p, s, n);
  return p + n;
}

/* ------------------------------------------------------------ attributes
 * AttributeProto fields of a Node (owner ENC_IN_NODE) or a GlobalMetadata
 * (ENC_IN_META): the name (left out when empty), then one value. */

enum { ENC_IN_NODE = 10 << 3 | 2, ENC_IN_META = 2 << 3 | 2 };

/* Value keys (field << 3 | wire type) as varints. */
enum {
  ENC_INT32 = 7 << 3,
  ENC_INT64 = 9 << 3,
  ENC_UINT64 = 13 << 3,
  ENC_BOOL = 27 << 3,        /* two key bytes */
  ENC_DOUBLE = 3 << 3 | 1,
  ENC_STRING = 29 << 3 | 2,  /* two key bytes */
  ENC_INT64_LIST = 10 << 3 | 2,
  ENC_UINT64_LIST = 14 << 3 | 2,
  ENC_DOUBLE_LIST = 4 << 3 | 2,
  ENC_STRING_LIST = 30 << 3 | 2 /* two key bytes */
};

static inline size_t enc_attr_name_len(size_t nl) { return nl ? 1 + enc_vlen(nl) + nl : 0; }

/* The attribute's key, length and name; its body is body bytes long. */
static inline uint8_t *enc_attr_head(uint8_t *p, int owner, const char *name, size_t nl, size_t body) {
  *p++ = (uint8_t)owner;
  p = enc_varint(p, body);
  if (!nl) return p;
  *p++ = 1 << 3 | 2;
  p = enc_varint(p, nl);
  return enc_copy(p, name, nl);
}

/* A varint value under key (ENC_INT32 with v sign-extended, ENC_INT64,
 * ENC_UINT64, ENC_BOOL with v 0 or 1). Bound: ENC_ATTR_MAX(nl, 10). */
static inline uint8_t *enc_attr_varint(uint8_t *p, int owner, const char *name, size_t nl, unsigned key,
                                       uint64_t v) {
  if (key < 0x80 && nl - 1 < 114) { /* every length is one byte: the common case, in fewer steps */
    *p++ = (uint8_t)owner;
    *p++ = (uint8_t)(3 + nl + enc_vlen(v));
    *p++ = 1 << 3 | 2;
    *p++ = (uint8_t)nl;
    p = enc_copy(p, name, nl);
    *p++ = (uint8_t)key;
    return enc_varint(p, v);
  }
  size_t kl = enc_vlen(key);
  p = enc_attr_head(p, owner, name, nl, enc_attr_name_len(nl) + kl + enc_vlen(v));
  p = enc_varint(p, key);
  return enc_varint(p, v);
}

static inline uint8_t *enc_attr_i64(uint8_t *p, int owner, const char *name, size_t nl, int64_t v) {
  return enc_attr_varint(p, owner, name, nl, ENC_INT64, (uint64_t)v);
}
static inline uint8_t *enc_attr_u64(uint8_t *p, int owner, const char *name, size_t nl, uint64_t v) {
  return enc_attr_varint(p, owner, name, nl, ENC_UINT64, v);
}
static inline uint8_t *enc_attr_i32(uint8_t *p, int owner, const char *name, size_t nl, int32_t v) {
  return enc_attr_varint(p, owner, name, nl, ENC_INT32, (uint64_t)(int64_t)v);
}
static inline uint8_t *enc_attr_bool(uint8_t *p, int owner, const char *name, size_t nl, int v) {
  return enc_attr_varint(p, owner, name, nl, ENC_BOOL, v ? 1 : 0);
}

/* Bound: ENC_ATTR_MAX(nl, 8). */
static inline uint8_t *enc_attr_double(uint8_t *p, int owner, const char *name, size_t nl, double v) {
  p = enc_attr_head(p, owner, name, nl, enc_attr_name_len(nl) + 9);
  *p++ = ENC_DOUBLE;
  uint64_t bits;
  memcpy(&bits, &v, 8);
  for (int i = 0; i < 8; i++) *p++ = (uint8_t)(bits >> 8 * i);
  return p;
}

/* A string value (written even when empty). Bound: ENC_ATTR_MAX(nl, sl). */
static inline uint8_t *enc_attr_str(uint8_t *p, int owner, const char *name, size_t nl, const char *s, size_t sl) {
  p = enc_attr_head(p, owner, name, nl, enc_attr_name_len(nl) + 2 + enc_vlen(sl) + sl);
  p = enc_varint(p, ENC_STRING);
  p = enc_varint(p, sl);
  if (sl) memcpy(p, s, sl);
  return p + sl;
}

/* An attribute with a name and no value. Bound: ENC_ATTR_MAX(nl, 0). */
static inline uint8_t *enc_attr_empty(uint8_t *p, int owner, const char *name, size_t nl) {
  return enc_attr_head(p, owner, name, nl, enc_attr_name_len(nl));
}

/* List values (NULL strings count as empty). A string list's payload is
 * enc_strlist_payload(v, n); bounds: ENC_ATTR_MAX(nl, payload + 12),
 * ENC_ATTR_MAX(nl, 10 * n + 12) for the integer lists, ENC_ATTR_MAX(nl,
 * 8 * n + 12) for doubles. */
size_t enc_strlist_payload(const char *const *v, size_t n);
uint8_t *enc_attr_strlist(uint8_t *p, int owner, const char *name, size_t nl, const char *const *v, size_t n,
                          size_t payload);
uint8_t *enc_attr_i64list(uint8_t *p, int owner, const char *name, size_t nl, const int64_t *v, size_t n);
uint8_t *enc_attr_u64list(uint8_t *p, int owner, const char *name, size_t nl, const uint64_t *v, size_t n);
uint8_t *enc_attr_doublelist(uint8_t *p, int owner, const char *name, size_t nl, const double *v, size_t n);

/* ------------------------------------------------------------ protobuf-c structs */

/* Appends m, length prefix first, and returns the length of m alone. A
 * Node or GlobalMetadata (with any attributes, unknown fields included) is
 * encoded here; any other message is packed by protobuf-c. */
size_t enc_message(enc_buf *b, const ProtobufCMessage *m);

#endif
