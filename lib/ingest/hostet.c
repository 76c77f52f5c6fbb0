/* hostet.c - PyTorch host ET reader; see hostet.h.
 *
 * The parser is a state machine over yajl's callbacks: a stack of frames
 * (top object, nodes array, node, inputs/outputs object, attrs array, attr
 * object) and, for values whose text is kept (inputs, shapes, types,
 * unknown members), a "capture" that rewrites the value as Python repr or
 * compact JSON while it streams by, and notices tensors
 * ([id, storage, offset, numel, elem_bytes, device]) to size the inputs. */
#include "hostet.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_parse.h>

#include "../util/bigmem.h"
#include "../util/tasks.h"
#include "../util/instream.h"
#include "chakra/ingest.h"
#include "ibuf.h"
#include "pyrepr.h"

const char *const chakra_hostet_versions[] = {"1.0.1",
                                              "1.0.2-chakra.0.0.4",
                                              "1.0.3-chakra.0.0.4",
                                              "1.1.0-chakra.0.0.4",
                                              "1.1.1-chakra.0.0.4",
                                              "1.1.1-chakra.1.0.0",
                                              NULL};

/* The reference converter parses these and nothing else (1.0.1 is refused,
 * 1.1.1-chakra.1.0.0 listed but crashes). */
static const char *const reference_versions[] = {"1.0.2-chakra.0.0.4", "1.0.3-chakra.0.0.4",
                                                 "1.1.0-chakra.0.0.4", "1.1.1-chakra.0.0.4", NULL};

const char *const ht_attr_names[HT_NATTR] = {"rf_id", "fw_parent", "seq_id", "scope", "tid", "fw_tid"};

enum frame { F_TOP, F_NODES, F_NODE, F_IO, F_ATTRS, F_ATTR, F_SYNC, F_PARENTS };

enum want {
  W_KEY,       /* a map key comes next */
  W_DOC,       /* the document's value */
  W_SEGSTART,  /* segment text starting inside the nodes array: the synthetic '[' */
  W_DONE,
  W_T_SCHEMA, W_T_PID, W_T_TIME, W_T_START, W_T_FINISH, W_T_NODES, W_T_OTHER,
  W_NODE,
  W_N_ID, W_N_NAME, W_N_PARENT, W_N_INPUTS, W_N_OUTPUTS, W_N_ATTRS, W_N_INCL, W_N_EXCL, W_N_TS,
  W_N_ITD, W_N_SYNC, W_N_CAT, W_N_STREAM, W_N_DEVICE, W_N_PG, W_N_FLAT_SCHEMA, W_N_OTHER,
  W_N_FLAT_INT0, /* + attribute index */
  W_N_IN_SHAPES = W_N_FLAT_INT0 + HT_NATTR, W_N_IN_TYPES, W_N_OUT_SHAPES, W_N_OUT_TYPES,
  W_IO_VALUES, W_IO_SHAPES, W_IO_TYPES, W_IO_STRIDES, W_IO_OTHER,
  W_ATTR, W_A_NAME, W_A_TYPE, W_A_VALUE, W_A_OTHER, W_N_EXTRA,
  W_SYNC_ELEM, W_PARENT_ELEM
};

/* capture flags */
enum { CAP_REPR = 1, CAP_TENSORS = 2, CAP_ARGS = 4, CAP_TYPES = 8 };

#define MAX_DEPTH 16
#define MAX_EXTRA_NAME 127 /* longer names of extra attributes are dropped */
#define MAX_CAP_DEPTH 512

typedef struct clevel {
  uint8_t is_map, first, tens_ok;
  uint32_t count;
  uint64_t e3, e4;
} clevel;

typedef struct targ {
  int kind; /* 0 other, 1 int, 2 string */
  int64_t v;
  uint32_t off, len;
} targ;

enum { AV_NONE, AV_INT, AV_DOUBLE, AV_BOOL, AV_STRING, AV_NULL, AV_COMPLEX };

typedef struct hparse {
  /* configuration */
  const char *path;
  int mode, versions, seg_nodes; /* seg_nodes: text starts inside the nodes array */
  hostet *h;                     /* top-level fields go here (segment 0 only) */
  chakra_error err;
  int rc;
  volatile int *abort_flag;
  /* results */
  ht_node *nodes;
  size_t n, cap;
  ht_side *side;
  size_t n_side, cap_side;
  strtab st;
  bpool pool;
  ibuf top_extra;
  /* parser */
  yajl_handle y;
  uint64_t chunk_base;
  int fr[MAX_DEPTH];
  int depth;
  int want;
  int at_boundary;      /* the last event closed a node at nodes-array level */
  int nodes_done;       /* the nodes array has been closed */
  uint64_t nodes_end;   /* byte offset just past the nodes array's ']' */
  int seen_nodes;
  /* capture */
  ibuf *ct;
  int cflags;
  int capd;
  clevel cl[MAX_CAP_DEPTH];
  /* the node being read */
  ht_node cur;
  int io_which;          /* F_IO: 0 inputs, 1 outputs */
  ibuf io[HT_IO_N];
  int io_set[HT_IO_N];
  ibuf strides[2];
  int strides_set[2];
  ibuf attrs_json, others, scratch;
  ht_extra *xs;          /* convert: the node's extra attributes so far */
  size_t n_xs, cap_xs;
  uint64_t *arg_bytes;
  uint8_t *arg_tensor;
  size_t n_argv, n_argt, cap_arg;
  targ *targs;
  size_t n_targs, cap_targs;
  ibuf targ_str;
  uint64_t *syncv;
  size_t n_sync, cap_sync;
  int has_sync;
  int n_parents;
  int64_t grs, grstride;
  int has_grs, has_grstride;
  /* the attr object being read */
  ibuf a_name, a_type, a_val;
  int a_kind, a_has_name;
  int n_attrs_json;
} hparse;

/* ------------------------------------------------------------------ errors */

static void node_label(hparse *p, char *out, size_t n) {
  if (p->cur.flags & HT_ID)
    snprintf(out, n, "node %llu (byte %llu)", (unsigned long long)p->cur.id,
             (unsigned long long)p->cur.offset);
  else
    snprintf(out, n, "node at byte %llu", (unsigned long long)p->cur.offset);
}

static uint64_t here(hparse *p) { return p->chunk_base + yajl_get_bytes_consumed(p->y); }

static int fail(hparse *p, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(hparse *p, int code, const char *fmt, ...) {
  if (p->rc) return 0;
  char msg[900];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  p->rc = chakra_error_set(&p->err, code, "%s: %s", p->path, msg);
  return 0; /* stops yajl */
}

static int node_fail(hparse *p, const char *fmt, const char *what) {
  char where[96];
  node_label(p, where, sizeof where);
  char msg[600];
  snprintf(msg, sizeof msg, fmt, what);
  return fail(p, CHAKRA_EFORMAT, "%s: %s", where, msg);
}

static int oom(hparse *p) { return fail(p, CHAKRA_ENOMEM, "out of memory"); }

/* ----------------------------------------------------------------- numbers */

static int parse_u64(const char *s, size_t n, uint64_t *out) {
  if (!n || n > 20) return -1;
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned d = (unsigned)(s[i] - '0');
    if (d > 9) return -1;
    if (v > (UINT64_MAX - d) / 10) return -1;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

static int parse_i64(const char *s, size_t n, int64_t *out) {
  uint64_t u;
  if (n && s[0] == '-') {
    if (parse_u64(s + 1, n - 1, &u) || u > (uint64_t)INT64_MAX + 1) return -1;
    *out = (int64_t)(0 - u);
    return 0;
  }
  if (parse_u64(s, n, &u) || u > (uint64_t)INT64_MAX) return -1;
  *out = (int64_t)u;
  return 0;
}

static double parse_double(const char *s, size_t n) {
  char t[64];
  if (n >= sizeof t) n = sizeof t - 1;
  memcpy(t, s, n);
  t[n] = 0;
  return strtod(t, NULL);
}

static int contains(const char *s, size_t n, const char *needle) {
  size_t k = strlen(needle);
  if (k > n) return 0;
  for (size_t i = 0; i + k <= n; i++)
    if (s[i] == needle[0] && memcmp(s + i, needle, k) == 0) return 1;
  return 0;
}

/* ----------------------------------------------------------------- schema */

static int version_known(const char *const *list, const char *s, size_t n) {
  for (int i = 0; list[i]; i++)
    if (strlen(list[i]) == n && memcmp(list[i], s, n) == 0) return 1;
  return 0;
}

/* The version list "a, b, c" of the schema messages, truncated to size. */
static void join_list(const char *const *list, char *out, size_t size) {
  out[0] = 0;
  for (int i = 0; list[i]; i++) snprintf(out + strlen(out), size - strlen(out), "%s%s", i ? ", " : "", list[i]);
}

static int check_schema(hparse *p, const unsigned char *s, size_t n) {
  const char *str = (const char *)s;
  if (p->versions == HT_VERSIONS_REFERENCE) {
    if (version_known(reference_versions, str, n)) return 1;
    char list[400];
    join_list(reference_versions, list, sizeof list);
    return fail(p, CHAKRA_EFORMAT,
                "schema '%.*s' is not read by the reference converter, so the compat option cannot "
                "reproduce it (it reads %s); convert without compat",
                (int)(n > 100 ? 100 : n), str, list);
  }
  if (version_known(chakra_hostet_versions, str, n)) return 1;
  if (p->versions == HT_VERSIONS_NEWER_OK) {
    unsigned maj = 0, min = 0;
    char t[32];
    size_t k = n < sizeof t - 1 ? n : sizeof t - 1;
    memcpy(t, s, k);
    t[k] = 0;
    if (sscanf(t, "%u.%u", &maj, &min) == 2 && (maj > 1 || (maj == 1 && min > 1))) {
      p->h->newer_schema = 1;
      return 1;
    }
  }
  char list[400];
  join_list(chakra_hostet_versions, list, sizeof list);
  return fail(p, CHAKRA_EFORMAT, "unsupported host ET schema version '%.*s' (supported: %s)",
              (int)(n > 100 ? 100 : n), str, list);
}

/* ---------------------------------------------------------------- capture */

static void cap_start(hparse *p, ibuf *target, int flags) {
  p->ct = target;
  p->cflags = flags;
}

/* Separator and bookkeeping before a value inside the captured container;
 * returns the element's position in its list. */
static uint32_t cap_elem(hparse *p) {
  clevel *L = &p->cl[p->capd - 1];
  if (L->is_map) return 0;
  if (!L->first && p->ct) {
    if (p->cflags & CAP_REPR) ibuf_put(p->ct, ", ", 2);
    else ibuf_putc(p->ct, ',');
  }
  L->first = 0;
  return L->count++;
}

static int grow_args(hparse *p, size_t need) {
  if (need <= p->cap_arg) return 0;
  size_t cap = p->cap_arg ? p->cap_arg * 2 : 64;
  while (cap < need) cap *= 2;
  uint64_t *b = realloc(p->arg_bytes, cap * sizeof *b);
  if (b) p->arg_bytes = b;
  uint8_t *t = realloc(p->arg_tensor, cap);
  if (t) p->arg_tensor = t;
  if (!b || !t) return -1;
  memset(p->arg_bytes + p->cap_arg, 0, (cap - p->cap_arg) * sizeof *b);
  memset(p->arg_tensor + p->cap_arg, 0, cap - p->cap_arg);
  p->cap_arg = cap;
  return 0;
}

static int add_targ(hparse *p, int kind, int64_t v, const unsigned char *s, size_t n) {
  if (p->n_targs == p->cap_targs) {
    size_t cap = p->cap_targs ? p->cap_targs * 2 : 16;
    targ *t = realloc(p->targs, cap * sizeof *t);
    if (!t) return -1;
    p->targs = t;
    p->cap_targs = cap;
  }
  targ *t = &p->targs[p->n_targs++];
  t->kind = kind;
  t->v = v;
  t->off = (uint32_t)p->targ_str.n;
  t->len = (uint32_t)n;
  if (n) ibuf_put(&p->targ_str, s, n);
  return 0;
}

enum { K_NUM, K_STR, K_TRUE, K_FALSE, K_NULL };

/* A scalar inside a capture (capd > 0) or a capture that is a scalar. */
static int cap_scalar(hparse *p, int kind, const char *s, size_t n) {
  ibuf *b = p->ct;
  if (p->capd) {
    uint32_t pos = cap_elem(p);
    clevel *L = &p->cl[p->capd - 1];
    if (!L->is_map) {
      if (p->capd == 1) {
        /* an argument of the top-level list */
        if ((p->cflags & CAP_TENSORS) && p->n_argv <= pos) {
          if (grow_args(p, pos + 1)) return oom(p);
          p->n_argv = pos + 1;
        }
        if (p->cflags & CAP_ARGS) {
          int64_t v = 0;
          int tk = kind == K_STR ? 2 : (kind == K_NUM && json_number_is_int(s, n) && !parse_i64(s, n, &v)) ? 1 : 0;
          if (add_targ(p, tk, v, (const unsigned char *)s, tk == 2 ? n : 0)) return oom(p);
        }
        if (p->cflags & CAP_TYPES) {
          if (grow_args(p, pos + 1)) return oom(p);
          if (p->n_argt <= pos) p->n_argt = pos + 1;
          p->arg_tensor[pos] = kind == K_STR && contains(s, n, "Tensor");
        }
      } else if (L->tens_ok) {
        if (pos < 5) {
          uint64_t v;
          if (kind != K_NUM || parse_u64(s, n, &v)) L->tens_ok = 0;
          else if (pos == 3) L->e3 = v;
          else if (pos == 4) L->e4 = v;
        } else if (pos != 5 || kind != K_STR) {
          L->tens_ok = 0;
        }
      }
    }
  }
  if (b) {
    int repr = p->cflags & CAP_REPR;
    switch (kind) {
      case K_NUM:
        if (repr) pyrepr_number(b, s, n);
        else ibuf_put(b, s, n);
        break;
      case K_STR:
        if (repr) pyrepr_str(b, (const unsigned char *)s, n);
        else json_str(b, (const unsigned char *)s, n);
        break;
      case K_TRUE: ibuf_puts(b, repr ? "True" : "true"); break;
      case K_FALSE: ibuf_puts(b, repr ? "False" : "false"); break;
      default: ibuf_puts(b, repr ? "None" : "null"); break;
    }
  }
  return 1;
}

static int cap_open(hparse *p, int is_map) {
  if (p->capd) {
    uint32_t pos = cap_elem(p);
    clevel *L = &p->cl[p->capd - 1];
    if (!L->is_map) {
      if (p->capd == 1) {
        if ((p->cflags & CAP_TENSORS) && p->n_argv <= pos) {
          if (grow_args(p, pos + 1)) return oom(p);
          p->n_argv = pos + 1;
        }
        if ((p->cflags & CAP_ARGS) && add_targ(p, 0, 0, NULL, 0)) return oom(p);
        if (p->cflags & CAP_TYPES) {
          if (grow_args(p, pos + 1)) return oom(p);
          if (p->n_argt <= pos) p->n_argt = pos + 1;
          p->arg_tensor[pos] = 0;
        }
      } else {
        L->tens_ok = 0;
      }
    }
  }
  if (p->capd == MAX_CAP_DEPTH) {
    char where[96];
    node_label(p, where, sizeof where);
    return fail(p, CHAKRA_EFORMAT, "%s: values nested deeper than %d levels", where, MAX_CAP_DEPTH);
  }
  clevel *N = &p->cl[p->capd++];
  N->is_map = (uint8_t)is_map;
  N->first = 1;
  N->tens_ok = !is_map;
  N->count = 0;
  N->e3 = N->e4 = 0;
  if (p->ct) ibuf_putc(p->ct, is_map ? '{' : '[');
  return 1;
}

static void after_value(hparse *p);

static int cap_close(hparse *p) {
  clevel *L = &p->cl[--p->capd];
  if (p->ct) ibuf_putc(p->ct, L->is_map ? '}' : ']');
  if (!L->is_map && L->tens_ok && L->count == 6 && p->capd >= 1 && (p->cflags & CAP_TENSORS)) {
    /* a tensor inside argument cl[0].count - 1 */
    uint32_t arg = p->cl[0].count ? p->cl[0].count - 1 : 0;
    if (arg < p->n_argv) {
      uint64_t add = L->e3 && L->e4 > UINT64_MAX / L->e3 ? UINT64_MAX : L->e3 * L->e4;
      p->arg_bytes[arg] = add > UINT64_MAX - p->arg_bytes[arg] ? UINT64_MAX : p->arg_bytes[arg] + add;
    }
  }
  if (p->capd == 0) after_value(p);
  return 1;
}

static int cap_key(hparse *p, const unsigned char *s, size_t n) {
  clevel *L = &p->cl[p->capd - 1];
  if (p->ct) {
    int repr = p->cflags & CAP_REPR;
    if (!L->first) {
      if (repr) ibuf_put(p->ct, ", ", 2);
      else ibuf_putc(p->ct, ',');
    }
    if (repr) pyrepr_str(p->ct, s, n), ibuf_put(p->ct, ": ", 2);
    else json_str(p->ct, s, n), ibuf_putc(p->ct, ':');
  }
  L->first = 0;
  return 1;
}

/* ------------------------------------------------------------ structure */

static int push(hparse *p, int f) {
  if (p->depth == MAX_DEPTH) return fail(p, CHAKRA_EFORMAT, "byte %llu: nesting too deep", (unsigned long long)here(p));
  p->fr[p->depth++] = f;
  return 1;
}

static void after_value(hparse *p) {
  if (!p->depth) {
    p->want = W_DONE;
    return;
  }
  switch (p->fr[p->depth - 1]) {
    case F_NODES: p->want = W_NODE; break;
    case F_ATTRS: p->want = W_ATTR; break;
    case F_SYNC: p->want = W_SYNC_ELEM; break;
    case F_PARENTS: p->want = W_PARENT_ELEM; break;
    default: p->want = W_KEY; break;
  }
}

static void reset_node(hparse *p) {
  memset(&p->cur, 0, sizeof p->cur);
  p->cur.side = UINT32_MAX;
  for (int i = 0; i < HT_IO_N; i++) p->io[i].n = 0, p->io_set[i] = 0;
  p->strides[0].n = p->strides[1].n = 0;
  p->strides_set[0] = p->strides_set[1] = 0;
  p->attrs_json.n = p->others.n = 0;
  p->n_xs = 0;
  p->n_argv = p->n_argt = 0;
  if (p->cap_arg) {
    memset(p->arg_bytes, 0, p->cap_arg * sizeof *p->arg_bytes);
    memset(p->arg_tensor, 0, p->cap_arg);
  }
  p->n_targs = 0;
  p->targ_str.n = 0;
  p->n_sync = 0;
  p->has_sync = 0;
  p->n_parents = 0;
  p->has_grs = p->has_grstride = 0;
  p->n_attrs_json = 0;
}

/* Names reserved for attributes the converters write themselves. */
static int reserved_attr(const char *s, size_t n) {
  static const char *const names[] = {"is_cpu_op", "comm_type", "comm_size", "comm_src", "comm_dst",
                                      "comm_tag", "comm_priority", "pg_name", "involved_dim",
                                      "num_ops", "tensor_size", "tensor_loc", "stream", "duration_ns",
                                      "op_schema", "inputs", "outputs", "op_type", "comm_group", NULL};
  for (int i = 0; names[i]; i++)
    if (strlen(names[i]) == n && memcmp(names[i], s, n) == 0) return 1;
  for (int k = 0; k < HT_NATTR; k++)
    if (strlen(ht_attr_names[k]) == n && memcmp(ht_attr_names[k], s, n) == 0) return 1;
  return 0;
}

static int attr_index(const char *s, size_t n) {
  switch (n) {
    case 3: return memcmp(s, "tid", 3) == 0 ? HT_A_TID : -1;
    case 5: return memcmp(s, "rf_id", 5) == 0 ? HT_A_RF_ID : memcmp(s, "scope", 5) == 0 ? HT_A_SCOPE : -1;
    case 6: return memcmp(s, "seq_id", 6) == 0 ? HT_A_SEQ_ID : memcmp(s, "fw_tid", 6) == 0 ? HT_A_FW_TID : -1;
    case 9: return memcmp(s, "fw_parent", 9) == 0 ? HT_A_FW_PARENT : -1;
    default: return -1;
  }
}

static void link_attr_json(hparse *p, const char *name, const char *type, const char *val, size_t vlen,
                           int is_string) {
  ibuf *b = &p->attrs_json;
  if (p->n_attrs_json++) ibuf_putc(b, ',');
  ibuf_puts(b, "{\"name\":");
  json_str(b, (const unsigned char *)name, strlen(name));
  ibuf_puts(b, ",\"type\":");
  json_str(b, (const unsigned char *)type, strlen(type));
  ibuf_puts(b, ",\"value\":");
  if (is_string) json_str(b, (const unsigned char *)val, vlen);
  else ibuf_put(b, val, vlen);
  ibuf_putc(b, '}');
}

/* s[0..n) NUL-terminated in the pool, where it lives until the output is
 * written. */
static const char *pool_str(hparse *p, const char *s, size_t n) {
  char *d = bpool_alloc(&p->pool, n + 1);
  if (!d) return NULL;
  memcpy(d, s, n);
  d[n] = 0;
  return d;
}

/* Other scalar attributes (and unknown scalar members of a node) travel as
 * Chakra attributes of the same name, unless the converter writes that
 * name itself. They are kept as values; the writer builds the messages. */
static int add_extra(hparse *p, const char *nm, size_t nl, int kind, const char *v, size_t vl) {
  if (!nl || nl > MAX_EXTRA_NAME || reserved_attr(nm, nl)) return 1;
  ht_extra x = {0};
  switch (kind) {
    case AV_INT:
      if (!parse_i64(v, vl, &x.v.i)) x.kind = HT_X_INT64;
      else if (!parse_u64(v, vl, &x.v.u)) x.kind = HT_X_UINT64;
      else return 1; /* beyond uint64: no attribute */
      break;
    case AV_DOUBLE: x.kind = HT_X_DOUBLE, x.v.d = parse_double(v, vl); break;
    case AV_BOOL: x.kind = HT_X_BOOL, x.v.b = vl == 4; break;
    case AV_STRING:
      x.kind = HT_X_STRING;
      if (!(x.v.s = pool_str(p, v, vl))) return oom(p);
      break;
    default: return 1;
  }
  if (!(x.name = pool_str(p, nm, nl))) return oom(p);
  if (p->n_xs == p->cap_xs) {
    size_t cap = p->cap_xs ? p->cap_xs * 2 : 8;
    ht_extra *xs = realloc(p->xs, cap * sizeof *xs);
    if (!xs) return oom(p);
    p->xs = xs;
    p->cap_xs = cap;
  }
  p->xs[p->n_xs++] = x;
  return 1;
}

/* An attrs entry {name, type, value} is complete. */
static int finish_attr(hparse *p) {
  if (!p->a_has_name) return node_fail(p, "an entry of 'attrs' has no %s", "'name'");
  const char *nm = p->a_name.p ? p->a_name.p : "";
  size_t nl = p->a_name.n;
  const char *v = p->a_val.p ? p->a_val.p : "";
  size_t vl = p->a_val.n;
  if (p->mode == HT_MODE_LINK) {
    ibuf *b = &p->attrs_json;
    if (p->n_attrs_json++) ibuf_putc(b, ',');
    ibuf_puts(b, "{\"name\":");
    json_str(b, (const unsigned char *)nm, nl);
    if (p->a_type.n) {
      ibuf_puts(b, ",\"type\":");
      json_str(b, (const unsigned char *)p->a_type.p, p->a_type.n);
    }
    ibuf_puts(b, ",\"value\":");
    if (p->a_kind == AV_STRING) json_str(b, (const unsigned char *)v, vl);
    else if (p->a_kind == AV_NONE) ibuf_puts(b, "null");
    else ibuf_put(b, v, vl);
    ibuf_putc(b, '}');
  }
  int k = attr_index(nm, nl);
  if (k >= 0) {
    int64_t iv;
    if (p->a_kind == AV_INT && !parse_i64(v, vl, &iv)) {
      p->cur.a[k] = iv;
      p->cur.flags |= HT_ATTR0 << k;
    } else if (p->a_kind == AV_INT && vl && v[0] != '-') {
      uint64_t uv; /* uint64 beyond int64: keep the bits, as int64_val would */
      if (parse_u64(v, vl, &uv)) return node_fail(p, "attribute '%s' is not an integer", ht_attr_names[k]);
      p->cur.a[k] = (int64_t)uv;
      p->cur.flags |= HT_ATTR0 << k;
    } else {
      return node_fail(p, "attribute '%s' is not an integer", ht_attr_names[k]);
    }
    return 1;
  }
  if (nl == 9 && memcmp(nm, "op_schema", 9) == 0) {
    if (p->a_kind != AV_STRING) return node_fail(p, "attribute '%s' is not a string", "op_schema");
    uint32_t id = strtab_intern(&p->st, v, vl);
    if (id == STRTAB_OOM) return oom(p);
    p->cur.op_schema = id;
    p->cur.flags |= HT_SCHEMA;
    return 1;
  }
  if (nl == 7 && memcmp(nm, "pg_name", 7) == 0) {
    if (p->a_kind == AV_STRING || p->a_kind == AV_INT) {
      uint32_t id = strtab_intern(&p->st, v, vl);
      if (id == STRTAB_OOM) return oom(p);
      p->cur.pg_name = id;
      p->cur.flags |= HT_PG_ATTR;
    }
    return 1;
  }
  if (p->a_kind == AV_INT) {
    int64_t iv;
    if (!parse_i64(v, vl, &iv)) {
      if (nl == 17 && memcmp(nm, "global_rank_start", 17) == 0) p->grs = iv, p->has_grs = 1;
      if (nl == 18 && memcmp(nm, "global_rank_stride", 18) == 0) p->grstride = iv, p->has_grstride = 1;
    }
  }
  return p->mode == HT_MODE_CONVERT ? add_extra(p, nm, nl, p->a_kind, v, vl) : 1;
}

static void put_io_json(hparse *p, ibuf *b, int which) {
  static const char *const keys[3] = {"\"values\":", ",\"shapes\":", ",\"types\":"};
  ibuf_putc(b, '{');
  for (int k = 0; k < 3; k++) {
    ibuf_puts(b, keys[k]);
    ibuf *s = &p->io[which * 3 + k];
    if (p->io_set[which * 3 + k]) ibuf_put(b, s->p, s->n);
    else ibuf_put(b, "[]", 2);
  }
  if (p->strides_set[which]) {
    ibuf_puts(b, ",\"strides\":");
    ibuf_put(b, p->strides[which].p, p->strides[which].n);
  }
  ibuf_putc(b, '}');
}

static int add_side(hparse *p, ht_side **out) {
  if (p->n_side == p->cap_side) {
    size_t cap = p->cap_side ? p->cap_side * 2 : 64;
    ht_side *s = realloc(p->side, cap * sizeof *s);
    if (!s) return -1;
    p->side = s;
    p->cap_side = cap;
  }
  ht_side *s = &p->side[p->n_side];
  memset(s, 0, sizeof *s);
  s->node = (uint32_t)p->n;
  p->cur.side = (uint32_t)p->n_side++;
  *out = s;
  return 0;
}

/* convert: the node's IOInfo texts (a missing list is "[]") and extra
 * attributes, moved into the pool (1, or 0 after an error, as a callback). */
static int keep_conv(hparse *p) {
  ht_node *c = &p->cur;
  size_t all = 0;
  for (int i = 0; i < HT_IO_N; i++) {
    if (p->io[i].oom) return oom(p);
    all += (p->io_set[i] ? p->io[i].n : 2) + 1;
  }
  if (all > UINT32_MAX) return node_fail(p, "%s", "node text too large (over 4 GiB)");
  char *d = bpool_alloc(&p->pool, all);
  if (!d) return oom(p);
  c->blob = (const unsigned char *)d;
  c->blob_len = (uint32_t)all;
  for (int i = 0; i < HT_IO_N; i++) {
    size_t l = p->io_set[i] ? p->io[i].n : 2;
    memcpy(d, p->io_set[i] ? p->io[i].p : "[]", l);
    d[l] = 0;
    d += l + 1;
  }
  if (p->n_xs) {
    ht_extra *x = bpool_alloc8(&p->pool, p->n_xs * sizeof *x);
    if (!x) return oom(p);
    memcpy(x, p->xs, p->n_xs * sizeof *x);
    c->extra = x;
    c->n_extra = (uint32_t)p->n_xs;
  }
  return 1;
}

static int finish_node(hparse *p) {
  ht_node *c = &p->cur;
  static const struct { uint32_t bit; const char *name; } req[] = {
      {HT_ID, "'id'"}, {HT_NAME, "'name'"}, {HT_PARENT, "'ctrl_deps' (or 'parent')"},
      {HT_INPUTS, "'inputs'"}, {HT_OUTPUTS, "'outputs'"}};
  for (size_t i = 0; i < sizeof req / sizeof *req; i++)
    if (!(c->flags & req[i].bit)) return node_fail(p, "missing %s", req[i].name);
  const char *name = strtab_str(&p->st, c->name);
  size_t nlen = strtab_len(&p->st, c->name);
  if (contains(name, nlen, "process_group:init")) c->flags |= HT_META;
  if (contains(name, nlen, "record_param_comms")) c->flags |= HT_RPC;
  if (strcmp(name, "[pytorch|profiler|execution_trace|thread]") == 0 ||
      strcmp(name, "[pytorch|profiler|execution_graph|thread]") == 0)
    c->flags |= HT_THREAD_ROOT;
  /* bytes of the input tensors: arguments whose type names a Tensor */
  size_t nargs = p->n_argv < p->n_argt ? p->n_argv : p->n_argt;
  uint64_t bytes = 0;
  for (size_t i = 0; i < nargs; i++)
    if (p->arg_tensor[i]) bytes = p->arg_bytes[i] > UINT64_MAX - bytes ? UINT64_MAX : bytes + p->arg_bytes[i];
  c->comm_bytes = bytes;
  /* side information for the few nodes that need it */
  int want_rpc = (c->flags & HT_RPC) != 0, want_pg = (c->flags & HT_META) != 0;
  if (want_rpc || want_pg || p->has_sync || p->has_grs || p->has_grstride) {
    ht_side *s;
    if (add_side(p, &s)) return oom(p);
    s->has_grs = (uint8_t)p->has_grs;
    s->grs = p->grs;
    s->has_grstride = (uint8_t)p->has_grstride;
    s->grstride = p->grstride;
    if (want_rpc) {
      /* ..., <ints>, "<collective>", <splits>, <splits>, <world size> */
      ssize_t last = -1;
      for (size_t i = 0; i < p->n_targs; i++)
        if (p->targs[i].kind == 2) last = (ssize_t)i;
      if (last >= 0) {
        targ *t = &p->targs[last];
        uint32_t id = strtab_intern(&p->st, p->targ_str.p + t->off, t->len);
        if (id == STRTAB_OOM) return oom(p);
        s->coll_name = id;
        for (ssize_t i = last - 1; i >= 0 && s->n_rpc_int < 3 && p->targs[i].kind == 1; i--)
          s->rpc_int[s->n_rpc_int++] = p->targs[i].v;
      }
    }
    if (want_pg) {
      for (size_t i = 0; i < p->n_targs; i++) {
        if (p->targs[i].kind != 2) continue;
        char *js = bpool_alloc(&p->pool, p->targs[i].len + 1);
        if (!js) return oom(p);
        memcpy(js, p->targ_str.p + p->targs[i].off, p->targs[i].len);
        js[p->targs[i].len] = 0;
        s->pg_json = js;
        break;
      }
    }
    if (p->has_sync) {
      uint64_t *v = bpool_alloc8(&p->pool, p->n_sync * sizeof *v);
      if (!v) return oom(p);
      if (p->n_sync) memcpy(v, p->syncv, p->n_sync * sizeof *v);
      s->sync = v;
      s->n_sync = (uint32_t)p->n_sync;
    }
  }
  /* the blob */
  ibuf *b = &p->scratch;
  b->n = 0;
  if (p->mode == HT_MODE_CONVERT) {
    if (!keep_conv(p)) return 0;
  } else {
    ibuf_puts(b, "\"inputs\":");
    put_io_json(p, b, 0);
    ibuf_puts(b, ",\"outputs\":");
    put_io_json(p, b, 1);
    ibuf_puts(b, ",\"attrs\":[");
    if (c->flags & HT_FLAT) {
      static const char *const types[HT_NATTR] = {"uint64", "uint64", "int64", "uint64", "uint64", "uint64"};
      for (int k = 0; k < HT_NATTR; k++) {
        if (!(c->flags & (HT_ATTR0 << k))) continue;
        char t[24];
        int tl = snprintf(t, sizeof t, "%lld", (long long)c->a[k]);
        link_attr_json(p, ht_attr_names[k], types[k], t, (size_t)tl, 0);
      }
      if (c->flags & HT_SCHEMA)
        link_attr_json(p, "op_schema", "string", strtab_str(&p->st, c->op_schema),
                       strtab_len(&p->st, c->op_schema), 1);
    }
    ibuf_put(b, p->attrs_json.p, p->attrs_json.n);
    ibuf_putc(b, ']');
    ibuf_put(b, p->others.p, p->others.n);
    if (b->oom || p->attrs_json.oom || p->others.oom) return oom(p);
    for (int i = 0; i < HT_IO_N; i++)
      if (p->io[i].oom) return oom(p);
    if (b->n > UINT32_MAX) return node_fail(p, "%s", "node text too large (over 4 GiB)");
    unsigned char *blob = (unsigned char *)bpool_alloc(&p->pool, b->n ? b->n : 1);
    if (!blob) return oom(p);
    if (b->n) memcpy(blob, b->p, b->n);
    c->blob = blob;
    c->blob_len = (uint32_t)b->n;
  }
  if (p->n == p->cap) {
    size_t cap = p->cap ? p->cap * 2 : 1024;
    ht_node *nn = bigmem_realloc(p->nodes, cap * sizeof *nn);
    if (!nn) return oom(p);
    p->nodes = nn;
    p->cap = cap;
  }
  p->nodes[p->n++] = *c;
  return 1;
}

/* The value that follows is IOInfo text k (HT_IO_*). */
static void io_capture(hparse *p, int k, int flags) {
  p->io_set[k] = 1;
  p->io[k].n = 0;
  cap_start(p, &p->io[k], flags);
}

/* The value that follows is the values list of the inputs (w 0) or the
 * outputs (w 1); the inputs' arguments are also collected. */
static void values_capture(hparse *p, int w) {
  int repr = p->mode == HT_MODE_CONVERT ? CAP_REPR : 0;
  io_capture(p, w * 3, repr | (w == 0 ? CAP_TENSORS | CAP_ARGS : 0));
  if (w == 0) p->n_argv = 0, p->n_targs = 0, p->targ_str.n = 0;
  p->want = W_IO_VALUES;
}

/* A structured attribute value: kept as JSON (link), ignored (convert). */
static int attr_value_open(hparse *p, int is_map) {
  p->a_kind = AV_COMPLEX;
  p->a_val.n = 0;
  p->want = W_A_OTHER;
  cap_start(p, &p->a_val, 0);
  return cap_open(p, is_map);
}

/* ------------------------------------------------------------- callbacks */

static int top_scalar(hparse *p, int kind, const char *s, size_t n) {
  int64_t v;
  hostet *h = p->h;
  switch (p->want) {
    case W_T_SCHEMA:
      if (kind != K_STR) return fail(p, CHAKRA_EFORMAT, "byte %llu: 'schema' is not a string", (unsigned long long)here(p));
      if (!check_schema(p, (const unsigned char *)s, n)) return 0;
      free(h->schema);
      h->schema = strndup(s, n);
      if (!h->schema) return oom(p);
      break;
    case W_T_TIME:
      if (kind != K_STR) return fail(p, CHAKRA_EFORMAT, "byte %llu: 'time' is not a string", (unsigned long long)here(p));
      free(h->time);
      h->time = strndup(s, n);
      if (!h->time) return oom(p);
      h->has_time = 1;
      break;
    case W_T_PID:
    case W_T_START:
    case W_T_FINISH:
      if (kind != K_NUM || parse_i64(s, n, &v)) {
        const char *k = p->want == W_T_PID ? "pid" : p->want == W_T_START ? "start_ts" : "finish_ts";
        return fail(p, CHAKRA_EFORMAT, "byte %llu: '%s' is not an integer", (unsigned long long)here(p), k);
      }
      if (p->want == W_T_PID) h->pid = v, h->has_pid = 1;
      else if (p->want == W_T_START) h->start_ts = v, h->has_start_ts = 1;
      else h->finish_ts = v, h->has_finish_ts = 1;
      break;
    case W_T_NODES:
      return fail(p, CHAKRA_EFORMAT, "byte %llu: 'nodes' is not a list", (unsigned long long)here(p));
    default: break;
  }
  after_value(p);
  return 1;
}

static int node_scalar(hparse *p, int kind, const char *s, size_t n) {
  ht_node *c = &p->cur;
  uint64_t u;
  int64_t v;
  uint32_t id;
  switch (p->want) {
    case W_N_ID:
      if (kind != K_NUM || parse_u64(s, n, &u)) return node_fail(p, "%s is not a non-negative integer", "'id'");
      c->id = u;
      c->flags |= HT_ID;
      break;
    case W_N_PARENT:
      if (kind == K_NULL) break;
      if (kind != K_NUM || parse_u64(s, n, &u))
        return node_fail(p, "%s is not a node id", c->flags & HT_FLAT ? "'parent'" : "'ctrl_deps'");
      c->parent = u;
      c->flags |= HT_PARENT;
      break;
    case W_N_NAME:
    case W_N_CAT:
    case W_N_PG:
    case W_N_FLAT_SCHEMA:
      if (kind == K_NULL && p->want != W_N_NAME) break;
      if (kind != K_STR && !(p->want == W_N_PG && kind == K_NUM)) {
        static const char *const k[] = {"'name'", "'cat'", "'pg_name'", "'op_schema'"};
        int i = p->want == W_N_NAME ? 0 : p->want == W_N_CAT ? 1 : p->want == W_N_PG ? 2 : 3;
        return node_fail(p, "%s is not a string", k[i]);
      }
      id = strtab_intern(&p->st, s, n);
      if (id == STRTAB_OOM) return oom(p);
      if (p->want == W_N_NAME) c->name = id, c->flags |= HT_NAME;
      else if (p->want == W_N_CAT) c->cat = id, c->flags |= HT_GPU;
      else if (p->want == W_N_PG) {
        if (!(c->flags & HT_PG_ATTR)) c->pg_name = id;
      } else c->op_schema = id, c->flags |= HT_SCHEMA | HT_FLAT;
      break;
    case W_N_INCL:
    case W_N_EXCL:
    case W_N_TS:
      if (kind == K_NULL) break;
      if (kind != K_NUM) {
        const char *k = p->want == W_N_INCL ? "'inclusive_dur'" : p->want == W_N_EXCL ? "'exclusive_dur'" : "'ts'";
        return node_fail(p, "%s is not a number", k);
      }
      /* inclusive_dur is only checked: nothing reads it */
      if (p->want == W_N_EXCL) c->excl = parse_double(s, n), c->flags |= HT_EXCL;
      else if (p->want == W_N_TS) c->ts = parse_double(s, n), c->flags |= HT_TS;
      break;
    case W_N_ITD:
      if (kind == K_NULL) break;
      if (kind != K_NUM || parse_i64(s, n, &v)) return node_fail(p, "%s is not a node id", "'inter_thread_dep'");
      c->itd = v;
      if (v) c->flags |= HT_ITD;
      break;
    case W_N_STREAM:
    case W_N_DEVICE:
      if (kind == K_NULL) break;
      if (kind != K_NUM || parse_i64(s, n, &v))
        return node_fail(p, "%s is not an integer", p->want == W_N_STREAM ? "'stream'" : "'device'");
      if (p->want == W_N_STREAM) c->stream = v;
      else c->device = (int32_t)v;
      break;
    case W_N_SYNC:
      if (kind != K_NULL) return node_fail(p, "%s is not a list", "'sync_dep'");
      break;
    case W_N_INPUTS:
    case W_N_OUTPUTS:
      return node_fail(p, "%s is neither an object nor a list", p->want == W_N_INPUTS ? "'inputs'" : "'outputs'");
    case W_N_ATTRS:
      if (kind == K_NULL) break;
      return node_fail(p, "%s is not a list", "'attrs'");
    default:
      if (p->want >= W_N_FLAT_INT0 && p->want < W_N_FLAT_INT0 + HT_NATTR) {
        int k = p->want - W_N_FLAT_INT0;
        if (kind != K_NUM || parse_i64(s, n, &v)) {
          if (kind == K_NUM && !parse_u64(s, n, &u)) v = (int64_t)u;
          else return node_fail(p, "'%s' is not an integer", ht_attr_names[k]);
        }
        c->a[k] = v;
        c->flags |= (HT_ATTR0 << k) | HT_FLAT;
      }
      break;
  }
  after_value(p);
  return 1;
}

static int attr_scalar(hparse *p, int kind, const char *s, size_t n) {
  switch (p->want) {
    case W_A_NAME:
      if (kind != K_STR) return node_fail(p, "%s", "an attribute name is not a string");
      p->a_name.n = 0;
      ibuf_put(&p->a_name, s, n);
      p->a_has_name = 1;
      break;
    case W_A_TYPE:
      p->a_type.n = 0;
      if (kind == K_STR) ibuf_put(&p->a_type, s, n);
      break;
    case W_A_VALUE:
      p->a_val.n = 0;
      if (kind == K_NUM) {
        p->a_kind = json_number_is_int(s, n) ? AV_INT : AV_DOUBLE;
        ibuf_put(&p->a_val, s, n);
      } else if (kind == K_STR) {
        p->a_kind = AV_STRING;
        ibuf_put(&p->a_val, s, n);
      } else if (kind == K_TRUE || kind == K_FALSE) {
        p->a_kind = AV_BOOL;
        ibuf_puts(&p->a_val, kind == K_TRUE ? "true" : "false");
      } else {
        p->a_kind = AV_NULL;
        ibuf_puts(&p->a_val, "null");
      }
      break;
    default: break;
  }
  after_value(p);
  return 1;
}

static int on_scalar(hparse *p, int kind, const char *s, size_t n) {
  if (p->capd) return cap_scalar(p, kind, s, n);
  switch (p->want) {
    case W_T_SCHEMA: case W_T_PID: case W_T_TIME: case W_T_START: case W_T_FINISH: case W_T_NODES:
      return top_scalar(p, kind, s, n);
    case W_T_OTHER: case W_N_OTHER: case W_IO_VALUES: case W_IO_SHAPES: case W_IO_TYPES:
    case W_IO_STRIDES: case W_IO_OTHER: case W_N_IN_SHAPES: case W_N_IN_TYPES: case W_N_OUT_SHAPES:
    case W_N_OUT_TYPES:
      /* a captured value that happens to be a scalar */
      cap_scalar(p, kind, s, n);
      after_value(p);
      return 1;
    case W_A_NAME: case W_A_TYPE: case W_A_VALUE: case W_A_OTHER:
      return attr_scalar(p, kind, s, n);
    case W_N_EXTRA: {
      int k = kind == K_NUM ? (json_number_is_int(s, n) ? AV_INT : AV_DOUBLE)
              : kind == K_STR ? AV_STRING : kind == K_NULL ? AV_NULL : AV_BOOL;
      const char *v = kind == K_TRUE ? "true" : kind == K_FALSE ? "false" : s;
      size_t vl = kind == K_TRUE ? 4 : kind == K_FALSE ? 5 : n;
      if (!add_extra(p, p->a_name.p ? p->a_name.p : "", p->a_name.n, k, v, vl)) return 0;
      after_value(p);
      return 1;
    }
    case W_SYNC_ELEM: {
      uint64_t u;
      if (kind != K_NUM || parse_u64(s, n, &u)) return node_fail(p, "%s", "'sync_dep' holds a value that is not a node id");
      if (p->n_sync == p->cap_sync) {
        size_t cap = p->cap_sync ? p->cap_sync * 2 : 16;
        uint64_t *v = realloc(p->syncv, cap * sizeof *v);
        if (!v) return oom(p);
        p->syncv = v;
        p->cap_sync = cap;
      }
      p->syncv[p->n_sync++] = u;
      after_value(p);
      return 1;
    }
    case W_PARENT_ELEM: {
      uint64_t u;
      if (kind != K_NUM || parse_u64(s, n, &u)) return node_fail(p, "%s", "'ctrl_deps' holds a value that is not a node id");
      if (p->n_parents++) return node_fail(p, "%s", "'ctrl_deps' lists more than one parent");
      p->cur.parent = u;
      p->cur.flags |= HT_PARENT;
      after_value(p);
      return 1;
    }
    case W_NODE:
      return fail(p, CHAKRA_EFORMAT, "byte %llu: an element of 'nodes' is not an object", (unsigned long long)here(p));
    case W_DOC:
      return fail(p, CHAKRA_EFORMAT, "byte %llu: the document is not a JSON object", (unsigned long long)here(p));
    case W_ATTR:
      return node_fail(p, "%s", "an entry of 'attrs' is not an object");
    default:
      if (p->want >= W_N_ID && p->want <= W_N_OUT_TYPES) return node_scalar(p, kind, s, n);
      return fail(p, CHAKRA_EFORMAT, "byte %llu: unexpected value", (unsigned long long)here(p));
  }
}

static int cb_null(void *ctx) { return on_scalar(ctx, K_NULL, NULL, 0); }
static int cb_bool(void *ctx, int v) { return on_scalar(ctx, v ? K_TRUE : K_FALSE, NULL, 0); }
static int cb_number(void *ctx, const char *s, size_t n) { return on_scalar(ctx, K_NUM, s, n); }
static int cb_string(void *ctx, const unsigned char *s, size_t n) {
  return on_scalar(ctx, K_STR, (const char *)s, n);
}

#define KEY(lit) (n == sizeof(lit) - 1 && memcmp(s, lit, sizeof(lit) - 1) == 0)

static int cb_map_key(void *ctx, const unsigned char *us, size_t n) {
  hparse *p = ctx;
  if (p->capd) return cap_key(p, us, n);
  const char *s = (const char *)us;
  switch (p->fr[p->depth - 1]) {
    case F_TOP:
      if (KEY("schema")) p->want = W_T_SCHEMA;
      else if (KEY("nodes")) p->want = W_T_NODES;
      else if (KEY("pid")) p->want = W_T_PID;
      else if (KEY("time")) p->want = W_T_TIME;
      else if (KEY("start_ts")) p->want = W_T_START;
      else if (KEY("finish_ts")) p->want = W_T_FINISH;
      else {
        p->want = W_T_OTHER;
        if (p->mode == HT_MODE_LINK) {
          if (p->top_extra.n) ibuf_putc(&p->top_extra, ',');
          json_str(&p->top_extra, us, n);
          ibuf_putc(&p->top_extra, ':');
          cap_start(p, &p->top_extra, 0);
        } else {
          cap_start(p, NULL, 0);
        }
      }
      return 1;
    case F_NODE: {
      int w = W_N_OTHER;
      static const struct { const char *k; int w; } keys[] = {
          {"id", W_N_ID}, {"name", W_N_NAME}, {"ctrl_deps", W_N_PARENT}, {"inputs", W_N_INPUTS},
          {"outputs", W_N_OUTPUTS}, {"attrs", W_N_ATTRS}, {"parent", W_N_PARENT},
          {"ts", W_N_TS}, {"cat", W_N_CAT}, {"inclusive_dur", W_N_INCL}, {"exclusive_dur", W_N_EXCL},
          {"inter_thread_dep", W_N_ITD}, {"sync_dep", W_N_SYNC}, {"stream", W_N_STREAM},
          {"device", W_N_DEVICE}, {"pg_name", W_N_PG}, {"op_schema", W_N_FLAT_SCHEMA},
          {"rf_id", W_N_FLAT_INT0 + HT_A_RF_ID}, {"fw_parent", W_N_FLAT_INT0 + HT_A_FW_PARENT},
          {"seq_id", W_N_FLAT_INT0 + HT_A_SEQ_ID}, {"scope", W_N_FLAT_INT0 + HT_A_SCOPE},
          {"tid", W_N_FLAT_INT0 + HT_A_TID}, {"fw_tid", W_N_FLAT_INT0 + HT_A_FW_TID},
          {"input_shapes", W_N_IN_SHAPES}, {"input_types", W_N_IN_TYPES},
          {"output_shapes", W_N_OUT_SHAPES}, {"output_types", W_N_OUT_TYPES}};
      for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (strlen(keys[i].k) == n && memcmp(keys[i].k, s, n) == 0) {
          w = keys[i].w;
          break;
        }
      if (KEY("parent")) p->cur.flags |= HT_FLAT;
      p->want = w;
      int repr = p->mode == HT_MODE_CONVERT ? CAP_REPR : 0;
      switch (w) {
        case W_N_IN_SHAPES: io_capture(p, HT_IO_IN_SHAPES, repr); break;
        case W_N_IN_TYPES: io_capture(p, HT_IO_IN_TYPES, repr | CAP_TYPES); break;
        case W_N_OUT_SHAPES: io_capture(p, HT_IO_OUT_SHAPES, repr); break;
        case W_N_OUT_TYPES: io_capture(p, HT_IO_OUT_TYPES, repr); break;
        case W_N_OTHER:
          if (p->mode == HT_MODE_LINK && !KEY("ph")) {
            ibuf_putc(&p->others, ',');
            json_str(&p->others, us, n);
            ibuf_putc(&p->others, ':');
            cap_start(p, &p->others, 0);
          } else if (p->mode == HT_MODE_CONVERT && !KEY("ph")) {
            /* kept as an attribute if its value is a scalar */
            p->want = W_N_EXTRA;
            p->a_name.n = 0;
            ibuf_put(&p->a_name, s, n);
            cap_start(p, NULL, 0);
          } else {
            cap_start(p, NULL, 0);
          }
          break;
        default: break;
      }
      return 1;
    }
    case F_IO: {
      int w = p->io_which;
      int repr = p->mode == HT_MODE_CONVERT ? CAP_REPR : 0;
      if (KEY("values")) {
        values_capture(p, w);
      } else if (KEY("shapes")) {
        p->want = W_IO_SHAPES;
        io_capture(p, w * 3 + 1, repr);
      } else if (KEY("types")) {
        p->want = W_IO_TYPES;
        io_capture(p, w * 3 + 2, repr | (w == 0 ? CAP_TYPES : 0));
        if (w == 0) p->n_argt = 0;
      } else if (KEY("strides") && p->mode == HT_MODE_LINK) {
        p->want = W_IO_STRIDES;
        p->strides_set[w] = 1, p->strides[w].n = 0;
        cap_start(p, &p->strides[w], 0);
      } else {
        p->want = W_IO_OTHER;
        cap_start(p, NULL, 0);
      }
      return 1;
    }
    case F_ATTR:
      if (KEY("name")) p->want = W_A_NAME;
      else if (KEY("type")) p->want = W_A_TYPE;
      else if (KEY("value")) p->want = W_A_VALUE;
      else p->want = W_A_OTHER, cap_start(p, NULL, 0);
      return 1;
    default:
      return fail(p, CHAKRA_EFORMAT, "byte %llu: unexpected key", (unsigned long long)here(p));
  }
}

static int is_capture_want(int w) {
  return w == W_T_OTHER || w == W_N_OTHER || w == W_N_EXTRA || w == W_IO_VALUES || w == W_IO_SHAPES || w == W_IO_TYPES ||
         w == W_IO_STRIDES || w == W_IO_OTHER || w == W_N_IN_SHAPES || w == W_N_IN_TYPES ||
         w == W_N_OUT_SHAPES || w == W_N_OUT_TYPES || w == W_A_OTHER;
}

static int cb_start_map(void *ctx) {
  hparse *p = ctx;
  if (p->capd) return cap_open(p, 1);
  if (is_capture_want(p->want)) return cap_open(p, 1);
  switch (p->want) {
    case W_DOC:
      p->want = W_KEY;
      return push(p, F_TOP);
    case W_NODE:
      reset_node(p);
      p->at_boundary = 0;
      p->cur.offset = here(p) - 1;
      p->want = W_KEY;
      return push(p, F_NODE);
    case W_N_INPUTS:
    case W_N_OUTPUTS:
      p->io_which = p->want == W_N_OUTPUTS;
      p->cur.flags |= p->io_which ? HT_OUTPUTS : HT_INPUTS;
      p->want = W_KEY;
      return push(p, F_IO);
    case W_ATTR:
      p->a_name.n = p->a_type.n = p->a_val.n = 0;
      p->a_kind = AV_NONE;
      p->a_has_name = 0;
      p->want = W_KEY;
      return push(p, F_ATTR);
    case W_A_VALUE:
      return attr_value_open(p, 1);
    case W_T_NODES:
      return fail(p, CHAKRA_EFORMAT, "byte %llu: 'nodes' is not a list", (unsigned long long)here(p));
    case W_SEGSTART:
      return fail(p, CHAKRA_EFORMAT, "internal: segment does not start a list");
    default:
      if (p->want >= W_N_ID && p->want <= W_N_OUT_TYPES) {
        static const char *const what = "a member holds an object where a scalar belongs";
        return node_fail(p, "%s", what);
      }
      if (p->want == W_DONE) return fail(p, CHAKRA_EFORMAT, "byte %llu: text after the document", (unsigned long long)here(p));
      return fail(p, CHAKRA_EFORMAT, "byte %llu: unexpected object", (unsigned long long)here(p));
  }
}

static int cb_end_map(void *ctx) {
  hparse *p = ctx;
  if (p->capd) return cap_close(p);
  int f = p->fr[--p->depth];
  switch (f) {
    case F_NODE:
      if (!finish_node(p)) return 0;
      after_value(p);
      p->at_boundary = 1;
      return 1;
    case F_ATTR:
      if (!finish_attr(p)) return 0;
      break;
    default: break;
  }
  after_value(p);
  return 1;
}

static int cb_start_array(void *ctx) {
  hparse *p = ctx;
  if (p->capd) return cap_open(p, 0);
  if (is_capture_want(p->want)) return cap_open(p, 0);
  switch (p->want) {
    case W_SEGSTART:
    case W_T_NODES:
      p->want = W_NODE;
      p->seen_nodes = 1;
      return push(p, F_NODES);
    case W_N_INPUTS:
    case W_N_OUTPUTS: {
      /* 1.0.1: the values list itself */
      int w = p->want == W_N_OUTPUTS;
      p->cur.flags |= (w ? HT_OUTPUTS : HT_INPUTS) | HT_FLAT;
      values_capture(p, w);
      return cap_open(p, 0);
    }
    case W_N_ATTRS:
      p->want = W_ATTR;
      return push(p, F_ATTRS);
    case W_N_SYNC:
      p->has_sync = 1;
      p->n_sync = 0;
      p->want = W_SYNC_ELEM;
      return push(p, F_SYNC);
    case W_N_PARENT:
      p->want = W_PARENT_ELEM;
      return push(p, F_PARENTS);
    case W_A_VALUE:
      return attr_value_open(p, 0);
    case W_DOC:
      return fail(p, CHAKRA_EFORMAT, "byte %llu: the document is a list, not a host ET object", (unsigned long long)here(p));
    case W_NODE:
      return fail(p, CHAKRA_EFORMAT, "byte %llu: an element of 'nodes' is not an object", (unsigned long long)here(p));
    default:
      if (p->want >= W_N_ID && p->want <= W_N_OUT_TYPES)
        return node_fail(p, "%s", "a member holds a list where a scalar belongs");
      if (p->want == W_DONE) return fail(p, CHAKRA_EFORMAT, "byte %llu: text after the document", (unsigned long long)here(p));
      return fail(p, CHAKRA_EFORMAT, "byte %llu: unexpected list", (unsigned long long)here(p));
  }
}

static int cb_end_array(void *ctx) {
  hparse *p = ctx;
  if (p->capd) return cap_close(p);
  int f = p->fr[--p->depth];
  if (f == F_NODES) {
    p->nodes_done = 1;
    p->nodes_end = here(p);
    p->at_boundary = 0;
  }
  after_value(p);
  return 1;
}

static const yajl_callbacks callbacks = {cb_null,     cb_bool,    NULL,         NULL,
                                         cb_number,   cb_string,  cb_start_map, cb_map_key,
                                         cb_end_map,  cb_start_array, cb_end_array};

/* --------------------------------------------------------------- driving */

static int hparse_init(hparse *p, const char *path, const hostet_options *opt, hostet *h, int seg_nodes) {
  memset(p, 0, sizeof *p);
  p->path = path;
  p->mode = opt->mode;
  p->versions = opt->versions;
  p->seg_nodes = seg_nodes;
  p->h = h;
  p->want = seg_nodes ? W_SEGSTART : W_DOC;
  strtab_init(&p->st);
  p->y = yajl_alloc(&callbacks, NULL, p);
  if (!p->y) return -1;
  if (seg_nodes) yajl_config(p->y, yajl_allow_trailing_garbage, 1);
  return 0;
}

static void hparse_free_scratch(hparse *p) {
  if (p->y) yajl_free(p->y);
  p->y = NULL;
  for (int i = 0; i < HT_IO_N; i++) ibuf_free(&p->io[i]);
  ibuf_free(&p->strides[0]);
  ibuf_free(&p->strides[1]);
  ibuf_free(&p->attrs_json);
  ibuf_free(&p->others);
  free(p->xs);
  ibuf_free(&p->scratch);
  ibuf_free(&p->targ_str);
  ibuf_free(&p->a_name);
  ibuf_free(&p->a_type);
  ibuf_free(&p->a_val);
  free(p->arg_bytes);
  free(p->arg_tensor);
  free(p->targs);
  free(p->syncv);
  p->arg_bytes = NULL, p->arg_tensor = NULL, p->targs = NULL, p->syncv = NULL;
  p->xs = NULL, p->n_xs = p->cap_xs = 0;
}

static void hparse_free_all(hparse *p) {
  hparse_free_scratch(p);
  bigmem_free(p->nodes);
  free(p->side);
  strtab_free(&p->st);
  bpool_free(&p->pool);
  ibuf_free(&p->top_extra);
}

/* Turns a yajl failure into an error naming the byte and, inside a node,
 * the node. */
static int yajl_failed(hparse *p, const unsigned char *chunk, size_t n) {
  if (p->rc) return p->rc;
  unsigned char *msg = yajl_get_error(p->y, 0, chunk, n);
  size_t len = msg ? strlen((const char *)msg) : 0;
  while (len && (msg[len - 1] == '\n' || msg[len - 1] == ' ')) msg[--len] = 0;
  /* at the end of the input (chunk NULL) the error is where the text ends */
  uint64_t at = p->chunk_base + (chunk ? yajl_get_bytes_consumed(p->y) : 0);
  char where[120] = "";
  for (int i = 0; i < p->depth; i++)
    if (p->fr[i] == F_NODE) node_label(p, where, sizeof where);
  p->rc = chakra_error_set(&p->err, CHAKRA_EFORMAT, "%s: byte %llu%s%s: invalid JSON: %s", p->path,
                           (unsigned long long)at, where[0] ? ", in " : "", where,
                           len ? (const char *)msg : "parse error");
  if (msg) yajl_free_error(p->y, msg);
  return p->rc;
}

static int feed(hparse *p, const unsigned char *buf, size_t n, uint64_t base) {
  p->chunk_base = base;
  yajl_status s = yajl_parse(p->y, buf, n);
  if (s != yajl_status_ok) return yajl_failed(p, buf, n);
  return p->rc;
}

static int finish_doc(hparse *p) {
  yajl_status s = yajl_complete_parse(p->y);
  if (s != yajl_status_ok) return yajl_failed(p, NULL, 0);
  if (p->rc) return p->rc;
  return 0;
}

/* Checks what a whole document must hold. */
static int check_top(hparse *p) {
  if (!p->h->schema)
    return chakra_error_set(&p->err, CHAKRA_EFORMAT, "%s: no 'schema': not a PyTorch host execution trace", p->path);
  if (!p->seen_nodes)
    return chakra_error_set(&p->err, CHAKRA_EFORMAT, "%s: no 'nodes' list: not a PyTorch host execution trace", p->path);
  return 0;
}

static int parse_sequential(hparse *p, const chakra_input *input) {
  instream *in;
  int rc = instream_open_input(&in, input, &p->err);
  if (rc) return rc;
  enum { CHUNK = 256 * 1024 };
  unsigned char *buf = malloc(CHUNK);
  if (!buf) {
    instream_close(in);
    return chakra_error_set(&p->err, CHAKRA_ENOMEM, "out of memory");
  }
  uint64_t off = 0;
  int any = 0;
  for (;;) {
    ssize_t n = instream_read(in, buf, CHUNK, &p->err);
    if (n < 0) {
      rc = (int)n;
      break;
    }
    if (n == 0) break;
    for (ssize_t i = 0; !any && i < n; i++) any = buf[i] != ' ' && buf[i] != '\n' && buf[i] != '\t' && buf[i] != '\r';
    rc = feed(p, buf, (size_t)n, off);
    if (rc) break;
    off += (uint64_t)n;
  }
  free(buf);
  instream_close(in);
  if (rc) return rc;
  if (!any) return chakra_error_set(&p->err, CHAKRA_EFORMAT, "%s: empty file", chakra_input_name(input));
  p->chunk_base = off;
  rc = finish_doc(p);
  return rc ? rc : check_top(p);
}

/* ------------------------------------------------------------- parallel */

typedef struct segment {
  hparse p;
  int fd;
  uint64_t start, end;  /* text [start, end) of the file; segment 0 starts at 0 */
  int last;
  int boundary_ok;      /* the parser stood between two nodes at `end` */
  int rc;
} segment;

static int feed_range(segment *s, uint64_t from, uint64_t to) {
  enum { CHUNK = 256 * 1024 };
  unsigned char *buf = malloc(CHUNK);
  if (!buf) return chakra_error_set(&s->p.err, CHAKRA_ENOMEM, "out of memory");
  int rc = 0;
  for (uint64_t off = from; off < to && !rc;) {
    if (s->p.abort_flag && *s->p.abort_flag) break;
    size_t want = to - off < CHUNK ? (size_t)(to - off) : CHUNK;
    ssize_t n = pread(s->fd, buf, want, (off_t)off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      rc = chakra_error_set(&s->p.err, CHAKRA_EIO, "%s: read failed at byte %llu", s->p.path, (unsigned long long)off);
      break;
    }
    rc = feed(&s->p, buf, (size_t)n, off);
    off += (uint64_t)n;
    if (s->last && s->p.nodes_done) break;
  }
  free(buf);
  return rc;
}

static int seg_at_boundary(const hparse *p) {
  return !p->capd && p->depth >= 1 && p->fr[p->depth - 1] == F_NODES && p->at_boundary &&
         p->depth == (p->seg_nodes ? 1 : 2);
}

static void *seg_run(void *arg);

/* Segment 0 reads the document's head up to the first cut; the others
 * run seg_run(). */
typedef struct seg_jobs {
  segment *seg;
  volatile int *abort_flag;
  int rc0;
} seg_jobs;

static int seg_job(void *ctx, size_t i) {
  seg_jobs *J = ctx;
  if (i > 0) {
    seg_run(&J->seg[i]);
    return 0;
  }
  J->rc0 = feed_range(&J->seg[0], 0, J->seg[0].end);
  if (!J->rc0) J->seg[0].boundary_ok = seg_at_boundary(&J->seg[0].p);
  else *J->abort_flag = 1;
  return 0;
}

static void *seg_run(void *arg) {
  segment *s = arg;
  static const unsigned char open[] = "[";
  int rc = feed(&s->p, open, 1, s->start - 1);
  if (!rc) rc = feed_range(s, s->start, s->end);
  if (!rc && !s->last) {
    s->boundary_ok = seg_at_boundary(&s->p);
    static const unsigned char close[] = "]";
    if (s->boundary_ok) {
      rc = feed(&s->p, close, 1, s->end);
      if (!rc) rc = finish_doc(&s->p);
    }
  } else if (!rc && s->last) {
    if (!s->p.nodes_done) rc = finish_doc(&s->p);
  }
  s->rc = rc;
  return NULL;
}

/* Offset of a ',' between two nodes near `target`, or 0: a '}' then ','
 * then a line break and '{' as the first thing on its line; among the
 * candidates in the window, the least indented (nodes are the shallowest
 * objects of a pretty-printed trace). The parsers verify it. */
static uint64_t find_boundary(int fd, uint64_t target, uint64_t size) {
  enum { WIN = 1 << 20 };
  unsigned char *buf = malloc(WIN);
  if (!buf) return 0;
  uint64_t best = 0;
  int best_indent = 1 << 30;
  ssize_t n = pread(fd, buf, WIN, (off_t)target);
  if (n > 0) {
    for (ssize_t i = 0; i < n; i++) {
      if (buf[i] != '}') continue;
      ssize_t j = i + 1;
      while (j < n && (buf[j] == ' ' || buf[j] == '\t' || buf[j] == '\r')) j++;
      if (j >= n || buf[j] != ',') continue;
      ssize_t comma = j++;
      while (j < n && (buf[j] == ' ' || buf[j] == '\t' || buf[j] == '\r')) j++;
      if (j >= n || buf[j] != '\n') continue;
      j++;
      ssize_t ind = j;
      while (j < n && (buf[j] == ' ' || buf[j] == '\t')) j++;
      if (j >= n || buf[j] != '{') continue;
      int indent = (int)(j - ind);
      if (indent < best_indent) {
        best_indent = indent;
        best = target + (uint64_t)comma;
        if (indent == 0) break;
      }
    }
  }
  free(buf);
  return best && best + 2 < size ? best : 0;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Moves the segments' results into h; string ids are remapped into one
 * table. */
static int merge(hostet *h, segment *seg, int k) {
  size_t total = 0, total_side = 0;
  for (int i = 0; i < k; i++) total += seg[i].p.n, total_side += seg[i].p.n_side;
  if (k == 1) {
    h->nodes = seg[0].p.nodes, h->n = seg[0].p.n;
    h->side = seg[0].p.side, h->n_side = seg[0].p.n_side;
    h->strings = seg[0].p.st;
    seg[0].p.nodes = NULL, seg[0].p.side = NULL;
    strtab_init(&seg[0].p.st);
  } else {
    /* Grow segment 0's arrays in place and append the others, freeing each
     * as it is copied: at most one segment is held twice. */
    ht_node *nodes = bigmem_realloc(seg[0].p.nodes, (total ? total : 1) * sizeof *nodes);
    if (!nodes) return CHAKRA_ENOMEM;
    seg[0].p.nodes = NULL;
    h->nodes = nodes;
    ht_side *side = realloc(seg[0].p.side, (total_side ? total_side : 1) * sizeof *side);
    if (!side) return CHAKRA_ENOMEM;
    seg[0].p.side = NULL;
    h->side = side;
    strtab_init(&h->strings);
    size_t at = 0, at_side = 0;
    for (int i = 0; i < k; i++) {
      hparse *p = &seg[i].p;
      uint32_t *map = malloc(((size_t)p->st.n + 1) * sizeof *map);
      if (!map) return CHAKRA_ENOMEM;
      map[0] = 0;
      for (uint32_t s = 1; s <= p->st.n; s++) {
        map[s] = strtab_intern(&h->strings, p->st.str[s], p->st.len[s]);
        if (map[s] == STRTAB_OOM) {
          free(map);
          return CHAKRA_ENOMEM;
        }
      }
      const ht_node *src = i ? p->nodes : h->nodes;
      const ht_side *src_side = i ? p->side : h->side;
      for (size_t j = 0; j < p->n; j++) {
        ht_node *d = &h->nodes[at + j];
        *d = src[j];
        d->name = map[d->name], d->op_schema = map[d->op_schema];
        d->cat = map[d->cat], d->pg_name = map[d->pg_name];
        if (d->side != UINT32_MAX) d->side += (uint32_t)at_side;
      }
      for (size_t j = 0; j < p->n_side; j++) {
        ht_side *d = &h->side[at_side + j];
        *d = src_side[j];
        d->node += (uint32_t)at;
        d->coll_name = map[d->coll_name];
      }
      free(map);
      at += p->n;
      at_side += p->n_side;
      if (i) bigmem_free(p->nodes);
      p->nodes = NULL;
      free(p->side), p->side = NULL;
    }
  }
  h->n = total;
  h->n_side = total_side;
  h->pools = calloc(k > 0 ? (size_t)k : 1u, sizeof *h->pools);
  if (!h->pools) return CHAKRA_ENOMEM;
  for (int i = 0; i < k; i++) {
    h->pools[i] = seg[i].p.pool;
    memset(&seg[i].p.pool, 0, sizeof seg[i].p.pool);
  }
  h->n_pools = k;
  h->segments = k;
  return 0;
}

static int try_parallel(hostet *h, const char *path, const hostet_options *opt, int threads, int *done,
                        chakra_error *err) {
  *done = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat st;
  unsigned char magic[2] = {0, 0};
  if (fstat(fd, &st) || !S_ISREG(st.st_mode) || pread(fd, magic, 2, 0) != 2 ||
      (magic[0] == 0x1f && magic[1] == 0x8b)) {
    close(fd);
    return 0;
  }
  uint64_t size = (uint64_t)st.st_size;
  const uint64_t min_seg = 4u << 20;
  int k = threads;
  if ((uint64_t)k > size / min_seg) k = (int)(size / min_seg);
  if (k < 2) {
    close(fd);
    return 0;
  }
  uint64_t cut[64];
  int nc = 0;
  for (int i = 1; i < k; i++) {
    uint64_t b = find_boundary(fd, size * (uint64_t)i / (uint64_t)k, size);
    if (b && (!nc || b > cut[nc - 1] + 1)) cut[nc++] = b;
  }
  qsort(cut, (size_t)nc, sizeof *cut, cmp_u64);
  if (!nc) {
    close(fd);
    return 0;
  }
  k = nc + 1;
  segment *seg = calloc((size_t)k, sizeof *seg);
  volatile int abort_flag = 0;
  int rc = 0;
  if (!seg) {
    close(fd);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  for (int i = 0; i < k; i++) {
    seg[i].fd = fd;
    seg[i].start = i == 0 ? 0 : cut[i - 1] + 1;
    seg[i].end = i == k - 1 ? size : cut[i];
    seg[i].last = i == k - 1;
    if (hparse_init(&seg[i].p, path, opt, h, i > 0)) rc = CHAKRA_ENOMEM;
    seg[i].p.abort_flag = &abort_flag;
  }
  seg_jobs jobs = {seg, &abort_flag, 0};
  if (!rc) tasks_run((size_t)k, (unsigned)k, seg_job, &jobs, 0);
  int rc0 = jobs.rc0;
  /* A segment's result counts only if every segment before it ended on a
   * node boundary (so that it started on one). */
  int first_err = -1;
  for (int i = 1; i < k && first_err < 0; i++)
    if (seg[i].rc) first_err = i;
  int upto = first_err >= 0 ? first_err : k - 1;
  int verified = !rc && !rc0;
  for (int i = 0; i < upto && verified; i++) verified = seg[i].boundary_ok;
  if (verified && first_err < 0) verified = seg[k - 1].p.nodes_done;
  if (verified && first_err < 0) {
    /* segment 0 closes the nodes array and reads what follows it */
    static const unsigned char close_br[] = "]";
    rc0 = feed(&seg[0].p, close_br, 1, seg[k - 1].p.nodes_end - 1);
    if (!rc0) {
      seg[0].last = 0;
      rc0 = feed_range(&seg[0], seg[k - 1].p.nodes_end, size);
    }
    if (!rc0) {
      seg[0].p.chunk_base = size;
      rc0 = finish_doc(&seg[0].p);
    }
    if (!rc0) rc0 = check_top(&seg[0].p);
    if (rc0) {
      *err = seg[0].p.err;
      rc = rc0;
    } else {
      rc = merge(h, seg, k);
      if (rc) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
      if (!rc && opt->mode == HT_MODE_LINK && seg[0].p.top_extra.n) {
        h->top_extra = seg[0].p.top_extra.p;
        h->top_extra_len = seg[0].p.top_extra.n;
        seg[0].p.top_extra.p = NULL;
      }
    }
    *done = 1;
  } else if (verified && first_err >= 0) {
    /* every boundary held: the first failing segment has the real error */
    *err = seg[first_err].p.err;
    rc = seg[first_err].rc;
    *done = 1;
  } else if (rc0 && seg[0].p.rc) {
    /* segment 0 reads the start of the file as a sequential parse would */
    *err = seg[0].p.err;
    rc = rc0;
    *done = 1;
  }
  /* otherwise: a boundary did not hold; the caller parses sequentially */
  for (int i = 0; i < k; i++) hparse_free_all(&seg[i].p);
  free(seg);
  close(fd);
  return rc;
}

/* ------------------------------------------------------------------ API */

int hostet_read(hostet **out, const char *path, const hostet_options *opt, chakra_error *err) {
  chakra_input in = {.path = path};
  return hostet_read_input(out, &in, opt, err);
}

int hostet_read_input(hostet **out, const chakra_input *input, const hostet_options *opt, chakra_error *err) {
  *out = NULL;
  const char *path = chakra_input_name(input);
  hostet *h = calloc(1, sizeof *h);
  if (!h || !(h->path = strdup(path))) {
    free(h);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  int threads = opt->threads > 0 ? opt->threads : (int)tasks_cpus();
  if (threads > 64) threads = 64;
  int rc = 0, done = 0;
  if (threads > 1 && input->path && strcmp(input->path, "-") != 0) rc = try_parallel(h, input->path, opt, threads, &done, err);
  if (!done) {
    hparse p;
    if (hparse_init(&p, path, opt, h, 0)) {
      rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    } else {
      rc = parse_sequential(&p, input);
      if (rc) {
        *err = p.err;
      } else {
        segment s;
        memset(&s, 0, sizeof s);
        s.p = p;
        hparse_free_scratch(&s.p);
        rc = merge(h, &s, 1);
        if (rc) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
        if (opt->mode == HT_MODE_LINK && s.p.top_extra.n) {
          h->top_extra = s.p.top_extra.p;
          h->top_extra_len = s.p.top_extra.n;
          s.p.top_extra.p = NULL;
        }
        p = s.p;
      }
      hparse_free_all(&p);
    }
  }
  if (rc) {
    hostet_free(h);
    return rc;
  }
  if (h->newer_schema && opt->diag) {
    char msg[300];
    snprintf(msg, sizeof msg, "schema '%s' is newer than this version of chakra knows (1.1); converted as 1.1",
             h->schema);
    chakra_problem p = chakra_problem_make(CHAKRA_SEV_WARNING, msg);
    p.file = path;
    p.field = "schema";
    opt->diag(opt->diag_ctx, &p);
  }
  *out = h;
  return 0;
}

void hostet_free(hostet *h) {
  if (!h) return;
  free(h->path);
  free(h->schema);
  free(h->time);
  bigmem_free(h->nodes);
  free(h->side);
  strtab_free(&h->strings);
  for (int i = 0; i < h->n_pools; i++) bpool_free(&h->pools[i]);
  free(h->pools);
  free(h->top_extra);
  free(h);
}

size_t hostet_memory(const hostet *h) {
  size_t m = h->n * sizeof *h->nodes + h->n_side * sizeof *h->side + strtab_memory(&h->strings);
  for (int i = 0; i < h->n_pools; i++) m += h->pools[i].bytes;
  return m;
}

void hostet_where(const hostet *h, size_t i, char *out, size_t n) {
  snprintf(out, n, "node %llu (byte %llu)", (unsigned long long)h->nodes[i].id,
           (unsigned long long)h->nodes[i].offset);
}
