/* wlwriter.c - one ET per rank, all or none, few descriptors; see
 * include/chakra/build.h.
 *
 * Each rank's messages collect in a memory buffer. A buffer leaves memory
 * when it reaches CHUNK bytes, when all buffers together pass the budget,
 * or at commit; it is then appended to the rank's temporary file
 * (util/outfile). At most max_open temporaries are open: opening another
 * parks the one used least recently (closed, reopened in append mode at
 * its next write). Nothing has a final name until every rank is complete. */
#include <stdlib.h>
#include <string.h>

#include "../util/outfile.h"
#include "buildint.h"
#include "chakra/build.h"

#define CHUNK (1u << 20)
#define DEFAULT_OPEN 8
#define DEFAULT_BUDGET (64u << 20)

typedef struct rankf {
  outfile *f;       /* NULL until the first byte leaves memory */
  uint8_t *buf;
  size_t len, cap;
  uint64_t msgs;    /* messages put */
  uint64_t used;    /* last use, for parking the least recent */
} rankf;

struct chakra_workload_writer {
  uint32_t n;
  char **paths;
  rankf *r;
  uint32_t *open;   /* ranks whose file holds a descriptor */
  unsigned n_open, max_open;
  size_t budget, buffered;
  uint64_t clock;
  int failed;
};

static int fail(chakra_workload_writer *w, int rc) {
  if (rc) w->failed = 1;
  return rc;
}

static int alloc_writer(chakra_workload_writer **out, uint32_t n, const chakra_workload_options *opt,
                        chakra_error *err) {
  *out = NULL;
  if (n == 0) return chakra_error_set(err, CHAKRA_EINVAL, "a workload needs at least one rank");
  chakra_workload_writer *w = calloc(1, sizeof *w);
  if (!w) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  w->n = n;
  w->max_open = opt && opt->max_open ? opt->max_open : DEFAULT_OPEN;
  w->budget = opt && opt->buffer_bytes ? opt->buffer_bytes : DEFAULT_BUDGET;
  w->paths = calloc(n, sizeof *w->paths);
  w->r = calloc(n, sizeof *w->r);
  w->open = calloc(w->max_open, sizeof *w->open);
  if (!w->paths || !w->r || !w->open) {
    chakra_workload_writer_discard(w);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  *out = w;
  return 0;
}

int chakra_workload_writer_open(chakra_workload_writer **out, const char *prefix, uint32_t nranks,
                                const chakra_workload_options *opt, chakra_error *err) {
  int rc = alloc_writer(out, nranks, opt, err);
  for (uint32_t i = 0; i < nranks && !rc; i++)
    if (!((*out)->paths[i] = chakra_rank_path_dup(prefix, i))) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  if (rc && *out) {
    chakra_workload_writer_discard(*out);
    *out = NULL;
  }
  return rc;
}

int chakra_workload_writer_open_paths(chakra_workload_writer **out, const char *const *paths, uint32_t n,
                                      const chakra_workload_options *opt, chakra_error *err) {
  int rc = alloc_writer(out, n, opt, err);
  for (uint32_t i = 0; i < n && !rc; i++)
    if (!((*out)->paths[i] = strdup(paths[i]))) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  if (rc && *out) {
    chakra_workload_writer_discard(*out);
    *out = NULL;
  }
  return rc;
}

const char *chakra_workload_writer_path(const chakra_workload_writer *w, uint32_t rank) {
  return rank < w->n ? w->paths[rank] : NULL;
}

/* Gives rank a file with a descriptor, parking the least recently used
 * open one when max_open are open. */
static int make_open(chakra_workload_writer *w, uint32_t rank, chakra_error *err) {
  rankf *x = &w->r[rank];
  x->used = ++w->clock;
  if (x->f && outfile_is_open(x->f)) return 0;
  if (w->n_open == w->max_open) {
    unsigned lru = 0;
    for (unsigned k = 1; k < w->n_open; k++)
      if (w->r[w->open[k]].used < w->r[w->open[lru]].used) lru = k;
    rankf *old = &w->r[w->open[lru]];
    int rc = outfile_park(old->f, err);
    if (rc) return rc;
    if (!outfile_is_open(old->f)) {
      if (!old->len) { /* a parked rank with nothing pending gives its buffer back too */
        free(old->buf);
        old->buf = NULL;
        old->cap = 0;
      }
      w->open[lru] = w->open[--w->n_open];
    }
  }
  if (!x->f) {
    const char *p = w->paths[rank];
    int rc = outfile_open(&x->f, p, outfile_name_is_gzip(p), err);
    if (rc) return rc;
  }
  /* a parked file reopens at its next write; count it as open now */
  if (w->n_open < w->max_open) w->open[w->n_open++] = rank;
  return 0;
}

/* Writes rank's buffer, then data[0..len), to its file. */
static int spill(chakra_workload_writer *w, uint32_t rank, const void *data, size_t len, chakra_error *err) {
  rankf *x = &w->r[rank];
  int rc = make_open(w, rank, err);
  if (!rc && x->len) rc = outfile_write(x->f, x->buf, x->len, err);
  if (!rc && len) rc = outfile_write(x->f, data, len, err);
  w->buffered -= x->len;
  x->len = 0;
  return rc;
}

static int spill_all(chakra_workload_writer *w, chakra_error *err) {
  int rc = 0;
  for (uint32_t i = 0; i < w->n && !rc; i++)
    if (w->r[i].len) rc = spill(w, i, NULL, 0, err);
  return rc;
}

static uint8_t *room(rankf *x, size_t n) {
  if (x->cap - x->len < n) {
    size_t cap = x->cap ? x->cap : 4096;
    while (cap - x->len < n) cap *= 2;
    uint8_t *p = realloc(x->buf, cap);
    if (!p) return NULL;
    x->buf = p;
    x->cap = cap;
  }
  return x->buf + x->len;
}

/* After bytes were added to rank's buffer: send out what is due. */
static int settle(chakra_workload_writer *w, uint32_t rank, size_t added, chakra_error *err) {
  w->buffered += added;
  if (w->r[rank].len >= CHUNK) return spill(w, rank, NULL, 0, err);
  return w->buffered > w->budget ? spill_all(w, err) : 0;
}

static int check(chakra_workload_writer *w, uint32_t rank, chakra_error *err) {
  if (w->failed) return chakra_error_set(err, CHAKRA_EINVAL, "the workload writer failed earlier");
  if (rank >= w->n)
    return fail(w, chakra_error_set(err, CHAKRA_EINVAL, "rank %u is outside the workload's %u ranks", rank, w->n));
  return 0;
}

static int too_large(chakra_workload_writer *w, uint32_t rank, size_t len, chakra_error *err) {
  return fail(w, chakra_error_set(err, CHAKRA_EINVAL, "%s: message %llu of %zu bytes exceeds the limit of %u",
                                  w->paths[rank], (unsigned long long)w->r[rank].msgs, len,
                                  CHAKRA_DEFAULT_MAX_MESSAGE));
}

int chakra_workload_writer_put(chakra_workload_writer *w, uint32_t rank, const ProtobufCMessage *msg,
                               chakra_error *err) {
  int rc = check(w, rank, err);
  if (rc) return rc;
  rankf *x = &w->r[rank];
  const ProtobufCMessageDescriptor *want =
      x->msgs ? &chakra_proto_msg__node__descriptor : &chakra_proto_msg__global_metadata__descriptor;
  if (msg->descriptor != want)
    return fail(w, chakra_error_set(err, CHAKRA_EINVAL, "%s: message %llu must be a %s", w->paths[rank],
                                    (unsigned long long)x->msgs, x->msgs ? "Node" : "GlobalMetadata"));
  size_t len = protobuf_c_message_get_packed_size(msg);
  if (len > CHAKRA_DEFAULT_MAX_MESSAGE) return too_large(w, rank, len, err);
  uint8_t *p = room(x, len + 10);
  if (!p) return fail(w, chakra_error_set(err, CHAKRA_ENOMEM, "out of memory"));
  size_t k = chakra_varint_encode(len, p);
  protobuf_c_message_pack(msg, p + k);
  x->len += k + len;
  x->msgs++;
  return fail(w, settle(w, rank, k + len, err));
}

/* Adds framed bytes to rank's file: a large block with nothing buffered
 * before it goes out without a copy. */
static int add_framed(chakra_workload_writer *w, uint32_t rank, const void *data, size_t len, chakra_error *err) {
  rankf *x = &w->r[rank];
  if (len >= CHUNK) return spill(w, rank, data, len, err);
  uint8_t *p = room(x, len);
  if (!p) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  memcpy(p, data, len);
  x->len += len;
  return settle(w, rank, len, err);
}

int chakra_workload_writer_put_raw(chakra_workload_writer *w, uint32_t rank, const uint8_t *data, size_t len,
                                   chakra_error *err) {
  int rc = check(w, rank, err);
  if (rc) return rc;
  if (len > CHAKRA_DEFAULT_MAX_MESSAGE) return too_large(w, rank, len, err);
  uint8_t pre[10];
  size_t k = chakra_varint_encode(len, pre);
  rc = add_framed(w, rank, pre, k, err);
  if (!rc) rc = add_framed(w, rank, data, len, err);
  w->r[rank].msgs++;
  return fail(w, rc);
}

int chakra_workload_writer_put_built(chakra_workload_writer *w, uint32_t rank, chakra_builder *b,
                                     chakra_error *err) {
  int rc = check(w, rank, err);
  if (rc) return rc;
  size_t len;
  const uint8_t *p = chakra_builder_bytes(b, &len);
  if (!chakra_builder_count(b)) return 0;
  if (!w->r[rank].msgs && !builder_first_is_meta(b))
    return fail(w, chakra_error_set(err, CHAKRA_EINVAL, "%s: the first message must be a GlobalMetadata",
                                    w->paths[rank]));
  rc = add_framed(w, rank, p, len, err);
  w->r[rank].msgs += chakra_builder_count(b);
  return fail(w, rc);
}

static void free_writer(chakra_workload_writer *w) {
  for (uint32_t i = 0; i < w->n; i++) {
    if (w->paths) free(w->paths[i]);
    if (w->r) free(w->r[i].buf);
  }
  free(w->paths);
  free(w->r);
  free(w->open);
  free(w);
}

int chakra_workload_writer_commit(chakra_workload_writer *w, chakra_error *err) {
  int rc = w->failed ? chakra_error_set(err, CHAKRA_EINVAL, "the workload writer failed earlier") : 0;
  for (uint32_t i = 0; i < w->n && !rc; i++)
    if (!w->r[i].msgs)
      rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: rank %u has no messages (expected at least its GlobalMetadata)",
                            w->paths[i], i);
  if (!rc) rc = spill_all(w, err);
  if (rc) {
    chakra_workload_writer_discard(w);
    return rc;
  }
  outfile **v = malloc(w->n * sizeof *v);
  if (!v) {
    chakra_workload_writer_discard(w);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  for (uint32_t i = 0; i < w->n; i++) {
    v[i] = w->r[i].f;
    w->r[i].f = NULL;
  }
  rc = outfile_commit_all(v, w->n, err);
  free(v);
  free_writer(w);
  return rc;
}

void chakra_workload_writer_discard(chakra_workload_writer *w) {
  if (!w) return;
  for (uint32_t i = 0; w->r && i < w->n; i++) outfile_discard(w->r[i].f);
  free_writer(w);
}
