/* algo.c - packet engines of the built-in algorithms; see algo.h. */
#include "algo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "net.h"

uint64_t algo_out_bytes(int type, uint64_t c, uint32_t n) {
  switch (type) {
    case SIM_RS: return c / n;
    case SIM_AG: return c * n;
    default: return c;
  }
}

/* Local reduction cost: one write and two reads, each truncated. */
static uint64_t reduce_ns(const sim *s, uint64_t bytes) {
  double bw = s->sys_cfg.local_mem_bw;
  if (bw <= 0) return 0;
  return 3 * (uint64_t)floor((double)bytes / (bw * 1e9) * 1e9);
}

static uint32_t ilog2(uint32_t n) {
  uint32_t k = 0;
  while ((1u << (k + 1)) <= n) k++;
  return k;
}

/* Member `steps` positions away (|steps| < n) from this NPU. */
static uint32_t ring_peer(const algo_run *r, int64_t steps) {
  const lring *g = &r->ph->ring;
  int64_t k = (int64_t)g->idx + steps;
  if (k < 0) k += g->n;
  else if (k >= (int64_t)g->n) k -= g->n;
  return lring_member(g, (uint32_t)k);
}

/* The packet ring's capacity is a power of two: positions wrap by mask.
 * It starts in the run (small) and moves to the run's heap buffer, kept
 * across phases, when more packets wait. */
static void fifo_push(sim *s, algo_run *r, pkt p) {
  if (r->fifo_n == r->fifo_cap) {
    uint32_t nc = r->fifo_cap * 2;
    pkt *f = r->fifo != r->heap && r->heap_cap >= nc ? r->heap : malloc(nc * sizeof *f);
    if (!f) {
      s->q.oom = 1;
      return;
    }
    for (uint32_t i = 0; i < r->fifo_n; i++) f[i] = r->fifo[(r->fifo_head + i) & (r->fifo_cap - 1)];
    if (f != r->heap) { /* a larger buffer (the old one, if in use, is copied out) */
      free(r->heap);
      r->heap = f;
      r->heap_cap = nc;
    }
    r->fifo = f;
    r->fifo_cap = nc;
    r->fifo_head = 0;
  }
  r->fifo[(r->fifo_head + r->fifo_n++) & (r->fifo_cap - 1)] = p;
}

static void on_packet_ready(sim *s, void *obj, uint64_t arg);
static void on_receive(sim *s, void *obj, uint64_t arg);

/* The next packet's peers and size, advancing the engine's cursor. */
static pkt next_packet(algo_run *r) {
  const phase_spec *ph = r->ph;
  uint32_t n = r->n;
  pkt p = {r->ring_dst, r->ring_src, r->msg};
  if (r->kind == ALGO_DIRECT) {
    p.dst = ring_peer(r, (int64_t)ph->dir * r->dst_off);
    p.src = ring_peer(r, -(int64_t)ph->dir * r->src_off);
    r->dst_off = r->dst_off + 1 == n ? 1 : r->dst_off + 1;
    r->src_off = r->src_off + 1 == n ? 1 : r->src_off + 1;
  } else if (r->kind == ALGO_HALVING_DOUBLING) {
    uint32_t d = r->hd_dist ? r->hd_dist : 1, idx = ph->ring.idx; /* 0 only for the last, unsent packet */
    int64_t peer = (idx / d) % 2 == 0 ? (int64_t)idx + d : (int64_t)idx - d;
    peer = ((peer % n) + n) % n;
    p.dst = p.src = lring_member(&ph->ring, (uint32_t)peer);
    p.bytes = r->hd_size;
    if (r->hd_grow) r->hd_dist *= 2, r->hd_size /= 2;
    else r->hd_dist /= 2, r->hd_size *= 2;
    if (r->type == SIM_AR && r->hd_grow && r->hd_dist >= n) {
      r->hd_grow = 0;
      r->hd_dist = n / 2;
      r->hd_size *= 2;
    }
  }
  return p;
}

static void insert_packet(sim *s, algo_run *r) {
  if (r->zero_left == 0 && r->nonzero_left == 0) {
    r->zero_left = r->P;
    r->nonzero_left = r->NZ;
    r->toggle = !r->toggle;
  }
  int processed = 0;
  if (r->zero_left > 0) {
    r->zero_left--;
  } else {
    processed = r->type == SIM_RS || (r->type == SIM_AR && r->toggle);
    r->nonzero_left--;
  }
  uint64_t wait = r->ep, bytes = r->msg;
  if (r->kind == ALGO_RING) { /* every packet alike: counted */
    r->fifo_n++;
  } else {
    pkt p = next_packet(r);
    fifo_push(s, r, p);
    bytes = p.bytes;
  }
  if (processed) wait += bytes == r->msg ? r->reduce_msg : reduce_ns(s, bytes);
  eventq_npu_after(&s->q, r->me, wait, on_packet_ready, r, 0);
}

static pkt fifo_pop(algo_run *r) {
  r->fifo_n--;
  if (r->kind == ALGO_RING) return (pkt){r->ring_dst, r->ring_src, r->msg};
  pkt p = r->fifo[r->fifo_head];
  r->fifo_head = (r->fifo_head + 1) & (r->fifo_cap - 1);
  return p;
}

static void try_send(sim *s, algo_run *r) {
  uint32_t n = r->n;
  /* Direct all-reduce: the all-gather half waits for the whole
   * reduce-scatter half to arrive. */
  if (r->kind == ALGO_DIRECT && r->type == SIM_AR && r->sends_left <= n - 1 && r->received < n - 1) return;
  while (r->fifo_n && r->sends_left > 0 && r->free_ > 0) {
    pkt p = fifo_pop(r);
    /* Every member sends this packet as this NPU does: in a reduced run
     * (symmetry.h) the NPU's own packet stands for the one it gets from
     * p.src, and its invitation for the one p.dst sends it. */
    uint32_t send_ksrc = s->sym ? p.src : r->me, send_kdst = s->sym ? r->me : p.dst;
    uint32_t recv_ksrc = s->sym ? p.dst : r->me, recv_kdst = s->sym ? r->me : p.src;
    net_send(s, r->me, p.dst, send_ksrc, send_kdst, p.bytes, r->tag, NULL, NULL, 0);
    net_recv(s, r->me, p.src, recv_ksrc, recv_kdst, p.bytes, r->tag, on_receive, r, 0);
    r->sends_left--;
    r->free_--;
  }
}

static void on_packet_ready(sim *s, void *obj, uint64_t arg) {
  (void)arg;
  algo_run *r = obj;
  r->free_++;
  try_send(s, r);
  if (r->sends_left == 0 && r->free_ == r->P) r->done(s, r->done_obj, 0);
}

static void on_receive(sim *s, void *obj, uint64_t arg) {
  (void)arg;
  algo_run *r = obj;
  r->received++;
  insert_packet(s, r);
}

/* ---- double binary tree (never in a reduced run: its members differ) ---- */

static void tree_done(sim *s, void *obj, uint64_t arg) {
  (void)arg;
  algo_run *r = obj;
  r->done(s, r->done_obj, 0);
}

static void tree_send_down(sim *s, void *obj, uint64_t arg) {
  (void)arg;
  algo_run *r = obj;
  uint64_t c = r->ph->in_bytes;
  for (int k = 0; k < 2; k++)
    if (r->child[k] != UINT32_MAX) net_send(s, r->me, r->child[k], r->me, r->child[k], c, r->tag, NULL, NULL, 0);
  r->done(s, r->done_obj, 0);
}

static void tree_from_parent(sim *s, void *obj, uint64_t arg) {
  (void)arg;
  algo_run *r = obj;
  if (r->role == 0) eventq_npu_after(&s->q, r->me, r->ph->ep, tree_done, r, 0);
  else eventq_npu_after(&s->q, r->me, r->ph->ep + reduce_ns(s, r->ph->in_bytes), tree_send_down, r, 0);
}

static void tree_send_up(sim *s, void *obj, uint64_t arg) {
  (void)arg;
  algo_run *r = obj;
  uint64_t c = r->ph->in_bytes;
  net_send(s, r->me, r->parent, r->me, r->parent, c, r->tag, NULL, NULL, 0);
  net_recv(s, r->me, r->parent, r->me, r->parent, c, r->tag, tree_from_parent, r, 0);
}

static void tree_child_ready(sim *s, void *obj, uint64_t arg) {
  (void)arg;
  algo_run *r = obj;
  if (--r->waits_left > 0) return;
  if (r->role == 2) tree_send_down(s, r, 0); /* top: straight back to its child */
  else tree_send_up(s, r, 0);
}

static void tree_from_child(sim *s, void *obj, uint64_t arg) {
  (void)arg;
  algo_run *r = obj;
  eventq_npu_after(&s->q, r->me, r->ph->ep + reduce_ns(s, r->ph->in_bytes), tree_child_ready, r, 0);
}

/* In-order numbered perfect tree of n-1 nodes under an extra top node.
 * Position p (0..n-1) in the tree's id order; max tree: top is n-1. */
static void tree_links(uint32_t n, int min_tree, uint32_t p, int *role, uint32_t *parent, uint32_t child[2]) {
  uint32_t top = min_tree ? 0 : n - 1, off = min_tree ? 1 : 0;
  child[0] = child[1] = UINT32_MAX;
  uint32_t root = off + n / 2 - 1;
  if (p == top) {
    *role = 2;
    *parent = UINT32_MAX;
    child[0] = root;
    return;
  }
  uint32_t x = p - off + 1, t = 0; /* 1-based in-order index and its height */
  while (!((x >> t) & 1)) t++;
  if (t == 0) *role = 0;
  else {
    *role = 1;
    child[0] = x - (1u << (t - 1)) - 1 + off;
    child[1] = x + (1u << (t - 1)) - 1 + off;
  }
  if (p == root) *parent = top;
  else *parent = (((x >> (t + 1)) & 1) ? x - (1u << t) : x + (1u << t)) - 1 + off;
}

static void tree_start(sim *s, algo_run *r) {
  const lring *g = &r->ph->ring;
  uint32_t parent, child[2];
  tree_links(g->n, r->tree, g->idx, &r->role, &parent, child);
  r->parent = parent == UINT32_MAX ? UINT32_MAX : lring_member(g, parent);
  for (int k = 0; k < 2; k++) r->child[k] = child[k] == UINT32_MAX ? UINT32_MAX : lring_member(g, child[k]);
  uint64_t c = r->ph->in_bytes;
  if (r->role == 0) {
    eventq_npu_after(&s->q, r->me, r->ph->ep, tree_send_up, r, 0);
    return;
  }
  r->waits_left = r->role == 2 ? 1 : 2;
  for (int k = 0; k < 2; k++)
    if (r->child[k] != UINT32_MAX) net_recv(s, r->me, r->child[k], r->me, r->child[k], c, r->tag, tree_from_child, r, 0);
}

/* ---- start ---- */

void algo_start(sim *s, algo_run *r, const phase_spec *ph, uint32_t me, uint64_t tag, int tree, sim_fn done,
                void *done_obj) {
  /* The heap packet buffer is kept across phases and streams. */
  pkt *heap = r->heap;
  uint32_t heap_cap = r->heap_cap;
  memset(r, 0, sizeof *r);
  r->heap = heap;
  r->heap_cap = heap_cap;
  r->fifo = r->small;
  r->fifo_cap = ALGO_FIFO_INLINE;
  r->tree = tree;
  r->done = done;
  r->done_obj = done_obj;
  r->ph = ph;
  r->me = me;
  r->tag = tag;
  r->type = (uint8_t)ph->type;
  r->kind = (uint8_t)ph->algo.kind;
  r->ep = ph->ep;
  uint32_t n = r->n = ph->ring.n;
  uint64_t c = ph->in_bytes;
  if (ph->algo.kind == ALGO_DOUBLE_BINARY_TREE) {
    tree_start(s, r);
    return;
  }
  r->msg = ph->type == SIM_AG ? c : c / n;
  r->reduce_msg = reduce_ns(s, r->msg);
  r->ring_dst = ring_peer(r, ph->dir);
  r->ring_src = ring_peer(r, -ph->dir);
  switch (ph->algo.kind) {
    case ALGO_RING:
      r->P = 1;
      r->NZ = (int)n - 1;
      r->sends_left = ph->type == SIM_AR ? 2 * (n - 1) : ph->type == SIM_A2A ? n * (n - 1) / 2 : n - 1;
      break;
    case ALGO_DIRECT: {
      uint32_t w = ph->algo.window && (uint32_t)ph->algo.window < n - 1 ? (uint32_t)ph->algo.window : n - 1;
      r->P = (int)w;
      r->NZ = ph->group_ring ? (int)((n - 1) * w) : (int)w;
      r->sends_left = ph->type == SIM_AR ? 2 * (n - 1) : n - 1;
      r->dst_off = r->src_off = 1;
      break;
    }
    default: { /* halving-doubling */
      uint32_t lg = ilog2(n);
      r->P = 1;
      r->NZ = (int)lg - 1;
      r->sends_left = ph->type == SIM_AR ? 2 * lg : lg;
      r->hd_grow = ph->type != SIM_AG;
      r->hd_size = ph->type == SIM_AG ? c : c / 2;
      r->hd_dist = ph->type == SIM_AG ? n / 2 : 1;
      break;
    }
  }
  for (int k = 0; k < r->P; k++) insert_packet(s, r);
}

void algo_free(algo_run *r) {
  free(r->heap);
  r->heap = NULL;
  r->heap_cap = 0;
  r->fifo = r->small;
  r->fifo_cap = ALGO_FIFO_INLINE;
  r->fifo_n = 0;
}
