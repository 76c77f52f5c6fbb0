/* test_topo.c - pins the topology description (lib/topo, docs/topology.md):
 * the inline forms and their link sets, link enumeration and adjacency,
 * dimension-order routes on meshes and tori, link lists with shortest-path
 * routes (ties to the link listed first), chakra_topo_open()'s choice
 * between inline, YAML and link-list file, and the link-list file's errors
 * (one line naming the file and line). */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "chakra/topo.h"

static chakra_error g_err;

static chakra_topo *parse(const char *spec) {
  chakra_topo *t = NULL;
  int rc = chakra_topo_parse(&t, spec, 50, 500, &g_err);
  if (rc) fail_msg("%s: %s", spec, g_err.msg);
  return t;
}

/* Every link once: ends in range, no self loops, no duplicate (src, dst),
 * and the adjacency lists hold exactly the links with that end. */
static void check_links(const chakra_topo *t) {
  uint64_t n = chakra_topo_links(t), devs = chakra_topo_devices(t);
  uint64_t seen_out = 0, seen_in = 0;
  for (uint64_t i = 0; i < n; i++) {
    chakra_topo_link l, m;
    assert_int_equal(chakra_topo_link_at(t, i, &l), 0);
    assert_true(l.src < devs && l.dst < devs && l.src != l.dst);
    assert_true(l.bytes_per_ns > 0);
    for (uint64_t j = 0; j < i; j++) {
      chakra_topo_link_at(t, j, &m);
      assert_false(m.src == l.src && m.dst == l.dst);
    }
  }
  for (uint32_t d = 0; d < devs; d++) {
    const uint64_t *o, *in;
    uint32_t no = chakra_topo_out_links(t, d, &o), ni = chakra_topo_in_links(t, d, &in);
    for (uint32_t k = 0; k < no; k++) {
      chakra_topo_link l;
      chakra_topo_link_at(t, o[k], &l);
      assert_int_equal(l.src, d);
      if (k) assert_true(o[k] > o[k - 1]);
    }
    for (uint32_t k = 0; k < ni; k++) {
      chakra_topo_link l;
      chakra_topo_link_at(t, in[k], &l);
      assert_int_equal(l.dst, d);
    }
    seen_out += no, seen_in += ni;
  }
  assert_int_equal(seen_out, n);
  assert_int_equal(seen_in, n);
  chakra_topo_link l;
  assert_int_equal(chakra_topo_link_at(t, n, &l), CHAKRA_EINVAL);
}

/* The route's links join up, start at src and end at dst. */
static int route_len(const chakra_topo *t, uint32_t src, uint32_t dst) {
  chakra_topo_hop h[64];
  int n = chakra_topo_route(t, src, dst, h, 64);
  uint32_t at = src;
  for (int k = 0; k < n; k++) {
    chakra_topo_link l;
    chakra_topo_link_at(t, h[k].link, &l);
    assert_int_equal(l.src, at);
    assert_int_equal(l.dst, h[k].next);
    at = h[k].next;
  }
  assert_int_equal(at, dst);
  return n;
}

static void test_inline_forms_have_the_expected_links(void **state) {
  (void)state;
  struct {
    const char *spec;
    uint32_t npus;
    int dims;
    uint64_t links;
  } cases[] = {
      {"mesh:8x8", 64, 2, 2 * 2 * 8 * 7},  {"mesh:4x4x4", 64, 3, 3 * 2 * 16 * 3}, {"torus:8x8", 64, 2, 2 * 2 * 64},
      {"hypercube:64", 64, 6, 6 * 64},     {"ring:8", 8, 1, 16},                  {"ring:2", 2, 1, 2},
      {"torus:2x4", 8, 2, 4 * 2 + 2 * 8},  {"switch:16", 16, 1, 32},              {"fc:8", 8, 1, 56},
      {"mesh:8", 8, 1, 14},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    chakra_topo *t = parse(cases[i].spec);
    assert_int_equal(chakra_topo_npus(t), cases[i].npus);
    assert_int_equal(chakra_topo_dims(t), cases[i].dims);
    assert_int_equal(chakra_topo_links(t), cases[i].links);
    check_links(t);
    chakra_topo_free(t);
  }
  chakra_topo *t = parse("switch:4");
  assert_int_equal(chakra_topo_devices(t), 5);
  const uint64_t *in;
  assert_int_equal(chakra_topo_in_links(t, 4, &in), 4);
  chakra_topo_free(t);
}

static void test_inline_bandwidth_suffix_and_errors(void **state) {
  (void)state;
  chakra_topo *t;
  assert_int_equal(chakra_topo_parse(&t, "mesh:2x2@25GBps,100ns", 50, 500, &g_err), 0);
  chakra_topo_link l;
  chakra_topo_link_at(t, 0, &l);
  assert_true(l.bytes_per_ns > 26.843 && l.bytes_per_ns < 26.844); /* 25 x 2^30 / 1e9 */
  assert_true(l.latency_ns == 100);
  assert_true(chakra_topo_is_extended(t));
  chakra_topo_free(t);
  assert_int_equal(chakra_topo_parse(&t, "ring:4", 50, 500, &g_err), 0);
  assert_false(chakra_topo_is_extended(t));
  chakra_topo_free(t);
  /* a mesh of lines of two is the same link set, and Mesh is an extension */
  assert_int_equal(chakra_topo_parse(&t, "mesh:3x2", 50, 500, &g_err), 0);
  assert_true(chakra_topo_is_extended(t));
  chakra_topo_free(t);
  const char *bad[] = {"mesh:", "mesh:8x", "mesh:0x4", "blob:4", "ring:4x4", "hypercube:12", "mesh:8x8@50",
                       "mesh:8x8@x,5", "mesh8x8"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    assert_int_equal(chakra_topo_parse(&t, bad[i], 50, 500, &g_err), CHAKRA_EINVAL);
    assert_null(t);
    assert_non_null(strstr(g_err.msg, bad[i]));
  }
  assert_int_equal(chakra_topo_parse(&t, "mesh:4x4", 0, 500, &g_err), CHAKRA_EINVAL);
  assert_non_null(strstr(g_err.msg, "bandwidth"));
}

/* Dimension order: the lowest differing dimension first, straight inside it. */
static void test_mesh_and_torus_routes(void **state) {
  (void)state;
  chakra_topo *t = parse("mesh:8x8");
  assert_int_equal(route_len(t, 0, 63), 14);
  assert_int_equal(route_len(t, 63, 0), 14);
  assert_int_equal(route_len(t, 7, 56), 14);
  chakra_topo_hop h[16];
  chakra_topo_route(t, 9, 27, h, 16); /* (1,1) -> (3,3): x first */
  assert_int_equal(h[0].next, 10);
  assert_int_equal(h[1].next, 11);
  assert_int_equal(h[2].next, 19);
  assert_int_equal(h[2].dim, 1);
  assert_int_equal(chakra_topo_hops(t, 0, 0, 7), 7);
  chakra_topo_free(t);
  t = parse("torus:8x8");
  assert_int_equal(route_len(t, 0, 63), 2); /* both wrap-arounds */
  assert_int_equal(route_len(t, 0, 36), 8);
  chakra_topo_free(t);
  t = parse("hypercube:16");
  for (uint32_t a = 0; a < 16; a++)
    for (uint32_t b = 0; b < 16; b++) assert_int_equal(route_len(t, a, b), __builtin_popcount(a ^ b));
  chakra_topo_free(t);
  t = parse("fc:5");
  for (uint32_t a = 0; a < 5; a++)
    for (uint32_t b = 0; b < 5; b++) assert_int_equal(route_len(t, a, b), a != b);
  chakra_topo_free(t);
  t = parse("ring:2");
  assert_int_equal(route_len(t, 0, 1), 1);
  assert_int_equal(route_len(t, 1, 0), 1);
  chakra_topo_free(t);
}

static chakra_topo_link L(uint32_t s, uint32_t d, double gbps, double lat) {
  return (chakra_topo_link){s, d, gbps * 1073741824.0 / 1e9, lat, 0};
}

/* A square 0-1-2-3-0 (both ways) and a chord 0 -> 2: shortest paths, ties
 * to the link listed first. */
static void test_link_list_routes_shortest_ties_first_listed(void **state) {
  (void)state;
  chakra_topo_link ls[] = {L(0, 1, 50, 500), L(1, 0, 50, 500), L(1, 2, 50, 500), L(2, 1, 50, 500),
                           L(2, 3, 50, 500), L(3, 2, 50, 500), L(3, 0, 50, 500), L(0, 3, 25, 900),
                           L(0, 2, 100, 10)};
  chakra_topo *t;
  assert_int_equal(chakra_topo_from_links(&t, 4, 0, ls, 9, &g_err), 0);
  assert_int_equal(chakra_topo_dim_at(t, 0)->kind, CHAKRA_TOPO_LINKS);
  assert_true(fabs(chakra_topo_dim_at(t, 0)->bandwidth_gbps - 25) < 1e-9);
  assert_true(chakra_topo_dim_at(t, 0)->latency_ns == 900);
  assert_true(chakra_topo_is_extended(t));
  check_links(t);
  chakra_topo_hop h[8];
  assert_int_equal(chakra_topo_route(t, 0, 2, h, 8), 1); /* the chord */
  assert_int_equal(h[0].link, 8);
  assert_int_equal(chakra_topo_route(t, 2, 0, h, 8), 2); /* via 1 (link 3 listed before 4) */
  assert_int_equal(h[0].next, 1);
  assert_int_equal(chakra_topo_route(t, 1, 3, h, 8), 2); /* via 0 (link 1 before 2) */
  assert_int_equal(h[0].next, 0);
  assert_int_equal(h[1].link, 7);
  assert_int_equal(chakra_topo_hops(t, 0, 1, 3), 2);
  chakra_topo *c;
  assert_int_equal(chakra_topo_clone(&c, t, &g_err), 0);
  chakra_topo_free(t);
  assert_int_equal(chakra_topo_route(c, 1, 3, h, 8), 2);
  check_links(c);
  chakra_topo_free(c);
  /* a switch: 3 NPUs, up-links and down-links */
  chakra_topo_link sw[] = {L(0, 3, 10, 1), L(3, 0, 10, 1), L(1, 3, 10, 1), L(3, 1, 10, 1), L(2, 3, 10, 1), L(3, 2, 10, 1)};
  assert_int_equal(chakra_topo_from_links(&t, 3, 1, sw, 6, &g_err), 0);
  assert_int_equal(chakra_topo_devices(t), 4);
  assert_int_equal(chakra_topo_route(t, 0, 2, h, 8), 2);
  assert_int_equal(h[0].next, 3);
  chakra_topo_free(t);
}

static void test_link_list_errors_in_code(void **state) {
  (void)state;
  chakra_topo *t;
  chakra_topo_link missing[] = {L(0, 1, 50, 1), L(1, 0, 50, 1), L(1, 5, 50, 1)};
  assert_int_equal(chakra_topo_from_links(&t, 2, 0, missing, 3, &g_err), CHAKRA_EINVAL);
  assert_non_null(strstr(g_err.msg, "link 2"));
  chakra_topo_link oneway[] = {L(0, 1, 50, 1), L(1, 2, 50, 1)};
  assert_int_equal(chakra_topo_from_links(&t, 3, 0, oneway, 2, &g_err), CHAKRA_EINVAL);
  assert_non_null(strstr(g_err.msg, "disconnected"));
  chakra_topo_link zero[] = {L(0, 1, 0, 1), L(1, 0, 50, 1)};
  assert_int_equal(chakra_topo_from_links(&t, 2, 0, zero, 2, &g_err), CHAKRA_EINVAL);
  assert_non_null(strstr(g_err.msg, "bandwidth"));
  chakra_topo_link dup[] = {L(0, 1, 50, 1), L(1, 0, 50, 1), L(0, 1, 20, 1)};
  assert_int_equal(chakra_topo_from_links(&t, 2, 0, dup, 3, &g_err), CHAKRA_EINVAL);
  assert_non_null(strstr(g_err.msg, "duplicate link 0 -> 1 (first as link 0)"));
  assert_null(t);
}

static char *write_tmp(const char *name, const char *text) {
  char *p = tu_join(tu_dir, name);
  tu_write_text(p, text);
  return p;
}

static void expect_file_error(const char *text, const char *needle) {
  char *p = write_tmp("bad.links", text);
  chakra_topo *t;
  int rc = chakra_topo_open(&t, p, 0, 0, &g_err);
  if (rc != CHAKRA_EINVAL || !strstr(g_err.msg, needle) || !strstr(g_err.msg, p))
    fail_msg("expected an error with '%s', got %d: %s", needle, rc, g_err.msg);
  assert_null(t);
  free(p);
}

static void test_link_list_file_and_its_errors(void **state) {
  (void)state;
  char *p = write_tmp("line3.txt",
                      "# a line of three NPUs\n"
                      "npus 3\n"
                      "0 <-> 1 50 500   # GB/s, ns\n"
                      "1 -> 2 25GBps 100ns\n"
                      "2 1 25 100\n");
  chakra_topo *t;
  assert_int_equal(chakra_topo_open(&t, p, 0, 0, &g_err), 0);
  assert_int_equal(chakra_topo_npus(t), 3);
  assert_int_equal(chakra_topo_links(t), 4);
  chakra_topo_link l;
  chakra_topo_link_at(t, 1, &l);
  assert_int_equal(l.src, 1);
  assert_int_equal(l.dst, 0);
  chakra_topo_link_at(t, 2, &l);
  assert_true(l.latency_ns == 100);
  assert_int_equal(route_len(t, 0, 2), 2);
  chakra_topo_free(t);
  free(p);
  expect_file_error("npus 2\n0 <-> 1 50 500\n1 -> 2 50 500\n", "line 3: '2' is not a device");
  expect_file_error("npus 3\n0 <-> 1 50 500\n", "line 1: NPU 2 is disconnected");
  expect_file_error("npus 2\n0 <-> 1 0 500\n", "line 2: bandwidth 0 GB/s");
  expect_file_error("npus 2\n0 <-> 1 -5 500\n", "line 2: bandwidth -5 GB/s");
  expect_file_error("npus 2\n0 <-> 1 50 500\n\n1 0 50 500\n", "line 4: duplicate link 1 -> 0 (first on line 2)");
  expect_file_error("npus 2\n0 <-> 1 50 -1\n", "line 2: latency");
  expect_file_error("npus 2\n0 1 50\n", "line 2: expected 'SRC DST");
  expect_file_error("0 1 50 500\n", "line 1: expected 'npus N'");
  expect_file_error("npus 2\nnpus 2\n", "line 2: 'npus' given twice");
  expect_file_error("npus 2\n0 <-> 0 50 500\n", "line 2: link from 0 to itself");
  expect_file_error("npus 2\nswitches 1\n0 <-> s1 50 500\n", "line 3: 's1' is not a device");
}

static void test_open_tells_inline_yaml_and_link_list_apart(void **state) {
  (void)state;
  chakra_topo *t;
  assert_int_equal(chakra_topo_open(&t, "torus:4x4@50,500", 0, 0, &g_err), 0);
  assert_int_equal(chakra_topo_npus(t), 16);
  chakra_topo_free(t);
  assert_int_equal(chakra_topo_open(&t, "mesh:4x4", 100, 10, &g_err), 0);
  chakra_topo_free(t);
  char *y = write_tmp("net.yml", "topology: [ Mesh, Ring ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 50, 25 ]\nlatency: [ 500, 700 ]\n");
  assert_int_equal(chakra_topo_open(&t, y, 0, 0, &g_err), 0);
  assert_int_equal(chakra_topo_dim_at(t, 0)->kind, CHAKRA_TOPO_MESH);
  assert_int_equal(chakra_topo_links(t), 2 * 2 * 3 + 4 * 2);
  chakra_topo_free(t);
  free(y);
  char *n = write_tmp("net", "# no extension\nnpus 2\n0 <-> 1 50 500\n");
  assert_int_equal(chakra_topo_open(&t, n, 0, 0, &g_err), 0);
  assert_int_equal(chakra_topo_dim_at(t, 0)->kind, CHAKRA_TOPO_LINKS);
  chakra_topo_free(t);
  free(n);
  assert_int_equal(chakra_topo_open(&t, "no/such/file.yml", 0, 0, &g_err), CHAKRA_EIO);
  assert_non_null(strstr(g_err.msg, "no/such/file.yml"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_inline_forms_have_the_expected_links),
      cmocka_unit_test(test_inline_bandwidth_suffix_and_errors),
      cmocka_unit_test(test_mesh_and_torus_routes),
      cmocka_unit_test(test_link_list_routes_shortest_ties_first_listed),
      cmocka_unit_test(test_link_list_errors_in_code),
      cmocka_unit_test_setup_teardown(test_link_list_file_and_its_errors, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_open_tells_inline_yaml_and_link_list_apart, tu_dir_setup, tu_dir_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
