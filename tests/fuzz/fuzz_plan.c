/* fuzz_plan.c - libFuzzer target for replay's planner (lib/replay/plan.c,
 * which needs no MPI): a rank's trace turned into what the replayer runs.
 *
 * The input is a .et file, loaded as rank 0 of a 4-rank job. Properties:
 * the planner accepts it, or refuses with one non-empty line; what it
 * accepts holds every node of the trace, each compute node's time is its
 * duration_micros x 1000 exactly (issue 26: 2^64 / 1000 + 1 us wrapped
 * into a wait of 0.5 us), so a duration that does not fit 64-bit
 * nanoseconds is refused (the check is the simulator's,
 * chakra_gnode_duration_problem()); every send and receive names a peer
 * in the job, every MPI count fits an int. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/replay/plan.h"
#include "chakra/graph.h"
#include "chakra/set.h"
#include "fuzz_common.h"

static void violated(const char *what, const char *detail) {
  fprintf(stderr, "fuzz property violated: %s: %s\n", what, detail);
  abort();
}

/* The first duration the simulator refuses, or NULL. */
static const char *duration_refused(const chakra_graph *g) {
  for (size_t i = 0; i < g->n; i++) {
    const char *why = chakra_gnode_duration_problem(&g->nodes[i]);
    if (why) return why;
  }
  return NULL;
}

static void check_plan(const rp_plan *p, const chakra_graph *g) {
  if (p->n != g->n) violated("the plan lost nodes", p->path);
  for (uint32_t i = 0; i < p->n; i++) {
    const rp_node *n = &p->nodes[i];
    const chakra_gnode *x = &g->nodes[i];
    if (n->kind == RP_COMPUTE && n->value != x->duration_micros * 1000) violated("a duration wrapped", p->path);
    if ((n->kind == RP_SEND || n->kind == RP_RECV) && (n->peer < 0 || n->peer >= 4)) violated("a peer outside the job", p->path);
    if ((n->kind == RP_SEND || n->kind == RP_RECV || n->kind == RP_COLL) && n->value > (uint64_t)INT_MAX)
      violated("an MPI count past INT_MAX", p->path);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[64];
  int fd = fuzz_input_file(data, size, path, sizeof path);
  /* The input as every rank of the job; the planner loads rank 0. */
  const char *paths[4] = {path, path, path, path};
  chakra_set *set;
  chakra_error err = {0};
  if (chakra_set_open_files(&set, paths, 4, NULL, &err)) violated("a set of files did not open", err.msg);
  rp_plan p;
  int rc = rp_plan_load(&p, set, 0, NULL, NULL, &err);
  chakra_set_close(set);
  chakra_graph *g = NULL;
  chakra_error gerr;
  if (chakra_graph_load(&g, path, NULL, &gerr)) g = NULL;
  if (rc) {
    if (!err.msg[0] || strchr(err.msg, '\n')) violated("the planner's refusal is not one line", err.msg);
  } else {
    if (!g) violated("the planner accepted what the graph loader refuses", gerr.msg);
    const char *why = duration_refused(g);
    if (why) violated("the planner accepted a duration the simulator refuses", why);
    check_plan(&p, g);
  }
  rp_plan_free(&p); /* also after a refusal: the planner leaves what it made to its caller */
  chakra_graph_free(g);
  close(fd);
  return 0;
}
