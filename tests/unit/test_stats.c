/* test_stats.c - pins the stats API (chakra_stats_file, _add, _sum)
 * and validate's summary on small traces whose figures are counted by hand
 * in the comments. The traces are packed here with protobuf-c directly, so
 * they do not depend on the library's writer. (The CLI's text and JSON are
 * pinned by tests/analyze/stats_cli.py and validate_cross.py.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chakra/stats.h"
#include "chakra/validate.h"
#include "testutil.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))
/* One node; attributes that are NULL are not written. I(v) points at v. */
typedef struct spec {
  uint64_t id;
  int type;
  uint64_t dur;
  uint64_t data[3], ctrl[2]; /* 0-terminated */
  int cpu;
  const int64_t *comm_type, *comm_size, *comm_src, *comm_dst, *comm_tag, *tensor_size, *num_ops;
  const char *pg;
} spec;

#define NODE(...) {__VA_ARGS__}
#define I(v) (&(const int64_t){v})

enum { COMP = 4, SEND = 5, RECV = 6, COLL = 7, LOAD = 2, STORE = 3 };

static size_t add_int(ChakraProtoMsg__AttributeProto *a, size_t k, const char *name, const int64_t *v) {
  if (!v) return k;
  ChakraProtoMsg__AttributeProto x = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT;
  x.name = (char *)name;
  x.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
  x.int64_val = *v;
  a[k] = x;
  return k + 1;
}

static void write_specs(const char *path, const spec *s, size_t n) {
  tu_buf b = {0};
  tu_put_metadata(&b);
  for (size_t i = 0; i < n; i++) {
    ChakraProtoMsg__Node nd = CHAKRA_PROTO_MSG__NODE__INIT;
    nd.id = s[i].id;
    nd.name = "n";
    nd.type = (ChakraProtoMsg__NodeType)s[i].type;
    nd.duration_micros = s[i].dur;
    uint64_t data[3], ctrl[2];
    while (nd.n_data_deps < 3 && s[i].data[nd.n_data_deps]) data[nd.n_data_deps] = s[i].data[nd.n_data_deps], nd.n_data_deps++;
    while (nd.n_ctrl_deps < 2 && s[i].ctrl[nd.n_ctrl_deps]) ctrl[nd.n_ctrl_deps] = s[i].ctrl[nd.n_ctrl_deps], nd.n_ctrl_deps++;
    nd.data_deps = data;
    nd.ctrl_deps = ctrl;
    ChakraProtoMsg__AttributeProto a[10], *ap[10];
    size_t k = 0;
    if (s[i].cpu) {
      ChakraProtoMsg__AttributeProto x = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT;
      x.name = "is_cpu_op";
      x.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL;
      x.bool_val = 1;
      a[k++] = x;
    }
    k = add_int(a, k, "comm_type", s[i].comm_type);
    k = add_int(a, k, "comm_size", s[i].comm_size);
    k = add_int(a, k, "comm_src", s[i].comm_src);
    k = add_int(a, k, "comm_dst", s[i].comm_dst);
    k = add_int(a, k, "comm_tag", s[i].comm_tag);
    k = add_int(a, k, "tensor_size", s[i].tensor_size);
    k = add_int(a, k, "num_ops", s[i].num_ops);
    if (s[i].pg) {
      ChakraProtoMsg__AttributeProto x = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT;
      x.name = "pg_name";
      x.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL;
      x.string_val = (char *)s[i].pg;
      a[k++] = x;
    }
    for (size_t j = 0; j < k; j++) ap[j] = &a[j];
    nd.n_attr = k;
    nd.attr = ap;
    tu_put_msg(&b, &nd.base);
  }
  tu_write_bytes(path, b.p, b.n);
  tu_buf_free(&b);
}

/* Rank 0 (file order; 8 before 6 makes one forward dep):
 *   1 COMP gpu 10us, num_ops 1000, tensor_size 64
 *   2 COMP cpu 3us, data 1
 *   3 ALL_REDUCE 1024 B, 5us, data 1
 *   4 ALL_GATHER 256 B in "tp", 2us, data 3, ctrl 2
 *   5 SEND to 1, 100 B, tag 7, data 2
 *   8 ALL_REDUCE 2048 B, data 6
 *   6 COMP gpu 20us, data 4 5, ctrl 99 (absent: ignored)
 *   7 MEM_LOAD tensor_size 32, data 6
 * Critical path 1-3-4-6 = 10+5+2+20 = 37, ending at 6 (7 and 8 tie later). */
static const spec rank0[] = {
    NODE(.id = 1, .type = COMP, .dur = 10, .num_ops = I(1000), .tensor_size = I(64)),
    NODE(.id = 2, .type = COMP, .dur = 3, .cpu = 1, .data = {1}),
    NODE(.id = 3, .type = COLL, .dur = 5, .data = {1}, .comm_type = I(0), .comm_size = I(1024)),
    NODE(.id = 4, .type = COLL, .dur = 2, .data = {3}, .ctrl = {2}, .comm_type = I(2), .comm_size = I(256), .pg = "tp"),
    NODE(.id = 5, .type = SEND, .data = {2}, .comm_dst = I(1), .comm_size = I(100), .comm_tag = I(7)),
    NODE(.id = 8, .type = COLL, .data = {6}, .comm_type = I(0), .comm_size = I(2048)),
    NODE(.id = 6, .type = COMP, .dur = 20, .data = {4, 5}, .ctrl = {99}),
    NODE(.id = 7, .type = LOAD, .data = {6}, .tensor_size = I(32)),
};
/* Rank 1:
 *   1 RECV from 0, 100 B, tag 7
 *   2 ALL_REDUCE 1024 B, 4us, data 1
 *   3 ALL_GATHER 256 B in "tp", data 2
 *   4 COMP gpu 50us, data 3 3 (duplicate), ctrl 4 (itself: ignored)
 *   5 ALL_REDUCE 2048 B, data 4
 *   6 MEM_STORE tensor_size 8
 * Critical path 1-2-3-4 = 54, ending at 4. */
static const spec rank1[] = {
    NODE(.id = 1, .type = RECV, .comm_src = I(0), .comm_size = I(100), .comm_tag = I(7)),
    NODE(.id = 2, .type = COLL, .dur = 4, .data = {1}, .comm_type = I(0), .comm_size = I(1024)),
    NODE(.id = 3, .type = COLL, .data = {2}, .comm_type = I(2), .comm_size = I(256), .pg = "tp"),
    NODE(.id = 4, .type = COMP, .dur = 50, .data = {3, 3}, .ctrl = {4}),
    NODE(.id = 5, .type = COLL, .data = {4}, .comm_type = I(0), .comm_size = I(2048)),
    NODE(.id = 6, .type = STORE, .tensor_size = I(8)),
};

static const chakra_group_stats *group(const chakra_rank_stats *s, const char *name) {
  for (uint64_t i = 0; i < s->n_groups; i++)
    if (strcmp(s->groups[i].name, name) == 0) return &s->groups[i];
  fail_msg("no group '%s'", name);
  return NULL;
}

static void stats_of(const char *name, const spec *s, size_t n, int ignore_ctrl, chakra_rank_stats *out) {
  char *p = tu_join(tu_dir, name);
  write_specs(p, s, n);
  chakra_error err = {0};
  if (chakra_stats_file(p, ignore_ctrl, out, &err)) fail_msg("stats: %s", err.msg);
  free(p);
}

static void test_stats_rank0_hand_counted(void **state) {
  (void)state;
  chakra_rank_stats s;
  stats_of("r0.et", rank0, N_OF(rank0), 0, &s);
  assert_int_equal(s.ranks, 1);
  assert_string_equal(s.version, "1.0.0");
  assert_string_equal(s.schema, "");
  assert_int_equal(s.nodes, 8);
  assert_int_equal(s.by_type[COMP], 3);
  assert_int_equal(s.by_type[COLL], 3);
  assert_int_equal(s.by_type[SEND], 1);
  assert_int_equal(s.by_type[LOAD], 1);
  assert_int_equal(s.by_type[RECV] + s.by_type[STORE] + s.by_type[0] + s.by_type[1] + s.by_type[8], 0);
  assert_int_equal(s.coll_ops[0], 2);
  assert_int_equal(s.coll_bytes[0], 3072);
  assert_int_equal(s.coll_ops[2], 1);
  assert_int_equal(s.coll_bytes[2], 256);
  assert_int_equal(s.send_ops, 1);
  assert_int_equal(s.send_bytes, 100);
  assert_int_equal(s.recv_ops, 0);
  assert_int_equal(s.mem_ops, 1);
  assert_int_equal(s.mem_bytes, 32);
  assert_int_equal(s.gpu_ops, 2);
  assert_int_equal(s.gpu_us, 30);
  assert_int_equal(s.cpu_ops, 1);
  assert_int_equal(s.cpu_us, 3);
  assert_int_equal(s.num_ops, 1000);
  assert_int_equal(s.tensor_bytes, 64);
  assert_int_equal(s.data_deps, 8);
  assert_int_equal(s.ctrl_deps, 2);
  assert_int_equal(s.edges, 9);
  assert_int_equal(s.forward_deps, 1);
  assert_int_equal(s.missing_ctrl_deps, 1);
  assert_int_equal(s.self_ctrl_deps, 0);
  assert_int_equal(s.duplicate_deps, 0);
  assert_int_equal(s.max_deps, 2);
  assert_int_equal(s.roots, 1);
  assert_int_equal(s.leaves, 2);
  assert_int_equal(s.unordered, 0);
  assert_int_equal(s.critical_path_us, 37);
  assert_int_equal(s.critical_end_id, 6);
  assert_int_equal(s.n_groups, 2);
  assert_int_equal(group(&s, "")->ops, 3); /* AR 1024 + send 100 + AR 2048 */
  assert_int_equal(group(&s, "")->bytes, 3172);
  assert_int_equal(group(&s, "tp")->ops, 1);
  assert_int_equal(group(&s, "tp")->bytes, 256);
  chakra_stats_free(&s);
  assert_null(s.groups); /* free leaves it zeroed */
}

static void test_stats_add_sums_counts_and_takes_the_longest_path(void **state) {
  (void)state;
  chakra_rank_stats r0, r1, t;
  memset(&t, 0, sizeof t);
  stats_of("w.0.et", rank0, N_OF(rank0), 0, &r0);
  stats_of("w.1.et", rank1, N_OF(rank1), 0, &r1);
  assert_int_equal(r1.recv_ops, 1);
  assert_int_equal(r1.recv_bytes, 100);
  assert_int_equal(r1.self_ctrl_deps, 1);
  assert_int_equal(r1.duplicate_deps, 1);
  assert_int_equal(r1.edges, 4);
  assert_int_equal(r1.roots, 2);
  assert_int_equal(r1.critical_path_us, 54);
  assert_int_equal(r1.critical_end_id, 4);
  assert_int_equal(group(&r1, "")->bytes, 3072); /* a receive is not group traffic */
  assert_int_equal(chakra_stats_add(&t, &r0), 0);
  assert_int_equal(chakra_stats_add(&t, &r1), 0);
  assert_int_equal(t.ranks, 2);
  assert_int_equal(t.nodes, 14);
  assert_int_equal(t.by_type[COMP], 4);
  assert_int_equal(t.by_type[COLL], 6);
  assert_int_equal(t.coll_ops[0], 4);
  assert_int_equal(t.coll_bytes[0], 6144);
  assert_int_equal(t.coll_bytes[2], 512);
  assert_int_equal(t.mem_bytes, 40);
  assert_int_equal(t.gpu_us, 80);
  assert_int_equal(t.data_deps, 13);
  assert_int_equal(t.ctrl_deps, 3);
  assert_int_equal(t.edges, 13);
  assert_int_equal(t.max_deps, 2);
  assert_int_equal(t.roots, 3);
  assert_int_equal(t.leaves, 4);
  assert_int_equal(t.critical_path_us, 54);
  assert_int_equal(t.n_groups, 2);
  assert_int_equal(group(&t, "")->ops, 5);
  assert_int_equal(group(&t, "")->bytes, 6244);
  assert_int_equal(group(&t, "tp")->bytes, 512);
  /* the sum of both at once is the same total, groups in the same order */
  chakra_rank_stats both[2] = {r0, r1}, u;
  assert_int_equal(chakra_stats_sum(&u, both, 2), 0);
  assert_int_equal(u.ranks, 2);
  assert_int_equal(u.nodes, t.nodes);
  assert_int_equal(u.critical_path_us, 54);
  assert_memory_equal(u.coll_bytes, t.coll_bytes, sizeof t.coll_bytes);
  assert_int_equal(u.n_groups, t.n_groups);
  for (uint64_t i = 0; i < t.n_groups; i++) {
    assert_string_equal(u.groups[i].name, t.groups[i].name);
    assert_int_equal(u.groups[i].ops, t.groups[i].ops);
    assert_int_equal(u.groups[i].bytes, t.groups[i].bytes);
  }
  chakra_stats_free(&u);
  chakra_stats_free(&r0);
  chakra_stats_free(&r1);
  chakra_stats_free(&t);
}

/* n ranks, rank k on groups "g<k/2>" and "w" (one op of k bytes each). */
static chakra_rank_stats *paired_ranks(size_t n) {
  chakra_rank_stats *v = calloc(n, sizeof *v);
  assert_non_null(v);
  for (size_t k = 0; k < n; k++) {
    v[k].ranks = 1;
    v[k].n_groups = 2;
    v[k].groups = calloc(2, sizeof *v[k].groups);
    assert_non_null(v[k].groups);
    char name[32];
    snprintf(name, sizeof name, "g%zu", k / 2);
    v[k].groups[0] = (chakra_group_stats){strdup(name), 1, k};
    v[k].groups[1] = (chakra_group_stats){strdup("w"), 1, k};
  }
  return v;
}

static void free_ranks(chakra_rank_stats *v, size_t n) {
  for (size_t k = 0; k < n; k++) chakra_stats_free(&v[k]);
  free(v);
}

static double cpu_seconds(void) { return (double)clock() / CLOCKS_PER_SEC; }

/* The total of 2^17 ranks on 2^16 groups costs time linear in them: once
 * against 2^13 ranks sixteen times (adding one by one, as the command did,
 * scanned the total's groups for each of a rank's). CPU time, so that load
 * does not matter. */
static void test_stats_sum_is_linear_in_groups(void **state) {
  (void)state;
  size_t small = 1u << 13, big = 1u << 17;
  chakra_rank_stats *a = paired_ranks(small), *b = paired_ranks(big), t;
  double t0 = cpu_seconds();
  for (int k = 0; k < 16; k++) {
    assert_int_equal(chakra_stats_sum(&t, a, small), 0);
    chakra_stats_free(&t);
  }
  double t1 = cpu_seconds();
  assert_int_equal(chakra_stats_sum(&t, b, big), 0);
  double t2 = cpu_seconds();
  assert_int_equal(t.ranks, (int)big);
  assert_int_equal(t.n_groups, big / 2 + 1);
  assert_string_equal(t.groups[0].name, "g0");
  assert_string_equal(t.groups[1].name, "w");
  assert_int_equal(t.groups[1].ops, big);
  assert_int_equal(t.groups[1].bytes, (uint64_t)big * (big - 1) / 2);
  assert_int_equal(t.groups[t.n_groups - 1].bytes, 2 * big - 3); /* g<big/2 - 1>: ranks big - 2 and big - 1 */
  chakra_stats_free(&t);
  if (t2 - t1 > 4 * (t1 - t0) + 0.05)
    fail_msg("2^17 ranks took %.3f s of CPU, 16 x 2^13 ranks %.3f s: not linear", t2 - t1, t1 - t0);
  free_ranks(a, small), free_ranks(b, big);
}

/* 1 and 2 depend on each other (2 on 1 by data, 1 on 2 by control). */
static const spec cyclic[] = {
    NODE(.id = 1, .type = COMP, .dur = 5, .ctrl = {2}),
    NODE(.id = 2, .type = COMP, .dur = 7, .data = {1}),
};

static void test_stats_cycle_leaves_critical_path_undefined_unless_ctrl_deps_ignored(void **state) {
  (void)state;
  chakra_rank_stats s;
  stats_of("c.et", cyclic, N_OF(cyclic), 0, &s);
  assert_int_equal(s.unordered, 2);
  assert_int_equal(s.critical_path_us, 0);
  chakra_stats_free(&s);
  stats_of("c.et", cyclic, N_OF(cyclic), 1, &s);
  assert_int_equal(s.unordered, 0);
  assert_int_equal(s.ctrl_deps, 1); /* as written */
  assert_int_equal(s.edges, 1);
  assert_int_equal(s.critical_path_us, 12);
  assert_int_equal(s.critical_end_id, 2);
  chakra_stats_free(&s);
}

static void test_stats_unreadable_file_is_an_error_naming_it(void **state) {
  (void)state;
  char *p = tu_join(tu_dir, "absent.et");
  chakra_rank_stats s;
  chakra_error err = {0};
  assert_int_not_equal(chakra_stats_file(p, 0, &s, &err), 0);
  assert_contains(err.msg, "absent.et");
  free(p);
}

static void count_problem(void *ctx, const chakra_problem *p) {
  (void)p;
  ++*(int *)ctx;
}

/* Rank 0's send to 1 (100 B, tag 7) matches rank 1's receive; the
 * collectives agree; warnings: rank 0 one absent ctrl dep, rank 1 one
 * self ctrl dep and one duplicate dep, and group "tp", which nothing
 * defines (members taken from use). Rank 1 alone has a receive from
 * rank 0 that only the cross-rank check could match; on its own it is
 * just a file.
 * The pair stalls under the simulator's one-communication-slot rule: rank
 * 0's all-reduce (node 3) has a lower id than its send (node 5) and its
 * only parent (1) is an ancestor of the send, so it takes the slot first
 * in every timing and waits for rank 1's all-reduce, which waits for the
 * send: one deadlock error per rank. */
static void test_validate_summary_counts_files_nodes_errors_and_warnings(void **state) {
  (void)state;
  char *p0 = tu_join(tu_dir, "v.0.et"), *p1 = tu_join(tu_dir, "v.1.et");
  write_specs(p0, rank0, N_OF(rank0));
  write_specs(p1, rank1, N_OF(rank1));
  char *paths[] = {p0, p1};
  chakra_validate_summary sum;
  chakra_error err = {0};
  int calls = 0;
  assert_int_equal(chakra_validate(paths, 2, count_problem, &calls, &sum, &err), 0);
  assert_int_equal(sum.files, 2);
  assert_int_equal(sum.unreadable, 0);
  assert_int_equal(sum.nodes, 14);
  assert_int_equal(sum.errors, 2);
  assert_int_equal(sum.warnings, 4);
  assert_int_equal(calls, 6);

  /* Rank 1 without its receive: rank 0's send is unmatched (1 error). */
  write_specs(p1, rank1 + 1, N_OF(rank1) - 1);
  calls = 0;
  assert_int_equal(chakra_validate(paths, 2, count_problem, &calls, &sum, &err), 0);
  assert_int_equal(sum.nodes, 13);
  assert_int_equal(sum.errors, 2); /* node 2's data dep 1 is now absent too */
  assert_int_equal(calls, 2 + 4);

  tu_write_text(p1, "\x05garbage");
  assert_int_equal(chakra_validate(paths, 2, count_problem, &calls, &sum, &err), 0);
  assert_int_equal(sum.unreadable, 1);
  assert_int_equal(sum.files, 2);
  free(p0);
  free(p1);
}

#define T(f) cmocka_unit_test_setup_teardown(f, tu_dir_setup, tu_dir_teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      T(test_stats_rank0_hand_counted),
      T(test_stats_add_sums_counts_and_takes_the_longest_path),
      T(test_stats_sum_is_linear_in_groups),
      T(test_stats_cycle_leaves_critical_path_undefined_unless_ctrl_deps_ignored),
      T(test_stats_unreadable_file_is_an_error_naming_it),
      T(test_validate_summary_counts_files_nodes_errors_and_warnings),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
