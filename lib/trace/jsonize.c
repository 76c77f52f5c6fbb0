/* jsonize.c - .et to JSON; see include/chakra/json.h.
 *
 * One generic walk over protobuf-c descriptors prints every message type,
 * so the JSON mapping rules live in one place and new schema fields need no
 * code. The walk follows field-number order, as protobuf's own printers do. */
#include <stdio.h>
#include <string.h>

#include "../util/jsonw.h"
#include "../util/outfile.h"
#include "chakra/json.h"
#include "chakra/trace.h"

typedef struct jctx {
  jsonw w;
  int pretty; /* compat layout: indented, lowerCamelCase */
  int depth;
} jctx;

static void emit_message(jctx *c, const ProtobufCMessage *m);

static void newline_indent(jctx *c) {
  static const char spaces[] = "                                                                ";
  jsonw_char(&c->w, '\n');
  size_t n = (size_t)c->depth * 2;
  while (n > 0) {
    size_t k = n < sizeof spaces - 1 ? n : sizeof spaces - 1;
    jsonw_raw(&c->w, spaces, k);
    n -= k;
  }
}

static void emit_key(jctx *c, const char *name, int first) {
  if (!first) jsonw_char(&c->w, ',');
  if (!c->pretty) {
    jsonw_char(&c->w, '"');
    jsonw_lit(&c->w, name);
    jsonw_raw(&c->w, "\":", 2);
    return;
  }
  newline_indent(c);
  char camel[128];
  size_t k = 0;
  for (const char *p = name; *p && k < sizeof camel - 1; p++) {
    if (*p == '_' && p[1]) {
      char nx = *++p;
      camel[k++] = nx >= 'a' && nx <= 'z' ? (char)(nx - 32) : nx;
    } else {
      camel[k++] = *p;
    }
  }
  camel[k] = 0;
  jsonw_char(&c->w, '"');
  jsonw_lit(&c->w, camel);
  jsonw_raw(&c->w, "\": ", 3);
}

static void emit_scalar(jctx *c, const ProtobufCFieldDescriptor *f, const void *p) {
  jsonw *w = &c->w;
  switch (f->type) {
    case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32: case PROTOBUF_C_TYPE_SFIXED32:
      jsonw_i64(w, *(const int32_t *)p); break;
    case PROTOBUF_C_TYPE_UINT32: case PROTOBUF_C_TYPE_FIXED32:
      jsonw_u64(w, *(const uint32_t *)p); break;
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
      jsonw_i64_quoted(w, *(const int64_t *)p); break;
    case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64:
      jsonw_u64_quoted(w, *(const uint64_t *)p); break;
    case PROTOBUF_C_TYPE_BOOL:
      jsonw_lit(w, *(const protobuf_c_boolean *)p ? "true" : "false"); break;
    case PROTOBUF_C_TYPE_FLOAT:
      if (c->pretty) jsonw_double_py(w, *(const float *)p, 1);
      else jsonw_float(w, *(const float *)p);
      break;
    case PROTOBUF_C_TYPE_DOUBLE:
      if (c->pretty) jsonw_double_py(w, *(const double *)p, 0);
      else jsonw_double(w, *(const double *)p);
      break;
    case PROTOBUF_C_TYPE_ENUM: {
      int v = *(const int *)p;
      const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value(f->descriptor, v);
      if (ev) {
        jsonw_char(w, '"');
        jsonw_lit(w, ev->name);
        jsonw_char(w, '"');
      } else {
        jsonw_i64(w, v); /* open enum: unknown values print as numbers */
      }
      break;
    }
    case PROTOBUF_C_TYPE_STRING: {
      const char *s = *(char *const *)p;
      jsonw_string(w, s ? s : "", s ? strlen(s) : 0);
      break;
    }
    case PROTOBUF_C_TYPE_BYTES: {
      const ProtobufCBinaryData *b = p;
      jsonw_base64(w, b->data, b->len);
      break;
    }
    case PROTOBUF_C_TYPE_MESSAGE:
      emit_message(c, *(ProtobufCMessage *const *)p);
      break;
  }
}

static size_t scalar_size(const ProtobufCFieldDescriptor *f) {
  switch (f->type) {
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_DOUBLE:
      return 8;
    case PROTOBUF_C_TYPE_STRING: case PROTOBUF_C_TYPE_MESSAGE:
      return sizeof(void *);
    case PROTOBUF_C_TYPE_BYTES:
      return sizeof(ProtobufCBinaryData);
    case PROTOBUF_C_TYPE_BOOL:
      return sizeof(protobuf_c_boolean);
    default:
      return 4;
  }
}

/* proto3 singular fields are present when not at their default. */
static int is_set(const ProtobufCMessage *m, const ProtobufCFieldDescriptor *f) {
  const char *base = (const char *)m;
  if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
    return *(const uint32_t *)(base + f->quantifier_offset) == f->id;
  if (f->label == PROTOBUF_C_LABEL_REPEATED) return *(const size_t *)(base + f->quantifier_offset) > 0;
  const void *p = base + f->offset;
  switch (f->type) {
    case PROTOBUF_C_TYPE_STRING: { const char *s = *(char *const *)p; return s && *s; }
    case PROTOBUF_C_TYPE_MESSAGE: return *(void *const *)p != NULL;
    case PROTOBUF_C_TYPE_BYTES: return ((const ProtobufCBinaryData *)p)->len > 0;
    default: {
      static const char zero[16];
      return memcmp(p, zero, scalar_size(f)) != 0;
    }
  }
}

static void emit_repeated(jctx *c, const ProtobufCFieldDescriptor *f, const ProtobufCMessage *m) {
  const char *base = (const char *)m;
  size_t n = *(const size_t *)(base + f->quantifier_offset);
  const char *arr = *(char *const *)(base + f->offset);
  size_t sz = scalar_size(f);
  jsonw_char(&c->w, '[');
  c->depth++;
  for (size_t i = 0; i < n; i++) {
    if (i) jsonw_char(&c->w, ',');
    if (c->pretty) newline_indent(c);
    if (!c->pretty && (f->type == PROTOBUF_C_TYPE_UINT64)) {
      jsonw_u64_quoted(&c->w, ((const uint64_t *)arr)[i]); /* the dep lists: hot */
      continue;
    }
    emit_scalar(c, f, arr + i * sz);
  }
  c->depth--;
  if (c->pretty) newline_indent(c);
  jsonw_char(&c->w, ']');
}

static void emit_message(jctx *c, const ProtobufCMessage *m) {
  const ProtobufCMessageDescriptor *d = m->descriptor;
  jsonw_char(&c->w, '{');
  c->depth++;
  int first = 1;
  for (unsigned i = 0; i < d->n_fields; i++) {
    const ProtobufCFieldDescriptor *f = &d->fields[i];
    if (!is_set(m, f)) continue;
    emit_key(c, f->name, first);
    first = 0;
    if (f->label == PROTOBUF_C_LABEL_REPEATED) emit_repeated(c, f, m);
    else emit_scalar(c, f, (const char *)m + f->offset);
  }
  c->depth--;
  if (c->pretty && !first) newline_indent(c);
  jsonw_char(&c->w, '}');
}

typedef struct jrun {
  jctx c;
  chakra_reader *r;
  outfile *out;
  int layout;
  chakra_json_stats *st;
  chakra_warn_fn warn;
  void *warn_ctx;
  const char *in_path;
} jrun;

static void check_message(jrun *j, const ProtobufCMessage *m, uint64_t before, const char *what,
                          uint64_t id) {
  char msg[512];
  if (j->c.w.bad_utf8 > before && j->warn) {
    snprintf(msg, sizeof msg, "%s: %s %llu: %llu invalid UTF-8 sequence(s) replaced by U+FFFD",
             j->in_path, what, (unsigned long long)id,
             (unsigned long long)(j->c.w.bad_utf8 - before));
    j->warn(j->warn_ctx, msg);
  }
  if (m->n_unknown_fields) j->st->unknown_fields += m->n_unknown_fields;
}

static int jsonize_stream(jrun *j, chakra_error *err) {
  jctx *c = &j->c;
  const chakra_metadata *meta = chakra_reader_metadata(j->r);
  if (j->layout == CHAKRA_JSON_DOCUMENT) jsonw_lit(&c->w, "{\"global_metadata\":");
  emit_message(c, &meta->base);
  check_message(j, &meta->base, 0, "GlobalMetadata", 0);
  if (j->layout == CHAKRA_JSON_DOCUMENT) jsonw_lit(&c->w, ",\"nodes\":[");
  else if (j->layout == CHAKRA_JSON_LINES) jsonw_char(&c->w, '\n');
  chakra_node *n;
  int rc;
  while ((rc = chakra_reader_next(j->r, &n, err)) == 1) {
    uint64_t before = c->w.bad_utf8;
    if (j->layout == CHAKRA_JSON_DOCUMENT) jsonw_raw(&c->w, j->st->nodes ? ",\n" : "\n", j->st->nodes ? 2 : 1);
    emit_message(c, &n->base);
    if (j->layout == CHAKRA_JSON_LINES) jsonw_char(&c->w, '\n');
    check_message(j, &n->base, before, "node", n->id);
    j->st->nodes++;
    if (c->w.failed) break;
  }
  if (rc < 0) return rc;
  if (j->layout == CHAKRA_JSON_DOCUMENT) jsonw_lit(&c->w, "\n]}\n");
  return 0;
}

int chakra_jsonize(const char *in_path, const char *out_path, int layout, int out_gzip,
                   chakra_json_stats *stats, chakra_warn_fn warn, void *warn_ctx,
                   chakra_error *err) {
  chakra_json_stats local;
  jrun j = {.layout = layout, .st = stats ? stats : &local, .warn = warn, .warn_ctx = warn_ctx,
            .in_path = in_path};
  memset(j.st, 0, sizeof *j.st);
  int rc = chakra_reader_open(&j.r, in_path, NULL, err);
  if (rc) return rc;
  rc = outfile_open(&j.out, out_path, out_gzip, err);
  if (rc) {
    chakra_reader_close(j.r);
    return rc;
  }
  if (jsonw_init(&j.c.w, j.out)) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  j.c.pretty = layout == CHAKRA_JSON_COMPAT;
  j.c.w.ascii_only = layout == CHAKRA_JSON_COMPAT;
  if (!rc) rc = jsonize_stream(&j, err);
  if (!rc && jsonw_flush(&j.c.w)) {
    rc = j.c.w.err.code ? j.c.w.err.code : CHAKRA_EIO;
    if (err) *err = j.c.w.err;
  }
  j.st->bad_utf8 = j.c.w.bad_utf8;
  jsonw_free(&j.c.w);
  chakra_reader_close(j.r);
  if (rc) {
    outfile_discard(j.out);
    return rc;
  }
  if (j.st->unknown_fields && warn) {
    char msg[300];
    snprintf(msg, sizeof msg, "%s: %llu unknown protobuf field(s) have no JSON form and were left out",
             in_path, (unsigned long long)j.st->unknown_fields);
    warn(warn_ctx, msg);
  }
  return outfile_commit(j.out, err);
}
