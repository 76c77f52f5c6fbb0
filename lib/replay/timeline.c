/* timeline.c - Chrome trace-event output of a replay: the times gathered
 * on rank 0, written in lib/report's layout; see timeline.h. */
#include "timeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../report/timeline.h"
#include "chakra/trace.h"

#define CHUNK (1u << 24) /* elements per message: MPI counts are ints */

typedef struct rank_times {
  uint32_t n;
  uint64_t *start, *end;
  uint8_t *slot;
} rank_times;

static void send_u64(const uint64_t *v, uint32_t n, MPI_Comm comm) {
  for (uint32_t k = 0; k < n; k += CHUNK) MPI_Send(v + k, (int)(n - k < CHUNK ? n - k : CHUNK), MPI_UINT64_T, 0, 7, comm);
}

static void recv_u64(uint64_t *v, uint32_t n, int from, MPI_Comm comm) {
  for (uint32_t k = 0; k < n; k += CHUNK)
    MPI_Recv(v + k, (int)(n - k < CHUNK ? n - k : CHUNK), MPI_UINT64_T, from, 7, comm, MPI_STATUS_IGNORE);
}

static void send_times(const rp_engine *e, MPI_Comm comm) {
  uint32_t n = e->p->n;
  uint8_t *slot = malloc(n ? n : 1);
  for (uint32_t i = 0; slot && i < n; i++) slot[i] = e->p->nodes[i].slot;
  uint32_t head[2] = {n, slot != NULL};
  MPI_Send(head, 2, MPI_UINT32_T, 0, 7, comm);
  if (!slot) return;
  send_u64(e->start, n, comm);
  send_u64(e->end, n, comm);
  for (uint32_t k = 0; k < n; k += CHUNK) MPI_Send(slot + k, (int)(n - k < CHUNK ? n - k : CHUNK), MPI_UINT8_T, 0, 7, comm);
  free(slot);
}

/* Receives rank r's times; returns -1 when they could not be kept (the
 * messages are drained all the same, so rank r is never left waiting). */
static int recv_times(rank_times *t, int r, MPI_Comm comm) {
  uint32_t head[2];
  MPI_Recv(head, 2, MPI_UINT32_T, r, 7, comm, MPI_STATUS_IGNORE);
  t->n = head[0];
  if (!head[1]) return -1;
  size_t n = t->n ? t->n : 1;
  t->start = malloc(n * sizeof *t->start);
  t->end = malloc(n * sizeof *t->end);
  t->slot = malloc(n);
  int ok = t->start && t->end && t->slot;
  uint64_t *sink = ok ? NULL : malloc(CHUNK * sizeof *sink);
  for (int a = 0; a < 2; a++) {
    uint64_t *dst = a ? t->end : t->start;
    if (ok) recv_u64(dst, t->n, r, comm);
    else
      for (uint32_t k = 0; k < t->n; k += CHUNK)
        MPI_Recv(sink, (int)(t->n - k < CHUNK ? t->n - k : CHUNK), MPI_UINT64_T, r, 7, comm, MPI_STATUS_IGNORE);
  }
  for (uint32_t k = 0; k < t->n; k += CHUNK)
    MPI_Recv(ok ? t->slot + k : (uint8_t *)sink, (int)(t->n - k < CHUNK ? t->n - k : CHUNK), MPI_UINT8_T, r, 7, comm,
             MPI_STATUS_IGNORE);
  free(sink);
  return ok ? 0 : -1;
}

static void free_times(rank_times *t) {
  free(t->start);
  free(t->end);
  free(t->slot);
  memset(t, 0, sizeof *t);
}

/* Node i of a rank as replayed. */
static int replay_span(void *ctx, uint32_t i, const chakra_node *n, timeline_span *out) {
  const rank_times *t = ctx;
  if (t->start[i] == UINT64_MAX || t->end[i] == UINT64_MAX) return 0;
  *out = (timeline_span){.id = n->id, .start = t->start[i], .end = t->end[i], .track = t->slot[i]};
  return 1;
}

/* Rank r's slices, names and types read back from its trace. */
static int rank_events(chakra_timeline *tl, const rank_times *t, const chakra_set *set, int r, chakra_error *err) {
  chakra_reader *rd;
  int rc = chakra_set_reader(set, (uint32_t)r, NULL, &rd, err);
  if (rc) return rc;
  rc = timeline_slot_rank(tl, (uint32_t)r, rd, t->n, replay_span, (void *)t, err);
  chakra_reader_close(rd);
  return rc;
}

static int own_times(const rp_engine *e, rank_times *t) {
  t->n = e->p->n;
  t->start = e->start;
  t->end = e->end;
  t->slot = malloc(t->n ? t->n : 1);
  if (!t->slot) return -1;
  for (uint32_t i = 0; i < t->n; i++) t->slot[i] = e->p->nodes[i].slot;
  return 0;
}

int rp_timeline(const rp_engine *e, const chakra_set *set, const char *path, MPI_Comm comm, chakra_error *err) {
  int me, size;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &size);
  if (me != 0) {
    send_times(e, comm);
    return 0;
  }
  chakra_timeline *tl = NULL;
  int rc = chakra_timeline_open(&tl, path, err);
  /* Every rank's times are received, whatever went wrong: no rank is left
   * waiting in its send. */
  for (int r = 0; r < size; r++) {
    rank_times t = {0};
    int got = r == 0 ? own_times(e, &t) : recv_times(&t, r, comm);
    if (got && !rc) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    if (!rc) rc = rank_events(tl, &t, set, r, err);
    if (r == 0) free(t.slot);
    else free_times(&t);
  }
  if (rc) {
    chakra_timeline_discard(tl);
    return rc;
  }
  return chakra_timeline_close(tl, err);
}
