/* symmetry.h - reduced runs: one simulated NPU per rank class (private).
 *
 * When the classes of a workload are a symmetry of the run, every rank of
 * a class does what its representative does at the same nanoseconds, and
 * the run simulates the representatives only (chakra sim --symmetry,
 * docs/sim.md). sym_plan() decides before the run whether that can be
 * shown. The condition, checked for every rank of every class against its
 * representative (never for the representatives alone: a neighbour pair
 * deep inside a ring that crosses a slower link changes everyone's time):
 *  - point to point: each peer role leads to a rank of the same class,
 *    with the same delay signature (net_sig: latency and bandwidth) in
 *    the directions the role is used, the rank's own rank where the
 *    representative's is its own, distinct roles to distinct ranks, and
 *    the peer answering through the same role of its own (so the
 *    representative's message stands for the one its receiver gets);
 *  - collectives: every member of the group (or, for the global plan,
 *    every NPU along each dimension a phase uses) is in the rank's class,
 *    groups of a role have one size, and along the group's ring every
 *    offset the algorithm uses (ring +-1, direct all, halving-doubling
 *    +-2^k, a custom algorithm's peers after checking that every
 *    position's ETs are position 0's shifted) has one signature, the same
 *    in the rank's group as in its representative's; the double binary
 *    tree gives its members different roles and is refused;
 *  - the congestion-unaware network; per-NPU or no remote memory; no
 *    per-event log (trace-enabled) to write.
 * In the reduced run a message keeps its real ends for its delay and is
 * matched under the pair the receiving representative meets in a full
 * run (net.h); every such delay is compared with the one it stands for.
 *
 * Same-instant order. The reference breaks ties between events of one
 * instant by the order they were scheduled, which differs between the
 * ranks of a class (their neighbours' ids differ) and between the full
 * and the reduced run. Order matters only where two pieces of work of one
 * instant compete for something on one NPU: a hardware slot with an issue
 * into it (the lowest ready id wins), a collective queue both append
 * streams to, receives a custom collective posts. The reduced run counts
 * the pieces of work (each event, each batched callback, each side of a
 * delivery: eventq.unit) and gives up when two of them meet at one of
 * those on one NPU at one instant. Giving up, an unmatched message, an
 * unfinished representative, a delay that differs or any error redoes the
 * run with every NPU (the templates stay loaded once) and says why. */
#ifndef CHAKRA_SIM_SYMMETRY_H
#define CHAKRA_SIM_SYMMETRY_H

#include <stdint.h>

#include "core.h"

#define SYM_SLOTS 3 /* the workload's hardware slots (receives take none) */

/* One slot of one NPU at the current instant: who freed it, what was
 * issued into it and how. */
typedef struct sym_slot {
  uint64_t t;              /* the instant (valid when u_free | n_issue) */
  uint64_t u_free;         /* the piece of work that freed it, or 0 */
  uint64_t u_issue, id_issue;
  uint8_t n_issue, kind;   /* kind: 1 issued by the one freeing it, 2 issued as readied into a free slot */
} sym_slot;
typedef struct sym_slots {
  sym_slot s[SYM_SLOTS];
} sym_slots;

/* Who last did something at one place at one instant. */
typedef struct sym_mark {
  uint64_t t, u;
} sym_mark;

/* A receive key posted at one instant, by one unit (sym_recv_posted). */
typedef struct sym_rx {
  uint64_t h, t1, u;       /* t1: the instant + 1 (0: empty) */
} sym_rx;

struct sym {
  sym_rx *rx;              /* open addressing; entries of past instants are empty */
  size_t rx_mask, rx_n;
  uint64_t rx_t1;          /* rx_n counts this instant's entries */
  uint32_t *rep;           /* per rank: the NPU that runs it */
  uint32_t *koff;          /* per class: its first peer role in ksrc/kdst */
  uint32_t *ksrc, *kdst;   /* per class and peer role: the key of a message to that peer */
  int abandoned;
  char why[384];
};

enum { SYM_AUTO = CHAKRA_SIM_SYMMETRY_AUTO, SYM_OFF = CHAKRA_SIM_SYMMETRY_OFF };

/* After wl_setup(): sets s->sym and returns 1 when the run can be
 * reduced; returns 0 with the reason in why when it cannot (or mode is
 * SYM_OFF); < 0 with s->err set on failure. logs_events: the run writes
 * every rank's node events (trace-enabled). */
int sym_plan(sim *s, int mode, int logs_events, char *why, size_t n);
void sym_free(sim *s);

static inline int sym_runs(const sim *s, uint32_t npu) { return !s->sym || s->sym->rep[npu] == npu; }
static inline uint32_t sym_rep(const sim *s, uint32_t rank) { return s->sym ? s->sym->rep[rank] : rank; }
/* Rank's (a representative's) message keys per peer role, or NULLs. */
void sym_p2p_keys(const sim *s, uint32_t rank, const uint32_t **ksrc, const uint32_t **kdst);

/* Stops a reduced run: the symmetry could not be kept up (printf-like why). */
void sym_abandon(sim *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sym_check_delay(sim *s, uint64_t got, uint64_t want, uint32_t src, uint32_t dst, uint32_t ksrc, uint32_t kdst);
void sym_tie(sim *s, const char *what);

/* The issue rule takes the lowest ready id when a slot frees, so the
 * order of an instant's pieces of work matters only when another order
 * would issue another node. With one issue per slot and instant (x, by
 * unit v): a node y readied by another unit after it would have competed
 * if v freed the slot (id y < id x), and would have taken the free slot
 * first if v issued x into a free slot; x readied by another unit before
 * v freed the slot would have been missing, and another candidate taken.
 * A second issue at the instant with another unit involved is counted as
 * a tie. The slot's state at this instant, reset when time moves on: */
static inline sym_slot *sym_at(sim *s, sym_slots *t, int slot) {
  sym_slot *x = &t->s[slot];
  if (x->t != s->q.now) *x = (sym_slot){.t = s->q.now};
  return x;
}
/* The unit now running freed the slot. */
static inline void sym_free_slot(sim *s, sym_slots *t, int slot) {
  sym_slot *x = sym_at(s, t, slot);
  if (x->n_issue && x->u_issue != s->q.unit) sym_tie(s, "two events of one instant competed for a hardware slot");
  x->u_free = s->q.unit;
}
/* It readied node id for the slot. */
static inline void sym_ready(sim *s, sym_slots *t, int slot, uint64_t id) {
  sym_slot *x = sym_at(s, t, slot);
  if (x->n_issue && x->u_issue != s->q.unit && (x->kind == 2 || id < x->id_issue))
    sym_tie(s, "two events of one instant competed for a hardware slot");
}
/* It issued node id (readied at this instant by another unit: by_other)
 * into the slot; more: other nodes were waiting for it. */
static inline void sym_issue(sim *s, sym_slots *t, int slot, uint64_t id, int by_other, int more) {
  sym_slot *x = sym_at(s, t, slot);
  uint64_t u = s->q.unit;
  int kind = x->u_free == u ? 1 : 2;
  if ((x->n_issue && x->u_issue != u) || (kind == 1 && by_other && more))
    sym_tie(s, "two events of one instant competed for a hardware slot");
  x->n_issue++;
  x->u_issue = u;
  x->id_issue = id;
  x->kind = (uint8_t)kind;
}
/* A place (a collective queue, a custom collective's receives) two pieces
 * of work of one instant must not both reach. */
static inline void sym_once(sim *s, sym_mark *m, const char *what) {
  if (m->t == s->q.now && m->u != s->q.unit && m->u) sym_tie(s, what);
  m->t = s->q.now;
  m->u = s->q.unit;
}
static inline void sym_touch_custom(sim *s, sym_mark *m) {
  sym_once(s, m, "two events of one instant posted receives of one custom collective");
}
/* Receives take no slot: what the order of an instant changes is which of
 * two receives of one key (peer, tag, size) is matched first, so two
 * pieces of work posting receives of one key at one instant are a tie. */
void sym_recv_posted(sim *s, uint32_t dst, uint32_t src, uint64_t tag, uint64_t bytes);

#endif
