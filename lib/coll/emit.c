/* emit.c - hand-encoded algorithm nodes and all-or-nothing rank sets; see
 * emit.h. */
#include "emit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void coll_buf_free(coll_buf *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}

static uint8_t *room(coll_buf *b, size_t k) {
  if (b->oom) return NULL;
  if (b->cap - b->n < k) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->n < k) cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (!p) {
      b->oom = 1;
      return NULL;
    }
    b->p = p;
    b->cap = cap;
  }
  return b->p + b->n;
}

static inline size_t vlen(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) v >>= 7, n++;
  return n;
}

static inline uint8_t *put_v(uint8_t *p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *p++ = (uint8_t)v;
  return p;
}

static inline uint8_t *put_bytes(uint8_t *p, const void *s, size_t n) {
  memcpy(p, s, n);
  return p + n;
}

/* Field keys (field number << 3 | wire type). */
enum {
  K_NODE_ID = 0x08, K_NODE_NAME = 0x12, K_NODE_TYPE = 0x18, K_NODE_DATA_DEPS = 0x2a,
  K_NODE_DURATION = 0x38, K_NODE_ATTR = 0x52,
  K_ATTR_NAME = 0x0a, K_ATTR_INT32 = 0x38, K_ATTR_INT64 = 0x48, K_ATTR_UINT64 = 0x68,
  K_META_VERSION = 0x0a, K_META_ATTR = 0x12
};
#define K_ATTR_STRING 0x01ea /* field 29, two key bytes */

/* One attribute with an integer value (int32/int64 are sign-extended). */
typedef struct iattr {
  const char *name;
  uint8_t name_len;
  uint8_t key;
  uint64_t v;
} iattr;

#define IA(lit, key, v) ((iattr){lit, sizeof lit - 1, key, v})

static size_t iattr_body(const iattr *a) { return 2u + a->name_len + 1 + vlen(a->v); }

/* A short name (every attribute name here is 4 to 16 bytes) copied with
 * two overlapping fixed-size moves instead of a memcpy call: this runs
 * several times per node, millions of times per run. */
static inline uint8_t *put_name(uint8_t *p, const char *s, size_t n) {
  if (n >= 8 && n <= 16) {
    memcpy(p, s, 8);
    memcpy(p + n - 8, s + n - 8, 8);
    return p + n;
  }
  if (n >= 4 && n < 8) {
    memcpy(p, s, 4);
    memcpy(p + n - 4, s + n - 4, 4);
    return p + n;
  }
  return put_bytes(p, s, n);
}

static inline uint8_t *put_iattr(uint8_t *p, uint8_t key, const iattr *a) {
  *p++ = key;
  p = put_v(p, iattr_body(a));
  *p++ = K_ATTR_NAME;
  *p++ = a->name_len;
  p = put_name(p, a->name, a->name_len);
  *p++ = a->key;
  return put_v(p, a->v);
}

static size_t str_attr_body(const char *name, size_t sl) {
  size_t nl = strlen(name);
  return 1 + vlen(nl) + nl + 2 + vlen(sl) + sl;
}

static uint8_t *put_str_attr(uint8_t *p, uint8_t key, const char *name, const char *s, size_t sl) {
  size_t nl = strlen(name), body = str_attr_body(name, sl);
  *p++ = key;
  p = put_v(p, body);
  *p++ = K_ATTR_NAME;
  p = put_v(p, nl);
  p = put_bytes(p, name, nl);
  *p++ = K_ATTR_STRING & 0xff;
  *p++ = K_ATTR_STRING >> 8;
  p = put_v(p, sl);
  return put_bytes(p, s, sl);
}

static char *put_dec(char *p, uint32_t v) {
  char t[10];
  int n = 0;
  do t[n++] = (char)('0' + v % 10), v /= 10; while (v);
  while (n) *p++ = t[--n];
  return p;
}

/* The node's name into buf (at least 64 + strlen(name_prefix) bytes);
 * returns its length. Formatted by hand: printf was a third of gen. */
static size_t node_name(char *buf, const coll_dag *d, uint32_t i, const coll_place *pl) {
  static const char *const short_names[] = {"send.", "recv.", "reduce.", "copy."};
  static const char *const msccl_names[] = {"COMM_SEND_NODE_tb", "COMM_RECV_NODE_tb", "COMP_NODE_tb", "COMP_NODE_tb"};
  char *p = buf;
  if (pl->name_prefix) p = stpcpy(p, pl->name_prefix);
  int k = d->kind[i];
  if (pl->names == COLL_NAMES_MSCCL) {
    p = stpcpy(p, msccl_names[k]);
    p = put_dec(p, d->tb[i]);
    p = stpcpy(p, "_step");
  } else {
    p = stpcpy(p, short_names[k]);
  }
  p = put_dec(p, d->label[i]);
  return (size_t)(p - buf);
}

static uint64_t scaled(uint64_t v, const coll_place *pl) {
  if (!pl->scale_den) return v;
  return coll_muldiv(v, pl->scale_num, pl->scale_den);
}

/* The attributes of node i; returns their count. */
static size_t node_attrs(iattr *at, const coll_dag *d, uint32_t i, const coll_place *pl, uint64_t bytes,
                         uint64_t ns) {
  int k = d->kind[i];
  size_t na = 0;
  if (k == COLL_SEND || k == COLL_RECV) {
    int send = k == COLL_SEND;
    int32_t peer = d->peer[i];
    if (pl->peer_map) peer = (int32_t)pl->peer_map[peer];
    uint64_t tag = (uint64_t)((int64_t)d->tag[i] + pl->tag_base);
    uint64_t pv = (uint64_t)(int64_t)peer;
    if (pl->style == COLL_STYLE_COMPAT) {
      at[na++] = IA("comm_type", K_ATTR_INT64, send ? 5u : 6u);
      at[na++] = IA("comm_size", K_ATTR_INT64, bytes);
      at[na++] = send ? IA("comm_dst", K_ATTR_INT32, pv) : IA("comm_src", K_ATTR_INT32, pv);
      at[na++] = IA("comm_tag", K_ATTR_INT32, tag);
      return na;
    }
    if (pl->self >= 0) {
      uint64_t sv = (uint64_t)(int64_t)pl->self;
      at[na++] = send ? IA("comm_src", K_ATTR_INT32, sv) : IA("comm_dst", K_ATTR_INT32, sv);
    }
    at[na++] = send ? IA("comm_dst", K_ATTR_INT32, pv) : IA("comm_src", K_ATTR_INT32, pv);
    at[na++] = IA("comm_size", K_ATTR_INT64, bytes);
    at[na++] = IA("comm_tag", K_ATTR_INT32, tag);
  } else if (pl->style != COLL_STYLE_COMPAT) {
    at[na++] = IA("duration_ns", K_ATTR_UINT64, ns);
    at[na++] = IA("num_ops", K_ATTR_INT64, bytes / 4); /* fp32 elements */
    at[na++] = IA("tensor_size", K_ATTR_UINT64, bytes * (k == COLL_COPY ? 2 : 3));
  }
  return na;
}

void coll_encode_node(coll_buf *out, const coll_dag *d, uint32_t i, const coll_place *pl) {
  int k = d->kind[i];
  int msg = k == COLL_SEND || k == COLL_RECV;
  uint64_t bytes = scaled(d->bytes[i], pl), ns = scaled(d->dur_ns[i], pl);
  uint32_t nd = coll_dag_ndeps(d, i);
  const uint32_t *dv = nd ? d->deps + d->dep_off[i] : NULL; /* a DAG without edges has no deps array */
  size_t n_extra = nd == 0 ? pl->n_root_deps : 0;
  size_t pfx = pl->name_prefix ? strlen(pl->name_prefix) : 0;
  size_t pgl = msg && pl->pg_name ? strlen(pl->pg_name) : 0;
  /* Encode the body after one byte for its length prefix (nodes are nearly
   * always shorter than 128 bytes); a longer body moves up to make room for
   * its longer prefix. */
  size_t worst = 10 + 11 + 3 + 64 + pfx + 3 + 10 * (nd + n_extra + 1) + 11 + 6 * 40 + 24 + pgl;
  uint8_t *p0 = room(out, worst);
  if (!p0) return;
  uint8_t *b = p0 + 1, *p = b;
  uint64_t id = pl->id_base + (pl->id_of ? pl->id_of[i] : i), micros = ns / 1000;
  if (id) {
    *p++ = K_NODE_ID;
    p = put_v(p, id);
  }
  char name[96 + 64];
  char *nm = pfx + 64 <= sizeof name - 32 ? name : malloc(pfx + 96);
  size_t nl = nm ? node_name(nm, d, i, pl) : 0;
  *p++ = K_NODE_NAME;
  p = put_v(p, nl);
  p = put_bytes(p, nm, nl);
  if (nm != name) free(nm);
  *p++ = K_NODE_TYPE;
  *p++ = (uint8_t)(k == COLL_SEND ? 5 : k == COLL_RECV ? 6 : 4);
  if (nd + n_extra) {
    size_t depbytes = 0;
    for (uint32_t j = 0; j < nd; j++) depbytes += vlen(pl->id_base + (pl->id_of ? pl->id_of[dv[j]] : dv[j]));
    for (size_t j = 0; j < n_extra; j++) depbytes += vlen(pl->root_deps[j]);
    *p++ = K_NODE_DATA_DEPS;
    p = put_v(p, depbytes);
    for (uint32_t j = 0; j < nd; j++) p = put_v(p, pl->id_base + (pl->id_of ? pl->id_of[dv[j]] : dv[j]));
    for (size_t j = 0; j < n_extra; j++) p = put_v(p, pl->root_deps[j]);
  }
  if (micros) {
    *p++ = K_NODE_DURATION;
    p = put_v(p, micros);
  }
  iattr at[6];
  size_t na = node_attrs(at, d, i, pl, bytes, ns);
  for (size_t j = 0; j < na; j++) p = put_iattr(p, K_NODE_ATTR, &at[j]);
  if (msg && pl->pg_name) p = put_str_attr(p, K_NODE_ATTR, "pg_name", pl->pg_name, pgl);
  size_t body = (size_t)(p - b), pre = vlen(body);
  if (pre > 1) memmove(p0 + pre, b, body);
  put_v(p0, body);
  out->n += pre + body;
}

void coll_encode_pb(coll_buf *out, const ProtobufCMessage *m) {
  size_t len = protobuf_c_message_get_packed_size(m);
  uint8_t *p = room(out, len + 10);
  if (!p) return;
  size_t k = (size_t)(put_v(p, len) - p);
  protobuf_c_message_pack(m, p + k);
  out->n += k + len;
}

void coll_encode_raw(coll_buf *out, const uint8_t *data, size_t len) {
  uint8_t *p = room(out, len + 10);
  if (!p) return;
  uint8_t *q = put_v(p, len);
  memcpy(q, data, len);
  out->n += (size_t)(q - p) + len;
}

void coll_meta_str(coll_meta *m, const char *name, const char *s) {
  if (m->n == sizeof m->a / sizeof m->a[0]) return;
  m->a[m->n].name = name;
  m->a[m->n].kind = COLL_META_STR;
  m->a[m->n].s = s;
  m->a[m->n].len = 0;
  m->n++;
}

void coll_meta_int(coll_meta *m, const char *name, int64_t v) {
  if (m->n == sizeof m->a / sizeof m->a[0]) return;
  m->a[m->n].name = name;
  m->a[m->n].kind = COLL_META_INT64;
  m->a[m->n].i = v;
  m->n++;
}

void coll_encode_meta(coll_buf *out, const coll_meta *m) {
  size_t body = 0, vl = m->version ? strlen(m->version) : 0;
  if (m->version) body += 1 + vlen(vl) + vl;
  for (size_t j = 0; j < m->n; j++) {
    size_t b;
    if (m->a[j].kind == COLL_META_STR) {
      b = str_attr_body(m->a[j].name, m->a[j].len ? m->a[j].len : strlen(m->a[j].s));
    } else {
      iattr a = {m->a[j].name, (uint8_t)strlen(m->a[j].name), K_ATTR_INT64, (uint64_t)m->a[j].i};
      b = iattr_body(&a);
    }
    body += 1 + vlen(b) + b;
  }
  uint8_t *p = room(out, body + 10), *p0 = p;
  if (!p) return;
  p = put_v(p, body);
  if (m->version) {
    *p++ = K_META_VERSION;
    p = put_v(p, vl);
    p = put_bytes(p, m->version, vl);
  }
  for (size_t j = 0; j < m->n; j++) {
    if (m->a[j].kind == COLL_META_STR) {
      size_t sl = m->a[j].len ? m->a[j].len : strlen(m->a[j].s);
      p = put_str_attr(p, K_META_ATTR, m->a[j].name, m->a[j].s, sl);
    } else {
      iattr a = {m->a[j].name, (uint8_t)strlen(m->a[j].name), K_ATTR_INT64, (uint64_t)m->a[j].i};
      p = put_iattr(p, K_META_ATTR, &a);
    }
  }
  out->n += (size_t)(p - p0);
}

/* ---- rank sets --------------------------------------------------------- */

/* A rank set is the workload writer: its puts of different ranks may run
 * on several threads, and coll_set_fill hands ranks out to them. */
struct coll_set {
  chakra_workload_writer *w;
};

/* prefix, or paths when prefix is NULL. */
static int set_open(coll_set **out, const char *prefix, const char *const *paths, uint32_t n, chakra_error *err) {
  *out = NULL;
  coll_set *s = calloc(1, sizeof *s);
  if (!s) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  int rc = prefix ? chakra_workload_writer_open(&s->w, prefix, n, NULL, err)
                  : chakra_workload_writer_open_paths(&s->w, paths, n, NULL, err);
  if (rc) {
    free(s);
    return rc;
  }
  *out = s;
  return 0;
}

int coll_set_open(coll_set **out, const char *prefix, uint32_t ranks, chakra_error *err) {
  return set_open(out, prefix, NULL, ranks, err);
}

int coll_set_open_paths(coll_set **out, const char *const *paths, uint32_t n, chakra_error *err) {
  return set_open(out, NULL, paths, n, err);
}

/* The buffer holds framed messages; the writer checks (and bounds) each
 * message's size. */
int coll_set_write(coll_set *s, uint32_t r, const coll_buf *buf, chakra_error *err) {
  if (buf->oom)
    return chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory encoding rank %u",
                            chakra_workload_writer_path(s->w, r), r);
  return chakra_workload_writer_put_framed(s->w, r, buf->p, buf->n, err);
}

typedef struct set_fill {
  coll_set *s;
  coll_rank_fn fn;
  void *ctx;
} set_fill;

static int fill_one(void *ctx, unsigned worker, uint32_t rank, chakra_workload_writer *w, chakra_error *err) {
  (void)w;
  set_fill *f = ctx;
  return f->fn(f->ctx, worker, rank, f->s, err);
}

int coll_set_fill(coll_set *s, unsigned threads, coll_rank_fn fn, void *ctx, chakra_error *err) {
  set_fill f = {s, fn, ctx};
  return chakra_workload_writer_put_ranks(s->w, threads, fill_one, &f, err);
}

unsigned coll_set_threads(unsigned threads) {
  return threads ? threads : CHAKRA_WORKLOAD_AUTO_THREADS;
}

int coll_set_commit(coll_set *s, chakra_error *err) {
  int rc = chakra_workload_writer_commit(s->w, err); /* all ranks or none */
  free(s);
  return rc;
}

void coll_set_abort(coll_set *s) {
  if (!s) return;
  chakra_workload_writer_discard(s->w);
  free(s);
}
