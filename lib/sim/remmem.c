/* remmem.c - remote memory; see remmem.h. */
#include "remmem.h"

#include <math.h>
#include <stdlib.h>


typedef struct mem_req {
  uint32_t rank;
  uint64_t bytes;
  sim_fn done;
  void *obj;
  uint64_t arg;
  struct mem_req *next;
} mem_req;

typedef struct mem_line {
  int busy;
  mem_req *head, *tail;
} mem_line;

typedef struct mem {
  mem_line *lines; /* per node (PER_NODE) or one (POOL) */
} mem;

/* The latency is at most 10^15 ns (checked when read); the transfer of a
 * huge tensor at a low bandwidth saturates, and the event queue then stops
 * the run with an error. */
static uint64_t mem_time(const sim *s, uint64_t bytes) {
  const sim_mem_config *m = &s->mem_cfg;
  uint64_t t = (uint64_t)m->latency;
  uint64_t x = m->bandwidth > 0 ? eventq_ns((double)bytes / m->bandwidth) : 0;
  return x > UINT64_MAX - t ? UINT64_MAX : t + x;
}

static void mem_start(sim *s, mem_line *l);

static void mem_finish(sim *s, void *obj, uint64_t arg) {
  (void)arg;
  mem_req *rq = obj;
  mem_line *l = NULL;
  if (s->mem_cfg.type != MEM_PER_NPU) {
    uint32_t line = s->mem_cfg.type == MEM_POOL ? 0 : rq->rank / s->mem_cfg.npus_per_node;
    l = &s->mem->lines[line];
  }
  sim_fn done = rq->done;
  void *o = rq->obj;
  uint64_t a = rq->arg;
  live_release(&s->live, rq);
  done(s, o, a);
  if (l) {
    l->busy = 0;
    mem_start(s, l);
  }
}

static void mem_start(sim *s, mem_line *l) {
  if (l->busy || !l->head) return;
  mem_req *rq = l->head;
  l->head = rq->next;
  if (!l->head) l->tail = NULL;
  l->busy = 1;
  eventq_npu_after(&s->q, rq->rank, mem_time(s, rq->bytes), mem_finish, rq, 0);
}

void remmem_access(sim *s, uint32_t rank, uint64_t bytes, sim_fn done, void *obj, uint64_t arg) {
  mem_req *rq = live_alloc(&s->live, sizeof *rq);
  if (!rq) {
    s->q.oom = 1;
    return;
  }
  *rq = (mem_req){rank, bytes, done, obj, arg, NULL};
  if (s->mem_cfg.type == MEM_PER_NPU) {
    eventq_npu_after(&s->q, rank, mem_time(s, bytes), mem_finish, rq, 0);
    return;
  }
  if (!s->mem) {
    uint32_t lines = s->mem_cfg.type == MEM_POOL ? 1 : (s->npus + s->mem_cfg.npus_per_node - 1) / s->mem_cfg.npus_per_node;
    s->mem = calloc(1, sizeof *s->mem);
    if (s->mem) s->mem->lines = calloc(lines, sizeof(mem_line));
    if (!s->mem || !s->mem->lines) {
      s->q.oom = 1;
      return;
    }
  }
  uint32_t line = s->mem_cfg.type == MEM_POOL ? 0 : rank / s->mem_cfg.npus_per_node;
  mem_line *l = &s->mem->lines[line];
  if (l->tail) l->tail->next = rq;
  else l->head = rq;
  l->tail = rq;
  mem_start(s, l);
}

void remmem_free(sim *s) {
  if (!s->mem) return;
  free(s->mem->lines);
  free(s->mem);
  s->mem = NULL;
}
