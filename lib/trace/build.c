/* build.c - the message builder and rank-file names; see
 * include/chakra/build.h. */
#include "chakra/build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buildint.h"
#include "encode.h"
#include "../util/vec.h"

size_t chakra_rank_path(char *buf, size_t size, const char *prefix, uint32_t rank) {
  int n = snprintf(buf, size, "%s.%u.et", prefix, rank);
  return n < 0 ? 0 : (size_t)n;
}

char *chakra_rank_path_dup(const char *prefix, uint32_t rank) {
  size_t n = strlen(prefix) + CHAKRA_RANK_PATH_EXTRA;
  char *p = malloc(n);
  if (p) chakra_rank_path(p, n, prefix, rank);
  return p;
}

/* ------------------------------------------------------------ builder
 * Attributes are encoded as they are added (lib/trace/encode.h); the
 * node's other fields are kept until put, which writes them in field
 * order before the attributes: the calls may come in any order. */

enum { MSG_NONE, MSG_META, MSG_NODE };

typedef struct idlist {
  const uint64_t *v; /* borrowed, or own */
  uint64_t *own;
  size_t n, cap;
} idlist;

struct chakra_builder {
  int kind;          /* MSG_* */
  int oom;           /* an addition failed since the start */
  uint64_t id, start_time, duration;
  const char *name, *version;
  int type;
  idlist data, ctrl;
  const char *io[2][3]; /* inputs, outputs: values, shapes, types */
  int has_io[2];
  enc_buf attrs;     /* the message's attributes, encoded */
  enc_buf out;       /* framed messages */
  size_t count;
  int first_meta;    /* the first message in out is a GlobalMetadata */
  ProtobufCMessage *decoded; /* chakra_builder_message()'s, until the next start */
};

int chakra_builder_new(chakra_builder **out) {
  *out = calloc(1, sizeof **out);
  return *out ? 0 : CHAKRA_ENOMEM;
}

static void drop_decoded(chakra_builder *b) {
  if (b->decoded) protobuf_c_message_free_unpacked(b->decoded, NULL);
  b->decoded = NULL;
}

void chakra_builder_free(chakra_builder *b) {
  if (!b) return;
  drop_decoded(b);
  free(b->data.own);
  free(b->ctrl.own);
  enc_buf_free(&b->attrs);
  enc_buf_free(&b->out);
  free(b);
}

static void start(chakra_builder *b, int kind) {
  drop_decoded(b);
  b->kind = kind;
  b->oom = 0;
  b->id = b->start_time = b->duration = 0;
  b->name = b->version = NULL;
  b->type = 0;
  b->has_io[0] = b->has_io[1] = 0;
  b->attrs.n = 0;
  b->attrs.oom = 0; /* a failed growth left the buffer as it was */
  b->data.v = b->ctrl.v = NULL;
  b->data.n = b->ctrl.n = 0;
}

void chakra_builder_metadata(chakra_builder *b, const char *version) {
  start(b, MSG_META);
  b->version = version;
}

void chakra_builder_node(chakra_builder *b, uint64_t id, const char *name, int type) {
  start(b, MSG_NODE);
  b->id = id;
  b->name = name;
  b->type = type;
}

void chakra_builder_data_deps(chakra_builder *b, const uint64_t *ids, size_t n) {
  b->data.v = ids;
  b->data.n = n;
}

void chakra_builder_ctrl_deps(chakra_builder *b, const uint64_t *ids, size_t n) {
  b->ctrl.v = ids;
  b->ctrl.n = n;
}

/* Appends id to l, first copying a borrowed list into l's own array. */
static void idlist_add(chakra_builder *b, idlist *l, uint64_t id) {
  const uint64_t *borrowed = l->v != l->own ? l->v : NULL;
  if (VEC_ROOM(l->own, l->n, l->cap, 1)) {
    b->oom = 1;
    return;
  }
  if (borrowed && l->n) memcpy(l->own, borrowed, l->n * sizeof *l->own);
  l->v = l->own;
  l->own[l->n++] = id;
}

void chakra_builder_add_data_dep(chakra_builder *b, uint64_t id) { idlist_add(b, &b->data, id); }
void chakra_builder_add_ctrl_dep(chakra_builder *b, uint64_t id) { idlist_add(b, &b->ctrl, id); }
void chakra_builder_start_time(chakra_builder *b, uint64_t micros) { b->start_time = micros; }
void chakra_builder_duration(chakra_builder *b, uint64_t micros) { b->duration = micros; }

void chakra_builder_io(chakra_builder *b, int which, const char *values, const char *shapes, const char *types) {
  int w = which ? 1 : 0;
  b->io[w][0] = values;
  b->io[w][1] = shapes;
  b->io[w][2] = types;
  b->has_io[w] = 1;
}

/* ------------------------------------------------------------ attributes */

static size_t slen(const char *s) { return s ? strlen(s) : 0; }

static int owner(const chakra_builder *b) { return b->kind == MSG_META ? ENC_IN_META : ENC_IN_NODE; }

/* Room for one attribute whose value needs vl bytes, and its name's
 * length; NULL once out of memory. */
static uint8_t *attr_room(chakra_builder *b, const char *name, size_t vl, size_t *nl) {
  *nl = slen(name);
  return enc_room(&b->attrs, ENC_ATTR_MAX(*nl, vl));
}

static void attr_varint(chakra_builder *b, const char *name, unsigned key, uint64_t v) {
  size_t nl;
  uint8_t *p = attr_room(b, name, 10, &nl);
  if (p) enc_done(&b->attrs, enc_attr_varint(p, owner(b), name, nl, key, v));
}

void chakra_builder_int64(chakra_builder *b, const char *name, int64_t v) {
  attr_varint(b, name, ENC_INT64, (uint64_t)v);
}
void chakra_builder_uint64(chakra_builder *b, const char *name, uint64_t v) { attr_varint(b, name, ENC_UINT64, v); }
void chakra_builder_int32(chakra_builder *b, const char *name, int32_t v) {
  attr_varint(b, name, ENC_INT32, (uint64_t)(int64_t)v);
}
void chakra_builder_bool(chakra_builder *b, const char *name, int v) { attr_varint(b, name, ENC_BOOL, v != 0); }

void chakra_builder_double(chakra_builder *b, const char *name, double v) {
  size_t nl;
  uint8_t *p = attr_room(b, name, 8, &nl);
  if (p) enc_done(&b->attrs, enc_attr_double(p, owner(b), name, nl, v));
}

/* An empty string is still written (a oneof member is present whatever
 * its value); a NULL one leaves the attribute without a value. */
void chakra_builder_string(chakra_builder *b, const char *name, const char *v) {
  size_t nl, vl = slen(v);
  uint8_t *p = attr_room(b, name, vl, &nl);
  if (!p) return;
  p = v ? enc_attr_str(p, owner(b), name, nl, v, vl) : enc_attr_empty(p, owner(b), name, nl);
  enc_done(&b->attrs, p);
}

void chakra_builder_int64_list(chakra_builder *b, const char *name, const int64_t *v, size_t n) {
  size_t nl;
  uint8_t *p = attr_room(b, name, 10 * n + 12, &nl);
  if (p) enc_done(&b->attrs, enc_attr_i64list(p, owner(b), name, nl, v, n));
}

void chakra_builder_uint64_list(chakra_builder *b, const char *name, const uint64_t *v, size_t n) {
  size_t nl;
  uint8_t *p = attr_room(b, name, 10 * n + 12, &nl);
  if (p) enc_done(&b->attrs, enc_attr_u64list(p, owner(b), name, nl, v, n));
}

void chakra_builder_double_list(chakra_builder *b, const char *name, const double *v, size_t n) {
  size_t nl;
  uint8_t *p = attr_room(b, name, 8 * n + 12, &nl);
  if (p) enc_done(&b->attrs, enc_attr_doublelist(p, owner(b), name, nl, v, n));
}

void chakra_builder_string_list(chakra_builder *b, const char *name, const char *const *v, size_t n) {
  size_t nl, payload = enc_strlist_payload(v, n);
  uint8_t *p = attr_room(b, name, payload + 12, &nl);
  if (p) enc_done(&b->attrs, enc_attr_strlist(p, owner(b), name, nl, v, n, payload));
}

/* ------------------------------------------------------------ messages */

/* Appends the message started last to dst, framed, without committing it:
 * returns the end of the frame (NULL when out of memory) and *body, the
 * message's own length. */
static uint8_t *encode(chakra_builder *b, enc_buf *dst, size_t *body) {
  size_t nl = slen(b->name), vl = slen(b->version), io = 0;
  for (int w = 0; w < 2; w++)
    if (b->has_io[w]) io += ENC_IO_MAX(slen(b->io[w][0]), slen(b->io[w][1]), slen(b->io[w][2]));
  size_t bound = ENC_VARINT_MAX + ENC_FRAME_GROWTH + 5 * ENC_FIELD_MAX(0) + ENC_FIELD_MAX(nl + vl) +
                 ENC_FIELD_MAX(10 * b->ctrl.n) + ENC_FIELD_MAX(10 * b->data.n) + io + b->attrs.n;
  uint8_t *at = enc_room(dst, bound);
  if (!at) return NULL;
  uint8_t *p = enc_frame_open(at);
  if (b->kind == MSG_META) {
    p = enc_meta_version(p, b->version, vl);
  } else {
    p = enc_node_id(p, b->id);
    p = enc_node_name(p, b->name, nl);
    p = enc_node_type(p, b->type);
    p = enc_node_deps(p, ENC_CTRL_DEPS, b->ctrl.v, b->ctrl.n);
    p = enc_node_deps(p, ENC_DATA_DEPS, b->data.v, b->data.n);
    p = enc_node_start_time(p, b->start_time);
    p = enc_node_duration(p, b->duration);
    for (int w = 0; w < 2; w++)
      if (b->has_io[w]) p = enc_node_io(p, w, b->io[w][0], b->io[w][1], b->io[w][2]);
  }
  p = enc_copy(p, b->attrs.p, b->attrs.n);
  *body = (size_t)(p - at) - 1;
  return enc_frame_close(at, p);
}

/* protobuf-c's view of the message: its bytes decoded. */
const ProtobufCMessage *chakra_builder_message(const chakra_builder *b) {
  chakra_builder *m = (chakra_builder *)b; /* the decoded copy is cached */
  if (b->kind == MSG_NONE || b->oom || b->attrs.oom) return NULL;
  drop_decoded(m);
  enc_buf tmp = {0};
  size_t body;
  uint8_t *end = encode(m, &tmp, &body);
  if (end) {
    const uint8_t *msg = end - body;
    m->decoded = b->kind == MSG_META
                     ? (ProtobufCMessage *)chakra_proto_msg__global_metadata__unpack(NULL, body, msg)
                     : (ProtobufCMessage *)chakra_proto_msg__node__unpack(NULL, body, msg);
  }
  enc_buf_free(&tmp);
  return m->decoded;
}

int chakra_builder_put(chakra_builder *b, chakra_error *err) {
  if (b->kind == MSG_NONE) return chakra_error_set(err, CHAKRA_EINVAL, "no message started");
  if (b->oom || b->attrs.oom) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  size_t len;
  uint8_t *end = encode(b, &b->out, &len);
  if (!end) {
    b->out.oom = 0; /* the buffer keeps what was put before */
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  if (len > CHAKRA_DEFAULT_MAX_MESSAGE) {
    if (b->kind == MSG_NODE)
      return chakra_error_set(err, CHAKRA_EINVAL, "node %llu: message of %zu bytes exceeds the limit of %u",
                              (unsigned long long)b->id, len, CHAKRA_DEFAULT_MAX_MESSAGE);
    return chakra_error_set(err, CHAKRA_EINVAL, "GlobalMetadata of %zu bytes exceeds the limit of %u", len,
                            CHAKRA_DEFAULT_MAX_MESSAGE);
  }
  enc_done(&b->out, end);
  if (!b->count++) b->first_meta = b->kind == MSG_META;
  return 0;
}

const uint8_t *chakra_builder_bytes(const chakra_builder *b, size_t *len) {
  *len = b->out.n;
  return b->out.p;
}

size_t chakra_builder_count(const chakra_builder *b) { return b->count; }

void chakra_builder_clear(chakra_builder *b) {
  b->out.n = 0;
  b->count = 0;
}

int builder_first_is_meta(const chakra_builder *b) { return b->first_meta; }
