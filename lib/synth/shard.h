/* shard.h - collective insertion: which collectives turn a producer's local
 * layout into the one a consumer declares (private to libchakra).
 *
 * Per parallel symbol of degree > 1, in the order dp, tp, cp, ep, a tensor
 * is PARTITIONED (the symbol divides one of its dimensions), PARTIALSUM (it
 * is in the hidden product) or DUPLICATED; STAGE's table maps the pair of
 * states to nothing, ALL_GATHER, ALL_REDUCE, REDUCE_SCATTER or ALL_TO_ALL. */
#ifndef CHAKRA_SYNTH_SHARD_H
#define CHAKRA_SYNTH_SHARD_H

#include "chakra/error.h"
#include "sgraph.h"

typedef struct shard_coll {
  uint8_t comm_type; /* CollectiveCommType */
  uint8_t dim;       /* 0 dp, 1 tp, 2 cp, 3 ep */
} shard_coll;

/* Collectives on edge e (0 = x1, 1 = x2) of consumer row cons fed by
 * producer row prod; *n receives how many (at most 4). The consumer's name
 * is only used in the error for an impossible re-layout. */
int shard_edge(const sg_config *cfg, const sg_rowinfo *prod, const sg_rowinfo *cons, int e,
               const char *name, shard_coll out[4], int *n, chakra_error *err);

#endif
