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

/* Whether every rank's DAG is rank 0's rotated (coll_dag_same_rotated):
 * then ranks at different places of a group, mapped onto each other by a
 * rotation, run the same DAG (coll expand shares one expansion between
 * them). Up to 64 ranks decided by generating every rank's DAG into the
 * two scratch DAGs (_by_dags), above by a rule (_rule: a ring whose blocks
 * are all of one size; anything else is taken to differ, which only costs
 * sharing; unit.collgen holds the rule against the DAGs). 1 or 0; -1 when
 * out of memory. */
int coll_gen_equivariant(const chakra_coll_gen_options *o, coll_dag *a, coll_dag *b);
int coll_gen_equivariant_rule(const chakra_coll_gen_options *o);
int coll_gen_equivariant_by_dags(const chakra_coll_gen_options *o, coll_dag *a, coll_dag *b);

#endif
