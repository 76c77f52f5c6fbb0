/* fuzz_commgroups.c - libFuzzer target for the communicator-group reader
 * (lib/util/commgroups): each input is read as a comm-group configuration
 * file ({"1": [0, 1], ...}) and as a METADATA node's process-group text,
 * with and without a rank count.
 *
 * Whatever is accepted must hold what the consumers rely on: unique names,
 * members within the rank count and each listed once, a non-empty member
 * list for file groups, and every failure a one-line message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/util/commgroups.h"

static void violated(const char *what, const char *name) {
  fprintf(stderr, "fuzz property violated: %s (group \"%s\")\n", what, name ? name : "");
  abort();
}

static void expect_sound(const cg_set *s, uint32_t npus, int from_file) {
  for (size_t i = 0; i < s->n; i++) {
    const cg_group *g = &s->v[i];
    if (!g->name) violated("a group without a name", NULL);
    if (cg_find(s, g->name) != (long)i) violated("a name defined twice", g->name);
    if (from_file && g->line == 0) violated("a file group without its line", g->name);
    if (g->line && g->n == 0) violated("a file group without members", g->name);
    if (!g->line && cg_is_all(g->name)) violated("a METADATA group named like the world was added", g->name);
    for (uint32_t k = 0; k < g->n; k++) {
      if (npus && g->members[k] >= npus) violated("a member outside the rank count", g->name);
      for (uint32_t j = 0; j < k; j++)
        if (g->members[j] == g->members[k]) violated("a member listed twice", g->name);
    }
  }
}

static void expect_one_line(int rc, const chakra_error *err) {
  if (rc && (!err->msg[0] || strchr(err->msg, '\n'))) {
    fprintf(stderr, "fuzz property violated: error message is empty or not one line: '%s'\n", err->msg);
    abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = 0;
  static const uint32_t npus[] = {0, 8};
  for (int k = 0; k < 2; k++) {
    cg_set s = {0};
    chakra_error err = {0};
    int rc = cg_parse_file(&s, text, size, "g.json", npus[k], &err);
    expect_one_line(rc, &err);
    if (rc && s.n) violated("a failed file read left groups behind", s.v[0].name);
    expect_sound(&s, npus[k], 1);
    /* the same set then takes METADATA groups: first definitions win */
    rc = cg_add_metadata(&s, text, "node 1", npus[k], &err);
    expect_one_line(rc, &err);
    expect_sound(&s, npus[k], 0);
    cg_set_free(&s);
  }
  free(text);
  return 0;
}
