/* flatwrite.c - a trace written from flat arrays; see include/chakra/flat.h.
 *
 * The arrays come from another language, filled by hand: everything is
 * checked before the first byte is written, so a bad index is one error
 * naming the node and field, never a read outside an array or half a
 * file. Messages are built as protobuf-c structs in an arena reset per
 * node and packed by the library's one encoder (chakra_writer_put). */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../util/arena.h"
#include "chakra/flat.h"
#include "flatint.h"

typedef struct wstate {
  const chakra_flat *f;
  const char *out;   /* the output's name, for messages */
  chakra_error *err;
  arena a;
} wstate;

static int bad(const wstate *w, uint64_t node, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* node UINT64_MAX: the GlobalMetadata; UINT64_MAX - 1: the whole table. */
static int bad(const wstate *w, uint64_t node, const char *field, const char *fmt, ...) {
  char what[400], where[128];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  if (node == UINT64_MAX) snprintf(where, sizeof where, "metadata");
  else if (node == UINT64_MAX - 1) snprintf(where, sizeof where, "table");
  else if (w->f->id) snprintf(where, sizeof where, "node %llu (id %llu)", (unsigned long long)node,
                              (unsigned long long)w->f->id[node]);
  else snprintf(where, sizeof where, "node %llu", (unsigned long long)node);
  return chakra_error_set(w->err, CHAKRA_EINVAL, "%s: %s: %s: %s", w->out, where, field, what);
}

/* ---- the checks ----------------------------------------------------------- */

static int check_string(const wstate *w, uint64_t node, const char *field, uint64_t s, int text) {
  const chakra_flat *f = w->f;
  if (s >= f->n_strings) {
    if (s == 0) return 0; /* no strings at all: string 0 is "" */
    return bad(w, node, field, "string %llu, but there are %llu", (unsigned long long)s,
               (unsigned long long)f->n_strings);
  }
  uint64_t len = f->str_off[s + 1] - f->str_off[s]; /* strings may be NULL when every string is empty */
  if (text && len && memchr(f->strings + f->str_off[s], 0, len))
    return bad(w, node, field, "holds a NUL byte, which a protobuf string cannot carry here");
  return 0;
}

/* n + 1 offsets that never go back; *end receives the last. */
static int check_offsets(const wstate *w, const uint64_t *off, uint64_t n, const char *field, uint64_t *end) {
  *end = 0;
  if (!off) return n ? bad(w, UINT64_MAX - 1, field, "missing (NULL) for %llu nodes", (unsigned long long)n) : 0;
  for (uint64_t i = 0; i < n; i++)
    if (off[i + 1] < off[i]) return bad(w, i, field, "offsets go back (%llu after %llu)",
                                        (unsigned long long)off[i + 1], (unsigned long long)off[i]);
  *end = off[n];
  return 0;
}

static int check_table(const wstate *w) {
  const chakra_flat *f = w->f;
  uint64_t end;
  if (check_offsets(w, f->str_off, f->n_strings, "str_off", &end)) return -1;
  if (end > f->str_off[0] && !f->strings) return bad(w, UINT64_MAX - 1, "strings", "missing (NULL)");
  if (f->n && (!f->id || !f->type || !f->name || !f->start_time_micros || !f->duration_micros))
    return bad(w, UINT64_MAX - 1, "id, type, name, start_time_micros, duration_micros", "a column is missing (NULL)");
  if (check_offsets(w, f->data_dep_off, f->n, "data_dep_off", &end)) return -1;
  if (end && !f->data_deps) return bad(w, UINT64_MAX - 1, "data_deps", "missing (NULL)");
  if (check_offsets(w, f->ctrl_dep_off, f->n, "ctrl_dep_off", &end)) return -1;
  if (end && !f->ctrl_deps) return bad(w, UINT64_MAX - 1, "ctrl_deps", "missing (NULL)");
  if (f->attr_off && check_offsets(w, f->attr_off, f->n, "attr_off", &end)) return -1;
  if (f->attr_off && end > f->n_attrs)
    return bad(w, UINT64_MAX - 1, "attr_off", "reaches row %llu, but there are %llu", (unsigned long long)end,
               (unsigned long long)f->n_attrs);
  if (f->n_meta_attrs > f->n_attrs)
    return bad(w, UINT64_MAX, "n_meta_attrs", "%llu, but there are %llu rows", (unsigned long long)f->n_meta_attrs,
               (unsigned long long)f->n_attrs);
  if (f->n_attrs && (!f->attr_name || !f->attr_doc || !f->attr_kind || !f->attr_value || !f->attr_count))
    return bad(w, UINT64_MAX - 1, "attr_*", "a column of the attribute rows is missing (NULL)");
  if (f->io && !f->io_strings) return bad(w, UINT64_MAX - 1, "io_strings", "missing (NULL) while io is given");
  return 0;
}

/* One value (a scalar's cell or a list element) fits its element kind. */
static int check_cell(const wstate *w, uint64_t node, const char *field, int32_t kind, uint64_t v) {
  int64_t sv = (int64_t)v;
  double d;
  switch (kind) {
  case CHAKRA_AV_INT32: case CHAKRA_AV_SINT32: case CHAKRA_AV_SFIXED32:
    if (sv < INT32_MIN || sv > INT32_MAX) return bad(w, node, field, "%lld does not fit a 32-bit signed kind", (long long)sv);
    return 0;
  case CHAKRA_AV_UINT32: case CHAKRA_AV_FIXED32:
    return v > UINT32_MAX ? bad(w, node, field, "%llu does not fit a 32-bit unsigned kind", (unsigned long long)v) : 0;
  case CHAKRA_AV_BOOL: return v > 1 ? bad(w, node, field, "bool value %llu (0 or 1)", (unsigned long long)v) : 0;
  case CHAKRA_AV_FLOAT:
    memcpy(&d, &v, sizeof d);
    return isfinite(d) && fabs(d) > FLT_MAX ? bad(w, node, field, "%g does not fit a float", d) : 0;
  case CHAKRA_AV_STRING: return check_string(w, node, field, v, 1);
  case CHAKRA_AV_BYTES: return check_string(w, node, field, v, 0);
  default: return 0;
  }
}

static int check_row(const wstate *w, uint64_t node, uint64_t r) {
  const chakra_flat *f = w->f;
  char field[64];
  snprintf(field, sizeof field, "attribute row %llu", (unsigned long long)r);
  int32_t kind = f->attr_kind[r];
  if (check_string(w, node, field, f->attr_name[r], 1) || check_string(w, node, field, f->attr_doc[r], 1)) return -1;
  if (!flat_kind_valid(kind)) return bad(w, node, field, "kind %d is no AttributeProto value field", kind);
  if (kind == CHAKRA_AV_NONE) return 0;
  if (!flat_kind_is_list(kind)) return check_cell(w, node, field, kind, f->attr_value[r]);
  uint64_t first = f->attr_value[r], n = f->attr_count[r];
  if (first > f->n_values || n > f->n_values - first)
    return bad(w, node, field, "list elements %llu + %llu, but there are %llu", (unsigned long long)first,
               (unsigned long long)n, (unsigned long long)f->n_values);
  for (uint64_t k = 0; k < n; k++)
    if (check_cell(w, node, field, flat_elem_kind(kind), f->values[first + k])) return -1;
  return 0;
}

static int check_node(const wstate *w, uint64_t i) {
  const chakra_flat *f = w->f;
  static const char *const io_field[6] = {"inputs.values", "inputs.shapes", "inputs.types",
                                          "outputs.values", "outputs.shapes", "outputs.types"};
  if (check_string(w, i, "name", f->name[i], 1)) return -1;
  for (int k = 0; f->io && k < 6; k++)
    if (check_string(w, i, io_field[k], f->io_strings[6 * i + k], 1)) return -1;
  for (uint64_t r = f->attr_off ? f->attr_off[i] : 0; f->attr_off && r < f->attr_off[i + 1]; r++)
    if (check_row(w, i, r)) return -1;
  return 0;
}

static int check_all(const wstate *w) {
  const chakra_flat *f = w->f;
  if (check_table(w) || check_string(w, UINT64_MAX, "version", f->version, 1)) return -1;
  for (uint64_t r = 0; r < f->n_meta_attrs; r++)
    if (check_row(w, UINT64_MAX, r)) return -1;
  for (uint64_t i = 0; i < f->n; i++)
    if (check_node(w, i)) return -1;
  return 0;
}

/* ---- the messages ---------------------------------------------------------- */

static const ProtobufCMessageDescriptor *const list_desc[33] = {
    [4] = &chakra_proto_msg__double_list__descriptor,    [6] = &chakra_proto_msg__float_list__descriptor,
    [8] = &chakra_proto_msg__int32_list__descriptor,     [10] = &chakra_proto_msg__int64_list__descriptor,
    [12] = &chakra_proto_msg__uint32_list__descriptor,   [14] = &chakra_proto_msg__uint64_list__descriptor,
    [16] = &chakra_proto_msg__sint32_list__descriptor,   [18] = &chakra_proto_msg__sint64_list__descriptor,
    [20] = &chakra_proto_msg__fixed32_list__descriptor,  [22] = &chakra_proto_msg__fixed64_list__descriptor,
    [24] = &chakra_proto_msg__sfixed32_list__descriptor, [26] = &chakra_proto_msg__sfixed64_list__descriptor,
    [28] = &chakra_proto_msg__bool_list__descriptor,     [30] = &chakra_proto_msg__string_list__descriptor,
    [32] = &chakra_proto_msg__bytes_list__descriptor};

static size_t elem_size(int32_t kind) {
  switch (flat_elem_kind(kind)) {
  case CHAKRA_AV_FLOAT: case CHAKRA_AV_INT32: case CHAKRA_AV_UINT32: case CHAKRA_AV_SINT32:
  case CHAKRA_AV_FIXED32: case CHAKRA_AV_SFIXED32: return 4;
  case CHAKRA_AV_BOOL: return sizeof(protobuf_c_boolean);
  case CHAKRA_AV_STRING: return sizeof(char *);
  case CHAKRA_AV_BYTES: return sizeof(ProtobufCBinaryData);
  default: return 8;
  }
}

/* String s NUL-terminated in the arena, or NULL when out of memory. */
static char *text(wstate *w, uint64_t s) {
  const chakra_flat *f = w->f;
  size_t len = s < f->n_strings ? f->str_off[s + 1] - f->str_off[s] : 0;
  char *p = arena_alloc(&w->a, len + 1);
  if (!p) return NULL;
  if (len) memcpy(p, f->strings + f->str_off[s], len);
  p[len] = 0;
  return p;
}

static ProtobufCBinaryData bytes(const wstate *w, uint64_t s) {
  const chakra_flat *f = w->f;
  ProtobufCBinaryData b = {0, NULL};
  if (s < f->n_strings) {
    b.len = f->str_off[s + 1] - f->str_off[s];
    b.data = (uint8_t *)(f->strings + f->str_off[s]); /* only read by the packer */
  }
  return b;
}

/* Stores cell v as element kind at dst; returns -1 when out of memory. */
static int put_cell(wstate *w, int32_t kind, uint64_t v, void *dst) {
  double d;
  memcpy(&d, &v, sizeof d);
  switch (kind) {
  case CHAKRA_AV_DOUBLE: memcpy(dst, &d, 8); return 0;
  case CHAKRA_AV_FLOAT: *(float *)dst = (float)d; return 0;
  case CHAKRA_AV_INT32: case CHAKRA_AV_SINT32: case CHAKRA_AV_SFIXED32: *(int32_t *)dst = (int32_t)(int64_t)v; return 0;
  case CHAKRA_AV_UINT32: case CHAKRA_AV_FIXED32: *(uint32_t *)dst = (uint32_t)v; return 0;
  case CHAKRA_AV_BOOL: *(protobuf_c_boolean *)dst = v != 0; return 0;
  case CHAKRA_AV_STRING: return (*(char **)dst = text(w, v)) ? 0 : -1;
  case CHAKRA_AV_BYTES: *(ProtobufCBinaryData *)dst = bytes(w, v); return 0;
  default: memcpy(dst, &v, 8); return 0;
  }
}

static int fill_list(wstate *w, chakra_attr *a, uint64_t first, uint64_t n) {
  const chakra_flat *f = w->f;
  int32_t kind = (int32_t)a->value_case, ek = flat_elem_kind(kind);
  flat_anylist *l = arena_alloc(&w->a, sizeof *l);
  size_t es = elem_size(kind);
  unsigned char *v = arena_alloc(&w->a, n ? n * es : 1);
  if (!l || !v) return -1;
  *l = (flat_anylist){PROTOBUF_C_MESSAGE_INIT(list_desc[kind]), n, n ? v : NULL};
  for (uint64_t k = 0; k < n; k++)
    if (put_cell(w, ek, f->values[first + k], v + k * es)) return -1;
  a->double_list = (ChakraProtoMsg__DoubleList *)l; /* the union's one pointer slot */
  return 0;
}

static chakra_attr *make_attr(wstate *w, uint64_t r) {
  const chakra_flat *f = w->f;
  chakra_attr *a = arena_alloc(&w->a, sizeof *a);
  if (!a) return NULL;
  *a = (chakra_attr)CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT;
  if (!(a->name = text(w, f->attr_name[r])) || !(a->doc_string = text(w, f->attr_doc[r]))) return NULL;
  int32_t kind = f->attr_kind[r];
  a->value_case = (ChakraProtoMsg__AttributeProto__ValueCase)kind;
  if (kind == CHAKRA_AV_NONE) return a;
  if (flat_kind_is_list(kind)) return fill_list(w, a, f->attr_value[r], f->attr_count[r]) ? NULL : a;
  /* the union's members all start at its address */
  return put_cell(w, kind, f->attr_value[r], &a->double_val) ? NULL : a;
}

static chakra_attr **make_attrs(wstate *w, uint64_t from, uint64_t to) {
  chakra_attr **v = arena_alloc(&w->a, (to - from + 1) * sizeof *v);
  for (uint64_t r = from; v && r < to; r++)
    if (!(v[r - from] = make_attr(w, r))) return NULL;
  return v;
}

static ChakraProtoMsg__IOInfo *make_io(wstate *w, uint64_t i, int which) {
  const chakra_flat *f = w->f;
  if (!(f->io[i] & (which ? CHAKRA_FLAT_OUTPUTS : CHAKRA_FLAT_INPUTS))) return NULL;
  ChakraProtoMsg__IOInfo *io = arena_alloc(&w->a, sizeof *io);
  if (!io) return NULL;
  *io = (ChakraProtoMsg__IOInfo)CHAKRA_PROTO_MSG__IOINFO__INIT;
  const uint64_t *s = f->io_strings + 6 * i + 3 * which;
  io->values = text(w, s[0]), io->shapes = text(w, s[1]), io->types = text(w, s[2]);
  return io->values && io->shapes && io->types ? io : NULL;
}

static int oom(const wstate *w) { return chakra_error_set(w->err, CHAKRA_ENOMEM, "%s: out of memory", w->out); }

static int put_metadata(wstate *w, chakra_writer *wr) {
  const chakra_flat *f = w->f;
  chakra_metadata m = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
  m.version = text(w, f->version);
  m.n_attr = f->n_meta_attrs;
  m.attr = make_attrs(w, 0, f->n_meta_attrs);
  if (!m.version || !m.attr) return oom(w);
  return chakra_writer_put(wr, &m.base, w->err);
}

static int put_node(wstate *w, chakra_writer *wr, uint64_t i) {
  const chakra_flat *f = w->f;
  chakra_node nd = CHAKRA_PROTO_MSG__NODE__INIT;
  nd.id = f->id[i];
  nd.type = (ChakraProtoMsg__NodeType)f->type[i];
  nd.start_time_micros = f->start_time_micros[i];
  nd.duration_micros = f->duration_micros[i];
  nd.n_data_deps = f->data_dep_off[i + 1] - f->data_dep_off[i];
  nd.data_deps = nd.n_data_deps ? (uint64_t *)f->data_deps + f->data_dep_off[i] : NULL; /* only read */
  nd.n_ctrl_deps = f->ctrl_dep_off[i + 1] - f->ctrl_dep_off[i];
  nd.ctrl_deps = nd.n_ctrl_deps ? (uint64_t *)f->ctrl_deps + f->ctrl_dep_off[i] : NULL;
  if (!(nd.name = text(w, f->name[i]))) return oom(w);
  if (f->io && (((f->io[i] & CHAKRA_FLAT_INPUTS) && !(nd.inputs = make_io(w, i, 0))) ||
                ((f->io[i] & CHAKRA_FLAT_OUTPUTS) && !(nd.outputs = make_io(w, i, 1)))))
    return oom(w);
  if (f->attr_off) {
    nd.n_attr = f->attr_off[i + 1] - f->attr_off[i];
    if (!(nd.attr = make_attrs(w, f->attr_off[i], f->attr_off[i + 1]))) return oom(w);
  }
  return chakra_writer_put(wr, &nd.base, w->err);
}

static int write_all(wstate *w, chakra_writer *wr) {
  int rc = put_metadata(w, wr);
  for (uint64_t i = 0; !rc && i < w->f->n; i++) {
    arena_reset(&w->a);
    rc = put_node(w, wr, i);
  }
  if (rc) {
    chakra_writer_discard(wr);
    return rc;
  }
  return chakra_writer_close(wr, w->err);
}

/* Checks, then opens the output (path, or sink when path is NULL). */
static int write_flat(const chakra_flat *f, const char *path, const chakra_sink *sink, chakra_error *err) {
  wstate w = {.f = f, .out = path ? path : chakra_sink_name(sink), .err = err};
  if (check_all(&w)) return CHAKRA_EINVAL;
  chakra_writer *wr;
  int rc = path ? chakra_writer_open(&wr, path, 0, err) : chakra_writer_open_sink(&wr, sink, 0, err);
  if (rc) return rc;
  arena_init(&w.a, 64 * 1024);
  rc = write_all(&w, wr);
  arena_free(&w.a);
  return rc;
}

int chakra_flat_write(const chakra_flat *f, const char *path, chakra_error *err) {
  return write_flat(f, path, NULL, err);
}

int chakra_flat_write_to(const chakra_flat *f, const chakra_sink *out, chakra_error *err) {
  return write_flat(f, NULL, out, err);
}
