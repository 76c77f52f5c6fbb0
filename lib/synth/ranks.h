/* ranks.h - rank numbering and communicator groups, as STAGE numbers them
 * (private to libchakra).
 *
 * Numeric rank = (((pp*EP + ep)*CP + cp)*TP + tp)*DP + dp: dp varies fastest
 * (ep is 1 except for MoE). On request tp varies fastest instead, as
 * Megatron places ranks: (((pp*DP + dp)*EP + ep)*CP + cp)*TP + tp, so a
 * tensor-parallel group fills consecutive ranks (one node). Groups: for each spatial dimension in the order
 * dp, tp, cp (, ep) one group per combination of the other coordinates (pp
 * outermost, then the other dimensions in that order), ids from 1, a
 * dimension of degree 1 numbered too (one group per rank); tools and
 * configs depend on these ids. */
#ifndef CHAKRA_SYNTH_RANKS_H
#define CHAKRA_SYNTH_RANKS_H

#include <stdint.h>

#include "chakra/error.h"

enum { RK_DP, RK_TP, RK_CP, RK_EP, RK_NDIM };

typedef struct synth_layout {
  uint32_t deg[RK_NDIM]; /* dp, tp, cp, ep */
  uint32_t pp, ranks;
  int ndims;             /* 3, or 4 with expert parallelism (MoE) */
  uint32_t first_gid[RK_NDIM];
  int radix[RK_NDIM];    /* the dimensions in the rank's mixed radix, fastest first */
} synth_layout;

void layout_init(synth_layout *l, uint32_t dp, uint32_t tp, uint32_t cp, uint32_t ep, uint32_t pp, int moe);
/* After layout_init: tp fastest (Megatron's placement) instead of dp. */
void layout_tp_first(synth_layout *l);
/* c[RK_*] spatial coordinates; *stage the pipeline stage. */
void layout_coords(const synth_layout *l, uint32_t rank, uint32_t c[RK_NDIM], uint32_t *stage);
uint32_t layout_rank(const synth_layout *l, const uint32_t c[RK_NDIM], uint32_t stage);
/* Id of the group of dimension dim that contains rank. */
uint32_t layout_group(const synth_layout *l, uint32_t rank, int dim);
/* Writes {"1": [0, 1], ...} to path, atomically. singletons: the groups of
 * one rank too (STAGE writes them; nothing uses them, and sp = 1 makes one
 * per rank); without, the ids of the others are the same. */
int layout_write_groups(const synth_layout *l, const char *path, int singletons, chakra_error *err);

#endif
