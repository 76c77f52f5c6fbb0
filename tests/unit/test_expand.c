/* test_expand.c - pins coll expand in the library (chakra_coll_expand,
 * chakra_coll_expand_set, chakra_coll_rule_parse; docs/coll.md): a
 * collective replaced by its rank's copy of the algorithm, ids after the
 * file's, the collective's dependencies and dependents carried over, tags
 * above the workload's own; algorithm ranks through the communicator's
 * members; rules (first match, type, size range, what is passed over and
 * left alone with a warning); algorithm ETs scaled or copied as made; the
 * ranks' collective sequences compared before anything is written; the
 * same bytes on any thread count; the output a workload validate accepts. */
#include <stdio.h>
#include <stdlib.h>

#include "chakra/build.h"
#include "chakra/coll.h"
#include "chakra/graph.h"
#include "chakra/set.h"
#include "chakra/validate.h"
#include "testutil.h"

#define NPUS 4
#define AR(i, size, ...) TU_COLL(i, CHAKRA_ALL_REDUCE, size, __VA_ARGS__)
#define AG(i, size, ...) TU_COLL(i, CHAKRA_ALL_GATHER, size, __VA_ARGS__)

/* Every rank: compute 1, the all-reduce 2 of `size` bytes after it, compute
 * 3 after that; rank 0 also sends 64 bytes (tag 3) to rank 1. */
static char *one_allreduce(const char *name, uint64_t size) {
  char *prefix = tu_join(tu_dir, name);
  for (uint32_t r = 0; r < NPUS; r++) {
    tu_wnode n[4] = {TU_COMP(1, 10, 0), AR(2, size, TU_DEPS(1)), TU_COMP(3, 10, 0, TU_DEPS(2))};
    size_t k = 3;
    if (r == 0) n[k++] = (tu_wnode)TU_SEND(4, 1, 64);
    if (r == 1) n[k++] = (tu_wnode)TU_RECV(4, 0, 64);
    tu_write_rank(prefix, r, n, k);
  }
  return prefix;
}

static chakra_coll_rule rule(const char *text) {
  chakra_coll_rule r;
  chakra_error err = {0};
  if (chakra_coll_rule_parse(text, &r, &err)) fail_msg("%s", err.msg);
  return r;
}

/* Expands in to out with the rules; returns the nodes written. */
static uint64_t expand(const char *in, const char *out, const chakra_coll_rule *rules, size_t n,
                       chakra_coll_expand_options *o) {
  chakra_coll_expand_options none = {0};
  if (!o) o = &none;
  o->rules = rules;
  o->n_rules = n;
  uint64_t nodes = 0;
  chakra_error err = {0};
  if (chakra_coll_expand(in, out, o, &nodes, &err)) fail_msg("%s", err.msg);
  return nodes;
}

static size_t count_type(const chakra_graph *g, int type) {
  size_t n = 0;
  for (size_t i = 0; i < g->n; i++) n += g->nodes[i].type == type;
  return n;
}

/* Whether node index i depends (data) on the node with id dep. */
static int depends_on(const chakra_graph *g, size_t i, uint64_t dep) {
  for (uint32_t k = g->dep_off[i]; k < g->dep_off[i] + g->n_data[i]; k++)
    if (g->nodes[g->deps[k]].id == dep) return 1;
  return 0;
}

static void ring_replaces_the_collective_and_rewires(void **state) {
  (void)state;
  char *in = one_allreduce("w", 4096), *out = tu_join(tu_dir, "x");
  chakra_coll_rule r = rule("ring");
  uint64_t written = expand(in, out, &r, 1, NULL);
  uint64_t total = 0;
  for (uint32_t rank = 0; rank < NPUS; rank++) {
    chakra_graph *g = tu_rank_graph(out, rank);
    total += g->n;
    int own = rank <= 1; /* ranks 0 and 1 keep their own send or receive */
    assert_int_equal(count_type(g, CHAKRA_COMM_COLL_NODE), 0);
    /* ring all-reduce on 4 ranks: 2 (n - 1) steps, a quarter of the buffer each */
    assert_int_equal(count_type(g, CHAKRA_COMM_SEND_NODE), 6 + (rank == 0));
    assert_int_equal(count_type(g, CHAKRA_COMM_RECV_NODE), 6 + (rank == 1));
    assert_int_equal(count_type(g, CHAKRA_COMP_NODE), 2); /* no reductions without a bandwidth */
    uint64_t max_own = own ? 4 : 3;
    uint32_t three = chakra_graph_find(g, 3);
    assert_int_not_equal(three, UINT32_MAX);
    assert_int_equal(chakra_graph_find(g, 2), UINT32_MAX);
    size_t roots = 0, sinks = 0;
    for (size_t i = 0; i < g->n; i++) {
      const chakra_gnode *nd = &g->nodes[i];
      if (nd->id <= max_own) continue;
      assert_true(nd->type == CHAKRA_COMM_SEND_NODE || nd->type == CHAKRA_COMM_RECV_NODE);
      assert_int_equal(nd->size, 1024);
      int32_t peer = nd->type == CHAKRA_COMM_SEND_NODE ? nd->comm_dst : nd->comm_src;
      assert_int_equal(peer, nd->type == CHAKRA_COMM_SEND_NODE ? (int32_t)((rank + 1) % NPUS)
                                                                : (int32_t)((rank + NPUS - 1) % NPUS));
      assert_true(nd->comm_tag > 3); /* above the workload's own tags */
      if (depends_on(g, i, 1)) roots++;
      int sink = 1; /* no dependent inside the algorithm */
      for (uint32_t k = g->child_off[i]; k < g->child_off[i + 1]; k++) sink &= g->nodes[g->children[k]].id <= max_own;
      if (sink) {
        sinks++;
        assert_true(depends_on(g, three, nd->id));
      }
    }
    assert_true(roots >= 1);
    assert_true(sinks >= 2); /* the last send and the last receive */
    assert_int_equal(g->dep_off[three + 1] - g->dep_off[three], sinks); /* 3 waits for the sinks only */
    chakra_graph_free(g);
  }
  assert_int_equal(written, total);
  /* an ordinary workload: every send has its receive, nothing deadlocks */
  chakra_set *s;
  chakra_error err = {0};
  assert_int_equal(chakra_set_open(&s, out, NULL, &err), 0);
  chakra_validate_summary sum;
  assert_int_equal(chakra_validate_set(s, NULL, NULL, NULL, &sum, &err), 0);
  assert_int_equal(sum.errors, 0);
  chakra_set_close(s);
  free(in), free(out);
}

static void rules_parse_and_match_first(void **state) {
  (void)state;
  chakra_coll_rule r = rule("allreduce:64K-1M@tp=ring");
  assert_int_equal(r.coll, CHAKRA_COLL_ALLREDUCE);
  assert_int_equal(r.min_size, 65536);
  assert_int_equal(r.max_size, 1048576);
  assert_int_equal(r.pg_len, 2);
  assert_memory_equal(r.pg, "tp", 2);
  assert_int_equal(r.algo, CHAKRA_ALGO_RING);
  assert_null(r.prefix);
  r = rule("alg/ring8");
  assert_int_equal(r.coll, -1);
  assert_int_equal(r.algo, -1);
  assert_string_equal(r.prefix, "alg/ring8");
  chakra_error err = {0};
  assert_int_equal(chakra_coll_rule_parse("allreduce:big=ring", &r, &err), CHAKRA_EINVAL);
  assert_contains(err.msg, "expected a size range MIN-MAX");
  assert_int_equal(chakra_coll_rule_parse("gather=ring", &r, &err), CHAKRA_EINVAL);
  assert_contains(err.msg, "is not allreduce, allgather, reducescatter or alltoall");

  /* an all-reduce of 1 KiB, one of 8 KiB and an all-gather on every rank */
  char *in = tu_join(tu_dir, "w"), *out = tu_join(tu_dir, "x");
  for (uint32_t k = 0; k < NPUS; k++) {
    const tu_wnode n[] = {AR(1, 1024), AR(2, 8192, TU_DEPS(1)), AG(3, 4096, TU_DEPS(2))};
    tu_write_rank(in, k, n, 3);
  }
  /* small all-reduces direct, the rest ring; the all-gather matches nothing */
  const chakra_coll_rule rules[] = {rule("allreduce:-2K=direct"), rule("allreduce=ring")};
  tu_lines warned = {0};
  chakra_coll_expand_options o = {.diag = tu_collect_line, .diag_ctx = &warned};
  expand(in, out, rules, 2, &o);
  assert_int_equal(warned.n, 1);
  assert_contains(warned.line[0], "4 collective(s) left as COMM_COLL nodes: no algo rule matches them"); /* one per rank */
  chakra_graph *g = tu_rank_graph(out, 0);
  assert_int_equal(count_type(g, CHAKRA_COMM_COLL_NODE), 1);
  assert_int_not_equal(chakra_graph_find(g, 3), UINT32_MAX);
  int direct_peers = 0, ring_peers = 0;
  for (size_t i = 0; i < g->n; i++) {
    const chakra_gnode *nd = &g->nodes[i];
    if (nd->type != CHAKRA_COMM_SEND_NODE) continue;
    if (nd->size == 1024 / NPUS) direct_peers |= 1 << nd->comm_dst; /* direct: every other rank */
    if (nd->size == 8192 / NPUS) ring_peers |= 1 << nd->comm_dst;   /* ring: the next one only */
  }
  assert_int_equal(direct_peers, 0xe);
  assert_int_equal(ring_peers, 0x2);
  chakra_graph_free(g);
  /* a rule without a type that cannot run a collective is passed over */
  const chakra_coll_rule fallback[] = {rule("tree"), rule("ring")};
  memset(&warned, 0, sizeof warned);
  expand(in, out, fallback, 2, &o);
  assert_int_equal(warned.n, 0); /* tree for the all-reduces, ring for the all-gather */
  g = tu_rank_graph(out, 0);
  assert_int_equal(count_type(g, CHAKRA_COMM_COLL_NODE), 0);
  chakra_graph_free(g);
  free(in), free(out);
}

/* Ranks 1 and 3 all-reduce on group "g" = {1, 3}: algorithm rank 0 is
 * rank 1, algorithm rank 1 is rank 3. Rank 2 all-reduces alone on "solo":
 * left as it is, with a warning. */
static void communicator_members_are_the_algorithm_ranks(void **state) {
  (void)state;
  char *in = tu_join(tu_dir, "w"), *out = tu_join(tu_dir, "x"), *groups = tu_join(tu_dir, "groups.json");
  tu_write_text(groups, "{\"g\": [1, 3], \"solo\": [2]}");
  const tu_wnode none[] = {TU_COMP(1, 5, 0)}, pair[] = {TU_COLL(1, CHAKRA_ALL_REDUCE, 2048, .pg = "g")},
                 alone[] = {TU_COLL(1, CHAKRA_ALL_REDUCE, 2048, .pg = "solo")};
  tu_write_rank(in, 0, none, 1);
  tu_write_rank(in, 1, pair, 1);
  tu_write_rank(in, 2, alone, 1);
  tu_write_rank(in, 3, pair, 1);
  chakra_coll_rule r = rule("ring");
  tu_lines warned = {0};
  chakra_coll_expand_options o = {.comm_groups = groups, .diag = tu_collect_line, .diag_ctx = &warned};
  expand(in, out, &r, 1, &o);
  assert_int_equal(warned.n, 1);
  assert_contains(warned.line[0], "1 collective(s) left as COMM_COLL nodes");
  for (uint32_t rank = 1; rank <= 3; rank += 2) {
    chakra_graph *g = tu_rank_graph(out, rank);
    assert_int_equal(count_type(g, CHAKRA_COMM_SEND_NODE), 2); /* ring on 2: one reduce-scatter, one gather step */
    for (size_t i = 0; i < g->n; i++) {
      const chakra_gnode *nd = &g->nodes[i];
      assert_int_equal(nd->type == CHAKRA_COMM_SEND_NODE ? nd->comm_dst : nd->comm_src, 4 - rank);
      assert_int_equal(nd->size, 1024);
    }
    chakra_graph_free(g);
  }
  chakra_graph *g = tu_rank_graph(out, 2);
  assert_int_equal(g->n, 1);
  assert_int_equal(g->nodes[0].type, CHAKRA_COMM_COLL_NODE);
  chakra_graph_free(g);
  free(in), free(out), free(groups);
}

/* Algorithm ETs made for a 4 KiB all-reduce run an 8 KiB one: scaled by
 * 8192/4096 (the default), or as made; one warning per algorithm and size,
 * not per rank. */
static void algorithm_ets_scaled_or_as_made(void **state) {
  (void)state;
  char *alg = tu_join(tu_dir, "alg"), *in = one_allreduce("w", 8192), *out = tu_join(tu_dir, "x");
  chakra_coll_gen_options go = {.coll = CHAKRA_COLL_ALLREDUCE, .algo = CHAKRA_ALGO_RING, .ranks = NPUS, .size = 4096};
  chakra_error err = {0};
  assert_int_equal(chakra_coll_gen(alg, &go, &err), 0);
  chakra_coll_rule r = rule(alg);
  for (int as_is = 0; as_is <= 1; as_is++) {
    tu_lines warned = {0};
    chakra_coll_expand_options o = {.custom_as_is = as_is, .diag = tu_collect_line, .diag_ctx = &warned};
    expand(in, out, &r, 1, &o);
    assert_int_equal(warned.n, 1);
    assert_contains(warned.line[0], "made for allreduce of 4096 bytes");
    chakra_graph *g = tu_rank_graph(out, 2);
    size_t messages = 0;
    for (size_t i = 0; i < g->n; i++)
      if (g->nodes[i].type == CHAKRA_COMM_SEND_NODE) {
        assert_int_equal(g->nodes[i].size, as_is ? 1024 : 2048);
        messages++;
      }
    assert_int_equal(messages, 6);
    chakra_graph_free(g);
  }
  free(alg), free(in), free(out);
}

/* Rank 1's all-reduce is twice rank 0's: no algorithm can pair them. The
 * expansion is refused naming the node, and nothing is written. */
static void disagreeing_ranks_refused_before_writing(void **state) {
  (void)state;
  char *in = tu_join(tu_dir, "w"), *out = tu_join(tu_dir, "x");
  const tu_wnode a[] = {AR(7, 1024)}, b[] = {AR(7, 2048)};
  tu_write_rank(in, 0, a, 1);
  tu_write_rank(in, 1, b, 1);
  chakra_coll_rule r = rule("ring");
  chakra_coll_expand_options o = {.rules = &r, .n_rules = 1};
  chakra_error err = {0};
  assert_int_equal(chakra_coll_expand(in, out, &o, NULL, &err), CHAKRA_EFORMAT);
  assert_contains(err.msg, "w.1.et: node 7: collective #0 of communicator");
  assert_contains(err.msg, "differs from rank 0's");
  assert_int_equal(tu_dir_count(tu_dir, NULL), 2); /* the two inputs only */
  free(in), free(out);
}

/* The bytes never depend on the thread count, and the set form with the
 * set's groups writes what the path form does. */
static void same_bytes_on_any_thread_count(void **state) {
  (void)state;
  char *in = one_allreduce("w", 65536), *a = tu_join(tu_dir, "a"), *b = tu_join(tu_dir, "b");
  const chakra_coll_rule rules[] = {rule("hd")};
  chakra_coll_expand_options one = {.threads = 1, .reduce_bw = 50}, four = {.threads = 4, .reduce_bw = 50};
  expand(in, a, rules, 1, &one);
  chakra_set *s;
  chakra_error err = {0};
  assert_int_equal(chakra_set_open(&s, in, NULL, &err), 0);
  four.rules = rules;
  four.n_rules = 1;
  assert_int_equal(chakra_coll_expand_set(s, b, &four, NULL, &err), 0);
  chakra_set_close(s);
  tu_assert_same_ranks(a, b, NPUS);
  chakra_graph *g = tu_rank_graph(a, 0);
  assert_true(count_type(g, CHAKRA_COMP_NODE) > 2); /* reductions at 50 GB/s */
  chakra_graph_free(g);
  free(in), free(a), free(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(ring_replaces_the_collective_and_rewires, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(rules_parse_and_match_first, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(communicator_members_are_the_algorithm_ranks, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(algorithm_ets_scaled_or_as_made, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(disagreeing_ranks_refused_before_writing, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(same_bytes_on_any_thread_count, tu_dir_setup, tu_dir_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
