/* timeline.c - Chrome trace-event output of a replay; see timeline.h. */
#include "timeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/jsonw.h"
#include "../util/outfile.h"
#include "chakra/attr.h"
#include "chakra/trace.h"

#define CHUNK (1u << 24) /* elements per message: MPI counts are ints */

static const char *const track_names[] = {"CPU", "GPU compute", "GPU communication", "receives"};

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

/* Microseconds with nanosecond precision: 12345 ns -> 12.345 */
static void put_us(jsonw *w, uint64_t ns) {
  jsonw_u64(w, ns / 1000);
  char frac[5] = {'.', (char)('0' + ns / 100 % 10), (char)('0' + ns / 10 % 10), (char)('0' + ns % 10), 0};
  jsonw_raw(w, frac, 4);
}

static void meta(jsonw *w, const char *what, int pid, int tid, const char *name, int *first) {
  jsonw_lit(w, *first ? "\n{\"ph\":\"M\",\"name\":\"" : ",\n{\"ph\":\"M\",\"name\":\"");
  *first = 0;
  jsonw_lit(w, what);
  jsonw_lit(w, "\",\"pid\":");
  jsonw_u64(w, (uint64_t)pid);
  if (tid >= 0) {
    jsonw_lit(w, ",\"tid\":");
    jsonw_u64(w, (uint64_t)tid);
  }
  jsonw_lit(w, ",\"args\":{\"name\":");
  jsonw_string(w, name, strlen(name));
  jsonw_lit(w, "}}");
}

static int rank_events(jsonw *w, const rank_times *t, const chakra_set *set, int r, int *first, chakra_error *err) {
  char pname[32];
  snprintf(pname, sizeof pname, "rank %d", r);
  meta(w, "process_name", r, -1, pname, first);
  for (int k = 0; k < 4; k++) meta(w, "thread_name", r, k, track_names[k], first);
  chakra_reader *rd;
  int rc = chakra_set_reader(set, (uint32_t)r, NULL, &rd, err);
  if (rc) return rc;
  chakra_node *n;
  uint32_t i = 0;
  while (i < t->n && (rc = chakra_reader_next(rd, &n, err)) == 1) {
    uint32_t k = i++;
    if (t->start[k] == UINT64_MAX || t->end[k] == UINT64_MAX) continue;
    const char *type = chakra_node_type_name(n->type);
    jsonw_lit(w, ",\n{\"ph\":\"X\",\"name\":");
    jsonw_string(w, n->name ? n->name : "", n->name ? strlen(n->name) : 0);
    jsonw_lit(w, ",\"cat\":\"");
    jsonw_lit(w, type ? type : "UNKNOWN");
    jsonw_lit(w, "\",\"pid\":");
    jsonw_u64(w, (uint64_t)r);
    jsonw_lit(w, ",\"tid\":");
    jsonw_u64(w, t->slot[k]);
    jsonw_lit(w, ",\"ts\":");
    put_us(w, t->start[k]);
    jsonw_lit(w, ",\"dur\":");
    put_us(w, t->end[k] - t->start[k]);
    jsonw_lit(w, ",\"args\":{\"node_id\":");
    jsonw_u64(w, n->id);
    jsonw_lit(w, "}}");
  }
  chakra_reader_close(rd);
  return rc < 0 ? rc : 0;
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
  outfile *f = NULL;
  jsonw w;
  int rc = outfile_open(&f, path, outfile_name_is_gzip(path), err), first = 1, have_w = 0;
  if (!rc && jsonw_init(&w, f)) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  else if (!rc) have_w = 1;
  if (have_w) jsonw_lit(&w, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
  for (int r = 0; r < size; r++) {
    rank_times t = {0};
    int got = r == 0 ? own_times(e, &t) : recv_times(&t, r, comm);
    if (got && !rc) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    if (!rc) rc = rank_events(&w, &t, set, r, &first, err);
    if (r == 0) free(t.slot);
    else free_times(&t);
  }
  if (have_w) {
    jsonw_lit(&w, "\n]}\n");
    if (!rc && jsonw_flush(&w)) {
      rc = w.err.code ? w.err.code : CHAKRA_EIO;
      if (err) *err = w.err;
    }
    jsonw_free(&w);
  }
  if (rc) {
    if (f) outfile_discard(f);
    return rc;
  }
  return outfile_commit(f, err);
}
