/* custom.h - custom collectives: per-rank algorithm ETs of send, receive
 * and compute nodes run in place of a built-in algorithm (private).
 *
 * Each NPU runs PREFIX.<pos>.et, pos = its position in the communicator
 * group's sorted member list (its rank without a group); algorithm ranks in
 * comm_src/comm_dst map back to NPUs through that list. Files are loaded
 * once per run. All dependency-free nodes issue at once (no slots), sends
 * complete at arrival, compute takes duration_micros (0 -> 1 ns); no
 * chunking, endpoint delay or reduction cost. */
#ifndef CHAKRA_SIM_CUSTOM_H
#define CHAKRA_SIM_CUSTOM_H

#include "coll.h"
#include "core.h"

typedef struct custom_lib custom_lib;

int custom_lib_init(sim *s, custom_lib **out);
void custom_lib_free(custom_lib *lib);
/* Runs rq's rank's part of rq with the algorithm at prefix, scaled to
 * rq's size unless the run is as-is (lib/coll/madefor.h; a collective
 * whose size or type the algorithm was not made for is warned about once
 * per algorithm, type and size); calls done(s, obj, 0) when it is over.
 * Errors stop the run through sim_fail(). */
void custom_run(sim *s, custom_lib *lib, const char *prefix, const coll_request *rq, const uint32_t *members,
                uint32_t n_members, sim_fn done, void *obj);

/* Whether every position of the algorithm at prefix, run by a group of
 * n, runs one ET but for its peers, each node's peers a permutation of
 * the positions (symmetry.h): then peer[p * nodes + j] is position p's
 * peer at node j (UINT32_MAX for compute) and inv[j * n + q] the position
 * whose peer at node j is q. Computed once per algorithm and size; NULL
 * when out of memory. */
typedef struct custom_sym {
  struct custom_sym *next;
  char *prefix;
  uint32_t n, nodes;
  int ok;                  /* else why says why not */
  char why[320];
  uint32_t *peer, *inv;
} custom_sym;
#define CUSTOM_SYM_MAX (16u << 20) /* nodes x positions checked at most */
const custom_sym *custom_symmetry(sim *s, custom_lib *lib, const char *prefix, uint32_t n);

#endif
