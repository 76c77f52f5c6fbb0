/* tacos.c - channels of a link graph and the greedy all-gather over the
 * time-expanded network; see tacos.h. */
#include "tacos.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dag.h"

/* ---- PRNG ----------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void tacos_rng_seed(tacos_rng *r, uint64_t seed) {
  for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t tacos_rng_next(tacos_rng *r) {
  uint64_t *s = r->s, out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0], s[3] ^= s[1], s[1] ^= s[2], s[0] ^= s[3], s[2] ^= t, s[3] = rotl(s[3], 45);
  return out;
}

/* Uniform in [0, n) (n > 0); the modulo bias is below 2^-40 for our n. */
static inline uint32_t rng_below(tacos_rng *r, uint32_t n) { return (uint32_t)(tacos_rng_next(r) % n); }

/* ---- channels --------------------------------------------------------------- */

/* Whole ns a chunk spends on a link: the simulator's floor(latency + bytes / bw),
 * held at 2^62 (beyond, the conversion would be undefined; synthesis
 * refuses such links before it adds times up). */
static uint64_t link_tau(const tacos_link *l, uint64_t bytes) {
  double x = floor(l->latency_ns + (double)bytes / l->bytes_per_ns);
  return x < 1 ? 1 : x < 0x1p62 ? (uint64_t)x : (uint64_t)1 << 62;
}

static int chan_cmp(const void *a, const void *b) {
  const tacos_chan *x = a, *y = b;
  if (x->src != y->src) return x->src < y->src ? -1 : 1;
  if (x->dst != y->dst) return x->dst < y->dst ? -1 : 1;
  if (x->link[0] != y->link[0]) return x->link[0] < y->link[0] ? -1 : 1;
  return x->link[1] < y->link[1] ? -1 : x->link[1] > y->link[1];
}

static int add_chan(tacos_chan **v, size_t *n, size_t *cap, tacos_chan c) {
  tacos_chan *p = coll_grow(*v, *n, cap, sizeof *p);
  if (!p) return -1;
  *v = p;
  p[(*n)++] = c;
  return 0;
}

int tacos_net_build(tacos_net *net, const tacos_graph *g, uint64_t chunk_bytes, chakra_error *err) {
  memset(net, 0, sizeof *net);
  uint32_t D = g->devices;
  tacos_chan *v = NULL;
  size_t n = 0, cap = 0;
  int rc = 0;
  for (uint32_t i = 0; i < g->n_links; i++) {
    const tacos_link *l = &g->links[i];
    if (l->src >= D || l->dst >= D || l->src == l->dst)
      return chakra_error_set(err, CHAKRA_EINVAL, "link %u: %u -> %u is not between two devices", i, l->src, l->dst);
    if (!(l->bytes_per_ns > 0) || !(l->latency_ns >= 0) || !isfinite(l->bytes_per_ns) || !isfinite(l->latency_ns))
      return chakra_error_set(err, CHAKRA_EINVAL, "link %u -> %u: bandwidth must be > 0 and latency >= 0", l->src,
                              l->dst);
    if (l->src >= g->npus && l->dst >= g->npus)
      return chakra_error_set(err, CHAKRA_EINVAL,
                              "link %u -> %u joins two switches: the synthesiser relays through one switch only",
                              l->src, l->dst);
  }
  for (uint32_t i = 0; i < g->n_links; i++) {
    const tacos_link *l = &g->links[i];
    if (l->dst < g->npus && l->src < g->npus) {
      tacos_chan c = {.src = l->src, .dst = l->dst, .link = {i, UINT32_MAX}, .n_links = 1};
      c.tau[0] = link_tau(l, chunk_bytes);
      c.total = c.tau[0];
      if (add_chan(&v, &n, &cap, c)) goto oom;
    } else if (l->dst >= g->npus) { /* NPU -> switch: one channel per switch -> NPU link */
      uint32_t s = l->dst;
      for (uint32_t k = 0; k < g->n_links; k++) {
        const tacos_link *o = &g->links[k];
        if (o->src != s || o->dst >= g->npus || o->dst == l->src) continue;
        tacos_chan c = {.src = l->src, .dst = o->dst, .link = {i, k}, .n_links = 2};
        c.tau[0] = link_tau(l, chunk_bytes);
        c.tau[1] = link_tau(o, chunk_bytes);
        c.total = c.tau[0] + c.tau[1];
        if (add_chan(&v, &n, &cap, c)) goto oom;
      }
    }
  }
  if (n > UINT32_MAX / 2) {
    rc = chakra_error_set(err, CHAKRA_EINVAL, "%zu channels: too many", n);
    goto out;
  }
  qsort(v, n, sizeof *v, chan_cmp);
  for (size_t i = 0; i < n; i++) {
    if (i > 0 && v[i].src == v[i - 1].src && v[i].dst == v[i - 1].dst) {
      if (v[i - 1].lane == UINT16_MAX) {
        rc = chakra_error_set(err, CHAKRA_EINVAL, "NPU %u -> %u: too many parallel paths", v[i].src, v[i].dst);
        goto out;
      }
      v[i].lane = (uint16_t)(v[i - 1].lane + 1);
    } else {
      v[i].lane = 0;
    }
  }
  net->npus = g->npus;
  net->n_links = g->n_links;
  net->n_chans = (uint32_t)n;
  net->chans = v;
  v = NULL;
  goto out;
oom:
  rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
out:
  free(v);
  return rc;
}

void tacos_net_free(tacos_net *net) {
  free(net->chans);
  memset(net, 0, sizeof *net);
}

void tacos_sched_free(tacos_sched *s) {
  free(s->x);
  memset(s, 0, sizeof *s);
}

/* ---- the greedy ------------------------------------------------------------- */

enum { EV_ARRIVE, EV_FREE, EV_WAKE, EV_RELEASE };

typedef struct ev {
  uint64_t t;
  uint32_t id;    /* channel, link, NPU or chunk */
  uint32_t chunk; /* EV_ARRIVE */
  uint8_t kind;
} ev;

typedef struct heap {
  ev *v;
  size_t n, cap;
} heap;

static int heap_push(heap *h, ev e) {
  ev *p = coll_grow(h->v, h->n, &h->cap, sizeof *p);
  if (!p) return -1;
  h->v = p;
  size_t i = h->n++;
  while (i > 0) {
    size_t up = (i - 1) / 2;
    if (p[up].t <= e.t) break;
    p[i] = p[up];
    i = up;
  }
  p[i] = e;
  return 0;
}

static ev heap_pop(heap *h) {
  ev top = h->v[0], last = h->v[--h->n];
  size_t i = 0, n = h->n;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && h->v[c + 1].t < h->v[c].t) c++;
    if (h->v[c].t >= last.t) break;
    h->v[i] = h->v[c];
    i = c;
  }
  if (n) h->v[i] = last;
  return top;
}

/* The greedy's state; channels seen in the run's direction. */
typedef struct gs {
  const tacos_net *net;
  tacos_chan *ch;          /* local copy, transposed when asked */
  uint32_t n, K, W;        /* NPUs, chunks, words per chunk set */
  uint64_t *have, *need;   /* n * W: held; lacking and not on the way */
  uint32_t *in_off, *in_ch;   /* channels by destination */
  uint32_t *out_off, *out_ch; /* channels by source */
  uint32_t *lk_off, *lk_ch;   /* channels by first link (switch up-links) */
  uint64_t *free_at;       /* per link */
  uint64_t *tau1min;       /* per link used second: the smallest first-link time before it */
  uint32_t *dirty, n_dirty;
  uint64_t *stamp;         /* per NPU: the round it was last made dirty */
  uint64_t round;
  uint64_t *cand;          /* W words of scratch */
  struct cand_ch { uint32_t ch, cnt; uint64_t key; } *fc;
  heap h;
  tacos_rng rng;
  uint64_t delay;          /* tacos_opts.forward_delay */
  int circuit;
  uint64_t left;           /* (chunk, NPU) pairs not yet booked */
  uint64_t last;
  tacos_sched *out;
} gs;

static void mark(gs *g, uint32_t v) {
  if (g->stamp[v] == g->round) return;
  g->stamp[v] = g->round;
  g->dirty[g->n_dirty++] = v;
}

static void mark_out(gs *g, uint32_t u) {
  for (uint32_t k = g->out_off[u]; k < g->out_off[u + 1]; k++) mark(g, g->ch[g->out_ch[k]].dst);
}

static int usable(const gs *g, const tacos_chan *c, uint64_t t) {
  if (g->free_at[c->link[0]] > t) return 0;
  return c->n_links == 1 || g->free_at[c->link[1]] <= t + (g->circuit ? 0 : c->tau[0]);
}

/* candidates of channel c into scratch; returns their count */
static uint32_t cands(gs *g, const tacos_chan *c) {
  const uint64_t *hs = g->have + (size_t)c->src * g->W, *nd = g->need + (size_t)c->dst * g->W;
  uint32_t cnt = 0;
  for (uint32_t w = 0; w < g->W; w++) {
    g->cand[w] = hs[w] & nd[w];
    cnt += (uint32_t)__builtin_popcountll(g->cand[w]);
  }
  return cnt;
}

static uint32_t pick(gs *g, uint32_t cnt) {
  uint32_t r = rng_below(&g->rng, cnt);
  for (uint32_t w = 0;; w++) {
    uint32_t pc = (uint32_t)__builtin_popcountll(g->cand[w]);
    if (r < pc) {
      uint64_t x = g->cand[w];
      while (r--) x &= x - 1;
      return w * 64 + (uint32_t)__builtin_ctzll(x);
    }
    r -= pc;
  }
}

static int book(gs *g, uint32_t ci, uint32_t chunk, uint64_t t) {
  const tacos_chan *c = &g->ch[ci];
  g->need[(size_t)c->dst * g->W + chunk / 64] &= ~(1ull << (chunk % 64));
  g->left--;
  tacos_xfer *x = coll_grow(g->out->x, g->out->n, &g->out->cap, sizeof *x);
  if (!x) return -1;
  g->out->x = x;
  x[g->out->n++] = (tacos_xfer){chunk, ci, t};
  g->free_at[c->link[0]] = t + c->tau[0];
  if (heap_push(&g->h, (ev){t + c->total + g->delay, ci, chunk, EV_ARRIVE})) return -1;
  /* a delayed arrival cannot be what tells v that the channel is free */
  if (g->delay && heap_push(&g->h, (ev){t + c->total, c->dst, 0, EV_WAKE})) return -1;
  if (c->n_links == 2) {
    g->free_at[c->link[1]] = t + c->total;
    if (g->circuit) g->free_at[c->link[0]] = t + c->total;
    if (heap_push(&g->h, (ev){g->free_at[c->link[0]], c->link[0], 0, EV_FREE})) return -1;
    uint64_t w = t + c->total - g->tau1min[c->link[1]];
    if (w > t && heap_push(&g->h, (ev){w, c->dst, 0, EV_WAKE})) return -1;
  }
  return 0;
}

/* Free incoming channels of v, each given a chunk: fastest channels first,
 * then those with the fewest candidates (so that a channel with one useful
 * chunk is not starved by one with many), ties at random. */
static int match(gs *g, uint32_t v, uint64_t t) {
  uint32_t nf = 0;
  for (uint32_t k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
    uint32_t ci = g->in_ch[k];
    const tacos_chan *c = &g->ch[ci];
    if (!usable(g, c, t)) continue;
    uint32_t cnt = cands(g, c);
    if (!cnt) continue;
    g->fc[nf++] = (struct cand_ch){ci, cnt, tacos_rng_next(&g->rng)};
  }
  for (uint32_t i = 1; i < nf; i++) { /* insertion sort: in-degrees are small */
    struct cand_ch x = g->fc[i];
    uint32_t j = i;
    while (j > 0) {
      const struct cand_ch *y = &g->fc[j - 1];
      uint64_t tx = g->ch[x.ch].total, ty = g->ch[y->ch].total;
      if (ty < tx || (ty == tx && (y->cnt < x.cnt || (y->cnt == x.cnt && y->key <= x.key)))) break;
      g->fc[j] = g->fc[j - 1];
      j--;
    }
    g->fc[j] = x;
  }
  for (uint32_t i = 0; i < nf; i++) {
    const tacos_chan *c = &g->ch[g->fc[i].ch];
    if (!usable(g, c, t)) continue; /* taken by an earlier booking through the same switch link */
    uint32_t cnt = cands(g, c);
    if (!cnt) continue;
    if (book(g, g->fc[i].ch, pick(g, cnt), t)) return -1;
  }
  return 0;
}

static void gs_free(gs *g) {
  free(g->ch), free(g->have), free(g->need), free(g->in_off), free(g->in_ch), free(g->out_off), free(g->out_ch);
  free(g->lk_off), free(g->lk_ch), free(g->free_at), free(g->tau1min), free(g->dirty), free(g->stamp), free(g->cand);
  free(g->fc), free(g->h.v);
}

/* CSR of channels keyed by key(c) < nkeys. */
static int csr(const tacos_chan *ch, uint32_t n, uint32_t nkeys, int which, uint32_t **off, uint32_t **lst) {
  *off = calloc((size_t)nkeys + 1, sizeof **off);
  *lst = malloc(((size_t)n + 1) * sizeof **lst);
  uint32_t *fill = calloc((size_t)nkeys + 1, sizeof *fill);
  if (!*off || !*lst || !fill) return free(fill), -1;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t k = which == 0 ? ch[i].dst : which == 1 ? ch[i].src : ch[i].link[0];
    (*off)[k + 1]++;
  }
  for (uint32_t k = 0; k < nkeys; k++) (*off)[k + 1] += (*off)[k];
  for (uint32_t i = 0; i < n; i++) {
    uint32_t k = which == 0 ? ch[i].dst : which == 1 ? ch[i].src : ch[i].link[0];
    (*lst)[(*off)[k] + fill[k]++] = i;
  }
  free(fill);
  return 0;
}

static int gs_init(gs *g, const tacos_net *net, const tacos_opts *o, tacos_sched *out) {
  memset(g, 0, sizeof *g);
  g->net = net;
  g->out = out;
  g->n = net->npus;
  uint32_t C = o->chunks_per_npu ? o->chunks_per_npu : 1;
  g->K = g->n * C;
  g->W = (g->K + 63) / 64;
  uint32_t nc = net->n_chans, L = net->n_links;
  g->ch = malloc(((size_t)nc + 1) * sizeof *g->ch);
  g->have = calloc((size_t)g->n * g->W, sizeof *g->have);
  g->need = calloc((size_t)g->n * g->W, sizeof *g->need);
  g->free_at = calloc((size_t)L + 1, sizeof *g->free_at);
  g->tau1min = malloc(((size_t)L + 1) * sizeof *g->tau1min);
  g->dirty = malloc(((size_t)g->n + 1) * sizeof *g->dirty);
  g->stamp = malloc(((size_t)g->n + 1) * sizeof *g->stamp);
  g->cand = malloc(((size_t)g->W + 1) * sizeof *g->cand);
  if (!g->ch || !g->have || !g->need || !g->free_at || !g->tau1min || !g->dirty || !g->stamp || !g->cand) return -1;
  uint32_t maxin = 1;
  for (uint32_t i = 0; i < nc; i++) {
    tacos_chan c = net->chans[i];
    if (o->transpose) {
      uint32_t s = c.src;
      c.src = c.dst, c.dst = s;
      if (c.n_links == 2) {
        uint32_t l = c.link[0];
        uint64_t t = c.tau[0];
        c.link[0] = c.link[1], c.link[1] = l;
        c.tau[0] = c.tau[1], c.tau[1] = t;
      }
    }
    g->ch[i] = c;
  }
  if (csr(g->ch, nc, g->n, 0, &g->in_off, &g->in_ch) || csr(g->ch, nc, g->n, 1, &g->out_off, &g->out_ch) ||
      csr(g->ch, nc, L, 2, &g->lk_off, &g->lk_ch))
    return -1;
  for (uint32_t v = 0; v < g->n; v++) maxin = g->in_off[v + 1] - g->in_off[v] > maxin ? g->in_off[v + 1] - g->in_off[v] : maxin;
  g->fc = malloc((size_t)maxin * sizeof *g->fc);
  if (!g->fc) return -1;
  for (uint32_t l = 0; l < L; l++) g->tau1min[l] = UINT64_MAX;
  for (uint32_t i = 0; i < nc; i++)
    if (g->ch[i].n_links == 2 && g->ch[i].tau[0] < g->tau1min[g->ch[i].link[1]]) g->tau1min[g->ch[i].link[1]] = g->ch[i].tau[0];
  for (uint32_t l = 0; l < L; l++)
    if (g->tau1min[l] == UINT64_MAX) g->tau1min[l] = 0;
  for (uint32_t v = 0; v < g->n; v++) {
    g->stamp[v] = UINT64_MAX;
    uint64_t *nd = g->need + (size_t)v * g->W;
    for (uint32_t c = 0; c < g->K; c++)
      if (c % g->n != v) nd[c / 64] |= 1ull << (c % 64);
  }
  g->left = (uint64_t)g->n * (g->n - 1) * C;
  tacos_rng_seed(&g->rng, o->seed);
  g->delay = o->forward_delay;
  g->circuit = o->circuit;
  for (uint32_t c = 0; c < g->K; c++) {
    uint64_t r = o->release ? o->release[c] : 0;
    if (heap_push(&g->h, (ev){r, c, 0, EV_RELEASE})) return -1;
  }
  if (o->link_free)
    for (uint32_t l = 0; l < L; l++) {
      g->free_at[l] = o->link_free[l];
      if (o->link_free[l] && heap_push(&g->h, (ev){o->link_free[l], l, 0, EV_FREE})) return -1;
    }
  return 0;
}

static void handle(gs *g, ev e) {
  switch (e.kind) {
    case EV_RELEASE: {
      uint32_t s = e.id % g->n;
      g->have[(size_t)s * g->W + e.id / 64] |= 1ull << (e.id % 64);
      mark_out(g, s);
      break;
    }
    case EV_ARRIVE: {
      const tacos_chan *c = &g->ch[e.id];
      g->have[(size_t)c->dst * g->W + e.chunk / 64] |= 1ull << (e.chunk % 64);
      if (e.t > g->last) g->last = e.t;
      mark_out(g, c->dst);
      mark(g, c->dst);
      break;
    }
    case EV_FREE: /* every channel starting on this link may go now */
      for (uint32_t k = g->lk_off[e.id]; k < g->lk_off[e.id + 1]; k++) mark(g, g->ch[g->lk_ch[k]].dst);
      break;
    default: mark(g, e.id); break;
  }
}

int tacos_allgather(const tacos_net *net, const tacos_opts *o, tacos_sched *out, chakra_error *err) {
  memset(out, 0, sizeof *out);
  if (net->npus < 2) return chakra_error_set(err, CHAKRA_EINVAL, "synthesis needs at least 2 NPUs");
  uint64_t K = (uint64_t)net->npus * (o->chunks_per_npu ? o->chunks_per_npu : 1);
  if (K > (1u << 26)) return chakra_error_set(err, CHAKRA_EINVAL, "%llu chunks: at most %u", (unsigned long long)K, 1u << 26);
  gs g;
  int rc = 0;
  if (gs_init(&g, net, o, out)) goto oom;
  while (g.h.n) {
    uint64_t t = g.h.v[0].t;
    g.round++;
    g.n_dirty = 0;
    while (g.h.n && g.h.v[0].t == t) handle(&g, heap_pop(&g.h));
    /* destinations in a random order: who goes first wins shared switch links */
    for (uint32_t i = g.n_dirty; i > 1; i--) {
      uint32_t j = rng_below(&g.rng, i), x = g.dirty[i - 1];
      g.dirty[i - 1] = g.dirty[j];
      g.dirty[j] = x;
    }
    for (uint32_t i = 0; i < g.n_dirty; i++)
      if (match(&g, g.dirty[i], t)) goto oom;
  }
  if (g.left) {
    for (uint32_t v = 0; v < g.n; v++)
      for (uint32_t w = 0; w < g.W; w++)
        if (g.need[(size_t)v * g.W + w]) {
          uint32_t c = w * 64 + (uint32_t)__builtin_ctzll(g.need[(size_t)v * g.W + w]);
          rc = chakra_error_set(err, CHAKRA_EINVAL,
                                "NPU %u cannot be reached from NPU %u over the %s links (the graph is not strongly "
                                "connected)",
                                v, c % g.n, o->transpose ? "reversed" : "directed");
          goto done;
        }
  }
  out->time_ns = g.last;
  goto done;
oom:
  rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
done:
  gs_free(&g);
  if (rc) tacos_sched_free(out);
  return rc;
}
