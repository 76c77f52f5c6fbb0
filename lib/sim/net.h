/* net.h - the analytical network: message matching and delivery (private).
 *
 * A send and a receive match on (tag, src, dst, bytes): the k-th send of a
 * key is received by the k-th receive of that key. Both callbacks run at
 * arrival time; a receive posted after the arrival gets its callback as a
 * new event at posting time. Delivery time comes from one of two models:
 * congestion-unaware (one formula per message, lowest differing dimension)
 * or congestion-aware (store-and-forward over FIFO links per dimension).
 *
 * A message travels from src to dst (its delay) and is matched under the
 * key (ksrc, kdst): in a full run the same pair; in a reduced run
 * (symmetry.h) the pair of the message the receiving representative gets
 * in the full run, which the sender's message stands for. A receive is
 * always matched under its own (src, dst); (ksrc, kdst) there keys the
 * rendezvous invitation it sends back (a message from dst to src). */
#ifndef CHAKRA_SIM_NET_H
#define CHAKRA_SIM_NET_H

#include "core.h"

/* Tag spaces: native (workload send/recv, custom collectives) and
 * collective (stream ids of built-in algorithms) never match each other. */
#define NET_TAG_NATIVE 0ull
#define NET_TAG_COLLECTIVE (1ull << 40)
#define NET_TAG_RENDEZVOUS (2ull << 40)

int net_init(sim *s);
void net_free(sim *s);
/* The two protocols; net_send() and net_recv() pick by --rendezvous-protocol. */
void net_send_eager(sim *s, uint32_t src, uint32_t dst, uint32_t ksrc, uint32_t kdst, uint64_t bytes, uint64_t tag,
                    sim_fn cb, void *obj, uint64_t arg);
void net_recv_eager(sim *s, uint32_t dst, uint32_t src, uint64_t bytes, uint64_t tag, sim_fn cb, void *obj,
                    uint64_t arg);
void net_send_rendezvous(sim *s, uint32_t src, uint32_t dst, uint32_t ksrc, uint32_t kdst, uint64_t bytes,
                         uint64_t tag, sim_fn cb, void *obj, uint64_t arg);
void net_recv_rendezvous(sim *s, uint32_t dst, uint32_t src, uint32_t ksrc, uint32_t kdst, uint64_t bytes,
                         uint64_t tag, sim_fn cb, void *obj, uint64_t arg);

/* cb may be NULL. Inline: a packet engine sends and receives per packet. */
static inline void net_send(sim *s, uint32_t src, uint32_t dst, uint32_t ksrc, uint32_t kdst, uint64_t bytes,
                            uint64_t tag, sim_fn cb, void *obj, uint64_t arg) {
  if (s->opt.rendezvous) net_send_rendezvous(s, src, dst, ksrc, kdst, bytes, tag, cb, obj, arg);
  else net_send_eager(s, src, dst, ksrc, kdst, bytes, tag, cb, obj, arg);
}
static inline void net_recv(sim *s, uint32_t dst, uint32_t src, uint32_t ksrc, uint32_t kdst, uint64_t bytes,
                            uint64_t tag, sim_fn cb, void *obj, uint64_t arg) {
  if (s->opt.rendezvous) net_recv_rendezvous(s, dst, src, ksrc, kdst, bytes, tag, cb, obj, arg);
  else net_recv_eager(s, dst, src, bytes, tag, cb, obj, arg);
}
/* The unaware model's delay of `bytes` from src to dst, and what it is
 * made of: delay = floor(lat + bytes / bw) for every size, so two pairs
 * with equal signatures take equal time for every message (symmetry.h). */
typedef struct net_sig {
  double lat, bw;
  int multi;               /* charged by the multi-dimension rule (a warning names it) */
} net_sig;
net_sig net_signature(sim *s, uint32_t src, uint32_t dst);
static inline int net_sig_eq(net_sig a, net_sig b) { return a.lat == b.lat && a.bw == b.bw && a.multi == b.multi; }

/* Unmatched sends/receives left at the end (for deadlock reports). */
uint64_t net_pending(const sim *s, int (*visit)(void *ctx, int is_send, uint32_t src, uint32_t dst,
                                              uint64_t bytes, uint64_t tag), void *ctx);

#endif
