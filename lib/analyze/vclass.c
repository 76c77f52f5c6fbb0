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

/* Whether class c's template has a METADATA node; reads it to the end
 * (no graph is built), so a template that fails to read counts as none,
 * as one whose graph failed to load did. */
static int class_metadata(const chakra_set *set, uint32_t c) {
  chakra_input in;
  chakra_reader *r;
  chakra_error e = {0};
  if (chakra_set_input(set, c, &in, &e) || chakra_reader_open_input(&r, &in, NULL, &e)) return 0;
  chakra_node *nd;
  int rc, found = 0;
  while ((rc = chakra_reader_next(r, &nd, &e)) == 1)
    found |= chakra_node_kind_of((int32_t)nd->type, 0) == CHAKRA_KIND_METADATA;
  chakra_reader_close(r);
  return rc == 0 && found;
}

int vc_metadata(const chakra_set *set) {
  for (uint32_t c = 0; c < chakra_set_classes(set); c++)
    if (class_metadata(set, c)) return 1;
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
