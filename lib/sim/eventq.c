/* eventq.c - see eventq.h. A binary heap ordered by (time, seq). */
#include "eventq.h"

#include <stdlib.h>
#include <string.h>

int eventq_init(eventq *q, uint32_t npus) {
  memset(q, 0, sizeof *q);
  q->npus = calloc(npus ? npus : 1, sizeof *q->npus);
  q->n_npus = npus;
  q->pool_n = 1;
  return q->npus ? 0 : -1;
}

void eventq_free(eventq *q) {
  for (uint32_t i = 0; i < q->n_npus; i++) free(q->npus[i].v);
  free(q->npus);
  free(q->heap);
  free(q->pool);
  memset(q, 0, sizeof *q);
}

static inline int ev_less(const sim_event *a, const sim_event *b) {
  return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

void eventq_at(eventq *q, uint64_t t, sim_fn fn, void *obj, uint64_t arg) {
  if (q->n == q->cap) {
    size_t nc = q->cap ? q->cap * 2 : 1024;
    sim_event *h = realloc(q->heap, nc * sizeof *h);
    if (!h) {
      q->oom = 1;
      return;
    }
    q->heap = h;
    q->cap = nc;
  }
  sim_event e = {t, q->seq++, fn, obj, arg};
  size_t i = q->n++;
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (!ev_less(&e, &q->heap[p])) break;
    q->heap[i] = q->heap[p];
    i = p;
  }
  q->heap[i] = e;
}

static void ev_pop(eventq *q, sim_event *out) {
  *out = q->heap[0];
  sim_event last = q->heap[--q->n];
  size_t i = 0, n = q->n;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && ev_less(&q->heap[c + 1], &q->heap[c])) c++;
    if (!ev_less(&q->heap[c], &last)) break;
    q->heap[i] = q->heap[c];
    i = c;
  }
  if (n) q->heap[i] = last;
}

static uint32_t cb_alloc(eventq *q) {
  if (q->pool_free) {
    uint32_t i = q->pool_free;
    q->pool_free = q->pool[i].next;
    return i;
  }
  if (q->pool_n >= q->pool_cap) {
    uint32_t nc = q->pool_cap ? q->pool_cap * 2 : 1024;
    batch_cb *p = realloc(q->pool, nc * sizeof *p);
    if (!p) {
      q->oom = 1;
      return 0;
    }
    q->pool = p;
    q->pool_cap = nc;
  }
  return q->pool_n++;
}

static void batch_fire(struct sim *s, void *obj, uint64_t t);

void eventq_npu_after(eventq *q, uint32_t npu, uint64_t delay, sim_fn fn, void *obj, uint64_t arg) {
  uint64_t t = q->now + delay;
  npu_batches *b = &q->npus[npu];
  uint32_t k = 0;
  while (k < b->n && b->v[k].time != t) k++;
  uint32_t c = cb_alloc(q);
  if (!c) return;
  q->pool[c] = (batch_cb){fn, obj, arg, 0};
  if (k < b->n) {
    if (b->v[k].tail) q->pool[b->v[k].tail].next = c;
    else b->v[k].head = c;
    b->v[k].tail = c;
    return;
  }
  if (b->n == b->cap) {
    uint32_t nc = b->cap ? b->cap * 2 : 4;
    npu_batch *v = realloc(b->v, nc * sizeof *v);
    if (!v) {
      q->oom = 1;
      return;
    }
    b->v = v;
    b->cap = nc;
  }
  b->v[b->n++] = (npu_batch){t, c, c};
  /* The queue holds a pointer to this NPU's batch list; the batch is found
   * again by time when it fires (the array may move meanwhile). */
  eventq_at(q, t, batch_fire, b, t);
}

/* The queue itself is the first member of struct sim (see core.h). */
static void batch_fire(struct sim *s, void *obj, uint64_t t) {
  eventq *q = (eventq *)s;
  npu_batches *b = obj;
  for (;;) {
    uint32_t k = 0;
    while (k < b->n && b->v[k].time != t) k++;
    if (k == b->n) return;
    uint32_t c = b->v[k].head;
    if (!c) {
      b->v[k] = b->v[--b->n];
      return;
    }
    batch_cb cb = q->pool[c];
    b->v[k].head = cb.next;
    if (!cb.next) b->v[k].tail = 0;
    q->pool[c].next = q->pool_free;
    q->pool_free = c;
    cb.fn(s, cb.obj, cb.arg);
  }
}

void eventq_run(eventq *q, struct sim *s, void (*progress)(struct sim *s)) {
  sim_event e;
  while (q->n && !q->oom) {
    ev_pop(q, &e);
    q->now = e.time;
    q->fired++;
    e.fn(s, e.obj, e.arg);
    if (progress && (q->fired & ((1u << 20) - 1)) == 0) progress(s);
  }
}
