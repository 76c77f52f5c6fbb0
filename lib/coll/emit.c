/* emit.c - what an algorithm node holds, written through the node encoder
 * (lib/trace/encode.h), and all-or-nothing rank sets; see emit.h. */
#include "emit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A node attribute named by a string literal: with its length a
 * constant, the encoder's checks and copies fold away. */
#define ATTR(fn, p, lit, v) fn(p, ENC_IN_NODE, lit, sizeof lit - 1, v)

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

/* The attributes of node i, written at p; returns the end. */
static uint8_t *node_attrs(uint8_t *p, const coll_dag *d, uint32_t i, const coll_place *pl, uint64_t bytes,
                           uint64_t ns) {
  int k = d->kind[i];
  if (k == COLL_SEND || k == COLL_RECV) {
    int send = k == COLL_SEND;
    int32_t peer = d->peer[i];
    if (pl->peer_map) peer = (int32_t)pl->peer_map[peer];
    /* the tag as a 64-bit varint: with a base, it may pass int32's range */
    uint64_t tag = (uint64_t)((int64_t)d->tag[i] + pl->tag_base);
    if (pl->style == COLL_STYLE_COMPAT) {
      p = ATTR(enc_attr_i64, p, "comm_type", send ? 5 : 6);
      p = ATTR(enc_attr_i64, p, "comm_size", (int64_t)bytes);
      p = send ? ATTR(enc_attr_i32, p, "comm_dst", peer) : ATTR(enc_attr_i32, p, "comm_src", peer);
      return enc_attr_varint(p, ENC_IN_NODE, "comm_tag", 8, ENC_INT32, tag);
    }
    if (pl->self >= 0) p = send ? ATTR(enc_attr_i32, p, "comm_src", pl->self) : ATTR(enc_attr_i32, p, "comm_dst", pl->self);
    p = send ? ATTR(enc_attr_i32, p, "comm_dst", peer) : ATTR(enc_attr_i32, p, "comm_src", peer);
    p = ATTR(enc_attr_i64, p, "comm_size", (int64_t)bytes);
    return enc_attr_varint(p, ENC_IN_NODE, "comm_tag", 8, ENC_INT32, tag);
  }
  if (pl->style == COLL_STYLE_COMPAT) return p;
  p = ATTR(enc_attr_u64, p, "duration_ns", ns);
  p = ATTR(enc_attr_i64, p, "num_ops", (int64_t)(bytes / 4)); /* fp32 elements */
  return ATTR(enc_attr_u64, p, "tensor_size", bytes * (k == COLL_COPY ? 2 : 3));
}

static uint64_t dep_id(const coll_place *pl, uint32_t j) { return pl->id_base + (pl->id_of ? pl->id_of[j] : j); }

void coll_encode_node(enc_buf *out, const coll_dag *d, uint32_t i, const coll_place *pl) {
  int k = d->kind[i];
  int msg = k == COLL_SEND || k == COLL_RECV;
  uint64_t bytes = scaled(d->bytes[i], pl), ns = scaled(d->dur_ns[i], pl);
  uint32_t nd = coll_dag_ndeps(d, i);
  const uint32_t *dv = nd ? d->deps + d->dep_off[i] : NULL; /* a DAG without edges has no deps array */
  size_t n_extra = nd == 0 ? pl->n_root_deps : 0;
  size_t pfx = pl->name_prefix ? strlen(pl->name_prefix) : 0;
  size_t pgl = msg && pl->pg_name ? strlen(pl->pg_name) : 0;
  /* One reservation per node: id, name, type, deps, duration, at most six
   * integer attributes with names of at most 16 bytes, pg_name. */
  size_t worst = ENC_VARINT_MAX + 3 * ENC_FIELD_MAX(0) + ENC_FIELD_MAX(64 + pfx) +
                 ENC_FIELD_MAX(10 * (nd + n_extra)) + 6 * ENC_ATTR_MAX(16, 10) + ENC_ATTR_MAX(7, pgl) +
                 ENC_FRAME_GROWTH;
  uint8_t *at = enc_room(out, worst);
  if (!at) return;
  uint8_t *p = enc_frame_open(at);
  p = enc_node_id(p, dep_id(pl, i));
  char name[96 + 64];
  char *nm = pfx + 64 <= sizeof name - 32 ? name : malloc(pfx + 96);
  size_t nl = nm ? node_name(nm, d, i, pl) : 0;
  p = enc_node_name(p, nm, nl);
  if (nm != name) free(nm);
  p = enc_node_type(p, k == COLL_SEND ? 5 : k == COLL_RECV ? 6 : 4);
  if (nd + n_extra) {
    size_t depbytes = 0;
    for (uint32_t j = 0; j < nd; j++) depbytes += enc_vlen(dep_id(pl, dv[j]));
    for (size_t j = 0; j < n_extra; j++) depbytes += enc_vlen(pl->root_deps[j]);
    p = enc_node_deps_head(p, ENC_DATA_DEPS, depbytes);
    for (uint32_t j = 0; j < nd; j++) p = enc_varint(p, dep_id(pl, dv[j]));
    for (size_t j = 0; j < n_extra; j++) p = enc_varint(p, pl->root_deps[j]);
  }
  p = enc_node_duration(p, ns / 1000);
  p = node_attrs(p, d, i, pl, bytes, ns);
  if (msg && pl->pg_name) p = enc_attr_str(p, ENC_IN_NODE, "pg_name", 7, pl->pg_name, pgl);
  enc_done(out, enc_frame_close(at, p));
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

static size_t meta_str_len(const coll_meta *m, size_t j) { return m->a[j].len ? m->a[j].len : strlen(m->a[j].s); }

void coll_encode_meta(enc_buf *out, const coll_meta *m) {
  size_t vl = m->version ? strlen(m->version) : 0, worst = ENC_VARINT_MAX + ENC_FIELD_MAX(vl) + ENC_FRAME_GROWTH;
  for (size_t j = 0; j < m->n; j++)
    worst += ENC_ATTR_MAX(strlen(m->a[j].name), m->a[j].kind == COLL_META_STR ? meta_str_len(m, j) : 10);
  uint8_t *at = enc_room(out, worst);
  if (!at) return;
  uint8_t *p = enc_meta_version(enc_frame_open(at), m->version, vl);
  for (size_t j = 0; j < m->n; j++) {
    const char *name = m->a[j].name;
    if (m->a[j].kind == COLL_META_STR)
      p = enc_attr_str(p, ENC_IN_META, name, strlen(name), m->a[j].s, meta_str_len(m, j));
    else
      p = enc_attr_i64(p, ENC_IN_META, name, strlen(name), m->a[j].i);
  }
  enc_done(out, enc_frame_close(at, p));
}

/* ---- rank sets --------------------------------------------------------- */

/* A rank set is the workload writer: its puts of different ranks may run
 * on several threads, and coll_set_fill hands ranks out to them. */
struct coll_set {
  chakra_workload_writer *w;
};

/* prefix, or paths when prefix is NULL. */
static int set_open(coll_set **out, const char *prefix, const char *const *paths, uint32_t n,
                    const chakra_workload_options *wo, chakra_error *err) {
  *out = NULL;
  coll_set *s = calloc(1, sizeof *s);
  if (!s) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  int rc = prefix ? chakra_workload_writer_open(&s->w, prefix, n, wo, err)
                  : chakra_workload_writer_open_paths(&s->w, paths, n, wo, err);
  if (rc) {
    free(s);
    return rc;
  }
  *out = s;
  return 0;
}

int coll_set_open(coll_set **out, const char *prefix, uint32_t ranks, const chakra_workload_options *wo,
                  chakra_error *err) {
  return set_open(out, prefix, NULL, ranks, wo, err);
}

int coll_set_open_paths(coll_set **out, const char *const *paths, uint32_t n, const chakra_workload_options *wo,
                        chakra_error *err) {
  return set_open(out, NULL, paths, n, wo, err);
}

/* The buffer holds framed messages; the writer checks (and bounds) each
 * message's size. */
int coll_set_write(coll_set *s, uint32_t r, const enc_buf *buf, chakra_error *err) {
  if (buf->oom)
    return chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory encoding rank %u",
                            chakra_workload_writer_path(s->w, r), r);
  return chakra_workload_writer_put_framed(s->w, r, buf->p, buf->n, err);
}

int coll_set_write_dag(coll_set *s, uint32_t r, enc_buf *buf, const coll_meta *m, const coll_dag *d,
                       const coll_place *pl, chakra_error *err) {
  buf->n = 0;
  coll_encode_meta(buf, m);
  for (uint32_t i = 0; i < d->n; i++) coll_encode_node(buf, d, i, pl);
  return coll_set_write(s, r, buf, err);
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
