/* linkmatch.c - host ops matched to Kineto CPU ops; see linkmatch.h. */
#include "linkmatch.h"
#include "../util/vec.h"

#include <stdlib.h>
#include <string.h>

int link_is_host_root(const hostet *h, size_t i) {
  const ht_node *x = &h->nodes[i];
  if (x->flags & HT_THREAD_ROOT) return 1;
  if ((x->flags & HT_PARENT) && x->parent == x->id) return 1;
  const char *nm = strtab_str(&h->strings, x->name);
  return strcmp(nm, "[pytorch|profiler|execution_trace|process]") == 0 ||
         strcmp(nm, "[pytorch|profiler|execution_graph|process]") == 0;
}

static void do_match(linker *L, uint32_t host, uint32_t c) {
  L->k_of_host[host] = c;
  L->cpu[c].host = host;
}

static int match_by_rf(linker *L) {
  const hostet *h = L->h;
  store_kv *a = malloc((L->ncpu ? L->ncpu : 1) * sizeof *a);
  if (!a) return link_oom(L);
  size_t m = 0;
  for (size_t c = 0; c < L->ncpu; c++)
    if (link_ev(L, (uint32_t)c)->flags & KT_HAS_RF) a[m].k = (uint64_t)link_ev(L, (uint32_t)c)->rf_id, a[m++].v = (uint32_t)c;
  if (store_sort_kv(a, m)) {
    free(a);
    return link_oom(L);
  }
  uint64_t names_differ = 0;
  for (size_t i = 0; i < h->n; i++) {
    const ht_node *x = &h->nodes[i];
    if (link_is_host_root(h, i) || !(x->flags & (HT_ATTR0 << HT_A_RF_ID))) continue;
    uint32_t c;
    if (store_kv_find(a, m, (uint64_t)x->a[HT_A_RF_ID], &c) && L->cpu[c].host == LINK_NONE) {
      do_match(L, (uint32_t)i, c);
      if (L->kname[link_ev(L, c)->name] != x->name) names_differ++;
    }
  }
  free(a);
  if (names_differ)
    link_warnf(L, L->k->path, "%llu host ops matched by record function id have a different name in the Kineto trace",
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
#define KN(x) (L->kname[link_ev(L, kstart + (uint32_t)(x))->name])
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
  if (!a) return link_oom(L);
  size_t m = 0;
  for (size_t i = 0; i < h->n; i++)
    if (!link_is_host_root(h, i)) a[m].k = h->nodes[i].id, a[m++].v = (uint32_t)i;
  if (store_sort_kv(a, m)) {
    free(a);
    return link_oom(L);
  }
  hgroup *g = NULL;
  size_t ng = 0, capg = 0;
  int rc = 0;
  for (size_t q = 0; q < m && !rc; q++) {
    const ht_node *x = &h->nodes[a[q].v];
    int64_t tid = (x->flags & (HT_ATTR0 << HT_A_TID)) ? x->a[HT_A_TID] : 0;
    size_t j = 0;
    while (j < ng && g[j].tid != tid) j++;
    if (j == ng) {
      hgroup *t = VEC_PUSH(g, ng, capg);
      if (!t) {
        rc = link_oom(L);
        break;
      }
      *t = (hgroup){tid, NULL, 0};
      g[j].v = malloc(m * sizeof *g[j].v);
      if (!g[j].v) {
        rc = link_oom(L);
        break;
      }
    }
    g[j].v[g[j].n++] = a[q].v;
  }
  free(a);
  /* score every (host thread, Kineto thread) pair; assign greedily */
  size_t *score = rc ? NULL : calloc(ng * (L->nthr ? L->nthr : 1) + 1, sizeof *score);
  if (!rc && !score) rc = link_oom(L);
  for (size_t x = 0; x < ng && !rc; x++)
    for (size_t y = 0; y < L->nthr; y++) score[x * L->nthr + y] = align(L, g[x].v, g[x].n, L->thr[y].start, L->thr[y].n, 0);
  uint8_t *used_h = rc ? NULL : calloc(ng + 1, 1), *used_k = rc ? NULL : calloc(L->nthr + 1, 1);
  if (!rc && (!used_h || !used_k)) rc = link_oom(L);
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

int link_match(linker *L) {
  chakra_link_report *rep = L->rep;
  int have_rf = 0;
  for (size_t c = 0; c < L->ncpu && !have_rf; c++) have_rf = (link_ev(L, (uint32_t)c)->flags & KT_HAS_RF) != 0;
  rep->by_record_function_id = have_rf;
  int rc = have_rf ? match_by_rf(L) : match_by_alignment(L);
  if (rc) return rc;
  for (size_t i = 0; i < L->h->n; i++) {
    if (link_is_host_root(L->h, i)) continue;
    rep->host_ops++;
    if (L->k_of_host[i] != LINK_NONE) rep->matched++;
  }
  rep->unmatched_host = rep->host_ops - rep->matched;
  rep->unmatched_kineto = rep->kineto_cpu_ops - rep->matched;
  if (rep->unmatched_host * 100 > rep->host_ops && !L->opt->allow_partial)
    return chakra_error_set(L->err, CHAKRA_EFORMAT,
                            "%s: %llu of %llu host ops have no op in %s (more than 1%%): the traces are not of the "
                            "same run, or the profiler saw only part of it (option allow_partial links anyway)",
                            L->h->path, (unsigned long long)rep->unmatched_host, (unsigned long long)rep->host_ops,
                            L->k->path);
  if (rep->unmatched_host)
    link_warnf(L, L->h->path, "%llu of %llu host ops have no Kineto op (no timing)",
               (unsigned long long)rep->unmatched_host, (unsigned long long)rep->host_ops);
  return 0;
}
