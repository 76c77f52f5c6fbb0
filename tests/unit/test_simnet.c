/* test_simnet.c - pins the simulator's network layer (lib/sim/net.c) and the
 * topology it asks (lib/topo): the k-th send of a (tag, src, dst, bytes)
 * key matches the k-th receive of that key, sizes and tag spaces must
 * agree, both callbacks run at arrival (send first) or the receive's when
 * it is posted late, and congestion-aware links are FIFO with routes the
 * shorter way round, ties clockwise (simulator spec 7.1-7.4). */
#include "testutil.h"

#include <stdlib.h>

#include "chakra/topo.h"
#include "core.h"
#include "net.h"

typedef struct log_ctx {
  uint64_t t[64], id[64];
  size_t n;
} log_ctx;

static log_ctx g_log;

static void record(sim *s, void *obj, uint64_t arg) {
  (void)obj;
  g_log.t[g_log.n] = s->q.now;
  g_log.id[g_log.n++] = arg;
}

static chakra_error g_err;

/* A 4-NPU ring, 50 GB/s, 500 ns: 131,072 B take 2,441 ns on a link and
 * 2,941 per hop; 1,000 B take floor(500 + 18.6) = 518 ns (unaware). */
static sim *make_sim(int aware) {
  memset(&g_log, 0, sizeof g_log);
  sim *s = calloc(1, sizeof *s);
  assert_non_null(s);
  chakra_topo_dim d = {CHAKRA_TOPO_RING, 4, 50.0, 500.0};
  chakra_topo *t;
  assert_int_equal(chakra_topo_new(&t, &d, 1, &g_err), 0);
  s->topo = t;
  s->dims = 1;
  s->dim_npus[0] = 4;
  s->offset[0] = 1;
  s->npus = 4;
  s->opt.aware = aware;
  s->err = &g_err;
  s->diag = (sim_diag){.err = &g_err, .stop = &s->q.oom};
  assert_int_equal(eventq_init(&s->q, 4), 0);
  assert_int_equal(net_init(s), 0);
  return s;
}

static void free_sim(sim *s) {
  net_free(s);
  eventq_free(&s->q);
  chakra_topo_free((chakra_topo *)s->topo);
  free(s);
}

static void run(sim *s) { eventq_run(&s->q, s, NULL); }

static void test_receive_posted_first_runs_with_the_send_at_arrival(void **state) {
  (void)state;
  sim *s = make_sim(0);
  net_recv(s, 1, 0, 1, 0, 1000, NET_TAG_NATIVE | 7, record, NULL, 2);
  net_send(s, 0, 1, 0, 1, 1000, NET_TAG_NATIVE | 7, record, NULL, 1);
  run(s);
  assert_int_equal(g_log.n, 2);
  assert_int_equal(g_log.id[0], 1); /* the send's callback first */
  assert_int_equal(g_log.id[1], 2);
  assert_int_equal(g_log.t[0], 518);
  assert_int_equal(g_log.t[1], 518);
  assert_int_equal(net_pending(s, NULL, NULL), 0);
  free_sim(s);
}

static void post_late_receive(sim *s, void *obj, uint64_t arg) {
  (void)obj, (void)arg;
  net_recv(s, 1, 0, 1, 0, 1000, NET_TAG_NATIVE | 7, record, NULL, 2);
}

static void test_receive_posted_after_arrival_completes_when_posted(void **state) {
  (void)state;
  sim *s = make_sim(0);
  net_send(s, 0, 1, 0, 1, 1000, NET_TAG_NATIVE | 7, record, NULL, 1);
  eventq_at(&s->q, 2000, post_late_receive, NULL, 0);
  run(s);
  assert_int_equal(g_log.n, 2);
  assert_int_equal(g_log.id[0], 1);
  assert_int_equal(g_log.t[0], 518);
  assert_int_equal(g_log.id[1], 2);
  assert_int_equal(g_log.t[1], 2000);
  free_sim(s);
}

/* Two sends on one tag with different sizes: a receive matches the one of
 * its size; a receive of a third size waits forever. */
static void test_sizes_must_agree_and_kth_matches_kth(void **state) {
  (void)state;
  sim *s = make_sim(0);
  net_send(s, 0, 1, 0, 1, 100, NET_TAG_NATIVE | 1, record, NULL, 1);
  net_send(s, 0, 1, 0, 1, 200, NET_TAG_NATIVE | 1, record, NULL, 2);
  net_send(s, 0, 1, 0, 1, 200, NET_TAG_NATIVE | 1, record, NULL, 3);
  net_recv(s, 1, 0, 1, 0, 200, NET_TAG_NATIVE | 1, record, NULL, 12);
  net_recv(s, 1, 0, 1, 0, 200, NET_TAG_NATIVE | 1, record, NULL, 13);
  net_recv(s, 1, 0, 1, 0, 300, NET_TAG_NATIVE | 1, record, NULL, 99);
  run(s);
  /* all three sends complete; the receives of 200 B take the 200 B sends
   * in order, at their (equal) arrival */
  assert_int_equal(g_log.n, 5);
  size_t seen12 = 0, seen13 = 0;
  for (size_t i = 0; i < g_log.n; i++) {
    if (g_log.id[i] == 12) seen12 = i;
    if (g_log.id[i] == 13) seen13 = i;
    assert_int_not_equal(g_log.id[i], 99);
  }
  assert_true(seen12 && seen13 && seen12 < seen13);
  assert_int_equal(net_pending(s, NULL, NULL), 2); /* the 100 B message and the 300 B receive */
  free_sim(s);
}

static void test_tag_spaces_never_match(void **state) {
  (void)state;
  sim *s = make_sim(0);
  net_send(s, 0, 1, 0, 1, 64, NET_TAG_NATIVE | 5, record, NULL, 1);
  net_recv(s, 1, 0, 1, 0, 64, NET_TAG_COLLECTIVE | 5, record, NULL, 2);
  run(s);
  assert_int_equal(g_log.n, 1);
  assert_int_equal(g_log.id[0], 1);
  assert_int_equal(net_pending(s, NULL, NULL), 2);
  free_sim(s);
}

/* Aware: 0->2 (two hops, a tie: clockwise via 1) then 0->1 share the link
 * 0->1. The first keeps it 2,441 ns, reaches 1 at 2,941 and 2 at 5,882;
 * the second starts at 2,441 and arrives at 5,382. */
static void test_aware_links_are_fifo_and_ties_go_clockwise(void **state) {
  (void)state;
  sim *s = make_sim(1);
  net_send(s, 0, 2, 0, 2, 131072, NET_TAG_NATIVE, record, NULL, 1);
  net_send(s, 0, 1, 0, 1, 131072, NET_TAG_NATIVE, record, NULL, 2);
  run(s);
  assert_int_equal(g_log.n, 2);
  assert_int_equal(g_log.id[0], 2);
  assert_int_equal(g_log.t[0], 5382);
  assert_int_equal(g_log.id[1], 1);
  assert_int_equal(g_log.t[1], 5882);
  free_sim(s);
}

/* Ring4 x Switch2: coordinates with dimension 0 fastest, hops per block,
 * routes lowest dimension first through the switch. */
static void test_topology_coordinates_hops_and_routes(void **state) {
  (void)state;
  chakra_topo_dim d[2] = {{CHAKRA_TOPO_RING, 4, 100, 10}, {CHAKRA_TOPO_SWITCH, 2, 50, 20}};
  chakra_topo *t;
  assert_int_equal(chakra_topo_new(&t, d, 2, &g_err), 0);
  assert_int_equal(chakra_topo_npus(t), 8);
  uint32_t c[2];
  chakra_topo_coords(t, 7, c);
  assert_int_equal(c[0], 3);
  assert_int_equal(c[1], 1);
  assert_int_equal(chakra_topo_npu_at(t, c), 7);
  assert_int_equal(chakra_topo_hops(t, 0, 0, 3), 1);
  assert_int_equal(chakra_topo_hops(t, 0, 0, 2), 2);
  assert_int_equal(chakra_topo_hops(t, 1, 0, 1), 2);
  assert_int_equal(chakra_topo_first_diff(t, 0, 7), 0);
  assert_int_equal(chakra_topo_devices(t), 8 + 4);  /* four switch instances */
  assert_int_equal(chakra_topo_links(t), 16 + 16);
  chakra_topo_hop h[8];
  int n = chakra_topo_route(t, 0, 7, h, 8);
  assert_int_equal(n, 3);
  assert_int_equal(h[0].dim, 0);
  assert_int_equal(h[0].next, 3);  /* anticlockwise: the shorter way */
  assert_int_equal(h[1].dim, 1);
  assert_true(h[1].next >= 8);     /* the switch */
  assert_int_equal(h[2].next, 7);
  chakra_topo_free(t);
  chakra_topo_dim bad = {CHAKRA_TOPO_RING, 4, 0, 10};
  assert_int_equal(chakra_topo_new(&t, &bad, 1, &g_err), CHAKRA_EINVAL);
  assert_null(t);
  assert_non_null(strstr(g_err.msg, "bandwidth"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_receive_posted_first_runs_with_the_send_at_arrival),
      cmocka_unit_test(test_receive_posted_after_arrival_completes_when_posted),
      cmocka_unit_test(test_sizes_must_agree_and_kth_matches_kth),
      cmocka_unit_test(test_tag_spaces_never_match),
      cmocka_unit_test(test_aware_links_are_fifo_and_ties_go_clockwise),
      cmocka_unit_test(test_topology_coordinates_hops_and_routes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
