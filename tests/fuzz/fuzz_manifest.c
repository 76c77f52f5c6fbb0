/* fuzz_manifest.c - libFuzzer target for the shared form's manifest reader
 * (PREFIX.set.json, lib/trace/setfile.c).
 *
 * Properties: every refusal is one non-empty line naming the file and a
 * line ("m.set.json: line N: ..."). Whatever is accepted is sound: each
 * rank's class is a class, each class's representative is in it and binds
 * to its own template's names and peers, bindings of a few ranks neither
 * crash nor leave the set; written out, it reads back to a manifest that
 * binds the same and writes the same bytes; a grid's groups (small grids)
 * are numbered once each, every rank in exactly one group per rule. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/trace/setfile.h"
#include "chakra/set.h"

static void violated(const char *what) {
  fprintf(stderr, "fuzz property violated: %s\n", what);
  abort();
}

typedef struct text {
  char *p;
  size_t n;
} text;

static int collect(void *ctx, const void *data, size_t len) {
  text *t = ctx;
  char *q = realloc(t->p, t->n + len + 1);
  if (!q) return -1;
  memcpy(q + t->n, data, len);
  t->p = q, t->n += len, q[t->n] = 0;
  return 0;
}

static text written(const chakra_manifest *m) {
  text t = {0};
  chakra_sink out = {.write = collect, .ctx = &t};
  chakra_error err = {0};
  if (chakra_manifest_write_to(m, &out, &err)) violated("an accepted manifest does not write");
  return t;
}

/* A few ranks: the ends and some in between. */
static uint32_t sample(const chakra_manifest *m, int i) {
  uint32_t n = chakra_manifest_ranks(m);
  return i == 0 ? 0 : i == 1 ? n - 1 : (uint32_t)(((uint64_t)n * (uint32_t)i * 2654435761u) % n);
}

static void same_bindings(const chakra_manifest *a, const chakra_manifest *b) {
  if (chakra_manifest_ranks(a) != chakra_manifest_ranks(b) || chakra_manifest_classes(a) != chakra_manifest_classes(b))
    violated("read back with other ranks or classes");
  for (int i = 0; i < 8; i++) {
    uint32_t r = sample(a, i);
    if (chakra_manifest_class_of(a, r) != chakra_manifest_class_of(b, r)) violated("read back with another class");
    for (int32_t p = -1; p < 4; p++)
      if (chakra_manifest_bind_peer(a, r, p) != chakra_manifest_bind_peer(b, r, p)) violated("read back binding otherwise");
    static const char *names[] = {"1", "2", "7", "0", "x"};
    for (int k = 0; k < 5; k++)
      if (strcmp(chakra_manifest_bind_group(a, r, names[k]), chakra_manifest_bind_group(b, r, names[k])))
        violated("read back naming groups otherwise");
  }
}

static void sound(const chakra_manifest *m) {
  uint32_t n = chakra_manifest_ranks(m), k = chakra_manifest_classes(m);
  for (uint32_t c = 0; c < k; c++) {
    uint32_t rep = chakra_manifest_rep(m, c);
    if (rep >= n || chakra_manifest_class_of(m, rep) != c) violated("a representative outside its class");
    if (!setfile_is_rep(m, rep)) violated("a representative not told as one");
    if (chakra_manifest_kind(m) != CHAKRA_MANIFEST_TABLE) continue;
    for (uint32_t i = 0; i < chakra_manifest_peer_roles(m, c); i++) {
      int32_t p = chakra_manifest_rank_peer(m, rep, i);
      if (chakra_manifest_bind_peer(m, rep, p) != p) violated("a representative's binding is not the identity");
    }
  }
  for (int i = 0; i < 8; i++) {
    uint32_t r = sample(m, i);
    if (chakra_manifest_class_of(m, r) >= k) violated("a rank's class is not a class");
    for (int32_t p = 0; p < 4 && (uint32_t)p < n; p++) {
      int32_t q = chakra_manifest_bind_peer(m, r, p);
      if (chakra_manifest_kind(m) == CHAKRA_MANIFEST_GRID && (q < 0 || (uint32_t)q >= n)) violated("a grid peer outside the set");
    }
  }
}

typedef struct groups {
  uint32_t ranks, *seen; /* per rank: groups it is in */
  uint64_t count;
} groups;

static int count_group(void *ctx, const char *name, const uint32_t *members, uint32_t n) {
  groups *g = ctx;
  (void)name;
  for (uint32_t i = 0; i < n; i++) {
    if (members[i] >= g->ranks) violated("a group member outside the set");
    if (i && members[i] <= members[i - 1]) violated("group members not ascending");
    g->seen[members[i]]++;
  }
  g->count++;
  return 0;
}

static void grid_groups(const chakra_manifest *m) {
  uint32_t n = chakra_manifest_ranks(m);
  if (chakra_manifest_kind(m) != CHAKRA_MANIFEST_GRID || n > 4096) return;
  groups g = {n, calloc(n, sizeof(uint32_t)), 0};
  if (!g.seen) return;
  if (setfile_each_grid_group(m, count_group, &g)) violated("a grid's groups do not enumerate");
  for (uint32_t r = 0; r < n; r++)
    if (g.seen[r] != chakra_manifest_group_rules(m)) violated("a rank not in exactly one group per rule");
  free(g.seen);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  chakra_manifest *m = NULL;
  chakra_error err = {0};
  int rc = chakra_manifest_parse(&m, (const char *)data, size, "m.set.json", &err);
  if (rc) {
    if (m) violated("a refused manifest was handed out");
    if (!err.msg[0] || strchr(err.msg, '\n') || strncmp(err.msg, "m.set.json: ", 12) != 0)
      violated("a refusal is not one line naming the file");
    if (rc != CHAKRA_ENOMEM && !strstr(err.msg, ": line ")) violated("a refusal names no line");
    return 0;
  }
  sound(m);
  grid_groups(m);
  text a = written(m);
  chakra_manifest *back = NULL, *copy = NULL;
  if (chakra_manifest_parse(&back, a.p, a.n, "w.set.json", &err)) {
    fprintf(stderr, "%s\n", err.msg);
    violated("what was written does not read back");
  }
  same_bindings(m, back);
  text b = written(back);
  if (a.n != b.n || memcmp(a.p, b.p, a.n)) violated("writing is not a fixed point");
  if (chakra_manifest_copy(&copy, m, &err) == 0) same_bindings(m, copy);
  free(a.p), free(b.p);
  chakra_manifest_free(copy);
  chakra_manifest_free(back);
  chakra_manifest_free(m);
  return 0;
}
