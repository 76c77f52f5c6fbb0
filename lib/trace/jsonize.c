/* jsonize.c - .et to JSON; see include/chakra/json.h.
 *
 * One generic walk over protobuf-c descriptors prints every message type,
 * so the JSON mapping rules live in one place and new schema fields need no
 * code. The walk follows field-number order, as protobuf's own printers do. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/diag.h"
#include "../util/instream.h"
#include "../util/jsonw.h"
#include "../util/outfile.h"
#include "chakra/json.h"
#include "pbfield.h"
#include "chakra/trace.h"
#include "../util/vec.h"

/* Per-descriptor facts the walk needs for every message, worked out once:
 * the key text of each field and where each oneof group ends. */
#define KEY_MAX 48
typedef struct fmeta {
  char key[KEY_MAX];  /* "name": (compact) or "camelName": (pretty) */
  uint8_t key_len;    /* 0: the name is too long to cache; built per use */
  uint16_t oneof_end; /* on the first field of a contiguous oneof group:
                         index past its last field; otherwise 0 */
} fmeta;

typedef struct dmeta {
  const ProtobufCMessageDescriptor *d;
  fmeta *f;
} dmeta;

typedef struct jctx {
  jsonw w;
  int pretty; /* compat layout: indented, lowerCamelCase */
  int depth;
  dmeta *meta;
  size_t n_meta, cap_meta;
  int nomem;
} jctx;

static void emit_message(jctx *c, const ProtobufCMessage *m);

/* Protobuf's lowerCamelCase of a field name. */
static size_t camel_case(const char *name, char *out, size_t cap) {
  size_t k = 0;
  for (const char *p = name; *p && k < cap - 1; p++) {
    if (*p == '_' && p[1]) {
      char nx = *++p;
      out[k++] = nx >= 'a' && nx <= 'z' ? (char)(nx - 32) : nx;
    } else {
      out[k++] = *p;
    }
  }
  out[k] = 0;
  return k;
}

static const fmeta *meta_build(jctx *c, const ProtobufCMessageDescriptor *d) {
  int grown = VEC_ROOM(c->meta, c->n_meta, c->cap_meta, 1) == 0;
  fmeta *f = calloc(d->n_fields ? d->n_fields : 1, sizeof *f);
  if (!grown || !f) {
    free(f);
    c->nomem = 1;
    return NULL;
  }
  for (unsigned i = 0; i < d->n_fields; i++) {
    const ProtobufCFieldDescriptor *fd = &d->fields[i];
    char name[128];
    size_t n = c->pretty ? camel_case(fd->name, name, sizeof name) : strlen(fd->name);
    if (!c->pretty) memcpy(name, fd->name, n < sizeof name ? n : 0);
    if (n + (c->pretty ? 4 : 3) <= KEY_MAX && n < sizeof name) {
      f[i].key[0] = '"';
      memcpy(f[i].key + 1, name, n);
      memcpy(f[i].key + 1 + n, c->pretty ? "\": " : "\":", c->pretty ? 3 : 2);
      f[i].key_len = (uint8_t)(n + (c->pretty ? 4 : 3));
    }
  }
  /* A oneof group can be skipped as a whole only if its members are
   * adjacent in field-number order (then nothing else prints between). */
  for (unsigned i = 0; i < d->n_fields;) {
    const ProtobufCFieldDescriptor *fd = &d->fields[i];
    unsigned j = i + 1;
    if (!(fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)) {
      i = j;
      continue;
    }
    while (j < d->n_fields && (d->fields[j].flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
           d->fields[j].quantifier_offset == fd->quantifier_offset)
      j++;
    int contiguous = 1;
    for (unsigned k = j; k < d->n_fields; k++)
      if ((d->fields[k].flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
          d->fields[k].quantifier_offset == fd->quantifier_offset)
        contiguous = 0;
    if (contiguous) f[i].oneof_end = (uint16_t)j;
    i = j;
  }
  c->meta[c->n_meta].d = d;
  c->meta[c->n_meta].f = f;
  c->n_meta++;
  return f;
}

static inline const fmeta *meta_for(jctx *c, const ProtobufCMessageDescriptor *d) {
  for (size_t i = 0; i < c->n_meta; i++)
    if (c->meta[i].d == d) return c->meta[i].f;
  return meta_build(c, d);
}

static void meta_free(jctx *c) {
  for (size_t i = 0; i < c->n_meta; i++) free(c->meta[i].f);
  free(c->meta);
  c->meta = NULL;
  c->n_meta = 0;
}

static void newline_indent(jctx *c) {
  static const char nl_spaces[] = "\n                                                                ";
  size_t n = (size_t)c->depth * 2;
  if (n + 1 <= sizeof nl_spaces - 1) {
    char *p = jsonw_room(&c->w, sizeof nl_spaces);
    memcpy(p, nl_spaces, sizeof nl_spaces);
    c->w.b.n += n + 1;
    return;
  }
  jsonw_char(&c->w, '\n');
  while (n > 0) {
    size_t k = n < sizeof nl_spaces - 2 ? n : sizeof nl_spaces - 2;
    jsonw_raw(&c->w, nl_spaces + 1, k);
    n -= k;
  }
}

static void emit_key(jctx *c, const ProtobufCFieldDescriptor *f, const fmeta *fm, int first) {
  if (c->pretty) {
    if (!first) jsonw_char(&c->w, ',');
    newline_indent(c);
  }
  if (fm->key_len) {
    char *p = jsonw_room(&c->w, KEY_MAX + 1);
    if (!first && !c->pretty) *p++ = ',', c->w.b.n++;
    memcpy(p, fm->key, KEY_MAX);
    c->w.b.n += fm->key_len;
    return;
  }
  if (!first && !c->pretty) jsonw_char(&c->w, ',');
  jsonw_char(&c->w, '"');
  if (c->pretty) {
    char camel[128];
    camel_case(f->name, camel, sizeof camel);
    jsonw_lit(&c->w, camel);
    jsonw_raw(&c->w, "\": ", 3);
  } else {
    jsonw_lit(&c->w, f->name);
    jsonw_raw(&c->w, "\":", 2);
  }
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
      if (*(const protobuf_c_boolean *)p) jsonw_raw(w, "true", 4);
      else jsonw_raw(w, "false", 5);
      break;
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
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_DOUBLE: {
      uint64_t v;
      memcpy(&v, p, 8);
      return v != 0;
    }
    default: {
      static const char zero[16];
      return memcmp(p, zero, pbfield_elem_size(f)) != 0;
    }
  }
}

/* Compact uint64 lists (the dep lists: most of a node's numbers). */
static void emit_u64_list(jsonw *w, const uint64_t *v, size_t n) {
  for (size_t i = 0; i < n;) {
    size_t k = n - i < 4096 ? n - i : 4096; /* 4096 * 23 bytes fit a reservation */
    char *p = jsonw_room(w, k * 23 + 1), *start = p;
    for (size_t e = i + k; i < e; i++) {
      *p = ',';
      p += i != 0;
      *p++ = '"';
      p += jsonw_put_u64(p, v[i]);
      *p++ = '"';
    }
    w->b.n += (size_t)(p - start);
  }
}

static void emit_repeated(jctx *c, const ProtobufCFieldDescriptor *f, const ProtobufCMessage *m) {
  const char *base = (const char *)m;
  size_t n = *(const size_t *)(base + f->quantifier_offset);
  const char *arr = *(char *const *)(base + f->offset);
  size_t sz = pbfield_elem_size(f);
  jsonw_char(&c->w, '[');
  if (!c->pretty && f->type == PROTOBUF_C_TYPE_UINT64) {
    emit_u64_list(&c->w, (const uint64_t *)arr, n);
    jsonw_char(&c->w, ']');
    return;
  }
  c->depth++;
  for (size_t i = 0; i < n; i++) {
    if (i) jsonw_char(&c->w, ',');
    if (c->pretty) newline_indent(c);
    emit_scalar(c, f, arr + i * sz);
  }
  c->depth--;
  if (c->pretty) newline_indent(c);
  jsonw_char(&c->w, ']');
}

static void emit_field(jctx *c, const ProtobufCMessage *m, const ProtobufCFieldDescriptor *f,
                       const fmeta *fm, int first) {
  emit_key(c, f, fm, first);
  if (f->label == PROTOBUF_C_LABEL_REPEATED) emit_repeated(c, f, m);
  else emit_scalar(c, f, (const char *)m + f->offset);
}

static void emit_message(jctx *c, const ProtobufCMessage *m) {
  const ProtobufCMessageDescriptor *d = m->descriptor;
  const fmeta *fm = meta_for(c, d);
  if (!fm) return; /* out of memory: c->nomem fails the run */
  jsonw_char(&c->w, '{');
  c->depth++;
  int first = 1;
  for (unsigned i = 0; i < d->n_fields; i++) {
    const ProtobufCFieldDescriptor *f = &d->fields[i];
    if (fm[i].oneof_end) {
      /* Only the member named by the case can be set: go straight to it. */
      uint32_t which = *(const uint32_t *)((const char *)m + f->quantifier_offset);
      unsigned end = fm[i].oneof_end;
      const ProtobufCFieldDescriptor *s =
          which ? protobuf_c_message_descriptor_get_field(d, which) : NULL;
      if (s && s >= f && s < d->fields + end) {
        emit_field(c, m, s, &fm[s - d->fields], first);
        first = 0;
      }
      i = end - 1;
      continue;
    }
    if (!is_set(m, f)) continue;
    emit_field(c, m, f, &fm[i], first);
    first = 0;
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
  chakra_diag_fn diag;
  void *diag_ctx;
  const char *in_path;
  chakra_progress_fn progress;
  void *progress_ctx;
  uint64_t total, next; /* the input's size (0: unknown); the offset of the next report */
} jrun;

/* Every this many nodes the reader's offset is looked at: a node takes
 * tens of nanoseconds, so the loop stays as fast as without progress. */
enum { JSONIZE_CHECK_NODES = 1024, JSONIZE_REPORT_BYTES = 4 << 20 };

/* The bytes read so far to the progress callback, about every 4 MiB. */
static int report_bytes(jrun *j, int last, chakra_error *err) {
  uint64_t at = chakra_reader_offset(j->r);
  if (!last && at < j->next) return 0;
  j->next = at + JSONIZE_REPORT_BYTES;
  if (j->progress(j->progress_ctx, "bytes", at, j->total))
    return chakra_error_set(err, CHAKRA_ECANCELED, "%s: stopped by the progress callback", j->in_path);
  return 0;
}

/* is_node: m is a Node (id), not the GlobalMetadata. */
static void check_message(jrun *j, const ProtobufCMessage *m, uint64_t before, int is_node, uint64_t id) {
  if (j->c.w.bad_utf8 > before) {
    chakra_problem p = chakra_diag_on(CHAKRA_SEV_WARNING, j->in_path);
    p.has_node = is_node;
    p.node_id = id;
    chakra_diag_emitf(j->diag, j->diag_ctx, p, "%s%llu invalid UTF-8 sequence(s) replaced by U+FFFD",
                      is_node ? "" : "GlobalMetadata: ", (unsigned long long)(j->c.w.bad_utf8 - before));
  }
  if (m->n_unknown_fields) j->st->unknown_fields += m->n_unknown_fields;
}

static int jsonize_stream(jrun *j, chakra_error *err) {
  jctx *c = &j->c;
  const chakra_metadata *meta = chakra_reader_metadata(j->r);
  if (j->layout == CHAKRA_JSON_DOCUMENT) jsonw_lit(&c->w, "{\"global_metadata\":");
  emit_message(c, &meta->base);
  check_message(j, &meta->base, 0, 0, 0);
  if (j->layout == CHAKRA_JSON_DOCUMENT) jsonw_lit(&c->w, ",\"nodes\":[");
  else if (j->layout == CHAKRA_JSON_LINES) jsonw_char(&c->w, '\n');
  chakra_node *n;
  int rc;
  while ((rc = chakra_reader_next(j->r, &n, err)) == 1) {
    uint64_t before = c->w.bad_utf8;
    if (j->layout == CHAKRA_JSON_DOCUMENT) jsonw_raw(&c->w, j->st->nodes ? ",\n" : "\n", j->st->nodes ? 2 : 1);
    emit_message(c, &n->base);
    if (j->layout == CHAKRA_JSON_LINES) jsonw_char(&c->w, '\n');
    check_message(j, &n->base, before, 1, n->id);
    j->st->nodes++;
    if (c->w.failed) break;
    if (j->progress && j->st->nodes % JSONIZE_CHECK_NODES == 0 && (rc = report_bytes(j, 0, err)) != 0) return rc;
  }
  if (rc < 0) return rc;
  if (j->progress && (rc = report_bytes(j, 1, err)) != 0) return rc;
  if (j->layout == CHAKRA_JSON_DOCUMENT) jsonw_lit(&c->w, "\n]}\n");
  return 0;
}

/* The output opened as the caller said: a file by name or a sink. */
typedef struct jdest {
  const char *path;
  int gzip;
  const chakra_sink *sink;
} jdest;

static int jsonize(const chakra_input *in, const jdest *to, int layout, chakra_json_stats *stats, chakra_diag_fn diag,
                   void *diag_ctx, const chakra_json_options *opt, chakra_error *err) {
  chakra_json_stats local;
  const char *in_path = chakra_input_name(in);
  jrun j = {.layout = layout, .st = stats ? stats : &local, .diag = diag, .diag_ctx = diag_ctx,
            .in_path = in_path};
  if (opt && opt->progress) {
    j.progress = opt->progress, j.progress_ctx = opt->progress_ctx;
    j.total = instream_plain_size(in);
  }
  memset(j.st, 0, sizeof *j.st);
  int rc = chakra_reader_open_input(&j.r, in, NULL, err);
  if (rc) return rc;
  rc = to->sink ? outfile_open_sink(&j.out, to->sink, err) : outfile_open(&j.out, to->path, to->gzip, err);
  if (rc) {
    chakra_reader_close(j.r);
    return rc;
  }
  if (jsonw_init(&j.c.w, j.out)) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  j.c.pretty = layout == CHAKRA_JSON_COMPAT;
  j.c.w.ascii_only = layout == CHAKRA_JSON_COMPAT;
  if (!rc) rc = jsonize_stream(&j, err);
  if (!rc && j.c.nomem) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  meta_free(&j.c);
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
  if (j.st->unknown_fields)
    chakra_diag_warnf(diag, diag_ctx, in_path, "%llu unknown protobuf field(s) have no JSON form and were left out",
                      (unsigned long long)j.st->unknown_fields);
  return outfile_commit(j.out, err);
}

int chakra_jsonize(const char *in_path, const char *out_path, int layout, int out_gzip,
                   chakra_json_stats *stats, chakra_diag_fn diag, void *diag_ctx,
                   const chakra_json_options *opt, chakra_error *err) {
  chakra_input in = {.path = in_path};
  jdest to = {.path = out_path, .gzip = out_gzip};
  return jsonize(&in, &to, layout, stats, diag, diag_ctx, opt, err);
}

int chakra_jsonize_io(const chakra_input *in, const chakra_sink *out, int layout, chakra_json_stats *stats,
                      chakra_diag_fn diag, void *diag_ctx, const chakra_json_options *opt, chakra_error *err) {
  jdest to = {.sink = out};
  return jsonize(in, &to, layout, stats, diag, diag_ctx, opt, err);
}
