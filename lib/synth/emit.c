/* emit.c - encoding of stage nodes and per-rank stamping; see emit.h.
 *
 * Field numbers are those of et_def.proto (Node: id 1, name 2, type 3,
 * ctrl_deps 4, data_deps 5, duration_micros 7, attr 10; AttributeProto: name
 * 1, int32_val 7, int64_val 9, uint64_val 13, bool_val 27, string_val 29,
 * string_list 30). */
#include "emit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra/build.h"
#include "chakra/set.h"

typedef struct buf {
  uint8_t *p;
  size_t n, cap;
  int failed;
} buf;

static int buf_room(buf *b, size_t n) {
  if (b->n + n <= b->cap) return 1;
  size_t cap = b->cap ? b->cap * 2 : 4096;
  while (cap < b->n + n) cap *= 2;
  uint8_t *p = realloc(b->p, cap);
  if (!p) {
    b->failed = 1;
    return 0;
  }
  b->p = p, b->cap = cap;
  return 1;
}

static size_t varint(uint64_t v, uint8_t *o) {
  size_t i = 0;
  while (v >= 0x80) o[i++] = (uint8_t)(v | 0x80), v >>= 7;
  o[i++] = (uint8_t)v;
  return i;
}

static void put_varint(buf *b, uint64_t v) {
  if (buf_room(b, 10)) b->n += varint(v, b->p + b->n);
}

static void put_bytes(buf *b, const void *d, size_t n) {
  if (n && buf_room(b, n)) memcpy(b->p + b->n, d, n), b->n += n;
}

static void put_key(buf *b, unsigned field, unsigned wire) { put_varint(b, (uint64_t)field << 3 | wire); }

static void put_lenfield(buf *b, unsigned field, const void *d, size_t n) {
  put_key(b, field, 2);
  put_varint(b, n);
  put_bytes(b, d, n);
}

/* A node under construction: its bytes go to s->cur, the hole is noted. */
typedef struct node_rec {
  size_t off, len;   /* in s->bytes */
  uint32_t hole_at;  /* offset of the hole within the node */
  uint8_t hole;
  int32_t hole_arg;
} node_rec;

struct emit_stage {
  buf bytes, cur, attr;
  node_rec *nodes;
  size_t n, cap;
  node_rec pending;
  int failed;
};

emit_stage *emit_stage_new(void) { return calloc(1, sizeof(emit_stage)); }

void emit_stage_free(emit_stage *s) {
  if (!s) return;
  free(s->bytes.p), free(s->cur.p), free(s->attr.p), free(s->nodes);
  free(s);
}

uint64_t emit_stage_nodes(const emit_stage *s) { return s->n; }
int emit_stage_failed(const emit_stage *s) {
  return s->failed || s->bytes.failed || s->cur.failed || s->attr.failed;
}

void emit_node_begin(emit_stage *s, uint64_t id, const char *name, const char *suffix, int type) {
  s->cur.n = 0;
  memset(&s->pending, 0, sizeof s->pending);
  put_key(&s->cur, 1, 0), put_varint(&s->cur, id);
  size_t a = strlen(name), b = suffix ? strlen(suffix) : 0;
  put_key(&s->cur, 2, 2), put_varint(&s->cur, a + b);
  put_bytes(&s->cur, name, a), put_bytes(&s->cur, suffix, b);
  put_key(&s->cur, 3, 0), put_varint(&s->cur, (uint64_t)type);
}

static void put_packed(buf *b, unsigned field, const uint64_t *v, size_t n) {
  if (!n) return;
  uint8_t tmp[10];
  size_t len = 0;
  for (size_t i = 0; i < n; i++) len += varint(v[i], tmp);
  put_key(b, field, 2), put_varint(b, len);
  for (size_t i = 0; i < n; i++) put_varint(b, v[i]);
}

void emit_node_deps(emit_stage *s, const uint64_t *ctrl, size_t nctrl, const uint64_t *data, size_t ndata) {
  put_packed(&s->cur, 4, ctrl, nctrl);
  put_packed(&s->cur, 5, data, ndata);
}

void emit_node_duration(emit_stage *s, uint64_t micros) {
  if (micros) put_key(&s->cur, 7, 0), put_varint(&s->cur, micros);
}

/* Attributes are built in s->attr, then framed into the node. */
static void attr_begin(emit_stage *s, const char *name) {
  s->attr.n = 0;
  put_lenfield(&s->attr, 1, name, strlen(name));
}
static void attr_end(emit_stage *s) {
  put_lenfield(&s->cur, 10, s->attr.p, s->attr.n);
  if (s->attr.failed) s->failed = 1;
}

void emit_attr_i64(emit_stage *s, const char *name, int64_t v) {
  attr_begin(s, name), put_key(&s->attr, 9, 0), put_varint(&s->attr, (uint64_t)v), attr_end(s);
}
void emit_attr_u64(emit_stage *s, const char *name, uint64_t v) {
  attr_begin(s, name), put_key(&s->attr, 13, 0), put_varint(&s->attr, v), attr_end(s);
}
void emit_attr_i32(emit_stage *s, const char *name, int32_t v) {
  attr_begin(s, name), put_key(&s->attr, 7, 0), put_varint(&s->attr, (uint64_t)(int64_t)v), attr_end(s);
}
void emit_attr_bool(emit_stage *s, const char *name, int v) {
  attr_begin(s, name), put_key(&s->attr, 27, 0), put_varint(&s->attr, v ? 1 : 0), attr_end(s);
}
void emit_attr_str(emit_stage *s, const char *name, const char *v) {
  attr_begin(s, name), put_lenfield(&s->attr, 29, v, strlen(v)), attr_end(s);
}
void emit_attr_empty(emit_stage *s, const char *name) { attr_begin(s, name), attr_end(s); }

void emit_attr_strlist(emit_stage *s, const char *name, const char *const *v, size_t n) {
  size_t len = 0;
  uint8_t tmp[10];
  for (size_t i = 0; i < n; i++) {
    size_t l = strlen(v[i]);
    len += 1 + varint(l, tmp) + l;
  }
  attr_begin(s, name);
  put_key(&s->attr, 30, 2), put_varint(&s->attr, len);
  for (size_t i = 0; i < n; i++) put_lenfield(&s->attr, 1, v[i], strlen(v[i]));
  attr_end(s);
}

void emit_attr_hole(emit_stage *s, int kind, int arg) {
  s->pending.hole = (uint8_t)kind;
  s->pending.hole_arg = arg;
  s->pending.hole_at = (uint32_t)s->cur.n;
}

void emit_node_end(emit_stage *s) {
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 1024;
    node_rec *p = realloc(s->nodes, cap * sizeof *p);
    if (!p) {
      s->failed = 1;
      return;
    }
    s->nodes = p, s->cap = cap;
  }
  node_rec r = s->pending;
  r.off = s->bytes.n;
  r.len = s->cur.n;
  put_bytes(&s->bytes, s->cur.p, s->cur.n);
  s->nodes[s->n++] = r;
}

/* The hole's bytes for one rank: a whole attribute field. */
static size_t hole_bytes(const node_rec *r, uint32_t rank, const emit_rank_fn *fn, uint8_t *out) {
  uint8_t attr[64];
  size_t n = 0;
  char digits[16];
  if (r->hole == EMIT_HOLE_PG) {
    int dl = snprintf(digits, sizeof digits, "%u", fn->group(fn->ctx, rank, r->hole_arg));
    attr[n++] = 0x0a, attr[n++] = 7, memcpy(attr + n, "pg_name", 7), n += 7;
    attr[n++] = 0xea, attr[n++] = 0x01, attr[n++] = (uint8_t)dl;
    memcpy(attr + n, digits, (size_t)dl), n += (size_t)dl;
  } else {
    uint32_t peer = fn->peer(fn->ctx, rank, (uint32_t)r->hole_arg);
    attr[n++] = 0x0a, attr[n++] = 8;
    memcpy(attr + n, r->hole == EMIT_HOLE_DST ? "comm_dst" : "comm_src", 8), n += 8;
    attr[n++] = 7 << 3;
    n += varint(peer, attr + n);
  }
  size_t k = 0;
  out[k++] = 10 << 3 | 2;
  out[k++] = (uint8_t)n;
  memcpy(out + k, attr, n);
  return k + n;
}

/* One rank's messages, framed, into out: its metadata, then each stage
 * node with the hole filled in for this rank. */
static void stamp_rank(buf *out, const emit_stage *s, const buf *meta, uint32_t rank, const emit_rank_fn *fn) {
  uint8_t hole[96];
  out->n = 0;
  put_varint(out, meta->n);
  put_bytes(out, meta->p, meta->n);
  for (size_t i = 0; i < s->n && !out->failed; i++) {
    const node_rec *r = &s->nodes[i];
    size_t hl = r->hole ? hole_bytes(r, rank, fn, hole) : 0;
    size_t total = r->len + hl;
    const uint8_t *src = s->bytes.p + r->off;
    size_t at = r->hole ? r->hole_at : r->len;
    put_varint(out, total);
    if (!buf_room(out, total)) break;
    memcpy(out->p + out->n, src, at);
    memcpy(out->p + out->n + at, hole, hl);
    memcpy(out->p + out->n + at + hl, src + at, r->len - at);
    out->n += total;
  }
}

/* Ranks are stamped and written on worker threads, each with its own
 * buffer; the bytes of a rank do not depend on which thread made it. */
typedef struct wjob {
  emit_stage *const *stages;
  const buf *meta;
  const emit_rank_fn *fn;
  const uint32_t *ranks;
  buf *scratch;     /* one per worker */
  uint64_t *bytes;  /* per written rank */
} wjob;

static int write_rank(void *ctx, unsigned worker, uint32_t slot, chakra_workload_writer *w, chakra_error *err) {
  wjob *j = ctx;
  buf *out = &j->scratch[worker];
  uint32_t rank = j->ranks[slot];
  stamp_rank(out, j->stages[j->fn->stage_of(j->fn->ctx, rank)], j->meta, rank, j->fn);
  if (out->failed) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  j->bytes[slot] = out->n;
  return chakra_workload_writer_put_framed(w, slot, out->p, out->n, err);
}

static void encode_meta(buf *b, const emit_meta *m) {
  if (m->version) put_lenfield(b, 1, m->version, strlen(m->version));
  if (m->schema) {
    buf a = {0};
    put_lenfield(&a, 1, "schema", 6);
    put_lenfield(&a, 29, m->schema, strlen(m->schema));
    put_lenfield(b, 2, a.p, a.n);
    if (a.failed) b->failed = 1;
    free(a.p);
  }
}

/* The writer for ranks[0..n): named files, since the list may be a
 * subset of the workload's ranks; the shared form names them by class
 * (the i-th rank is class i's representative). */
static int open_writer(chakra_workload_writer **w, const char *prefix, const uint32_t *ranks, size_t n, int shared,
                       chakra_error *err) {
  *w = NULL;
  if (n > UINT32_MAX) return chakra_error_set(err, CHAKRA_EINVAL, "%s: too many ranks", prefix);
  char **paths = calloc(n ? n : 1, sizeof *paths);
  int rc = paths ? 0 : chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (size_t i = 0; !rc && i < n; i++)
    if (!(paths[i] = shared ? chakra_class_path_dup(prefix, (uint32_t)i) : chakra_rank_path_dup(prefix, ranks[i])))
      rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  if (!rc) rc = chakra_workload_writer_open_paths(w, (const char *const *)paths, (uint32_t)n, NULL, err);
  for (size_t i = 0; paths && i < n; i++) free(paths[i]);
  free(paths);
  return rc;
}

int emit_write_ranks(const char *prefix, int shared, emit_stage *const *stages, const emit_meta *meta,
                     const emit_rank_fn *fn, const uint32_t *ranks, size_t n, unsigned threads, uint64_t *bytes,
                     chakra_error *err) {
  buf m = {0};
  encode_meta(&m, meta);
  if (m.failed) return free(m.p), chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  *bytes = 0;
  chakra_workload_writer *w;
  int rc = open_writer(&w, prefix, ranks, n, shared, err);
  if (rc) return free(m.p), rc;
  unsigned workers = threads ? threads : CHAKRA_WORKLOAD_AUTO_THREADS; /* put_ranks' worker indices */
  wjob j = {stages, &m, fn, ranks, calloc(workers, sizeof(buf)), calloc(n, sizeof(uint64_t))};
  if (!j.scratch || !j.bytes) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  if (!rc) rc = chakra_workload_writer_put_ranks(w, threads, write_rank, &j, err);
  for (size_t i = 0; !rc && i < n; i++) *bytes += j.bytes[i];
  for (unsigned t = 0; j.scratch && t < workers; t++) free(j.scratch[t].p);
  free(j.scratch), free(j.bytes), free(m.p);
  if (rc) {
    chakra_workload_writer_discard(w);
    return rc;
  }
  /* all or none: the writer renames every rank into place, or none */
  return chakra_workload_writer_commit(w, err);
}
