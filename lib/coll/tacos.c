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

/* ---- what a matching costs ------------------------------------------------------ */

static uint32_t block_words(uint32_t W, uint64_t chans);

/* A matching visits NPU v about once per chunk each of its last links
 * brings in ((n - 1) C / last(v) times, when all go at once), reading its
 * in(v) channels each time: S reads. Candidates are either kept, each
 * arrival and booking updating the channels out of (into) the NPU, at
 * most the NPUs that still need (hold) the chunk, plus finding the drawn
 * one through per-block counts; or counted at every read and draw, a
 * chunk set of W words each. The cheaper is chosen; steps are S twice
 * (the reads, and the keys drawn) plus that. */
tacos_cost tacos_cost_of(const tacos_shape *sh, uint32_t chunks_per_npu) {
  double n = sh->npus, C = chunks_per_npu ? chunks_per_npu : 1, K = n * C, W = ceil(K / 64), WN = ceil(n / 64);
  double S = 0, E = 0, chans = 0, cap = WN + n / 2;
  for (uint32_t v = 0; v < sh->npus; v++) {
    S += ceil((n - 1) * C / (sh->last[v] ? sh->last[v] : 1)) * sh->in[v];
    E += K * (fmin(sh->in[v], cap) + fmin(sh->out[v], cap));
    chans += sh->in[v];
  }
  double M = n * (n - 1) * C, bw = block_words((uint32_t)W, (uint64_t)chans), eager = E + M * (ceil(W / bw) + bw);
  double lazy = (S + M) * W;
  return (tacos_cost){2 * S + fmin(eager, lazy), lazy < eager};
}

void tacos_shape_free(tacos_shape *sh) {
  free(sh->in), free(sh->out), free(sh->last);
  memset(sh, 0, sizeof *sh);
}

static int shape_alloc(tacos_shape *sh, uint32_t npus) {
  sh->npus = npus;
  sh->in = calloc((size_t)npus + 1, sizeof *sh->in);
  sh->out = calloc((size_t)npus + 1, sizeof *sh->out);
  sh->last = calloc((size_t)npus + 1, sizeof *sh->last);
  if (sh->in && sh->out && sh->last) return 0;
  tacos_shape_free(sh);
  return -1;
}

/* From the links alone: a link between NPUs is a channel and a last link;
 * a link from a switch is a last link for a channel from each NPU with a
 * link to that switch (counting the destination's own: an estimate). */
int tacos_shape_of(tacos_shape *sh, const tacos_graph *g, int transpose) {
  uint32_t n = g->npus, S = g->devices > n ? g->devices - n : 0;
  uint32_t *up = calloc((size_t)S + 1, sizeof *up), *down = calloc((size_t)S + 1, sizeof *down);
  if (!up || !down || shape_alloc(sh, n)) return free(up), free(down), -1;
  for (uint32_t i = 0; i < g->n_links; i++) {
    const tacos_link *l = &g->links[i];
    if (l->src < n && l->dst >= n && l->dst < g->devices) up[l->dst - n]++;
    if (l->src >= n && l->src < g->devices && l->dst < n) down[l->src - n]++;
  }
  for (uint32_t i = 0; i < g->n_links; i++) {
    const tacos_link *l = &g->links[i];
    uint32_t a = transpose ? l->dst : l->src, b = transpose ? l->src : l->dst; /* as the run sees it */
    if (a < n && b < n) sh->out[a]++, sh->in[b]++, sh->last[b]++;
    else if (a >= n && a < g->devices && b < n) sh->in[b] += transpose ? down[a - n] : up[a - n], sh->last[b]++;
    else if (b >= n && b < g->devices && a < n) sh->out[a] += transpose ? up[b - n] : down[b - n];
  }
  free(up), free(down);
  return 0;
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

/* A free incoming channel with candidates, as match() found it. */
typedef struct cand_ch {
  uint32_t pos, cnt;
  uint64_t key, total;
} cand_ch;

/* The greedy's state; channels seen in the run's direction.
 *
 * What makes a revisit cost what changed: the candidates of every channel,
 * |have[src] & need[dst]|, are kept as chunks arrive and are booked (with
 * per-block counts, so that the k-th candidate is found without a scan of
 * the whole set), so a destination's visit reads one count per incoming
 * channel, stored in visit order; a destination whose few last links are
 * all busy is not read at all; a source's or link's channels are marked
 * dirty once per instant; the first channel served is found by one scan,
 * the others (when a last link is still free) from a heap. Where chunk
 * sets are small and change between visits anyway (full meshes), counting
 * them at each visit is cheaper: the run starts so when tacos_cost_of()
 * says it is, and keeps the counts from the moment counting has cost more
 * than keeping them would have. */
typedef struct gs {
  const tacos_net *net;
  tacos_chan *ch;          /* local copy, transposed when asked, by destination: channel p is ... */
  uint32_t *orig;          /* ... net->chans[orig[p]] */
  uint32_t n, K, W, WN;    /* NPUs, chunks, words per chunk set, words per NPU set */
  uint64_t *have, *need;   /* n * W: held; lacking and not on the way */
  uint64_t *have_t, *need_t; /* K * WN: the same, per chunk */
  uint32_t *in_off;        /* channels into v: in_off[v] .. in_off[v + 1] - 1 (sources sorted) */
  uint32_t *out_off, *out_ch, *out_dst; /* channels by source, and their destinations */
  uint32_t *lk_off, *lk_dst;  /* destinations of the channels by first link (switch up-links) */
  struct vis { uint32_t l0, l1; uint64_t total; } *vis; /* per channel: what a visit reads (l1 NONE32: one link) */
  uint32_t *src;           /* per channel: its source, what a booking reads */
  int lanes;               /* some pair of NPUs has parallel channels */
  struct cl { uint32_t cnt, l0; } *cl; /* per channel: candidates, first link (what a visit reads first) */
  uint32_t *fin_off, *fin; /* per NPU with many channels on few last links: those links */
  uint32_t *lasts;         /* per NPU: how many links its channels end on */
  int lazy;                /* candidates counted at each visit, not kept (cheaper when the chunk
                              sets are small and change a lot between visits: tacos_cost_of()) */
  double lazy_cost, eager_cost; /* while lazy: words counted; what keeping them would have cost */
  double recount;          /* what starting to keep them costs */
  uint32_t cap;            /* the most an update reads through the pair index */
  int pinned;              /* tacos_opts.counting says how: never switch */
  uint32_t *blk, NB, BW;   /* per channel: candidates in each block of BW words (NB > 1 only) */
  uint32_t *pair;          /* dense graphs: [d * n + s] the first channel s -> d */
  uint64_t *free_at;       /* per link */
  uint64_t *tau1min;       /* per link used second: the smallest first-link time before it */
  uint64_t *tau0max;       /* per link used second: the largest first-link time before it */
  uint32_t *dirty, n_dirty;
  uint64_t *stamp;         /* per NPU: the round it was last made dirty */
  uint64_t *ostamp;        /* per NPU: the round its out-neighbours were */
  uint64_t *lstamp;        /* per link: the round its channels' destinations were */
  uint64_t *fstamp, visit; /* per link: the visit that counted it as a free last link */
  uint64_t round;
  cand_ch *fc;
  uint32_t *ord;           /* heap of fc indexes */
  heap h;
  tacos_rng rng;
  uint64_t delay;          /* tacos_opts.forward_delay */
  int circuit;
  uint64_t left;           /* (chunk, NPU) pairs not yet booked */
  uint64_t last;
  tacos_sched *out;
} gs;

#define NONE32 UINT32_MAX

static void mark(gs *g, uint32_t v) {
  if (g->stamp[v] == g->round) return;
  g->stamp[v] = g->round;
  g->dirty[g->n_dirty++] = v;
}

/* Marking u's out-neighbours twice in one instant, or when every NPU is
 * marked, adds nobody. */
static void mark_out(gs *g, uint32_t u) {
  if (g->ostamp[u] == g->round || g->n_dirty == g->n) return;
  g->ostamp[u] = g->round;
  for (uint32_t k = g->out_off[u]; k < g->out_off[u + 1]; k++) mark(g, g->out_dst[k]);
}

static int usable(const gs *g, uint32_t p, uint64_t t) {
  const struct vis *c = &g->vis[p];
  if (g->free_at[c->l0] > t) return 0;
  return c->l1 == NONE32 || g->free_at[c->l1] <= t + (g->circuit ? 0 : g->ch[p].tau[0]);
}

/* The link a channel ends on, and whether some channel of the destination
 * could still start over it at t (the test usable() makes of it). */
static uint32_t last_link(const struct vis *c) { return c->l1 == NONE32 ? c->l0 : c->l1; }

static int last_free(const gs *g, const struct vis *c, uint64_t t) {
  return g->free_at[last_link(c)] <= t + (c->l1 != NONE32 && !g->circuit ? g->tau0max[c->l1] : 0);
}

static inline int bit(const uint64_t *set, uint32_t i) { return (int)(set[i / 64] >> (i % 64) & 1); }

static void count(gs *g, uint32_t pos, uint32_t chunk, int d) {
  g->cl[pos].cnt += (uint32_t)d;
  if (g->NB > 1) g->blk[(size_t)pos * g->NB + chunk / 64 / g->BW] += (uint32_t)d;
}

/* Channels s -> d: pair[d * n + s] and the parallel ones after it. */
static void count_pair(gs *g, uint32_t s, uint32_t d, uint32_t chunk, int delta) {
  uint32_t p = g->pair[(size_t)d * g->n + s];
  if (p == NONE32) return;
  count(g, p, chunk, delta);
  while (g->lanes && ++p < g->in_off[d + 1] && g->src[p] == s) count(g, p, chunk, delta);
}

/* Dense graphs go through the NPUs that need (hold) the chunk, when there
 * are fewer words of them than channels. */
static int dense(const gs *g, uint32_t deg) { return g->pair && deg > 2 * g->WN; }

/* u now holds chunk: one more candidate on each channel from u to an NPU that needs it. */
static void have_set(gs *g, uint32_t u, uint32_t chunk) {
  g->have[(size_t)u * g->W + chunk / 64] |= 1ull << (chunk % 64);
  if (g->lazy) {
    uint32_t deg = g->out_off[u + 1] - g->out_off[u];
    g->eager_cost += deg < g->cap ? deg : g->cap;
    return;
  }
  g->have_t[(size_t)chunk * g->WN + u / 64] |= 1ull << (u % 64);
  const uint64_t *nt = g->need_t + (size_t)chunk * g->WN;
  if (dense(g, g->out_off[u + 1] - g->out_off[u])) {
    for (uint32_t w = 0; w < g->WN; w++)
      for (uint64_t x = nt[w]; x; x &= x - 1) count_pair(g, u, w * 64 + (uint32_t)__builtin_ctzll(x), chunk, 1);
    return;
  }
  for (uint32_t k = g->out_off[u]; k < g->out_off[u + 1]; k++) {
    if (bit(nt, g->out_dst[k])) count(g, g->out_ch[k], chunk, 1);
  }
}

/* v no longer needs chunk: one candidate fewer on each channel into v from an NPU that holds it. */
static void need_clear(gs *g, uint32_t v, uint32_t chunk) {
  g->need[(size_t)v * g->W + chunk / 64] &= ~(1ull << (chunk % 64));
  if (g->lazy) {
    uint32_t deg = g->in_off[v + 1] - g->in_off[v];
    g->eager_cost += deg < g->cap ? deg : g->cap;
    return;
  }
  g->need_t[(size_t)chunk * g->WN + v / 64] &= ~(1ull << (v % 64));
  const uint64_t *ht = g->have_t + (size_t)chunk * g->WN;
  if (dense(g, g->in_off[v + 1] - g->in_off[v])) {
    for (uint32_t w = 0; w < g->WN; w++)
      for (uint64_t x = ht[w]; x; x &= x - 1) count_pair(g, w * 64 + (uint32_t)__builtin_ctzll(x), v, chunk, -1);
    return;
  }
  for (uint32_t k = g->in_off[v]; k < g->in_off[v + 1]; k++)
    if (bit(ht, g->src[k])) count(g, k, chunk, -1);
}

/* The candidates of channel p: kept, or counted now. */
static uint32_t cands(gs *g, uint32_t p) {
  if (!g->lazy) return g->cl[p].cnt;
  g->lazy_cost += g->W;
  const uint64_t *hs = g->have + (size_t)g->src[p] * g->W, *nd = g->need + (size_t)g->ch[p].dst * g->W;
  uint32_t cnt = 0;
  for (uint32_t w = 0; w < g->W; w++) cnt += (uint32_t)__builtin_popcountll(hs[w] & nd[w]);
  return cnt;
}

/* The r-th candidate (from 0) of the channel at in position pos. */
static uint32_t pick(gs *g, uint32_t pos, uint32_t r) {
  const tacos_chan *c = &g->ch[pos];
  const uint64_t *hs = g->have + (size_t)c->src * g->W, *nd = g->need + (size_t)c->dst * g->W;
  uint32_t w = 0;
  if (g->lazy) {
    g->lazy_cost += g->W;
    g->eager_cost += g->NB + g->BW;
  } else if (g->NB > 1) {
    const uint32_t *b = g->blk + (size_t)pos * g->NB;
    for (; r >= *b; b++) r -= *b, w += g->BW;
  }
  for (;; w++) {
    uint64_t x = hs[w] & nd[w];
    uint32_t pc = (uint32_t)__builtin_popcountll(x);
    if (r < pc) {
      while (r--) x &= x - 1;
      return w * 64 + (uint32_t)__builtin_ctzll(x);
    }
    r -= pc;
  }
}

static int book(gs *g, uint32_t ci, uint32_t chunk, uint64_t t) {
  const tacos_chan *c = &g->ch[ci];
  need_clear(g, c->dst, chunk);
  g->left--;
  tacos_xfer *x = coll_grow(g->out->x, g->out->n, &g->out->cap, sizeof *x);
  if (!x) return -1;
  g->out->x = x;
  x[g->out->n++] = (tacos_xfer){chunk, g->orig[ci], t};
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

/* The order free channels are served in: fastest first, then those with
 * the fewest candidates (so that a channel with one useful chunk is not
 * starved by one with many), then the random key, then the order found. */
static int before(const gs *g, uint32_t a, uint32_t b) {
  const cand_ch *x = &g->fc[a], *y = &g->fc[b];
  if (x->total != y->total) return x->total < y->total;
  if (x->cnt != y->cnt) return x->cnt < y->cnt;
  if (x->key != y->key) return x->key < y->key;
  return a < b;
}

static void ord_down(gs *g, uint32_t i, uint32_t n) {
  uint32_t *o = g->ord, x = o[i];
  for (;;) {
    uint32_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && before(g, o[c + 1], o[c])) c++;
    if (!before(g, o[c], x)) break;
    o[i] = o[c];
    i = c;
  }
  o[i] = x;
}

static int go_eager(gs *g);

/* The i-th free channel of match(), if it is still free and has candidates. */
static int serve(gs *g, uint32_t i, uint64_t t, uint32_t *nfree) {
  uint32_t p = g->fc[i].pos, cnt;
  if (!usable(g, p, t) || !(cnt = cands(g, p))) return 0; /* taken by an earlier booking */
  if (book(g, p, pick(g, p, rng_below(&g->rng, cnt)), t)) return -1;
  if (!last_free(g, &g->vis[p], t)) --*nfree;
  return 0;
}

/* Free incoming channels of v, each given a chunk in the order before()
 * says, the candidates drawn at random. The keys are drawn for every free
 * channel with candidates, in channel order, but the channels are served
 * only while one of v's last links is free (whatever is left then could
 * not start): the first found by a scan, the others (when a link is still
 * free) from a heap. */
static int match(gs *g, uint32_t v, uint64_t t) {
  uint32_t nf = 0, nfree = 0;
  /* counting at each visit has cost more than keeping the counts would have */
  if (g->lazy && !g->pinned && g->lazy_cost > g->eager_cost + g->recount && go_eager(g)) return -1;
  if (g->fin_off[v + 1] > g->fin_off[v]) { /* nothing to do while every last link is busy */
    uint32_t k = g->fin_off[v];
    while (k < g->fin_off[v + 1] && !last_free(g, &g->vis[g->fin[k]], t)) k++;
    if (k == g->fin_off[v + 1]) return 0;
  }
  g->visit++;
  for (uint32_t p = g->in_off[v]; p < g->in_off[v + 1]; p++) {
    uint32_t cnt;
    if ((!g->lazy && !g->cl[p].cnt) || g->free_at[g->cl[p].l0] > t || !usable(g, p, t) || !(cnt = cands(g, p)))
      continue;
    uint32_t l = last_link(&g->vis[p]);
    if (g->fstamp[l] != g->visit) g->fstamp[l] = g->visit, nfree++;
    g->fc[nf++] = (cand_ch){p, cnt, tacos_rng_next(&g->rng), g->vis[p].total};
  }
  if (!nf) return 0;
  uint32_t first = 0;
  for (uint32_t i = 1; i < nf; i++)
    if (before(g, i, first)) first = i;
  if (serve(g, first, t, &nfree)) return -1;
  uint32_t n = 0;
  for (uint32_t i = 0; i < nf && nfree; i++)
    if (i != first) g->ord[n++] = i;
  for (uint32_t i = n / 2; i-- > 0;) ord_down(g, i, n);
  while (n && nfree) {
    uint32_t i = g->ord[0];
    g->ord[0] = g->ord[--n];
    if (n) ord_down(g, 0, n);
    if (serve(g, i, t, &nfree)) return -1;
  }
  return 0;
}

static void gs_free(gs *g) {
  free(g->ch), free(g->orig), free(g->have), free(g->need), free(g->have_t), free(g->need_t), free(g->in_off);
  free(g->out_off), free(g->out_ch), free(g->out_dst), free(g->lk_off), free(g->lk_dst), free(g->vis), free(g->src);
  free(g->cl), free(g->fin_off), free(g->fin), free(g->lasts);
  free(g->blk), free(g->pair), free(g->free_at), free(g->tau1min), free(g->tau0max), free(g->dirty), free(g->stamp);
  free(g->ostamp), free(g->lstamp), free(g->fstamp), free(g->fc), free(g->ord), free(g->h.v);
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

/* Words per block of the candidate counts: about the square root of a
 * chunk set's words, so that pick() reads as few counts as words, grown
 * while the counts would take more than 64 MiB; NB = 1 (no blocks) for
 * small sets. */
static uint32_t block_words(uint32_t W, uint64_t chans) {
  if (W <= 16) return W;
  uint32_t bw = 8;
  while ((uint64_t)bw * bw < W) bw *= 2;
  while (bw < W && (uint64_t)chans * ((W + bw - 1) / bw) * 4 > (64u << 20)) bw *= 2;
  return bw < W ? bw : W;
}

/* The pair index is kept for graphs whose NPUs average more channels
 * than twice the words of an NPU set, and at most 4,096 NPUs (64 MiB). */
static int wants_pairs(uint32_t npus, uint64_t chans) {
  return npus <= 4096 && chans > (uint64_t)npus * 2 * ((npus + 63) / 64);
}

/* The shape of the channels as the run sees them: in, out, and last links. */
static int run_shape(const gs *g, tacos_shape *sh) {
  if (shape_alloc(sh, g->n)) return -1;
  for (uint32_t v = 0; v < g->n; v++) {
    sh->in[v] = g->in_off[v + 1] - g->in_off[v];
    sh->out[v] = g->out_off[v + 1] - g->out_off[v];
    sh->last[v] = g->lasts[v];
  }
  return 0;
}

size_t tacos_index_bytes(uint32_t npus, uint64_t chans, uint64_t chunks) {
  uint32_t W = (uint32_t)((chunks + 63) / 64), bw = block_words(W, chans), nb = (W + bw - 1) / bw;
  /* per channel: its copy, orig, out_ch, out_dst, lk_dst, vis, src, cl, fin, blocks */
  size_t b = (size_t)chans * (sizeof(tacos_chan) + 48 + (nb > 1 ? 4 * (size_t)nb : 0));
  b += (size_t)chunks * ((npus + 63) / 64) * 16; /* have_t, need_t */
  if (wants_pairs(npus, chans)) b += (size_t)npus * npus * 4;
  return b;
}

/* The channels of net as the run sees them (transposed when asked), in
 * net order. */
static tacos_chan *run_chans(const tacos_net *net, int transpose) {
  tacos_chan *v = malloc(((size_t)net->n_chans + 1) * sizeof *v);
  for (uint32_t i = 0; v && i < net->n_chans; i++) {
    tacos_chan c = net->chans[i];
    if (transpose) {
      uint32_t s = c.src;
      c.src = c.dst, c.dst = s;
      if (c.n_links == 2) {
        uint32_t l = c.link[0];
        uint64_t t = c.tau[0];
        c.link[0] = c.link[1], c.link[1] = l;
        c.tau[0] = c.tau[1], c.tau[1] = t;
      }
    }
    v[i] = c;
  }
  return v;
}

/* Per NPU whose channels end on at most a quarter as many links (a
 * switch's down-link): those links, which a visit checks first. A channel
 * of NPU v is kept for each of its last links. */
static int last_links(gs *g, uint32_t L) {
  uint32_t *seen = malloc(((size_t)L + 1) * sizeof *seen), n = 0;
  g->fin_off = calloc((size_t)g->n + 1, sizeof *g->fin_off);
  g->fin = malloc(((size_t)g->net->n_chans + 1) * sizeof *g->fin);
  g->lasts = malloc(((size_t)g->n + 1) * sizeof *g->lasts);
  if (!seen || !g->fin_off || !g->fin || !g->lasts) return free(seen), -1;
  memset(seen, 0xff, ((size_t)L + 1) * sizeof *seen);
  for (uint32_t v = 0; v < g->n; v++) {
    uint32_t start = n;
    for (uint32_t p = g->in_off[v]; p < g->in_off[v + 1]; p++) {
      uint32_t l = last_link(&g->vis[p]);
      if (seen[l] != v) seen[l] = v, g->fin[n++] = p;
    }
    g->lasts[v] = n - start;
    if (4 * (n - start) > g->in_off[v + 1] - g->in_off[v]) n = start;
    g->fin_off[v + 1] = n;
  }
  free(seen);
  return 0;
}

/* Channels by destination, sources and lanes in net order (a stable sort
 * of net order: what a visit reads is contiguous), the lists by source
 * and by first link, the counts and the pair index. */
static int gs_index(gs *g, const tacos_net *net, int transpose) {
  uint32_t nc = net->n_chans, L = net->n_links, *by_dst = NULL, *lk_ch = NULL;
  tacos_chan *v = run_chans(net, transpose);
  int rc = -1;
  if (!v || csr(v, nc, g->n, 0, &g->in_off, &by_dst) || csr(v, nc, L, 2, &g->lk_off, &lk_ch)) goto out;
  g->ch = malloc(((size_t)nc + 1) * sizeof *g->ch);
  g->orig = malloc(((size_t)nc + 1) * sizeof *g->orig);
  g->lk_dst = malloc(((size_t)nc + 1) * sizeof *g->lk_dst);
  g->vis = malloc(((size_t)nc + 1) * sizeof *g->vis);
  g->src = malloc(((size_t)nc + 1) * sizeof *g->src);
  if (!g->ch || !g->orig || !g->lk_dst || !g->vis || !g->src) goto out;
  for (uint32_t p = 0; p < nc; p++) {
    g->ch[p] = v[by_dst[p]];
    g->orig[p] = by_dst[p];
    g->lk_dst[p] = v[lk_ch[p]].dst;
    g->vis[p] = (struct vis){g->ch[p].link[0], g->ch[p].n_links == 2 ? g->ch[p].link[1] : NONE32, g->ch[p].total};
    g->src[p] = g->ch[p].src;
    if (p > 0 && g->src[p] == g->src[p - 1] && g->ch[p].dst == g->ch[p - 1].dst) g->lanes = 1;
  }
  if (csr(g->ch, nc, g->n, 1, &g->out_off, &g->out_ch)) goto out;
  g->out_dst = malloc(((size_t)nc + 1) * sizeof *g->out_dst);
  g->cl = calloc((size_t)nc + 1, sizeof *g->cl);
  if (!g->out_dst || !g->cl || last_links(g, L)) goto out;
  for (uint32_t k = 0; k < nc; k++) g->out_dst[k] = g->ch[g->out_ch[k]].dst, g->cl[k].l0 = g->ch[k].link[0];
  tacos_shape sh;
  if (run_shape(g, &sh)) goto out;
  g->lazy = tacos_cost_of(&sh, g->K / g->n).lazy;
  tacos_shape_free(&sh);
  g->BW = block_words(g->W, nc);
  g->NB = (g->W + g->BW - 1) / g->BW;
  g->cap = wants_pairs(g->n, nc) ? g->WN + g->n / 2 : UINT32_MAX;
  g->recount = ((double)nc + 2.0 * g->n) * g->W;
  rc = 0;
out:
  free(v), free(by_dst), free(lk_ch);
  return rc;
}

/* Keeps the candidates from now on: the sets by chunk and the counts of
 * every channel (and of its blocks) taken from the sets as they are, and
 * the pair index. */
static int go_eager(gs *g) {
  uint32_t nc = g->net->n_chans;
  g->have_t = calloc((size_t)g->K * g->WN + 1, sizeof *g->have_t);
  g->need_t = calloc((size_t)g->K * g->WN + 1, sizeof *g->need_t);
  if (!g->have_t || !g->need_t) return -1;
  if (g->NB > 1 && !(g->blk = calloc((size_t)nc * g->NB + 1, sizeof *g->blk))) return -1;
  for (uint32_t v = 0; v < g->n; v++)
    for (uint32_t w = 0; w < g->W; w++) {
      for (uint64_t x = g->have[(size_t)v * g->W + w]; x; x &= x - 1)
        g->have_t[(size_t)(w * 64 + (uint32_t)__builtin_ctzll(x)) * g->WN + v / 64] |= 1ull << (v % 64);
      for (uint64_t x = g->need[(size_t)v * g->W + w]; x; x &= x - 1)
        g->need_t[(size_t)(w * 64 + (uint32_t)__builtin_ctzll(x)) * g->WN + v / 64] |= 1ull << (v % 64);
    }
  for (uint32_t p = 0; p < nc; p++) {
    const uint64_t *hs = g->have + (size_t)g->src[p] * g->W, *nd = g->need + (size_t)g->ch[p].dst * g->W;
    g->cl[p].cnt = 0;
    for (uint32_t w = 0; w < g->W; w++) {
      uint32_t pc = (uint32_t)__builtin_popcountll(hs[w] & nd[w]);
      g->cl[p].cnt += pc;
      if (g->NB > 1) g->blk[(size_t)p * g->NB + w / g->BW] += pc;
    }
  }
  if (wants_pairs(g->n, nc)) {
    if (!(g->pair = malloc((size_t)g->n * g->n * sizeof *g->pair))) return -1;
    memset(g->pair, 0xff, (size_t)g->n * g->n * sizeof *g->pair);
    for (uint32_t p = nc; p-- > 0;) g->pair[(size_t)g->ch[p].dst * g->n + g->ch[p].src] = p;
  }
  g->lazy = 0;
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
  g->WN = (g->n + 63) / 64;
  uint32_t nc = net->n_chans, L = net->n_links;
  g->have = calloc((size_t)g->n * g->W, sizeof *g->have);
  g->need = calloc((size_t)g->n * g->W, sizeof *g->need);
  g->free_at = calloc((size_t)L + 1, sizeof *g->free_at);
  g->tau1min = malloc(((size_t)L + 1) * sizeof *g->tau1min);
  g->tau0max = calloc((size_t)L + 1, sizeof *g->tau0max);
  g->lstamp = calloc((size_t)L + 1, sizeof *g->lstamp);
  g->fstamp = calloc((size_t)L + 1, sizeof *g->fstamp);
  g->dirty = malloc(((size_t)g->n + 1) * sizeof *g->dirty);
  g->stamp = malloc(((size_t)g->n + 1) * sizeof *g->stamp);
  g->ostamp = calloc((size_t)g->n + 1, sizeof *g->ostamp);
  if (!g->have || !g->need || !g->free_at || !g->tau1min || !g->tau0max || !g->lstamp || !g->fstamp || !g->dirty ||
      !g->stamp || !g->ostamp || gs_index(g, net, o->transpose))
    return -1;
  uint32_t maxin = 1;
  for (uint32_t v = 0; v < g->n; v++) maxin = g->in_off[v + 1] - g->in_off[v] > maxin ? g->in_off[v + 1] - g->in_off[v] : maxin;
  g->fc = malloc((size_t)maxin * sizeof *g->fc);
  g->ord = malloc((size_t)maxin * sizeof *g->ord);
  if (!g->fc || !g->ord) return -1;
  for (uint32_t l = 0; l < L; l++) g->tau1min[l] = UINT64_MAX;
  for (uint32_t i = 0; i < nc; i++) {
    const tacos_chan *c = &g->ch[i];
    if (c->n_links != 2) continue;
    if (c->tau[0] < g->tau1min[c->link[1]]) g->tau1min[c->link[1]] = c->tau[0];
    if (c->tau[0] > g->tau0max[c->link[1]]) g->tau0max[c->link[1]] = c->tau[0];
  }
  for (uint32_t l = 0; l < L; l++)
    if (g->tau1min[l] == UINT64_MAX) g->tau1min[l] = 0;
  for (uint32_t v = 0; v < g->n; v++) {
    g->stamp[v] = UINT64_MAX;
    uint64_t *nd = g->need + (size_t)v * g->W;
    for (uint32_t c = 0; c < g->K; c++)
      if (c % g->n != v) {
        nd[c / 64] |= 1ull << (c % 64);
      }
  }
  if (o->counting != TACOS_COUNT_AUTO) g->lazy = o->counting == TACOS_COUNT_AT_VISIT, g->pinned = 1;
  if (!g->lazy && go_eager(g)) return -1;
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
      have_set(g, s, e.id);
      mark_out(g, s);
      break;
    }
    case EV_ARRIVE: {
      const tacos_chan *c = &g->ch[e.id];
      have_set(g, c->dst, e.chunk);
      if (e.t > g->last) g->last = e.t;
      mark_out(g, c->dst);
      mark(g, c->dst);
      break;
    }
    case EV_FREE: /* every channel starting on this link may go now */
      if (g->lstamp[e.id] == g->round) break;
      g->lstamp[e.id] = g->round;
      for (uint32_t k = g->lk_off[e.id]; k < g->lk_off[e.id + 1]; k++) mark(g, g->lk_dst[k]);
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
