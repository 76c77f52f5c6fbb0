/* flatread.c - a trace read into flat arrays; see include/chakra/flat.h. */
#include <stdlib.h>
#include <string.h>

#include "../util/bigmem.h"
#include "chakra/attr.h"
#include "chakra/flat.h"
#include "flatint.h"
#include "flatscan.h"
#include "../trace/readerint.h"

/* The columns, each a growable array the result keeps. */
enum {
  C_ID, C_START, C_DUR, C_TYPE, C_NAME, C_DDO, C_DD, C_CDO, C_CD, C_AO, C_IO, C_IOS,
  C_AN, C_AD, C_AK, C_AV, C_AC, C_VALUES, C_STROFF, C_STRINGS,
  C_PRESENT, C_CPU, C_CTYPE, C_CSIZE, C_NOPS, C_TSIZE, C_SRC, C_DST, C_TAG, C_PG, C_N
};
static const unsigned char col_size[C_N] = {
    [C_ID] = 8, [C_START] = 8, [C_DUR] = 8, [C_TYPE] = 4, [C_NAME] = 8, [C_DDO] = 8, [C_DD] = 8,
    [C_CDO] = 8, [C_CD] = 8, [C_AO] = 8, [C_IO] = 1, [C_IOS] = 8, [C_AN] = 8, [C_AD] = 8,
    [C_AK] = 4, [C_AV] = 8, [C_AC] = 8, [C_VALUES] = 8, [C_STROFF] = 8, [C_STRINGS] = 1,
    [C_PRESENT] = 4, [C_CPU] = 1, [C_CTYPE] = 8, [C_CSIZE] = 8, [C_NOPS] = 8, [C_TSIZE] = 8,
    [C_SRC] = 4, [C_DST] = 4, [C_TAG] = 4, [C_PG] = 8};

typedef struct vec {
  unsigned char *p;
  size_t n, cap; /* elements */
} vec;

/* The result and what it owns: chakra_flat_free() gets the public part,
 * the first member. */
typedef struct flat_owned {
  chakra_flat pub;
  vec col[C_N];
} flat_owned;

typedef struct reader_state {
  flat_owned *o;
  const chakra_flat_options *opt;
  const char *path;
  uint64_t *slots; /* interned strings: SLOT(hash tag, string index), 0 = empty slot */
  size_t n_slots, n_interned;
  uint64_t offset; /* of the node being read */
  int oom, warned_unknown;
} reader_state;

static int reserve(vec *v, size_t elem, size_t need) {
  if (need <= v->cap) return 0;
  size_t nc = v->cap ? v->cap : 256;
  while (nc < need) nc *= 2;
  unsigned char *p = bigmem_realloc(v->p, nc * elem); /* huge pages: a fault per 2 MiB */
  if (!p) return -1;
  v->p = p;
  v->cap = nc;
  return 0;
}

/* Room for k more elements of column c, or NULL (remembered) when out of memory. */
static void *add(reader_state *s, int c, size_t k) {
  static uint64_t nothing; /* room for no element: a pointer all the same */
  if (!k) return s->oom ? NULL : &nothing;
  vec *v = &s->o->col[c];
  if (s->oom || (v->n + k > v->cap && reserve(v, col_size[c], v->n + k))) {
    s->oom = 1;
    return NULL;
  }
  void *p = v->p + v->n * col_size[c];
  v->n += k;
  return p;
}

/* One more element of column c: the common case, where it fits, inline. */
static inline void *add1(reader_state *s, int c) {
  vec *v = &s->o->col[c];
  if (v->n < v->cap) return v->p + v->n++ * col_size[c];
  return add(s, c, 1);
}

static inline void add_u64(reader_state *s, int c, uint64_t x) {
  uint64_t *p = add1(s, c);
  if (p) *p = x;
}

static uint64_t count(const reader_state *s, int c) { return s->o->col[c].n; }

static uint64_t add_string(reader_state *s, const void *data, size_t len) {
  if (!len) return 0;
  char *p = add(s, C_STRINGS, len);
  if (!p) return 0;
  memcpy(p, data, len);
  add_u64(s, C_STROFF, count(s, C_STRINGS));
  return count(s, C_STROFF) - 2;
}

static uint64_t add_cstring(reader_state *s, const char *str) { return str ? add_string(s, str, strlen(str)) : 0; }

/* 32 bits of hash, eight bytes at a time (a name is hashed for every node
 * that has one). */
static uint32_t hash_tag(const char *p, size_t n) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ n, x;
  for (; n >= 8; p += 8, n -= 8) {
    memcpy(&x, p, 8);
    h = (h ^ x) * 0xff51afd7ed558ccdull;
    h ^= h >> 29;
  }
  x = 0;
  memcpy(&x, p, n);
  h = (h ^ x) * 0xc4ceb9fe1a85ec53ull;
  return (uint32_t)(h >> 32);
}

/* A slot holds a string's hash tag (high half) and its index + 1 (low
 * half; 0 = empty), so growing the table and passing other strings' slots
 * never touch the strings themselves. */
#define SLOT(tag, idx) ((uint64_t)(tag) << 32 | ((idx) + 1))
#define SLOT_TAG(v) ((uint32_t)((v) >> 32))
#define SLOT_INDEX(v) (((v) & 0xffffffffu) - 1)

static int grow_slots(reader_state *s) {
  size_t nn = s->n_slots ? s->n_slots * 2 : 256;
  uint64_t *ns = calloc(nn, sizeof *ns);
  if (!ns) return -1;
  for (size_t i = 0; i < s->n_slots; i++) {
    uint64_t v = s->slots[i];
    if (!v) continue;
    size_t j = SLOT_TAG(v) & (nn - 1);
    while (ns[j]) j = (j + 1) & (nn - 1);
    ns[j] = v;
  }
  free(s->slots);
  s->slots = ns;
  s->n_slots = nn;
  return 0;
}

/* A string stored once however often it occurs (attribute names, group
 * names: a handful of distinct values over millions of nodes; node names,
 * a PyTorch operator's name on every layer's nodes: a sixth as many
 * distinct names as nodes in bench/viewgen's traces, so a binding makes
 * a sixth of the objects). Past 2^32 - 1 strings (no trace has them) new
 * ones are stored as they come. */
static uint64_t intern_n(reader_state *s, const char *str, size_t len) {
  if (!len || s->oom) return 0;
  if (s->n_slots > ((size_t)1 << 32) || count(s, C_STROFF) >= UINT32_MAX) return add_string(s, str, len);
  if (2 * (s->n_interned + 1) > s->n_slots && grow_slots(s)) {
    s->oom = 1;
    return 0;
  }
  const uint64_t *off = (const uint64_t *)s->o->col[C_STROFF].p;
  const char *all = (const char *)s->o->col[C_STRINGS].p;
  uint32_t tag = hash_tag(str, len);
  size_t j = tag & (s->n_slots - 1);
  for (uint64_t v; (v = s->slots[j]) != 0; j = (j + 1) & (s->n_slots - 1)) {
    uint64_t k = SLOT_INDEX(v);
    if (SLOT_TAG(v) == tag && off[k + 1] - off[k] == len && memcmp(all + off[k], str, len) == 0) return k;
  }
  uint64_t idx = add_string(s, str, len);
  if (!s->oom) {
    s->slots[j] = SLOT(tag, idx);
    s->n_interned++;
  }
  return idx;
}

static uint64_t intern(reader_state *s, const char *str) { return str ? intern_n(s, str, strlen(str)) : 0; }

static uint64_t double_bits(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}

/* Element k of a list as a cell (strings and bytes excepted: add_list). */
static uint64_t list_cell(int32_t kind, const void *values, size_t k) {
  switch (flat_elem_kind(kind)) {
  case CHAKRA_AV_DOUBLE: return double_bits(((const double *)values)[k]);
  case CHAKRA_AV_FLOAT: return double_bits(((const float *)values)[k]);
  case CHAKRA_AV_INT32: case CHAKRA_AV_SINT32: case CHAKRA_AV_SFIXED32:
    return (uint64_t)(int64_t)((const int32_t *)values)[k];
  case CHAKRA_AV_UINT32: case CHAKRA_AV_FIXED32: return ((const uint32_t *)values)[k];
  case CHAKRA_AV_BOOL: return ((const protobuf_c_boolean *)values)[k] != 0;
  default: return ((const uint64_t *)values)[k]; /* the 64-bit integer kinds */
  }
}

static uint64_t scalar_cell(reader_state *s, const chakra_attr *a) {
  switch ((int32_t)a->value_case) {
  case CHAKRA_AV_DOUBLE: return double_bits(a->double_val);
  case CHAKRA_AV_FLOAT: return double_bits(a->float_val);
  case CHAKRA_AV_INT32: case CHAKRA_AV_SINT32: case CHAKRA_AV_SFIXED32: return (uint64_t)(int64_t)a->int32_val;
  case CHAKRA_AV_UINT32: case CHAKRA_AV_FIXED32: return a->uint32_val;
  case CHAKRA_AV_BOOL: return a->bool_val != 0;
  case CHAKRA_AV_STRING: return add_cstring(s, a->string_val);
  case CHAKRA_AV_BYTES: return add_string(s, a->bytes_val.data, a->bytes_val.len);
  default: return a->uint64_val; /* the 64-bit integer kinds share the union's first word */
  }
}

/* A list's elements go to values; returns the first one's index, *n their count. */
static uint64_t add_list(reader_state *s, const chakra_attr *a, uint64_t *n) {
  const flat_anylist *l = (const flat_anylist *)a->double_list; /* every list member shares the slot */
  int32_t kind = (int32_t)a->value_case;
  uint64_t first = count(s, C_VALUES);
  *n = l ? l->n_values : 0;
  for (size_t k = 0; k < *n && !s->oom; k++) {
    uint64_t cell;
    if (kind == CHAKRA_AV_STRING_LIST) cell = add_cstring(s, ((char *const *)l->values)[k]);
    else if (kind == CHAKRA_AV_BYTES_LIST)
      cell = add_string(s, ((const ProtobufCBinaryData *)l->values)[k].data,
                        ((const ProtobufCBinaryData *)l->values)[k].len);
    else cell = list_cell(kind, l->values, k);
    add_u64(s, C_VALUES, cell);
  }
  return first;
}

static void add_attr(reader_state *s, const chakra_attr *a) {
  int32_t kind = (int32_t)a->value_case;
  uint64_t value = 0, n = 0;
  add_u64(s, C_AN, intern(s, a->name));
  add_u64(s, C_AD, add_cstring(s, a->doc_string));
  if (flat_kind_is_list(kind)) {
    value = add_list(s, a, &n);
  } else if (kind != CHAKRA_AV_NONE) {
    value = scalar_cell(s, a);
    n = 1;
  }
  int32_t *k = add(s, C_AK, 1);
  if (k) *k = kind;
  add_u64(s, C_AV, value);
  add_u64(s, C_AC, n);
}

static void warn(reader_state *s, uint64_t node_id, int has_node, const char *what) {
  if (!s->opt->diag) return;
  chakra_problem p = chakra_problem_make(CHAKRA_SEV_WARNING, what);
  p.file = s->path;
  p.has_offset = 1;
  p.offset = s->offset;
  p.has_node = has_node;
  p.node_id = node_id;
  s->opt->diag(s->opt->diag_ctx, &p);
}

static void count_unknown(reader_state *s, const ProtobufCMessage *m, uint64_t node_id, int has_node) {
  if (!m || !m->n_unknown_fields) return;
  s->o->pub.unknown_fields += m->n_unknown_fields;
  if (s->warned_unknown++) return;
  warn(s, node_id, has_node,
       "fields outside the schema (a newer schema?) have no column and are dropped; later ones are not reported");
}

static void add_attrs(reader_state *s, chakra_attr *const *attr, size_t n, uint64_t node_id, int has_node) {
  for (size_t i = 0; i < n; i++) {
    add_attr(s, attr[i]);
    count_unknown(s, &attr[i]->base, node_id, has_node);
    if (flat_kind_is_list((int32_t)attr[i]->value_case))
      count_unknown(s, (const ProtobufCMessage *)attr[i]->double_list, node_id, has_node);
  }
}

/* The io columns start when the first node with inputs or outputs comes:
 * every node before it gets none. */
static void add_io(reader_state *s, const chakra_node *nd, uint64_t index) {
  if (!nd->inputs && !nd->outputs && !count(s, C_IO)) return;
  if (!count(s, C_IO)) {
    uint8_t *io = add(s, C_IO, index);
    uint64_t *st = add(s, C_IOS, 6 * index);
    if (!io || !st) return;
    memset(io, 0, index);
    memset(st, 0, 6 * index * sizeof *st);
  }
  uint8_t *flags = add(s, C_IO, 1);
  if (flags) *flags = (uint8_t)((nd->inputs ? CHAKRA_FLAT_INPUTS : 0) | (nd->outputs ? CHAKRA_FLAT_OUTPUTS : 0));
  const ChakraProtoMsg__IOInfo *io[2] = {nd->inputs, nd->outputs};
  for (int w = 0; w < 2; w++) {
    add_u64(s, C_IOS, io[w] ? add_cstring(s, io[w]->values) : 0);
    add_u64(s, C_IOS, io[w] ? add_cstring(s, io[w]->shapes) : 0);
    add_u64(s, C_IOS, io[w] ? add_cstring(s, io[w]->types) : 0);
    if (io[w]) count_unknown(s, &io[w]->base, nd->id, 1);
  }
}

static void attr_problem(void *ctx, const chakra_problem *ap) {
  reader_state *s = ctx;
  if (!s->opt->diag) return;
  chakra_problem p = *ap;
  p.severity = CHAKRA_SEV_WARNING; /* a column left at its default, not a failed read */
  p.file = s->path;
  p.has_offset = 1;
  p.offset = s->offset;
  s->opt->diag(s->opt->diag_ctx, &p);
}

static void add_std(reader_state *s, const chakra_node *nd) {
  chakra_std_attrs a;
  chakra_std_attrs_resolve(nd, &a, attr_problem, s); /* problems are warnings; the rest is read */
  uint32_t *present = add1(s, C_PRESENT);
  uint8_t *cpu = add1(s, C_CPU);
  int32_t *src = add1(s, C_SRC), *dst = add1(s, C_DST), *tag = add1(s, C_TAG);
  if (!present || !cpu || !src || !dst || !tag) return;
  *present = a.present;
  *cpu = (uint8_t)(a.is_cpu_op != 0);
  *src = a.present & CHAKRA_HAS_COMM_SRC ? a.comm_src : -1;
  *dst = a.present & CHAKRA_HAS_COMM_DST ? a.comm_dst : -1;
  *tag = a.present & CHAKRA_HAS_COMM_TAG ? a.comm_tag : -1;
  add_u64(s, C_CTYPE, a.present & CHAKRA_HAS_COMM_TYPE ? (uint64_t)a.comm_type : (uint64_t)-1);
  add_u64(s, C_CSIZE, a.present & CHAKRA_HAS_COMM_SIZE ? a.comm_size : 0);
  add_u64(s, C_NOPS, a.present & CHAKRA_HAS_NUM_OPS ? a.num_ops : 0);
  add_u64(s, C_TSIZE, a.present & CHAKRA_HAS_TENSOR_SIZE ? a.tensor_size : 0);
  add_u64(s, C_PG, a.present & CHAKRA_HAS_PG_NAME ? intern(s, a.pg_name) : 0);
}

static void add_node(reader_state *s, const chakra_node *nd, uint64_t index) {
  unsigned flags = s->opt->flags;
  add_u64(s, C_ID, nd->id);
  add_u64(s, C_START, nd->start_time_micros);
  add_u64(s, C_DUR, nd->duration_micros);
  int32_t *type = add1(s, C_TYPE);
  if (type) *type = (int32_t)nd->type;
  add_u64(s, C_NAME, intern(s, nd->name));
  uint64_t *dd = add(s, C_DD, nd->n_data_deps), *cd = add(s, C_CD, nd->n_ctrl_deps);
  if (dd && nd->n_data_deps) memcpy(dd, nd->data_deps, nd->n_data_deps * sizeof *dd);
  if (cd && nd->n_ctrl_deps) memcpy(cd, nd->ctrl_deps, nd->n_ctrl_deps * sizeof *cd);
  add_u64(s, C_DDO, count(s, C_DD));
  add_u64(s, C_CDO, count(s, C_CD));
  if (!(flags & CHAKRA_FLAT_NO_ATTRS)) {
    add_attrs(s, nd->attr, nd->n_attr, nd->id, 1);
    add_u64(s, C_AO, count(s, C_AN));
  }
  if (!(flags & CHAKRA_FLAT_NO_IO)) add_io(s, nd, index);
  if (flags & CHAKRA_FLAT_STD) add_std(s, nd);
  count_unknown(s, &nd->base, nd->id, 1);
}

/* Whether column c has one entry per node (sized up front) with these flags. */
static int per_node(int c, unsigned flags) {
  if (c <= C_CDO) return c != C_DD;
  if (c == C_AO) return !(flags & CHAKRA_FLAT_NO_ATTRS);
  return c >= C_PRESENT && (flags & CHAKRA_FLAT_STD);
}

/* Per-node columns sized once for a plain file's node count. */
static int presize(reader_state *s, chakra_reader *r, chakra_error *err) {
  size_t n;
  int rc = reader_count_rest(r, &n, err);
  for (int c = 0; !rc && c < C_N; c++)
    if (per_node(c, s->opt->flags) && reserve(&s->o->col[c], col_size[c], n + 1))
      return chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", s->path);
  return rc;
}

static void start_columns(reader_state *s, const chakra_metadata *m) {
  unsigned flags = s->opt->flags;
  add_u64(s, C_STROFF, 0);
  add_u64(s, C_STROFF, 0); /* string 0: "" */
  s->o->pub.version = add_cstring(s, m->version);
  add_attrs(s, m->attr, m->n_attr, 0, 0);
  count_unknown(s, &m->base, 0, 0);
  s->o->pub.n_meta_attrs = count(s, C_AN);
  add_u64(s, C_DDO, 0);
  add_u64(s, C_CDO, 0);
  if (!(flags & CHAKRA_FLAT_NO_ATTRS)) add_u64(s, C_AO, count(s, C_AN));
}

static const void *column(const flat_owned *o, int c) { return o->col[c].n ? o->col[c].p : NULL; }

/* The public view of the columns. */
static void publish(flat_owned *o) {
  chakra_flat *f = &o->pub;
  f->n = o->col[C_ID].n;
  f->id = column(o, C_ID), f->start_time_micros = column(o, C_START), f->duration_micros = column(o, C_DUR);
  f->type = column(o, C_TYPE), f->name = column(o, C_NAME);
  f->data_dep_off = column(o, C_DDO), f->data_deps = column(o, C_DD);
  f->ctrl_dep_off = column(o, C_CDO), f->ctrl_deps = column(o, C_CD);
  f->attr_off = column(o, C_AO), f->io = column(o, C_IO), f->io_strings = column(o, C_IOS);
  f->n_attrs = o->col[C_AN].n;
  f->attr_name = column(o, C_AN), f->attr_doc = column(o, C_AD), f->attr_kind = column(o, C_AK);
  f->attr_value = column(o, C_AV), f->attr_count = column(o, C_AC);
  f->n_values = o->col[C_VALUES].n, f->values = column(o, C_VALUES);
  f->n_strings = o->col[C_STROFF].n - 1;
  f->str_off = column(o, C_STROFF), f->strings = column(o, C_STRINGS);
  f->std_present = column(o, C_PRESENT), f->std_is_cpu_op = column(o, C_CPU);
  f->std_comm_type = column(o, C_CTYPE), f->std_comm_size = column(o, C_CSIZE);
  f->std_num_ops = column(o, C_NOPS), f->std_tensor_size = column(o, C_TSIZE);
  f->std_comm_src = column(o, C_SRC), f->std_comm_dst = column(o, C_DST), f->std_comm_tag = column(o, C_TAG);
  f->std_pg_name = column(o, C_PG);
}

/* The columns without attribute rows and inputs/outputs, from
 * flatscan's decoder: one node. Per-node columns were sized by presize. */
static void add_scanned(reader_state *s, const flatscan_node *sn) {
  const chakra_node *nd = &sn->nd;
  add_u64(s, C_ID, nd->id);
  add_u64(s, C_START, nd->start_time_micros);
  add_u64(s, C_DUR, nd->duration_micros);
  int32_t *type = add1(s, C_TYPE);
  if (type) *type = (int32_t)nd->type;
  add_u64(s, C_NAME, intern_n(s, sn->name, sn->name_len));
  uint64_t *deps[2] = {add(s, C_DD, sn->n_deps[0]), add(s, C_CD, sn->n_deps[1])};
  for (unsigned k = 0; k < sn->n_runs && !s->oom; k++) {
    const flatscan_run *run = &sn->runs[k];
    deps[run->which] += flatscan_run_ids(run, deps[run->which]);
  }
  add_u64(s, C_DDO, count(s, C_DD));
  add_u64(s, C_CDO, count(s, C_CD));
  if (s->opt->flags & CHAKRA_FLAT_STD) add_std(s, nd);
}

/* Returns 0 when every node was read, 1 when one is for protobuf-c (the
 * caller starts over), < 0 on error. */
static int read_fast(reader_state *s, chakra_reader *r, chakra_error *err) {
  arena a;
  arena_init(&a, 16 * 1024);
  flatscan_node sn;
  const uint8_t *data;
  size_t len;
  int rc;
  while (!s->oom && (rc = chakra_reader_next_raw(r, &data, &len, err)) == 1) {
    arena_reset(&a);
    if (flatscan_node_read(data, len, &a, &sn)) {
      rc = 1;
      break;
    }
    s->offset = chakra_reader_message_offset(r);
    add_scanned(s, &sn);
  }
  arena_free(&a);
  return rc;
}

static void clear_columns(reader_state *s) {
  for (int c = 0; c < C_N; c++) s->o->col[c].n = 0;
  memset(s->slots, 0, s->n_slots * sizeof *s->slots);
  s->n_interned = 0;
  s->o->pub.unknown_fields = 0;
  s->warned_unknown = 0;
}

static int read_slow(reader_state *s, chakra_reader *r, chakra_error *err) {
  chakra_node *nd;
  uint64_t index = 0;
  int rc;
  while (!s->oom && (rc = chakra_reader_next(r, &nd, err)) == 1) {
    s->offset = chakra_reader_message_offset(r);
    add_node(s, nd, index++);
  }
  return rc;
}

static int read_all(reader_state *s, chakra_reader *r, chakra_error *err) {
  const unsigned cols_only = CHAKRA_FLAT_NO_ATTRS | CHAKRA_FLAT_NO_IO;
  int rc = presize(s, r, err);
  if (rc) return rc;
  start_columns(s, chakra_reader_metadata(r));
  uint64_t first = chakra_reader_offset(r);
  if ((s->opt->flags & cols_only) == cols_only && chakra_reader_can_rewind(r)) {
    rc = read_fast(s, r, err);
    if (rc == 1) { /* a node flatscan does not take: all of them by protobuf-c */
      clear_columns(s);
      start_columns(s, chakra_reader_metadata(r));
      rc = chakra_reader_seek(r, first, err);
      if (!rc) rc = read_slow(s, r, err);
    }
  } else {
    rc = read_slow(s, r, err);
  }
  if (rc < 0) return rc;
  if (s->oom) return chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", s->path);
  publish(s->o);
  return 0;
}

int chakra_flat_read_input(chakra_flat **out, const chakra_input *in, const chakra_flat_options *opt,
                           chakra_error *err) {
  *out = NULL;
  static const chakra_flat_options none = {0};
  reader_state s = {.opt = opt ? opt : &none, .path = chakra_input_name(in)};
  if (!(s.o = calloc(1, sizeof *s.o))) return chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", s.path);
  chakra_reader_options ro = {.max_message_size = opt ? opt->max_message_size : 0};
  chakra_reader *r;
  int rc = chakra_reader_open_input(&r, in, &ro, err);
  if (!rc) {
    rc = read_all(&s, r, err);
    chakra_reader_close(r);
  }
  free(s.slots);
  if (rc) {
    chakra_flat_free(&s.o->pub);
    return rc;
  }
  *out = &s.o->pub;
  return 0;
}

int chakra_flat_read(chakra_flat **out, const char *path, const chakra_flat_options *opt, chakra_error *err) {
  chakra_input in = {.path = path};
  return chakra_flat_read_input(out, &in, opt, err);
}

void chakra_flat_free(chakra_flat *f) {
  if (!f) return;
  flat_owned *o = (flat_owned *)f;
  for (int c = 0; c < C_N; c++) bigmem_free(o->col[c].p);
  free(o);
}

int chakra_flat_join(const chakra_flat *f, const uint64_t *index, uint64_t n, char sep, char *out, uint64_t size,
                     uint64_t *len, chakra_error *err) {
  uint64_t need = 0;
  for (uint64_t k = 0; k < n; k++) {
    uint64_t s = index[k];
    if (s >= f->n_strings && (s || f->n_strings))
      return chakra_error_set(err, CHAKRA_EINVAL, "index %llu: string %llu, but there are %llu", (unsigned long long)k,
                              (unsigned long long)s, (unsigned long long)f->n_strings);
    need += (s < f->n_strings ? f->str_off[s + 1] - f->str_off[s] : 0) + 1;
  }
  *len = need;
  if (!out || size < need) return 0;
  char *p = out;
  for (uint64_t k = 0; k < n; k++) {
    uint64_t s = index[k], l = s < f->n_strings ? f->str_off[s + 1] - f->str_off[s] : 0;
    if (l && memchr(f->strings + f->str_off[s], sep, l))
      return chakra_error_set(err, CHAKRA_EINVAL, "string %llu holds the separator", (unsigned long long)s);
    if (l) memcpy(p, f->strings + f->str_off[s], l);
    p[l] = sep;
    p += l + 1;
  }
  return 0;
}
