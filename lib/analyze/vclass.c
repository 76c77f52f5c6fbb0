/* vclass.c - the symmetry of a grid trace set; see vclass.h. */
#include "vclass.h"

#include <stdint.h>

#include "chakra/node.h"
#include "chakra/trace.h"

int vc_grid(const chakra_set *set) {
  const chakra_manifest *m = chakra_set_manifest(set);
  if (!m || chakra_manifest_kind(m) != CHAKRA_MANIFEST_GRID || chakra_set_ranks(set) < 2 ||
      chakra_set_ranks(set) != chakra_manifest_ranks(m) || chakra_set_classes(set) != chakra_manifest_classes(m) ||
      chakra_set_groups_origin(set) != CHAKRA_GROUPS_MANIFEST || chakra_set_groups_path(set))
    return 0;
  for (size_t i = 0; i < chakra_manifest_group_rules(m); i++)
    if (chakra_manifest_rule_first(m, i) == 0) return 0;
  return 1;
}

int vc_metadata(const chakra_set *set) {
  chakra_graph_options opt = {.tolerant = 1};
  for (uint32_t c = 0; c < chakra_set_classes(set); c++) {
    chakra_graph *g;
    chakra_error e = {0};
    if (chakra_set_load_class(set, c, &opt, &g, &e)) continue;
    int found = 0;
    for (size_t i = 0; i < g->n && !found; i++) {
      chakra_node_class k;
      chakra_node_classify(&g->nodes[i], 0, 0, &k);
      found = k.kind == CHAKRA_KIND_METADATA;
    }
    chakra_graph_free(g);
    if (found) return 1;
  }
  return 0;
}

/* Some member of class c other than its representative; UINT32_MAX when
 * the class has none. */
static uint32_t other_member(const chakra_set *set, uint32_t c) {
  uint32_t rep = chakra_set_class_rep(set, c);
  for (uint32_t r = 0; r < chakra_set_ranks(set); r++)
    if (r != rep && chakra_set_class_of(set, r) == c) return r;
  return UINT32_MAX;
}

int vc_bindings_hold(const chakra_set *set) {
  for (uint32_t c = 0; c < chakra_set_classes(set); c++) {
    uint32_t r = other_member(set, c);
    if (r == UINT32_MAX) continue;
    chakra_reader *rd;
    chakra_error e = {0};
    if (chakra_set_reader(set, r, NULL, &rd, &e)) return 0;
    const uint8_t *msg;
    size_t len;
    int got;
    do got = chakra_reader_next_raw(rd, &msg, &len, &e); /* binds each message */
    while (got > 0);
    chakra_reader_close(rd);
    if (got < 0) return 0;
  }
  return 1;
}
