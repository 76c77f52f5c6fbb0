/* vclass.c - the symmetry of a grid trace set; see vclass.h. */
#include "vclass.h"

#include "chakra/node.h"

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
