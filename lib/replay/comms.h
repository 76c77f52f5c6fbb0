/* comms.h - how replayed operations find their partners (private to
 * lib/replay): MPI communicators for the communicator groups, and MPI tags
 * for point-to-point messages.
 *
 * Groups come from the comm-group JSON ({"1": [0, 1], ...}) and from
 * PyTorch METADATA nodes, as in the simulator: a collective's pg_name
 * selects the group of that name; "", "0" or none = all ranks. Every rank
 * sends its definitions to all, so every rank holds the same table (first
 * definition of a name wins, the configuration file first) and each
 * communicator is built once, by every rank, in table order.
 *
 * The simulator matches a receive to a send on (source, destination, tag,
 * size) in order; MPI matches on (source, tag) in order. Giving every
 * distinct (comm_tag, size) pair of the job its own MPI tag makes the two
 * agree. */
#ifndef CHAKRA_REPLAY_COMMS_H
#define CHAKRA_REPLAY_COMMS_H

#include <mpi.h>
#include <stdint.h>

#include "agree.h"
#include "chakra/set.h"
#include "plan.h"

typedef struct rp_group {
  char *name;
  uint32_t *members; /* in definition order: communicator rank = position */
  uint32_t n;
} rp_group;

typedef struct rp_comms {
  rp_group *groups;  /* the job's table, the same on every rank */
  uint32_t n_groups;
  char *local;       /* this rank's definitions, serialised */
  size_t local_len;
  /* Per pg index of the plan: */
  int32_t *group_of; /* index into groups, -1 = all ranks */
  MPI_Comm *comm;    /* the communicator (MPI_COMM_NULL until built) */
  int *size;         /* its size */
  MPI_Comm all;      /* a duplicate of the world for "all ranks" */
} rp_comms;

/* Local step: the trace set's groups (its comm-group file) and the plan's
 * METADATA groups. */
int rp_comms_local(rp_comms *c, const rp_plan *p, const chakra_set *set, chakra_error *err);
/* Collective over world: every rank learns every definition. */
int rp_comms_exchange(rp_comms *c, rp_peers *world, chakra_error *err);
/* Local step: resolves the plan's pg names; a name no group defines, or a
 * group this rank is not in, is an error naming the node. */
int rp_comms_resolve(rp_comms *c, const rp_plan *p, chakra_error *err);
/* Collective over world: builds the communicators some rank uses. */
int rp_comms_build(rp_comms *c, const rp_plan *p, rp_peers *world, chakra_error *err);
void rp_comms_free(rp_comms *c);

/* Collective over world: rewrites the tag of every send and receive of p
 * into the MPI tag of its (comm_tag, size) pair. */
int rp_tags_assign(rp_plan *p, rp_peers *world, chakra_error *err);

#endif
