/* emit.c - what a stage node holds, written through the node encoder
 * (lib/trace/encode.h), and per-rank stamping; see emit.h. */
#include "emit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../trace/encode.h"
#include "chakra/build.h"
#include "../util/vec.h"
#include "chakra/set.h"

/* A node of the stage: its bytes in s->bytes (unframed), the hole noted. */
typedef struct node_rec {
  size_t off, len;   /* in s->bytes */
  uint32_t hole_at;  /* offset of the hole within the node */
  uint8_t hole;
  int32_t hole_arg;
} node_rec;

struct emit_stage {
  enc_buf bytes;
  node_rec *nodes;
  size_t n, cap;
  node_rec pending;
  int failed;
};

emit_stage *emit_stage_new(void) { return calloc(1, sizeof(emit_stage)); }

void emit_stage_free(emit_stage *s) {
  if (!s) return;
  enc_buf_free(&s->bytes);
  free(s->nodes);
  free(s);
}

uint64_t emit_stage_nodes(const emit_stage *s) { return s->n; }
int emit_stage_failed(const emit_stage *s) { return s->failed || s->bytes.oom; }

/* Room for one field group of the node being written; NULL after a failure. */
static uint8_t *room(emit_stage *s, size_t k) { return enc_room(&s->bytes, k); }

void emit_node_begin(emit_stage *s, uint64_t id, const char *name, const char *suffix, int type) {
  memset(&s->pending, 0, sizeof s->pending);
  s->pending.off = s->bytes.n;
  size_t a = strlen(name), b = suffix ? strlen(suffix) : 0;
  uint8_t *p = room(s, 2 * ENC_FIELD_MAX(0) + ENC_FIELD_MAX(a + b));
  if (!p) return;
  p = enc_node_id_always(p, id);
  p = enc_node_name2(p, name, a, suffix, b);
  enc_done(&s->bytes, enc_node_type(p, type));
}

void emit_node_deps(emit_stage *s, const uint64_t *ctrl, size_t nctrl, const uint64_t *data, size_t ndata) {
  uint8_t *p = room(s, ENC_FIELD_MAX(10 * nctrl) + ENC_FIELD_MAX(10 * ndata));
  if (!p) return;
  p = enc_node_deps(p, ENC_CTRL_DEPS, ctrl, nctrl);
  enc_done(&s->bytes, enc_node_deps(p, ENC_DATA_DEPS, data, ndata));
}

void emit_node_duration(emit_stage *s, uint64_t micros) {
  uint8_t *p = room(s, ENC_FIELD_MAX(0));
  if (p) enc_done(&s->bytes, enc_node_duration(p, micros));
}

/* An integer attribute under key (encode.h's ENC_INT64 ...). */
static void attr_varint(emit_stage *s, const char *name, unsigned key, uint64_t v) {
  size_t nl = strlen(name);
  uint8_t *p = room(s, ENC_ATTR_MAX(nl, 10));
  if (p) enc_done(&s->bytes, enc_attr_varint(p, ENC_IN_NODE, name, nl, key, v));
}

void emit_attr_i64(emit_stage *s, const char *name, int64_t v) { attr_varint(s, name, ENC_INT64, (uint64_t)v); }
void emit_attr_u64(emit_stage *s, const char *name, uint64_t v) { attr_varint(s, name, ENC_UINT64, v); }
void emit_attr_i32(emit_stage *s, const char *name, int32_t v) {
  attr_varint(s, name, ENC_INT32, (uint64_t)(int64_t)v);
}
void emit_attr_bool(emit_stage *s, const char *name, int v) { attr_varint(s, name, ENC_BOOL, v ? 1 : 0); }

void emit_attr_str(emit_stage *s, const char *name, const char *v) {
  size_t nl = strlen(name), vl = strlen(v);
  uint8_t *p = room(s, ENC_ATTR_MAX(nl, vl));
  if (p) enc_done(&s->bytes, enc_attr_str(p, ENC_IN_NODE, name, nl, v, vl));
}

void emit_attr_empty(emit_stage *s, const char *name) {
  size_t nl = strlen(name);
  uint8_t *p = room(s, ENC_ATTR_MAX(nl, 0));
  if (p) enc_done(&s->bytes, enc_attr_empty(p, ENC_IN_NODE, name, nl));
}

void emit_attr_strlist(emit_stage *s, const char *name, const char *const *v, size_t n) {
  size_t nl = strlen(name), payload = enc_strlist_payload(v, n);
  uint8_t *p = room(s, ENC_ATTR_MAX(nl, payload + 12));
  if (p) enc_done(&s->bytes, enc_attr_strlist(p, ENC_IN_NODE, name, nl, v, n, payload));
}

void emit_attr_hole(emit_stage *s, int kind, int arg) {
  s->pending.hole = (uint8_t)kind;
  s->pending.hole_arg = arg;
  s->pending.hole_at = (uint32_t)(s->bytes.n - s->pending.off);
}

void emit_node_end(emit_stage *s) {
  if (VEC_ROOM(s->nodes, s->n, s->cap, 1)) {
    s->failed = 1;
    return;
  }
  node_rec r = s->pending;
  r.len = s->bytes.n - r.off;
  s->nodes[s->n++] = r;
}

/* The hole's bytes for one rank: a whole attribute field (at most 64). */
static size_t hole_bytes(const node_rec *r, uint32_t rank, const emit_rank_fn *fn, uint8_t *out) {
  if (r->hole == EMIT_HOLE_PG) {
    char digits[16];
    int dl = snprintf(digits, sizeof digits, "%u", fn->group(fn->ctx, rank, r->hole_arg));
    return (size_t)(enc_attr_str(out, ENC_IN_NODE, "pg_name", 7, digits, (size_t)dl) - out);
  }
  uint32_t peer = fn->peer(fn->ctx, rank, (uint32_t)r->hole_arg);
  const char *name = r->hole == EMIT_HOLE_DST ? "comm_dst" : "comm_src";
  return (size_t)(enc_attr_i32(out, ENC_IN_NODE, name, 8, (int32_t)peer) - out);
}

/* One rank's messages, framed, into out: its metadata, then each stage
 * node with the hole filled in for this rank. */
static void stamp_rank(enc_buf *out, const emit_stage *s, const enc_buf *meta, uint32_t rank,
                       const emit_rank_fn *fn) {
  uint8_t hole[ENC_ATTR_MAX(8, 16)];
  out->n = 0;
  enc_append_framed(out, meta->p, meta->n);
  for (size_t i = 0; i < s->n; i++) {
    const node_rec *r = &s->nodes[i];
    size_t hl = r->hole ? hole_bytes(r, rank, fn, hole) : 0;
    size_t total = r->len + hl;
    const uint8_t *src = s->bytes.p + r->off;
    size_t at = r->hole ? r->hole_at : r->len;
    uint8_t *p = enc_room(out, ENC_VARINT_MAX + total);
    if (!p) return;
    p = enc_varint(p, total);
    memcpy(p, src, at);
    memcpy(p + at, hole, hl);
    memcpy(p + at + hl, src + at, r->len - at);
    enc_done(out, p + total);
  }
}

/* Ranks are stamped and written on worker threads, each with its own
 * buffer; the bytes of a rank do not depend on which thread made it. */
typedef struct wjob {
  emit_stage *const *stages;
  const enc_buf *meta;
  const emit_rank_fn *fn;
  const uint32_t *ranks;
  enc_buf *scratch; /* one per worker */
  uint64_t *bytes;  /* per written rank */
} wjob;

static int write_rank(void *ctx, unsigned worker, uint32_t slot, chakra_workload_writer *w, chakra_error *err) {
  wjob *j = ctx;
  enc_buf *out = &j->scratch[worker];
  uint32_t rank = j->ranks[slot];
  stamp_rank(out, j->stages[j->fn->stage_of(j->fn->ctx, rank)], j->meta, rank, j->fn);
  if (out->oom) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  j->bytes[slot] = out->n;
  return chakra_workload_writer_put_framed(w, slot, out->p, out->n, err);
}

/* The GlobalMetadata's bytes, unframed. */
static void encode_meta(enc_buf *b, const emit_meta *m) {
  size_t vl = m->version ? strlen(m->version) : 0, sl = m->schema ? strlen(m->schema) : 0;
  uint8_t *p = enc_room(b, ENC_FIELD_MAX(vl) + ENC_ATTR_MAX(6, sl));
  if (!p) return;
  p = enc_meta_version(p, m->version, vl);
  if (m->schema) p = enc_attr_str(p, ENC_IN_META, "schema", 6, m->schema, sl);
  enc_done(b, p);
}

/* The writer for ranks[0..n): named files, since the list may be a
 * subset of the workload's ranks; the shared form names them by class
 * (the i-th rank is class i's representative). */
static int open_writer(chakra_workload_writer **w, const char *prefix, const uint32_t *ranks, size_t n, int shared,
                       const chakra_workload_options *wo, chakra_error *err) {
  *w = NULL;
  if (n > UINT32_MAX) return chakra_error_set(err, CHAKRA_EINVAL, "%s: too many ranks", prefix);
  char **paths = calloc(n ? n : 1, sizeof *paths);
  int rc = paths ? 0 : chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (size_t i = 0; !rc && i < n; i++)
    if (!(paths[i] = shared ? chakra_class_path_dup(prefix, (uint32_t)i) : chakra_rank_path_dup(prefix, ranks[i])))
      rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  if (!rc) rc = chakra_workload_writer_open_paths(w, (const char *const *)paths, (uint32_t)n, wo, err);
  for (size_t i = 0; paths && i < n; i++) free(paths[i]);
  free(paths);
  return rc;
}

int emit_write_ranks(const char *prefix, int shared, const chakra_workload_options *wo, emit_stage *const *stages,
                     const emit_meta *meta, const emit_rank_fn *fn, const uint32_t *ranks, size_t n, unsigned threads, uint64_t *bytes,
                     chakra_error *err) {
  enc_buf m = {0};
  encode_meta(&m, meta);
  if (m.oom) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  *bytes = 0;
  chakra_workload_writer *w;
  int rc = open_writer(&w, prefix, ranks, n, shared, wo, err);
  if (rc) return free(m.p), rc;
  unsigned workers = threads ? threads : CHAKRA_WORKLOAD_AUTO_THREADS; /* put_ranks' worker indices */
  wjob j = {stages, &m, fn, ranks, calloc(workers, sizeof(enc_buf)), calloc(n, sizeof(uint64_t))};
  if (!j.scratch || !j.bytes) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  if (!rc) rc = chakra_workload_writer_put_ranks(w, threads, write_rank, &j, err);
  for (size_t i = 0; !rc && i < n; i++) *bytes += j.bytes[i];
  for (unsigned t = 0; j.scratch && t < workers; t++) enc_buf_free(&j.scratch[t]);
  free(j.scratch), free(j.bytes), enc_buf_free(&m);
  if (rc) {
    chakra_workload_writer_discard(w);
    return rc;
  }
  /* all or none: the writer renames every rank into place, or none */
  return chakra_workload_writer_commit(w, err);
}
