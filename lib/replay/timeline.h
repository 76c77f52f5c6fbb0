/* timeline.h - the Chrome trace-event timeline of a replayed iteration
 * (private to lib/replay), in the simulator's layout (lib/report/timeline.h:
 * a process per rank, a track per slot, node name, type and id, times in
 * microseconds), through the one timeline writer. Rank 0 writes it; every other
 * rank sends its nodes' start and end times there in turn, and rank 0
 * reads the names back from each rank's trace. */
#ifndef CHAKRA_REPLAY_TIMELINE_H
#define CHAKRA_REPLAY_TIMELINE_H

#include <mpi.h>

#include "chakra/set.h"
#include "engine.h"

/* Collective over comm. On rank 0 writes path (names from set's traces);
 * an error there is returned on rank 0 only. */
int rp_timeline(const rp_engine *e, const chakra_set *set, const char *path, MPI_Comm comm, chakra_error *err);

#endif
