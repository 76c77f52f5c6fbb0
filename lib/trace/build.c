/* build.c - the message builder and rank-file names; see
 * include/chakra/build.h. */
#include "chakra/build.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/arena.h"
#include "buildint.h"

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

/* ------------------------------------------------- attribute views */

/* protobuf-c packs a message by visiting every field of its descriptor,
 * and AttributeProto has 32, one set. Each attribute is therefore packed
 * through a copy of the descriptor with just name, doc_string and its own
 * value member: the same offsets and flags, so the same bytes. */
enum { K_INT64, K_UINT64, K_INT32, K_BOOL, K_DOUBLE, K_STRING, K_INT64_LIST, K_UINT64_LIST, K_DOUBLE_LIST,
       K_STRING_LIST, K_KINDS };

static const ChakraProtoMsg__AttributeProto__ValueCase kind_case[K_KINDS] = {
    CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL,   CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL,
    CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL,   CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL,
    CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_DOUBLE_VAL,  CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL,
    CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_LIST,  CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_LIST,
    CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_DOUBLE_LIST, CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_LIST};

typedef struct attr_view {
  ProtobufCFieldDescriptor fields[3]; /* name, doc_string, the member */
  unsigned by_name[3];
  ProtobufCIntRange ranges[3];
} attr_view;

static attr_view views[K_KINDS];
static ProtobufCMessageDescriptor view_desc[K_KINDS];
static pthread_once_t views_once = PTHREAD_ONCE_INIT;

static const ProtobufCFieldDescriptor *full_field(unsigned id) {
  const ProtobufCMessageDescriptor *d = &chakra_proto_msg__attribute_proto__descriptor;
  for (unsigned i = 0; i < d->n_fields; i++)
    if (d->fields[i].id == id) return &d->fields[i];
  return NULL;
}

static void build_view(int k) {
  const ProtobufCMessageDescriptor *full = &chakra_proto_msg__attribute_proto__descriptor;
  attr_view *v = &views[k];
  unsigned member = (unsigned)kind_case[k];
  v->fields[0] = *full_field(1);
  v->fields[1] = *full_field(2);
  v->fields[2] = *full_field(member);
  for (unsigned i = 0; i < 3; i++) v->by_name[i] = i;
  for (unsigned i = 0; i < 3; i++) /* three names: a bubble sort is plenty */
    for (unsigned j = 0; j + 1 < 3 - i; j++)
      if (strcmp(v->fields[v->by_name[j]].name, v->fields[v->by_name[j + 1]].name) > 0) {
        unsigned t = v->by_name[j];
        v->by_name[j] = v->by_name[j + 1];
        v->by_name[j + 1] = t;
      }
  /* number ranges, protobuf-c style: runs of consecutive ids, then a
   * sentinel holding the field count */
  unsigned nr = 0;
  v->ranges[nr++] = (ProtobufCIntRange){1, 0};
  if (member != 3) v->ranges[nr++] = (ProtobufCIntRange){(int)member, 2};
  v->ranges[nr] = (ProtobufCIntRange){0, 3};
  ProtobufCMessageDescriptor *d = &view_desc[k];
  *d = *full;
  d->n_fields = 3;
  d->fields = v->fields;
  d->fields_sorted_by_name = v->by_name;
  d->n_field_ranges = nr;
  d->field_ranges = v->ranges;
}

static void build_views(void) {
  for (int k = 0; k < K_KINDS; k++) build_view(k);
}

/* ------------------------------------------------------------ builder */

enum { MSG_NONE, MSG_META, MSG_NODE };

typedef struct idlist {
  const uint64_t *v; /* borrowed, or own */
  uint64_t *own;
  size_t n, cap;
} idlist;

struct chakra_builder {
  arena a;          /* attributes and lists of the message being built */
  int kind;         /* MSG_* */
  int oom;          /* an addition failed since the start */
  ChakraProtoMsg__Node node;
  ChakraProtoMsg__GlobalMetadata meta;
  ChakraProtoMsg__IOInfo io[2];
  idlist data, ctrl;
  chakra_attr **attrs;
  size_t n_attrs, cap_attrs;
  uint8_t *buf;     /* framed messages */
  size_t len, cap;
  size_t count;
  int first_meta;   /* the first message in buf is a GlobalMetadata */
};

int chakra_builder_new(chakra_builder **out) {
  pthread_once(&views_once, build_views);
  *out = calloc(1, sizeof **out);
  if (!*out) return CHAKRA_ENOMEM;
  arena_init(&(*out)->a, 0);
  return 0;
}

void chakra_builder_free(chakra_builder *b) {
  if (!b) return;
  arena_free(&b->a);
  free(b->data.own);
  free(b->ctrl.own);
  free(b->buf);
  free(b);
}

static void start(chakra_builder *b, int kind) {
  arena_reset(&b->a);
  b->kind = kind;
  b->oom = 0;
  b->n_attrs = b->cap_attrs = 0;
  b->attrs = NULL;
  b->data.v = b->ctrl.v = NULL;
  b->data.n = b->ctrl.n = 0;
}

void chakra_builder_metadata(chakra_builder *b, const char *version) {
  start(b, MSG_META);
  chakra_proto_msg__global_metadata__init(&b->meta);
  b->meta.version = (char *)version;
}

void chakra_builder_node(chakra_builder *b, uint64_t id, const char *name, int type) {
  start(b, MSG_NODE);
  chakra_proto_msg__node__init(&b->node);
  b->node.id = id;
  b->node.name = (char *)name;
  b->node.type = (ChakraProtoMsg__NodeType)type;
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
  if (l->v != l->own || l->n == l->cap) {
    size_t cap = l->cap > l->n ? l->cap : (l->n + 1) * 2;
    if (cap < 8) cap = 8;
    uint64_t *p = l->v == l->own ? realloc(l->own, cap * sizeof *p) : malloc(cap * sizeof *p);
    if (!p) {
      b->oom = 1;
      return;
    }
    if (l->v != l->own) {
      if (l->n) memcpy(p, l->v, l->n * sizeof *p);
      free(l->own);
    }
    l->own = p;
    l->v = p;
    l->cap = cap;
  }
  l->own[l->n++] = id;
}

void chakra_builder_add_data_dep(chakra_builder *b, uint64_t id) { idlist_add(b, &b->data, id); }
void chakra_builder_add_ctrl_dep(chakra_builder *b, uint64_t id) { idlist_add(b, &b->ctrl, id); }
void chakra_builder_start_time(chakra_builder *b, uint64_t micros) { b->node.start_time_micros = micros; }
void chakra_builder_duration(chakra_builder *b, uint64_t micros) { b->node.duration_micros = micros; }

void chakra_builder_io(chakra_builder *b, int which, const char *values, const char *shapes, const char *types) {
  ChakraProtoMsg__IOInfo *io = &b->io[which ? 1 : 0];
  chakra_proto_msg__ioinfo__init(io);
  io->values = (char *)values;
  io->shapes = (char *)shapes;
  io->types = (char *)types;
  if (which) b->node.outputs = io;
  else b->node.inputs = io;
}

/* A new attribute called name of the given kind, its value to be set by
 * the caller; NULL once out of memory. */
static chakra_attr *attr_add(chakra_builder *b, const char *name, int kind) {
  if (b->oom) return NULL;
  if (b->n_attrs == b->cap_attrs) {
    size_t cap = b->cap_attrs ? 2 * b->cap_attrs : 16;
    chakra_attr **v = arena_alloc(&b->a, cap * sizeof *v);
    if (!v) {
      b->oom = 1;
      return NULL;
    }
    if (b->n_attrs) memcpy(v, b->attrs, b->n_attrs * sizeof *v);
    b->attrs = v;
    b->cap_attrs = cap;
  }
  chakra_attr *x = arena_alloc(&b->a, sizeof *x);
  if (!x) {
    b->oom = 1;
    return NULL;
  }
  chakra_proto_msg__attribute_proto__init(x);
  x->base.descriptor = &view_desc[kind];
  x->name = (char *)name;
  x->value_case = kind_case[kind];
  b->attrs[b->n_attrs++] = x;
  return x;
}

void chakra_builder_int64(chakra_builder *b, const char *name, int64_t v) {
  chakra_attr *x = attr_add(b, name, K_INT64);
  if (x) x->int64_val = v;
}

void chakra_builder_uint64(chakra_builder *b, const char *name, uint64_t v) {
  chakra_attr *x = attr_add(b, name, K_UINT64);
  if (x) x->uint64_val = v;
}

void chakra_builder_int32(chakra_builder *b, const char *name, int32_t v) {
  chakra_attr *x = attr_add(b, name, K_INT32);
  if (x) x->int32_val = v;
}

void chakra_builder_bool(chakra_builder *b, const char *name, int v) {
  chakra_attr *x = attr_add(b, name, K_BOOL);
  if (x) x->bool_val = v != 0;
}

void chakra_builder_double(chakra_builder *b, const char *name, double v) {
  chakra_attr *x = attr_add(b, name, K_DOUBLE);
  if (x) x->double_val = v;
}

/* An empty string is still written (a oneof member is present whatever
 * its value) because v is never protobuf-c's own default-value pointer. */
void chakra_builder_string(chakra_builder *b, const char *name, const char *v) {
  chakra_attr *x = attr_add(b, name, K_STRING);
  if (x) x->string_val = (char *)v;
}

/* The list messages share one layout: base, n_values, values. */
#define LIST_ATTR(fn, KIND, T, LT, init, member)                              \
  void fn(chakra_builder *b, const char *name, const T *v, size_t n) {       \
    chakra_attr *x = attr_add(b, name, KIND);                                \
    LT *l = x ? arena_alloc(&b->a, sizeof *l) : NULL;                        \
    if (!l) {                                                                \
      b->oom = 1;                                                            \
      return;                                                                \
    }                                                                        \
    init(l);                                                                 \
    l->n_values = n;                                                         \
    l->values = (void *)v;                                                   \
    x->member = l;                                                           \
  }

LIST_ATTR(chakra_builder_int64_list, K_INT64_LIST, int64_t, ChakraProtoMsg__Int64List,
          chakra_proto_msg__int64_list__init, int64_list)
LIST_ATTR(chakra_builder_uint64_list, K_UINT64_LIST, uint64_t, ChakraProtoMsg__Uint64List,
          chakra_proto_msg__uint64_list__init, uint64_list)
LIST_ATTR(chakra_builder_double_list, K_DOUBLE_LIST, double, ChakraProtoMsg__DoubleList,
          chakra_proto_msg__double_list__init, double_list)
LIST_ATTR(chakra_builder_string_list, K_STRING_LIST, char *const, ChakraProtoMsg__StringList,
          chakra_proto_msg__string_list__init, string_list)

const ProtobufCMessage *chakra_builder_message(const chakra_builder *b) {
  chakra_builder *m = (chakra_builder *)b; /* the lists are set here so that the view is complete */
  if (b->kind == MSG_META) {
    m->meta.attr = b->attrs;
    m->meta.n_attr = b->n_attrs;
    return &m->meta.base;
  }
  if (b->kind != MSG_NODE) return NULL;
  m->node.data_deps = (uint64_t *)b->data.v;
  m->node.n_data_deps = b->data.n;
  m->node.ctrl_deps = (uint64_t *)b->ctrl.v;
  m->node.n_ctrl_deps = b->ctrl.n;
  m->node.attr = b->attrs;
  m->node.n_attr = b->n_attrs;
  return &m->node.base;
}

static int room(chakra_builder *b, size_t n) {
  if (b->cap - b->len >= n) return 0;
  size_t cap = b->cap ? b->cap : 4096;
  while (cap - b->len < n) cap *= 2;
  uint8_t *p = realloc(b->buf, cap);
  if (!p) return -1;
  b->buf = p;
  b->cap = cap;
  return 0;
}

int chakra_builder_put(chakra_builder *b, chakra_error *err) {
  const ProtobufCMessage *msg = chakra_builder_message(b);
  if (!msg) return chakra_error_set(err, CHAKRA_EINVAL, "no message started");
  if (b->oom) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  size_t len = protobuf_c_message_get_packed_size(msg);
  if (len > CHAKRA_DEFAULT_MAX_MESSAGE) {
    if (b->kind == MSG_NODE)
      return chakra_error_set(err, CHAKRA_EINVAL, "node %llu: message of %zu bytes exceeds the limit of %u",
                              (unsigned long long)b->node.id, len, CHAKRA_DEFAULT_MAX_MESSAGE);
    return chakra_error_set(err, CHAKRA_EINVAL, "GlobalMetadata of %zu bytes exceeds the limit of %u", len,
                            CHAKRA_DEFAULT_MAX_MESSAGE);
  }
  if (room(b, len + 10)) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  size_t k = chakra_varint_encode(len, b->buf + b->len);
  protobuf_c_message_pack(msg, b->buf + b->len + k);
  b->len += k + len;
  if (!b->count++) b->first_meta = b->kind == MSG_META;
  return 0;
}

const uint8_t *chakra_builder_bytes(const chakra_builder *b, size_t *len) {
  *len = b->len;
  return b->buf;
}

size_t chakra_builder_count(const chakra_builder *b) { return b->count; }

void chakra_builder_clear(chakra_builder *b) {
  b->len = 0;
  b->count = 0;
}

int builder_first_is_meta(const chakra_builder *b) { return b->first_meta; }
