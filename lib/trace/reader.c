/* reader.c - streaming .et reader; see include/chakra/trace.h.
 *
 * Messages are decoded in place from one growing buffer. Each node is
 * unpacked into an arena that the next call resets: memory stays at the
 * size of the largest message, whatever the length of the trace. */
#include <stdlib.h>
#include <string.h>

#include "../util/arena.h"
#include "../util/instream.h"
#include "chakra/trace.h"
#include "wirediag.h"

#define READ_CHUNK (1u << 20)

struct chakra_reader {
  instream *in;
  unsigned char *buf;
  size_t cap, pos, end;
  uint64_t buf_base;      /* stream offset of buf[0] */
  int eof;
  size_t max_msg;
  uint64_t msg_offset;    /* offset of the last message's length prefix */
  uint64_t msg_index;     /* index of the last message; UINT64_MAX after seek */
  uint64_t next_index;    /* index the next framed message gets */
  int index_known;        /* 0 after a seek: indexes are then unknown */
  arena node_arena;
  arena meta_arena;
  chakra_metadata *meta;
};

/* Makes at least `need` bytes available at buf[pos]; returns how many are
 * (fewer only at end of input). */
static int reader_fill(chakra_reader *r, size_t need, size_t *avail, chakra_error *err) {
  while (r->end - r->pos < need && !r->eof) {
    if (r->pos > 0 && (r->cap - r->end < READ_CHUNK || r->cap - r->pos < need)) {
      memmove(r->buf, r->buf + r->pos, r->end - r->pos);
      r->buf_base += r->pos;
      r->end -= r->pos;
      r->pos = 0;
    }
    if (r->cap - r->end < READ_CHUNK || r->cap < need) {
      size_t ncap = r->cap ? r->cap : READ_CHUNK * 4;
      while (ncap - r->end < READ_CHUNK || ncap < need) ncap *= 2;
      unsigned char *nb = realloc(r->buf, ncap);
      if (!nb) return chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", instream_path(r->in));
      r->buf = nb;
      r->cap = ncap;
    }
    ssize_t k = instream_read(r->in, r->buf + r->end, r->cap - r->end, err);
    if (k < 0) return (int)k;
    if (k == 0) r->eof = 1;
    r->end += (size_t)k;
  }
  *avail = r->end - r->pos;
  return 0;
}

/* Frames the next message: returns 1 with data and len set, 0 at a clean end. */
static int reader_frame(chakra_reader *r, const uint8_t **data, size_t *len, chakra_error *err) {
  size_t avail;
  int rc = reader_fill(r, 5, &avail, err);
  if (rc) return rc;
  if (avail == 0) return 0;
  uint64_t off = r->buf_base + r->pos;
  uint64_t index = r->index_known ? r->next_index : UINT64_MAX;
  const unsigned char *p = r->buf + r->pos;
  uint64_t v = 0;
  size_t k = 0;
  for (;;) {
    if (k == avail)
      return chakra_error_set(err, CHAKRA_EFORMAT,
                              "%s: offset %llu: message %llu: length varint truncated by end of file",
                              instream_path(r->in), (unsigned long long)off, (unsigned long long)index);
    if (k == 5)
      return chakra_error_set(err, CHAKRA_EFORMAT,
                              "%s: offset %llu: message %llu: length varint longer than 5 bytes",
                              instream_path(r->in), (unsigned long long)off, (unsigned long long)index);
    v |= (uint64_t)(p[k] & 0x7f) << (7 * k);
    if (!(p[k++] & 0x80)) break;
  }
  if (v >= (1ull << 31) || v > r->max_msg)
    return chakra_error_set(err, CHAKRA_EFORMAT,
                            "%s: offset %llu: message %llu: length %llu exceeds the limit of %zu bytes",
                            instream_path(r->in), (unsigned long long)off, (unsigned long long)index,
                            (unsigned long long)v, r->max_msg);
  rc = reader_fill(r, k + (size_t)v, &avail, err);
  if (rc) return rc;
  if (avail < k + v)
    return chakra_error_set(err, CHAKRA_EFORMAT,
                            "%s: offset %llu: message %llu: truncated, declares %llu bytes but only %zu remain",
                            instream_path(r->in), (unsigned long long)off, (unsigned long long)index,
                            (unsigned long long)v, avail - k);
  *data = r->buf + r->pos + k;
  *len = (size_t)v;
  r->pos += k + (size_t)v;
  r->msg_offset = off;
  r->msg_index = index;
  r->next_index++;
  return 1;
}

static int reader_decode_error(chakra_reader *r, const ProtobufCMessageDescriptor *d,
                               const uint8_t *data, size_t len, chakra_error *err) {
  char why[256];
  size_t at = 0;
  wirediag_explain(d, data, len, why, sizeof why, &at);
  size_t prefix = 0;
  for (uint64_t v = len; prefix == 0 || v; v >>= 7) prefix++;
  return chakra_error_set(err, CHAKRA_EFORMAT, "%s: offset %llu: message %llu (%s): %s",
                          instream_path(r->in),
                          (unsigned long long)(r->msg_offset + prefix + at),
                          (unsigned long long)r->msg_index, d->short_name, why);
}

int chakra_reader_open(chakra_reader **out, const char *path, const chakra_reader_options *opt,
                       chakra_error *err) {
  *out = NULL;
  chakra_reader *r = calloc(1, sizeof *r);
  if (!r) return chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", path);
  r->max_msg = opt && opt->max_message_size ? opt->max_message_size : CHAKRA_DEFAULT_MAX_MESSAGE;
  r->index_known = 1;
  arena_init(&r->node_arena, 64 * 1024);
  arena_init(&r->meta_arena, 4 * 1024);
  int rc = instream_open(&r->in, path, err);
  if (rc) {
    free(r);
    return rc;
  }
  const uint8_t *data;
  size_t len;
  rc = reader_frame(r, &data, &len, err);
  if (rc == 0)
    rc = chakra_error_set(err, CHAKRA_EFORMAT, "%s: offset 0: no GlobalMetadata (empty file)", path);
  if (rc < 0) {
    chakra_reader_close(r);
    return rc;
  }
  r->meta = chakra_proto_msg__global_metadata__unpack(&r->meta_arena.pb, len, data);
  if (!r->meta) {
    rc = r->meta_arena.failed
             ? chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", path)
             : reader_decode_error(r, &chakra_proto_msg__global_metadata__descriptor, data, len, err);
    chakra_reader_close(r);
    return rc;
  }
  *out = r;
  return CHAKRA_OK;
}

const chakra_metadata *chakra_reader_metadata(const chakra_reader *r) { return r->meta; }

int chakra_reader_next_raw(chakra_reader *r, const uint8_t **data, size_t *len, chakra_error *err) {
  return reader_frame(r, data, len, err);
}

/* ---- Fast path for Node messages ----------------------------------------
 *
 * protobuf-c's generic unpack walks each message twice through its
 * descriptors; on small nodes that is most of the cost of reading a trace.
 * fast_node() decodes the shapes producers actually write straight into
 * the same structures, allocated from the same arena: every singular field
 * at most once, dep lists packed, inputs/outputs, and attributes whose
 * value is a scalar, a string, bytes, or a bool/int64/string list. On
 * anything else (an unknown field, a field repeated, unpacked deps, another
 * list kind, a malformed byte) it returns NULL and the caller runs
 * protobuf-c, so unusual input gets protobuf-c's exact result or error.
 * Invariant: whenever fast_node() succeeds, protobuf-c would have produced
 * an equal message (same values, same lengths, same defaults). */

typedef struct fdec {
  const uint8_t *p, *end;
} fdec;

/* A varint of at most 10 bytes whose bits fit 64 (protobuf-c truncates
 * wider ones; we leave those to it). */
static inline int fd_varint(fdec *d, uint64_t *out) {
  const uint8_t *p = d->p;
  if (p < d->end && *p < 0x80) {
    *out = *p;
    d->p = p + 1;
    return 1;
  }
  uint64_t v = 0;
  for (unsigned i = 0; i < 10; i++) {
    if (p + i >= d->end) return 0;
    uint64_t b = p[i];
    if (i == 9 && b > 1) return 0;
    v |= (b & 0x7f) << (7 * i);
    if (!(b & 0x80)) {
      d->p = p + i + 1;
      *out = v;
      return 1;
    }
  }
  return 0;
}

/* Field number and wire type from a one- or two-byte tag. */
static inline int fd_tag(fdec *d, unsigned *field, unsigned *wire) {
  const uint8_t *p = d->p;
  if (p >= d->end) return 0;
  unsigned b0 = p[0];
  *wire = b0 & 7;
  if (b0 < 0x80) {
    *field = b0 >> 3;
    d->p = p + 1;
    return 1;
  }
  if (p + 1 >= d->end || p[1] >= 0x80) return 0;
  *field = ((b0 & 0x7f) >> 3) | (unsigned)p[1] << 4;
  d->p = p + 2;
  return 1;
}

/* The payload of a length-delimited field (wire type 2). */
static inline int fd_len(fdec *d, fdec *sub) {
  uint64_t n;
  if (!fd_varint(d, &n) || n > (uint64_t)(d->end - d->p)) return 0;
  sub->p = d->p;
  sub->end = d->p + n;
  d->p += n;
  return 1;
}

static inline char *fd_string(arena *a, const fdec *s) {
  size_t n = (size_t)(s->end - s->p);
  return arena_strndup(a, (const char *)s->p, n);
}

/* fd_varint() without bounds checks, for at least 10 readable bytes. */
static inline const uint8_t *fd_varint_unchecked(const uint8_t *p, uint64_t *out) {
  uint64_t b = p[0];
  if (b < 0x80) {
    *out = b;
    return p + 1;
  }
  uint64_t v = b & 0x7f;
  for (unsigned i = 1; i < 10; i++) {
    b = p[i];
    if (i == 9 && b > 1) return NULL;
    v |= (b & 0x7f) << (7 * i);
    if (b < 0x80) {
      *out = v;
      return p + i + 1;
    }
  }
  return NULL;
}

/* Packed varints -> uint64 array (protobuf-c: count, allocate, parse). */
static int fd_packed_u64(arena *a, const fdec *s, size_t *n_out, uint64_t **out) {
  size_t n = 0;
  const uint8_t *q = s->p;
  for (; s->end - q >= 8; q += 8) { /* varints end at bytes below 0x80 */
    uint64_t x;
    memcpy(&x, q, 8);
    n += (size_t)((((~x & 0x8080808080808080ull) >> 7) * 0x0101010101010101ull) >> 56);
  }
  for (; q < s->end; q++) n += *q < 0x80;
  if (n == 0) return 0;
  uint64_t *v = arena_alloc(a, n * sizeof *v);
  if (!v) return 0;
  fdec t = *s;
  size_t i = 0;
  while (i < n && t.end - t.p >= 10)
    if (!(t.p = fd_varint_unchecked(t.p, &v[i++]))) return 0;
  for (; i < n; i++)
    if (!fd_varint(&t, &v[i])) return 0;
  if (t.p != t.end) return 0;
  *n_out = n;
  *out = v;
  return 1;
}

static ChakraProtoMsg__IOInfo *fd_ioinfo(arena *a, fdec d) {
  ChakraProtoMsg__IOInfo *m = arena_alloc(a, sizeof *m);
  if (!m) return NULL;
  chakra_proto_msg__ioinfo__init(m);
  unsigned seen = 0, f, w;
  while (d.p < d.end) {
    fdec s;
    if (!fd_tag(&d, &f, &w) || w != 2 || f < 1 || f > 3 || (seen & (1u << f)) || !fd_len(&d, &s))
      return NULL;
    seen |= 1u << f;
    char *str = fd_string(a, &s);
    if (!str) return NULL;
    if (f == 1) m->values = str;
    else if (f == 2) m->shapes = str;
    else m->types = str;
  }
  return m;
}

/* The list kinds producers write: bool (involved_dim), int64, string. */
static void *fd_list(arena *a, unsigned kind, fdec d) {
  ChakraProtoMsg__BoolList *bl = NULL;
  ChakraProtoMsg__Int64List *il = NULL;
  ChakraProtoMsg__StringList *sl = NULL;
  void *m;
  if (kind == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_LIST) {
    if (!(m = bl = arena_alloc(a, sizeof *bl))) return NULL;
    chakra_proto_msg__bool_list__init(bl);
  } else if (kind == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_LIST) {
    if (!(m = il = arena_alloc(a, sizeof *il))) return NULL;
    chakra_proto_msg__int64_list__init(il);
  } else {
    if (!(m = sl = arena_alloc(a, sizeof *sl))) return NULL;
    chakra_proto_msg__string_list__init(sl);
  }
  if (sl) {
    /* Repeated strings: count, allocate, copy. */
    size_t n = 0;
    unsigned f, w;
    fdec t = d, s;
    while (t.p < t.end) {
      if (!fd_tag(&t, &f, &w) || f != 1 || w != 2 || !fd_len(&t, &s)) return NULL;
      n++;
    }
    if (n == 0) return m;
    if (!(sl->values = arena_alloc(a, n * sizeof *sl->values))) return NULL;
    for (size_t i = 0; i < n; i++) {
      fd_tag(&d, &f, &w);
      fd_len(&d, &s);
      if (!(sl->values[i] = fd_string(a, &s))) return NULL;
    }
    sl->n_values = n;
    return m;
  }
  if (d.p == d.end) return m;
  unsigned f, w;
  fdec s;
  if (!fd_tag(&d, &f, &w) || f != 1 || w != 2 || !fd_len(&d, &s) || d.p != d.end) return NULL;
  if (il) {
    uint64_t *v;
    if (!fd_packed_u64(a, &s, &il->n_values, &v)) return NULL;
    il->values = (int64_t *)v;
    return m;
  }
  size_t n = (size_t)(s.end - s.p);
  if (n == 0) return NULL;
  if (!(bl->values = arena_alloc(a, n * sizeof *bl->values))) return NULL;
  for (size_t i = 0; i < n; i++) {
    if (s.p[i] > 1) return NULL; /* protobuf-c refuses these */
    bl->values[i] = s.p[i];
  }
  bl->n_values = n;
  return m;
}

static chakra_attr *fd_attr(arena *a, fdec d) {
  chakra_attr *m = arena_alloc(a, sizeof *m);
  if (!m) return NULL;
  chakra_proto_msg__attribute_proto__init(m);
  unsigned seen = 0, f, w;
  while (d.p < d.end) {
    if (!fd_tag(&d, &f, &w)) return NULL;
    if (f == 1 || f == 2) {
      fdec s;
      if (w != 2 || (seen & (1u << f)) || !fd_len(&d, &s)) return NULL;
      seen |= 1u << f;
      char *str = fd_string(a, &s);
      if (!str) return NULL;
      if (f == 1) m->name = str;
      else m->doc_string = str;
      continue;
    }
    if (f < 3 || f > 32 || m->value_case != CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE__NOT_SET)
      return NULL;
    uint64_t v;
    switch (f) {
      case 7: case 9: case 11: case 13: case 15: case 17: case 27: /* varint kinds */
        if (w != 0 || !fd_varint(&d, &v)) return NULL;
        if (f == 7) m->int32_val = (int32_t)(uint32_t)v;
        else if (f == 9) m->int64_val = (int64_t)v;
        else if (f == 11) m->uint32_val = (uint32_t)v;
        else if (f == 13) m->uint64_val = v;
        else if (f == 15) m->sint32_val = (int32_t)(((uint32_t)v >> 1) ^ (0u - ((uint32_t)v & 1)));
        else if (f == 17) m->sint64_val = (int64_t)((v >> 1) ^ (0ull - (v & 1)));
        else m->bool_val = v != 0;
        break;
      case 3: case 21: case 25: /* 64-bit kinds */
        if (w != 1 || d.end - d.p < 8) return NULL;
        memcpy(&m->uint64_val, d.p, 8);
        d.p += 8;
        break;
      case 5: case 19: case 23: /* 32-bit kinds */
        if (w != 5 || d.end - d.p < 4) return NULL;
        memcpy(&m->uint32_val, d.p, 4);
        d.p += 4;
        break;
      case 29: case 31: { /* string, bytes */
        fdec s;
        if (w != 2 || !fd_len(&d, &s)) return NULL;
        if (f == 29) {
          if (!(m->string_val = fd_string(a, &s))) return NULL;
        } else {
          size_t n = (size_t)(s.end - s.p);
          m->bytes_val.len = n;
          m->bytes_val.data = NULL;
          if (n && !(m->bytes_val.data = arena_alloc(a, n))) return NULL;
          if (n) memcpy(m->bytes_val.data, s.p, n);
        }
        break;
      }
      case 10: case 28: case 30: { /* int64, bool, string lists */
        fdec s;
        void *list;
        if (w != 2 || !fd_len(&d, &s) || !(list = fd_list(a, f, s))) return NULL;
        if (f == 10) m->int64_list = list;
        else if (f == 28) m->bool_list = list;
        else m->string_list = list;
        break;
      }
      default:
        return NULL;
    }
    m->value_case = (ChakraProtoMsg__AttributeProto__ValueCase)f;
  }
  return m;
}

#define FAST_MAX_ATTRS 64

static chakra_node *fast_node(arena *a, const uint8_t *data, size_t len) {
  chakra_node *n = arena_alloc(a, sizeof *n);
  if (!n) return NULL;
  chakra_proto_msg__node__init(n);
  chakra_attr *attrs[FAST_MAX_ATTRS];
  size_t n_attrs = 0;
  unsigned seen = 0, f, w;
  fdec d = {data, data + len};
  while (d.p < d.end) {
    if (!fd_tag(&d, &f, &w) || f < 1 || f > 10) return NULL;
    if (f != 10) {
      if (seen & (1u << f)) return NULL;
      seen |= 1u << f;
    }
    uint64_t v;
    fdec s;
    switch (f) {
      case 1: case 3: case 6: case 7:
        if (w != 0 || !fd_varint(&d, &v)) return NULL;
        if (f == 1) n->id = v;
        else if (f == 3) n->type = (ChakraProtoMsg__NodeType)(int32_t)(uint32_t)v;
        else if (f == 6) n->start_time_micros = v;
        else n->duration_micros = v;
        break;
      case 2:
        if (w != 2 || !fd_len(&d, &s) || !(n->name = fd_string(a, &s))) return NULL;
        break;
      case 4: case 5:
        if (w != 2 || !fd_len(&d, &s)) return NULL;
        if (f == 4 ? !fd_packed_u64(a, &s, &n->n_ctrl_deps, &n->ctrl_deps)
                   : !fd_packed_u64(a, &s, &n->n_data_deps, &n->data_deps))
          return NULL;
        break;
      case 8: case 9: {
        ChakraProtoMsg__IOInfo *io;
        if (w != 2 || !fd_len(&d, &s) || !(io = fd_ioinfo(a, s))) return NULL;
        if (f == 8) n->inputs = io;
        else n->outputs = io;
        break;
      }
      default: /* 10: attr */
        if (w != 2 || n_attrs == FAST_MAX_ATTRS || !fd_len(&d, &s) ||
            !(attrs[n_attrs++] = fd_attr(a, s)))
          return NULL;
        break;
    }
  }
  if (n_attrs) {
    if (!(n->attr = arena_alloc(a, n_attrs * sizeof *n->attr))) return NULL;
    memcpy(n->attr, attrs, n_attrs * sizeof *n->attr);
    n->n_attr = n_attrs;
  }
  return n;
}

int chakra_reader_next(chakra_reader *r, chakra_node **node, chakra_error *err) {
  const uint8_t *data;
  size_t len;
  *node = NULL;
  int rc = reader_frame(r, &data, &len, err);
  if (rc <= 0) return rc;
  arena_reset(&r->node_arena);
  if ((*node = fast_node(&r->node_arena, data, len)) != NULL) return 1;
  arena_reset(&r->node_arena);
  *node = chakra_proto_msg__node__unpack(&r->node_arena.pb, len, data);
  if (!*node) {
    if (r->node_arena.failed)
      return chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", instream_path(r->in));
    return reader_decode_error(r, &chakra_proto_msg__node__descriptor, data, len, err);
  }
  return 1;
}

uint64_t chakra_reader_message_offset(const chakra_reader *r) { return r->msg_offset; }
uint64_t chakra_reader_message_index(const chakra_reader *r) { return r->msg_index; }
uint64_t chakra_reader_offset(const chakra_reader *r) { return r->buf_base + r->pos; }
int chakra_reader_is_gzip(const chakra_reader *r) { return instream_is_gzip(r->in); }
const char *chakra_reader_path(const chakra_reader *r) { return instream_path(r->in); }

int chakra_reader_seek(chakra_reader *r, uint64_t offset, chakra_error *err) {
  uint64_t here = r->buf_base;
  if (offset >= here && offset <= r->buf_base + r->end) {
    r->pos = (size_t)(offset - here);
  } else {
    int rc = instream_seek(r->in, offset, err);
    if (rc) return rc;
    r->pos = r->end = 0;
    r->buf_base = offset;
    r->eof = 0;
  }
  r->msg_index = UINT64_MAX;
  r->index_known = 0;
  return 0;
}

void chakra_reader_close(chakra_reader *r) {
  if (!r) return;
  instream_close(r->in);
  arena_free(&r->node_arena);
  arena_free(&r->meta_arena);
  free(r->buf);
  free(r);
}

chakra_node *chakra_node_decode(const uint8_t *data, size_t len) {
  return chakra_proto_msg__node__unpack(NULL, len, data);
}
