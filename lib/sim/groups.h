/* groups.h - communicator groups of a run (private): those of the
 * configuration, then those PyTorch METADATA nodes define; a collective's
 * pg_name selects one. Also each group's sorted member list (custom
 * collectives) and per-NPU stream ids (group_id x 1,000,000 onwards). */
#ifndef CHAKRA_SIM_GROUPS_H
#define CHAKRA_SIM_GROUPS_H

#include "core.h"

/* Index of the group named name in s->groups, or -1 (a hash index, kept
 * up to date as groups are added). */
int groups_find(sim *s, const char *name);
/* NULL, "" and "0" mean all NPUs. */
int groups_is_all(const char *pg);
/* Whether pg_name is "all" or a known group. */
int groups_known(sim *s, const char *pg_name);
/* Adds the groups of one METADATA node's process-group list (JSON, read
 * by util/commgroups); names already known keep their first definition;
 * empty ranks = all NPUs. path names rank's file in messages. */
int groups_add_pytorch(sim *s, const char *json, const char *path, uint32_t rank, chakra_error *err);
/* Sorted lists and counters, once all groups are known; -1 out of memory. */
int groups_ready(sim *s);
const uint32_t *groups_sorted(const sim *s, int g);
/* Whether rank is a member of group g (after groups_ready). */
int groups_is_member(const sim *s, int g, uint32_t rank);
/* The next stream id of group g on rank, a member (after groups_ready). */
uint64_t groups_next_stream(sim *s, uint32_t rank, int g);
void groups_free(sim *s);

#endif
