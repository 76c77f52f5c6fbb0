/* vclass.h - the symmetry of a grid trace set, for validating it by class
 * (private to lib/analyze; validate.c uses it; docs/validate.md says why
 * checking by class is exact).
 *
 * In the grid layout a rank is its class representative moved on the
 * non-class axes: its peers are the representative's moved by the same
 * vector (modulo each axis size), its groups the groups those moved members
 * form. So the whole set is invariant under the translations of the
 * non-class axes, which act freely and transitively on each class, and
 * every cross-rank check can be made on the representatives with their
 * partners translated back. That holds only while nothing per rank breaks
 * the symmetry: groups that are the grid's own rules (not a comm-group
 * file, which may list anything), no rule naming group "0" (which means
 * every rank, whatever a rule says), every rank of the manifest in the
 * set, and no METADATA node (whose process groups the binding does not
 * move). */
#ifndef CHAKRA_ANALYZE_VCLASS_H
#define CHAKRA_ANALYZE_VCLASS_H

#include <stdint.h>

#include "chakra/set.h"

/* Whether set is a grid set whose symmetry holds as far as its manifest
 * and groups tell (vc_metadata says the rest). */
int vc_grid(const chakra_set *set);

/* Whether a class template has a METADATA node (1) or none (0); a
 * template that cannot be loaded counts as none (the checks report it). */
int vc_metadata(const chakra_set *set);

/* Whether binding the templates to ranks other than the representatives
 * succeeds. A member's binding moves every peer in range, so one member
 * per class stands for all of them: a peer its kind cannot hold bound (a
 * comm_dst written as a double_val) fails there, and the per-rank path
 * reports it rank by rank. */
int vc_bindings_hold(const chakra_set *set);

#endif
