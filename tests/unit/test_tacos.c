/* test_tacos.c - pins the greedy link-chunk matcher (lib/coll/tacos.c) on
 * the topologies of the collectives spec's TACOS table: a 1 GiB All-Gather
 * (16 MiB per NPU, one chunk each, links 50 GB/s and 500 ns) must finish no
 * later than TACOS v1.3 measured and no earlier than the ingress bound, the
 * same seed must give the same schedule, and every chunk must reach every
 * NPU through links that carry one chunk at a time (a switch relays
 * store-and-forward). */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "chakra/topo.h"
#include "tacos.h"

#define MIB (1024ull * 1024ull)

typedef struct run {
  tacos_net net;
  tacos_sched sched;
  tacos_link *links;
} run;

static void synth_opts(run *r, const char *spec, uint64_t chunk_bytes, uint64_t seed, uint64_t delay, int circuit) {
  chakra_error err = {0};
  chakra_topo *t = NULL;
  if (chakra_topo_parse(&t, spec, 50, 500, &err)) fail_msg("%s: %s", spec, err.msg);
  uint64_t n = chakra_topo_links(t);
  r->links = calloc(n, sizeof *r->links);
  assert_non_null(r->links);
  for (uint64_t i = 0; i < n; i++) {
    chakra_topo_link l;
    assert_int_equal(chakra_topo_link_at(t, i, &l), 0);
    r->links[i] = (tacos_link){.src = l.src, .dst = l.dst, .bytes_per_ns = l.bytes_per_ns, .latency_ns = l.latency_ns};
  }
  tacos_graph g = {.npus = chakra_topo_npus(t), .devices = (uint32_t)chakra_topo_devices(t), .n_links = (uint32_t)n,
                   .links = r->links};
  memset(&r->net, 0, sizeof r->net);
  memset(&r->sched, 0, sizeof r->sched);
  if (tacos_net_build(&r->net, &g, chunk_bytes, &err)) fail_msg("%s: %s", spec, err.msg);
  tacos_opts o = {.chunks_per_npu = 1, .seed = seed, .forward_delay = delay, .circuit = circuit};
  if (tacos_allgather(&r->net, &o, &r->sched, &err)) fail_msg("%s: %s", spec, err.msg);
  chakra_topo_free(t);
}

static void synth(run *r, const char *spec, uint64_t chunk_bytes, uint64_t seed) {
  synth_opts(r, spec, chunk_bytes, seed, 0, 0);
}

static void done(run *r) {
  tacos_sched_free(&r->sched);
  tacos_net_free(&r->net);
  free(r->links);
}

/* Every NPU ends with every chunk, each received once, only from an NPU
 * that held it (for `delay` ns after its arrival) when the transfer
 * started, and no physical link carries two chunks at once. */
static void check_delayed(const run *r, uint64_t delay) {
  uint32_t n = r->net.npus;
  uint64_t *have = calloc((size_t)n * n, sizeof *have); /* arrival time + 1, 0 = never */
  uint64_t *busy = calloc(r->net.n_links, sizeof *busy); /* per physical link: free from */
  assert_non_null(have);
  assert_non_null(busy);
  for (uint32_t c = 0; c < n; c++) have[(size_t)c * n + c] = 1;
  for (size_t k = 0; k < r->sched.n; k++) {
    const tacos_xfer *x = &r->sched.x[k];
    const tacos_chan *ch = &r->net.chans[x->chan];
    assert_true(x->chunk < n);
    uint64_t held = have[(size_t)ch->src * n + x->chunk];
    assert_true(held != 0 && held - 1 + (x->chunk == ch->src ? 0 : delay) <= x->start);
    assert_int_equal(have[(size_t)ch->dst * n + x->chunk], 0);
    uint64_t t = x->start; /* store and forward: one link after the other */
    for (int j = 0; j < ch->n_links; j++) {
      assert_true(busy[ch->link[j]] <= t);
      t += ch->tau[j];
      busy[ch->link[j]] = t;
    }
    have[(size_t)ch->dst * n + x->chunk] = x->start + ch->total + 1;
    assert_true(x->start + ch->total + delay <= r->sched.time_ns);
  }
  for (size_t i = 0; i < (size_t)n * n; i++) assert_true(have[i] != 0);
  free(have);
  free(busy);
}

static void check_schedule(const run *r) { check_delayed(r, 0); }

typedef struct table_row {
  const char *spec;
  double tacos_us, ingress_us; /* collectives.md 5.4 */
} table_row;

static void test_no_worse_than_tacos(void **state) {
  (void)state;
  static const table_row rows[] = {
      {"mesh:8x8", 10016, 9844}, {"mesh:4x4x4", 6573, 6563}, {"torus:8x8", 5321, 4922}, {"mesh:16x16", 10064, 9961}};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    run r;
    uint32_t npus = strcmp(rows[i].spec, "mesh:16x16") == 0 ? 256 : 64;
    synth(&r, rows[i].spec, (1024 * MIB) / npus, 0);
    double us = (double)r.sched.time_ns / 1000.0;
    print_message("%s: %.1f us (TACOS %.0f, ingress bound %.0f)\n", rows[i].spec, us, rows[i].tacos_us,
                  rows[i].ingress_us);
    assert_true(us <= rows[i].tacos_us);
    assert_true(us >= rows[i].ingress_us * 0.999);
    check_schedule(&r);
    done(&r);
  }
}

static void test_seed_is_reproducible(void **state) {
  (void)state;
  run a, b;
  synth(&a, "mesh:4x4", 1 * MIB, 7);
  synth(&b, "mesh:4x4", 1 * MIB, 7);
  assert_int_equal(a.sched.n, b.sched.n);
  assert_int_equal(a.sched.time_ns, b.sched.time_ns);
  assert_memory_equal(a.sched.x, b.sched.x, a.sched.n * sizeof *a.sched.x);
  check_schedule(&a);
  done(&a);
  done(&b);
}

/* A reduce-scatter is matched as an all-gather whose chunks wait a
 * reduction before they are forwarded: nobody forwards early, and the
 * links still carry one chunk at a time. */
static void test_forward_delay(void **state) {
  (void)state;
  run r;
  synth_opts(&r, "mesh:4x4", 1 * MIB, 3, 62000, 0);
  check_delayed(&r, 62000);
  done(&r);
}

static void test_switch_relays(void **state) {
  (void)state;
  run r;
  synth(&r, "switch:8", 1 * MIB, 0);
  check_schedule(&r);
  done(&r);
}

/* As a circuit, a relayed chunk keeps both links of its channel until it
 * arrives: no link carries anything else meanwhile. */
static void test_circuit_holds_both_links(void **state) {
  (void)state;
  run r;
  synth_opts(&r, "switch:8", 1 * MIB, 5, 0, 1);
  check_schedule(&r);
  uint64_t *busy = calloc(r.net.n_links, sizeof *busy);
  assert_non_null(busy);
  for (size_t k = 0; k < r.sched.n; k++) {
    const tacos_chan *ch = &r.net.chans[r.sched.x[k].chan];
    for (int j = 0; j < ch->n_links; j++) {
      assert_true(busy[ch->link[j]] <= r.sched.x[k].start);
      busy[ch->link[j]] = r.sched.x[k].start + ch->total;
    }
  }
  /* 7 chunks leave each NPU, one at a time, 2 hops of 20,031 ns each */
  assert_true(r.sched.time_ns >= 7 * 2 * 20031);
  free(busy);
  done(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_no_worse_than_tacos),
      cmocka_unit_test(test_seed_is_reproducible),
      cmocka_unit_test(test_switch_relays),
      cmocka_unit_test(test_forward_delay),
      cmocka_unit_test(test_circuit_holds_both_links),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
