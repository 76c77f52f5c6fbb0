/* plan.h - one rank's trace turned into what the replayer runs (private to
 * lib/replay).
 *
 * Every node gets its kind of work (compute stand-in, collective, send,
 * receive, memory copy, no-op), its hardware slot and report category as
 * the simulator assigns them (one CPU slot, one GPU compute slot, one GPU
 * communication slot; receives take none), and its dependencies as
 * counts and child lists. Nothing here knows MPI: groups stay names until
 * groups.c gives them communicators. */
#ifndef CHAKRA_REPLAY_PLAN_H
#define CHAKRA_REPLAY_PLAN_H

#include <stdint.h>

#include "chakra/error.h"
#include "chakra/json.h"
#include "chakra/node.h"
#include "chakra/set.h"

enum { RP_COMPUTE, RP_COLL, RP_SEND, RP_RECV, RP_MEM, RP_NOOP };
/* Slots and report categories are the node vocabulary's (chakra/node.h). */
enum { RP_SLOT_CPU = CHAKRA_SLOT_CPU, RP_SLOT_GPU = CHAKRA_SLOT_GPU, RP_SLOT_COMM = CHAKRA_SLOT_COMM,
       RP_SLOT_NONE = CHAKRA_SLOT_NONE, RP_SLOTS = CHAKRA_SLOTS };
enum { RP_CAT_GPU = CHAKRA_CAT_GPU, RP_CAT_CPU = CHAKRA_CAT_CPU, RP_CAT_COMM = CHAKRA_CAT_COMM,
       RP_CAT_MEM = CHAKRA_CAT_MEM, RP_CAT_INVALID = CHAKRA_CAT_INVALID, RP_CATS = CHAKRA_CAT_N };

#define RP_NONE UINT32_MAX

typedef struct rp_node { /* 32 bytes */
  uint64_t id;
  uint64_t value;     /* compute: recorded ns; communication and memory: bytes */
  int32_t peer;       /* send/receive: the other rank */
  int32_t tag;        /* send/receive: comm_tag, then the MPI tag (rp_tags); collective: pg index */
  uint32_t next_coll; /* collective: the next one of its group in trace order, or RP_NONE */
  uint8_t kind, slot, cat, coll; /* coll: CollectiveCommType */
} rp_node;

typedef struct rp_plan {
  char *path;
  uint32_t rank, n;
  rp_node *nodes;
  uint32_t *indeg0;            /* deps, plus 1 for a collective that follows another of its group */
  uint32_t *child_off;         /* n + 1 */
  uint32_t *children;
  char **pg_names;             /* [0] = NULL: all ranks ("" and "0" also map to 0) */
  uint32_t n_pg;
  char **meta_groups;          /* process-group JSON lists from METADATA nodes */
  uint32_t n_meta;
  uint32_t n_colls, n_p2p;     /* collective and send/receive nodes */
  uint32_t *recvs;             /* receive nodes in trace order (topological, ties by id) */
  uint32_t n_recvs;
} rp_plan;

/* Loads rank's trace from the set (of `world` = its rank count ranks).
 * Warnings go to diag (may be NULL). A node the
 * replayer cannot run (any error of the node vocabulary, chakra/node.h:
 * an unknown type, a send without a peer or size, a peer outside
 * 0..world-1, a comm_src that is not this rank; or what MPI cannot
 * express: a count above 2^31 - 1, a negative tag) is an error naming the
 * file, rank and node. */
int rp_plan_load(rp_plan *p, const chakra_set *set, uint32_t rank, chakra_diag_fn diag, void *ctx, chakra_error *err);
void rp_plan_free(rp_plan *p);

#endif
