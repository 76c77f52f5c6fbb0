/* test_simapi.c - pins the simulator's public API in three parts
 * (chakra/sim.h): a configuration built in code, key by key, checked as a
 * file is; one loaded workload run under several configurations, giving
 * the reference's numbers each time (simulator spec 6.5 and 8: a 1 MiB ring
 * all-reduce on an 8-NPU ring, Ring_4chunks settings, is 64,440 ns, and
 * 32,220 with two active chunks on the unaware network). */
#include "testutil.h"

#include <stdlib.h>

#include "chakra/gen.h"
#include "chakra/sim.h"

static const char *const ring4chunks[][2] = {
    {"scheduling-policy", "\"LIFO\""},         {"endpoint-delay", "10"},
    {"active-chunks-per-dimension", "1"},     {"preferred-dataset-splits", "4"},
    {"all-reduce-implementation", "[\"ring\"]"}, {"collective-optimization", "\"localBWAware\""},
    {"local-mem-bw", "1600"},
};

/* The Ring_4chunks settings on topology t (taken over: freed here, the
 * configuration keeps its own copy), unaware network. */
static chakra_sim_config *ring4chunks_config(chakra_topo *t) {
  chakra_error err;
  chakra_sim_config *c;
  assert_int_equal(chakra_sim_config_new(&c, t, &err), 0);
  chakra_topo_free(t);
  for (size_t i = 0; i < sizeof ring4chunks / sizeof *ring4chunks; i++)
    assert_int_equal(chakra_sim_config_set(c, ring4chunks[i][0], ring4chunks[i][1], NULL, NULL, &err), 0);
  chakra_sim_config_params(c)->network_model = CHAKRA_NET_UNAWARE;
  return c;
}

static chakra_sim_config *ring8_config(void) {
  chakra_error err;
  chakra_topo_dim d = {CHAKRA_TOPO_RING, 8, 50.0, 500.0};
  chakra_topo *t;
  assert_int_equal(chakra_topo_new(&t, &d, 1, &err), 0);
  return ring4chunks_config(t);
}

/* The 1 MiB all-reduce microbenchmark on 8 ranks, loaded; *dir holds it. */
static chakra_sim_workload *ar8_workload(char **dir) {
  *dir = tu_mkdtemp();
  char *prefix = tu_join(*dir, "ar");
  chakra_error err;
  assert_int_equal(chakra_gen_microbench(prefix, 0, 8, 1048576, NULL, &err), 0);
  chakra_sim_workload *w;
  assert_int_equal(chakra_sim_workload_load(&w, prefix, 8, 1, NULL, NULL, &err), 0);
  free(prefix);
  return w;
}

static void expect_all(const chakra_run_record *r, uint64_t ns) {
  assert_int_equal(r->npus, 8);
  assert_int_equal(r->n_stuck, 0);
  for (uint32_t k = 0; k < r->npus; k++) {
    assert_true(r->ranks[k].finished);
    assert_int_equal(r->ranks[k].finish_ns, ns);
  }
}

static void test_one_workload_runs_under_two_configurations(void **state) {
  (void)state;
  char *dir;
  chakra_error err;
  chakra_sim_workload *w = ar8_workload(&dir);
  chakra_sim_config *a = ring8_config(), *b = ring8_config();
  assert_int_equal(chakra_sim_config_set(b, "active-chunks-per-dimension", "2", NULL, NULL, &err), 0);
  chakra_run_record r;
  for (int round = 0; round < 2; round++) { /* runs leave the workload as it was */
    assert_int_equal(chakra_sim_run(a, w, NULL, &r, &err), 0);
    expect_all(&r, 64440);
    chakra_run_record_free(&r);
    assert_int_equal(chakra_sim_run(b, w, NULL, &r, &err), 0);
    expect_all(&r, 32220);
    chakra_run_record_free(&r);
  }
  chakra_sim_config_free(a);
  chakra_sim_config_free(b);
  chakra_sim_workload_free(w);
  tu_rmtree(dir);
  free(dir);
}

/* A configuration's network replaced in place (what chakra_sweep's network
 * axes do) runs as one built on that network; another NPU count is refused
 * and leaves the configuration as it was. */
static void test_network_replaced_in_a_configuration(void **state) {
  (void)state;
  char *dir;
  chakra_error err;
  chakra_sim_workload *w = ar8_workload(&dir);
  chakra_topo_dim fast = {CHAKRA_TOPO_RING, 8, 100.0, 500.0}, four = {CHAKRA_TOPO_RING, 4, 100.0, 500.0};
  chakra_topo *t8, *t4, *t8b;
  assert_int_equal(chakra_topo_new(&t8, &fast, 1, &err), 0);
  assert_int_equal(chakra_topo_new(&t8b, &fast, 1, &err), 0);
  assert_int_equal(chakra_topo_new(&t4, &four, 1, &err), 0);
  chakra_sim_config *built = ring4chunks_config(t8b), *replaced = ring8_config();
  chakra_run_record r;
  assert_int_equal(chakra_sim_config_set_topo(replaced, t4, &err), CHAKRA_EINVAL);
  assert_contains(err.msg, "8 NPUs");
  assert_int_equal(chakra_sim_run(replaced, w, NULL, &r, &err), 0);
  expect_all(&r, 64440);
  chakra_run_record_free(&r);
  assert_int_equal(chakra_sim_config_set_topo(replaced, t8, &err), 0);
  chakra_topo_free(t8); /* copied */
  chakra_topo_free(t4);
  assert_int_equal(chakra_sim_run(built, w, NULL, &r, &err), 0);
  uint64_t want = r.ranks[0].finish_ns;
  assert_true(want < 64440);
  chakra_run_record_free(&r);
  assert_int_equal(chakra_sim_run(replaced, w, NULL, &r, &err), 0);
  expect_all(&r, want);
  chakra_run_record_free(&r);
  chakra_sim_config_free(built);
  chakra_sim_config_free(replaced);
  chakra_sim_workload_free(w);
  tu_rmtree(dir);
  free(dir);
}

static void test_configuration_errors_name_the_field(void **state) {
  (void)state;
  chakra_error err;
  chakra_sim_config *c = ring8_config();
  assert_int_equal(chakra_sim_config_set(c, "preferred-dataset-splits", "0", NULL, NULL, &err), CHAKRA_EINVAL);
  assert_non_null(strstr(err.msg, "preferred-dataset-splits"));
  assert_int_equal(chakra_sim_config_set(c, "no-such-key", "1", NULL, NULL, &err), CHAKRA_EINVAL);
  assert_non_null(strstr(err.msg, "no-such-key"));
  assert_int_equal(chakra_sim_config_set(c, "memory-type", "\"PER_NODE_MEMORY_EXPANSION\"", NULL, NULL, &err), 0);
  assert_int_equal(chakra_sim_config_set(c, "memory-type", "\"DISK\"", NULL, NULL, &err), CHAKRA_EINVAL);
  assert_non_null(strstr(err.msg, "memory-type"));
  assert_int_equal(chakra_sim_config_add_group(c, "tp", (const uint32_t[]){0, 1, 9}, 3, &err), CHAKRA_EINVAL);
  assert_non_null(strstr(err.msg, "tp"));
  assert_int_equal(chakra_sim_config_add_group(c, "tp", (const uint32_t[]){0, 1}, 2, &err), 0);
  chakra_sim_config_free(c);
}

/* Fields that only make sense together are checked when a run starts. */
static void test_per_node_memory_without_npus_per_node_fails_at_run(void **state) {
  (void)state;
  char *dir = tu_mkdtemp(), *prefix = tu_join(dir, "ar");
  chakra_error err;
  assert_int_equal(chakra_gen_microbench(prefix, 0, 8, 1024, NULL, &err), 0);
  chakra_sim_workload *w;
  assert_int_equal(chakra_sim_workload_load(&w, prefix, 8, 0, NULL, NULL, &err), 0);
  chakra_sim_config *c = ring8_config();
  assert_int_equal(chakra_sim_config_set(c, "memory-type", "\"PER_NODE_MEMORY_EXPANSION\"", NULL, NULL, &err), 0);
  chakra_run_record r;
  assert_int_equal(chakra_sim_run(c, w, NULL, &r, &err), CHAKRA_EINVAL);
  assert_non_null(strstr(err.msg, "num-npus-per-node"));
  assert_int_equal(chakra_sim_config_set(c, "num-npus-per-node", "4", NULL, NULL, &err), 0);
  assert_int_equal(chakra_sim_run(c, w, NULL, &r, &err), 0);
  chakra_run_record_free(&r);
  chakra_sim_config_free(c);
  chakra_sim_workload_free(w);
  tu_rmtree(dir);
  free(prefix);
  free(dir);
}

typedef struct progress_seen {
  int calls;
  uint64_t last;
} progress_seen;

static int stop_at_first_progress(void *ctx, const char *phase, uint64_t done, uint64_t total) {
  progress_seen *p = ctx;
  assert_string_equal(phase, "run");
  assert_int_equal(total, 0);
  p->calls++;
  p->last = done;
  return 1;
}

/* A 256-NPU ring all-reduce takes about 1.5 million events: the progress
 * callback is asked once (every 2^20 events) and stops the run. */
static void test_progress_callback_can_stop_a_run(void **state) {
  (void)state;
  char *dir = tu_mkdtemp(), *prefix = tu_join(dir, "ar");
  chakra_error err;
  assert_int_equal(chakra_gen_microbench(prefix, 0, 256, 1048576, NULL, &err), 0);
  chakra_topo_dim d = {CHAKRA_TOPO_RING, 256, 50.0, 500.0};
  chakra_topo *t;
  assert_int_equal(chakra_topo_new(&t, &d, 1, &err), 0);
  chakra_sim_config *c;
  assert_int_equal(chakra_sim_config_new(&c, t, &err), 0);
  chakra_topo_free(t);
  for (size_t i = 0; i < sizeof ring4chunks / sizeof *ring4chunks; i++)
    assert_int_equal(chakra_sim_config_set(c, ring4chunks[i][0], ring4chunks[i][1], NULL, NULL, &err), 0);
  chakra_sim_workload *w;
  assert_int_equal(chakra_sim_workload_load(&w, prefix, 256, 0, NULL, NULL, &err), 0);
  progress_seen seen = {0};
  chakra_sim_run_options o = {.progress = stop_at_first_progress, .progress_ctx = &seen};
  chakra_run_record r;
  assert_int_equal(chakra_sim_run(c, w, &o, &r, &err), CHAKRA_ECANCELED);
  assert_int_equal(seen.calls, 1);
  assert_true(seen.last > 0 && seen.last < 1079200); /* stopped before the end (spec 13: 1,079,200 ns) */
  chakra_run_record_free(&r);
  chakra_sim_workload_free(w);
  chakra_sim_config_free(c);
  tu_rmtree(dir);
  free(prefix);
  free(dir);
}

static void test_workload_and_network_must_agree(void **state) {
  (void)state;
  char *dir = tu_mkdtemp(), *prefix = tu_join(dir, "ar");
  chakra_error err;
  assert_int_equal(chakra_gen_microbench(prefix, 0, 8, 1024, NULL, &err), 0);
  chakra_sim_workload *w;
  assert_int_equal(chakra_sim_workload_load(&w, prefix, 4, 0, NULL, NULL, &err), 0); /* ranks 0..3 only */
  chakra_sim_config *c = ring8_config();
  chakra_run_record r;
  assert_int_equal(chakra_sim_run(c, w, NULL, &r, &err), CHAKRA_EINVAL);
  assert_non_null(strstr(err.msg, "4 ranks"));
  assert_int_equal(r.npus, 0); /* empty after a failure, and safe to free */
  chakra_run_record_free(&r);
  chakra_sim_workload_free(w);
  assert_int_equal(chakra_sim_workload_load(&w, prefix, 9, 0, NULL, NULL, &err), CHAKRA_EIO);
  assert_null(w);
  assert_non_null(strstr(err.msg, "ar.8.et"));
  chakra_sim_config_free(c);
  tu_rmtree(dir);
  free(prefix);
  free(dir);
}

/* A configuration built in code on a link list: the 8-NPU ring written
 * link by link (each neighbour pair both ways, 50 GB/s, 500 ns) gives the
 * ring's 64,440 ns in both models (each ring step is one link; no two
 * messages of a step share a link). */
static void test_link_list_configuration_in_code(void **state) {
  (void)state;
  char *dir;
  chakra_error err;
  chakra_sim_workload *w = ar8_workload(&dir);
  chakra_topo_link links[16];
  double bpns = 50.0 * 1073741824.0 / 1e9;
  for (uint32_t i = 0; i < 8; i++) {
    links[2 * i] = (chakra_topo_link){i, (i + 1) % 8, bpns, 500.0, 0};
    links[2 * i + 1] = (chakra_topo_link){(i + 1) % 8, i, bpns, 500.0, 0};
  }
  chakra_topo *t;
  assert_int_equal(chakra_topo_from_links(&t, 8, 0, links, 16, &err), 0);
  chakra_sim_config *c = ring4chunks_config(t);
  assert_int_equal(chakra_topo_dim_at(chakra_sim_config_topo(c), 0)->kind, CHAKRA_TOPO_LINKS);
  for (int model = 0; model < 2; model++) {
    chakra_sim_config_params(c)->network_model = model ? CHAKRA_NET_UNAWARE : CHAKRA_NET_AWARE;
    chakra_run_record r;
    assert_int_equal(chakra_sim_run(c, w, NULL, &r, &err), 0);
    expect_all(&r, 64440);
    chakra_run_record_free(&r);
  }
  chakra_sim_config_free(c);
  chakra_sim_workload_free(w);
  tu_rmtree(dir);
  free(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_one_workload_runs_under_two_configurations),
      cmocka_unit_test(test_network_replaced_in_a_configuration),
      cmocka_unit_test(test_configuration_errors_name_the_field),
      cmocka_unit_test(test_per_node_memory_without_npus_per_node_fails_at_run),
      cmocka_unit_test(test_progress_callback_can_stop_a_run),
      cmocka_unit_test(test_workload_and_network_must_agree),
      cmocka_unit_test(test_link_list_configuration_in_code),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
