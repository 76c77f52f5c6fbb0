/* flatscan.c - the columnar read's own decoder of Node messages; see flatscan.h. */
#include "flatscan.h"

#include <string.h>

#include "flatint.h"

typedef struct cursor {
  const uint8_t *p, *end;
} cursor;

/* A varint as protobuf-c reads one: at most ten bytes, bits past 64 dropped. */
static int varint(cursor *c, uint64_t *v) {
  uint64_t x = 0;
  for (unsigned i = 0; i < 10 && c->p < c->end; i++) {
    uint8_t b = *c->p++;
    x |= (uint64_t)(b & 0x7f) << (7 * i);
    if (!(b & 0x80)) {
      *v = x;
      return 0;
    }
  }
  return -1;
}

static int fixed(cursor *c, unsigned n, uint64_t *v) {
  if ((size_t)(c->end - c->p) < n) return -1;
  uint64_t x = 0;
  for (unsigned i = 0; i < n; i++) x |= (uint64_t)c->p[i] << (8 * i);
  c->p += n;
  *v = x;
  return 0;
}

static int bytes(cursor *c, const uint8_t **p, size_t *len) {
  uint64_t n;
  if (varint(c, &n) || n > (uint64_t)(c->end - c->p)) return -1;
  *p = c->p;
  *len = (size_t)n;
  c->p += n;
  return 0;
}

/* A string protobuf-c would hand out whole (no NUL inside), terminated in the arena. */
static char *text(arena *a, const uint8_t *p, size_t len) {
  if (memchr(p, 0, len)) return NULL;
  char *s = arena_alloc(a, len + 1);
  if (!s) return NULL;
  memcpy(s, p, len);
  s[len] = 0;
  return s;
}

/* The wire type the schema gives an AttributeProto value field. */
static unsigned value_wire(uint32_t field) {
  if (field % 2 == 0 || field == CHAKRA_AV_STRING || field == CHAKRA_AV_BYTES) return 2;
  if (field == CHAKRA_AV_DOUBLE || field == CHAKRA_AV_FIXED64 || field == CHAKRA_AV_SFIXED64) return 1;
  if (field == CHAKRA_AV_FLOAT || field == CHAKRA_AV_FIXED32 || field == CHAKRA_AV_SFIXED32) return 5;
  return 0;
}

static uint64_t unzigzag(uint64_t v) { return (v >> 1) ^ (uint64_t)-(int64_t)(v & 1); }

/* Stores a scalar value of kind field as protobuf-c's union holds it. */
static void store_scalar(chakra_attr *at, uint32_t field, uint64_t v) {
  double d;
  float fl;
  uint32_t lo = (uint32_t)v;
  switch (field) {
  case CHAKRA_AV_DOUBLE: memcpy(&d, &v, 8); at->double_val = d; break;
  case CHAKRA_AV_FLOAT: memcpy(&fl, &lo, 4); at->float_val = fl; break;
  case CHAKRA_AV_INT32: case CHAKRA_AV_SFIXED32: at->int32_val = (int32_t)lo; break;
  case CHAKRA_AV_UINT32: case CHAKRA_AV_FIXED32: at->uint32_val = lo; break;
  case CHAKRA_AV_SINT32: at->sint32_val = (int32_t)((lo >> 1) ^ (uint32_t)-(int32_t)(lo & 1)); break;
  case CHAKRA_AV_SINT64: at->sint64_val = (int64_t)unzigzag(v); break;
  case CHAKRA_AV_BOOL: at->bool_val = v != 0; break;
  default: at->uint64_val = v; break; /* int64, uint64, fixed64, sfixed64 share it */
  }
}

/* An attribute with a list value, or anything unusual: protobuf-c's. */
static chakra_attr *attr_by_protobuf(const uint8_t *p, size_t len, arena *a) {
  ProtobufCMessage *m = protobuf_c_message_unpack(&chakra_proto_msg__attribute_proto__descriptor, &a->pb, len, p);
  return m && !m->n_unknown_fields ? (chakra_attr *)m : NULL;
}

static int attr_field(cursor *c, uint32_t field, unsigned wire, chakra_attr *at, arena *a) {
  uint64_t v = 0;
  const uint8_t *sp;
  size_t sl;
  if (field == 1 || field == 2) {
    if (wire != 2 || bytes(c, &sp, &sl)) return -1;
    char *s = text(a, sp, sl);
    if (!s) return -1;
    if (field == 1) at->name = s;
    else at->doc_string = s;
    return 0;
  }
  if (field < 3 || field > 32 || field % 2 == 0 || wire != value_wire(field) || at->value_case) return -1;
  at->value_case = (ChakraProtoMsg__AttributeProto__ValueCase)field;
  if (wire == 2) {
    if (bytes(c, &sp, &sl)) return -1;
    if (field == CHAKRA_AV_BYTES) {
      at->bytes_val.data = (uint8_t *)sp; /* only read while the message is */
      at->bytes_val.len = sl;
      return 0;
    }
    return (at->string_val = text(a, sp, sl)) ? 0 : -1;
  }
  if (wire == 0 ? varint(c, &v) : fixed(c, wire == 1 ? 8 : 4, &v)) return -1;
  store_scalar(at, field, v);
  return 0;
}

static chakra_attr *attr_read(const uint8_t *p, size_t len, arena *a) {
  chakra_attr *at = arena_alloc(a, sizeof *at);
  if (!at) return NULL;
  *at = (chakra_attr)CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT;
  cursor c = {p, p + len};
  while (c.p < c.end) {
    uint64_t key;
    if (varint(&c, &key) || key >> 32) return NULL;
    uint32_t field = (uint32_t)(key >> 3);
    unsigned wire = key & 7;
    if (field >= 3 && field <= 32 && field % 2 == 0 && wire == 2) return attr_by_protobuf(p, len, a);
    if (attr_field(&c, field, wire, at, a)) return NULL;
  }
  return at;
}

/* inputs / outputs: three strings, checked as protobuf-c would read them. */
static int io_valid(const uint8_t *p, size_t len) {
  cursor c = {p, p + len};
  while (c.p < c.end) {
    uint64_t key;
    const uint8_t *sp;
    size_t sl;
    if (varint(&c, &key) || (key & 7) != 2 || key >> 3 < 1 || key >> 3 > 3 || bytes(&c, &sp, &sl)) return -1;
  }
  return 0;
}

static int add_run(flatscan_node *o, unsigned which, const uint8_t *p, size_t len, int packed) {
  if (o->n_runs == FLATSCAN_RUNS) return -1;
  uint64_t n = 1;
  if (packed) { /* every varint must be whole, as protobuf-c checks */
    cursor c = {p, p + len};
    uint64_t v;
    for (n = 0; c.p < c.end; n++)
      if (varint(&c, &v)) return -1;
  }
  o->runs[o->n_runs++] = (flatscan_run){p, len, (uint8_t)which, (uint8_t)packed};
  o->n_deps[which] += n;
  return 0;
}

static int add_attr(flatscan_node *o, const uint8_t *p, size_t len, arena *a, size_t *cap) {
  if (o->nd.n_attr == *cap) {
    size_t nc = *cap ? *cap * 2 : 8;
    chakra_attr **v = arena_alloc(a, nc * sizeof *v);
    if (!v) return -1;
    if (o->nd.n_attr) memcpy(v, o->nd.attr, o->nd.n_attr * sizeof *v);
    o->nd.attr = v;
    *cap = nc;
  }
  return (o->nd.attr[o->nd.n_attr++] = attr_read(p, len, a)) ? 0 : -1;
}

/* One field of a Node; -1 hands the message back. */
static int node_field(cursor *c, uint32_t field, unsigned wire, flatscan_node *o, arena *a, size_t *cap) {
  uint64_t v;
  const uint8_t *p;
  size_t len;
  switch (field) {
  case 1: case 3: case 6: case 7:
    if (wire != 0 || varint(c, &v)) return -1;
    if (field == 1) o->nd.id = v;
    else if (field == 3) o->nd.type = (ChakraProtoMsg__NodeType)(int32_t)(uint32_t)v;
    else if (field == 6) o->nd.start_time_micros = v;
    else o->nd.duration_micros = v;
    return 0;
  case 2:
    if (wire != 2 || bytes(c, &p, &len) || memchr(p, 0, len)) return -1;
    o->name = (const char *)p;
    o->name_len = len;
    return 0;
  case 4: case 5: {
    const uint8_t *start = c->p;
    if (wire == 0) return varint(c, &v) || add_run(o, field == 5 ? 0 : 1, start, (size_t)(c->p - start), 0);
    if (wire != 2 || bytes(c, &p, &len)) return -1;
    return add_run(o, field == 5 ? 0 : 1, p, len, 1);
  }
  case 8: case 9:
    return wire != 2 || bytes(c, &p, &len) || io_valid(p, len) ? -1 : 0;
  case 10:
    return wire != 2 || bytes(c, &p, &len) || add_attr(o, p, len, a, cap) ? -1 : 0;
  default:
    return -1;
  }
}

int flatscan_node_read(const uint8_t *data, size_t len, arena *a, flatscan_node *out) {
  out->nd = (chakra_node)CHAKRA_PROTO_MSG__NODE__INIT;
  out->name = "";
  out->name_len = 0;
  out->n_deps[0] = out->n_deps[1] = 0;
  out->n_runs = 0;
  size_t cap = 0;
  cursor c = {data, data + len};
  while (c.p < c.end) {
    uint64_t key;
    if (varint(&c, &key) || key >> 32) return -1;
    if (node_field(&c, (uint32_t)(key >> 3), key & 7, out, a, &cap)) return -1;
  }
  return 0;
}

size_t flatscan_run_ids(const flatscan_run *run, uint64_t *out) {
  cursor c = {run->p, run->p + run->len};
  size_t n = 0;
  while (c.p < c.end && !varint(&c, &out[n])) n++; /* checked whole when the run was added */
  return n;
}
