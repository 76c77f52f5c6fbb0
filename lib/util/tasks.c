/* tasks.c - a fork-join task runner; see tasks.h. */
#include "tasks.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct runner {
  size_t n;
  tasks_worker_fn fn;
  void *ctx;
  int flags;
  atomic_size_t next;    /* next job to hand out */
  atomic_size_t failed;  /* lowest failing job, or SIZE_MAX */
  int *status;           /* per job, when the caller needs the lowest failure */
} runner;

static void note_failure(runner *r, size_t job) {
  size_t cur = atomic_load(&r->failed);
  while (job < cur && !atomic_compare_exchange_weak(&r->failed, &cur, job)) {
  }
}

typedef struct wslot {
  runner *r;
  unsigned index;
} wslot;

static void *work(void *arg) {
  runner *r = ((wslot *)arg)->r;
  unsigned index = ((wslot *)arg)->index;
  for (;;) {
    size_t j = atomic_fetch_add(&r->next, 1);
    if (j >= r->n) return NULL;
    if ((r->flags & TASKS_STOP_ON_ERROR) && atomic_load(&r->failed) != SIZE_MAX) return NULL;
    int rc = r->fn(r->ctx, index, j);
    r->status[j] = rc;
    if (rc) note_failure(r, j);
  }
}

unsigned tasks_cpus(void) {
  long c = sysconf(_SC_NPROCESSORS_ONLN);
  return c > 0 ? (unsigned)c : 1;
}

int tasks_run_workers(size_t n, unsigned threads, tasks_worker_fn fn, void *ctx, int flags) {
  if (n == 0) return 0;
  if (threads == 0) threads = tasks_cpus();
  if (threads > n) threads = (unsigned)n;
  runner r = {.n = n, .fn = fn, .ctx = ctx, .flags = flags};
  atomic_init(&r.next, 0);
  atomic_init(&r.failed, SIZE_MAX);
  int one;
  r.status = n == 1 ? &one : calloc(n, sizeof *r.status);
  pthread_t *tid = threads > 1 ? calloc(threads, sizeof *tid) : NULL;
  wslot *wk = threads > 1 ? calloc(threads, sizeof *wk) : NULL;
  char *started = threads > 1 ? calloc(threads, 1) : NULL;
  if (!r.status || !tid || !wk || !started) threads = 1; /* no memory for threads: run here */
  if (!r.status) { /* not even for the statuses: run in order here */
    free(tid);
    free(wk);
    free(started);
    int first = 0;
    for (size_t j = 0; j < n && !(first && (flags & TASKS_STOP_ON_ERROR)); j++) {
      int rc = fn(ctx, 0, j);
      if (rc && !first) first = rc;
    }
    return first;
  }
  for (unsigned t = 1; t < threads; t++) {
    wk[t] = (wslot){&r, t};
    started[t] = pthread_create(&tid[t], NULL, work, &wk[t]) == 0;
  }
  wslot self = {&r, 0};
  work(&self);
  for (unsigned t = 1; t < threads; t++)
    if (started[t]) pthread_join(tid[t], NULL);
  size_t f = atomic_load(&r.failed);
  int rc = f == SIZE_MAX ? 0 : r.status[f];
  if (r.status != &one) free(r.status);
  free(tid);
  free(wk);
  free(started);
  return rc;
}

typedef struct plain {
  tasks_fn fn;
  void *ctx;
} plain;

static int run_plain(void *ctx, unsigned worker, size_t job) {
  (void)worker;
  plain *p = ctx;
  return p->fn(p->ctx, job);
}

int tasks_run(size_t n, unsigned threads, tasks_fn fn, void *ctx, int flags) {
  plain p = {fn, ctx};
  return tasks_run_workers(n, threads, run_plain, &p, flags);
}
