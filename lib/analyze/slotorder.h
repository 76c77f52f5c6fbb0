/* slotorder.h - which of a rank's communication-slot nodes the simulator
 * issues before which others in every timing (private to lib/analyze; the
 * deadlock check uses it).
 *
 * The simulator gives an NPU's one communication slot (sends, collectives,
 * memory and other non-receive communication nodes) to the lowest-id ready
 * node whenever it is free, and a node keeps it until it finishes. So if S
 * has a lower id than C and every parent of S is an ancestor of C, S is
 * ready whenever C is, and C can never take the slot before S has had it
 * and given it back: S finishes before C is issued, whatever the compute
 * and network times. (S without parents is the plainest case: ready from
 * the start.) Those orders are facts of every run; which of two nodes takes
 * the slot when neither condition holds depends on timing and is not
 * claimed. */
#ifndef CHAKRA_ANALYZE_SLOTORDER_H
#define CHAKRA_ANALYZE_SLOTORDER_H

#include <stdint.h>

/* The forced orders of one rank as a graph: for node S, the nodes that
 * must wait for S to finish are after[off[S] .. off[S+1]), and count[C] is
 * how many nodes C waits for. */
typedef struct so_order {
  uint32_t *off, *after, *count;
} so_order;

/* Computes the orders of a rank of n nodes (ids id[], children in CSR
 * child_off/children, in_slot[i] nonzero for communication-slot nodes).
 * Where the full rule would cost too much memory or time (very large
 * ranks), only slot nodes without parents are ordered, which is still
 * true in every run. Returns 0, or -1 when out of memory. */
int so_compute(so_order *o, uint32_t n, const uint64_t *id, const uint32_t *child_off, const uint32_t *children,
               const uint8_t *in_slot);
void so_free(so_order *o);

/* The simulator pairs a group's collectives across ranks, and a key's
 * messages with its receives, in the order each rank issues them, and that
 * order is timing's to decide where dependencies and the orders above leave
 * it open. What holds in every run is a lower bound: ord[i] receives the
 * most nodes of i's class (cls[i]; SO_NO_CLASS for none, ord[i] = 0) that
 * lie on one path to i through dependencies and the orders o, all of which
 * finish before i is issued. A class whose paths would cost more than a
 * budget of edge visits to follow keeps 0, still true. Returns 0, or -1
 * when out of memory. */
#define SO_NO_CLASS UINT64_MAX
int so_ordinals(const so_order *o, uint32_t n, const uint32_t *child_off, const uint32_t *children,
                const uint64_t *cls, uint64_t *ord);

#endif
