/* engine.c - the replay loop; see engine.h. */
#include "engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>

#include "chakra/attr.h"
#include "../util/vec.h"
#include <limits.h>

uint64_t rp_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

enum { AR = 0, RED = 1, AG = 2, GATHER = 3, SCATTER = 4, BCAST = 5, A2A = 6, RS = 7, RSB = 8, BARRIER = 9 };

uint64_t rp_node_bytes(const rp_node *n, int group_size) {
  uint64_t s = n->value, g = group_size > 0 ? (uint64_t)group_size : 1;
  if (n->kind == RP_RECV || n->kind == RP_MEM || n->kind == RP_SEND) return s;
  if (n->kind != RP_COLL) return 0;
  switch (n->coll) {
    case AG:
    case GATHER: return s * g;
    case A2A: return s + g * (s % g); /* the last block carries the remainder */
    case BARRIER: return 0;
    default: return s;
  }
}

/* The ready heaps key nodes by rp_node.id, read in place. */
static uint32_t ready_pop(rp_engine *e, int slot) {
  const rp_node *nodes = e->p->nodes;
  return idheap_pop(&e->ready[slot], &nodes[0].id, sizeof *nodes);
}

/* ---- setup ---- */

/* The request arrays, side by side, sized to cap (MPI counts them in int). */
static int resize_requests(rp_engine *e, size_t cap) {
  if (vec_resize(&e->req, cap, sizeof *e->req) || vec_resize(&e->req_node, cap, sizeof *e->req_node) ||
      vec_resize(&e->req_buf, cap, sizeof *e->req_buf) || vec_resize(&e->req_bytes, cap, sizeof *e->req_bytes) ||
      vec_resize(&e->req_idx, cap, sizeof *e->req_idx))
    return -1;
  e->cap_req = (uint32_t)cap;
  return 0;
}

int rp_engine_init(rp_engine *e, const rp_plan *p, const rp_comms *c, rp_pool *pool, int mode, double scale,
                   uint64_t stall_ns, chakra_error *err) {
  memset(e, 0, sizeof *e);
  e->p = p;
  e->c = c;
  e->pool = pool;
  e->mode = mode;
  e->scale = scale;
  e->stall_ns = stall_ns;
  size_t n = p->n ? p->n : 1;
  int gmax = 1;
  for (uint32_t k = 0; k < (p->n_pg ? p->n_pg : 1); k++)
    if (c->size[k] > gmax) gmax = c->size[k];
  e->indeg = malloc(n * sizeof *e->indeg);
  e->start = malloc(n * sizeof *e->start);
  e->end = malloc(n * sizeof *e->end);
  e->counts = malloc(4 * (size_t)gmax * sizeof *e->counts);
  e->arrived = malloc(n);
  e->posted = malloc(n);
  if (!e->indeg || !e->start || !e->end || !e->counts || !e->arrived || !e->posted || resize_requests(e, 64))
    return chakra_error_set(err, CHAKRA_ENOMEM, "rank %u: out of memory", p->rank);
  return 0;
}

void rp_engine_free(rp_engine *e) {
  free(e->indeg);
  free(e->start);
  free(e->end);
  free(e->counts);
  free(e->arrived);
  free(e->posted);
  free(e->req);
  free(e->req_node);
  free(e->req_buf);
  free(e->req_bytes);
  free(e->req_idx);
  for (int s = 0; s < RP_SLOTS; s++) free(e->ready[s].v);
  memset(e, 0, sizeof *e);
}

/* ---- failures ---- */

static int mpi_fail(rp_engine *e, chakra_error *err, uint32_t i, const char *call, int code) {
  char why[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  MPI_Error_string(code, why, &len);
  e->failed = 1;
  return chakra_error_set(err, CHAKRA_EIO, "%s: rank %u: node %llu: %s failed: %s", e->p->path, e->p->rank,
                          (unsigned long long)e->p->nodes[i].id, call, why);
}

static int oom(rp_engine *e, chakra_error *err) {
  e->failed = 1;
  return chakra_error_set(err, CHAKRA_ENOMEM, "rank %u: out of memory", e->p->rank);
}

/* ---- completion ---- */

static int make_ready(rp_engine *e, uint32_t i) {
  const rp_node *nodes = e->p->nodes;
  return idheap_push(&e->ready[nodes[i].slot], i, &nodes[0].id, sizeof *nodes);
}

static int finish_node(rp_engine *e, uint32_t i, uint64_t now) {
  const rp_plan *p = e->p;
  const rp_node *n = &p->nodes[i];
  e->end[i] = now - e->t0;
  if (n->slot != RP_SLOT_NONE) e->busy[n->slot] = 0;
  e->in_flight--;
  e->done++;
  for (uint32_t k = p->child_off[i]; k < p->child_off[i + 1]; k++) {
    uint32_t c = p->children[k];
    if (--e->indeg[c] == 0 && make_ready(e, c)) return -1;
  }
  return 0;
}

static int add_request(rp_engine *e, uint32_t i, void *buf, uint64_t bytes, MPI_Request **slot) {
  if (e->n_req == e->cap_req) {
    size_t nc = vec_next_cap(e->cap_req, (size_t)e->cap_req + 1, 64, sizeof *e->req_bytes, INT_MAX);
    if (!nc || resize_requests(e, nc)) return -1;
  }
  e->req_node[e->n_req] = i;
  e->req_buf[e->n_req] = buf;
  e->req_bytes[e->n_req] = bytes;
  *slot = &e->req[e->n_req++];
  return 0;
}

/* ---- posting ---- */

/* A reduction's element: floats when the bytes divide into them (what a
 * training job reduces), bytes with bitwise OR otherwise. */
static void reduction_type(uint64_t bytes, MPI_Datatype *dt, MPI_Op *op, int *count) {
  int floats = bytes % 4 == 0;
  *dt = floats ? MPI_FLOAT : MPI_BYTE;
  *op = floats ? MPI_SUM : MPI_BOR;
  *count = (int)(floats ? bytes / 4 : bytes);
}

static int post_reduce_scatter(rp_engine *e, const void *src, void *dst, uint64_t s, int g, MPI_Comm comm,
                               MPI_Request *r) {
  MPI_Datatype dt;
  MPI_Op op;
  int cnt;
  if (s % (uint64_t)g == 0) {
    reduction_type(s / (uint64_t)g, &dt, &op, &cnt);
    return MPI_Ireduce_scatter_block(src, dst, cnt, dt, op, comm, r);
  }
  int *counts = e->counts, m = (int)(s / (uint64_t)g);
  for (int k = 0; k < g; k++) counts[k] = m;
  counts[g - 1] += (int)(s % (uint64_t)g);
  return MPI_Ireduce_scatter(src, dst, counts, MPI_BYTE, MPI_BOR, comm, r);
}

static int post_alltoall(rp_engine *e, const void *src, void *dst, uint64_t s, int g, MPI_Comm comm, MPI_Request *r) {
  int m = (int)(s / (uint64_t)g), rem = (int)(s % (uint64_t)g), me;
  if (!rem) return MPI_Ialltoall(src, m, MPI_BYTE, dst, m, MPI_BYTE, comm, r);
  MPI_Comm_rank(comm, &me);
  int *sc = e->counts, *sd = sc + g, *rc = sd + g, *rd = rc + g;
  for (int k = 0; k < g; k++) {
    sc[k] = m + (k == g - 1 ? rem : 0);
    sd[k] = k * m;
    rc[k] = m + (me == g - 1 ? rem : 0);
    rd[k] = k * rc[k];
  }
  return MPI_Ialltoallv(src, sc, sd, MPI_BYTE, dst, rc, rd, MPI_BYTE, comm, r);
}

static int post_collective(rp_engine *e, const rp_node *n, void *dst, MPI_Request *r) {
  const void *src = e->pool->source;
  MPI_Comm comm = e->c->comm[n->tag];
  int g = e->c->size[n->tag], cnt = (int)n->value;
  uint64_t s = n->value;
  MPI_Datatype dt;
  MPI_Op op;
  switch (n->coll) {
    case AR: reduction_type(s, &dt, &op, &cnt); return MPI_Iallreduce(src, dst, cnt, dt, op, comm, r);
    case RED: reduction_type(s, &dt, &op, &cnt); return MPI_Ireduce(src, dst, cnt, dt, op, 0, comm, r);
    case AG: return MPI_Iallgather(src, cnt, MPI_BYTE, dst, cnt, MPI_BYTE, comm, r);
    case GATHER: return MPI_Igather(src, cnt, MPI_BYTE, dst, cnt, MPI_BYTE, 0, comm, r);
    case SCATTER: cnt = (int)(s / (uint64_t)g); return MPI_Iscatter(src, cnt, MPI_BYTE, dst, cnt, MPI_BYTE, 0, comm, r);
    case BCAST: return MPI_Ibcast(dst, cnt, MPI_BYTE, 0, comm, r);
    case A2A: return post_alltoall(e, src, dst, s, g, comm, r);
    case RS:
    case RSB: return post_reduce_scatter(e, src, dst, s, g, comm, r);
    default: return MPI_Ibarrier(comm, r);
  }
}

static const char *call_name(const rp_node *n) {
  static const char *const names[10] = {"MPI_Iallreduce", "MPI_Ireduce", "MPI_Iallgather", "MPI_Igather",
                                        "MPI_Iscatter", "MPI_Ibcast", "MPI_Ialltoall", "MPI_Ireduce_scatter",
                                        "MPI_Ireduce_scatter", "MPI_Ibarrier"};
  if (n->kind == RP_SEND) return "MPI_Isend";
  if (n->kind == RP_RECV) return "MPI_Irecv";
  return n->coll < 10 ? names[n->coll] : "MPI_Ibarrier";
}

/* Posts node i's send or collective; the buffer returns to the pool when
 * the request completes. */
static int post(rp_engine *e, uint32_t i, chakra_error *err) {
  const rp_node *n = &e->p->nodes[i];
  uint64_t bytes = n->kind == RP_SEND ? 0 : rp_node_bytes(n, e->c->size[n->tag]);
  void *buf = rp_pool_get(e->pool, bytes);
  MPI_Request *r;
  if (!buf || add_request(e, i, buf, bytes, &r)) return oom(e, err);
  uint64_t t = rp_now_ns();
  int rc;
  if (n->kind == RP_SEND) {
    rc = MPI_Isend(e->pool->source, (int)n->value, MPI_BYTE, n->peer, n->tag, e->c->all, r);
    e->messages++;
  } else {
    rc = post_collective(e, n, buf, r);
  }
  e->mpi_ns += rp_now_ns() - t;
  if (rc != MPI_SUCCESS) {
    e->n_req--;
    rp_pool_put(e->pool, buf, bytes);
    return mpi_fail(e, err, i, call_name(n), rc);
  }
  if (n->kind == RP_COLL && n->next_coll != RP_NONE && --e->indeg[n->next_coll] == 0 && make_ready(e, n->next_coll))
    return oom(e, err);
  return 0;
}

/* Posts the next receive in trace order (engine.h: receives go ahead). */
static int post_next_recv(rp_engine *e, chakra_error *err) {
  uint32_t i = e->p->recvs[e->next_recv++];
  const rp_node *n = &e->p->nodes[i];
  void *buf = rp_pool_get(e->pool, n->value);
  MPI_Request *r;
  if (!buf || add_request(e, i, buf, n->value, &r)) return oom(e, err);
  uint64_t t = rp_now_ns();
  int rc = MPI_Irecv(buf, (int)n->value, MPI_BYTE, n->peer, n->tag, e->c->all, r);
  e->mpi_ns += rp_now_ns() - t;
  if (rc != MPI_SUCCESS) {
    e->n_req--;
    rp_pool_put(e->pool, buf, n->value);
    return mpi_fail(e, err, i, "MPI_Irecv", rc);
  }
  e->posted[i] = 1;
  e->prepost_bytes += n->value;
  return 0;
}

static int top_up_receives(rp_engine *e, chakra_error *err) {
  while (e->next_recv < e->p->n_recvs && e->prepost_bytes < RP_PREPOST_BYTES) {
    int rc = post_next_recv(e, err);
    if (rc) return rc;
  }
  return 0;
}

/* A receive node issues: its message may be in already. */
static int issue_recv(rp_engine *e, uint32_t i, uint64_t now, chakra_error *err) {
  while (!e->posted[i]) {
    int rc = post_next_recv(e, err);
    if (rc) return rc;
  }
  if (e->arrived[i] && finish_node(e, i, now)) return oom(e, err);
  return 0;
}

/* Saturates: a scaled duration past 2^64 ns waits for ever, never wraps. */
static uint64_t compute_ns(const rp_engine *e, const rp_node *n) {
  if (e->mode == RP_RUN_SKIP) return 0;
  if (e->scale == 1.0) return n->value;
  double d = (double)n->value * e->scale;
  return d < 18446744073709551616.0 ? (uint64_t)d : UINT64_MAX;
}

/* Issues node i at time now (ns since the epoch of rp_now_ns). */
static int issue(rp_engine *e, uint32_t i, uint64_t now, chakra_error *err) {
  const rp_node *n = &e->p->nodes[i];
  e->start[i] = now - e->t0;
  if (n->slot != RP_SLOT_NONE) e->busy[n->slot] = 1;
  e->in_flight++;
  switch (n->kind) {
    case RP_COMPUTE: {
      uint64_t d = compute_ns(e, n);
      if (n->cat == RP_CAT_GPU) e->gpu_ns += d;
      if (d == 0) return finish_node(e, i, now) ? oom(e, err) : 0;
      int s = n->slot == RP_SLOT_CPU ? 0 : 1;
      e->comp_node[s] = i;
      e->comp_end[s] = d > UINT64_MAX - now ? UINT64_MAX : now + d;
      return 0;
    }
    case RP_MEM: {
      void *dst = rp_pool_get(e->pool, n->value);
      if (!dst) return oom(e, err);
      memcpy(dst, e->pool->source, n->value);
      rp_pool_put(e->pool, dst, n->value);
      return finish_node(e, i, rp_now_ns()) ? oom(e, err) : 0;
    }
    case RP_NOOP: return finish_node(e, i, now) ? oom(e, err) : 0;
    case RP_RECV: return issue_recv(e, i, now, err);
    default: return post(e, i, err);
  }
}

/* Issues ready nodes in ascending id order while their slots are free.
 * Each issue reads the clock: a cascade of zero-time nodes still gets
 * true start times. */
static int issue_ready(rp_engine *e, chakra_error *err) {
  const rp_node *nodes = e->p->nodes;
  for (;;) {
    int best = -1;
    for (int s = 0; s < RP_SLOTS; s++) {
      if (!e->ready[s].n || (s != RP_SLOT_NONE && e->busy[s])) continue;
      if (best < 0 || nodes[e->ready[s].v[0]].id < nodes[e->ready[best].v[0]].id) best = s;
    }
    if (best < 0) return 0;
    int rc = issue(e, ready_pop(e, best), rp_now_ns(), err);
    if (rc) return rc;
  }
}

/* ---- progress ---- */

static int cmp_desc(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* Tests the posted requests; finishes the nodes whose requests completed.
 * Returns how many, or -1 on error. */
static int poll_requests(rp_engine *e, chakra_error *err) {
  int out = 0;
  uint64_t t = rp_now_ns();
  int rc = MPI_Testsome((int)e->n_req, e->req, &out, e->req_idx, MPI_STATUSES_IGNORE);
  uint64_t now = rp_now_ns();
  e->mpi_ns += now - t;
  if (rc != MPI_SUCCESS) return mpi_fail(e, err, e->req_node[0], "MPI_Testsome", rc), -1;
  if (out <= 0 || out == MPI_UNDEFINED) return 0;
  if (out > 1) qsort(e->req_idx, (size_t)out, sizeof *e->req_idx, cmp_desc);
  for (int k = 0; k < out; k++) {
    uint32_t j = (uint32_t)e->req_idx[k], last = --e->n_req;
    uint32_t node = e->req_node[j];
    rp_pool_put(e->pool, e->req_buf[j], e->req_bytes[j]);
    int early = 0;
    if (e->p->nodes[node].kind == RP_RECV) {
      e->prepost_bytes -= e->p->nodes[node].value;
      early = e->start[node] == UINT64_MAX;
      e->arrived[node] = 1;
    }
    e->req[j] = e->req[last];
    e->req_node[j] = e->req_node[last];
    e->req_buf[j] = e->req_buf[last];
    e->req_bytes[j] = e->req_bytes[last];
    if (!early && finish_node(e, node, now)) return oom(e, err), -1;
  }
  if (top_up_receives(e, err)) return -1;
  return out;
}

static int poll_compute(rp_engine *e, uint64_t now, chakra_error *err) {
  int got = 0;
  for (int s = 0; s < 2; s++) {
    if (e->comp_node[s] == RP_NONE || now < e->comp_end[s]) continue;
    uint32_t i = e->comp_node[s];
    e->comp_node[s] = RP_NONE;
    if (finish_node(e, i, now)) return oom(e, err), -1;
    got++;
  }
  return got;
}

static void sleep_until(uint64_t t) {
  struct timespec ts = {(time_t)(t / 1000000000u), (long)(t % 1000000000u)};
  clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

static int reset(rp_engine *e, chakra_error *err) {
  const rp_plan *p = e->p;
  memcpy(e->indeg, p->indeg0, p->n * sizeof *e->indeg);
  memset(e->start, 0xff, p->n * sizeof *e->start);
  memset(e->end, 0xff, p->n * sizeof *e->end);
  for (int s = 0; s < RP_SLOTS; s++) e->ready[s].n = 0, e->busy[s] = 0;
  e->comp_node[0] = e->comp_node[1] = RP_NONE;
  e->done = e->in_flight = 0;
  e->gpu_ns = e->mpi_ns = e->messages = 0;
  memset(e->arrived, 0, p->n);
  memset(e->posted, 0, p->n);
  e->next_recv = 0;
  e->prepost_bytes = 0;
  if (top_up_receives(e, err)) return err ? err->code : CHAKRA_EIO;
  for (uint32_t i = 0; i < p->n; i++)
    if (e->indeg[i] == 0 && make_ready(e, i)) return oom(e, err);
  return 0;
}

/* The loop's time splits three ways: inside MPI calls (mpi_ns), waiting
 * with nothing to do (idle_ns: polls that found nothing, sleeps, compute
 * stand-ins spinning) and the replayer's own work, the rest. */
int rp_engine_run(rp_engine *e, chakra_error *err) {
  int rc = reset(e, err);
  e->t0 = rp_now_ns();
  e->idle_ns = 0;
  uint64_t last = e->t0;
  if (!rc) rc = issue_ready(e, err);
  while (!rc && e->done < e->p->n) {
    uint64_t it0 = rp_now_ns(), mpi0 = e->mpi_ns;
    int got = e->n_req ? poll_requests(e, err) : 0;
    if (got < 0) return err ? err->code : CHAKRA_EIO;
    uint64_t now = rp_now_ns();
    int comp = poll_compute(e, now, err);
    if (comp < 0) return err ? err->code : CHAKRA_ENOMEM;
    if (got + comp > 0) {
      last = now;
      rc = issue_ready(e, err);
      continue;
    }
    int computing = e->comp_node[0] != RP_NONE || e->comp_node[1] != RP_NONE;
    if (computing) {
      last = now; /* a stand-in running is progress */
      if (e->mode == RP_RUN_SLEEP) {
        uint64_t until = e->comp_node[0] != RP_NONE ? e->comp_end[0] : UINT64_MAX;
        if (e->comp_node[1] != RP_NONE && e->comp_end[1] < until) until = e->comp_end[1];
        sleep_until(until);
      }
    } else if (e->stall_ns && now - last > e->stall_ns) {
      return 1;
    } else if (e->n_req) {
      /* More processes than cores: the peers need this core to progress. */
      if (e->idle_sleep_ns) sleep_until(now + e->idle_sleep_ns);
      else sched_yield();
    } else {
      return chakra_error_set(err, CHAKRA_EGRAPH, "%s: rank %u: %u of %u nodes can never become ready (a cycle?)",
                              e->p->path, e->p->rank, e->p->n - e->done, e->p->n);
    }
    e->idle_ns += rp_now_ns() - it0 - (e->mpi_ns - mpi0);
  }
  e->loop_ns = rp_now_ns() - e->t0;
  return rc;
}

/* "123 (send to 4)", "77 (ALL_REDUCE)", "9 (recv from 2)" */
static int describe(char *out, size_t cap, const rp_node *n) {
  unsigned long long id = (unsigned long long)n->id;
  switch (n->kind) {
    case RP_SEND: return snprintf(out, cap, " %llu (send to %d)", id, n->peer);
    case RP_RECV: return snprintf(out, cap, " %llu (recv from %d)", id, n->peer);
    case RP_COLL: return snprintf(out, cap, " %llu (%s)", id, chakra_comm_type_name(n->coll));
    default: return snprintf(out, cap, " %llu", id);
  }
}

char *rp_engine_stuck_line(const rp_engine *e) {
  const rp_plan *p = e->p;
  size_t cap = 1024;
  char *s = malloc(cap);
  if (!s) return NULL;
  int len = snprintf(s, cap, "rank %u: %u of %u nodes done; issued and unfinished:", p->rank, e->done, p->n);
  uint32_t shown = 0, more = 0;
  for (uint32_t i = 0; i < p->n; i++) {
    if (e->start[i] == UINT64_MAX || e->end[i] != UINT64_MAX) continue;
    if (shown == 16 || len > (int)cap - 80) {
      more++;
      continue;
    }
    len += describe(s + len, cap - (size_t)len, &p->nodes[i]);
    shown++;
  }
  if (!shown) len += snprintf(s + len, cap - (size_t)len, " none");
  if (more) snprintf(s + len, cap - (size_t)len, " and %u more", more);
  return s;
}
