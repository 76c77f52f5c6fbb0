/* plan.c - a rank's trace as replay nodes; see plan.h. */
#include "plan.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../trace/nodekind.h"
#include "chakra/graph.h"
#include "chakra/node.h"
#include "chakra/set.h"
#include "../util/vec.h"

static int node_error(chakra_error *err, const rp_plan *p, const chakra_gnode *g, const char *what) {
  return chakra_error_set(err, CHAKRA_EINVAL, "%s: rank %u: node %llu: %s", p->path, p->rank,
                          (unsigned long long)g->id, what);
}

/* MPI counts are ints; a float all-reduce of S bytes counts S / 4. */
static int count_fits(uint64_t bytes) { return bytes <= (uint64_t)INT_MAX; }

/* What MPI adds to the node rules (chakra/node.h): counts are ints and
 * tags are not negative. */
static int convert_comm(rp_plan *p, const chakra_gnode *g, const chakra_node_class *c, rp_node *n, chakra_error *err) {
  if (!count_fits(g->size)) return node_error(err, p, g, "comm_size is more than an MPI count can hold (2^31 - 1)");
  n->value = g->size;
  if (c->kind == CHAKRA_KIND_COLL) {
    n->kind = RP_COLL;
    n->coll = (uint8_t)c->comm_type;
    n->tag = (int32_t)g->pg;
    return 0;
  }
  if (g->comm_tag < 0) return node_error(err, p, g, "negative comm_tag (MPI tags are 0 or more)");
  n->kind = c->kind == CHAKRA_KIND_SEND ? RP_SEND : RP_RECV;
  n->peer = c->peer;
  n->tag = g->comm_tag;
  return 0;
}

static int keep_meta_groups(rp_plan *p, const chakra_graph *g, uint32_t i, chakra_error *err);

static int convert_node(rp_plan *p, const chakra_graph *gr, uint32_t i, rp_node *n, uint32_t world, chakra_error *err) {
  const chakra_gnode *g = &gr->nodes[i];
  const char *too_long = nodekind_duration_problem(g);
  if (too_long) return node_error(err, p, g, too_long);
  chakra_node_class c;
  nodekind_classify(g, p->rank, world, &c); /* inline: millions of nodes */
  memset(n, 0, sizeof *n);
  n->id = g->id;
  n->next_coll = RP_NONE;
  n->slot = c.slot;
  n->cat = c.category;
  if (c.problems & CHAKRA_NP_ERRORS) {
    char msg[160];
    uint32_t first = chakra_node_first_problem(c.problems & CHAKRA_NP_ERRORS);
    return node_error(err, p, g, chakra_node_problem_text(g, p->rank, world, first, msg, sizeof msg));
  }
  switch (c.kind) {
    case CHAKRA_KIND_COMPUTE:
    case CHAKRA_KIND_CPU:
      n->kind = RP_COMPUTE;
      n->value = g->duration_micros * 1000;
      return 0;
    case CHAKRA_KIND_COLL:
    case CHAKRA_KIND_SEND:
    case CHAKRA_KIND_RECV:
      return convert_comm(p, g, &c, n, err);
    case CHAKRA_KIND_MEM_LOAD:
    case CHAKRA_KIND_MEM_STORE:
      n->kind = RP_MEM;
      n->value = g->size;
      return 0;
    case CHAKRA_KIND_METADATA:
      n->kind = RP_NOOP;
      return keep_meta_groups(p, gr, i, err);
    default:
      n->kind = RP_NOOP;
      return 0;
  }
}

/* PyTorch METADATA nodes carry process groups: kept as text for
 * util/commgroups (comms.c). */
static int keep_meta_groups(rp_plan *p, const chakra_graph *g, uint32_t i, chakra_error *err) {
  chakra_node *full;
  int rc = chakra_graph_read_node(g, i, &full, err);
  if (rc) return rc;
  const char *v = chakra_node_process_groups(full);
  if (v) {
    char **m = VEC_APPEND(p->meta_groups, p->n_meta);
    if (m && !(*m = strdup(v))) p->n_meta--, m = NULL;
    if (!m) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  chakra_node_free(full);
  return rc;
}

static int copy_pg_names(rp_plan *p, const chakra_graph *g, chakra_error *err) {
  p->n_pg = (uint32_t)g->n_pg_names;
  p->pg_names = calloc(g->n_pg_names + 1, sizeof *p->pg_names);
  if (!p->pg_names) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (size_t k = 1; k < g->n_pg_names; k++)
    if (!(p->pg_names[k] = strdup(g->pg_names[k]))) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  return 0;
}

/* Names of every rank ("0") share index 0 with no pg_name. */
static uint32_t pg_index(const rp_plan *p, uint32_t pg) {
  return pg && chakra_pg_is_world(p->pg_names[pg]) ? 0 : pg;
}

/* MPI needs every member to start a communicator's collectives in the same
 * order. The validator checks that the members agree in trace order
 * (topological, ties by id); chaining each collective behind the previous
 * one of its group ("issued", not "finished") keeps the replayer in that
 * order even when timing would let a later one become ready first. The
 * same pass lists the receives in that order for pre-posting (engine.h). */
static int chain_collectives(rp_plan *p, const chakra_graph *g, chakra_error *err) {
  uint32_t *last = malloc((p->n_pg + 1) * sizeof *last);
  p->recvs = malloc((p->n ? p->n : 1) * sizeof *p->recvs);
  if (!last || !p->recvs) {
    free(last);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  for (uint32_t k = 0; k <= p->n_pg; k++) last[k] = RP_NONE;
  for (uint32_t t = 0; t < p->n; t++) {
    uint32_t i = g->topo[t];
    rp_node *n = &p->nodes[i];
    if (n->kind == RP_RECV) p->recvs[p->n_recvs++] = i;
    if (n->kind != RP_COLL) continue;
    n->tag = (int32_t)pg_index(p, (uint32_t)n->tag);
    uint32_t *prev = &last[n->tag];
    if (*prev != RP_NONE) {
      p->nodes[*prev].next_coll = i;
      p->indeg0[i]++;
    }
    *prev = i;
  }
  free(last);
  return 0;
}

static int load_arrays(rp_plan *p, const chakra_graph *g, uint32_t world, chakra_error *err) {
  size_t n = g->n ? g->n : 1, nc = g->child_off[g->n] ? g->child_off[g->n] : 1;
  p->n = (uint32_t)g->n;
  p->nodes = malloc(n * sizeof *p->nodes);
  p->indeg0 = malloc(n * sizeof *p->indeg0);
  p->child_off = malloc((n + 1) * sizeof *p->child_off);
  p->children = malloc(nc * sizeof *p->children);
  if (!p->nodes || !p->indeg0 || !p->child_off || !p->children)
    return chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", p->path);
  int rc = 0;
  for (uint32_t i = 0; i < p->n && !rc; i++) {
    rc = convert_node(p, g, i, &p->nodes[i], world, err);
    p->indeg0[i] = g->dep_off[i + 1] - g->dep_off[i];
    p->n_colls += p->nodes[i].kind == RP_COLL;
    p->n_p2p += p->nodes[i].kind == RP_SEND || p->nodes[i].kind == RP_RECV;
  }
  if (rc) return rc;
  memcpy(p->child_off, g->child_off, (g->n + 1) * sizeof *p->child_off);
  memcpy(p->children, g->children, g->child_off[g->n] * sizeof *p->children);
  rc = copy_pg_names(p, g, err);
  return rc ? rc : chain_collectives(p, g, err);
}

int rp_plan_load(rp_plan *p, const chakra_set *set, uint32_t rank, chakra_diag_fn diag, void *ctx, chakra_error *err) {
  memset(p, 0, sizeof *p);
  p->rank = rank;
  uint32_t world = chakra_set_ranks(set);
  if (!(p->path = strdup(chakra_set_rank_name(set, rank)))) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  chakra_graph_options opt = {.diag = diag, .diag_ctx = ctx};
  chakra_graph *g;
  int rc = chakra_set_load_rank(set, rank, &opt, &g, err);
  if (rc) return rc;
  rc = load_arrays(p, g, world, err);
  chakra_graph_free(g);
  return rc;
}

void rp_plan_free(rp_plan *p) {
  free(p->path);
  free(p->nodes);
  free(p->indeg0);
  free(p->child_off);
  free(p->children);
  free(p->recvs);
  for (uint32_t k = 1; p->pg_names && k < p->n_pg; k++) free(p->pg_names[k]);
  free(p->pg_names);
  for (uint32_t k = 0; k < p->n_meta; k++) free(p->meta_groups[k]);
  free(p->meta_groups);
  memset(p, 0, sizeof *p);
}
