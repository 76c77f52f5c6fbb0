/* pack.c - JSON to .et; see include/chakra/json.h.
 *
 * yajl parses the text as a stream of events; messages are built from the
 * protobuf-c descriptors (one generic builder for every message type) in an
 * arena that is reset after each top-level message is written, so memory
 * stays at one node whatever the input size. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "../util/arena.h"
#include "../util/instream.h"
#include "../util/utf8.h"
#include "chakra/json.h"
#include "pbfield.h"
#include "chakra/trace.h"
#include "../util/diag.h"
#include "../util/vec.h"

#define MAX_DEPTH 8

typedef struct frame {
  ProtobufCMessage *msg;
  const ProtobufCFieldDescriptor *field; /* set by the last key */
  int in_array;
  unsigned char *items;                  /* repeated values being collected */
  size_t n_items, cap_bytes;
} frame;

enum { TOP_IDLE, TOP_PENDING, TOP_DOC, TOP_DOC_META, TOP_DOC_NODES_KEY, TOP_DOC_NODES };

/* yajl turns a high surrogate escape (\uD800-\uDBFF) that is not followed
 * by a low one into '?', or joins it with whatever escape follows, and says
 * nothing. Escapes only occur inside strings, so following backslashes in
 * the raw text finds them; the state carries across chunks. */
typedef struct surrogate_scan {
  int esc;          /* the previous byte was an unescaped backslash */
  int hex;          /* hex digits of a \u escape still to read (0 = none) */
  uint32_t cp;      /* the escape's value so far */
  int high;         /* 1: a high surrogate was just completed; 2: and a backslash follows */
  uint64_t lone;    /* high surrogates without their low half so far */
} surrogate_scan;

static void surrogate_escape_done(surrogate_scan *z) {
  int is_high = (z->cp & 0xFC00) == 0xD800, is_low = (z->cp & 0xFC00) == 0xDC00;
  if (z->high) z->lone += !is_low; /* a pair, or the high half was lone */
  z->high = is_high && !z->high;
}

static void surrogate_scan_chunk(surrogate_scan *z, const unsigned char *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned char c = s[i];
    if (z->hex) {
      int v = c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10 : 0;
      z->cp = z->cp << 4 | (uint32_t)v;
      if (--z->hex == 0) surrogate_escape_done(z);
      i++;
    } else if (z->esc) {
      z->esc = 0;
      if (c == 'u') z->hex = 4, z->cp = 0;
      else if (z->high) z->lone++, z->high = 0;
      i++;
    } else if (c == '\\') {
      z->esc = 1;
      i++;
    } else if (z->high) {
      z->lone++, z->high = 0;
      i++;
    } else {
      const unsigned char *b = memchr(s + i, '\\', n - i);
      if (!b) return;
      i = (size_t)(b - s);
    }
  }
}

typedef struct packer {
  yajl_handle y;
  arena a;
  frame stack[MAX_DEPTH];
  int depth;             /* open messages */
  int top;               /* TOP_*: where we are outside messages */
  int document;          /* the input is the one-document layout */
  uint64_t written;      /* messages written (0: next is the GlobalMetadata) */
  chakra_writer *w;
  const char *path;
  const unsigned char *chunk;
  uint64_t chunk_base, lines_before;
  chakra_json_stats *st;
  chakra_diag_fn diag;
  void *diag_ctx;
  chakra_error *err;
  int rc;
  uint64_t bad_utf8_msg; /* replacements in the current message */
  uint64_t tokens;       /* callbacks so far: a chunk that adds none is inside one token */
  uint64_t nul_msg;      /* NUL characters replaced in the current message */
  surrogate_scan sur;    /* lone high surrogates, found in the raw text */
  size_t scanned;        /* bytes of the current chunk the scan has seen */
  uint64_t sur_reported; /* sur.lone already counted in earlier messages */
  chakra_progress_fn progress; /* bytes read, once a chunk */
  void *progress_ctx;
  uint64_t total; /* the input's size, 0 when unknown */
} packer;

static void where(packer *p, char *buf, size_t n) {
  size_t used = p->chunk ? yajl_get_bytes_consumed(p->y) : 0;
  uint64_t line = p->lines_before + 1;
  for (size_t i = 0; i < used; i++) line += p->chunk[i] == '\n';
  snprintf(buf, n, "line %llu (byte %llu)", (unsigned long long)line,
           (unsigned long long)(p->chunk_base + used));
}

static int fail(packer *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(packer *p, const char *fmt, ...) {
  char pos[64], at[4200];
  where(p, pos, sizeof pos);
  snprintf(at, sizeof at, "%s: %s", p->path, pos);
  va_list ap;
  va_start(ap, fmt);
  p->rc = chakra_diag_failv(p->err, CHAKRA_EFORMAT, at, fmt, ap);
  va_end(ap);
  return 0; /* stops yajl */
}

static const ProtobufCMessageDescriptor *next_top_desc(packer *p) {
  return p->written == 0 ? &chakra_proto_msg__global_metadata__descriptor
                         : &chakra_proto_msg__node__descriptor;
}

static int open_message(packer *p, const ProtobufCMessageDescriptor *d) {
  if (p->depth == MAX_DEPTH) return fail(p, "objects nested too deeply");
  ProtobufCMessage *m = arena_alloc(&p->a, d->sizeof_message);
  if (!m) return fail(p, "out of memory");
  protobuf_c_message_init(d, m);
  frame *f = &p->stack[p->depth++];
  f->msg = m;
  f->field = NULL;
  f->in_array = 0;
  f->n_items = 0;
  return 1;
}


/* Stores one value (elem_size bytes at v) into the current field. */
static int store(packer *p, const void *v) {
  frame *f = &p->stack[p->depth - 1];
  const ProtobufCFieldDescriptor *fd = f->field;
  size_t sz = pbfield_elem_size(fd);
  if (f->in_array) {
    if (VEC_ROOM(f->items, f->n_items * sz, f->cap_bytes, sz)) return fail(p, "out of memory");
    memcpy(f->items + f->n_items++ * sz, v, sz);
    return 1;
  }
  if (fd->label == PROTOBUF_C_LABEL_REPEATED)
    return fail(p, "field '%s' is repeated: expected an array", fd->name);
  memcpy((char *)f->msg + fd->offset, v, sz);
  if (fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
    *(uint32_t *)((char *)f->msg + fd->quantifier_offset) = fd->id;
  return 1;
}

static int parse_int_text(const char *s, size_t n, int is_signed, int64_t *iv, uint64_t *uv) {
  char buf[64];
  if (n == 0 || n >= sizeof buf) return -1;
  memcpy(buf, s, n);
  buf[n] = 0;
  char *end;
  errno = 0;
  if (strpbrk(buf, ".eE")) { /* "3.0", "1e3": accepted only when integral */
    double d = strtod(buf, &end);
    if (*end || errno || d != floor(d) || fabs(d) > 9.007199254740992e15) return -1;
    if (!is_signed && d < 0) return -1;
    *iv = (int64_t)d;
    *uv = (uint64_t)*iv;
    return 0;
  }
  if (is_signed) {
    *iv = strtoll(buf, &end, 10);
  } else {
    if (buf[0] == '-') return -1;
    *uv = strtoull(buf, &end, 10);
  }
  return *end || errno ? -1 : 0;
}

static int set_number(packer *p, const char *s, size_t n, int quoted) {
  const ProtobufCFieldDescriptor *fd = p->stack[p->depth - 1].field;
  int64_t iv = 0;
  uint64_t uv = 0;
  union { int32_t i32; uint32_t u32; int64_t i64; uint64_t u64; float f; double d; int e; } v;
  int sgn = 1;
  switch (fd->type) {
    case PROTOBUF_C_TYPE_UINT32: case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64:
      sgn = 0; /* fall through */
    case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32: case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_ENUM:
      if (parse_int_text(s, n, sgn, &iv, &uv))
        return fail(p, "field '%s': '%.*s' is not an integer of that type", fd->name, (int)(n > 40 ? 40 : n), s);
      break;
    case PROTOBUF_C_TYPE_FLOAT: case PROTOBUF_C_TYPE_DOUBLE: {
      char buf[128];
      if (n >= sizeof buf) return fail(p, "field '%s': number too long", fd->name);
      memcpy(buf, s, n);
      buf[n] = 0;
      char *end;
      double d = strcmp(buf, "NaN") == 0 ? NAN : strcmp(buf, "Infinity") == 0 ? INFINITY
                 : strcmp(buf, "-Infinity") == 0 ? -INFINITY : strtod(buf, &end);
      if (!isnan(d) && !isinf(d) && *end) return fail(p, "field '%s': '%s' is not a number", fd->name, buf);
      if (fd->type == PROTOBUF_C_TYPE_FLOAT) v.f = (float)d;
      else v.d = d;
      return store(p, &v);
    }
    default:
      return fail(p, "field '%s': a number is not allowed here", fd->name);
  }
  (void)quoted;
  switch (fd->type) {
    case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32: case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_ENUM:
      if (iv < INT32_MIN || iv > INT32_MAX) return fail(p, "field '%s': value out of 32-bit range", fd->name);
      v.i32 = (int32_t)iv;
      break;
    case PROTOBUF_C_TYPE_UINT32: case PROTOBUF_C_TYPE_FIXED32:
      if (uv > UINT32_MAX) return fail(p, "field '%s': value out of 32-bit range", fd->name);
      v.u32 = (uint32_t)uv;
      break;
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
      v.i64 = iv;
      break;
    default:
      v.u64 = uv;
  }
  return store(p, &v);
}

static int b64val(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+' || c == '-') return 62;
  if (c == '/' || c == '_') return 63;
  return -1;
}

static int set_bytes(packer *p, const unsigned char *s, size_t n) {
  ProtobufCBinaryData b = {0, arena_alloc(&p->a, n * 3 / 4 + 3)};
  if (!b.data) return fail(p, "out of memory");
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '=') break;
    int v = b64val(s[i]);
    if (v < 0) return fail(p, "field '%s': invalid base64", p->stack[p->depth - 1].field->name);
    acc = acc << 6 | (uint32_t)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      b.data[b.len++] = (uint8_t)(acc >> bits);
    }
  }
  return store(p, &b);
}

/* protobuf-c strings end at their first NUL, so a "\u0000" would silently
 * cut the string short: each becomes U+FFFD instead, with a warning. */
static size_t replace_nuls(char *s, size_t n, char *out) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i]) {
      out[k++] = s[i];
    } else {
      memcpy(out + k, "\xEF\xBF\xBD", 3);
      k += 3;
    }
  }
  out[k] = 0;
  return k;
}

static int set_string(packer *p, const unsigned char *s, size_t n) {
  size_t bad = utf8_count_invalid(s, n);
  char *copy = arena_alloc(&p->a, bad ? n * 3 + 1 : n + 1);
  if (!copy) return fail(p, "out of memory");
  size_t len = n;
  if (bad) {
    len = utf8_sanitize(s, n, copy);
    p->bad_utf8_msg += bad;
  } else {
    memcpy(copy, s, n);
    copy[n] = 0;
  }
  size_t nuls = 0;
  for (const char *q = copy; (q = memchr(q, 0, (size_t)(copy + len - q))) != NULL; q++) nuls++;
  if (nuls) {
    char *wide = arena_alloc(&p->a, len + 2 * nuls + 1);
    if (!wide) return fail(p, "out of memory");
    replace_nuls(copy, len, wide);
    copy = wide;
    p->nul_msg += nuls;
  }
  return store(p, &copy);
}

static int set_enum_name(packer *p, const char *s, size_t n) {
  const ProtobufCFieldDescriptor *fd = p->stack[p->depth - 1].field;
  char buf[128];
  if (n >= sizeof buf) return fail(p, "field '%s': enum name too long", fd->name);
  memcpy(buf, s, n);
  buf[n] = 0;
  const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value_by_name(fd->descriptor, buf);
  if (!ev) {
    if (buf[0] == '-' || (buf[0] >= '0' && buf[0] <= '9')) return set_number(p, s, n, 1);
    return fail(p, "field '%s': '%s' is not a %s value", fd->name, buf,
                ((const ProtobufCEnumDescriptor *)fd->descriptor)->name);
  }
  int v = ev->value;
  return store(p, &v);
}

static int need_field(packer *p) {
  if (p->depth == 0) return fail(p, "expected an object");
  if (!p->stack[p->depth - 1].field) return fail(p, "value without a key");
  return 1;
}

static int cb_null(void *ctx) {
  ((packer *)ctx)->tokens++;
  packer *p = ctx;
  if (!need_field(p)) return 0;
  if (p->stack[p->depth - 1].in_array) return fail(p, "null inside an array");
  return 1; /* null = default value = unset */
}

static int cb_bool(void *ctx, int b) {
  ((packer *)ctx)->tokens++;
  packer *p = ctx;
  if (!need_field(p)) return 0;
  const ProtobufCFieldDescriptor *fd = p->stack[p->depth - 1].field;
  if (fd->type != PROTOBUF_C_TYPE_BOOL) return fail(p, "field '%s': a boolean is not allowed here", fd->name);
  protobuf_c_boolean v = b ? 1 : 0;
  return store(p, &v);
}

static int cb_number(void *ctx, const char *s, size_t n) {
  ((packer *)ctx)->tokens++;
  packer *p = ctx;
  return need_field(p) && set_number(p, s, n, 0);
}

static int cb_string(void *ctx, const unsigned char *s, size_t n) {
  ((packer *)ctx)->tokens++;
  packer *p = ctx;
  if (!need_field(p)) return 0;
  const ProtobufCFieldDescriptor *fd = p->stack[p->depth - 1].field;
  switch (fd->type) {
    case PROTOBUF_C_TYPE_STRING: return set_string(p, s, n);
    case PROTOBUF_C_TYPE_BYTES: return set_bytes(p, s, n);
    case PROTOBUF_C_TYPE_ENUM: return set_enum_name(p, (const char *)s, n);
    case PROTOBUF_C_TYPE_BOOL: case PROTOBUF_C_TYPE_MESSAGE:
      return fail(p, "field '%s': a string is not allowed here", fd->name);
    default: return set_number(p, (const char *)s, n, 1);
  }
}

static int cb_start_map(void *ctx) {
  ((packer *)ctx)->tokens++;
  packer *p = ctx;
  if (p->depth == 0) {
    switch (p->top) {
      case TOP_IDLE: p->top = TOP_PENDING; return 1; /* kind decided by the first key */
      case TOP_DOC_META: return open_message(p, &chakra_proto_msg__global_metadata__descriptor);
      case TOP_DOC_NODES:
        if (p->written == 0) return fail(p, "\"nodes\" before \"global_metadata\"");
        return open_message(p, &chakra_proto_msg__node__descriptor);
      default: return fail(p, "unexpected object");
    }
  }
  const ProtobufCFieldDescriptor *fd = p->stack[p->depth - 1].field;
  if (!fd) return fail(p, "object without a key");
  if (fd->type != PROTOBUF_C_TYPE_MESSAGE) return fail(p, "field '%s': an object is not allowed here", fd->name);
  return open_message(p, fd->descriptor);
}

/* Accepts proto names (ctrl_deps) and lowerCamelCase JSON names (ctrlDeps). */
static const ProtobufCFieldDescriptor *find_field(const ProtobufCMessageDescriptor *d,
                                                  const unsigned char *k, size_t n) {
  char name[128];
  size_t o = 0;
  for (size_t i = 0; i < n && o < sizeof name - 2; i++) {
    if (k[i] >= 'A' && k[i] <= 'Z') {
      name[o++] = '_';
      name[o++] = (char)(k[i] + 32);
    } else {
      name[o++] = (char)k[i];
    }
  }
  name[o] = 0;
  if (o >= sizeof name - 2) return NULL;
  return protobuf_c_message_descriptor_get_field_by_name(d, name);
}

static int cb_map_key(void *ctx, const unsigned char *k, size_t n) {
  ((packer *)ctx)->tokens++;
  packer *p = ctx;
  if (p->depth == 0) {
    int is_doc_key = (n == 15 && memcmp(k, "global_metadata", 15) == 0) ||
                     (n == 14 && memcmp(k, "globalMetadata", 14) == 0) ||
                     (n == 5 && memcmp(k, "nodes", 5) == 0);
    if (p->top == TOP_PENDING && is_doc_key) p->document = 1, p->top = TOP_DOC;
    if (p->top == TOP_DOC) {
      if (!is_doc_key) return fail(p, "unknown key '%.*s' in the document", (int)n, k);
      p->top = k[0] == 'n' ? TOP_DOC_NODES_KEY : TOP_DOC_META;
      return 1;
    }
    if (p->top != TOP_PENDING) return fail(p, "unexpected key");
    p->top = TOP_IDLE;
    if (!open_message(p, next_top_desc(p))) return 0;
  }
  frame *f = &p->stack[p->depth - 1];
  f->field = find_field(f->msg->descriptor, k, n);
  if (!f->field)
    return fail(p, "unknown field '%.*s' in %s", (int)(n > 60 ? 60 : n), k, f->msg->descriptor->short_name);
  return 1;
}

/* Scans the current chunk's raw text up to byte upto (what yajl has
 * consumed), so that each surrogate is counted in its own message. */
static void scan_raw_text(packer *p, size_t upto) {
  if (upto > p->scanned) surrogate_scan_chunk(&p->sur, p->chunk + p->scanned, upto - p->scanned);
  if (upto > p->scanned) p->scanned = upto;
}

/* A warning about message m (the node, when it is one). */
static void pack_warn(packer *p, const ProtobufCMessage *m, const char *what) {
  chakra_problem pr = chakra_problem_make(CHAKRA_SEV_WARNING, what);
  pr.file = p->path;
  pr.has_node = p->written > 0;
  pr.node_id = p->written ? ((const chakra_node *)m)->id : 0;
  p->diag(p->diag_ctx, &pr);
}

/* One warning per message for each lossy text repair, naming its place. */
static void warn_lossy_text(packer *p, const ProtobufCMessage *m) {
  if (p->chunk) scan_raw_text(p, yajl_get_bytes_consumed(p->y));
  uint64_t lone = p->sur.lone - p->sur_reported;
  p->sur_reported = p->sur.lone;
  if ((!p->nul_msg && !lone) || !p->diag) {
    p->nul_msg = 0;
    return;
  }
  char pos[64], msg[400];
  where(p, pos, sizeof pos);
  if (p->nul_msg) {
    snprintf(msg, sizeof msg, "%s: message %llu: %llu NUL character(s) (\\u0000) replaced by U+FFFD", pos,
             (unsigned long long)p->written, (unsigned long long)p->nul_msg);
    pack_warn(p, m, msg);
  }
  if (lone) {
    snprintf(msg, sizeof msg,
             "%s: message %llu: %llu high surrogate escape(s) without a low half: each became '?' "
             "(or was joined with the \\u escape right after it)",
             pos, (unsigned long long)p->written, (unsigned long long)lone);
    pack_warn(p, m, msg);
  }
  p->nul_msg = 0;
}

static int write_top(packer *p, ProtobufCMessage *m) {
  if (p->bad_utf8_msg && p->diag) {
    char msg[200];
    snprintf(msg, sizeof msg, "message %llu: %llu invalid UTF-8 sequence(s) replaced by U+FFFD",
             (unsigned long long)p->written, (unsigned long long)p->bad_utf8_msg);
    pack_warn(p, m, msg);
  }
  p->st->bad_utf8 += p->bad_utf8_msg;
  p->bad_utf8_msg = 0;
  warn_lossy_text(p, m);
  if (chakra_writer_put(p->w, m, p->err)) {
    p->rc = p->err ? p->err->code : CHAKRA_EIO;
    return 0;
  }
  if (p->written++) p->st->nodes++;
  arena_reset(&p->a);
  return 1;
}

static int cb_end_map(void *ctx) {
  ((packer *)ctx)->tokens++;
  packer *p = ctx;
  if (p->depth == 0) {
    if (p->top == TOP_PENDING) { /* "{}": an all-default message */
      p->top = TOP_IDLE;
      return open_message(p, next_top_desc(p)) && cb_end_map(ctx);
    }
    if (p->top == TOP_DOC) {
      p->top = TOP_IDLE;
      return 1;
    }
    return fail(p, "unexpected '}'");
  }
  ProtobufCMessage *m = p->stack[--p->depth].msg;
  if (p->depth == 0) {
    if (p->top == TOP_DOC_META) p->top = TOP_DOC;
    if (p->document && p->top == TOP_DOC && p->written > 0)
      return fail(p, "\"global_metadata\" given twice");
    return write_top(p, m);
  }
  return store(p, &m);
}

static int cb_start_array(void *ctx) {
  ((packer *)ctx)->tokens++;
  packer *p = ctx;
  if (p->depth == 0) {
    if (p->top != TOP_DOC_NODES_KEY) return fail(p, "unexpected array");
    p->top = TOP_DOC_NODES;
    return 1;
  }
  frame *f = &p->stack[p->depth - 1];
  if (!f->field) return fail(p, "array without a key");
  if (f->field->label != PROTOBUF_C_LABEL_REPEATED)
    return fail(p, "field '%s' is not repeated: an array is not allowed here", f->field->name);
  if (f->in_array) return fail(p, "nested arrays are not allowed");
  f->in_array = 1;
  f->n_items = 0;
  return 1;
}

static int cb_end_array(void *ctx) {
  ((packer *)ctx)->tokens++;
  packer *p = ctx;
  if (p->depth == 0) {
    if (p->top != TOP_DOC_NODES) return fail(p, "unexpected ']'");
    p->top = TOP_DOC;
    return 1;
  }
  frame *f = &p->stack[p->depth - 1];
  const ProtobufCFieldDescriptor *fd = f->field;
  size_t bytes = f->n_items * pbfield_elem_size(fd);
  void *arr = NULL;
  if (f->n_items) {
    if (!(arr = arena_alloc(&p->a, bytes))) return fail(p, "out of memory");
    memcpy(arr, f->items, bytes);
  }
  *(size_t *)((char *)f->msg + fd->quantifier_offset) = f->n_items;
  *(void **)((char *)f->msg + fd->offset) = arr;
  f->in_array = 0;
  return 1;
}

static const yajl_callbacks callbacks = {
    cb_null, cb_bool, NULL, NULL, cb_number, cb_string,
    cb_start_map, cb_map_key, cb_end_map, cb_start_array, cb_end_array};

static int parse_error(packer *p, const unsigned char *chunk, size_t n) {
  if (p->rc) return p->rc;
  unsigned char *msg = yajl_get_error(p->y, 0, chunk, n);
  /* yajl ends its message with a newline; errors are one line. */
  size_t len = msg ? strlen((const char *)msg) : 0;
  while (len > 0 && (msg[len - 1] == '\n' || msg[len - 1] == ' ')) msg[--len] = 0;
  char pos[64];
  where(p, pos, sizeof pos);
  p->rc = chakra_error_set(p->err, CHAKRA_EFORMAT, "%s: %s: invalid JSON: %s", p->path, pos,
                           len ? (const char *)msg : "parse error");
  if (msg) yajl_free_error(p->y, msg);
  return p->rc;
}

/* One read, or with fill set as many as it takes to fill buf (a pipe hands
 * out 64 KiB at a time; a grown chunk must reach yajl whole). */
static ssize_t read_chunk(instream *in, unsigned char *buf, size_t cap, int fill, chakra_error *err) {
  size_t got = 0;
  do {
    ssize_t n = instream_read(in, buf + got, cap - got, err);
    if (n <= 0) return n < 0 ? n : (ssize_t)got;
    got += (size_t)n;
  } while (fill && got < cap);
  return (ssize_t)got;
}

static int pack_stream(packer *p, instream *in) {
  /* yajl lexes a token that spans chunks again from its start with every
   * chunk, so a 300 MB string read 256 KiB at a time costs quadratic time.
   * A chunk that completes no token doubles the next read: the rescans
   * then add up to twice the token's length. */
  enum { CHUNK = 256 * 1024, MAX_CHUNK = 1 << 30 };
  size_t cap = CHUNK;
  unsigned char *buf = malloc(cap);
  if (!buf) return chakra_error_set(p->err, CHAKRA_ENOMEM, "out of memory");
  int rc = 0, saw_text = 0;
  for (;;) {
    uint64_t tokens_before = p->tokens;
    ssize_t n = read_chunk(in, buf, cap, cap > CHUNK, p->err);
    if (n < 0) {
      rc = (int)n;
      break;
    }
    /* The final call parses none of our bytes: positions are then the end
     * of the input, not an offset into a stale buffer. */
    p->chunk = n ? buf : NULL;
    p->scanned = 0;
    yajl_status s = n ? yajl_parse(p->y, buf, (size_t)n) : yajl_complete_parse(p->y);
    if (n) scan_raw_text(p, (size_t)n);
    if (s != yajl_status_ok) {
      if (n == 0 && !p->rc && !saw_text) break; /* empty input: reported below */
      rc = parse_error(p, buf, (size_t)n);
      break;
    }
    if (n == 0) break;
    for (ssize_t i = 0; i < n && !saw_text; i++)
      saw_text = buf[i] != ' ' && buf[i] != '\t' && buf[i] != '\r' && buf[i] != '\n';
    /* Line numbers for error messages: memchr is much faster than a byte loop. */
    for (const unsigned char *q = buf, *end = buf + n; (q = memchr(q, '\n', (size_t)(end - q))) != NULL; q++)
      p->lines_before++;
    p->chunk_base += (uint64_t)n;
    if (p->progress && p->progress(p->progress_ctx, "bytes", p->chunk_base, p->total)) {
      rc = chakra_error_set(p->err, CHAKRA_ECANCELED, "%s: stopped by the progress callback", p->path);
      break;
    }
    if (p->tokens == tokens_before && cap < MAX_CHUNK) {
      unsigned char *bigger = realloc(buf, 2 * cap);
      if (bigger) buf = bigger, cap *= 2;
    }
  }
  p->chunk = NULL;
  free(buf);
  if (!rc && (p->depth || p->top != TOP_IDLE)) rc = fail(p, "input ends inside a message"), rc = p->rc;
  if (!rc && p->written == 0) {
    char pos[64];
    where(p, pos, sizeof pos);
    rc = chakra_error_set(p->err, CHAKRA_EFORMAT, "%s: %s: no GlobalMetadata object in the input",
                          p->path, pos);
  }
  return rc;
}

static int pack(const chakra_input *input, const char *out_path, const chakra_sink *sink, int write_flags,
                chakra_json_stats *stats, chakra_diag_fn diag, void *diag_ctx, const chakra_json_options *opt,
                chakra_error *err) {
  chakra_json_stats local;
  packer p = {.path = chakra_input_name(input), .st = stats ? stats : &local, .diag = diag, .diag_ctx = diag_ctx,
              .err = err};
  if (opt && opt->progress) {
    p.progress = opt->progress, p.progress_ctx = opt->progress_ctx;
    p.total = instream_plain_size(input);
  }
  memset(p.st, 0, sizeof *p.st);
  instream *in;
  int rc = instream_open_input(&in, input, err);
  if (rc) return rc;
  rc = sink ? chakra_writer_open_sink(&p.w, sink, write_flags, err) : chakra_writer_open(&p.w, out_path, write_flags, err);
  if (rc) {
    instream_close(in);
    return rc;
  }
  arena_init(&p.a, 64 * 1024);
  p.y = yajl_alloc(&callbacks, NULL, &p);
  if (!p.y) {
    rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  } else {
    yajl_config(p.y, yajl_allow_multiple_values, 1);
    yajl_config(p.y, yajl_dont_validate_strings, 1); /* we replace bad UTF-8 ourselves */
    rc = pack_stream(&p, in);
    yajl_free(p.y);
  }
  for (int i = 0; i < MAX_DEPTH; i++) free(p.stack[i].items);
  arena_free(&p.a);
  instream_close(in);
  if (rc) {
    chakra_writer_discard(p.w);
    return rc;
  }
  return chakra_writer_close(p.w, err);
}

int chakra_pack(const char *in_path, const char *out_path, int write_flags, chakra_json_stats *stats,
                chakra_diag_fn diag, void *diag_ctx, const chakra_json_options *opt, chakra_error *err) {
  chakra_input in = {.path = in_path};
  return pack(&in, out_path, NULL, write_flags, stats, diag, diag_ctx, opt, err);
}

int chakra_pack_io(const chakra_input *in, const chakra_sink *out, int write_flags, chakra_json_stats *stats,
                   chakra_diag_fn diag, void *diag_ctx, const chakra_json_options *opt, chakra_error *err) {
  return pack(in, NULL, out, write_flags, stats, diag, diag_ctx, opt, err);
}
