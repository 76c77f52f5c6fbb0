/* groups.h - communicator groups for chakra coll expand (private).
 *
 * A group is a sorted list of global ranks with a name. Names come from a
 * comm-group JSON ({"1": [0, 1], ...}, as ASTRA-sim and STAGE write it) or
 * from PyTorch METADATA nodes (et-format.md 4.1); "" and "0" mean all
 * ranks. */
#ifndef CHAKRA_COLL_GROUPS_H
#define CHAKRA_COLL_GROUPS_H

#include <stddef.h>
#include <stdint.h>

#include "chakra/error.h"
#include "../util/nameidx.h"

typedef struct coll_group {
  char *name;
  uint32_t *members; /* ascending */
  uint32_t n;        /* 0 = all ranks (members filled by coll_groups_finish) */
} coll_group;

typedef struct coll_groups {
  coll_group *v;
  size_t n, cap;
  nameidx idx;       /* names of v: a lookup per collective, thousands of groups */
} coll_groups;

/* Adds one group as the trace set read it from its comm-group file (n = 0
 * and no members: every rank, filled in by coll_groups_finish). */
int coll_groups_add(coll_groups *g, const char *name, const uint32_t *members, uint32_t n, chakra_error *err);
/* Adds the groups of one METADATA node's inputs.values text (Python repr of
 * a one-element list holding JSON); text that holds no groups is ignored.
 * where names the node in messages. */
int coll_groups_add_metadata(coll_groups *g, const char *text, const char *where, chakra_error *err);
/* Index of the group called name, or -1. "" and "0" are the whole world
 * unless a group of that name exists. */
long coll_groups_find(const coll_groups *g, const char *name);
/* Gives groups with no member list every rank 0..npus-1 and checks every
 * member is below npus. */
int coll_groups_finish(coll_groups *g, uint32_t npus, chakra_error *err);
void coll_groups_free(coll_groups *g);

#endif
