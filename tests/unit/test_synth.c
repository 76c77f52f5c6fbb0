/* test_synth.c - pins the private pieces of chakra synth (lib/synth): the
 * size expressions (exact rationals, STAGE's spelling), STAGE's rank and
 * communicator-group numbering (spec 4.1-4.2, with ep for MoE) and the
 * collective matcher's table (spec 5, with MoE's all-to-alls). */
#include <stdlib.h>
#include <string.h>

#include "ranks.h"
#include "sexpr.h"
#include "shard.h"
#include "testutil.h"

static sx_rat vals[SX_NSYM];

static void setup_vals(void) {
  uint64_t v[SX_NSYM] = {8, 4, 512, 1024, 4096, 16, 4, 32000, 8, 2, 2, 4, 1, 1, 1};
  for (int i = 0; i < SX_NSYM; i++) vals[i].num = (int64_t)v[i], vals[i].den = 1;
}

static uint64_t eval(const char *text) {
  sx_expr e;
  chakra_error err = {0};
  assert_int_equal(sx_compile(&e, text, &err), 0);
  uint64_t out = 0;
  assert_int_equal(sx_eval_int(&e, vals, &out, &err), 0);
  return out;
}

static void test_sexpr_evaluates_stage_spellings_exactly(void **state) {
  (void)state;
  setup_vals();
  assert_int_equal(eval("MicroBatch/dp"), 2);
  assert_int_equal(eval("2*Dff*Dmodel/tp + 4*Dmodel**2/tp"), 3145728);
  assert_int_equal(eval("(Seq/cp)/tp"), 128);
  assert_int_equal(eval("Dmodel/Head*Head/tp"), 256);     /* left to right */
  assert_int_equal(eval("Dmodel**2*(Head + 2*KVHead)/(Head*tp)"), 393216);
  assert_int_equal(eval("3*Head/tp - 1"), 11);
  assert_int_equal(eval(NULL), 1);
  /* intermediate fractions are exact: (Head/tp)/... with Head/32 = 1/2 */
  assert_int_equal(eval("Head/32*4"), 2);
}

static void test_sexpr_records_symbols_and_rejects_bad_text(void **state) {
  (void)state;
  setup_vals();
  sx_expr e;
  chakra_error err = {0};
  assert_int_equal(sx_compile(&e, "MicroBatch/dp*Seq/cp", &err), 0);
  assert_true(e.syms & (1u << SX_DP));
  assert_true(e.syms & (1u << SX_CP));
  assert_false(e.syms & (1u << SX_TP));
  assert_int_not_equal(sx_compile(&e, "Dmodel/", &err), 0);
  assert_int_not_equal(sx_compile(&e, "Dmodl", &err), 0);
  assert_int_not_equal(sx_compile(&e, "(Seq", &err), 0);
  uint64_t out;
  assert_int_equal(sx_compile(&e, "Dmodel/3", &err), 0);
  assert_int_not_equal(sx_eval_int(&e, vals, &out, &err), 0); /* not whole */
  assert_int_equal(sx_compile(&e, "Dmodel/(tp-4)", &err), 0);
  assert_int_not_equal(sx_eval_int(&e, vals, &out, &err), 0); /* division by zero */
}

static void expect_group(const synth_layout *l, int dim, uint32_t gid, const uint32_t *ranks, int n) {
  int seen = 0;
  for (uint32_t r = 0; r < l->ranks; r++)
    if (layout_group(l, r, dim) == gid) {
      assert_true(seen < n);
      assert_int_equal(r, ranks[seen++]);
    }
  assert_int_equal(seen, n);
}

static void test_ranks_number_groups_as_stage(void **state) {
  (void)state;
  synth_layout l;
  layout_init(&l, 2, 4, 1, 1, 1, 0); /* the shared case */
  expect_group(&l, RK_DP, 1, (const uint32_t[]){0, 1}, 2);
  expect_group(&l, RK_DP, 4, (const uint32_t[]){6, 7}, 2);
  expect_group(&l, RK_TP, 5, (const uint32_t[]){0, 2, 4, 6}, 4);
  expect_group(&l, RK_TP, 6, (const uint32_t[]){1, 3, 5, 7}, 4);
  expect_group(&l, RK_CP, 7, (const uint32_t[]){0}, 1);
  expect_group(&l, RK_CP, 8, (const uint32_t[]){2}, 1);
  expect_group(&l, RK_CP, 11, (const uint32_t[]){1}, 1);
  layout_init(&l, 2, 2, 1, 1, 2, 0); /* dp 2, tp 2, pp 2 */
  expect_group(&l, RK_TP, 7, (const uint32_t[]){4, 6}, 2);
  expect_group(&l, RK_CP, 9, (const uint32_t[]){0}, 1);
  uint32_t c[RK_NDIM], stage;
  layout_coords(&l, 5, c, &stage);
  assert_int_equal(stage, 1);
  assert_int_equal(c[RK_DP], 1);
  assert_int_equal(c[RK_TP], 0);
  assert_int_equal(layout_rank(&l, c, 0), 1); /* the peer on stage 0 */
}

static void test_ranks_number_moe_groups_with_ep_last(void **state) {
  (void)state;
  synth_layout l;
  layout_init(&l, 2, 2, 1, 2, 1, 1); /* the spec's MoE row: dp 2, tp 2, ep 2 */
  assert_int_equal(l.ranks, 8);
  /* dp groups iterate (tp, cp, ep) with ep fastest; ep sits above cp in the rank */
  expect_group(&l, RK_DP, 1, (const uint32_t[]){0, 1}, 2);
  expect_group(&l, RK_DP, 2, (const uint32_t[]){4, 5}, 2);
  expect_group(&l, RK_TP, 5, (const uint32_t[]){0, 2}, 2);
  expect_group(&l, RK_TP, 6, (const uint32_t[]){4, 6}, 2);
  expect_group(&l, RK_CP, 10, (const uint32_t[]){4}, 1);
  expect_group(&l, RK_EP, 17, (const uint32_t[]){0, 4}, 2);
  expect_group(&l, RK_EP, 18, (const uint32_t[]){2, 6}, 2);
  expect_group(&l, RK_EP, 20, (const uint32_t[]){3, 7}, 2);
  uint32_t c[RK_NDIM], stage;
  layout_coords(&l, 6, c, &stage);
  assert_int_equal(c[RK_EP], 1);
  assert_int_equal(c[RK_TP], 1);
  assert_int_equal(c[RK_DP], 0);
  layout_init(&l, 2, 2, 1, 2, 1, 0); /* dense: ep is not a dimension */
  assert_int_equal(l.ranks, 4);
  assert_int_equal(l.ndims, 3);
}

static void compile_layout(sg_rowinfo *ri, const char *shape, const char *hidden, int decl) {
  chakra_error err = {0};
  char buf[128];
  strcpy(buf, shape);
  int n = 0;
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ","))
    assert_int_equal(sx_compile(decl ? &ri->ddims[0][n++] : &ri->dims[n++], tok, &err), 0);
  if (decl) ri->nddims[0] = (uint8_t)n;
  else ri->ndims = (uint8_t)n;
  assert_int_equal(sx_compile(decl ? &ri->dhidden[0] : &ri->hidden, hidden, &err), 0);
}

static int match(const char *ps, const char *ph, const char *cs, const char *ch, shard_coll *out) {
  sg_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.deg[0] = 2, cfg.deg[1] = 4, cfg.deg[2] = 2, cfg.deg[3] = 2;
  sg_rowinfo p, c;
  memset(&p, 0, sizeof p), memset(&c, 0, sizeof c);
  compile_layout(&p, ps, ph, 0);
  compile_layout(&c, cs, ch, 1);
  int n = -1;
  chakra_error err = {0};
  if (shard_edge(&cfg, &p, &c, 0, "t", out, &n, &err)) return -1;
  return n;
}

static void test_shard_inserts_stages_collectives(void **state) {
  (void)state;
  shard_coll c[4];
  /* sequence-sharded over tp -> full: all-gather over tp */
  assert_int_equal(match("MicroBatch/dp,Seq/tp,Dmodel", "", "MicroBatch/dp,Seq,Dmodel", "", c), 1);
  assert_int_equal(c[0].comm_type, 2);
  assert_int_equal(c[0].dim, 1);
  /* partial sum over tp -> sequence-sharded: reduce-scatter */
  assert_int_equal(match("MicroBatch/dp,Seq,Dmodel", "tp", "MicroBatch/dp,Seq/tp,Dmodel", "", c), 1);
  assert_int_equal(c[0].comm_type, 7);
  /* weight gradient partial over dp and cp -> replicated: all-reduce dp then cp */
  assert_int_equal(match("Dmodel,Dff/tp", "dp*cp", "Dmodel,Dff/tp", "", c), 2);
  assert_int_equal(c[0].comm_type, 0);
  assert_int_equal(c[0].dim, 0);
  assert_int_equal(c[1].dim, 2);
  /* partitioned on another dimension: all-to-all; duplicated -> partitioned: nothing */
  assert_int_equal(match("MicroBatch/dp,Seq/tp,Dmodel", "", "MicroBatch/dp,Seq,Dmodel/tp", "", c), 1);
  assert_int_equal(c[0].comm_type, 6);
  assert_int_equal(match("MicroBatch/dp,Seq,Dmodel", "", "MicroBatch/dp,Seq/tp,Dmodel", "", c), 0);
  /* MoE dispatch: hidden split over ep -> tokens split over ep (tp stays on the
   * token dimension): one all-to-all over ep; the expert's slice of the routed
   * tokens -> its full (tp-gathered) sequence: all-gather over tp only */
  assert_int_equal(match("MicroBatch/dp,(Seq/cp)*KExperts/tp,Dmodel/ep", "",
                         "MicroBatch/dp,(Seq/cp)*KExperts/(tp*ep),Dmodel", "", c), 1);
  assert_int_equal(c[0].comm_type, 6);
  assert_int_equal(c[0].dim, 3);
  assert_int_equal(match("MicroBatch/dp,(Seq/cp)*KExperts/(Experts*tp*ep),Dmodel", "",
                         "MicroBatch/dp,Seq*KExperts/(Experts*ep)/cp,Dmodel", "", c), 1);
  assert_int_equal(c[0].comm_type, 2);
  assert_int_equal(c[0].dim, 1);
  /* the router weight, split over ep by hidden size, is gathered */
  assert_int_equal(match("Dmodel/ep,KExperts", "", "Dmodel,KExperts", "", c), 1);
  assert_int_equal(c[0].comm_type, 2);
  assert_int_equal(c[0].dim, 3);
  /* nothing can become a partial sum */
  assert_int_equal(match("MicroBatch/dp,Seq,Dmodel", "", "MicroBatch/dp,Seq,Dmodel", "tp", c), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sexpr_evaluates_stage_spellings_exactly),
      cmocka_unit_test(test_sexpr_records_symbols_and_rejects_bad_text),
      cmocka_unit_test(test_ranks_number_groups_as_stage),
      cmocka_unit_test(test_ranks_number_moe_groups_with_ep_last),
      cmocka_unit_test(test_shard_inserts_stages_collectives),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
