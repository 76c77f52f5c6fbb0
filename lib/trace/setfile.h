/* setfile.h - the shared form's manifest, PREFIX.set.json: reading,
 * checking, building, writing and the bindings it defines (private part;
 * the public one is in include/chakra/set.h).
 *
 * A manifest is reference-counted: a set, and every graph or reader bound
 * through it, hold a reference, so a rank's graph may outlive its set. */
#ifndef CHAKRA_TRACE_SETFILE_H
#define CHAKRA_TRACE_SETFILE_H

#include <stddef.h>
#include <stdint.h>

#include "chakra/set.h"

/* Another reference to m (released by chakra_manifest_free()). */
chakra_manifest *setfile_ref(const chakra_manifest *m);

/* The template of class cls as a path: its name resolved against the
 * folder of the manifest at manifest_path. New memory, NULL when out of
 * memory. */
char *setfile_resolve(const char *manifest_path, const char *name);

/* The groups of a grid's rules, one by one (a set's group table, the
 * groups file unshare writes):
 * fn(ctx, name, members, n) rule by rule, group by group, members
 * ascending; fn's non-zero return stops and is returned. */
typedef int (*setfile_group_fn)(void *ctx, const char *name, const uint32_t *members, uint32_t n);
int setfile_each_grid_group(const chakra_manifest *m, setfile_group_fn fn, void *ctx);

/* Grid layout: rank x moved on the non-class axes by the offset from rank
 * `from` to rank `to` (modulo each axis size), class axes kept: how a
 * binding moves a peer (from = the representative, to = the rank). */
uint32_t setfile_grid_move(const chakra_manifest *m, uint32_t x, uint32_t from, uint32_t to);

/* Grid layout: the rule (index) whose groups include the group named pg
 * (a decimal number as the rules write them, no sign, space or leading
 * zero), its index within the rule in *idx (may be NULL); -1 for any other
 * name or layout. */
long setfile_grid_rule_of(const chakra_manifest *m, const char *pg, uint64_t *idx);

/* Whether rank's binding is the identity (it is its class's representative). */
int setfile_is_rep(const chakra_manifest *m, uint32_t rank);

#endif
