/* test_ingest_shared.c - conformance of the PyTorch ingestion against the
 * reference converter's output and the shared traces (spec
 * pytorch-ingest.md sections 4.2, 5 and 2):
 *   - --compat reproduces data/reference/convert/...reference.et byte for
 *     byte;
 *   - the default conversion differs from it exactly by the documented
 *     improvements (read back through the library reader, node by node);
 *   - the 1.0.1 host ET of the Kineto pair (refused by the reference) and
 *     the link of the pair give the facts the spec states.
 * Skips (exit 77) when ../shared is absent. */
#include <stdio.h>

#include "chakra/ingest.h"
#include "ingest_testutil.h"

static char *g_dir;

#define HOST "traces/pytorch-host/host_et.1.0.2-chakra.0.0.4.json"
#define REF "reference/convert/host_et.1.0.2-chakra.0.0.4.reference.et"
#define PAIR_HOST "traces/kineto-pair/simple_add.host_et.json.gz"
#define PAIR_KINETO "traces/kineto-pair/simple_add.kineto.json.gz"

static void convert(const char *in, const char *out, int compat, chakra_convert_report *rep) {
  chakra_convert_options o = {.compat = compat};
  chakra_error err = {0};
  if (chakra_convert_pytorch(in, NULL, out, &o, rep, &err)) fail_msg("%s", err.msg);
}

static void test_compat_output_is_byte_identical_to_reference(void **state) {
  (void)state;
  char *in = tu_shared_path(HOST), *ref = tu_shared_path(REF), *out = tu_join(g_dir, "compat.et");
  chakra_convert_report rep;
  convert(in, out, 1, &rep);
  size_t na, nb;
  uint8_t *a = tu_read_file(out, &na), *b = tu_read_file(ref, &nb);
  assert_int_equal(na, 115541);
  assert_int_equal(na, nb);
  assert_memory_equal(a, b, na);
  assert_int_equal(rep.nodes_in, 263);
  assert_int_equal(rep.nodes_out, 262);
  assert_int_equal(rep.ctrl_deps, 91);
  free(a), free(b), free(in), free(ref), free(out);
}

static int attr_equal(const chakra_attr *x, const chakra_attr *y) {
  size_t lx = protobuf_c_message_get_packed_size(&x->base), ly = protobuf_c_message_get_packed_size(&y->base);
  if (lx != ly) return 0;
  uint8_t *a = malloc(lx + 1), *b = malloc(ly + 1);
  protobuf_c_message_pack(&x->base, a);
  protobuf_c_message_pack(&y->base, b);
  int eq = memcmp(a, b, lx) == 0;
  free(a), free(b);
  return eq;
}

/* The documented differences (spec section 5), and nothing else: every
 * field of the GlobalMetadata and of each Node is compared. */
static void test_default_output_differs_from_reference_only_as_documented(void **state) {
  (void)state;
  char *in = tu_shared_path(HOST), *refp = tu_shared_path(REF), *out = tu_join(g_dir, "default.et");
  convert(in, out, 0, NULL);
  it_trace ours = it_load(out), ref = it_load(refp);
  /* GlobalMetadata: the reference's five attributes, plus version and producer */
  assert_string_equal(ref.meta->version, ""); /* unset */
  assert_string_equal(ours.meta->version, "1.0.0");
  assert_int_equal(ref.meta->n_attr, 5);
  assert_int_equal(ours.meta->n_attr, 6);
  for (size_t k = 0; k < 5; k++) assert_true(attr_equal(ours.meta->attr[k], ref.meta->attr[k]));
  assert_string_equal(ours.meta->attr[5]->name, "producer");
  /* same nodes in the same order, same types */
  assert_int_equal(ours.n, 262);
  assert_int_equal(ref.n, 262);
  uint64_t types[8] = {0}, ours_ctrl = 0, ref_ctrl = 0, data = 0;
  for (size_t i = 0; i < ref.n; i++) {
    const chakra_node *a = ours.v[i], *b = ref.v[i];
    assert_int_equal(a->id, b->id);
    assert_string_equal(a->name, b->name);
    assert_int_equal(a->type, b->type);
    types[b->type & 7]++;
    /* data deps unchanged here: a host-only trace has no device ops, no
     * inter-thread or sync deps, so the replay chain is the reference's */
    assert_int_equal(a->n_data_deps, b->n_data_deps);
    for (size_t k = 0; k < a->n_data_deps; k++) assert_int_equal(a->data_deps[k], b->data_deps[k]);
    data += a->n_data_deps;
    /* no Kineto ts in a host-only trace: start times unset in both */
    assert_int_equal(b->start_time_micros, 0);
    assert_int_equal(a->start_time_micros, 0);
    assert_int_equal(a->duration_micros, b->duration_micros);
    assert_string_equal(a->inputs->values, b->inputs->values);
    assert_string_equal(a->inputs->shapes, b->inputs->shapes);
    assert_string_equal(a->inputs->types, b->inputs->types);
    assert_string_equal(a->outputs->values, b->outputs->values);
    assert_string_equal(a->outputs->shapes, b->outputs->shapes);
    assert_string_equal(a->outputs->types, b->outputs->types);
    /* ctrl deps: the reference keeps the parent only when it came earlier in
     * the file; chakra-c always (the reference's are a subset) */
    for (size_t k = 0; k < b->n_ctrl_deps; k++) {
      int found = 0;
      for (size_t j = 0; j < a->n_ctrl_deps; j++) found |= a->ctrl_deps[j] == b->ctrl_deps[k];
      assert_true(found);
    }
    ours_ctrl += a->n_ctrl_deps;
    ref_ctrl += b->n_ctrl_deps;
    /* attributes: the reference's minus 'stream' (written on device ops
     * only, and there are none), values identical */
    assert_int_equal(a->n_attr + 1, b->n_attr);
    size_t j = 0;
    for (size_t k = 0; k < b->n_attr; k++) {
      if (strcmp(b->attr[k]->name, "stream") == 0) {
        assert_int_equal(b->attr[k]->int64_val, 0);
        continue;
      }
      assert_true(attr_equal(a->attr[j], b->attr[k]));
      j++;
    }
  }
  assert_int_equal(types[CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE], 261);
  assert_int_equal(types[CHAKRA_PROTO_MSG__NODE_TYPE__METADATA_NODE], 1);
  assert_int_equal(data, 261);
  assert_int_equal(ref_ctrl, 91);
  /* every node but the thread root, whose parent (the process root) is dropped */
  assert_int_equal(ours_ctrl, 261);
  it_free(&ours), it_free(&ref);
  free(in), free(refp), free(out);
}

static void test_schema_1_0_1_converts(void **state) {
  (void)state;
  char *in = tu_shared_path(PAIR_HOST), *out = tu_join(g_dir, "pair.et");
  chakra_convert_report rep;
  convert(in, out, 0, &rep);
  it_trace t = it_load(out);
  /* 38 nodes, the process root dropped */
  assert_int_equal(rep.nodes_in, 38);
  assert_int_equal(t.n, 37);
  const chakra_attr *schema = t.meta->attr[0];
  assert_string_equal(schema->string_val, "1.0.1");
  /* one chain from the thread root in id order */
  assert_int_equal(t.v[0]->id, 2);
  for (size_t i = 1; i < t.n; i++) {
    assert_int_equal(t.v[i]->n_data_deps, 1);
    assert_int_equal(t.v[i]->data_deps[0], t.v[i - 1]->id);
  }
  it_free(&t);
  /* the reference refuses 1.0.1, so --compat does too */
  chakra_convert_options o = {.compat = 1};
  chakra_error err = {0};
  assert_int_not_equal(chakra_convert_pytorch(in, NULL, out, &o, NULL, &err), 0);
  assert_contains(err.msg, "'1.0.1' is not read by the reference converter");
  free(in), free(out);
}

static void test_link_of_the_kineto_pair(void **state) {
  (void)state;
  char *host = tu_shared_path(PAIR_HOST), *kin = tu_shared_path(PAIR_KINETO), *out = tu_join(g_dir, "linked.json");
  chakra_link_report rep;
  chakra_error err = {0};
  chakra_link_options o = {.rank = 0};
  if (chakra_link(host, kin, out, &o, &rep, &err)) fail_msg("%s", err.msg);
  /* spec section 2: no Record function id; the 36 host ops match the 28
   * cpu_op + 8 user_annotation events by name */
  assert_false(rep.by_record_function_id);
  assert_int_equal(rep.host_ops, 36);
  assert_int_equal(rep.matched, 36);
  assert_int_equal(rep.unmatched_kineto, 0);
  assert_int_equal(rep.kineto_gpu_ops, 4);
  assert_int_equal(rep.gpu_linked, 4);
  assert_int_equal(rep.rank, 0);
  /* two of the five cudaDeviceSynchronize calls wait for a kernel not yet
   * waited for and have a host op after them */
  assert_int_equal(rep.sync_deps, 2);
  /* the wrong rank is refused */
  o.rank = 3;
  char *out2 = tu_join(g_dir, "linked3.json");
  assert_int_not_equal(chakra_link(host, kin, out2, &o, &rep, &err), 0);
  assert_contains(err.msg, "rank 0, not of rank 3");
  assert_false(tu_exists(out2));
  free(host), free(kin), free(out), free(out2);
}

int main(void) {
  if (!tu_shared_dir()) {
    printf("skipped: the shared folder is absent (set CHAKRA_SHARED or put it at ../shared)\n");
    return TU_SKIP;
  }
  g_dir = tu_mkdtemp();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_compat_output_is_byte_identical_to_reference),
      cmocka_unit_test(test_default_output_differs_from_reference_only_as_documented),
      cmocka_unit_test(test_schema_1_0_1_converts),
      cmocka_unit_test(test_link_of_the_kineto_pair),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  tu_rmtree(g_dir);
  free(g_dir);
  return rc;
}
