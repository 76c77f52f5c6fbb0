/* ringorder.h - one service order per ring for the streams its members'
 * queues run (private; coll.c uses it).
 *
 * A dimension queue runs a few streams at a time, first come first
 * served, and a ring phase only progresses when every member of the ring
 * runs it. Where streams reach a queue in an order that timing decides (a
 * queue two phases of a plan share, as localBWAware all-reduce's
 * reduce-scatter and all-gather on a middle dimension of a 3-D network; a
 * later phase after a queue that runs several streams at once), members
 * whose timing differs (a mesh's edge and middle NPUs) can each start a
 * stream the other queues behind its own, and the ring waits forever. So
 * for those queues the ring keeps one log: the first member to fill a
 * place in it picks its own first waiting stream, as it always did, and
 * every other member runs the same stream at that place, waiting for it if
 * it has not arrived yet. Where all members see the same order (tori,
 * every ASTRA-sim topology) each picks what the first picked: nothing
 * changes. */
#ifndef CHAKRA_SIM_RINGORDER_H
#define CHAKRA_SIM_RINGORDER_H

#include <stdint.h>

typedef struct ro_table ro_table;
typedef struct ro_log ro_log;

/* An empty table, or NULL when out of memory. */
ro_table *ro_new(void);
void ro_free(ro_table *t);

/* The log of the ring `key` of n members, made empty on first use; NULL
 * when out of memory. */
ro_log *ro_get(ro_table *t, uint64_t key, uint32_t n);

/* The stream member m must run next: 1 with its tag and phase when the log
 * has decided it, 0 when m is the first to get there (its pick). */
int ro_next(const ro_log *l, uint32_t m, uint64_t *tag, int *phase);

/* Member m runs (tag, phase) next: appended when m was first. Returns 0,
 * or -1 when out of memory. */
int ro_ran(ro_log *l, uint32_t m, uint64_t tag, int phase);

#endif
