/* net.c - matching and the two analytical network models; see net.h. */
#include "net.h"

#include "../topo/topo_impl.h"
#include "../util/ipool.h"
#include "symmetry.h"

#include <stddef.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct net_msg {
  uint32_t src, dst;       /* the matching key's pair (net.h) */
  uint64_t bytes, tag;
  sim_fn cb;
  void *obj;
  uint64_t arg;
  uint32_t cur;        /* aware: the device (NPU or switch) the message is at */
  uint32_t next;       /* link queue / free list */
} net_msg;

typedef struct recv_wait {
  sim_fn cb;
  void *obj;
  uint64_t arg;
  uint32_t next;
} recv_wait;

/* One (tag, src, dst, bytes) key with messages or receives waiting. */
typedef struct match_slot {
  uint64_t tag, bytes;
  uint32_t src, dst;
  uint32_t arrived;        /* messages arrived with no receive yet */
  uint32_t head, tail;     /* receives posted with no message yet, after `first` */
  /* The oldest waiting receive, kept here: a key rarely has two, and the
   * pool costs an allocation and a cache line per message. */
  sim_fn first_cb;         /* NULL = none */
  void *first_obj;
  uint64_t first_arg;
} match_slot;

static int slot_live(const match_slot *m) { return m->arrived || m->first_cb || m->head; }

/* A directed link's state. Its cost class says where its bandwidth and
 * latency come from: product topologies give every link of a dimension the
 * dimension's, a link list gives each link its own (docs/topology.md); the
 * class, not a copy of the two doubles, keeps a link at 16 bytes (a
 * 1,024-NPU FullyConnected network has a million). */
typedef struct link {
  int32_t cls;             /* the dimension, or LINK_OWN + index in a link list */
  int busy;
  uint32_t head, tail;     /* waiting messages */
} link;

/* Delay memo: collectives send the same size over the same hop count
 * millions of times; the formula's division and floor are worth skipping. */
typedef struct delay_memo {
  uint64_t bytes, delay;
  uint32_t hops;
  int32_t dim;
} delay_memo;

#define DELAY_MEMO 256
#define LINK_OWN CHAKRA_TOPO_MAX_DIMS

typedef struct net {
  double bw[CHAKRA_TOPO_MAX_DIMS]; /* bytes per ns */
  delay_memo memo[DELAY_MEMO];
  net_msg *msgs;
  uint32_t n_msgs, cap_msgs, free_msgs;
  recv_wait *waits;
  uint32_t n_waits, cap_waits, free_waits;
  /* The probed table holds 4-byte indices into a dense array of keys:
   * probes touch a table an eighth full at 4 bytes a slot, and the keys in
   * use stay packed (new ones appended), so both stay in cache. */
  uint32_t *index;         /* 0 = empty, else 1 + position in slots */
  match_slot *slots;
  uint32_t n_slots, cap_slots;
  size_t mask, used;
  uint32_t gen;            /* table rebuilds: key positions older than this are stale */
  struct slot_ref {        /* per receiving NPU, its last key: a phase's */
    uint32_t slot;         /* receives and arrivals all share one key */
    uint32_t gen;
  } *last;
  link *links;
  net_link_stat *stats;    /* per link, when opt.link_stats (aware model only) */
  int warned_multidim;
  uint32_t *coord;         /* per NPU and dimension: its coordinate (a division less per lookup) */
} net;

/* ---- pools ---- */

static uint32_t msg_alloc(sim *s) {
  net *n = s->net;
  uint32_t i = ipool_take(&n->msgs, &n->n_msgs, &n->cap_msgs, &n->free_msgs, sizeof *n->msgs, offsetof(net_msg, next));
  if (!i) s->q.oom = 1;
  return i;
}

static void msg_free(net *n, uint32_t i) {
  n->msgs[i].next = n->free_msgs;
  n->free_msgs = i;
}

static uint32_t wait_alloc(sim *s) {
  net *n = s->net;
  uint32_t i =
      ipool_take(&n->waits, &n->n_waits, &n->cap_waits, &n->free_waits, sizeof *n->waits, offsetof(recv_wait, next));
  if (!i) s->q.oom = 1;
  return i;
}

/* ---- matching table: open addressing, backward-shift deletion ---- */

static size_t key_hash(uint64_t tag, uint32_t src, uint32_t dst, uint64_t bytes) {
  uint64_t h = tag * 0x9e3779b97f4a7c15ull ^ ((uint64_t)src << 32 | dst) * 0xc2b2ae3d27d4eb4full ^
               bytes * 0x165667b19e3779f9ull;
  h ^= h >> 29;
  return (size_t)(h * 0xbf58476d1ce4e5b9ull >> 7);
}

/* Empty slots are not deleted when they empty (a stream's next message
 * reuses the same key at once); they are dropped when the table is rebuilt,
 * which sizes it to the live keys so memory stays bounded. */
static int table_rebuild(net *n) {
  size_t live = 0;
  for (uint32_t i = 0; i < n->n_slots; i++) /* each key has one index entry */
    live += slot_live(&n->slots[i]);
  size_t ncap = 1024;
  while (ncap < live * 8) ncap *= 2;
  uint32_t *ni = calloc(ncap, sizeof *ni);
  /* at most a quarter of the table holds keys (slot_insert) */
  match_slot *ns = malloc((ncap / 4 + 1) * sizeof *ns);
  if (!ni || !ns) return free(ni), free(ns), -1;
  uint32_t k = 0;
  /* Live keys are moved in the old table's order: the positions they take
   * in the new one, and so every later probe, are as before. */
  for (size_t i = 0; n->index && i <= n->mask; i++) {
    if (!n->index[i]) continue;
    const match_slot *o = &n->slots[n->index[i] - 1];
    if (!slot_live(o)) continue;
    size_t h = key_hash(o->tag, o->src, o->dst, o->bytes) & (ncap - 1);
    while (ni[h]) h = (h + 1) & (ncap - 1);
    ns[k] = *o;
    ni[h] = ++k;
  }
  free(n->index);
  free(n->slots);
  n->index = ni;
  n->slots = ns;
  n->n_slots = k;
  n->cap_slots = (uint32_t)(ncap / 4 + 1);
  n->gen++;
  n->mask = ncap - 1;
  n->used = live;
  return 0;
}

/* A new key: h is the empty slot ending its probe, dead the first
 * reusable one before it (SIZE_MAX if none). */
static match_slot *slot_insert(sim *s, uint64_t tag, uint32_t src, uint32_t dst, uint64_t bytes,
                               size_t h, size_t dead) {
  net *n = s->net;
  const match_slot fresh = {tag, bytes, src, dst, 0, 0, 0, NULL, NULL, 0};
  if (dead != SIZE_MAX) { /* absent: take the first dead slot on the path */
    match_slot *m = &n->slots[n->index[dead] - 1];
    *m = fresh;
    return m;
  }
  /* Dead slots lengthen probes: rebuild at a quarter full, counting them. */
  if ((n->used + 1) * 4 > n->mask + 1) {
    if (table_rebuild(n)) return s->q.oom = 1, NULL;
    h = key_hash(tag, src, dst, bytes) & n->mask;
    while (n->index[h]) h = (h + 1) & n->mask;
  }
  match_slot *m = &n->slots[n->n_slots]; /* used < cap_slots: the rule above */
  *m = fresh;
  n->index[h] = ++n->n_slots;
  n->used++;
  return m;
}

static inline match_slot *slot_get(sim *s, uint64_t tag, uint32_t src, uint32_t dst, uint64_t bytes) {
  net *n = s->net;
  size_t h = key_hash(tag, src, dst, bytes) & n->mask, dead = SIZE_MAX;
  for (;; h = (h + 1) & n->mask) {
    if (!n->index[h]) break;
    match_slot *m = &n->slots[n->index[h] - 1];
    if (m->tag == tag && m->src == src && m->dst == dst && m->bytes == bytes) return m;
    if (dead == SIZE_MAX && !slot_live(m)) dead = h;
  }
  return slot_insert(s, tag, src, dst, bytes, h, dead);
}

/* slot_get() through the receiving NPU's last key. */
static inline match_slot *slot_at(sim *s, uint64_t tag, uint32_t src, uint32_t dst, uint64_t bytes) {
  net *n = s->net;
  struct slot_ref *c = &n->last[dst];
  match_slot *m = &n->slots[c->slot];
  if (c->gen == n->gen && m->tag == tag && m->src == src && m->dst == dst && m->bytes == bytes) return m;
  m = slot_get(s, tag, src, dst, bytes);
  if (m) *c = (struct slot_ref){(uint32_t)(m - n->slots), n->gen};
  return m;
}

/* ---- delivery ---- */

/* An event: message mi has reached its destination. */
static void deliver(sim *s, void *obj, uint64_t mi) {
  (void)obj;
  net *n = s->net;
  const net_msg *m = &n->msgs[mi];
  uint64_t tag = m->tag, bytes = m->bytes;
  uint32_t src = m->src, dst = m->dst;
  sim_fn cb = m->cb; /* NULL for collective traffic */
  void *cobj = m->obj;
  uint64_t carg = m->arg;
  msg_free(n, (uint32_t)mi);
  if (cb) cb(s, cobj, carg);
  s->q.unit++; /* the sender's completion and the receipt are two pieces of work */
  match_slot *sl = slot_at(s, tag, src, dst, bytes);
  if (!sl) return;
  if (sl->first_cb) {
    sim_fn fn = sl->first_cb;
    sl->first_cb = NULL;
    fn(s, sl->first_obj, sl->first_arg);
    return;
  }
  if (!sl->head) {
    sl->arrived++;
    return;
  }
  uint32_t wi = sl->head;
  recv_wait w = n->waits[wi];
  sl->head = w.next;
  if (!sl->head) sl->tail = 0;
  n->waits[wi].next = n->free_waits;
  n->free_waits = wi;
  w.cb(s, w.obj, w.arg);
}

static uint32_t hops_in(const sim *s, int d, uint32_t a, uint32_t b) { return topo_hops_fast(s->topo, d, a, b); }

static inline uint32_t coord(const sim *s, uint32_t id, int d) { return s->net->coord[(size_t)id * (unsigned)s->dims + (unsigned)d]; }

/* Where a product topology charges a message: the lowest dimension its
 * NPUs differ in (the last one when they are the same NPU), the hops
 * there, and whether a higher dimension differs too. */
typedef struct net_place {
  int d, multi;
  uint32_t hops;
} net_place;

static net_place locate(const sim *s, uint32_t src, uint32_t dst) {
  net_place p = {0, 0, 0};
  uint32_t a = src, b = dst; /* 1-D: the coordinate is the id */
  if (s->dims > 1) {
    const uint32_t *cs = &s->net->coord[(size_t)src * (unsigned)s->dims], *cd = &s->net->coord[(size_t)dst * (unsigned)s->dims];
    while (p.d < s->dims - 1 && cs[p.d] == cd[p.d]) p.d++;
    a = cs[p.d];
    b = cd[p.d];
    for (int e = p.d + 1; e < s->dims && !p.multi; e++) p.multi = cs[e] != cd[e];
  }
  p.hops = src == dst ? 0 : hops_in(s, p.d, a, b);
  return p;
}

/* NPUs differing in several dimensions: ASTRA-sim charges only the lowest
 * one (kept by default for agreement); multidim_full charges every
 * differing dimension's hops and the slowest bandwidth. */
static net_sig product_sig(const sim *s, uint32_t src, uint32_t dst, net_place p) {
  if (p.multi && s->opt.multidim_full) {
    net_sig g = {0, 0, 1};
    for (int e = 0; e < s->dims; e++) {
      uint32_t x = coord(s, src, e), y = coord(s, dst, e);
      if (x == y) continue;
      g.lat += (double)hops_in(s, e, x, y) * topo_latency(s->topo, e);
      if (g.bw == 0 || s->net->bw[e] < g.bw) g.bw = s->net->bw[e];
    }
    return g;
  }
  return (net_sig){(double)p.hops * topo_latency(s->topo, p.d), s->net->bw[p.d], p.multi};
}

/* A link list has no dimensions: a message pays every link latency on its
 * route and the serialisation of its slowest link, once (docs/topology.md);
 * a message to itself only the serialisation at the slowest link in the
 * topology, as a product topology charges 0 hops. */
static net_sig route_sig(const sim *s, uint32_t src, uint32_t dst) {
  const chakra_topo *t = s->topo;
  net_sig g = {0, src == dst ? s->net->bw[0] : 0, 0};
  for (uint32_t at = src; at != dst;) {
    const chakra_topo_link *l = &t->lk[topo_list_next(t, at, dst)];
    g.lat += l->latency_ns;
    if (g.bw == 0 || l->bytes_per_ns < g.bw) g.bw = l->bytes_per_ns;
    at = l->dst;
  }
  return g;
}

/* What unaware_delay() charges a message between two NPUs. */
net_sig net_signature(sim *s, uint32_t src, uint32_t dst) {
  if (s->topo->lk) return route_sig(s, src, dst);
  return product_sig(s, src, dst, locate(s, src, dst));
}

static uint64_t sig_delay(net_sig g, uint64_t bytes) { return eventq_ns(g.lat + (double)bytes / g.bw); }

static uint64_t unaware_delay(sim *s, uint32_t src, uint32_t dst, uint64_t bytes) {
  if (s->topo->lk) return sig_delay(route_sig(s, src, dst), bytes);
  net_place p = locate(s, src, dst);
  if (p.multi) {
    if (!s->net->warned_multidim) {
      s->net->warned_multidim = 1;
      if (!s->opt.multidim_full)
        sim_warn(s, "messages between NPUs that differ in several dimensions are charged only the lowest one, as ASTRA-sim does (multidim_full charges them all)");
    }
    return sig_delay(product_sig(s, src, dst, p), bytes);
  }
  delay_memo *m = &s->net->memo[(bytes * 31 + p.hops * 7 + (uint64_t)p.d) % DELAY_MEMO];
  if (m->dim == p.d && m->hops == p.hops && m->bytes == bytes) return m->delay;
  uint64_t delay = sig_delay(product_sig(s, src, dst, p), bytes);
  *m = (delay_memo){bytes, delay, p.hops, p.d};
  return delay;
}

/* ---- congestion-aware links ---- */

/* The next link for a message at its current device (moving it there),
 * or UINT64_MAX when it has reached its destination. */
static uint64_t next_link(sim *s, net_msg *m) {
  chakra_topo_hop h;
  if (!topo_next_hop_fast(s->topo, m->cur, m->dst, &h)) return UINT64_MAX;
  m->cur = h.next;
  return h.link;
}

static void link_start(sim *s, uint64_t li, uint32_t mi);
static void on_hop_arrival(sim *s, void *obj, uint64_t mi);

static void link_enter(sim *s, uint64_t li, uint32_t mi) {
  link *l = &s->net->links[li];
  if (!l->busy) {
    link_start(s, li, mi);
    return;
  }
  s->net->msgs[mi].next = 0;
  if (l->tail) s->net->msgs[l->tail].next = mi;
  else l->head = mi;
  l->tail = mi;
}

static void on_link_free(sim *s, void *obj, uint64_t li) {
  (void)obj;
  link *l = &s->net->links[li];
  l->busy = 0;
  if (!l->head) return;
  uint32_t mi = l->head;
  l->head = s->net->msgs[mi].next;
  if (!l->head) l->tail = 0;
  link_start(s, li, mi);
}

/* Busy time and hop time of `bytes` on link l, memoised per cost class. */
static void link_times(sim *s, const link *l, uint64_t bytes, uint64_t *busy, uint64_t *hop) {
  int32_t c = l->cls;
  double bpns, lat;
  delay_memo *m = &s->net->memo[(bytes * 31 + 5 + (uint64_t)c) % DELAY_MEMO];
  if (m->dim == c && m->hops == UINT32_MAX && m->bytes == bytes) {
    *busy = m->delay >> 32;
    *hop = m->delay & 0xffffffffu;
    return;
  }
  if (c < LINK_OWN) {
    bpns = s->net->bw[c];
    lat = topo_latency(s->topo, c);
  } else {
    bpns = s->topo->lk[c - LINK_OWN].bytes_per_ns;
    lat = s->topo->lk[c - LINK_OWN].latency_ns;
  }
  double ser = (double)bytes / bpns;
  *busy = eventq_ns(ser);
  *hop = eventq_ns(lat + ser);
  if (*busy < (1ull << 32) && *hop < (1ull << 32))
    *m = (delay_memo){bytes, *busy << 32 | *hop, UINT32_MAX, c};
}

static void link_start(sim *s, uint64_t li, uint32_t mi) {
  link *l = &s->net->links[li];
  uint64_t busy, hop;
  link_times(s, l, s->net->msgs[mi].bytes, &busy, &hop);
  l->busy = 1;
  if (s->net->stats) {
    net_link_stat *st = &s->net->stats[li];
    st->busy_ns += busy, st->bytes += s->net->msgs[mi].bytes, st->messages++;
  }
  /* The arrival is queued before the link-free event, as the reference does. */
  eventq_at(&s->q, eventq_later(&s->q, hop), on_hop_arrival, NULL, mi);
  eventq_at(&s->q, eventq_later(&s->q, busy), on_link_free, NULL, li);
}

static void on_hop_arrival(sim *s, void *obj, uint64_t mi) {
  (void)obj;
  uint64_t li = next_link(s, &s->net->msgs[mi]);
  if (li == UINT64_MAX) deliver(s, NULL, mi);
  else link_enter(s, li, (uint32_t)mi);
}

static int build_links(sim *s) {
  net *n = s->net;
  uint64_t total = chakra_topo_links(s->topo);
  n->links = calloc(total ? total : 1, sizeof *n->links);
  if (!n->links) return -1;
  /* a link list has at most 4,096^2 links: the class fits */
  for (uint64_t i = 0; i < total; i++)
    n->links[i].cls = s->topo->lk ? LINK_OWN + (int32_t)i : chakra_topo_link_dim(s->topo, i);
  if (s->opt.link_stats && !(n->stats = calloc(total ? total : 1, sizeof *n->stats))) return -1;
  return 0;
}

/* ---- public ---- */

int net_init(sim *s) {
  net *n = calloc(1, sizeof *n);
  if (!n) return -1;
  s->net = n;
  for (int d = 0; d < s->dims; d++) n->bw[d] = chakra_topo_bytes_per_ns(s->topo, d);
  n->n_msgs = n->n_waits = 1; /* index 0 means "none" */
  n->last = calloc(s->npus, sizeof *n->last); /* gen 0 = stale: rebuilds start at 1 */
  if (!n->last) return -1;
  for (int i = 0; i < DELAY_MEMO; i++) n->memo[i].dim = -1;
  if (s->dims > 1) {
    if (!(n->coord = malloc((size_t)s->npus * (unsigned)s->dims * sizeof *n->coord))) return -1;
    for (uint32_t id = 0; id < s->npus; id++)
      for (int d = 0; d < s->dims; d++) n->coord[(size_t)id * (unsigned)s->dims + (unsigned)d] = sim_coord(s, id, d);
  }
  if (table_rebuild(n)) return -1;
  return s->opt.aware ? build_links(s) : 0;
}

void net_free(sim *s) {
  net *n = s->net;
  if (!n) return;
  free(n->msgs);
  free(n->waits);
  free(n->index);
  free(n->slots);
  free(n->last);
  free(n->links);
  free(n->coord);
  free(n->stats);
  free(n);
  s->net = NULL;
}

void net_send_eager(sim *s, uint32_t src, uint32_t dst, uint32_t ksrc, uint32_t kdst, uint64_t bytes, uint64_t tag,
                    sim_fn cb, void *obj, uint64_t arg) {
  uint32_t mi = msg_alloc(s);
  if (!mi) return;
  s->net->msgs[mi] = (net_msg){ksrc, kdst, bytes, tag, cb, obj, arg, src, 0};
  s->messages++;
  if (!s->opt.aware) {
    uint64_t delay = unaware_delay(s, src, dst, bytes);
    if (s->sym && (ksrc != src || kdst != dst)) sym_check_delay(s, delay, unaware_delay(s, ksrc, kdst, bytes), src, dst, ksrc, kdst);
    /* the message as the event's object: only a hint for the loop's
     * prefetch (deliver reads the pool by index; the pool may move) */
    eventq_at(&s->q, eventq_later(&s->q, delay), deliver, &s->net->msgs[mi], mi);
    return;
  }
  uint64_t li = next_link(s, &s->net->msgs[mi]);
  if (li == UINT64_MAX) eventq_at(&s->q, s->q.now, deliver, NULL, mi);
  else link_enter(s, li, mi);
}

void net_recv_eager(sim *s, uint32_t dst, uint32_t src, uint64_t bytes, uint64_t tag, sim_fn cb,
                     void *obj, uint64_t arg) {
  net *n = s->net;
  if (s->sym) sym_recv_posted(s, dst, src, tag, bytes);
  match_slot *sl = slot_at(s, tag, src, dst, bytes);
  if (!sl) return;
  if (sl->arrived) {
    sl->arrived--;
    eventq_at(&s->q, s->q.now, cb, obj, arg);
    return;
  }
  if (!sl->first_cb && !sl->head) { /* nothing older waits: keep it in the slot */
    sl->first_cb = cb;
    sl->first_obj = obj;
    sl->first_arg = arg;
    return;
  }
  uint32_t wi = wait_alloc(s);
  if (!wi) return;
  n->waits[wi] = (recv_wait){cb, obj, arg, 0};
  if (sl->tail) n->waits[sl->tail].next = wi;
  else sl->head = wi;
  sl->tail = wi;
}

/* ---- rendezvous: the receiver invites each send with a control message ---- */

#define RDV_BYTES 8192

typedef struct rdv_op {
  uint32_t a, b;           /* send: src, dst; receive: dst, src */
  uint32_t ka, kb;         /* send: the data's key */
  uint64_t bytes, tag;
  sim_fn cb;
  void *obj;
  uint64_t arg;
} rdv_op;

static rdv_op *rdv_new(sim *s, const rdv_op *v) {
  rdv_op *op = live_alloc(&s->live, sizeof *op);
  if (!op) s->q.oom = 1;
  else *op = *v;
  return op;
}

/* The invitation reached the sender: the data goes now. */
static void rdv_invited(sim *s, void *obj, uint64_t arg) {
  (void)arg;
  rdv_op op = *(rdv_op *)obj;
  live_release(&s->live, obj);
  net_send_eager(s, op.a, op.b, op.ka, op.kb, op.bytes, op.tag, op.cb, op.obj, op.arg);
}

/* The invitation was delivered: the real receive is posted. */
static void rdv_invitation_sent(sim *s, void *obj, uint64_t arg) {
  (void)arg;
  rdv_op op = *(rdv_op *)obj;
  live_release(&s->live, obj);
  net_recv_eager(s, op.a, op.b, op.bytes, op.tag, op.cb, op.obj, op.arg);
}

static uint64_t rdv_tag(uint64_t tag) { return NET_TAG_RENDEZVOUS | (tag & ((1ull << 40) - 1)) | (tag >> 40) << 48; }

void net_send_rendezvous(sim *s, uint32_t src, uint32_t dst, uint32_t ksrc, uint32_t kdst, uint64_t bytes,
                         uint64_t tag, sim_fn cb, void *obj, uint64_t arg) {
  rdv_op v = {src, dst, ksrc, kdst, bytes, tag, cb, obj, arg};
  rdv_op *op = rdv_new(s, &v);
  if (op) net_recv_eager(s, src, dst, RDV_BYTES, rdv_tag(tag), rdv_invited, op, 0);
}

void net_recv_rendezvous(sim *s, uint32_t dst, uint32_t src, uint32_t ksrc, uint32_t kdst, uint64_t bytes,
                         uint64_t tag, sim_fn cb, void *obj, uint64_t arg) {
  rdv_op v = {dst, src, dst, src, bytes, tag, cb, obj, arg};
  rdv_op *op = rdv_new(s, &v);
  if (op) net_send_eager(s, dst, src, ksrc, kdst, RDV_BYTES, rdv_tag(tag), rdv_invitation_sent, op, 0);
}

uint64_t net_pending(const sim *s, int (*visit)(void *ctx, int is_send, uint32_t src, uint32_t dst,
                                              uint64_t bytes, uint64_t tag), void *ctx) {
  const net *n = s->net;
  uint64_t count = 0;
  for (size_t i = 0; n && i <= n->mask; i++) {
    if (!n->index[i]) continue;
    const match_slot *m = &n->slots[n->index[i] - 1];
    uint64_t k = m->arrived + (m->first_cb != NULL);
    for (uint32_t w = m->head; w; w = n->waits[w].next) k++;
    count += k;
    if (visit && k) visit(ctx, m->arrived > 0, m->src, m->dst, m->bytes, m->tag); /* empty slots are dead keys */
  }
  return count;
}

const net_link_stat *net_link_stats(const sim *s) { return s->net ? s->net->stats : NULL; }
