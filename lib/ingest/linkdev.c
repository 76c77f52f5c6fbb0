/* linkdev.c - device ops and dependencies for chakra link; see linkdev.h. */
#include "linkdev.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "linkcpu.h"
#include "../util/vec.h"

int link_dev_attach(linker *L) {
  kineto *k = L->k;
  store_kv *rt = malloc((k->n ? k->n : 1) * sizeof *rt), *fl = malloc((k->n ? k->n : 1) * sizeof *fl);
  L->gpu = malloc((k->n ? k->n : 1) * sizeof *L->gpu);
  if (!rt || !fl || !L->gpu) {
    free(rt), free(fl);
    return link_oom(L);
  }
  size_t nrt = 0, nfl = 0;
  for (size_t i = 0; i < k->n; i++) {
    const kt_event *e = &k->ev[i];
    if (e->kind == KT_RUNTIME && (e->flags & KT_HAS_CORR)) rt[nrt].k = (uint64_t)e->correlation, rt[nrt++].v = (uint32_t)i;
    if (e->kind == KT_FLOW_S) fl[nfl].k = (uint64_t)e->flow_id, fl[nfl++].v = (uint32_t)i;
  }
  if (store_sort_kv(rt, nrt) || store_sort_kv(fl, nfl)) {
    free(rt), free(fl);
    return link_oom(L);
  }
  uint64_t dup = 0;
  for (size_t i = 1; i < nrt; i++) dup += rt[i].k == rt[i - 1].k;
  if (dup) link_warnf(L, k->path, "%llu runtime calls repeat a correlation id; the first one is used", (unsigned long long)dup);
  for (size_t i = 0; i < k->n; i++) {
    const kt_event *g = &k->ev[i];
    if (g->kind != KT_GPU) continue;
    L->rep->kineto_gpu_ops++;
    uint64_t key = (uint64_t)((g->flags & KT_HAS_CORR) ? g->correlation : g->ext_id);
    uint32_t src;
    int have = (g->flags & (KT_HAS_CORR | KT_HAS_EXT)) && (store_kv_find(rt, nrt, key, &src) || store_kv_find(fl, nfl, key, &src));
    if (!have) {
      L->rep->gpu_no_launcher++;
      continue;
    }
    const kt_event *launch = &k->ev[src];
    const link_thread *t = link_cpu_thread(L, launch->tid);
    int inside = 0;
    uint32_t c = t ? link_cpu_op_at(L, t, launch->ts, &inside) : LINK_NONE;
    if (c != LINK_NONE && strcasestr(strtab_str(&k->strings, g->name), "nccl") &&
        strcmp(strtab_str(&k->strings, link_ev(L, c)->name), "nccl:coalesced") == 0) {
      /* as the reference: the op before the coalescing block */
      uint32_t j = c;
      while (j > t->start && strcmp(strtab_str(&k->strings, link_ev(L, j)->name), "nccl:coalesced") == 0) j--;
      c = strcmp(strtab_str(&k->strings, link_ev(L, j)->name), "nccl:coalesced") == 0 ? LINK_NONE : j;
    }
    if (c == LINK_NONE) {
      L->rep->gpu_no_cpu_op++;
      continue;
    }
    uint32_t mc = link_cpu_matched_up(L, c);
    if (mc == LINK_NONE) {
      L->rep->gpu_unmatched_cpu++;
      continue;
    }
    L->gpu[L->ngpu++] = (link_gpuop){(uint32_t)i, L->cpu[mc].host, 0};
  }
  free(rt), free(fl);
  L->rep->gpu_linked = L->ngpu;
  if (L->rep->gpu_no_launcher)
    link_warnf(L, k->path, "%llu device ops have no runtime call or flow arrow with their correlation id; left out",
          (unsigned long long)L->rep->gpu_no_launcher);
  if (L->rep->gpu_no_cpu_op)
    link_warnf(L, k->path, "%llu device ops were launched outside any CPU op; left out",
          (unsigned long long)L->rep->gpu_no_cpu_op);
  if (L->rep->gpu_unmatched_cpu)
    link_warnf(L, k->path, "%llu device ops were launched by CPU ops that have no host op; left out",
          (unsigned long long)L->rep->gpu_unmatched_cpu);
  return 0;
}

/* ---------------------------------------------------- dependencies */

void link_dev_inter_thread(linker *L) {
  if (L->nthr < 2) return;
  double gap = L->opt->thread_gap_us > 0 ? L->opt->thread_gap_us : 1000;
  for (size_t t = 0; t < L->nthr; t++) {
    const link_thread *T = &L->thr[t];
    uint32_t target = LINK_NONE;
    double prev_end = 0;
    for (uint32_t j = T->start; j < T->start + T->n; j++) {
      const kt_event *e = link_ev(L, j);
      if (j == T->start || e->ts - prev_end > gap) {
        /* the latest op on another thread starting before this group */
        target = LINK_NONE;
        double best = 0;
        for (size_t o = 0; o < L->nthr; o++) {
          if (o == t) continue;
          uint32_t c = link_cpu_last_before(L, &L->thr[o], e->ts, 1);
          for (int steps = 0; c != LINK_NONE && steps < 256 && L->cpu[c].host == LINK_NONE; steps++)
            c = c > L->thr[o].start ? c - 1 : LINK_NONE;
          if (c != LINK_NONE && L->cpu[c].host != LINK_NONE && (target == LINK_NONE || link_ev(L, c)->ts > best))
            target = L->cpu[c].host, best = link_ev(L, c)->ts;
        }
      }
      prev_end = link_end(e);
      uint32_t hst = L->cpu[j].host;
      if (hst != LINK_NONE && target != LINK_NONE && target != hst) {
        L->itd[hst] = target;
        L->rep->inter_thread_deps++;
      }
    }
  }
}

static int sync_add(linker *L, uint32_t host, uint32_t gpu) {
  for (size_t i = L->nsync; i > 0 && i + 64 > L->nsync; i--)
    if (L->sync[i - 1].host == host && L->sync[i - 1].gpu == gpu) return 0;
  if (VEC_ROOM(L->sync, L->nsync, L->capsync, 1)) return -1;
  L->sync[L->nsync].host = host;
  L->sync[L->nsync].gpu = gpu;
  L->nsync++;
  L->rep->sync_deps++;
  return 0;
}

static int cmp_gpu_stream(const void *a, const void *b, void *ctx) {
  const kineto *k = ctx;
  const kt_event *x = &k->ev[((const link_gpuop *)a)->ev], *y = &k->ev[((const link_gpuop *)b)->ev];
  if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
  if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
  if (link_end(x) != link_end(y)) return link_end(x) < link_end(y) ? -1 : 1;
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
int link_dev_sync(linker *L) {
  kineto *k = L->k;
  if (!L->ngpu) return 0;
  /* device ops grouped by (device, stream), in order of end */
  link_gpuop *byend = malloc(L->ngpu * sizeof *byend);
  uint32_t *pos = malloc(L->ngpu * sizeof *pos); /* byend index -> gpu[] index */
  if (!byend || !pos) {
    free(byend), free(pos);
    return link_oom(L);
  }
  for (size_t i = 0; i < L->ngpu; i++) byend[i] = L->gpu[i], byend[i].pre_sort = (uint32_t)i;
  qsort_r(byend, L->ngpu, sizeof *byend, cmp_gpu_stream, k);
  for (size_t i = 0; i < L->ngpu; i++) pos[i] = byend[i].pre_sort;
  /* stream ranges */
  size_t ns = 0;
  uint32_t *sstart = malloc((L->ngpu + 1) * sizeof *sstart);
  if (!sstart) {
    free(byend), free(pos);
    return link_oom(L);
  }
  for (size_t i = 0; i < L->ngpu; i++) {
    const kt_event *e = &k->ev[byend[i].ev];
    if (!i || e->pid != k->ev[byend[i - 1].ev].pid || e->tid != k->ev[byend[i - 1].ev].tid) sstart[ns++] = (uint32_t)i;
  }
  sstart[ns] = (uint32_t)L->ngpu;
  /* last device op each (thread, stream) already waited for */
  typedef struct seen { int64_t tid; size_t stream; uint32_t gpu; } seen;
  seen *sv = NULL;
  size_t nsv = 0, capsv = 0;
  int rc = 0;
  for (size_t r = 0; r < k->n && !rc; r++) {
    const kt_event *e = &k->ev[r];
    if (e->kind != KT_RUNTIME) continue;
    int stream_only;
    if (!is_sync_call(strtab_str(&k->strings, e->name), &stream_only)) continue;
    double t = link_end(e);
    const link_thread *T = link_cpu_thread(L, e->tid);
    if (!T) continue;
    for (size_t s = 0; s < ns && !rc; s++) {
      const kt_event *first = &k->ev[byend[sstart[s]].ev];
      if (stream_only && (e->flags & KT_HAS_STREAM) && first->tid != e->stream) continue;
      /* last op of stream s ending by t */
      uint32_t lo = sstart[s], hi = sstart[s + 1];
      while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (link_end(&k->ev[byend[mid].ev]) <= t) lo = mid + 1;
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
      uint32_t c = link_cpu_op_at(L, T, e->ts, &inside);
      uint32_t mc = inside ? link_cpu_matched_up(L, c) : LINK_NONE;
      uint32_t waiter = LINK_NONE;
      if (mc != LINK_NONE && link_ev(L, mc)->ts > g->ts) {
        waiter = L->cpu[mc].host;
      } else {
        uint32_t j = link_cpu_last_before(L, T, t, 1);
        j = j == LINK_NONE ? T->start : j + 1;
        for (; j < T->start + T->n; j++)
          if (link_ev(L, j)->ts >= t && L->cpu[j].host != LINK_NONE) break;
        if (j < T->start + T->n) waiter = L->cpu[j].host;
      }
      if (waiter == LINK_NONE) {
        L->rep->sync_unplaced++;
        continue;
      }
      if (q == nsv) {
        seen *x = VEC_PUSH(sv, nsv, capsv);
        if (!x) {
          rc = link_oom(L);
          break;
        }
        *x = (seen){e->tid, s, gi};
      } else {
        sv[q].gpu = gi;
      }
      if (sync_add(L, waiter, gi)) rc = link_oom(L);
    }
  }
  free(sv), free(byend), free(pos), free(sstart);
  return rc;
}
