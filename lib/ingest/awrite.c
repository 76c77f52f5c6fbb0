/* awrite.c - output written by a second thread; see awrite.h. */
#include "awrite.h"

#include <pthread.h>
#include <stdlib.h>

#define QCAP 64 /* blocks queued at most; awrite_queue() waits beyond */

typedef struct block {
  const void *p;
  size_t n;
} block;

struct awrite {
  outfile *f;
  int threaded;
  chakra_error err; /* the first write error */
  int rc;
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  block q[QCAP];
  size_t head, tail; /* blocks written, blocks queued (q[i % QCAP]) */
  int done;
  int skip;          /* discarding: dequeue without writing */
};

static void *writer(void *arg) {
  awrite *w = arg;
  pthread_mutex_lock(&w->mu);
  for (;;) {
    while (w->head == w->tail && !w->done) pthread_cond_wait(&w->cv, &w->mu);
    if (w->head == w->tail) break;
    block b = w->q[w->head % QCAP];
    int failed = w->rc || w->skip;
    pthread_mutex_unlock(&w->mu);
    /* after an error the rest is only dequeued: the output is discarded */
    chakra_error e = {0};
    int rc = failed ? 0 : outfile_write(w->f, b.p, b.n, &e);
    pthread_mutex_lock(&w->mu);
    if (rc && !w->rc) w->rc = rc, w->err = e;
    w->head++;
    pthread_cond_broadcast(&w->cv);
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

int awrite_open(awrite **out, const char *path, int gzip, int threaded, chakra_error *err) {
  *out = NULL;
  awrite *w = calloc(1, sizeof *w);
  if (!w) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  int rc = outfile_open(&w->f, path, gzip, err);
  if (rc) {
    free(w);
    return rc;
  }
  pthread_mutex_init(&w->mu, NULL);
  pthread_cond_init(&w->cv, NULL);
  w->threaded = threaded && pthread_create(&w->th, NULL, writer, w) == 0;
  *out = w;
  return 0;
}

int awrite_queue(awrite *w, const void *data, size_t n) {
  if (!w->threaded) {
    if (!w->rc && n) w->rc = outfile_write(w->f, data, n, &w->err);
    return w->rc;
  }
  pthread_mutex_lock(&w->mu);
  while (w->tail - w->head == QCAP) pthread_cond_wait(&w->cv, &w->mu);
  w->q[w->tail % QCAP] = (block){data, n};
  w->tail++;
  pthread_cond_broadcast(&w->cv);
  int rc = w->rc;
  pthread_mutex_unlock(&w->mu);
  return rc;
}

int awrite_wait(awrite *w) {
  if (!w->threaded) return w->rc;
  pthread_mutex_lock(&w->mu);
  while (w->head != w->tail) pthread_cond_wait(&w->cv, &w->mu);
  int rc = w->rc;
  pthread_mutex_unlock(&w->mu);
  return rc;
}

int awrite_status(awrite *w, chakra_error *err) {
  if (w->threaded) pthread_mutex_lock(&w->mu);
  int rc = w->rc;
  if (rc && err) *err = w->err;
  if (w->threaded) pthread_mutex_unlock(&w->mu);
  return rc;
}

/* Lets the thread write what is queued and stop. */
static int finish(awrite *w) {
  if (w->threaded) {
    pthread_mutex_lock(&w->mu);
    w->done = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->th, NULL);
  }
  pthread_mutex_destroy(&w->mu);
  pthread_cond_destroy(&w->cv);
  return w->rc;
}

int awrite_close(awrite *w, chakra_error *err) {
  int rc = finish(w);
  if (rc) {
    *err = w->err;
    outfile_discard(w->f);
  } else {
    rc = outfile_commit(w->f, err);
  }
  free(w);
  return rc;
}

void awrite_discard(awrite *w) {
  if (!w) return;
  if (w->threaded) pthread_mutex_lock(&w->mu);
  w->skip = 1;
  if (w->threaded) pthread_mutex_unlock(&w->mu);
  finish(w);
  outfile_discard(w->f);
  free(w);
}
