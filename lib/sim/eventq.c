/* eventq.c - see eventq.h. A binary heap ordered by (time, seq). */
#include "eventq.h"

#include "../util/ipool.h"
#include "../util/vec.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

int eventq_init(eventq *q, uint32_t npus) {
  memset(q, 0, sizeof *q);
  q->npus = calloc(npus ? npus : 1, sizeof *q->npus);
  q->n_npus = npus;
  for (uint32_t i = 0; q->npus && i < npus; i++) {
    q->npus[i].v = q->npus[i].small;
    q->npus[i].cap = NPU_BATCH_INLINE;
  }
  q->pool_n = 1;
  q->hash = calloc(64, sizeof *q->hash);
  q->hash_mask = 63;
  return q->npus && q->hash ? 0 : -1;
}

void eventq_free(eventq *q) {
  for (uint32_t i = 0; i < q->n_npus; i++)
    if (q->npus[i].v != q->npus[i].small) free(q->npus[i].v);
  free(q->npus);
  for (uint32_t b = 0; b < q->b_n; b++) free(q->buckets[b].ev);
  free(q->buckets);
  free(q->heap);
  free(q->hash);
  free(q->pool);
  memset(q, 0, sizeof *q);
}

static inline size_t time_hash(uint64_t t) {
  t ^= t >> 31;
  t *= 0x9e3779b97f4a7c15ull;
  return (size_t)(t >> 17);
}

/* Finds the hash slot of time t (holding it, or empty). */
static size_t hash_slot(const eventq *q, uint64_t t) {
  size_t h = time_hash(t) & q->hash_mask;
  while (q->hash[h] && q->buckets[q->hash[h] - 1].time != t) h = (h + 1) & q->hash_mask;
  return h;
}

static int hash_grow(eventq *q) {
  size_t ncap = (q->hash_mask + 1) * 2;
  uint32_t *nh = calloc(ncap, sizeof *nh);
  if (!nh) return -1;
  for (size_t i = 0; i <= q->hash_mask; i++) {
    if (!q->hash[i]) continue;
    size_t h = time_hash(q->buckets[q->hash[i] - 1].time) & (ncap - 1);
    while (nh[h]) h = (h + 1) & (ncap - 1);
    nh[h] = q->hash[i];
  }
  free(q->hash);
  q->hash = nh;
  q->hash_mask = ncap - 1;
  return 0;
}

static void hash_remove(eventq *q, uint64_t t) {
  size_t i = hash_slot(q, t);
  q->hash[i] = 0;
  q->hash_used--;
  for (size_t j = (i + 1) & q->hash_mask; q->hash[j]; j = (j + 1) & q->hash_mask) {
    size_t home = time_hash(q->buckets[q->hash[j] - 1].time) & q->hash_mask;
    if (((j - home) & q->hash_mask) >= ((j - i) & q->hash_mask)) {
      q->hash[i] = q->hash[j];
      q->hash[j] = 0;
      i = j;
    }
  }
}

static void heap_up(eventq *q, uint32_t i) {
  uint32_t b = q->heap[i];
  uint64_t t = q->buckets[b].time;
  while (i > 0) {
    uint32_t p = (i - 1) / 2;
    if (q->buckets[q->heap[p]].time <= t) break;
    q->heap[i] = q->heap[p];
    i = p;
  }
  q->heap[i] = b;
}

static void heap_pop_top(eventq *q) {
  uint32_t last = q->heap[--q->heap_n], i = 0, n = q->heap_n;
  uint64_t t = q->buckets[last].time;
  for (;;) {
    uint32_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && q->buckets[q->heap[c + 1]].time < q->buckets[q->heap[c]].time) c++;
    if (q->buckets[q->heap[c]].time >= t) break;
    q->heap[i] = q->heap[c];
    i = c;
  }
  if (n) q->heap[i] = last;
}

static uint32_t bucket_lookup(eventq *q, uint64_t t);

/* The bucket for time t, created (and put in the heap) if needed. */
static uint32_t bucket_for(eventq *q, uint64_t t) {
  unsigned c = (unsigned)(t & 3);
  if (q->cache_bucket[c] && q->cache_time[c] == t) return q->cache_bucket[c] - 1;
  uint32_t b = bucket_lookup(q, t);
  if (b != UINT32_MAX) {
    q->cache_time[c] = t;
    q->cache_bucket[c] = b + 1;
  }
  return b;
}

static uint32_t bucket_lookup(eventq *q, uint64_t t) {
  if ((q->hash_used + 1) * 2 > q->hash_mask + 1 && hash_grow(q)) return UINT32_MAX;
  size_t h = hash_slot(q, t);
  if (q->hash[h]) return q->hash[h] - 1;
  uint32_t b;
  if (q->b_free) {
    b = q->b_free - 1;
    q->b_free = q->buckets[b].next_free;
  } else {
    if (VEC_ROOM(q->buckets, q->b_n, q->b_cap, 1)) return UINT32_MAX;
    b = q->b_n++;
    q->buckets[b].ev = NULL;
    q->buckets[b].cap = 0;
  }
  if (VEC_ROOM(q->heap, q->heap_n, q->heap_cap, 1)) return UINT32_MAX;
  q->buckets[b].time = t;
  q->buckets[b].n = q->buckets[b].pos = 0;
  q->hash[h] = b + 1;
  q->hash_used++;
  q->heap[q->heap_n] = b;
  heap_up(q, q->heap_n++);
  return b;
}

void eventq_at_slow(eventq *q, uint64_t t, sim_fn fn, void *obj, uint64_t arg) {
  uint32_t b = bucket_for(q, t);
  if (b == UINT32_MAX) {
    q->oom = 1;
    return;
  }
  time_bucket *bk = &q->buckets[b];
  if (VEC_ROOM(bk->ev, bk->n, bk->cap, 1)) {
    q->oom = 1;
    return;
  }
  bk->ev[bk->n++] = (sim_event){fn, obj, arg};
}

static uint32_t cb_alloc(eventq *q) {
  uint32_t i = ipool_take(&q->pool, &q->pool_n, &q->pool_cap, &q->pool_free, sizeof *q->pool, offsetof(batch_cb, next));
  if (!i) q->oom = 1;
  return i;
}

static int batches_grow(eventq *q, npu_batches *b) {
  uint32_t nc = b->cap * 2;
  npu_batch *v = b->v == b->small ? malloc(nc * sizeof *v) : realloc(b->v, nc * sizeof *v);
  if (!v) {
    q->oom = 1;
    return -1;
  }
  if (b->v == b->small) memcpy(v, b->small, sizeof b->small);
  b->v = v;
  b->cap = nc;
  return 0;
}

void eventq_npu_after_slow(eventq *q, uint32_t npu, uint64_t delay, sim_fn fn, void *obj, uint64_t arg) {
  uint64_t t = eventq_later(q, delay);
  npu_batches *b = &q->npus[npu];
  uint32_t k = 0;
  while (k < b->n && b->v[k].time != t) k++;
  if (k < b->n) { /* join the batch: after everything already in it */
    npu_batch *e = &b->v[k];
    uint32_t c = cb_alloc(q);
    if (!c) return;
    q->pool[c] = (batch_cb){fn, obj, arg, 0};
    if (e->tail) q->pool[e->tail].next = c;
    else e->head = c;
    e->tail = c;
    return;
  }
  if (b->n == b->cap && batches_grow(q, b)) return;
  b->v[b->n++] = (npu_batch){t, fn, obj, arg, 0, 0};
  /* The queue holds a pointer to this NPU's batch list; the batch is found
   * again by time when it fires (the array may move meanwhile). */
  eventq_at(q, t, eventq_batch_fire, b, t);
}

/* The queue itself is the first member of struct sim (see core.h). */
void eventq_batch_fire(struct sim *s, void *obj, uint64_t t) {
  eventq *q = (eventq *)s;
  npu_batches *b = obj;
  /* Callbacks may append batches (and move the array) but only this
   * function removes one, so the index found once stays valid. */
  uint32_t k = 0;
  while (k < b->n && b->v[k].time != t) k++;
  if (k == b->n) return;
  for (;;) {
    npu_batch *e = &b->v[k];
    batch_cb cb;
    if (e->fn) {
      cb = (batch_cb){e->fn, e->obj, e->arg, 0};
      e->fn = NULL;
    } else if (e->head) {
      uint32_t c = e->head;
      cb = q->pool[c];
      e->head = cb.next;
      if (!cb.next) e->tail = 0;
      q->pool[c].next = q->pool_free;
      q->pool_free = c;
    } else {
      if (k != --b->n) b->v[k] = b->v[b->n];
      return;
    }
    q->unit++;
    cb.fn(s, cb.obj, cb.arg);
  }
}

void eventq_run(eventq *q, struct sim *s, void (*progress)(struct sim *s)) {
  while (q->heap_n && !q->oom) {
    uint32_t b = q->heap[0];
    time_bucket *bk = &q->buckets[b];
    q->now = bk->time;
    if (bk->pos == bk->n) { /* drained: the time is over */
      if (q->cache_bucket[bk->time & 3] == b + 1) q->cache_bucket[bk->time & 3] = 0;
      hash_remove(q, bk->time);
      heap_pop_top(q);
      bk->next_free = q->b_free;
      q->b_free = b + 1;
      continue;
    }
    /* The next events' objects are far apart in memory (one per NPU,
     * stream or message): fetching them while this one runs hides the
     * misses. A stale pointer is harmless to a prefetch. */
    if (bk->pos + 4 < bk->n) __builtin_prefetch(bk->ev[bk->pos + 4].obj);
    /* A batch's object is an NPU's list, fetched two events ago: its first
     * callback's object is the one that misses next. */
    if (bk->pos + 2 < bk->n) {
      const sim_event *e = &bk->ev[bk->pos + 2];
      if (e->fn == eventq_batch_fire) {
        const npu_batches *nb = e->obj;
        if (nb->n) __builtin_prefetch(nb->v[0].obj);
      } else {
        __builtin_prefetch(e->obj);
      }
    }
    /* Copy first: the callback may append to this bucket and move it. */
    sim_event ev = bk->ev[bk->pos++];
    q->fired++;
    q->unit++;
    ev.fn(s, ev.obj, ev.arg);
    if (progress && (q->fired & ((1u << 20) - 1)) == 0) progress(s);
  }
}
