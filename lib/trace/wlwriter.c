/* wlwriter.c - one ET per rank, all or none, few descriptors, ranks from
 * several threads; see include/chakra/build.h.
 *
 * Each rank's messages collect in a memory buffer. A buffer leaves memory
 * when it reaches CHUNK bytes, when all buffers together pass the budget,
 * when the rank is flushed, or at commit; it is then appended to the
 * rank's temporary file (util/outfile). At most max_open temporaries hold
 * a descriptor: taking another parks the one used least recently (closed,
 * reopened in append mode at its next write). Nothing has a final name
 * until every rank is complete.
 *
 * Threads: a rank belongs to whoever holds its lock (its producer for the
 * length of one call, or a thread writing idle buffers out when the budget
 * is passed, which only try-locks and skips busy ranks). The descriptor
 * slots, the use clock and the failure record are under the writer's lock;
 * a rank being written is pinned so that nobody parks its file meanwhile,
 * and a thread that finds every slot pinned waits for one. The bytes of a
 * rank depend only on the order of its own puts, never on the threads. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../util/outfile.h"
#include "../util/tasks.h"
#include "buildint.h"
#include "chakra/build.h"
#include "encode.h"

#define CHUNK (1u << 20)
#define DIRECT (16u << 10) /* a block this large, with nothing buffered before it, is written without a copy */
#define DEFAULT_OPEN 8
#define DEFAULT_BUDGET (64u << 20)
#define MAX_THREADS 64

typedef struct rankf {
  pthread_mutex_t mu; /* held while the rank is added to or written out */
  outfile *f;         /* NULL until the first byte leaves memory */
  enc_buf b;          /* framed messages not yet written out */
  uint64_t msgs;      /* messages put */
  int stopped;        /* a put was refused because another rank had failed */
  /* under the writer's lock: */
  uint64_t used;      /* last use, for parking the least recent */
  int slot;           /* counted among the open descriptors */
  int pinned;         /* being written: not to be parked */
} rankf;

struct chakra_workload_writer {
  uint32_t n;
  char **paths;            /* the files, or the sinks' names */
  chakra_sink *sinks;      /* or NULL: files */
  rankf *r;
  size_t budget;
  atomic_size_t buffered;
  atomic_int failed;
  pthread_mutex_t mu;      /* the fields below */
  pthread_cond_t slot_free;
  uint32_t *open;          /* ranks holding a slot (n entries: files that cannot park may exceed the cap) */
  unsigned n_open, max_open;
  uint64_t clock;
  int64_t fail_rank;       /* the failure reported: first-hand, lowest rank (-1 = none) */
  chakra_error fail_err;
  chakra_progress_fn progress; /* put_ranks' ranks made, under pmu */
  void *progress_ctx;
  uint32_t made;
  pthread_mutex_t pmu;
};

static void free_writer(chakra_workload_writer *w) {
  for (uint32_t i = 0; i < w->n; i++) {
    free(w->paths[i]);
    enc_buf_free(&w->r[i].b);
    pthread_mutex_destroy(&w->r[i].mu);
  }
  free(w->paths);
  free(w->sinks);
  free(w->r);
  free(w->open);
  pthread_mutex_destroy(&w->mu);
  pthread_mutex_destroy(&w->pmu);
  pthread_cond_destroy(&w->slot_free);
  free(w);
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
  w->fail_rank = -1;
  w->progress = opt ? opt->progress : NULL;
  w->progress_ctx = opt ? opt->progress_ctx : NULL;
  atomic_init(&w->buffered, 0);
  atomic_init(&w->failed, 0);
  pthread_mutex_init(&w->mu, NULL);
  pthread_mutex_init(&w->pmu, NULL);
  pthread_cond_init(&w->slot_free, NULL);
  w->paths = calloc(n, sizeof *w->paths);
  w->r = calloc(n, sizeof *w->r);
  w->open = calloc(n, sizeof *w->open);
  if (!w->paths || !w->r || !w->open) {
    w->n = 0; /* no rank was set up */
    free_writer(w);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  for (uint32_t i = 0; i < n; i++) pthread_mutex_init(&w->r[i].mu, NULL);
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

int chakra_workload_writer_open_sinks(chakra_workload_writer **out, const chakra_sink *sinks, uint32_t n,
                                      const chakra_workload_options *opt, chakra_error *err) {
  int rc = alloc_writer(out, n, opt, err);
  if (!rc && !((*out)->sinks = malloc(n * sizeof *sinks))) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  if (!rc) memcpy((*out)->sinks, sinks, n * sizeof *sinks);
  for (uint32_t i = 0; i < n && !rc; i++)
    if (!((*out)->paths[i] = strdup(chakra_sink_name(&sinks[i])))) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  if (rc && *out) {
    chakra_workload_writer_discard(*out);
    *out = NULL;
  }
  return rc;
}

const char *chakra_workload_writer_path(const chakra_workload_writer *w, uint32_t rank) {
  return rank < w->n ? w->paths[rank] : NULL;
}

/* Records a first-hand failure of rank (the lowest rank's is kept, so the
 * error reported does not depend on which thread failed first) and stops
 * the writer. Returns rc. */
static int record_failure(chakra_workload_writer *w, int64_t rank, int rc, const chakra_error *e) {
  pthread_mutex_lock(&w->mu);
  if (w->fail_rank < 0 || rank < w->fail_rank) {
    w->fail_rank = rank;
    w->fail_err = *e;
    w->fail_err.code = rc;
  }
  pthread_mutex_unlock(&w->mu);
  atomic_store(&w->failed, 1);
  return rc;
}

/* The failure of a public call: recorded, and copied to the caller. */
static int fail(chakra_workload_writer *w, int64_t rank, int rc, const chakra_error *e, chakra_error *err) {
  if (!rc) return 0;
  if (err) *err = *e;
  return record_failure(w, rank, rc, e);
}

/* ---- descriptor slots ---------------------------------------------------- */

/* Under w->mu: parks the least recently used unpinned file that can close.
 * Returns 1 when a slot was freed, 0 when none could be, or a status. */
static int park_lru(chakra_workload_writer *w, chakra_error *e) {
  int best = -1;
  for (unsigned k = 0; k < w->n_open; k++) {
    const rankf *x = &w->r[w->open[k]];
    if (!x->pinned && outfile_can_park(x->f) && (best < 0 || x->used < w->r[w->open[best]].used)) best = (int)k;
  }
  if (best < 0) return 0;
  rankf *old = &w->r[w->open[best]];
  int rc = outfile_park(old->f, e);
  if (rc) return rc;
  old->slot = 0;
  w->open[best] = w->open[--w->n_open];
  return 1;
}

/* Under w->mu: rank no longer holds a slot. */
static void drop_slot(chakra_workload_writer *w, uint32_t rank) {
  for (unsigned k = 0; k < w->n_open; k++)
    if (w->open[k] == rank) {
      w->open[k] = w->open[--w->n_open];
      break;
    }
  w->r[rank].slot = 0;
}

/* Under w->mu: 1 if a slot holder is being written (and will let go). */
static int any_pinned(const chakra_workload_writer *w) {
  for (unsigned k = 0; k < w->n_open; k++)
    if (w->r[w->open[k]].pinned) return 1;
  return 0;
}

/* Gives rank (whose lock the caller holds) a file with a descriptor slot
 * and pins it. The file is created outside the writer's lock (creating is
 * the slow part; the slot is already counted). */
static int acquire(chakra_workload_writer *w, uint32_t rank, chakra_error *e) {
  rankf *x = &w->r[rank];
  int rc = 0;
  pthread_mutex_lock(&w->mu);
  x->used = ++w->clock;
  while (!x->slot && w->n_open >= w->max_open) {
    rc = park_lru(w, e);
    if (rc) break;
    if (!any_pinned(w)) break; /* only files that cannot close: go beyond the cap, as they must */
    pthread_cond_wait(&w->slot_free, &w->mu);
  }
  if (rc > 0) rc = 0;
  if (!rc) {
    if (!x->slot) w->open[w->n_open++] = rank;
    x->slot = 1;
    x->pinned = 1;
  }
  pthread_mutex_unlock(&w->mu);
  if (rc || x->f) return rc;
  const char *p = w->paths[rank];
  rc = w->sinks ? outfile_open_sink(&x->f, &w->sinks[rank], e) : outfile_open(&x->f, p, outfile_name_is_gzip(p), e);
  if (rc) { /* no file after all: the slot goes back */
    pthread_mutex_lock(&w->mu);
    drop_slot(w, rank);
    x->pinned = 0;
    pthread_cond_broadcast(&w->slot_free);
    pthread_mutex_unlock(&w->mu);
  }
  return rc;
}

/* Unpins rank's file; close: park it too (its descriptor goes back). */
static int release(chakra_workload_writer *w, uint32_t rank, int close, chakra_error *e) {
  rankf *x = &w->r[rank];
  int rc = close ? outfile_park(x->f, e) : 0; /* pinned: nobody else touches x->f */
  pthread_mutex_lock(&w->mu);
  x->pinned = 0;
  if (close && !rc && !outfile_is_open(x->f) && x->slot) drop_slot(w, rank);
  pthread_cond_broadcast(&w->slot_free);
  pthread_mutex_unlock(&w->mu);
  return rc;
}

/* ---- buffers --------------------------------------------------------------- */

/* Writes rank's buffer, then data[0..len), to its file (the caller holds
 * the rank's lock); close: the file gives its descriptor back after. */
static int spill(chakra_workload_writer *w, uint32_t rank, const void *data, size_t len, int close,
                 chakra_error *e) {
  rankf *x = &w->r[rank];
  int rc = acquire(w, rank, e);
  if (rc) return rc;
  if (x->b.n) rc = outfile_write(x->f, x->b.p, x->b.n, e);
  if (!rc && len) rc = outfile_write(x->f, data, len, e);
  int rc2 = release(w, rank, close, e);
  atomic_fetch_sub(&w->buffered, x->b.n);
  x->b.n = 0;
  return rc ? rc : rc2;
}

/* Passed the budget: writes out the buffers of ranks nobody is using
 * until half the budget is left (so that the next few puts do not scan
 * again), giving their memory back (they are idle: it may be long until
 * their next message). */
static int spill_idle(chakra_workload_writer *w, uint32_t self, chakra_error *e) {
  int rc = 0;
  for (uint32_t i = 0; i < w->n && !rc && atomic_load(&w->buffered) > w->budget / 2; i++) {
    rankf *x = &w->r[i];
    if (i == self || pthread_mutex_trylock(&x->mu) != 0) continue;
    if (x->b.n) rc = spill(w, i, NULL, 0, 0, e);
    if (!rc) enc_buf_free(&x->b);
    pthread_mutex_unlock(&x->mu);
  }
  return rc;
}

/* After bytes were added to rank's buffer: send out what is due. */
static int settle(chakra_workload_writer *w, uint32_t rank, size_t added, chakra_error *e) {
  size_t total = atomic_fetch_add(&w->buffered, added) + added;
  if (w->r[rank].b.n >= CHUNK) return spill(w, rank, NULL, 0, 0, e);
  if (total <= w->budget) return 0;
  int rc = spill(w, rank, NULL, 0, 0, e);
  return rc ? rc : spill_idle(w, rank, e);
}

/* Adds framed bytes to rank's file: a large block with nothing buffered
 * before it goes out without a copy. */
static int add_framed(chakra_workload_writer *w, uint32_t rank, const void *data, size_t len, chakra_error *e) {
  rankf *x = &w->r[rank];
  if (len >= DIRECT && !x->b.n) return spill(w, rank, data, len, 0, e);
  enc_append(&x->b, data, len);
  if (x->b.oom) return chakra_error_set(e, CHAKRA_ENOMEM, "%s: out of memory", w->paths[rank]);
  return settle(w, rank, len, e);
}

/* ---- puts ------------------------------------------------------------------- */

/* Refuses a rank outside the workload, or any put after a failure. */
static int check(chakra_workload_writer *w, uint32_t rank, chakra_error *e) {
  if (rank >= w->n)
    return chakra_error_set(e, CHAKRA_EINVAL, "rank %u is outside the workload's %u ranks", rank, w->n);
  if (atomic_load(&w->failed)) return CHAKRA_ECANCELED;
  return 0;
}

/* Entering and leaving a put: the rank's lock; a refusal after another
 * failure is told apart from a failure of this put. */
static int enter(chakra_workload_writer *w, uint32_t rank, chakra_error *e, chakra_error *err) {
  int rc = check(w, rank, e);
  if (rc == CHAKRA_ECANCELED) {
    w->r[rank].stopped = 1;
    return chakra_error_set(err, CHAKRA_ECANCELED, "%s: the workload writer failed earlier", w->paths[rank]);
  }
  if (rc) return fail(w, -1, rc, e, err);
  pthread_mutex_lock(&w->r[rank].mu);
  return 0;
}

static int leave(chakra_workload_writer *w, uint32_t rank, int rc, const chakra_error *e, chakra_error *err) {
  pthread_mutex_unlock(&w->r[rank].mu);
  return fail(w, rank, rc, e, err);
}

static int too_large(chakra_workload_writer *w, uint32_t rank, uint64_t msg, size_t len, chakra_error *e) {
  return chakra_error_set(e, CHAKRA_EINVAL, "%s: message %llu of %zu bytes exceeds the limit of %u", w->paths[rank],
                          (unsigned long long)msg, len, CHAKRA_DEFAULT_MAX_MESSAGE);
}

int chakra_workload_writer_put(chakra_workload_writer *w, uint32_t rank, const ProtobufCMessage *msg,
                               chakra_error *err) {
  chakra_error e = {0};
  int rc = enter(w, rank, &e, err);
  if (rc) return rc;
  rankf *x = &w->r[rank];
  const ProtobufCMessageDescriptor *want =
      x->msgs ? &chakra_proto_msg__node__descriptor : &chakra_proto_msg__global_metadata__descriptor;
  if (msg->descriptor != want)
    rc = chakra_error_set(&e, CHAKRA_EINVAL, "%s: message %llu must be a %s", w->paths[rank],
                          (unsigned long long)x->msgs, x->msgs ? "Node" : "GlobalMetadata");
  size_t before = x->b.n, len = rc ? 0 : enc_message(&x->b, msg); /* encoded in place, taken back if refused */
  if (!rc && x->b.oom) rc = chakra_error_set(&e, CHAKRA_ENOMEM, "%s: out of memory", w->paths[rank]);
  if (!rc && len > CHAKRA_DEFAULT_MAX_MESSAGE) rc = too_large(w, rank, x->msgs, len, &e);
  if (rc) {
    x->b.n = before;
  } else {
    x->msgs++;
    rc = settle(w, rank, x->b.n - before, &e);
  }
  return leave(w, rank, rc, &e, err);
}

int chakra_workload_writer_put_raw(chakra_workload_writer *w, uint32_t rank, const uint8_t *data, size_t len,
                                   chakra_error *err) {
  chakra_error e = {0};
  int rc = enter(w, rank, &e, err);
  if (rc) return rc;
  if (len > CHAKRA_DEFAULT_MAX_MESSAGE) rc = too_large(w, rank, w->r[rank].msgs, len, &e);
  uint8_t pre[10];
  size_t k = chakra_varint_encode(len, pre);
  if (!rc) rc = add_framed(w, rank, pre, k, &e);
  if (!rc) rc = add_framed(w, rank, data, len, &e);
  if (!rc) w->r[rank].msgs++;
  return leave(w, rank, rc, &e, err);
}

/* Counts the messages of framed bytes, checking each frame; 0 when the
 * bytes are a whole number of messages no larger than the limit. */
static int count_frames(chakra_workload_writer *w, uint32_t rank, const uint8_t *p, size_t len, uint64_t *count,
                        chakra_error *e) {
  uint64_t n = 0, first = w->r[rank].msgs;
  size_t off = 0;
  while (off < len) {
    uint64_t v = 0;
    int shift = 0, done = 0;
    while (off < len && shift < 64 && !done) {
      uint8_t c = p[off++];
      v |= (uint64_t)(c & 0x7f) << shift;
      shift += 7;
      done = c < 0x80;
    }
    if (!done || v > len - off)
      return chakra_error_set(e, CHAKRA_EINVAL, "%s: message %llu is cut short (bad framing)", w->paths[rank],
                              (unsigned long long)(first + n));
    if (v > CHAKRA_DEFAULT_MAX_MESSAGE) return too_large(w, rank, first + n, (size_t)v, e);
    off += (size_t)v;
    n++;
  }
  *count = n;
  return 0;
}

int chakra_workload_writer_put_framed(chakra_workload_writer *w, uint32_t rank, const uint8_t *data, size_t len,
                                      chakra_error *err) {
  chakra_error e = {0};
  int rc = enter(w, rank, &e, err);
  if (rc) return rc;
  uint64_t n = 0;
  rc = count_frames(w, rank, data, len, &n, &e);
  if (!rc && len) rc = add_framed(w, rank, data, len, &e);
  if (!rc) w->r[rank].msgs += n;
  return leave(w, rank, rc, &e, err);
}

int chakra_workload_writer_put_built(chakra_workload_writer *w, uint32_t rank, chakra_builder *b,
                                     chakra_error *err) {
  chakra_error e = {0};
  int rc = enter(w, rank, &e, err);
  if (rc) return rc;
  size_t len;
  const uint8_t *p = chakra_builder_bytes(b, &len);
  if (chakra_builder_count(b)) {
    if (!w->r[rank].msgs && !builder_first_is_meta(b))
      rc = chakra_error_set(&e, CHAKRA_EINVAL, "%s: the first message must be a GlobalMetadata", w->paths[rank]);
    if (!rc) rc = add_framed(w, rank, p, len, &e);
    if (!rc) w->r[rank].msgs += chakra_builder_count(b);
  }
  return leave(w, rank, rc, &e, err);
}

int chakra_workload_writer_flush_rank(chakra_workload_writer *w, uint32_t rank, chakra_error *err) {
  chakra_error e = {0};
  int rc = enter(w, rank, &e, err);
  if (rc) return rc;
  rankf *x = &w->r[rank];
  pthread_mutex_lock(&w->mu); /* another thread may be parking the file */
  int open = x->slot;
  pthread_mutex_unlock(&w->mu);
  if (x->b.n || open) rc = spill(w, rank, NULL, 0, 1, &e);
  if (!rc) enc_buf_free(&x->b);
  return leave(w, rank, rc, &e, err);
}

/* ---- ranks on several threads -------------------------------------------- */

typedef struct fill {
  chakra_workload_writer *w;
  chakra_rank_writer_fn fn;
  void *ctx;
} fill;

/* One more rank made: told to the caller, one call at a time. */
static int report_made(chakra_workload_writer *w, chakra_error *e) {
  pthread_mutex_lock(&w->pmu);
  int stop = w->progress(w->progress_ctx, "ranks", ++w->made, w->n);
  pthread_mutex_unlock(&w->pmu);
  return stop ? chakra_error_set(e, CHAKRA_ECANCELED, "stopped by the progress callback") : 0;
}

static int fill_rank(void *ctx, unsigned worker, size_t job) {
  fill *f = ctx;
  chakra_workload_writer *w = f->w;
  uint32_t rank = (uint32_t)job;
  /* runs even when another rank failed meanwhile: a rank handed out before
   * that one must get the chance to report its own failure */
  chakra_error e = {0};
  int rc = f->fn(f->ctx, worker, rank, w, &e);
  if (!rc) rc = chakra_workload_writer_flush_rank(w, rank, &e);
  if (!rc && w->progress) rc = report_made(w, &e);
  /* a put refused because another rank failed is not this rank's failure */
  if (rc && !w->r[rank].stopped) record_failure(w, rank, rc, &e);
  return rc;
}

int chakra_workload_writer_put_ranks(chakra_workload_writer *w, unsigned threads, chakra_rank_writer_fn fn, void *ctx,
                                     chakra_error *err) {
  if (threads == 0) {
    threads = tasks_cpus();
    if (threads > CHAKRA_WORKLOAD_AUTO_THREADS) threads = CHAKRA_WORKLOAD_AUTO_THREADS;
  }
  if (threads > MAX_THREADS) threads = MAX_THREADS;
  if (atomic_load(&w->failed))
    return chakra_error_set(err, CHAKRA_ECANCELED, "the workload writer failed earlier");
  fill f = {w, fn, ctx};
  int rc = tasks_run_workers(w->n, threads, fill_rank, &f, TASKS_STOP_ON_ERROR);
  if (!rc && !atomic_load(&w->failed)) return 0;
  pthread_mutex_lock(&w->mu);
  if (err) *err = w->fail_err;
  rc = w->fail_rank >= 0 ? w->fail_err.code : rc;
  pthread_mutex_unlock(&w->mu);
  return rc ? rc : CHAKRA_ECANCELED;
}

/* ---- commit ----------------------------------------------------------------- */


/* Writes out every rank's buffer; the files keep their descriptors (few:
 * the slots still bound them) until commit_all closes them in turn. */
static int spill_all(chakra_workload_writer *w, chakra_error *e) {
  int rc = 0;
  for (uint32_t i = 0; i < w->n && !rc; i++)
    if (w->r[i].b.n) rc = spill(w, i, NULL, 0, 0, e);
  return rc;
}

int chakra_workload_writer_commit(chakra_workload_writer *w, chakra_error *err) {
  chakra_error e = {0};
  int rc = 0;
  if (atomic_load(&w->failed)) {
    e = w->fail_err;
    rc = w->fail_err.code ? w->fail_err.code : CHAKRA_EINVAL;
  }
  for (uint32_t i = 0; i < w->n && !rc; i++)
    if (!w->r[i].msgs)
      rc = chakra_error_set(&e, CHAKRA_EINVAL, "%s: rank %u has no messages (expected at least its GlobalMetadata)",
                            w->paths[i], i);
  if (!rc) rc = spill_all(w, &e);
  outfile **v = rc ? NULL : malloc(w->n * sizeof *v);
  if (!rc && !v) rc = chakra_error_set(&e, CHAKRA_ENOMEM, "out of memory");
  if (rc) {
    chakra_workload_writer_discard(w);
    if (err) *err = e;
    return rc;
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
  for (uint32_t i = 0; i < w->n; i++) outfile_discard(w->r[i].f);
  free_writer(w);
}
