/* test_node.c - pins the node vocabulary (chakra/node.h): each type's kind,
 * slot and category; each rule a node can break, with its words and its
 * severity; that rank checks need the rank count; how groups and peers
 * are read; and that a full node resolves to what the graph loader keeps. */
#include <stdio.h>
#include <stdlib.h>

#include "chakra/build.h"
#include "chakra/coll.h"
#include "chakra/node.h"
#include "nodekind.h"
#include "testutil.h"

#define T(x) CHAKRA_PROTO_MSG__NODE_TYPE__##x
enum { T_COMP = T(COMP_NODE), T_COLL = T(COMM_COLL_NODE), T_SEND = T(COMM_SEND_NODE), T_RECV = T(COMM_RECV_NODE) };
enum { AR = CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_REDUCE, BCAST = CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__BROADCAST };

static chakra_node_class classify(const chakra_gnode *n, uint32_t rank, uint32_t nranks) {
  chakra_node_class c;
  chakra_node_classify(n, rank, nranks, &c);
  return c;
}

static const char *text(const chakra_gnode *n, uint32_t rank, uint32_t nranks, uint32_t bit) {
  static char buf[300];
  return chakra_node_problem_text(n, rank, nranks, bit, buf, sizeof buf);
}

static chakra_gnode send_to(int32_t dst) {
  return (chakra_gnode){.id = 5, .type = T_SEND, .comm_dst = dst, .comm_tag = 3, .size = 64,
                        .present = CHAKRA_HAS_COMM_DST | CHAKRA_HAS_COMM_SIZE | CHAKRA_HAS_COMM_TAG};
}

static void kinds_slots_categories(void **state) {
  (void)state;
  struct {
    int32_t type;
    int cpu;
    int kind, slot, cat;
  } want[] = {
      {T_COMP, 0, CHAKRA_KIND_COMPUTE, CHAKRA_SLOT_GPU, CHAKRA_CAT_GPU},
      {T_COMP, 1, CHAKRA_KIND_CPU, CHAKRA_SLOT_CPU, CHAKRA_CAT_CPU},
      {T_COLL, 0, CHAKRA_KIND_COLL, CHAKRA_SLOT_COMM, CHAKRA_CAT_COMM},
      {T_SEND, 0, CHAKRA_KIND_SEND, CHAKRA_SLOT_COMM, CHAKRA_CAT_COMM},
      {T_RECV, 0, CHAKRA_KIND_RECV, CHAKRA_SLOT_NONE, CHAKRA_CAT_COMM},
      {T_RECV, 1, CHAKRA_KIND_RECV, CHAKRA_SLOT_NONE, CHAKRA_CAT_COMM}, /* receives never hold a slot */
      {T(MEM_LOAD_NODE), 0, CHAKRA_KIND_MEM_LOAD, CHAKRA_SLOT_COMM, CHAKRA_CAT_MEM},
      {T(MEM_STORE_NODE), 1, CHAKRA_KIND_MEM_STORE, CHAKRA_SLOT_CPU, CHAKRA_CAT_MEM},
      {T(METADATA_NODE), 0, CHAKRA_KIND_METADATA, CHAKRA_SLOT_COMM, CHAKRA_CAT_INVALID},
      {T(INVALID_NODE), 0, CHAKRA_KIND_NOOP, CHAKRA_SLOT_COMM, CHAKRA_CAT_INVALID},
      {42, 0, CHAKRA_KIND_BAD, CHAKRA_SLOT_COMM, CHAKRA_CAT_INVALID},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    chakra_gnode n = {.type = want[i].type, .flags = want[i].cpu ? CHAKRA_GNODE_CPU : 0};
    chakra_node_class c = classify(&n, 0, 0);
    if (c.kind != want[i].kind || c.slot != want[i].slot || c.category != want[i].cat)
      fail_msg("type %d cpu %d: kind %d slot %d category %d", want[i].type, want[i].cpu, c.kind, c.slot, c.category);
    assert_int_equal(chakra_node_kind_of(want[i].type, want[i].cpu), want[i].kind);
  }
}

static void collectives(void **state) {
  (void)state;
  chakra_gnode n = {.type = T_COLL, .comm_type = AR, .size = 8, .present = CHAKRA_HAS_COMM_TYPE | CHAKRA_HAS_COMM_SIZE};
  chakra_node_class c = classify(&n, 0, 4);
  assert_int_equal(c.problems, 0);
  assert_int_equal(c.comm_type, AR);
  assert_int_equal(c.coll, CHAKRA_COLL_ALLREDUCE);
  assert_int_equal(c.peer, -1);
  n.comm_type = BCAST; /* known to the schema, not run natively */
  c = classify(&n, 0, 4);
  assert_int_equal(c.problems, 0);
  assert_int_equal(c.coll, -1);
  assert_int_equal(c.comm_type, BCAST);

  chakra_gnode bare = {.id = 3, .type = T_COLL, .comm_type = -1};
  c = classify(&bare, 0, 4);
  assert_int_equal(c.problems, CHAKRA_NP_NO_COMM_TYPE | CHAKRA_NP_NO_COMM_SIZE);
  assert_string_equal(text(&bare, 0, 4, CHAKRA_NP_NO_COMM_TYPE), "COMM_COLL_NODE: required attribute 'comm_type' is missing");
  assert_string_equal(text(&bare, 0, 4, CHAKRA_NP_NO_COMM_SIZE), "COMM_COLL_NODE: required attribute 'comm_size' is missing");
  bare.present = CHAKRA_HAS_COMM_TYPE | CHAKRA_HAS_COMM_SIZE; /* a value outside the enum resolves to -1 */
  c = classify(&bare, 0, 4);
  assert_int_equal(c.problems, CHAKRA_NP_BAD_COMM_TYPE);
  assert_string_equal(text(&bare, 0, 4, CHAKRA_NP_BAD_COMM_TYPE), "comm_type is not a CollectiveCommType value (0..9)");
  n.flags = CHAKRA_GNODE_CPU;
  c = classify(&n, 0, 4);
  assert_int_equal(c.problems, CHAKRA_NP_CPU_COMM);
  assert_int_equal(c.slot, CHAKRA_SLOT_CPU);
  assert_true(c.problems & CHAKRA_NP_ERRORS);
}

/* The simulator reports its native collectives under their record numbers
 * through nodekind_comm_type(): the inverse of nodekind_native_coll(). */
static void native_coll_numbering(void **state) {
  (void)state;
  for (int t = 0; t < CHAKRA_COLL_TYPES; t++) assert_int_equal(nodekind_native_coll(nodekind_comm_type(t)), t);
  int native = 0;
  for (int ct = 0; ct < 16; ct++) {
    int t = nodekind_native_coll(ct);
    if (t < 0) continue;
    native++;
    assert_int_equal(nodekind_comm_type(t), ct);
  }
  assert_int_equal(native, CHAKRA_COLL_TYPES);
  assert_int_equal(nodekind_comm_type(CHAKRA_COLL_TYPES), -1);
  assert_int_equal(nodekind_comm_type(CHAKRA_COLL_ALLREDUCE), AR);
}

static void sends_and_receives(void **state) {
  (void)state;
  chakra_gnode s = send_to(2);
  chakra_node_class c = classify(&s, 1, 4);
  assert_int_equal(c.problems, 0);
  assert_int_equal(c.peer, 2);
  /* the peer outside the set, the sender named as another rank */
  s = send_to(4);
  s.comm_src = 0;
  s.present |= CHAKRA_HAS_COMM_SRC;
  c = classify(&s, 1, 4);
  assert_int_equal(c.problems, CHAKRA_NP_PEER_RANGE | CHAKRA_NP_NOT_OWN);
  assert_string_equal(text(&s, 1, 4, CHAKRA_NP_PEER_RANGE), "comm_dst 4 is not a rank of this workload (0..3)");
  assert_string_equal(text(&s, 1, 4, CHAKRA_NP_NOT_OWN), "comm_src is 0 but this file is rank 1");
  /* a file on its own: rank checks are not made */
  c = classify(&s, 1, 0);
  assert_int_equal(c.problems, 0);
  /* a receive reads its peer from comm_src; missing attributes */
  chakra_gnode r = {.id = 6, .type = T_RECV, .comm_dst = 1, .present = CHAKRA_HAS_COMM_DST};
  c = classify(&r, 1, 4);
  assert_int_equal(c.problems, CHAKRA_NP_NO_COMM_SIZE | CHAKRA_NP_NO_PEER | CHAKRA_NP_NO_COMM_TAG);
  assert_int_equal(c.peer, -1);
  assert_string_equal(text(&r, 1, 4, CHAKRA_NP_NO_PEER), "COMM_RECV_NODE: required attribute 'comm_src' is missing");
  assert_false(CHAKRA_NP_NO_COMM_TAG & CHAKRA_NP_ERRORS); /* a warning: the tag is taken as 0 */
  r.comm_src = 3;
  r.present |= CHAKRA_HAS_COMM_SRC | CHAKRA_HAS_COMM_SIZE | CHAKRA_HAS_COMM_TAG;
  c = classify(&r, 1, 4);
  assert_int_equal(c.problems, 0);
  assert_int_equal(c.peer, 3);
  /* reported in the order checkers print them */
  assert_int_equal(chakra_node_first_problem(CHAKRA_NP_NO_PEER | CHAKRA_NP_NO_COMM_SIZE), CHAKRA_NP_NO_COMM_SIZE);
  assert_int_equal(chakra_node_first_problem(0), 0);
}

static void other_rules(void **state) {
  (void)state;
  chakra_gnode m = {.id = 7, .type = T(MEM_STORE_NODE)};
  assert_int_equal(classify(&m, 0, 0).problems, CHAKRA_NP_NO_TENSOR_SIZE);
  assert_string_equal(text(&m, 0, 0, CHAKRA_NP_NO_TENSOR_SIZE), "MEM_STORE_NODE: required attribute 'tensor_size' is missing");
  chakra_gnode comp = {.type = T_COMP, .present = CHAKRA_HAS_NUM_OPS};
  chakra_node_class c = classify(&comp, 0, 0);
  assert_int_equal(c.problems, CHAKRA_NP_NUM_OPS_ONLY);
  assert_false(c.roofline);
  comp.present |= CHAKRA_HAS_TENSOR_SIZE;
  c = classify(&comp, 0, 0);
  assert_int_equal(c.problems, 0);
  assert_true(c.roofline);
  chakra_gnode inv = {.type = T(INVALID_NODE)}, bad = {.type = 9};
  assert_int_equal(classify(&inv, 0, 0).problems, CHAKRA_NP_INVALID_NODE);
  assert_false(CHAKRA_NP_INVALID_NODE & CHAKRA_NP_ERRORS);
  assert_int_equal(classify(&bad, 0, 0).problems, CHAKRA_NP_BAD_TYPE);
  assert_true(CHAKRA_NP_BAD_TYPE & CHAKRA_NP_ERRORS);
  assert_string_equal(text(&bad, 0, 0, CHAKRA_NP_BAD_TYPE), "node type 9 is not in the schema");
}

static void groups_and_world(void **state) {
  (void)state;
  assert_true(chakra_pg_is_world(NULL));
  assert_true(chakra_pg_is_world(""));
  assert_true(chakra_pg_is_world("0"));
  assert_false(chakra_pg_is_world("00"));
  assert_false(chakra_pg_is_world("1"));
  char *path = tu_join(tu_dir, "g.et");
  chakra_builder *b;
  assert_int_equal(chakra_builder_new(&b), 0);
  chakra_writer *w;
  chakra_error err = {0};
  assert_int_equal(chakra_writer_open(&w, path, 0, &err), 0);
  chakra_builder_metadata(b, "0.0.4");
  assert_int_equal(chakra_writer_put(w, chakra_builder_message(b), &err), 0);
  chakra_builder_clear(b);
  chakra_builder_node(b, 1, "ar", T_COLL);
  chakra_builder_int64(b, "comm_type", AR);
  chakra_builder_uint64(b, "comm_size", 8);
  chakra_builder_string(b, "pg_name", "tp0");
  assert_int_equal(chakra_writer_put(w, chakra_builder_message(b), &err), 0);
  chakra_builder_clear(b);
  chakra_builder_node(b, 2, "meta", T(METADATA_NODE));
  chakra_builder_io(b, 0, "['[{\"pg_name\": \"tp0\", \"ranks\": [0, 1]}]']", NULL, NULL);
  assert_int_equal(chakra_writer_put(w, chakra_builder_message(b), &err), 0);
  chakra_builder_clear(b);
  chakra_builder_node(b, 3, "c", T_COMP);
  assert_int_equal(chakra_writer_put(w, chakra_builder_message(b), &err), 0);
  assert_int_equal(chakra_writer_close(w, &err), 0);
  chakra_builder_free(b);

  chakra_graph *g;
  assert_int_equal(chakra_graph_load(&g, path, NULL, &err), 0);
  assert_string_equal(chakra_node_pg(g, &g->nodes[0]), "tp0");
  assert_string_equal(chakra_node_pg(g, &g->nodes[2]), "");
  /* a full node resolves to what the graph keeps (but its group index) */
  chakra_reader *r;
  assert_int_equal(chakra_reader_open(&r, path, NULL, &err), 0);
  chakra_node *nd;
  for (uint32_t i = 0; i < 3; i++) {
    assert_int_equal(chakra_reader_next(r, &nd, &err), 1);
    chakra_gnode x;
    chakra_std_attrs a;
    assert_int_equal(chakra_node_resolve(nd, &x, &a, NULL, NULL), 0);
    chakra_gnode want = g->nodes[i];
    want.pg = 0;
    want.offset = 0;
    assert_memory_equal(&x, &want, sizeof x);
    if (i == 0) assert_string_equal(a.pg_name, "tp0");
    if (i == 1) assert_non_null(strstr(chakra_node_process_groups(nd), "\"ranks\": [0, 1]"));
    else assert_null(chakra_node_process_groups(nd));
  }
  chakra_reader_close(r);
  chakra_graph_free(g);
  free(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(kinds_slots_categories),
      cmocka_unit_test(collectives),
      cmocka_unit_test(native_coll_numbering),
      cmocka_unit_test(sends_and_receives),
      cmocka_unit_test(other_rules),
      cmocka_unit_test_setup_teardown(groups_and_world, tu_dir_setup, tu_dir_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
