/* algo.h - one phase of a built-in collective algorithm on one NPU
 * (private).
 *
 * Ring, direct and halving-doubling share ASTRA-sim's packet engine: P
 * packets in flight, each waiting the endpoint delay (plus the local
 * reduction cost when it carries reduced data) before it may be sent; every
 * send posts the receive of the next expected message, every receipt
 * inserts a packet. The double binary tree has its own up/down schedule.
 * When the phase is over the engine calls the done callback it was
 * started with. */
#ifndef CHAKRA_SIM_ALGO_H
#define CHAKRA_SIM_ALGO_H

#include "core.h"

/* The NPUs of one logical ring (or tree) as seen from one member. */
typedef struct lring {
  uint32_t n, idx;              /* members, own position */
  uint32_t base, stride;        /* member k = base + k * stride ... */
  const uint32_t *members;      /* ... or members[k] for group rings */
} lring;

static inline uint32_t lring_member(const lring *r, uint32_t k) {
  return r->members ? r->members[k] : r->base + k * r->stride;
}

typedef struct phase_spec {
  sim_algo algo;
  int type;                     /* SIM_AR, SIM_AG, SIM_RS, SIM_A2A */
  int dim;                      /* network dimension (queue choice) */
  lring ring;
  uint64_t in_bytes;
  int queue;
  int dir;                      /* +1 clockwise, -1 anticlockwise */
  uint64_t ep;                  /* endpoint delay per packet */
  int group_ring;               /* ring of a proper-subset group */
  int agreed;                   /* its queue runs streams in the ring's one order (ringorder.h) */
  uint64_t ring_key;            /* that ring and queue */
} phase_spec;

typedef struct pkt {
  uint32_t dst, src;
  uint64_t bytes;
} pkt;

#define ALGO_FIFO_INLINE 2

/* One phase on one NPU. The fields every packet touches come first and
 * the phase's own (type, algorithm, ring size, endpoint delay) are copied
 * in: a 32,768-NPU run keeps a hundred thousand of these in flight, and
 * each pointer followed per packet is a cache miss. */
typedef struct algo_run {
  sim_fn done;                  /* called as done(s, done_obj, 0) when the phase is over */
  void *done_obj;
  uint64_t tag;
  uint64_t msg;                 /* ring/direct message size */
  uint64_t reduce_msg;          /* local reduction cost of msg */
  uint64_t ep;                  /* endpoint delay per packet */
  uint32_t me;
  uint32_t ring_dst, ring_src;  /* ring: the fixed peers */
  uint32_t sends_left, received;
  int P, NZ;
  int free_, zero_left, nonzero_left;
  uint8_t toggle, type, kind;   /* type: SIM_*; kind: ALGO_* */
  uint32_t n;                   /* ring members */
  /* Packets ready to go: a ring's are all alike (only counted), the
   * others' kept in order, in the run itself while few. */
  uint32_t fifo_head, fifo_n, fifo_cap;
  pkt *fifo;                    /* small (fifo_cap <= ALGO_FIFO_INLINE), or a heap buffer kept across phases */
  pkt small[ALGO_FIFO_INLINE];
  const phase_spec *ph;
  uint32_t dst_off, src_off;    /* direct: next peers */
  uint64_t hd_size;             /* halving-doubling: next size and distance */
  uint32_t hd_dist;
  int hd_grow;                  /* 1: distance doubles, 0: halves */
  /* double binary tree */
  int tree;                     /* 0 max, 1 min */
  int role;                     /* 0 leaf, 1 inner, 2 top */
  uint32_t parent, child[2];
  int waits_left, got_parent;
  pkt *heap;                    /* the heap buffer, kept across phases (NULL: none yet) */
  uint32_t heap_cap;
} algo_run;

void algo_start(sim *s, algo_run *r, const phase_spec *ph, uint32_t me, uint64_t tag, int tree, sim_fn done,
                void *done_obj);
void algo_free(algo_run *r);
/* Output size of a phase of type `type` with input c on n NPUs. */
uint64_t algo_out_bytes(int type, uint64_t c, uint32_t n);

#endif
