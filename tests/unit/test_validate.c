/* test_validate.c - pins validate-then-simulate in the library
 * (chakra_validate_set_sim, chakra/validate.h): a workload that passes the
 * checks is simulated on the configuration given, each rank the simulator
 * cannot finish is one ERROR naming its file, the run parameters and
 * rendezvous reach the simulation, the simulator's own warnings go to their
 * own callback, nothing is simulated when the checks already failed, and a
 * configuration that cannot serve is returned as an error. */
#include <stdio.h>
#include <stdlib.h>

#include "chakra/build.h"
#include "chakra/set.h"
#include "chakra/validate.h"
#include "testutil.h"

#define COMP TU_COMP
#define SEND(i, peer, ...) TU_SEND(i, peer, 64, __VA_ARGS__)
#define RECV(i, peer, ...) TU_RECV(i, peer, 64, __VA_ARGS__)
#define ALLREDUCE(i, ...) TU_COLL(i, CHAKRA_ALL_REDUCE, 1024, __VA_ARGS__)

static char *system_json, *ring2;

static char *write_file(const char *name, const char *text) {
  char *p = tu_join(tu_dir, name);
  tu_write_text(p, text);
  return p;
}

static int setup(void **state) {
  tu_dir_setup(state);
  system_json = write_file("sys.json",
                           "{\"scheduling-policy\": \"LIFO\", \"endpoint-delay\": 10, \"active-chunks-per-dimension\": 1,"
                           " \"preferred-dataset-splits\": 4, \"all-reduce-implementation\": [\"ring\"],"
                           " \"collective-optimization\": \"localBWAware\", \"local-mem-bw\": 1600}");
  ring2 = write_file("ring2.yml", "topology: [ Ring ]\nnpus_count: [ 2 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n");
  return 0;
}

static int teardown(void **state) {
  free(system_json);
  free(ring2);
  return tu_dir_teardown(state);
}

/* Writes ranks 0 and 1 of workload tu_dir/NAME and opens it; *prefix
 * (if not NULL) receives the prefix, malloc'd. */
static chakra_set *two_ranks(const char *name, const tu_wnode *r0, size_t n0, const tu_wnode *r1, size_t n1,
                             char **prefix) {
  char *p = tu_join(tu_dir, name);
  tu_write_rank(p, 0, r0, n0);
  tu_write_rank(p, 1, r1, n1);
  chakra_set *s;
  chakra_error err = {0};
  if (chakra_set_open(&s, p, NULL, &err)) fail_msg("%s", err.msg);
  if (prefix) *prefix = p;
  else free(p);
  return s;
}

/* Rank 0's send (after CPU work) and all-reduce (after GPU work) race for
 * the communication slot; rank 1's all-reduce waits for the send. The
 * untimed check accepts both orders; the all-reduce first (CPU work
 * longer) stalls both ranks in the simulator. */
static chakra_set *slot_race(const char *name, uint64_t cpu_us, uint64_t gpu_us, char **prefix) {
  const tu_wnode r0[] = {COMP(1, cpu_us, 1), COMP(2, gpu_us, 0), SEND(3, 1, TU_DEPS(1)), ALLREDUCE(4, TU_DEPS(2))};
  const tu_wnode r1[] = {RECV(1, 0), ALLREDUCE(2, TU_DEPS(1))};
  return two_ranks(name, r0, 4, r1, 2, prefix);
}

/* The errors chakra_validate_set_sim() counts (it must succeed); the
 * problems go to lines when it is not NULL. */
static uint64_t errors_of(const chakra_set *s, const chakra_validate_options *opt, const chakra_validate_sim *sim,
                          tu_lines *lines) {
  chakra_validate_summary sum;
  chakra_error err = {0};
  if (chakra_validate_set_sim(s, opt, sim, lines ? tu_collect_line : NULL, lines, &sum, &err))
    fail_msg("%s", err.msg);
  return sum.errors;
}

static chakra_validate_sim on_ring2(void) {
  chakra_validate_sim sim = {.files = {.system = system_json, .network = ring2}};
  return sim;
}

static void accepted_workload_is_simulated_and_stays_clean(void **state) {
  (void)state;
  chakra_set *s = slot_race("send_first", 10, 1000, NULL);
  chakra_validate_sim sim = on_ring2();
  tu_lines lines = {0};
  chakra_validate_summary sum;
  chakra_error err = {0};
  assert_int_equal(chakra_validate_set_sim(s, NULL, &sim, tu_collect_line, &lines, &sum, &err), 0);
  assert_int_equal(lines.n, 0);
  assert_int_equal(sum.errors, 0);
  assert_int_equal(sum.files, 2);
  assert_int_equal(sum.nodes, 6);
  chakra_set_close(s);
}

static void rank_the_simulator_cannot_finish_is_an_error(void **state) {
  (void)state;
  char *prefix;
  chakra_set *s = slot_race("coll_first", 1000, 10, &prefix);
  tu_lines lines = {0};
  assert_int_equal(errors_of(s, NULL, NULL, &lines), 0); /* untimed, either order may happen */
  assert_int_equal(lines.n, 0);
  chakra_validate_sim sim = on_ring2();
  assert_int_equal(errors_of(s, NULL, &sim, &lines), 2);
  assert_int_equal(lines.n, 2);
  for (uint32_t r = 0; r < 2; r++) {
    assert_int_equal(lines.sev[r], CHAKRA_SEV_ERROR);
    char *file = chakra_rank_path_dup(prefix, r);
    assert_contains(lines.line[r], tu_fmt("%s: deadlock: simulated on %s and %s, this rank does not finish: ", file,
                                          system_json, ring2));
    free(file);
  }
  assert_contains(lines.line[0], "in flight"); /* the simulator's own line on the rank */
  chakra_set_close(s);
  free(prefix);
}

/* Rank 0's first all-reduce takes the communication slot; its second
 * waits for the first, and its send for 10 us of CPU work. Rank 1's second
 * all-reduce waits for that send. The first all-reduce done before the CPU
 * work (the default endpoint delay) lets the second take the slot and stall
 * both ranks; done after it (100 x the delay), the send, the lower id,
 * goes first and both finish. */
static void run_parameters_reach_the_simulation(void **state) {
  (void)state;
  const tu_wnode r0[] = {ALLREDUCE(1), COMP(2, 10, 1), SEND(3, 1, TU_DEPS(2)), ALLREDUCE(4, TU_DEPS(1))};
  const tu_wnode r1[] = {ALLREDUCE(1), RECV(2, 0), ALLREDUCE(3, TU_DEPS(2))};
  chakra_set *s = two_ranks("delay_race", r0, 4, r1, 3, NULL);
  chakra_validate_sim sim = on_ring2();
  assert_int_equal(errors_of(s, NULL, &sim, NULL), 2);
  sim.params.injection_scale = 100;
  assert_int_equal(errors_of(s, NULL, &sim, NULL), 0);
  chakra_set_close(s);
}

/* Rank 0's send waits for a message from rank 1, its all-reduce for 1 us
 * of CPU work; rank 1's all-reduce waits for the send. The message takes
 * about 0.5 us, or more than 1 us under rendezvous (an invitation first):
 * then the all-reduce takes the slot and both ranks stall. The untimed
 * check accepts it either way; the simulation decides, with the option. */
static void rendezvous_reaches_the_simulation(void **state) {
  (void)state;
  const tu_wnode r0[] = {RECV(1, 1), COMP(2, 1, 1), SEND(3, 1, TU_DEPS(1)), ALLREDUCE(4, TU_DEPS(2))};
  const tu_wnode r1[] = {SEND(1, 0), RECV(2, 0), ALLREDUCE(3, TU_DEPS(2))};
  chakra_set *s = two_ranks("rdv_race", r0, 4, r1, 3, NULL);
  chakra_validate_sim sim = on_ring2();
  chakra_validate_options rdv = {.rendezvous = 1};
  assert_int_equal(errors_of(s, NULL, &sim, NULL), 0);
  assert_int_equal(errors_of(s, &rdv, NULL, NULL), 0);
  assert_int_equal(errors_of(s, &rdv, &sim, NULL), 2);
  chakra_set_close(s);
}

/* The network model and --multidim-p2p reach the run: on a 2x2 network a
 * message between NPUs that differ in both dimensions is the warning of
 * each choice, on the simulator's callback (never a problem). */
static void model_and_multidim_reach_the_run(void **state) {
  (void)state;
  char *prefix = tu_join(tu_dir, "corner");
  char *net = write_file("t22.yml", "topology: [ Ring, Ring ]\nnpus_count: [ 2, 2 ]\nbandwidth: [ 50, 50 ]\n"
                                    "latency: [ 500, 500 ]\n");
  const tu_wnode send[] = {SEND(1, 3)}, recv[] = {RECV(1, 0)};
  tu_write_rank(prefix, 0, send, 1);
  tu_write_rank(prefix, 1, NULL, 0);
  tu_write_rank(prefix, 2, NULL, 0);
  tu_write_rank(prefix, 3, recv, 1);
  chakra_set *s;
  chakra_error err = {0};
  if (chakra_set_open(&s, prefix, NULL, &err)) fail_msg("%s", err.msg);
  chakra_validate_sim sim = {.files = {.system = system_json, .network = net}, .diag = tu_collect_line};
  const struct {
    int model, full;
    const char *warning;
  } runs[] = {{CHAKRA_NET_AWARE, 0, "the congestion-aware model on a 2-dimensional network"},
              {CHAKRA_NET_UNAWARE, 0, "differ in several dimensions are charged only the lowest one"},
              {CHAKRA_NET_UNAWARE, 1, NULL}};
  for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
    tu_lines problems = {0}, warnings = {0};
    sim.diag_ctx = &warnings;
    sim.params.network_model = runs[i].model;
    sim.params.multidim_full = runs[i].full;
    assert_int_equal(errors_of(s, NULL, &sim, &problems), 0);
    assert_int_equal(problems.n, 0); /* no warning either */
    if (!runs[i].warning) {
      assert_int_equal(warnings.n, 0);
      continue;
    }
    assert_int_equal(warnings.n, 1);
    assert_contains(warnings.line[0], runs[i].warning);
  }
  chakra_set_close(s);
  free(net);
  free(prefix);
}

/* Two ranks that each send before they receive finish unless a send waits
 * for its receive (rendezvous): the untimed check finds that, and leaves
 * the simulation out. */
static void no_simulation_after_failed_checks(void **state) {
  (void)state;
  const tu_wnode r0[] = {SEND(1, 1), RECV(2, 1, TU_DEPS(1))};
  const tu_wnode r1[] = {SEND(1, 0), RECV(2, 0, TU_DEPS(1))};
  chakra_set *s = two_ranks("sends_first", r0, 2, r1, 2, NULL);
  chakra_validate_sim sim = on_ring2();
  chakra_validate_options rdv = {.rendezvous = 1};
  tu_lines lines = {0};
  assert_int_equal(errors_of(s, NULL, &sim, NULL), 0);
  assert_true(errors_of(s, &rdv, &sim, &lines) > 0);
  for (int i = 0; i < lines.n && i < 16; i++) assert_not_contains(lines.line[i], "simulated on");
  sim.files.network = "/nonexistent/net.yml"; /* not even read */
  assert_true(errors_of(s, &rdv, &sim, NULL) > 0);
  chakra_set_close(s);
}

static void configuration_that_cannot_serve_is_an_error(void **state) {
  (void)state;
  char *ring4 = write_file("ring4.yml", "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n");
  chakra_set *s = slot_race("cfg", 10, 1000, NULL);
  chakra_validate_sim sim = on_ring2();
  chakra_validate_summary sum;
  chakra_error err = {0};
  sim.files.network = ring4;
  assert_int_equal(chakra_validate_set_sim(s, NULL, &sim, NULL, NULL, &sum, &err), CHAKRA_EINVAL);
  assert_string_equal(err.msg, tu_fmt("%s: the network has 4 NPUs but the workload has 2 rank file(s)", ring4));
  assert_int_equal(sum.files, 2); /* the checks ran and were counted */
  sim.files.network = NULL;
  assert_int_equal(chakra_validate_set_sim(s, NULL, &sim, NULL, NULL, &sum, &err), CHAKRA_EINVAL);
  assert_contains(err.msg, "a system and a network configuration");
  sim.files.network = ring2;
  sim.files.system = "/nonexistent/sys.json";
  assert_true(chakra_validate_set_sim(s, NULL, &sim, NULL, NULL, &sum, &err) < 0);
  assert_contains(err.msg, "/nonexistent/sys.json");
  chakra_set_close(s);
  free(ring4);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(accepted_workload_is_simulated_and_stays_clean, setup, teardown),
      cmocka_unit_test_setup_teardown(rank_the_simulator_cannot_finish_is_an_error, setup, teardown),
      cmocka_unit_test_setup_teardown(run_parameters_reach_the_simulation, setup, teardown),
      cmocka_unit_test_setup_teardown(rendezvous_reaches_the_simulation, setup, teardown),
      cmocka_unit_test_setup_teardown(no_simulation_after_failed_checks, setup, teardown),
      cmocka_unit_test_setup_teardown(model_and_multidim_reach_the_run, setup, teardown),
      cmocka_unit_test_setup_teardown(configuration_that_cannot_serve_is_an_error, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
