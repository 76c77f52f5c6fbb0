/* live.h - allocations a run may still hold when it stops early (private).
 *
 * Collectives, custom-collective runs, remote-memory requests and
 * rendezvous handshakes live from an issue to a completion event. When a
 * run ends before those events fire (an error, a deadlock, a progress
 * callback that stops it), nothing else would free them; objects taken
 * from a live_list are freed with the list instead. */
#ifndef CHAKRA_SIM_LIVE_H
#define CHAKRA_SIM_LIVE_H

#include <stddef.h>

typedef struct live_list {
  struct live_hdr *head;
} live_list;

/* n zeroed bytes owned by l, or NULL when out of memory. */
void *live_alloc(live_list *l, size_t n);
/* Frees p (from live_alloc on l, or NULL). */
void live_release(live_list *l, void *p);
/* Frees whatever l still holds. */
void live_free_all(live_list *l);

#endif
