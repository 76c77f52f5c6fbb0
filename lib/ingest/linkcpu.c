/* linkcpu.c - the Kineto CPU ops' time line for chakra link; see
 * linkcpu.h. */
#include "linkcpu.h"
#include "../util/vec.h"

#include <stdlib.h>

/* comparators take the kineto trace as qsort_r context */
static int cmp_cpu(const void *a, const void *b, void *ctx) {
  const kineto *k = ctx;
  const kt_event *x = &k->ev[((const link_cpuop *)a)->ev], *y = &k->ev[((const link_cpuop *)b)->ev];
  if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
  if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
  if (x->dur != y->dur) return x->dur > y->dur ? -1 : 1; /* the enclosing op first */
  return x->index < y->index ? -1 : x->index > y->index;
}

/* CPU ops per thread in start order, with their enclosing op and
 * exclusive duration (inclusive minus the union of the ops inside). */
int link_cpu_build(linker *L) {
  kineto *k = L->k;
  for (size_t i = 0; i < k->n; i++) L->ncpu += k->ev[i].kind == KT_CPU;
  L->cpu = calloc(L->ncpu ? L->ncpu : 1, sizeof *L->cpu);
  if (!L->cpu) return link_oom(L);
  size_t m = 0;
  for (size_t i = 0; i < k->n; i++)
    if (k->ev[i].kind == KT_CPU) L->cpu[m++].ev = (uint32_t)i;
  qsort_r(L->cpu, L->ncpu, sizeof *L->cpu, cmp_cpu, k);
  uint32_t *stack = malloc((L->ncpu ? L->ncpu : 1) * sizeof *stack);
  if (!stack) return link_oom(L);
  for (size_t a = 0; a < L->ncpu;) {
    size_t b = a;
    while (b < L->ncpu && link_ev(L, (uint32_t)b)->tid == link_ev(L, (uint32_t)a)->tid) b++;
    link_thread *t = VEC_PUSH(L->thr, L->nthr, L->capthr);
    if (!t) {
      free(stack);
      return link_oom(L);
    }
    *t = (link_thread){link_ev(L, (uint32_t)a)->tid, (uint32_t)a, (uint32_t)(b - a)};
    size_t sp = 0;
    for (size_t j = a; j < b; j++) {
      const kt_event *e = link_ev(L, (uint32_t)j);
      L->cpu[j].parent = LINK_NONE;
      L->cpu[j].host = LINK_NONE;
      L->cpu[j].covered = 0;
      L->cpu[j].last_end = e->ts;
      while (sp && link_end(link_ev(L, stack[sp - 1])) <= e->ts) sp--;
      for (size_t s = sp; s > 0; s--) {
        uint32_t p = stack[s - 1];
        if (link_end(e) <= link_end(link_ev(L, p))) {
          L->cpu[j].parent = p;
          link_cpuop *P = &L->cpu[p];
          double from = e->ts > P->last_end ? e->ts : P->last_end;
          if (link_end(e) > from) P->covered += link_end(e) - from;
          if (link_end(e) > P->last_end) P->last_end = link_end(e);
          break;
        }
      }
      stack[sp++] = (uint32_t)j;
    }
    for (size_t j = a; j < b; j++) {
      double x = link_ev(L, (uint32_t)j)->dur - L->cpu[j].covered;
      L->cpu[j].excl = x > 0 ? x : 0;
    }
    a = b;
  }
  free(stack);
  L->rep->kineto_cpu_ops = L->ncpu;
  return 0;
}

const link_thread *link_cpu_thread(const linker *L, int64_t tid) {
  for (size_t i = 0; i < L->nthr; i++)
    if (L->thr[i].tid == tid) return &L->thr[i];
  return NULL;
}

/* Last op of thread t starting at or before ts (cpu[] index), or LINK_NONE. */
uint32_t link_cpu_last_before(const linker *L, const link_thread *t, double ts, int strict) {
  uint32_t lo = 0, hi = t->n;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    double x = link_ev(L, t->start + mid)->ts;
    if (strict ? x < ts : x <= ts) lo = mid + 1;
    else hi = mid;
  }
  return lo ? t->start + lo - 1 : LINK_NONE;
}

/* The innermost op of thread t running at ts, else the last one that
 * started before it (the reference's rule); LINK_NONE if none started. */
uint32_t link_cpu_op_at(const linker *L, const link_thread *t, double ts, int *inside) {
  uint32_t j = link_cpu_last_before(L, t, ts, 0);
  *inside = 0;
  for (uint32_t a = j; a != LINK_NONE; a = L->cpu[a].parent)
    if (link_end(link_ev(L, a)) >= ts) {
      *inside = 1;
      return a;
    }
  return j;
}

/* nearest enclosing op (itself included) that has a host op */
uint32_t link_cpu_matched_up(const linker *L, uint32_t c) {
  for (; c != LINK_NONE; c = L->cpu[c].parent)
    if (L->cpu[c].host != LINK_NONE) return c;
  return LINK_NONE;
}
