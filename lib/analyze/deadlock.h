/* deadlock.h - can a workload's ranks run to completion? (private to
 * lib/analyze; validate uses it).
 *
 * An abstract execution without time: each rank issues its dependency-free
 * nodes in ascending id order; local work and sends finish as soon as they
 * are issued (a send finishes when its message arrives, which never waits
 * for the receiver); a receive finishes once its (src, dst, tag, size) key
 * has had more sends issued than the key's receives that precede it in
 * every run; a collective finishes once every member of its group has
 * issued more of the group's collectives than precede it on its rank in
 * every run (so_ordinals: the simulator pairs them in each rank's issue
 * order, which is timing's where nothing orders them, so this run's own
 * order is no stand-in). Nothing else waits, so whatever is unfinished at
 * the fixed point waits in a cycle through other ranks and is stuck in
 * every timing: the simulator cannot finish those ranks either.
 *
 * The simulator's one communication slot per NPU (sends, collectives and
 * other non-receive communication nodes, one at a time, each until it
 * finishes) is modelled by the orders it imposes in every timing
 * (slotorder.h): a slot node waits for the lower-id slot nodes that are
 * ready whenever it is. A collective that takes the slot while a send its
 * group waits for is still ready behind it is found that way. Which of two
 * nodes takes the slot when neither order is certain depends on compute and
 * network times and is not decided here (validate runs the simulator for
 * that when given a configuration).
 *
 * With the rendezvous protocol a send finishes only once its receive has
 * been issued (the receiver's invitation), so sends wait too. */
#ifndef CHAKRA_ANALYZE_DEADLOCK_H
#define CHAKRA_ANALYZE_DEADLOCK_H

#include <stdint.h>

#include "chakra/graph.h"
#include "chakra/node.h"

/* The simulator's issue classes: the vocabulary's slots (chakra/node.h). */
enum { DL_CPU = CHAKRA_SLOT_CPU, DL_COMP = CHAKRA_SLOT_GPU, DL_COMM = CHAKRA_SLOT_COMM, DL_RECV_SLOT = CHAKRA_SLOT_NONE,
       DL_SLOTS = CHAKRA_SLOTS };
enum { DL_LOCAL, DL_SEND, DL_RECV, DL_COLL };               /* what finishing waits for */

/* One rank's skeleton: just what the execution needs (about 30 bytes a
 * node), so that every rank of a large workload fits at once. */
typedef struct dl_rank {
  uint32_t n;
  uint64_t *id, *offset;
  uint8_t *slot, *kind;
  uint32_t *key;           /* send/recv: key index (dl_rank_set_key); coll: group index */
  int8_t *comm_type;       /* collectives, for the report */
  uint64_t *size;          /* collectives, for the report */
  uint32_t *indeg, *child_off, *children;
} dl_rank;

/* Builds r from a loaded graph (indexes as in g). Returns 0 or -1 when out
 * of memory. group_of maps a node to its group index (collectives only). */
int dl_rank_init(dl_rank *r, const chakra_graph *g, uint32_t (*group_of)(void *ctx, uint32_t i),
                 void *ctx);
void dl_rank_free(dl_rank *r);

/* A stuck node, handed to the report callback: rank, node index, and for
 * a receive its key, for a collective its group and the ranks that never
 * issued their part. */
typedef struct dl_stuck {
  int rank;
  uint32_t node;
  uint32_t waiter;         /* a slot node that only node's holding the slot keeps back, or UINT32_MAX */
  int kind;                /* DL_RECV, DL_COLL, DL_SEND (rendezvous), or DL_LOCAL (never became ready) */
  uint32_t key;            /* receive key or group */
  uint64_t ordinal;        /* collective: its position in the group */
  int missing_rank;        /* a collective: one member that did not issue it; else -1 */
  uint32_t unfinished;     /* nodes of this rank that never finished */
} dl_stuck;

typedef void (*dl_report_fn)(void *ctx, const dl_stuck *s);

/* A group as the execution sees it: a collective of ordinal k completes
 * once the members that issued their k-th weigh `need` together. Each of
 * the n ranks of list (ascending; NULL: ranks 0..n-1) weighs weight[j]
 * (NULL: 1 each). Per rank, need = n and the weights are 1; checking by
 * class (validate.c) runs one rank per class, whose weight is how many of
 * the group's members it stands for. */
typedef struct dl_group {
  uint32_t need, n;
  const uint32_t *list, *weight;
} dl_group;

/* Runs the execution over n ranks with n_keys receive keys and n_groups
 * groups; rendezvous: sends wait for their receives.
 * Calls report once per rank that cannot finish: for the node holding the
 * slot when that is why, else for its lowest-id blocked node. Returns the
 * number of stuck ranks, or -1 when out of memory. */
int dl_run(dl_rank *ranks, int n, uint32_t n_keys, uint32_t n_groups, const dl_group *groups, int rendezvous,
           dl_report_fn report, void *ctx);

#endif
