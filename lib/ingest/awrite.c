/* awrite.c - double-buffered output on a second thread; see awrite.h. */
#include "awrite.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define ABUF AWRITE_MAX_ROOM

struct awrite {
  outfile *f;
  int threaded;
  chakra_error err; /* the writer thread's first error */
  int rc;
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  char *buf[2];
  size_t len[2];
  int full[2];
  int done;
  int cur;     /* the buffer the producer fills */
  size_t used;
};

static void *writer(void *arg) {
  awrite *w = arg;
  int k = 0;
  for (;;) {
    pthread_mutex_lock(&w->mu);
    while (!w->full[k] && !w->done) pthread_cond_wait(&w->cv, &w->mu);
    if (!w->full[k]) {
      pthread_mutex_unlock(&w->mu);
      break;
    }
    int failed = w->rc;
    pthread_mutex_unlock(&w->mu);
    chakra_error e = {0};
    int rc = failed ? 0 : outfile_write(w->f, w->buf[k], w->len[k], &e);
    pthread_mutex_lock(&w->mu);
    if (rc && !w->rc) w->rc = rc, w->err = e;
    w->full[k] = 0;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    k ^= 1;
  }
  return NULL;
}

int awrite_open(awrite **out, const char *path, int gzip, int threaded, chakra_error *err) {
  *out = NULL;
  awrite *w = calloc(1, sizeof *w);
  if (!w) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  w->buf[0] = malloc(ABUF);
  w->buf[1] = threaded ? malloc(ABUF) : NULL;
  if (!w->buf[0] || (threaded && !w->buf[1])) {
    free(w->buf[0]), free(w->buf[1]), free(w);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  int rc = outfile_open(&w->f, path, gzip, err);
  if (rc) {
    free(w->buf[0]), free(w->buf[1]), free(w);
    return rc;
  }
  pthread_mutex_init(&w->mu, NULL);
  pthread_cond_init(&w->cv, NULL);
  w->threaded = threaded && pthread_create(&w->th, NULL, writer, w) == 0;
  *out = w;
  return 0;
}

/* Hands the current buffer over (or writes it) and starts the other one. */
static int submit(awrite *w) {
  if (!w->used) return w->rc;
  if (!w->threaded) {
    if (!w->rc) w->rc = outfile_write(w->f, w->buf[0], w->used, &w->err);
    w->used = 0;
    return w->rc;
  }
  pthread_mutex_lock(&w->mu);
  w->len[w->cur] = w->used;
  w->full[w->cur] = 1;
  pthread_cond_broadcast(&w->cv);
  w->cur ^= 1;
  while (w->full[w->cur]) pthread_cond_wait(&w->cv, &w->mu);
  int rc = w->rc;
  pthread_mutex_unlock(&w->mu);
  w->used = 0;
  return rc;
}

char *awrite_room(awrite *w, size_t n) {
  if (n > ABUF) return NULL;
  if (ABUF - w->used < n && submit(w)) return NULL;
  return w->buf[w->cur] + w->used;
}

void awrite_commit(awrite *w, size_t n) { w->used += n; }

int awrite_put(awrite *w, const void *data, size_t n) {
  const char *s = data;
  while (n) {
    size_t k = n < ABUF ? n : ABUF;
    char *d = awrite_room(w, k);
    if (!d) return w->rc ? w->rc : CHAKRA_EIO;
    memcpy(d, s, k);
    w->used += k;
    s += k, n -= k;
  }
  return 0;
}

int awrite_status(awrite *w, chakra_error *err) {
  if (w->threaded) pthread_mutex_lock(&w->mu);
  int rc = w->rc;
  if (rc && err) *err = w->err;
  if (w->threaded) pthread_mutex_unlock(&w->mu);
  return rc;
}

static int finish(awrite *w) {
  int rc = submit(w);
  if (w->threaded) {
    pthread_mutex_lock(&w->mu);
    w->done = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->th, NULL);
    rc = w->rc;
  }
  pthread_mutex_destroy(&w->mu);
  pthread_cond_destroy(&w->cv);
  free(w->buf[0]), free(w->buf[1]);
  return rc;
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
  finish(w);
  outfile_discard(w->f);
  free(w);
}
