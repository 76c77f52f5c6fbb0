/* gen.h - the standard algorithms, one rank at a time (private to lib/coll).
 *
 * coll_gen_rank() builds rank r's DAG of the algorithm described by the
 * options into d (cleared first); chakra_coll_gen() writes every rank's,
 * chakra_coll_expand() splices them into workloads. */
#ifndef CHAKRA_COLL_GEN_H
#define CHAKRA_COLL_GEN_H

#include "chakra/coll.h"
#include "dag.h"

/* Tags of pipeline c are offset by c << COLL_CHUNK_TAG_SHIFT. */
#define COLL_CHUNK_TAG_SHIFT 16

void coll_gen_rank(coll_dag *d, const chakra_coll_gen_options *o, uint32_t r);
/* The first step (a tag without its pipeline offset) of the phase whose
 * receives deliver final output: 0 for an all-gather, the gather phase of
 * an all-reduce, past the last step for a reduce-scatter (it delivers only
 * the rank's own chunk); -1 when the output does not arrive in chunks
 * (trees, all-to-all). */
int64_t coll_gen_gather_step(const chakra_coll_gen_options *o);
/* 1 + the largest tag any rank uses. */
int64_t coll_gen_tag_span(const chakra_coll_gen_options *o);

#endif
