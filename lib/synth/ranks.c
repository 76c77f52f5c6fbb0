/* ranks.c - rank numbering and communicator groups; see ranks.h. */
#include "ranks.h"

#include <stdio.h>
#include <stdlib.h>

#include "../util/outfile.h"

void layout_init(synth_layout *l, uint32_t dp, uint32_t tp, uint32_t cp, uint32_t ep, uint32_t pp, int moe) {
  l->deg[RK_DP] = dp, l->deg[RK_TP] = tp, l->deg[RK_CP] = cp, l->deg[RK_EP] = moe ? ep : 1;
  l->pp = pp;
  l->ndims = moe ? 4 : 3;
  l->ranks = dp * tp * cp * l->deg[RK_EP] * pp;
  for (int d = 0; d < RK_NDIM; d++) l->radix[d] = d;
  uint32_t gid = 1;
  for (int d = 0; d < l->ndims; d++) {
    l->first_gid[d] = gid;
    gid += l->ranks / l->deg[d];
  }
}

void layout_tp_first(synth_layout *l) {
  static const int megatron[RK_NDIM] = {RK_TP, RK_CP, RK_EP, RK_DP};
  for (int d = 0; d < RK_NDIM; d++) l->radix[d] = megatron[d];
}

void layout_coords(const synth_layout *l, uint32_t rank, uint32_t c[RK_NDIM], uint32_t *stage) {
  for (int k = 0; k < RK_NDIM; k++) {
    int d = l->radix[k];
    c[d] = rank % l->deg[d], rank /= l->deg[d];
  }
  *stage = rank;
}

uint32_t layout_rank(const synth_layout *l, const uint32_t c[RK_NDIM], uint32_t stage) {
  uint32_t rank = stage;
  for (int k = RK_NDIM - 1; k >= 0; k--) rank = rank * l->deg[l->radix[k]] + c[l->radix[k]];
  return rank;
}

uint32_t layout_group(const synth_layout *l, uint32_t rank, int dim) {
  uint32_t c[RK_NDIM], stage;
  layout_coords(l, rank, c, &stage);
  uint32_t idx = stage;
  for (int d = 0; d < l->ndims; d++)
    if (d != dim) idx = idx * l->deg[d] + c[d];
  return l->first_gid[dim] + idx;
}

static int put(outfile *f, const char *s, size_t n, chakra_error *err) { return outfile_write(f, s, n, err); }

int layout_write_groups(const synth_layout *l, const char *path, int singletons, chakra_error *err) {
  outfile *f;
  int rc = outfile_open(&f, path, 0, err);
  if (rc) return rc;
  uint32_t *members = malloc(sizeof *members * (l->ranks ? l->ranks : 1));
  uint32_t *count = calloc(l->ranks + 1, sizeof *count);
  if (!members || !count) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  rc = rc ? rc : put(f, "{", 1, err);
  int first = 1;
  char buf[32];
  for (int d = 0; !rc && d < l->ndims; d++) {
    uint32_t ngroups = l->ranks / l->deg[d], per = l->deg[d];
    if (per == 1 && !singletons) continue;
    /* Members in increasing coordinate = increasing rank within a group. */
    for (uint32_t g = 0; g < ngroups; g++) count[g] = 0;
    for (uint32_t r = 0; r < l->ranks; r++) {
      uint32_t g = layout_group(l, r, d) - l->first_gid[d];
      members[g * per + count[g]++] = r;
    }
    for (uint32_t g = 0; !rc && g < ngroups; g++) {
      int n = snprintf(buf, sizeof buf, "%s\"%u\": [", first ? "" : ", ", l->first_gid[d] + g);
      first = 0;
      rc = put(f, buf, (size_t)n, err);
      for (uint32_t k = 0; !rc && k < per; k++) {
        n = snprintf(buf, sizeof buf, k ? ", %u" : "%u", members[g * per + k]);
        rc = put(f, buf, (size_t)n, err);
      }
      if (!rc) rc = put(f, "]", 1, err);
    }
  }
  if (!rc) rc = put(f, "}", 1, err);
  free(members);
  free(count);
  if (rc) {
    outfile_discard(f);
    return rc;
  }
  return outfile_commit(f, err);
}
