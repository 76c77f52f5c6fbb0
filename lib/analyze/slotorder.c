/* slotorder.c - orders the communication slot imposes in every run; see slotorder.h. */
#include "slotorder.h"
#include "../util/cmp.h"
#include "../util/vec.h"

#include <stdlib.h>
#include <string.h>

static const uint32_t NONE = UINT32_MAX;

/* The full rule keeps an ancestor bitset per node over the parents of slot
 * nodes and tests every pair of slot nodes; beyond these it falls back to
 * ordering the parentless slot nodes only. */
#define SO_MAX_BITSET_BYTES (32u << 20)
#define SO_MAX_PAIRS (1ull << 26)
#define SO_MAX_EDGES (1u << 21)
#define SO_MAX_SCAN 64 /* orders kept for one node that an implied one is looked for in */

typedef struct edges {
  uint32_t (*v)[2];
  uint32_t n, cap;
} edges;

static int add_edge(edges *e, uint32_t s, uint32_t c) {
  if (e->n == SO_MAX_EDGES) return 0; /* fewer orders: still true ones */
  if (VEC_ROOM(e->v, e->n, e->cap, 1)) return -1;
  e->v[e->n][0] = s;
  e->v[e->n][1] = c;
  e->n++;
  return 0;
}

typedef struct keyed {
  uint64_t id;
  uint32_t i;
} keyed;

/* The slot nodes in ascending id order (the order the simulator prefers). */
static uint32_t slot_nodes(uint32_t n, const uint64_t *id, const uint8_t *in_slot, uint32_t *slot) {
  uint32_t m = 0;
  for (uint32_t i = 0; i < n; i++) m += in_slot[i] != 0;
  keyed *k = malloc((m ? m : 1) * sizeof *k);
  if (!k) return UINT32_MAX;
  m = 0;
  for (uint32_t i = 0; i < n; i++)
    if (in_slot[i]) k[m].id = id[i], k[m++].i = i;
  qsort(k, m, sizeof *k, cmp_u64);
  for (uint32_t j = 0; j < m; j++) slot[j] = k[j].i;
  free(k);
  return m;
}

/* Parents as CSR (the transpose of the children lists). */
static int parents_of(uint32_t n, const uint32_t *child_off, const uint32_t *children, uint32_t **off_out,
                      uint32_t **par_out) {
  size_t e = child_off[n];
  uint32_t *off = calloc((size_t)n + 1, sizeof *off), *par = malloc((e ? e : 1) * sizeof *par);
  uint32_t *fill = malloc((n ? n : 1) * sizeof *fill);
  if (!off || !par || !fill) {
    free(off), free(par), free(fill);
    return -1;
  }
  for (size_t k = 0; k < e; k++) off[children[k] + 1]++;
  for (uint32_t i = 0; i < n; i++) off[i + 1] += off[i];
  memcpy(fill, off, (size_t)n * sizeof *fill);
  for (uint32_t u = 0; u < n; u++)
    for (uint32_t k = child_off[u]; k < child_off[u + 1]; k++) par[fill[children[k]]++] = u;
  free(fill);
  *off_out = off;
  *par_out = par;
  return 0;
}

/* Kahn's order (any tie order will do for ancestor sets). */
static uint32_t *topo_order(uint32_t n, const uint32_t *poff, const uint32_t *child_off, const uint32_t *children) {
  uint32_t *q = malloc((n ? n : 1) * sizeof *q), *rem = malloc((n ? n : 1) * sizeof *rem);
  if (!q || !rem) {
    free(q), free(rem);
    return NULL;
  }
  uint32_t head = 0, tail = 0;
  for (uint32_t i = 0; i < n; i++)
    if (!(rem[i] = poff[i + 1] - poff[i])) q[tail++] = i;
  while (head < tail) {
    uint32_t u = q[head++];
    for (uint32_t k = child_off[u]; k < child_off[u + 1]; k++)
      if (--rem[children[k]] == 0) q[tail++] = children[k];
  }
  free(rem);
  for (uint32_t i = 0; tail < n && i < n; i++) q[tail++] = i; /* a cycle (never here: validated first) */
  return q;
}

static int has_bit(const uint64_t *set, uint32_t b) { return (int)(set[b / 64] >> (b % 64) & 1); }

/* Every parent of s is among the ancestors a (of a node with a higher id). */
static int forced(const uint64_t *a, uint32_t s, const uint32_t *poff, const uint32_t *par, const uint32_t *pidx) {
  uint32_t k = poff[s];
  while (k < poff[s + 1] && has_bit(a, pidx[par[k]])) k++;
  return k == poff[s + 1];
}

/* S before C for every pair where S's parents are all ancestors of C.
 * anc holds, per node, its ancestors among the indexed nodes (pidx: the
 * slot nodes and their parents). An order already implied is left out: S
 * an ancestor of C, or of a slot node kept for C with a higher id. */
static int full_rule(edges *e, uint32_t n, const uint32_t *slot, uint32_t m, const uint32_t *poff,
                     const uint32_t *par, const uint32_t *child_off, const uint32_t *children, const uint32_t *pidx,
                     size_t words) {
  size_t cells = (size_t)n * words;
  uint64_t *anc = calloc(cells ? cells : 1, sizeof *anc);
  uint32_t *topo = topo_order(n, poff, child_off, children);
  int rc = anc && topo ? 0 : -1;
  for (uint32_t t = 0; !rc && t < n; t++) {
    uint32_t u = topo[t];
    const uint64_t *a = anc + (size_t)u * words;
    for (uint32_t k = child_off[u]; k < child_off[u + 1]; k++) {
      uint64_t *b = anc + (size_t)children[k] * words;
      for (size_t w = 0; w < words; w++) b[w] |= a[w];
      if (pidx[u] != NONE) b[pidx[u] / 64] |= 1ull << (pidx[u] % 64);
    }
  }
  for (uint32_t ci = 1; !rc && ci < m; ci++) {
    const uint64_t *a = anc + (size_t)slot[ci] * words;
    uint32_t first = e->n;
    int root_seen = 0; /* parentless ones chain: the nearest stands for all below it */
    for (uint32_t si = ci; !rc && si-- > 0;) {
      uint32_t s = slot[si];
      if (poff[s] == poff[s + 1] && root_seen++) continue;
      if (has_bit(a, pidx[s]) || !forced(a, s, poff, par, pidx)) continue;
      uint32_t j = first, end = e->n - first > SO_MAX_SCAN ? first + SO_MAX_SCAN : e->n;
      for (; j < end; j++) { /* implied by a higher-id one kept for C: S is its ancestor or goes before it */
        const uint64_t *b = anc + (size_t)e->v[j][0] * words;
        if (has_bit(b, pidx[s]) || forced(b, s, poff, par, pidx)) break;
      }
      if (j == end) rc = add_edge(e, s, slot[ci]);
    }
  }
  free(anc);
  free(topo);
  return rc;
}

/* Parentless slot nodes only, chained: each later slot node waits for the
 * last parentless one before it, which waits for the one before. */
static int roots_rule(edges *e, const uint32_t *slot, uint32_t m, const uint32_t *poff) {
  uint32_t last = NONE;
  for (uint32_t i = 0; i < m; i++) {
    if (last != NONE && add_edge(e, last, slot[i])) return -1;
    if (poff[slot[i] + 1] == poff[slot[i]]) last = slot[i];
  }
  return 0;
}

static int to_csr(so_order *o, uint32_t n, const edges *e) {
  o->off = calloc((size_t)n + 1, sizeof *o->off);
  o->count = calloc(n ? n : 1, sizeof *o->count);
  o->after = malloc((e->n ? e->n : 1) * sizeof *o->after);
  uint32_t *fill = malloc((n ? n : 1) * sizeof *fill);
  if (!o->off || !o->count || !o->after || !fill) {
    free(fill);
    return -1;
  }
  for (uint32_t k = 0; k < e->n; k++) o->off[e->v[k][0] + 1]++, o->count[e->v[k][1]]++;
  for (uint32_t i = 0; i < n; i++) o->off[i + 1] += o->off[i];
  memcpy(fill, o->off, (size_t)n * sizeof *fill);
  for (uint32_t k = 0; k < e->n; k++) o->after[fill[e->v[k][0]]++] = e->v[k][1];
  free(fill);
  return 0;
}

int so_compute(so_order *o, uint32_t n, const uint64_t *id, const uint32_t *child_off, const uint32_t *children,
               const uint8_t *in_slot) {
  memset(o, 0, sizeof *o);
  uint32_t m = 0, np = 0, *poff = NULL, *par = NULL;
  uint32_t *slot = malloc((n ? n : 1) * sizeof *slot), *pidx = malloc((n ? n : 1) * sizeof *pidx);
  edges e = {0};
  int rc = slot && pidx ? parents_of(n, child_off, children, &poff, &par) : -1;
  if (!rc) {
    for (uint32_t i = 0; i < n; i++) pidx[i] = NONE;
    if ((m = slot_nodes(n, id, in_slot, slot)) == UINT32_MAX) rc = -1, m = 0;
    for (uint32_t k = 0; k < m; k++) pidx[slot[k]] = np++;
    for (uint32_t k = 0; k < m; k++)
      for (uint32_t j = poff[slot[k]]; j < poff[slot[k] + 1]; j++)
        if (pidx[par[j]] == NONE) pidx[par[j]] = np++;
  }
  if (!rc) {
    size_t words = (np + 63) / 64;
    int full = (uint64_t)n * words * 8 <= SO_MAX_BITSET_BYTES && (uint64_t)m * m <= SO_MAX_PAIRS;
    rc = full ? full_rule(&e, n, slot, m, poff, par, child_off, children, pidx, words) : roots_rule(&e, slot, m, poff);
  }
  if (!rc) rc = to_csr(o, n, &e);
  free(slot), free(pidx), free(poff), free(par), free(e.v);
  if (rc) so_free(o);
  return rc;
}

void so_free(so_order *o) {
  free(o->off);
  free(o->after);
  free(o->count);
  memset(o, 0, sizeof *o);
}

/* ---- ordinal lower bounds ---------------------------------------------- */

/* Edge visits all classes of one rank may spend on their paths (a few
 * tenths of a second); a class beyond it keeps the bound 0. */
#define SO_MAX_ORD_VISITS (1ull << 25)

static uint32_t out_degree(const so_order *o, const uint32_t *child_off, uint32_t v) {
  return child_off[v + 1] - child_off[v] + o->off[v + 1] - o->off[v];
}

/* Kahn's order of dependencies and slot orders together; pos[v] is v's
 * place in it, NONE for a node behind a cycle (never issued). */
static uint32_t *combined_order(const so_order *o, uint32_t n, const uint32_t *child_off, const uint32_t *children,
                                uint32_t *pos, uint32_t *placed) {
  uint32_t *q = malloc((n ? n : 1) * sizeof *q), *rem = calloc(n ? n : 1, sizeof *rem);
  if (!q || !rem) {
    free(q), free(rem);
    return NULL;
  }
  for (size_t k = 0; k < child_off[n]; k++) rem[children[k]]++;
  uint32_t head = 0, tail = 0;
  for (uint32_t i = 0; i < n; i++) {
    pos[i] = NONE;
    if (!(rem[i] += o->count[i])) q[tail++] = i;
  }
  while (head < tail) {
    uint32_t u = q[head];
    pos[u] = head++;
    for (uint32_t k = child_off[u]; k < child_off[u + 1]; k++)
      if (--rem[children[k]] == 0) q[tail++] = children[k];
    for (uint32_t k = o->off[u]; k < o->off[u + 1]; k++)
      if (--rem[o->after[k]] == 0) q[tail++] = o->after[k];
  }
  free(rem);
  *placed = tail;
  return q;
}

typedef struct classed {
  uint64_t cls;
  uint32_t pos;
} classed;

static int cmp_classed(const void *a, const void *b) {
  const classed *x = a, *y = b;
  if (x->cls != y->cls) return x->cls < y->cls ? -1 : 1;
  return x->pos < y->pos ? -1 : x->pos > y->pos;
}

typedef struct span {
  uint64_t cost, cls;
  uint32_t first, last;
} span;

static int cmp_span(const void *a, const void *b) {
  uint64_t x = ((const span *)a)->cost, y = ((const span *)b)->cost;
  return x < y ? -1 : x > y;
}

/* Longest paths counted in nodes of class c, over the order's places
 * first..last (no path between two of them leaves that range). */
static void class_paths(const so_order *o, const uint32_t *child_off, const uint32_t *children, const uint64_t *cls,
                        const uint32_t *topo, const uint32_t *pos, const span *sp, uint32_t *cnt, uint64_t *ord) {
  for (uint32_t t = sp->first; t <= sp->last; t++) cnt[topo[t]] = 0;
  for (uint32_t t = sp->first; t <= sp->last; t++) {
    uint32_t v = topo[t], val = cnt[v] + (cls[v] == sp->cls);
    if (cls[v] == sp->cls) ord[v] = cnt[v];
    for (uint32_t k = child_off[v]; k < child_off[v + 1]; k++)
      if (pos[children[k]] <= sp->last && cnt[children[k]] < val) cnt[children[k]] = val;
    for (uint32_t k = o->off[v]; k < o->off[v + 1]; k++)
      if (pos[o->after[k]] <= sp->last && cnt[o->after[k]] < val) cnt[o->after[k]] = val;
  }
}

/* The classes with two or more nodes in order, as spans of the order. */
static span *class_spans(uint32_t n, const uint64_t *cls, const uint32_t *pos, const uint64_t *visits,
                         uint32_t *n_spans) {
  uint32_t m = 0;
  for (uint32_t i = 0; i < n; i++) m += cls[i] != SO_NO_CLASS && pos[i] != NONE;
  classed *c = malloc((m ? m : 1) * sizeof *c);
  span *sp = malloc((m ? m : 1) * sizeof *sp);
  if (!c || !sp) {
    free(c), free(sp);
    return NULL;
  }
  m = 0;
  for (uint32_t i = 0; i < n; i++)
    if (cls[i] != SO_NO_CLASS && pos[i] != NONE) c[m++] = (classed){cls[i], pos[i]};
  qsort(c, m, sizeof *c, cmp_classed);
  uint32_t k = 0;
  for (uint32_t a = 0, b; a < m; a = b) {
    for (b = a + 1; b < m && c[b].cls == c[a].cls; b++) continue;
    if (b - a > 1)
      sp[k++] = (span){visits[c[b - 1].pos + 1] - visits[c[a].pos], c[a].cls, c[a].pos, c[b - 1].pos};
  }
  free(c);
  qsort(sp, k, sizeof *sp, cmp_span);
  *n_spans = k;
  return sp;
}

int so_ordinals(const so_order *o, uint32_t n, const uint32_t *child_off, const uint32_t *children,
                const uint64_t *cls, uint64_t *ord) {
  memset(ord, 0, (size_t)n * sizeof *ord);
  uint32_t *pos = malloc((n ? n : 1) * sizeof *pos), *cnt = malloc((n ? n : 1) * sizeof *cnt), n_spans = 0;
  uint32_t placed = 0;
  uint64_t *visits = malloc(((size_t)n + 1) * sizeof *visits);
  uint32_t *topo = pos && cnt && visits ? combined_order(o, n, child_off, children, pos, &placed) : NULL;
  span *sp = NULL;
  if (topo) {
    visits[0] = 0; /* visits[t]: edge visits of the order's first t places */
    for (uint32_t t = 0; t < placed; t++) visits[t + 1] = visits[t] + out_degree(o, child_off, topo[t]);
    sp = class_spans(n, cls, pos, visits, &n_spans);
  }
  uint64_t spent = 0;
  for (uint32_t k = 0; sp && k < n_spans && spent + sp[k].cost <= SO_MAX_ORD_VISITS; k++) {
    spent += sp[k].cost;
    class_paths(o, child_off, children, cls, topo, pos, &sp[k], cnt, ord);
  }
  int rc = sp ? 0 : -1;
  free(pos), free(cnt), free(visits), free(topo), free(sp);
  return rc;
}
