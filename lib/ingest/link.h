/* link.h - what the steps of chakra link share (private to lib/ingest).
 *
 * chakra_link() (link.c) reads the host ET and the Kineto trace, then runs
 * the steps in order, each reading and filling the linker below: Kineto
 * CPU ops per thread with their enclosing op and exclusive time
 * (linkcpu.c), host ops matched to them (linkmatch.c), device ops attached
 * to the host op that launched them and the inter-thread and
 * synchronisation dependencies (linkdev.c), the linked host ET written
 * (linkout.c). */
#ifndef CHAKRA_INGEST_LINK_H
#define CHAKRA_INGEST_LINK_H

#include <stddef.h>
#include <stdint.h>

#include "chakra/ingest.h"
#include "hostet.h"
#include "kineto.h"
#include "../util/diag.h"

#define LINK_NONE UINT32_MAX

typedef struct link_cpuop {
  uint32_t ev;     /* Kineto event index */
  uint32_t parent; /* enclosing op (index into cpu[]) */
  uint32_t host;   /* matched host node, or LINK_NONE */
  double excl;
  double covered, last_end; /* scratch for the exclusive duration */
} link_cpuop;

typedef struct link_thread {
  int64_t tid;
  uint32_t start, n; /* range of cpu[] */
} link_thread;

typedef struct link_gpuop {
  uint32_t ev;
  uint32_t host;
  uint32_t pre_sort;   /* scratch: the gpu[] index before a sort (link_dev_sync, link_write) */
} link_gpuop;

typedef struct linker {
  const chakra_link_options *opt;
  chakra_link_report *rep;
  chakra_error *err;
  hostet *h;
  kineto *k;
  link_cpuop *cpu;
  size_t ncpu;
  link_thread *thr;
  size_t nthr, capthr;
  uint32_t *k_of_host; /* host node -> cpu[] index */
  uint32_t *kname;     /* Kineto string id -> host string id (0 = not a host name) */
  link_gpuop *gpu;
  size_t ngpu;
  uint32_t *itd;       /* host node -> host node it waits for (LINK_NONE) */
  /* sync deps: (host node, gpu[] index) pairs */
  struct { uint32_t host, gpu; } *sync;
  size_t nsync, capsync;
} linker;

/* A warning about file, to the options' diag callback. */
#define link_warnf(L, file, ...) chakra_diag_warnf((L)->opt->diag, (L)->opt->diag_ctx, (file), __VA_ARGS__)
/* Sets "out of memory" and returns its code. */
int link_oom(linker *L);

/* Kineto CPU op c's event, and an event's end. */
static inline const kt_event *link_ev(const linker *L, uint32_t c) { return &L->k->ev[L->cpu[c].ev]; }
static inline double link_end(const kt_event *e) { return e->ts + e->dur; }

#endif
