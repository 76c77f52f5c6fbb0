/* setint.h - what the library's own consumers read of a trace set beyond
 * chakra/set.h (private to libchakra). */
#ifndef CHAKRA_TRACE_SETINT_H
#define CHAKRA_TRACE_SETINT_H

#include <stddef.h>
#include <stdint.h>

#include "../util/commgroups.h"
#include "chakra/build.h"
#include "chakra/set.h"

/* The workload writer's options for the set's own progress callback
 * (chakra_set_options.progress): chakra_set_unshare and _share write
 * through them. */
chakra_workload_options set_writer_options(const chakra_set *s);

/* Reads the groups without judging their members (validate reports
 * members outside the set as problems of the file rather than failing). */
int set_groups_load(const chakra_set *s, chakra_error *err);
/* The groups read (empty until loaded). */
const cg_set *set_groups(const chakra_set *s);
/* The words for group g naming member, outside a set of `ranks` ranks:
 * "line L: group "G" names rank R, but the workload has N rank(s) (0..N-1):
 * a groups file for another rank count?". Returns buf. */
const char *set_group_range_text(const cg_group *g, uint32_t member, uint32_t ranks, char *buf, size_t size);

#endif
