/* test_msccl.c - pins MSCCL-IR conversion in the library
 * (chakra_coll_from_msccl, docs/coll.md "coll from-msccl"): steps become
 * sends, receives and compute with their peers, sizes (the chunk times cnt)
 * and dependencies (the thread block's previous step through nops, and
 * depid across blocks); tags count the messages of each connection and
 * channel; copies and reductions cost by the bandwidth; the metadata names
 * the XML and its digest; --compat keeps the reference's conventions; a
 * bad program is one message naming gpu, tb and step, and nothing is
 * written; the thread count changes no byte. */
#include <stdio.h>
#include <stdlib.h>

#include "chakra/build.h"
#include "chakra/coll.h"
#include "chakra/graph.h"
#include "chakra/set.h"
#include "testutil.h"

#define STEP(s, type, cnt, dep) \
  "      <step s=\"" #s "\" type=\"" type "\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"" #cnt "\" " dep "/>\n"
#define NODEP "depid=\"-1\" deps=\"-1\" hasdep=\"0\" "

/* An all-gather on 2 GPUs. Each sends its input (cnt 2 of 2 input chunks)
 * on its thread block 0; block 1 receives the other's on the other channel,
 * passes a nop, receives a second message and copies, the copy also waiting
 * for block 0's send (depid 0). */
static const char two_gpus[] =
    "<algo name=\"t\" proto=\"Simple\" nchannels=\"2\" nchunksperloop=\"2\" ngpus=\"2\" coll=\"allgather\" "
    "inplace=\"0\">\n"
    "  <gpu id=\"0\" i_chunks=\"2\" o_chunks=\"4\" s_chunks=\"0\">\n"
    "    <tb id=\"0\" send=\"1\" recv=\"-1\" chan=\"0\">\n" STEP(0, "s", 2, NODEP) STEP(1, "s", 1, NODEP)
    "    </tb>\n"
    "    <tb id=\"1\" send=\"-1\" recv=\"1\" chan=\"1\">\n" STEP(0, "r", 2, NODEP) STEP(1, "nop", 0, NODEP)
        STEP(2, "r", 1, NODEP) STEP(3, "cpy", 2, "depid=\"0\" deps=\"0\" hasdep=\"0\" ")
    "    </tb>\n"
    "  </gpu>\n"
    "  <gpu id=\"1\" i_chunks=\"2\" o_chunks=\"4\" s_chunks=\"0\">\n"
    "    <tb id=\"0\" send=\"0\" recv=\"-1\" chan=\"1\">\n" STEP(0, "s", 2, NODEP) STEP(1, "s", 1, NODEP)
    "    </tb>\n"
    "    <tb id=\"1\" send=\"-1\" recv=\"0\" chan=\"0\">\n" STEP(0, "r", 2, NODEP) STEP(1, "nop", 0, NODEP)
        STEP(2, "r", 1, NODEP) STEP(3, "cpy", 2, "depid=\"0\" deps=\"0\" hasdep=\"0\" ")
    "    </tb>\n"
    "  </gpu>\n"
    "</algo>\n";

static char *xml_file(const char *name, const char *text) {
  char *p = tu_join(tu_dir, name);
  tu_write_text(p, text);
  return p;
}

static void convert(const char *xml, const char *prefix, chakra_coll_msccl_options o) {
  chakra_error err = {0};
  if (chakra_coll_from_msccl(xml, prefix, &o, &err)) fail_msg("%s", err.msg);
}

static const ChakraProtoMsg__AttributeProto *meta_attr(const chakra_graph *g, const char *name) {
  for (size_t i = 0; i < g->metadata->n_attr; i++)
    if (strcmp(g->metadata->attr[i]->name, name) == 0) return g->metadata->attr[i];
  fail_msg("no metadata attribute %s", name);
  return NULL;
}

/* The attribute of node i, read back in full, as an integer. */
static int64_t node_int(const chakra_graph *g, uint32_t i, const char *name) {
  chakra_node *n;
  chakra_error err = {0};
  if (chakra_graph_read_node(g, i, &n, &err)) fail_msg("%s", err.msg);
  const chakra_attr *a = chakra_attr_find(n, name);
  assert_non_null(a);
  int64_t v;
  int from_double;
  assert_int_equal(chakra_attr_as_int(a, &v, &from_double), 0);
  chakra_node_free(n);
  return v;
}

static void expect_deps(const chakra_graph *g, uint32_t i, const uint64_t *ids, uint32_t n) {
  assert_int_equal(g->dep_off[i + 1] - g->dep_off[i], n);
  for (uint32_t k = 0; k < n; k++) assert_int_equal(g->nodes[g->deps[g->dep_off[i] + k]].id, ids[k]);
}

static void steps_become_nodes(void **state) {
  (void)state;
  char *xml = xml_file("t.xml", two_gpus), *out = tu_join(tu_dir, "t");
  convert(xml, out, (chakra_coll_msccl_options){.size = 4096, .reduce_bw = 50});
  for (uint32_t r = 0; r < 2; r++) {
    chakra_graph *g = tu_rank_graph(out, r);
    int32_t peer = (int32_t)(1 - r);
    int32_t out_chan = r == 0 ? 0 : 1, in_chan = 1 - out_chan; /* each rank sends on its block 0's channel */
    /* ids in block order, a nop writes nothing: send, send, recv, recv, copy */
    assert_int_equal(g->n, 5);
    static const int types[] = {CHAKRA_COMM_SEND_NODE, CHAKRA_COMM_SEND_NODE, CHAKRA_COMM_RECV_NODE,
                                CHAKRA_COMM_RECV_NODE, CHAKRA_COMP_NODE};
    for (uint32_t i = 0; i < 5; i++) {
      const chakra_gnode *n = &g->nodes[i];
      assert_int_equal(n->id, i);
      assert_int_equal(n->type, types[i]);
      if (i < 4) {
        /* a chunk is 4096 / 2 input chunks; cnt 2 then 1 */
        assert_int_equal(n->size, i % 2 ? 2048 : 4096);
        assert_int_equal(i < 2 ? n->comm_dst : n->comm_src, peer);
        /* tag: channel x 65536 + the message's place on its connection */
        assert_int_equal(n->comm_tag, (i < 2 ? out_chan : in_chan) * 65536 + (int32_t)(i % 2));
      }
    }
    expect_deps(g, 0, NULL, 0);
    expect_deps(g, 1, (const uint64_t[]){0}, 1);
    expect_deps(g, 3, (const uint64_t[]){2}, 1); /* through the nop */
    expect_deps(g, 4, (const uint64_t[]){0, 3}, 2); /* depid 0: block 0's step 0, then its own block's */
    assert_int_equal(node_int(g, 4, "tensor_size"), 2 * 4096); /* a copy reads and writes */
    assert_string_equal(meta_attr(g, "input_file")->string_val, "t.xml");
    assert_string_equal(meta_attr(g, "collective")->string_val, "allgather");
    assert_int_equal(meta_attr(g, "size")->int64_val, 4096);
    assert_int_equal(meta_attr(g, "npus")->int64_val, 2);
    assert_int_equal(strlen(meta_attr(g, "input_sha256")->string_val), 64);
    chakra_graph_free(g);
  }
  /* the algorithm is sound: every message matched, it completes */
  chakra_set *s;
  chakra_error err = {0};
  uint64_t problems = 1;
  assert_int_equal(chakra_set_open(&s, out, NULL, &err), 0);
  assert_int_equal(chakra_coll_check_set(s, NULL, NULL, &problems, &err), 0);
  assert_int_equal(problems, 0);
  chakra_set_close(s);
  free(xml), free(out);
}

static void costs_and_digest_follow_their_inputs(void **state) {
  (void)state;
  char *xml = xml_file("t.xml", two_gpus), *a = tu_join(tu_dir, "a"), *b = tu_join(tu_dir, "b");
  convert(xml, a, (chakra_coll_msccl_options){.size = 4096, .reduce_bw = 50});
  convert(xml, b, (chakra_coll_msccl_options){.size = 4096, .reduce_bw = 25});
  chakra_graph *ga = tu_rank_graph(a, 0), *gb = tu_rank_graph(b, 0);
  int64_t fast = node_int(ga, 4, "duration_ns"), slow = node_int(gb, 4, "duration_ns");
  assert_true(fast > 0);
  assert_true(slow >= 2 * fast && slow <= 2 * fast + 2); /* half the bandwidth, twice the time */
  char sha[65];
  snprintf(sha, sizeof sha, "%s", meta_attr(ga, "input_sha256")->string_val);
  chakra_graph_free(ga), chakra_graph_free(gb);
  /* one byte more of XML (a trailing newline), another digest */
  char *longer = malloc(sizeof two_gpus + 1);
  snprintf(longer, sizeof two_gpus + 1, "%s\n", two_gpus);
  tu_write_text(xml, longer);
  convert(xml, a, (chakra_coll_msccl_options){.size = 4096, .reduce_bw = 50});
  ga = tu_rank_graph(a, 0);
  assert_string_not_equal(meta_attr(ga, "input_sha256")->string_val, sha);
  chakra_graph_free(ga);
  free(longer), free(xml), free(a), free(b);
}

/* --compat: the 2025-04 reference's conventions: tag = channel, comm_type
 * 5 on sends and 6 on receives, copies dropped, and a node id spent on
 * every nop and dropped copy. */
static void compat_keeps_the_reference_conventions(void **state) {
  (void)state;
  char *xml = xml_file("t.xml", two_gpus), *out = tu_join(tu_dir, "c");
  convert(xml, out, (chakra_coll_msccl_options){.size = 4096, .reduce_bw = 50, .compat = 1});
  chakra_graph *g = tu_rank_graph(out, 0);
  assert_int_equal(g->n, 4);
  static const uint64_t ids[] = {0, 1, 2, 4}; /* the nop was 3 */
  for (uint32_t i = 0; i < 4; i++) {
    assert_int_equal(g->nodes[i].id, ids[i]);
    assert_int_equal(g->nodes[i].comm_tag, i < 2 ? 0 : 1);
    assert_int_equal(node_int(g, i, "comm_type"), i < 2 ? 5 : 6);
  }
  chakra_graph_free(g);
  free(xml), free(out);
}

/* A broken program: one line naming the file and the gpu, tb and step (or
 * what is wrong with the whole), and no rank file written. */
static void errors_name_the_step_and_write_nothing(void **state) {
  (void)state;
  static const struct {
    const char *from, *to, *why;
    uint64_t size;
  } cases[] = {
      {"type=\"cpy\"", "type=\"xyz\"",
       "gpu 0 tb 1 step 3: unknown step type \"xyz\" (expected s, r, rcs, rrs, rrc, rrcs, cpy, re or nop)", 4096},
      {"depid=\"0\" deps=\"0\"", "depid=\"5\" deps=\"0\"", "gpu 0 tb 1 step 3: depends on tb 5 step 0, which does not exist",
       4096},
      {"type=\"s\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"1\"",
       "type=\"nop\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"1\"", "gpu 1 tb 1 step 2: receive #1 from gpu 0 on channel 0 has no matching send", 4096},
      {"", "", "size 4095 is not a multiple of the 2 input chunks per rank", 4095},
      {"</algo>", "</algx>", "XML error: mismatched tag", 4096},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char text[sizeof two_gpus + 16];
    snprintf(text, sizeof text, "%s", two_gpus);
    char *at = *cases[i].from ? strstr(text, cases[i].from) : NULL; /* the first occurrence: gpu 0's */
    if (at) {
      size_t n = strlen(cases[i].from);
      memmove(at + strlen(cases[i].to), at + n, strlen(at + n) + 1);
      memcpy(at, cases[i].to, strlen(cases[i].to));
    }
    char *xml = xml_file("bad.xml", text), *out = tu_join(tu_dir, "bad");
    chakra_coll_msccl_options o = {.size = cases[i].size, .reduce_bw = 50};
    chakra_error err = {0};
    assert_int_not_equal(chakra_coll_from_msccl(xml, out, &o, &err), 0);
    assert_contains(err.msg, xml);
    assert_contains(err.msg, cases[i].why);
    assert_int_equal(tu_dir_count(tu_dir, NULL), 1); /* the XML alone */
    free(xml), free(out);
  }
}

static void same_bytes_on_any_thread_count(void **state) {
  (void)state;
  char *xml = xml_file("t.xml", two_gpus), *a = tu_join(tu_dir, "a"), *b = tu_join(tu_dir, "b");
  convert(xml, a, (chakra_coll_msccl_options){.size = 1 << 20, .reduce_bw = 50, .threads = 1});
  convert(xml, b, (chakra_coll_msccl_options){.size = 1 << 20, .reduce_bw = 50, .threads = 4});
  tu_assert_same_ranks(a, b, 2);
  free(xml), free(a), free(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(steps_become_nodes, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(costs_and_digest_follow_their_inputs, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(compat_keeps_the_reference_conventions, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(errors_name_the_step_and_write_nothing, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(same_bytes_on_any_thread_count, tu_dir_setup, tu_dir_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
