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

#include "core.h"

typedef struct custom_lib custom_lib;

int custom_lib_init(sim *s, custom_lib **out);
void custom_lib_free(custom_lib *lib);
/* Runs rank's part; calls done(s, obj, arg) when it is over. Errors stop
 * the run through sim_fail(). */
void custom_run(sim *s, custom_lib *lib, const char *prefix, uint32_t rank, const uint32_t *members,
                uint32_t n_members, uint64_t node_id, sim_fn done, void *obj, uint64_t arg);

#endif
