/* eventq.h - the simulator's clock: one global queue of timed events, plus
 * ASTRA-sim's per-NPU batching (private).
 *
 * Events with equal time run in the order they were scheduled. Work an NPU
 * registers for time t through eventq_npu_after() is appended to that NPU's
 * batch for t; only the first registration for (NPU, t) queues a global
 * event, and when it fires the whole batch runs in registration order,
 * including work appended while it runs. The reference breaks ties this
 * way, and congested links see messages in exactly that order. */
#ifndef CHAKRA_SIM_EVENTQ_H
#define CHAKRA_SIM_EVENTQ_H

#include <stddef.h>
#include <math.h>
#include <stdint.h>

struct sim;
typedef void (*sim_fn)(struct sim *s, void *obj, uint64_t arg);

/* Events live in one FIFO array per distinct time: a small heap orders the
 * times, a hash finds a time's array. In symmetric collectives thousands of
 * events share a time; keeping them contiguous keeps the loop in cache. */
typedef struct sim_event {
  sim_fn fn;
  void *obj;
  uint64_t arg;
} sim_event;

typedef struct time_bucket {
  uint64_t time;
  sim_event *ev;        /* kept across reuse of the bucket */
  uint32_t n, cap, pos; /* events, capacity, next to run */
  uint32_t next_free;   /* free list of buckets (index + 1) */
} time_bucket;

typedef struct batch_cb {
  sim_fn fn;
  void *obj;
  uint64_t arg;
  uint32_t next;
} batch_cb;

/* One NPU's pending work for one time. The first callback is stored inline
 * (most batches hold one); later ones go to the shared pool. */
typedef struct npu_batch {
  uint64_t time;
  sim_fn fn;            /* first callback; NULL once it has been taken */
  void *obj;
  uint64_t arg;
  uint32_t head, tail;  /* further callbacks, in the pool */
} npu_batch;

#define NPU_BATCH_INLINE 2

typedef struct npu_batches {
  npu_batch *v;         /* points at `small` until more are pending */
  uint32_t n, cap;
  npu_batch small[NPU_BATCH_INLINE];
} npu_batches;

typedef struct eventq {
  time_bucket *buckets; /* pool of time arrays */
  uint32_t b_n, b_cap, b_free;
  uint32_t *heap;       /* bucket indexes ordered by time */
  uint32_t heap_n, heap_cap;
  uint32_t *hash;       /* time -> bucket index + 1 (0 = empty) */
  size_t hash_mask, hash_used;
  uint64_t now, fired;
  uint64_t unit;        /* numbers each piece of work: an event, a batched callback (symmetry.h) */
  uint64_t cache_time[4];   /* recently used times ... */
  uint32_t cache_bucket[4]; /* ... and their buckets + 1 (0 = none) */
  batch_cb *pool;       /* batched callbacks; index 0 unused (= end of list) */
  uint32_t pool_n, pool_cap, pool_free;
  npu_batches *npus;    /* per NPU */
  uint32_t n_npus;
  int oom;              /* set to stop the loop: an allocation failed, an error was
                           recorded or the caller asked to stop (the run says which) */
  uint64_t overflow;    /* nonzero: a delay that would pass 2^64 ns (this one) was asked for */
} eventq;

/* now + delay, the time of every event scheduled relative to now. Simulated
 * time must not wrap silently (a latency of 1e20 ns, two computes of 2^63
 * us): a sum past 2^64 - 1 ns records the delay and stops the loop, and the
 * run reports it. */
static inline uint64_t eventq_later(eventq *q, uint64_t delay) {
  uint64_t t = q->now + delay;
  if (t < q->now || delay == UINT64_MAX) { /* UINT64_MAX: a saturated delay (net.c) */
    q->overflow = delay ? delay : 1;
    q->oom = 1;
    return UINT64_MAX;
  }
  return t;
}

/* A delay in whole ns from a double: past 2^64 - 1 it saturates (and
 * eventq_later then stops the run with an error instead of wrapping). */
static inline uint64_t eventq_ns(double x) {
  x = floor(x);
  if (!(x < 18446744073709551615.0)) return x > 0 ? UINT64_MAX : 0;
  return x > 0 ? (uint64_t)x : 0;
}

int eventq_init(eventq *q, uint32_t npus);
void eventq_free(eventq *q);
/* Schedules fn(obj, arg) as a global event at absolute time t (>= now). */
void eventq_at_slow(eventq *q, uint64_t t, sim_fn fn, void *obj, uint64_t arg);
static inline void eventq_at(eventq *q, uint64_t t, sim_fn fn, void *obj, uint64_t arg) {
  /* Most events go to a recently used time with room left: append inline. */
  unsigned c = (unsigned)(t & 3);
  if (q->cache_bucket[c] && q->cache_time[c] == t) {
    time_bucket *bk = &q->buckets[q->cache_bucket[c] - 1];
    if (bk->n < bk->cap) {
      bk->ev[bk->n++] = (sim_event){fn, obj, arg};
      return;
    }
  }
  eventq_at_slow(q, t, fn, obj, arg);
}
/* Schedules fn on npu's batch for now + delay. */
void eventq_npu_after_slow(eventq *q, uint32_t npu, uint64_t delay, sim_fn fn, void *obj, uint64_t arg);
/* Runs a batch (the global event of its first registration). */
void eventq_batch_fire(struct sim *s, void *obj, uint64_t t);
static inline void eventq_npu_after(eventq *q, uint32_t npu, uint64_t delay, sim_fn fn, void *obj, uint64_t arg) {
  npu_batches *b = &q->npus[npu];
  if (b->n == 0) { /* nothing pending at this NPU (the usual case): open a batch */
    uint64_t t = eventq_later(q, delay);
    b->v[0] = (npu_batch){t, fn, obj, arg, 0, 0};
    b->n = 1;
    eventq_at(q, t, eventq_batch_fire, b, t);
    return;
  }
  eventq_npu_after_slow(q, npu, delay, fn, obj, arg);
}
/* Runs events until the queue is empty; s is passed to every callback.
 * progress (may be NULL) is called about every 2^20 events. */
void eventq_run(eventq *q, struct sim *s, void (*progress)(struct sim *s));

#endif
