/* test_symsim.c - rank classes and reduced runs through the public API
 * (chakra/sim.h, chakra/set.h): a workload of two classes (even and odd
 * ranks: other compute times; each rank sends two ranks ahead, receives
 * from two behind and all-reduces in its parity's group) gives every rank
 * the same figures whether its traces are files or a set stored as
 * classes, and whether the run simulates every NPU or one per class. */
#include "testutil.h"

#include <stdlib.h>

#include "chakra/build.h"
#include "chakra/set.h"
#include "chakra/sim.h"

#define NPUS 8

enum { COMP = 4, SEND = 5, RECV = 6, COLL = 7 };

/* Rank r's trace, framed, in *len bytes (malloc'd). */
static uint8_t *rank_trace(uint32_t r, size_t *len) {
  chakra_builder *b;
  chakra_error err;
  assert_int_equal(chakra_builder_new(&b), 0);
  chakra_builder_metadata(b, "1.0.0");
  assert_int_equal(chakra_builder_put(b, &err), 0);
  chakra_builder_node(b, 1, "compute", COMP);
  chakra_builder_duration(b, r % 2 ? 20 : 10);
  chakra_builder_bool(b, "is_cpu_op", 0);
  assert_int_equal(chakra_builder_put(b, &err), 0);
  chakra_builder_node(b, 2, "send", SEND);
  chakra_builder_bool(b, "is_cpu_op", 0);
  chakra_builder_int64(b, "comm_src", r);
  chakra_builder_int64(b, "comm_dst", (r + 2) % NPUS);
  chakra_builder_int64(b, "comm_size", 65536);
  chakra_builder_int64(b, "comm_tag", 7);
  chakra_builder_add_data_dep(b, 1);
  assert_int_equal(chakra_builder_put(b, &err), 0);
  chakra_builder_node(b, 3, "recv", RECV);
  chakra_builder_bool(b, "is_cpu_op", 0);
  chakra_builder_int64(b, "comm_src", (r + NPUS - 2) % NPUS);
  chakra_builder_int64(b, "comm_dst", r);
  chakra_builder_int64(b, "comm_size", 65536);
  chakra_builder_int64(b, "comm_tag", 7);
  assert_int_equal(chakra_builder_put(b, &err), 0);
  chakra_builder_node(b, 4, "allreduce", COLL);
  chakra_builder_bool(b, "is_cpu_op", 0);
  chakra_builder_int64(b, "comm_type", 0);
  chakra_builder_int64(b, "comm_size", 1 << 20);
  chakra_builder_string(b, "pg_name", r % 2 ? "odd" : "even");
  chakra_builder_add_data_dep(b, 3);
  assert_int_equal(chakra_builder_put(b, &err), 0);
  const uint8_t *bytes = chakra_builder_bytes(b, len);
  uint8_t *copy = malloc(*len);
  assert_non_null(copy);
  memcpy(copy, bytes, *len);
  chakra_builder_free(b);
  return copy;
}

/* The set as classes: ranks 0 and 1's traces are the templates; rank r's
 * peers are its template's moved by r - rep. */
typedef struct classes_ctx {
  uint8_t *bytes[2];
  size_t len[2];
  int bad; /* bind a peer outside the set */
} classes_ctx;

static int cls_input(void *ctx, uint32_t cls, chakra_input *out, chakra_error *err) {
  classes_ctx *m = ctx;
  if (cls > 1) return chakra_error_set(err, CHAKRA_EINVAL, "no class %u", cls);
  out->data = m->bytes[cls];
  out->size = m->len[cls];
  return 0;
}
static uint32_t cls_of(void *ctx, uint32_t rank) { return (void)ctx, rank % 2; }
static uint32_t cls_rep(void *ctx, uint32_t cls) { return (void)ctx, cls; }
static const char *cls_group(void *ctx, uint32_t rank, const char *pg) { return (void)ctx, (void)rank, pg; }
static int32_t cls_peer(void *ctx, uint32_t rank, int32_t peer) {
  classes_ctx *m = ctx;
  if (m->bad && rank == 5) return NPUS + 1;
  return (peer + (int32_t)(rank - rank % 2)) % NPUS;
}

static chakra_sim_config *config(int symmetry) {
  chakra_error err;
  chakra_topo *t;
  assert_int_equal(chakra_topo_parse(&t, "switch:8", 50, 500, &err), 0);
  chakra_sim_config *c;
  assert_int_equal(chakra_sim_config_new(&c, t, &err), 0);
  chakra_topo_free(t);
  assert_int_equal(chakra_sim_config_set(c, "all-reduce-implementation", "[\"ring\"]", NULL, NULL, &err), 0);
  assert_int_equal(chakra_sim_config_set(c, "preferred-dataset-splits", "4", NULL, NULL, &err), 0);
  static const uint32_t even[] = {0, 2, 4, 6}, odd[] = {1, 3, 5, 7};
  assert_int_equal(chakra_sim_config_add_group(c, "even", even, 4, &err), 0);
  assert_int_equal(chakra_sim_config_add_group(c, "odd", odd, 4, &err), 0);
  chakra_sim_params *p = chakra_sim_config_params(c);
  p->network_model = CHAKRA_NET_UNAWARE;
  p->symmetry = symmetry;
  return c;
}

static void run(const chakra_sim_workload *w, int symmetry, chakra_sim_result *r) {
  chakra_error err = {0};
  chakra_sim_config *c = config(symmetry);
  if (chakra_sim_run(c, w, NULL, r, &err)) fail_msg("%s", err.msg);
  chakra_sim_config_free(c);
  assert_int_equal(r->npus, NPUS);
  assert_int_equal(r->n_stuck, 0);
  assert_int_equal(r->classes, 2);
  assert_non_null(r->symmetry);
}

static void same_ranks(const chakra_sim_result *a, const chakra_sim_result *b) {
  for (uint32_t k = 0; k < NPUS; k++) {
    assert_true(a->ranks[k].finished && b->ranks[k].finished);
    assert_memory_equal(&a->ranks[k], &b->ranks[k], sizeof a->ranks[k]);
  }
}

static void files_and_classes_reduced_or_not_agree(void **state) {
  (void)state;
  char *dir = tu_mkdtemp(), *prefix = tu_join(dir, "w");
  classes_ctx m = {0};
  for (uint32_t r = 0; r < NPUS; r++) {
    size_t len;
    uint8_t *t = rank_trace(r, &len);
    tu_write_bytes(tu_fmt("%s.%u.et", prefix, r), t, len);
    if (r < 2) m.bytes[r] = t, m.len[r] = len;
    else free(t);
  }
  chakra_error err;
  chakra_sim_workload *files, *shared;
  assert_int_equal(chakra_sim_workload_load(&files, prefix, NPUS, 2, NULL, NULL, &err), 0);
  chakra_set_source src = {.ranks = NPUS, .input = cls_input, .classes = 2, .class_of = cls_of,
                           .class_rep = cls_rep, .bind_group = cls_group, .bind_peer = cls_peer};
  chakra_set *s;
  assert_int_equal(chakra_set_from_source(&s, &src, &m, NULL, &err), 0);
  assert_int_equal(chakra_sim_workload_load_set(&shared, s, 2, NULL, NULL, &err), 0);
  chakra_set_close(s);

  chakra_sim_result full, reduced, shared_full, shared_reduced;
  run(files, CHAKRA_SIM_SYMMETRY_OFF, &full);
  run(files, CHAKRA_SIM_SYMMETRY_AUTO, &reduced);
  run(shared, CHAKRA_SIM_SYMMETRY_OFF, &shared_full);
  run(shared, CHAKRA_SIM_SYMMETRY_AUTO, &shared_reduced);
  /* the files' classes are found: two, each simulated once */
  assert_int_equal(full.simulated, NPUS);
  assert_contains(full.symmetry, "every NPU simulated: --symmetry=off");
  if (reduced.simulated != 2) fail_msg("%s", reduced.symmetry);
  assert_contains(reduced.symmetry, "reduced: 2 NPUs simulated, one per rank class, for 8 ranks");
  assert_int_equal(shared_reduced.simulated, 2);
  assert_true(full.ranks[0].finish_ns != full.ranks[1].finish_ns); /* the classes differ */
  same_ranks(&full, &reduced);
  same_ranks(&full, &shared_full);
  same_ranks(&full, &shared_reduced);
  assert_true(reduced.messages < full.messages); /* the representatives' own */
  chakra_sim_result_free(&full);
  chakra_sim_result_free(&reduced);
  chakra_sim_result_free(&shared_full);
  chakra_sim_result_free(&shared_reduced);
  chakra_sim_workload_free(files);
  chakra_sim_workload_free(shared);

  /* a binding to a peer outside the set is refused when loading */
  m.bad = 1;
  assert_int_equal(chakra_set_from_source(&s, &src, &m, NULL, &err), 0);
  assert_int_equal(chakra_sim_workload_load_set(&shared, s, 1, NULL, NULL, &err), CHAKRA_EINVAL);
  assert_null(shared);
  assert_contains(err.msg, "rank 5: the trace set binds the template's peer 3 to 9, which is not a rank of the set");
  chakra_set_close(s);
  free(m.bytes[0]), free(m.bytes[1]);
  tu_rmtree(dir);
  free(dir), free(prefix);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(files_and_classes_reduced_or_not_agree),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
