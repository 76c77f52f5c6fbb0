/* wirediag.c - reasons for refused messages; see wirediag.h. */
#include "wirediag.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct diag {
  char *out;
  size_t out_size;
  size_t at;
  int found;
} diag;

static int fail(diag *d, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(diag *d, size_t at, const char *fmt, ...) {
  if (!d->found) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->out, d->out_size, fmt, ap);
    va_end(ap);
    d->found = 1;
    d->at = at;
  }
  return -1;
}

/* Returns bytes used, 0 if the varint is truncated, -1 if over 10 bytes. */
static int read_varint(const uint8_t *p, size_t n, uint64_t *v) {
  uint64_t x = 0;
  for (size_t i = 0; i < n && i < 10; i++) {
    x |= (uint64_t)(p[i] & 0x7f) << (7 * i);
    if (!(p[i] & 0x80)) {
      *v = x;
      return (int)i + 1;
    }
  }
  return n >= 10 ? -1 : 0;
}

static unsigned expected_wire(const ProtobufCFieldDescriptor *f) {
  switch (f->type) {
    case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_SFIXED64: case PROTOBUF_C_TYPE_DOUBLE:
      return 1;
    case PROTOBUF_C_TYPE_FIXED32: case PROTOBUF_C_TYPE_SFIXED32: case PROTOBUF_C_TYPE_FLOAT:
      return 5;
    case PROTOBUF_C_TYPE_STRING: case PROTOBUF_C_TYPE_BYTES: case PROTOBUF_C_TYPE_MESSAGE:
      return 2;
    default:
      return 0;
  }
}

static int walk(diag *d, const ProtobufCMessageDescriptor *desc, const uint8_t *p, size_t n,
                size_t base);

/* tag_at: offset of the field's tag (where a wrong wire type is reported);
 * body_at: offset of a length-delimited value (base of a nested walk). */
static int check_field(diag *d, const ProtobufCFieldDescriptor *f, unsigned wt,
                       const uint8_t *body, size_t blen, size_t tag_at, size_t body_at) {
  unsigned want = expected_wire(f);
  int packed = f->label == PROTOBUF_C_LABEL_REPEATED && want != 2 && wt == 2;
  if (wt != want && !packed)
    return fail(d, tag_at, "field '%s' has wire type %u where the schema expects %u", f->name, wt,
                want);
  if (packed && want != 0 && blen % (want == 1 ? 8 : 4) != 0)
    return fail(d, tag_at, "field '%s': packed length %zu is not a multiple of %u", f->name, blen,
                want == 1 ? 8 : 4);
  for (size_t i = 0; packed && want == 0 && i < blen;) {
    uint64_t v;
    int k = read_varint(body + i, blen - i, &v);
    if (k <= 0)
      return fail(d, tag_at, "field '%s': packed varint %s", f->name,
                  k ? "longer than 10 bytes" : "runs past the end of the field");
    i += (size_t)k;
  }
  if (wt == 2 && f->type == PROTOBUF_C_TYPE_MESSAGE) return walk(d, f->descriptor, body, blen, body_at);
  return 0;
}

/* Skips one field value of wire type wt starting at p[i]; returns the new
 * index or (size_t)-1 after recording the defect. */
static size_t skip_value(diag *d, const uint8_t *p, size_t n, size_t i, unsigned wt,
                         const char *fname, size_t at, const uint8_t **body, size_t *blen) {
  uint64_t v;
  int k;
  switch (wt) {
    case 0:
      k = read_varint(p + i, n - i, &v);
      if (k <= 0)
        return fail(d, at, "field '%s': varint %s", fname, k ? "longer than 10 bytes" : "runs past the end of the message"), (size_t)-1;
      return i + (size_t)k;
    case 1: case 5: {
      size_t w = wt == 1 ? 8 : 4;
      if (n - i < w) return fail(d, at, "field '%s': fixed-width value runs past the end", fname), (size_t)-1;
      return i + w;
    }
    case 2:
      k = read_varint(p + i, n - i, &v);
      if (k <= 0) return fail(d, at, "field '%s': length varint truncated or overlong", fname), (size_t)-1;
      i += (size_t)k;
      if (v > n - i)
        return fail(d, at, "field '%s': length %llu runs past the end of the message (%zu bytes left)",
                    fname, (unsigned long long)v, n - i), (size_t)-1;
      *body = p + i;
      *blen = (size_t)v;
      return i + (size_t)v;
    default:
      return fail(d, at, "field '%s': invalid wire type %u", fname, wt), (size_t)-1;
  }
}

static int walk(diag *d, const ProtobufCMessageDescriptor *desc, const uint8_t *p, size_t n,
                size_t base) {
  size_t i = 0;
  while (i < n) {
    uint64_t tag;
    int k = read_varint(p + i, n - i, &tag);
    if (k <= 0) return fail(d, base + i, "field tag varint truncated or overlong");
    size_t at = base + i;
    i += (size_t)k;
    unsigned wt = (unsigned)(tag & 7);
    uint64_t num = tag >> 3;
    if (num == 0 || num > 536870911u)
      return fail(d, at, "invalid field number %llu", (unsigned long long)num);
    const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(desc, (unsigned)num);
    const uint8_t *body = NULL;
    size_t blen = 0;
    char unknown[32];
    snprintf(unknown, sizeof unknown, "#%llu", (unsigned long long)num);
    size_t next = skip_value(d, p, n, i, wt, f ? f->name : unknown, at, &body, &blen);
    if (next == (size_t)-1) return -1;
    if (f && check_field(d, f, wt, body, blen, at, body ? base + (size_t)(body - p) : at) < 0) return -1;
    i = next;
  }
  return 0;
}

void wirediag_explain(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t len,
                      char *out, size_t out_size, size_t *at) {
  diag d = {out, out_size, 0, 0};
  walk(&d, desc, data, len, 0);
  if (!d.found) snprintf(out, out_size, "invalid field contents");
  *at = d.at;
}
