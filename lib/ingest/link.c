/* link.c - host ET + Kineto trace -> linked host ET (chakra link); see
 * include/chakra/ingest.h and docs/link.md.
 *
 * Steps: host ops are matched to Kineto CPU ops (by "Record function id",
 * or per thread by aligning names in start order); every device op is
 * attached to the host op around its launch (correlation id, else the ac2g
 * flow arrow, then the time window on the launching thread); inter-thread
 * and synchronisation dependencies are derived from the time line; the
 * host ET is written back with new ids, each host op followed by its device
 * ops, in the layout the reference converter reads. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../util/outfile.h"
#include "chakra/ingest.h"
#include "hostet.h"
#include "ibuf.h"
#include "kineto.h"
#include "pyrepr.h"

#define NONE UINT32_MAX

typedef struct cpuop {
  uint32_t ev;     /* Kineto event index */
  uint32_t parent; /* enclosing op (index into cpu[]) */
  uint32_t host;   /* matched host node, or NONE */
  double excl;
  double covered, last_end; /* scratch for the exclusive duration */
} cpuop;

typedef struct thread {
  int64_t tid;
  uint32_t start, n; /* range of cpu[] */
} thread;

typedef struct gpuop {
  uint32_t ev;
  uint32_t host;
  uint32_t pre_sort;   /* scratch: the gpu[] index before a sort (sync_deps, write_linked) */
} gpuop;

typedef struct linker {
  const chakra_link_options *opt;
  chakra_link_report *rep;
  chakra_error *err;
  hostet *h;
  kineto *k;
  cpuop *cpu;
  size_t ncpu;
  thread *thr;
  size_t nthr;
  uint32_t *k_of_host; /* host node -> cpu[] index */
  uint32_t *kname;     /* Kineto string id -> host string id (0 = not a host name) */
  gpuop *gpu;
  size_t ngpu;
  uint32_t *itd;       /* host node -> host node it waits for (NONE) */
  /* sync deps: (host node, gpu[] index) pairs */
  struct { uint32_t host, gpu; } *sync;
  size_t nsync, capsync;
} linker;

/* A warning about file. */
static void warnf(linker *L, const char *file, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void warnf(linker *L, const char *file, const char *fmt, ...) {
  if (!L->opt->diag) return;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  chakra_problem p = chakra_problem_make(CHAKRA_SEV_WARNING, msg);
  p.file = file;
  L->opt->diag(L->opt->diag_ctx, &p);
}

static int oom(linker *L) { return chakra_error_set(L->err, CHAKRA_ENOMEM, "out of memory"); }

static const kt_event *EV(const linker *L, uint32_t c) { return &L->k->ev[L->cpu[c].ev]; }
static double END(const kt_event *e) { return e->ts + e->dur; }

/* --------------------------------------------------------- Kineto side */

/* comparators take the kineto trace as qsort_r context */
static int cmp_cpu(const void *a, const void *b, void *ctx) {
  const kineto *k = ctx;
  const kt_event *x = &k->ev[((const cpuop *)a)->ev], *y = &k->ev[((const cpuop *)b)->ev];
  if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
  if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
  if (x->dur != y->dur) return x->dur > y->dur ? -1 : 1; /* the enclosing op first */
  return x->index < y->index ? -1 : x->index > y->index;
}

/* CPU ops per thread in start order, with their enclosing op and
 * exclusive duration (inclusive minus the union of the ops inside). */
static int build_cpu(linker *L) {
  kineto *k = L->k;
  for (size_t i = 0; i < k->n; i++) L->ncpu += k->ev[i].kind == KT_CPU;
  L->cpu = calloc(L->ncpu ? L->ncpu : 1, sizeof *L->cpu);
  if (!L->cpu) return oom(L);
  size_t m = 0;
  for (size_t i = 0; i < k->n; i++)
    if (k->ev[i].kind == KT_CPU) L->cpu[m++].ev = (uint32_t)i;
  qsort_r(L->cpu, L->ncpu, sizeof *L->cpu, cmp_cpu, k);
  uint32_t *stack = malloc((L->ncpu ? L->ncpu : 1) * sizeof *stack);
  if (!stack) return oom(L);
  for (size_t a = 0; a < L->ncpu;) {
    size_t b = a;
    while (b < L->ncpu && EV(L, (uint32_t)b)->tid == EV(L, (uint32_t)a)->tid) b++;
    thread *t = realloc(L->thr, (L->nthr + 1) * sizeof *t);
    if (!t) {
      free(stack);
      return oom(L);
    }
    L->thr = t;
    L->thr[L->nthr++] = (thread){EV(L, (uint32_t)a)->tid, (uint32_t)a, (uint32_t)(b - a)};
    size_t sp = 0;
    for (size_t j = a; j < b; j++) {
      const kt_event *e = EV(L, (uint32_t)j);
      L->cpu[j].parent = NONE;
      L->cpu[j].host = NONE;
      L->cpu[j].covered = 0;
      L->cpu[j].last_end = e->ts;
      while (sp && END(EV(L, stack[sp - 1])) <= e->ts) sp--;
      for (size_t s = sp; s > 0; s--) {
        uint32_t p = stack[s - 1];
        if (END(e) <= END(EV(L, p))) {
          L->cpu[j].parent = p;
          cpuop *P = &L->cpu[p];
          double from = e->ts > P->last_end ? e->ts : P->last_end;
          if (END(e) > from) P->covered += END(e) - from;
          if (END(e) > P->last_end) P->last_end = END(e);
          break;
        }
      }
      stack[sp++] = (uint32_t)j;
    }
    for (size_t j = a; j < b; j++) {
      double x = EV(L, (uint32_t)j)->dur - L->cpu[j].covered;
      L->cpu[j].excl = x > 0 ? x : 0;
    }
    a = b;
  }
  free(stack);
  L->rep->kineto_cpu_ops = L->ncpu;
  return 0;
}

static const thread *find_thread(const linker *L, int64_t tid) {
  for (size_t i = 0; i < L->nthr; i++)
    if (L->thr[i].tid == tid) return &L->thr[i];
  return NULL;
}

/* Last op of thread t starting at or before ts (cpu[] index), or NONE. */
static uint32_t last_before(const linker *L, const thread *t, double ts, int strict) {
  uint32_t lo = 0, hi = t->n;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    double x = EV(L, t->start + mid)->ts;
    if (strict ? x < ts : x <= ts) lo = mid + 1;
    else hi = mid;
  }
  return lo ? t->start + lo - 1 : NONE;
}

/* The innermost op of thread t running at ts, else the last one that
 * started before it (the reference's rule); NONE if none started. */
static uint32_t op_at(const linker *L, const thread *t, double ts, int *inside) {
  uint32_t j = last_before(L, t, ts, 0);
  *inside = 0;
  for (uint32_t a = j; a != NONE; a = L->cpu[a].parent)
    if (END(EV(L, a)) >= ts) {
      *inside = 1;
      return a;
    }
  return j;
}

/* nearest enclosing op (itself included) that has a host op */
static uint32_t matched_up(const linker *L, uint32_t c) {
  for (; c != NONE; c = L->cpu[c].parent)
    if (L->cpu[c].host != NONE) return c;
  return NONE;
}

/* ------------------------------------------------------------ matching */

static int is_root(const hostet *h, size_t i) {
  const ht_node *x = &h->nodes[i];
  if (x->flags & HT_THREAD_ROOT) return 1;
  if ((x->flags & HT_PARENT) && x->parent == x->id) return 1;
  const char *nm = strtab_str(&h->strings, x->name);
  return strcmp(nm, "[pytorch|profiler|execution_trace|process]") == 0 ||
         strcmp(nm, "[pytorch|profiler|execution_graph|process]") == 0;
}

/* The first of a[0..m) (sorted by key) whose key is not below key: with
 * duplicate keys, the earliest of the stable sort. */
static size_t kv_lower_bound(const store_kv *a, size_t m, uint64_t key) {
  size_t lo = 0, hi = m;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (a[mid].k < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static int lookup(const store_kv *a, size_t m, uint64_t key, uint32_t *out) {
  size_t lo = kv_lower_bound(a, m, key);
  if (lo < m && a[lo].k == key) {
    *out = a[lo].v;
    return 1;
  }
  return 0;
}

static void do_match(linker *L, uint32_t host, uint32_t c) {
  L->k_of_host[host] = c;
  L->cpu[c].host = host;
}

static int match_by_rf(linker *L) {
  const hostet *h = L->h;
  store_kv *a = malloc((L->ncpu ? L->ncpu : 1) * sizeof *a);
  if (!a) return oom(L);
  size_t m = 0;
  for (size_t c = 0; c < L->ncpu; c++)
    if (EV(L, (uint32_t)c)->flags & KT_HAS_RF) a[m].k = (uint64_t)EV(L, (uint32_t)c)->rf_id, a[m++].v = (uint32_t)c;
  if (store_sort_kv(a, m)) {
    free(a);
    return oom(L);
  }
  uint64_t names_differ = 0;
  for (size_t i = 0; i < h->n; i++) {
    const ht_node *x = &h->nodes[i];
    if (is_root(h, i) || !(x->flags & (HT_ATTR0 << HT_A_RF_ID))) continue;
    uint32_t c;
    if (lookup(a, m, (uint64_t)x->a[HT_A_RF_ID], &c) && L->cpu[c].host == NONE) {
      do_match(L, (uint32_t)i, c);
      if (L->kname[EV(L, c)->name] != x->name) names_differ++;
    }
  }
  free(a);
  if (names_differ)
    warnf(L, L->k->path, "%llu host ops matched by record function id have a different name in the Kineto trace",
          (unsigned long long)names_differ);
  return 0;
}

/* Aligns host ops hs[0..hn) (id order) with Kineto ops ks[0..kn) (start
 * order) by name, skipping what has no partner within a window. Returns
 * the number of pairs; records them when `record`. */
static size_t align(linker *L, const uint32_t *hs, size_t hn, uint32_t kstart, size_t kn, int record) {
  enum { WIN = 48 };
  const hostet *h = L->h;
  size_t i = 0, j = 0, pairs = 0;
#define HN(x) (h->nodes[hs[x]].name)
#define KN(x) (L->kname[EV(L, kstart + (uint32_t)(x))->name])
  while (i < hn && j < kn) {
    if (HN(i) == KN(j)) {
      if (record) do_match(L, hs[i], kstart + (uint32_t)j);
      pairs++, i++, j++;
      continue;
    }
    size_t skip_k = 0, skip_h = 0;
    for (size_t d = 1; d <= WIN; d++) {
      if (j + d < kn && HN(i) == KN(j + d)) {
        skip_k = d;
        break;
      }
      if (i + d < hn && HN(i + d) == KN(j)) {
        skip_h = d;
        break;
      }
    }
    if (skip_k) j += skip_k;
    else if (skip_h) i += skip_h;
    else i++, j++;
  }
#undef HN
#undef KN
  return pairs;
}

typedef struct hgroup {
  int64_t tid;
  uint32_t *v;
  size_t n;
} hgroup;

static int match_by_alignment(linker *L) {
  const hostet *h = L->h;
  /* host ops per host thread, in id order */
  store_kv *a = malloc((h->n ? h->n : 1) * sizeof *a);
  if (!a) return oom(L);
  size_t m = 0;
  for (size_t i = 0; i < h->n; i++)
    if (!is_root(h, i)) a[m].k = h->nodes[i].id, a[m++].v = (uint32_t)i;
  if (store_sort_kv(a, m)) {
    free(a);
    return oom(L);
  }
  hgroup *g = NULL;
  size_t ng = 0;
  int rc = 0;
  for (size_t q = 0; q < m && !rc; q++) {
    const ht_node *x = &h->nodes[a[q].v];
    int64_t tid = (x->flags & (HT_ATTR0 << HT_A_TID)) ? x->a[HT_A_TID] : 0;
    size_t j = 0;
    while (j < ng && g[j].tid != tid) j++;
    if (j == ng) {
      hgroup *t = realloc(g, (ng + 1) * sizeof *t);
      if (!t) {
        rc = oom(L);
        break;
      }
      g = t;
      g[ng++] = (hgroup){tid, NULL, 0};
      g[j].v = malloc(m * sizeof *g[j].v);
      if (!g[j].v) {
        rc = oom(L);
        break;
      }
    }
    g[j].v[g[j].n++] = a[q].v;
  }
  free(a);
  /* score every (host thread, Kineto thread) pair; assign greedily */
  size_t *score = rc ? NULL : calloc(ng * (L->nthr ? L->nthr : 1) + 1, sizeof *score);
  if (!rc && !score) rc = oom(L);
  for (size_t x = 0; x < ng && !rc; x++)
    for (size_t y = 0; y < L->nthr; y++) score[x * L->nthr + y] = align(L, g[x].v, g[x].n, L->thr[y].start, L->thr[y].n, 0);
  uint8_t *used_h = rc ? NULL : calloc(ng + 1, 1), *used_k = rc ? NULL : calloc(L->nthr + 1, 1);
  if (!rc && (!used_h || !used_k)) rc = oom(L);
  while (!rc) {
    size_t best = 0, bx = 0, by = 0;
    for (size_t x = 0; x < ng; x++)
      for (size_t y = 0; y < L->nthr; y++)
        if (!used_h[x] && !used_k[y] && score[x * L->nthr + y] > best) best = score[x * L->nthr + y], bx = x, by = y;
    if (!best) break;
    used_h[bx] = used_k[by] = 1;
    align(L, g[bx].v, g[bx].n, L->thr[by].start, L->thr[by].n, 1);
  }
  free(used_h), free(used_k), free(score);
  for (size_t x = 0; x < ng; x++) free(g[x].v);
  free(g);
  return rc;
}

/* ---------------------------------------------------------- device ops */

static int link_gpu(linker *L) {
  kineto *k = L->k;
  store_kv *rt = malloc((k->n ? k->n : 1) * sizeof *rt), *fl = malloc((k->n ? k->n : 1) * sizeof *fl);
  L->gpu = malloc((k->n ? k->n : 1) * sizeof *L->gpu);
  if (!rt || !fl || !L->gpu) {
    free(rt), free(fl);
    return oom(L);
  }
  size_t nrt = 0, nfl = 0;
  for (size_t i = 0; i < k->n; i++) {
    const kt_event *e = &k->ev[i];
    if (e->kind == KT_RUNTIME && (e->flags & KT_HAS_CORR)) rt[nrt].k = (uint64_t)e->correlation, rt[nrt++].v = (uint32_t)i;
    if (e->kind == KT_FLOW_S) fl[nfl].k = (uint64_t)e->flow_id, fl[nfl++].v = (uint32_t)i;
  }
  if (store_sort_kv(rt, nrt) || store_sort_kv(fl, nfl)) {
    free(rt), free(fl);
    return oom(L);
  }
  uint64_t dup = 0;
  for (size_t i = 1; i < nrt; i++) dup += rt[i].k == rt[i - 1].k;
  if (dup) warnf(L, k->path, "%llu runtime calls repeat a correlation id; the first one is used", (unsigned long long)dup);
  for (size_t i = 0; i < k->n; i++) {
    const kt_event *g = &k->ev[i];
    if (g->kind != KT_GPU) continue;
    L->rep->kineto_gpu_ops++;
    uint64_t key = (uint64_t)((g->flags & KT_HAS_CORR) ? g->correlation : g->ext_id);
    uint32_t src;
    int have = (g->flags & (KT_HAS_CORR | KT_HAS_EXT)) && (lookup(rt, nrt, key, &src) || lookup(fl, nfl, key, &src));
    if (!have) {
      L->rep->gpu_no_launcher++;
      continue;
    }
    const kt_event *launch = &k->ev[src];
    const thread *t = find_thread(L, launch->tid);
    int inside = 0;
    uint32_t c = t ? op_at(L, t, launch->ts, &inside) : NONE;
    if (c != NONE && strcasestr(strtab_str(&k->strings, g->name), "nccl") &&
        strcmp(strtab_str(&k->strings, EV(L, c)->name), "nccl:coalesced") == 0) {
      /* as the reference: the op before the coalescing block */
      uint32_t j = c;
      while (j > t->start && strcmp(strtab_str(&k->strings, EV(L, j)->name), "nccl:coalesced") == 0) j--;
      c = strcmp(strtab_str(&k->strings, EV(L, j)->name), "nccl:coalesced") == 0 ? NONE : j;
    }
    if (c == NONE) {
      L->rep->gpu_no_cpu_op++;
      continue;
    }
    uint32_t mc = matched_up(L, c);
    if (mc == NONE) {
      L->rep->gpu_unmatched_cpu++;
      continue;
    }
    L->gpu[L->ngpu++] = (gpuop){(uint32_t)i, L->cpu[mc].host, 0};
  }
  free(rt), free(fl);
  L->rep->gpu_linked = L->ngpu;
  if (L->rep->gpu_no_launcher)
    warnf(L, k->path, "%llu device ops have no runtime call or flow arrow with their correlation id; left out",
          (unsigned long long)L->rep->gpu_no_launcher);
  if (L->rep->gpu_no_cpu_op)
    warnf(L, k->path, "%llu device ops were launched outside any CPU op; left out",
          (unsigned long long)L->rep->gpu_no_cpu_op);
  if (L->rep->gpu_unmatched_cpu)
    warnf(L, k->path, "%llu device ops were launched by CPU ops that have no host op; left out",
          (unsigned long long)L->rep->gpu_unmatched_cpu);
  return 0;
}

/* ---------------------------------------------------- dependencies */

static void inter_thread(linker *L) {
  if (L->nthr < 2) return;
  double gap = L->opt->thread_gap_us > 0 ? L->opt->thread_gap_us : 1000;
  for (size_t t = 0; t < L->nthr; t++) {
    const thread *T = &L->thr[t];
    uint32_t target = NONE;
    double prev_end = 0;
    for (uint32_t j = T->start; j < T->start + T->n; j++) {
      const kt_event *e = EV(L, j);
      if (j == T->start || e->ts - prev_end > gap) {
        /* the latest op on another thread starting before this group */
        target = NONE;
        double best = 0;
        for (size_t o = 0; o < L->nthr; o++) {
          if (o == t) continue;
          uint32_t c = last_before(L, &L->thr[o], e->ts, 1);
          for (int steps = 0; c != NONE && steps < 256 && L->cpu[c].host == NONE; steps++)
            c = c > L->thr[o].start ? c - 1 : NONE;
          if (c != NONE && L->cpu[c].host != NONE && (target == NONE || EV(L, c)->ts > best))
            target = L->cpu[c].host, best = EV(L, c)->ts;
        }
      }
      prev_end = END(e);
      uint32_t hst = L->cpu[j].host;
      if (hst != NONE && target != NONE && target != hst) {
        L->itd[hst] = target;
        L->rep->inter_thread_deps++;
      }
    }
  }
}

static int sync_add(linker *L, uint32_t host, uint32_t gpu) {
  for (size_t i = L->nsync; i > 0 && i + 64 > L->nsync; i--)
    if (L->sync[i - 1].host == host && L->sync[i - 1].gpu == gpu) return 0;
  if (L->nsync == L->capsync) {
    size_t cap = L->capsync ? L->capsync * 2 : 64;
    void *s = realloc(L->sync, cap * sizeof *L->sync);
    if (!s) return -1;
    L->sync = s;
    L->capsync = cap;
  }
  L->sync[L->nsync].host = host;
  L->sync[L->nsync].gpu = gpu;
  L->nsync++;
  L->rep->sync_deps++;
  return 0;
}

static int cmp_gpu_stream(const void *a, const void *b, void *ctx) {
  const kineto *k = ctx;
  const kt_event *x = &k->ev[((const gpuop *)a)->ev], *y = &k->ev[((const gpuop *)b)->ev];
  if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
  if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
  if (END(x) != END(y)) return END(x) < END(y) ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

static int is_sync_call(const char *name, int *stream_only) {
  *stream_only = strstr(name, "StreamSynchronize") != NULL;
  return strcmp(name, "cudaDeviceSynchronize") == 0 || strcmp(name, "cudaStreamSynchronize") == 0 ||
         strcmp(name, "cudaEventSynchronize") == 0 || strcmp(name, "hipDeviceSynchronize") == 0 ||
         strcmp(name, "hipStreamSynchronize") == 0 || strcmp(name, "hipEventSynchronize") == 0 ||
         strcmp(name, "cuCtxSynchronize") == 0 || strcmp(name, "cuStreamSynchronize") == 0;
}

/* A CPU-side synchronisation call that ends at t waits for the last device
 * op that ended by t on the synchronised stream(s); the op that waits is
 * the CPU op around the call if it started after that device op, else the
 * first CPU op of the thread starting after t (so that the dependency can
 * never point backwards along the thread's chain). */
static int sync_deps(linker *L) {
  kineto *k = L->k;
  if (!L->ngpu) return 0;
  /* device ops grouped by (device, stream), in order of end */
  gpuop *byend = malloc(L->ngpu * sizeof *byend);
  uint32_t *pos = malloc(L->ngpu * sizeof *pos); /* byend index -> gpu[] index */
  if (!byend || !pos) {
    free(byend), free(pos);
    return oom(L);
  }
  for (size_t i = 0; i < L->ngpu; i++) byend[i] = L->gpu[i], byend[i].pre_sort = (uint32_t)i;
  qsort_r(byend, L->ngpu, sizeof *byend, cmp_gpu_stream, k);
  for (size_t i = 0; i < L->ngpu; i++) pos[i] = byend[i].pre_sort;
  /* stream ranges */
  size_t ns = 0;
  uint32_t *sstart = malloc((L->ngpu + 1) * sizeof *sstart);
  if (!sstart) {
    free(byend), free(pos);
    return oom(L);
  }
  for (size_t i = 0; i < L->ngpu; i++) {
    const kt_event *e = &k->ev[byend[i].ev];
    if (!i || e->pid != k->ev[byend[i - 1].ev].pid || e->tid != k->ev[byend[i - 1].ev].tid) sstart[ns++] = (uint32_t)i;
  }
  sstart[ns] = (uint32_t)L->ngpu;
  /* last device op each (thread, stream) already waited for */
  typedef struct seen { int64_t tid; size_t stream; uint32_t gpu; } seen;
  seen *sv = NULL;
  size_t nsv = 0;
  int rc = 0;
  for (size_t r = 0; r < k->n && !rc; r++) {
    const kt_event *e = &k->ev[r];
    if (e->kind != KT_RUNTIME) continue;
    int stream_only;
    if (!is_sync_call(strtab_str(&k->strings, e->name), &stream_only)) continue;
    double t = END(e);
    const thread *T = find_thread(L, e->tid);
    if (!T) continue;
    for (size_t s = 0; s < ns && !rc; s++) {
      const kt_event *first = &k->ev[byend[sstart[s]].ev];
      if (stream_only && (e->flags & KT_HAS_STREAM) && first->tid != e->stream) continue;
      /* last op of stream s ending by t */
      uint32_t lo = sstart[s], hi = sstart[s + 1];
      while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (END(&k->ev[byend[mid].ev]) <= t) lo = mid + 1;
        else hi = mid;
      }
      if (lo == sstart[s]) continue;
      uint32_t gi = pos[lo - 1];
      const kt_event *g = &k->ev[L->gpu[gi].ev];
      size_t q = 0;
      while (q < nsv && !(sv[q].tid == e->tid && sv[q].stream == s)) q++;
      if (q < nsv && sv[q].gpu == gi) continue; /* already waited for */
      /* who waits */
      int inside;
      uint32_t c = op_at(L, T, e->ts, &inside);
      uint32_t mc = inside ? matched_up(L, c) : NONE;
      uint32_t waiter = NONE;
      if (mc != NONE && EV(L, mc)->ts > g->ts) {
        waiter = L->cpu[mc].host;
      } else {
        uint32_t j = last_before(L, T, t, 1);
        j = j == NONE ? T->start : j + 1;
        for (; j < T->start + T->n; j++)
          if (EV(L, j)->ts >= t && L->cpu[j].host != NONE) break;
        if (j < T->start + T->n) waiter = L->cpu[j].host;
      }
      if (waiter == NONE) {
        L->rep->sync_unplaced++;
        continue;
      }
      if (q == nsv) {
        seen *x = realloc(sv, (nsv + 1) * sizeof *x);
        if (!x) {
          rc = oom(L);
          break;
        }
        sv = x;
        sv[nsv++] = (seen){e->tid, s, gi};
      } else {
        sv[q].gpu = gi;
      }
      if (sync_add(L, waiter, gi)) rc = oom(L);
    }
  }
  free(sv), free(byend), free(pos), free(sstart);
  return rc;
}

/* --------------------------------------------------------------- output */

static int flush(outfile *f, ibuf *b, chakra_error *err, int force) {
  if (b->oom) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  if (!force && b->n < (1u << 20)) return 0;
  int rc = outfile_write(f, b->p, b->n, err);
  b->n = 0;
  return rc;
}

static const char *link_schema_out(const hostet *h) {
  /* the 1.0.1 layout is rewritten in the nested one */
  return strcmp(h->schema, "1.0.1") == 0 ? "1.0.2-chakra.0.0.4" : h->schema;
}

static int cmp_gpu_host(const void *a, const void *b, void *ctx) {
  const kineto *k = ctx;
  const gpuop *x = a, *y = b;
  if (x->host != y->host) return x->host < y->host ? -1 : 1;
  const kt_event *ex = &k->ev[x->ev], *ey = &k->ev[y->ev];
  if (ex->ts != ey->ts) return ex->ts < ey->ts ? -1 : 1;
  return ex->index < ey->index ? -1 : ex->index > ey->index;
}

static int write_linked(linker *L, const char *out_path) {
  const hostet *h = L->h;
  const kineto *k = L->k;
  chakra_error *err = L->err;
  size_t n = h->n;
  /* order: host nodes by id, each followed by its device ops by start */
  store_kv *a = malloc((n ? n : 1) * sizeof *a);
  uint64_t *new_id = malloc((n ? n : 1) * sizeof *new_id);
  uint32_t *gfirst = malloc((n + 1) * sizeof *gfirst);
  uint64_t *gpu_new = malloc((L->ngpu ? L->ngpu : 1) * sizeof *gpu_new);
  int rc = 0;
  if (!a || !new_id || !gfirst || !gpu_new) rc = oom(L);
  if (!rc) {
    for (size_t i = 0; i < n; i++) a[i].k = h->nodes[i].id, a[i].v = (uint32_t)i;
    if (store_sort_kv(a, n)) rc = oom(L);
  }
  /* Renumbering would hide them; convert refuses them too. */
  for (size_t q = 1; !rc && q < n; q++)
    if (a[q].k == a[q - 1].k) {
      uint64_t o1 = h->nodes[a[q - 1].v].offset, o2 = h->nodes[a[q].v].offset;
      rc = chakra_error_set(err, CHAKRA_EFORMAT, "%s: duplicate node id %llu (bytes %llu and %llu)", h->path,
                            (unsigned long long)a[q].k, (unsigned long long)(o1 < o2 ? o1 : o2),
                            (unsigned long long)(o1 < o2 ? o2 : o1));
    }
  /* sync pairs refer to gpu[] indexes: remember them across the sort */
  uint32_t *gpu_pos = NULL;
  if (!rc) {
    for (size_t i = 0; i < L->ngpu; i++) L->gpu[i].pre_sort = (uint32_t)i;
    qsort_r(L->gpu, L->ngpu, sizeof *L->gpu, cmp_gpu_host, (void *)k);
    gpu_pos = malloc((L->ngpu ? L->ngpu : 1) * sizeof *gpu_pos);
    if (!gpu_pos) rc = oom(L);
  }
  if (!rc) {
    for (size_t i = 0; i < L->ngpu; i++) gpu_pos[L->gpu[i].pre_sort] = (uint32_t)i;
    for (size_t i = 0; i <= n; i++) gfirst[i] = 0;
    for (size_t i = 0; i < L->ngpu; i++) gfirst[L->gpu[i].host + 1]++;
    for (size_t i = 0; i < n; i++) gfirst[i + 1] += gfirst[i];
    uint64_t next = 0;
    for (size_t q = 0; q < n; q++) {
      uint32_t i = a[q].v;
      new_id[i] = next++;
      for (uint32_t g = gfirst[i]; g < gfirst[i + 1]; g++) gpu_new[g] = next++;
    }
  }
  /* sync deps per host node (sorted by host) */
  store_kv *sy = NULL;
  if (!rc && L->nsync) {
    sy = malloc(L->nsync * sizeof *sy);
    if (!sy) rc = oom(L);
    for (size_t i = 0; !rc && i < L->nsync; i++) sy[i].k = L->sync[i].host, sy[i].v = gpu_pos[L->sync[i].gpu];
    if (!rc && store_sort_kv(sy, L->nsync)) rc = oom(L);
  }
  /* parents that are not in the trace get fresh ids, as the reference
   * does: miss[j], in order of first use, is numbered n + ngpu + j */
  uint64_t *miss = NULL;
  size_t nmiss = 0;
  outfile *f = NULL;
  if (!rc) rc = outfile_open(&f, out_path, outfile_name_is_gzip(out_path), err);
  ibuf b = {0};
  if (!rc) {
    ibuf_puts(&b, "{\"schema\":");
    const char *sc = link_schema_out(h);
    json_str(&b, (const unsigned char *)sc, strlen(sc));
    if (strcmp(sc, h->schema) != 0) {
      ibuf_puts(&b, ",\"source_schema\":");
      json_str(&b, (const unsigned char *)h->schema, strlen(h->schema));
    }
    if (h->has_pid) ibuf_puts(&b, ",\"pid\":"), ibuf_i64(&b, h->pid);
    if (h->has_time) ibuf_puts(&b, ",\"time\":"), json_str(&b, (const unsigned char *)h->time, strlen(h->time));
    if (h->has_start_ts) ibuf_puts(&b, ",\"start_ts\":"), ibuf_i64(&b, h->start_ts);
    if (h->top_extra_len) ibuf_putc(&b, ','), ibuf_put(&b, h->top_extra, h->top_extra_len);
    ibuf_puts(&b, ",\"nodes\":[\n");
  }
  for (size_t q = 0; q < n && !rc; q++) {
    uint32_t i = a[q].v;
    const ht_node *x = &h->nodes[i];
    const char *nm = strtab_str(&h->strings, x->name);
    if (q) ibuf_put(&b, ",\n", 2);
    ibuf_puts(&b, "{\"id\":");
    ibuf_u64(&b, new_id[i]);
    ibuf_puts(&b, ",\"name\":");
    json_str(&b, (const unsigned char *)nm, strlen(nm));
    ibuf_puts(&b, ",\"ctrl_deps\":");
    uint64_t pid;
    uint32_t p = NONE;
    if (x->flags & HT_PARENT) lookup(a, n, x->parent, &p);
    if (p != NONE) {
      pid = new_id[p];
    } else {
      size_t j = 0;
      while (j < nmiss && miss[j] != x->parent) j++;
      if (j == nmiss) {
        uint64_t *t = realloc(miss, (nmiss + 1) * sizeof *t);
        if (!t) {
          rc = oom(L);
          break;
        }
        miss = t;
        miss[nmiss++] = x->parent;
      }
      pid = (uint64_t)n + L->ngpu + j;
      L->rep->missing_parents++;
    }
    ibuf_u64(&b, pid);
    ibuf_putc(&b, ',');
    ibuf_put(&b, x->blob, x->blob_len);
    uint32_t c = L->k_of_host[i];
    if (c != NONE) {
      const kt_event *e = EV(L, c);
      ibuf_puts(&b, ",\"inclusive_dur\":");
      json_double(&b, e->dur);
      ibuf_puts(&b, ",\"exclusive_dur\":");
      json_double(&b, L->cpu[c].excl);
      ibuf_puts(&b, ",\"ts\":");
      json_double(&b, e->ts);
      ibuf_puts(&b, ",\"inter_thread_dep\":");
      if (L->itd[i] != NONE) ibuf_u64(&b, new_id[L->itd[i]]);
      else ibuf_puts(&b, "null");
    }
    size_t sp = kv_lower_bound(sy, L->nsync, i);
    if (sp < L->nsync && sy[sp].k == i) {
      ibuf_puts(&b, ",\"sync_dep\":[");
      for (int first = 1; sp < L->nsync && sy[sp].k == i; sp++, first = 0) {
        if (!first) ibuf_putc(&b, ',');
        ibuf_u64(&b, gpu_new[sy[sp].v]);
      }
      ibuf_putc(&b, ']');
    }
    ibuf_putc(&b, '}');
    for (uint32_t g = gfirst[i]; g < gfirst[i + 1]; g++) {
      const kt_event *e = &k->ev[L->gpu[g].ev];
      const char *gn = strtab_str(&k->strings, e->name), *cat = strtab_str(&k->strings, e->cat);
      ibuf_puts(&b, ",\n{\"id\":");
      ibuf_u64(&b, gpu_new[g]);
      ibuf_puts(&b, ",\"name\":");
      json_str(&b, (const unsigned char *)gn, strlen(gn));
      ibuf_puts(&b, ",\"ctrl_deps\":");
      ibuf_u64(&b, new_id[i]);
      ibuf_putc(&b, ',');
      ibuf_put(&b, x->blob, x->blob_len);
      ibuf_puts(&b, ",\"cat\":");
      json_str(&b, (const unsigned char *)cat, strlen(cat));
      ibuf_puts(&b, ",\"ph\":\"X\",\"inclusive_dur\":");
      json_double(&b, e->dur);
      ibuf_puts(&b, ",\"exclusive_dur\":");
      json_double(&b, e->dur);
      ibuf_puts(&b, ",\"ts\":");
      json_double(&b, e->ts);
      ibuf_puts(&b, ",\"stream\":");
      ibuf_i64(&b, (e->flags & KT_HAS_STREAM) ? e->stream : e->tid);
      ibuf_puts(&b, ",\"device\":");
      ibuf_i64(&b, (e->flags & KT_HAS_DEVICE) ? e->device : e->pid);
      if (e->pg_name) {
        const char *pg = strtab_str(&k->strings, e->pg_name);
        ibuf_puts(&b, ",\"pg_name\":");
        json_str(&b, (const unsigned char *)pg, strlen(pg));
      }
      ibuf_putc(&b, '}');
    }
    rc = flush(f, &b, err, 0);
  }
  if (!rc) {
    ibuf_puts(&b, "\n]");
    if (h->has_finish_ts) ibuf_puts(&b, ",\"finish_ts\":"), ibuf_i64(&b, h->finish_ts);
    ibuf_puts(&b, "}\n");
    rc = flush(f, &b, err, 1);
  }
  ibuf_free(&b);
  free(a), free(new_id), free(gfirst), free(gpu_new), free(gpu_pos), free(sy), free(miss);
  if (f) {
    if (rc) outfile_discard(f);
    else rc = outfile_commit(f, err);
  }
  if (!rc && L->rep->missing_parents)
    warnf(L, h->path, "%llu nodes name a parent id that is not in the trace (given fresh ids)",
          (unsigned long long)L->rep->missing_parents);
  return rc;
}

/* ------------------------------------------------------------------ API */

int chakra_link(const char *host_path, const char *kineto_path, const char *out_path,
                const chakra_link_options *opt, chakra_link_report *rep, chakra_error *err) {
  chakra_link_options defaults = {.rank = -1};
  chakra_link_report local;
  chakra_error err_local; /* the readers and writers below copy messages through err */
  if (!err) err = &err_local;
  if (!opt) opt = &defaults;
  if (!rep) rep = &local;
  memset(rep, 0, sizeof *rep);
  rep->rank = -1;
  linker L = {.opt = opt, .rep = rep, .err = err};
  hostet_options ho = {.mode = HT_MODE_LINK, .versions = HT_VERSIONS_KNOWN, .threads = opt->threads,
                       .diag = opt->diag, .diag_ctx = opt->diag_ctx};
  int rc = hostet_read(&L.h, host_path, &ho, err);
  if (!rc) rc = kineto_read(&L.k, kineto_path, err);
  if (!rc) {
    for (size_t i = 0; i < L.h->n; i++)
      if (L.h->nodes[i].flags & HT_GPU) {
        char where[96];
        hostet_where(L.h, i, where, sizeof where);
        rc = chakra_error_set(err, CHAKRA_EFORMAT, "%s: %s has a 'cat': this is already a linked trace", host_path, where);
        break;
      }
  }
  if (!rc) {
    if (opt->rank >= 0 && L.k->has_rank && L.k->rank != opt->rank)
      rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: the trace is of rank %lld, not of rank %lld (option rank)", kineto_path,
                            (long long)L.k->rank, (long long)opt->rank);
    rep->rank = opt->rank >= 0 ? opt->rank : L.k->has_rank ? L.k->rank : -1;
  }
  if (!rc) {
    L.k_of_host = malloc((L.h->n ? L.h->n : 1) * sizeof *L.k_of_host);
    L.itd = malloc((L.h->n ? L.h->n : 1) * sizeof *L.itd);
    L.kname = calloc((size_t)L.k->strings.n + 1, sizeof *L.kname);
    if (!L.k_of_host || !L.itd || !L.kname) rc = oom(&L);
  }
  if (!rc) {
    for (size_t i = 0; i < L.h->n; i++) L.k_of_host[i] = NONE, L.itd[i] = NONE;
    for (uint32_t s = 1; s <= L.k->strings.n; s++)
      L.kname[s] = strtab_find(&L.h->strings, L.k->strings.str[s], L.k->strings.len[s]);
    rc = build_cpu(&L);
  }
  if (!rc) {
    int have_rf = 0;
    for (size_t c = 0; c < L.ncpu && !have_rf; c++) have_rf = (EV(&L, (uint32_t)c)->flags & KT_HAS_RF) != 0;
    rep->by_record_function_id = have_rf;
    rc = have_rf ? match_by_rf(&L) : match_by_alignment(&L);
  }
  if (!rc) {
    for (size_t i = 0; i < L.h->n; i++) {
      if (is_root(L.h, i)) continue;
      rep->host_ops++;
      if (L.k_of_host[i] != NONE) rep->matched++;
    }
    rep->unmatched_host = rep->host_ops - rep->matched;
    rep->unmatched_kineto = rep->kineto_cpu_ops - rep->matched;
    if (rep->unmatched_host * 100 > rep->host_ops && !opt->allow_partial)
      rc = chakra_error_set(err, CHAKRA_EFORMAT,
                            "%s: %llu of %llu host ops have no op in %s (more than 1%%): the traces are not of the "
                            "same run, or the profiler saw only part of it (option allow_partial links anyway)",
                            host_path, (unsigned long long)rep->unmatched_host, (unsigned long long)rep->host_ops,
                            kineto_path);
    else if (rep->unmatched_host)
      warnf(&L, host_path, "%llu of %llu host ops have no Kineto op (no timing)",
            (unsigned long long)rep->unmatched_host, (unsigned long long)rep->host_ops);
  }
  if (!rc) rc = link_gpu(&L);
  if (!rc) inter_thread(&L);
  if (!rc) rc = sync_deps(&L);
  if (!rc) rc = write_linked(&L, out_path);
  free(L.cpu), free(L.thr), free(L.k_of_host), free(L.kname), free(L.gpu), free(L.itd), free(L.sync);
  kineto_free(L.k);
  hostet_free(L.h);
  return rc;
}
