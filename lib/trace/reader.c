/* reader.c - streaming .et reader; see include/chakra/trace.h.
 *
 * Messages are decoded in place from one growing buffer. Each node is
 * unpacked into an arena that the next call resets: memory stays at the
 * size of the largest message, whatever the length of the trace. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/arena.h"
#include "../util/instream.h"
#include "bind.h"
#include "chakra/trace.h"
#include "readerint.h"
#include "wirediag.h"
#include "../util/vec.h"

#define READ_CHUNK (256u * 1024u)

struct chakra_reader {
  instream *in;
  unsigned char *buf;
  size_t cap, pos, end;
  uint64_t buf_base;      /* stream offset of buf[0] */
  int eof;
  size_t max_msg;
  uint64_t msg_offset;    /* offset of the last message's length prefix */
  uint64_t msg_index;     /* index of the last message; UINT64_MAX when unknown */
  uint64_t next_index;    /* index the next framed message gets */
  int index_known;        /* 0 after a seek anywhere but back to first_node */
  uint64_t first_node;    /* offset just past the GlobalMetadata */
  arena node_arena;
  arena meta_arena;
  chakra_metadata *meta;
  bind_ref *bind;         /* a rank's binding of its class template, or NULL */
  enc_buf bound;
  uint8_t *meta_raw;      /* the GlobalMetadata message as stored */
  size_t meta_len;
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
    /* Grow only for bytes that can arrive now: a corrupt length prefix
     * must not reserve gigabytes before the end of the file shows it. */
    if (VEC_ROOM(r->buf, r->end, r->cap, READ_CHUNK))
      return chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", instream_path(r->in));
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

/* A .et file starts with a varint length; JSON starts with '{' or '[',
 * which as a length is garbage. Users hand us JSON often enough that the
 * first error says so. */
static void hint_if_json(const chakra_reader *r, chakra_error *err) {
  if (!err || r->buf_base != 0) return;
  for (size_t i = 0; i < r->end && i < 64; i++) {
    unsigned char c = r->buf[i];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    if (c == '{' || c == '[') {
      size_t n = strlen(err->msg);
      snprintf(err->msg + n, sizeof err->msg - n,
               " (the file is JSON text, not a .et protobuf stream; pack turns Chakra JSON into .et)");
    }
    return;
  }
}

int chakra_reader_open(chakra_reader **out, const char *path, const chakra_reader_options *opt,
                       chakra_error *err) {
  chakra_input in = {.path = path};
  return chakra_reader_open_input(out, &in, opt, err);
}

int chakra_reader_open_input(chakra_reader **out, const chakra_input *input, const chakra_reader_options *opt,
                             chakra_error *err) {
  *out = NULL;
  const char *path = chakra_input_name(input);
  chakra_reader *r = calloc(1, sizeof *r);
  if (!r) return chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", path);
  r->max_msg = opt && opt->max_message_size ? opt->max_message_size : CHAKRA_DEFAULT_MAX_MESSAGE;
  r->index_known = 1;
  arena_init(&r->node_arena, 64 * 1024);
  arena_init(&r->meta_arena, 4 * 1024);
  int rc = instream_open_input(&r->in, input, err);
  if (rc) {
    free(r);
    return rc;
  }
  const uint8_t *data = NULL;
  size_t len = 0;
  rc = reader_frame(r, &data, &len, err);
  if (rc == 0)
    rc = chakra_error_set(err, CHAKRA_EFORMAT, "%s: offset 0: no GlobalMetadata (empty file)", path);
  if (rc < 0) {
    if (rc == CHAKRA_EFORMAT) hint_if_json(r, err);
    chakra_reader_close(r);
    return rc;
  }
  if ((r->meta_raw = malloc(len ? len : 1)) != NULL) memcpy(r->meta_raw, data, len), r->meta_len = len;
  r->meta = r->meta_raw ? chakra_proto_msg__global_metadata__unpack(&r->meta_arena.pb, len, data) : NULL;
  if (!r->meta) {
    rc = r->meta_arena.failed || !r->meta_raw
             ? chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", path)
             : reader_decode_error(r, &chakra_proto_msg__global_metadata__descriptor, data, len, err);
    if (rc == CHAKRA_EFORMAT) hint_if_json(r, err);
    chakra_reader_close(r);
    return rc;
  }
  r->first_node = r->buf_base + r->pos;
  *out = r;
  return CHAKRA_OK;
}

const chakra_metadata *chakra_reader_metadata(const chakra_reader *r) { return r->meta; }

const uint8_t *reader_metadata_bytes(const chakra_reader *r, size_t *len) {
  *len = r->meta_len;
  return r->meta_raw;
}

void reader_bind(chakra_reader *r, bind_ref *b) {
  bind_release(r->bind);
  r->bind = bind_retain(b);
}

int reader_next_frame(chakra_reader *r, const uint8_t **data, size_t *len, chakra_error *err) {
  return reader_frame(r, data, len, err);
}

/* The next message with the rank's binding applied. */
static int reader_bound(chakra_reader *r, const uint8_t **data, size_t *len, chakra_error *err) {
  int rc = reader_frame(r, data, len, err);
  if (rc <= 0 || !r->bind) return rc;
  chakra_error e = {0};
  if ((rc = bind_node(*data, *len, &r->bind->map, &r->bound, data, len, &e)) != 0)
    return chakra_error_set(err, rc, "%s: offset %llu: message %llu: binding the class template to the rank: %s",
                            instream_path(r->in), (unsigned long long)r->msg_offset, (unsigned long long)r->msg_index,
                            e.msg);
  return 1;
}

int chakra_reader_next_raw(chakra_reader *r, const uint8_t **data, size_t *len, chakra_error *err) {
  return reader_bound(r, data, len, err);
}

int chakra_reader_next(chakra_reader *r, chakra_node **node, chakra_error *err) {
  const uint8_t *data = NULL;
  size_t len = 0;
  *node = NULL;
  int rc = reader_bound(r, &data, &len, err);
  if (rc <= 0) return rc;
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
int chakra_reader_can_rewind(const chakra_reader *r) { return !instream_is_gzip(r->in) && instream_is_seekable(r->in); }
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
  r->index_known = offset == r->first_node; /* back at the start: index 1 again */
  r->next_index = 1;
  return 0;
}

void chakra_reader_close(chakra_reader *r) {
  if (!r) return;
  instream_close(r->in);
  bind_release(r->bind);
  enc_buf_free(&r->bound);
  free(r->meta_raw);
  arena_free(&r->node_arena);
  arena_free(&r->meta_arena);
  free(r->buf);
  free(r);
}

chakra_node *chakra_node_decode(const uint8_t *data, size_t len) {
  return chakra_proto_msg__node__unpack(NULL, len, data);
}

void chakra_node_free(chakra_node *node) {
  if (node) chakra_proto_msg__node__free_unpacked(node, NULL);
}

int reader_count_rest(chakra_reader *r, size_t *n, chakra_error *err) {
  *n = 0;
  if (!chakra_reader_can_rewind(r)) return 0;
  uint64_t start = chakra_reader_offset(r);
  const uint8_t *data;
  size_t len;
  chakra_error ignored;
  while (reader_next_frame(r, &data, &len, &ignored) == 1) ++*n;
  return chakra_reader_seek(r, start, err);
}
