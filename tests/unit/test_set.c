/* test_set.c - pins the trace-set source (chakra/set.h) and the streams
 * under it (chakra/stream.h): per-rank files by prefix, with their gaps,
 * missing and extra ranks refused; file lists and command-line arguments;
 * groups given, found beside the traces (and other JSON there left alone),
 * or written for another rank count; a memory source with its groups and
 * rank classes; readers, graphs and writers over FILE*, buffers and
 * callbacks; and consumers (validate, the simulator) reading a set held in
 * memory exactly as they read its files. */
#include <stdio.h>
#include <stdlib.h>

#include <unistd.h>

#include "chakra/build.h"
#include "chakra/gen.h"
#include "chakra/json.h"
#include "chakra/set.h"
#include "chakra/sim.h"
#include "chakra/stats.h"
#include "chakra/synth.h"
#include "chakra/topo.h"
#include "chakra/validate.h"
#include "testutil.h"

#define NPUS 4

/* A 4-rank all-reduce microbenchmark at tu_dir/P. */
static char *workload(const char *name) { return tu_microbench(name, NPUS); }

static char *rank_file(const char *prefix, uint32_t r) {
  char *p = chakra_rank_path_dup(prefix, r);
  assert_non_null(p);
  return p;
}

static chakra_set *open_ok(const char *prefix, const chakra_set_options *opt) {
  chakra_set *s = NULL;
  chakra_error err = {0};
  if (chakra_set_open(&s, prefix, opt, &err)) fail_msg("%s", err.msg);
  return s;
}

static const char *open_fails(const char *prefix, const chakra_set_options *opt) {
  static chakra_error err;
  chakra_set *s = (chakra_set *)1;
  memset(&err, 0, sizeof err);
  assert_int_not_equal(chakra_set_open(&s, prefix, opt, &err), 0);
  assert_null(s);
  return err.msg;
}

/* ---- per-rank files ---- */

static void prefix_ranks_names_and_identity_classes(void **state) {
  (void)state;
  char *prefix = workload("ar");
  chakra_set *s = open_ok(prefix, NULL);
  assert_int_equal(chakra_set_ranks(s), NPUS);
  assert_string_equal(chakra_set_prefix(s), prefix);
  assert_int_equal(chakra_set_classes(s), NPUS);
  for (uint32_t r = 0; r < NPUS; r++) {
    char *p = rank_file(prefix, r);
    assert_string_equal(chakra_set_rank_name(s, r), p);
    assert_string_equal(chakra_set_rank_path(s, r), p);
    assert_int_equal(chakra_set_class_of(s, r), r);
    assert_int_equal(chakra_set_class_rep(s, r), r);
    assert_int_equal(chakra_set_bind_peer(s, r, 3), 3);
    assert_string_equal(chakra_set_bind_group(s, r, "tp"), "tp");
    free(p);
  }
  chakra_graph *g;
  chakra_error err = {0};
  assert_int_equal(chakra_set_load_rank(s, 2, NULL, &g, &err), 0);
  assert_int_equal(g->n, 1);
  chakra_graph_free(g);
  assert_int_equal(chakra_set_load_rank(s, NPUS, NULL, &g, &err), CHAKRA_EINVAL);
  assert_contains(err.msg, "rank 4 does not exist (4 ranks)");
  chakra_reader *rd;
  assert_int_equal(chakra_set_reader(s, 3, NULL, &rd, &err), 0);
  const uint8_t *data;
  size_t len;
  assert_int_equal(chakra_reader_next_raw(rd, &data, &len, &err), 1);
  chakra_reader_close(rd);
  assert_int_equal(chakra_set_groups_origin(s), CHAKRA_GROUPS_NONE);
  assert_int_equal(chakra_set_load_groups(s, &err), 0);
  assert_int_equal(chakra_set_group_count(s), 0);
  chakra_set_close(s);
  free(prefix);
}

static void missing_gap_and_extra_ranks(void **state) {
  (void)state;
  char *prefix = workload("ar");
  assert_contains(open_fails(prefix, &(chakra_set_options){.ranks = 8, .ranks_reason = "the network has 8 NPUs"}),
                  "ar.4.et does not exist (the network has 8 NPUs, so ranks 0..7 are needed)");
  const char *extra = open_fails(prefix, &(chakra_set_options){.ranks = 2});
  assert_contains(extra, "ar.2.et: the workload has more rank files than the 2 expected (the set has 2 ranks)");
  chakra_set *s = open_ok(prefix, &(chakra_set_options){.ranks = 2, .first_ranks = 1});
  assert_int_equal(chakra_set_ranks(s), 2);
  chakra_set_close(s);
  /* a gap: ranks 0, 1, 3 */
  char *r2 = rank_file(prefix, 2);
  assert_int_equal(unlink(r2), 0);
  const char *gap = open_fails(prefix, NULL);
  assert_contains(gap, "ranks 0..1 exist, then");
  assert_contains(gap, "ar.2.et is missing but 1 later rank file(s) exist (first:");
  free(r2);
  char *none = tu_join(tu_dir, "none");
  assert_contains(open_fails(none, NULL), "none: no such file, and no");
  free(none);
  free(prefix);
}

static void files_and_arguments(void **state) {
  (void)state;
  char *a = workload("a"), *b = workload("b");
  char *a1 = rank_file(a, 1);
  const char *args[] = {a1, b};
  chakra_set *s;
  chakra_error err = {0};
  assert_int_equal(chakra_set_open_args(&s, args, 2, NULL, &err), 0);
  assert_int_equal(chakra_set_ranks(s), 1 + NPUS);
  assert_string_equal(chakra_set_rank_name(s, 0), a1);
  assert_null(chakra_set_prefix(s)); /* a mix is no one prefix's */
  chakra_set_close(s);
  const char *one[] = {a1};
  assert_int_equal(chakra_set_open_files(&s, one, 1, NULL, &err), 0);
  assert_int_equal(chakra_set_ranks(s), 1);
  chakra_set_close(s);
  assert_int_equal(chakra_set_open_files(&s, one, 0, NULL, &err), CHAKRA_EINVAL);
  assert_contains(err.msg, "at least one rank");
  free(a1), free(a), free(b);
}

/* ---- groups ---- */

static void groups_given_beside_and_for_another_rank_count(void **state) {
  (void)state;
  char *prefix = workload("ar");
  char *beside = tu_join(tu_dir, "ar.json");
  tu_write_text(beside, "{\"1\": [0, 1], \"2\": [2, 3]}");
  chakra_set *s = open_ok(prefix, NULL);
  assert_int_equal(chakra_set_groups_origin(s), CHAKRA_GROUPS_BESIDE);
  assert_string_equal(chakra_set_groups_path(s), beside);
  chakra_error err = {0};
  assert_int_equal(chakra_set_load_groups(s, &err), 0);
  assert_int_equal(chakra_set_group_count(s), 2);
  uint32_t n;
  const uint32_t *m = chakra_set_group_members(s, (size_t)chakra_set_group_find(s, "2"), &n);
  assert_int_equal(n, 2);
  assert_int_equal(m[0], 2);
  assert_int_equal(chakra_set_group_find(s, "3"), -1);
  chakra_set_close(s);
  /* not looked for when asked not to; a given file wins */
  s = open_ok(prefix, &(chakra_set_options){.no_default_groups = 1});
  assert_int_equal(chakra_set_groups_origin(s), CHAKRA_GROUPS_NONE);
  chakra_set_close(s);
  char *given = tu_join(tu_dir, "g8.json");
  tu_write_text(given, "{\"1\": [0, 1],\n \"2\": [6, 7]}");
  s = open_ok(prefix, &(chakra_set_options){.comm_groups = given});
  assert_int_equal(chakra_set_groups_origin(s), CHAKRA_GROUPS_GIVEN);
  assert_int_equal(chakra_set_load_groups(s, &err), CHAKRA_EINVAL);
  assert_contains(err.msg, "g8.json: line 2: group \"2\" names rank 6, but the workload has 4 rank(s) (0..3): a groups "
                           "file for another rank count?");
  chakra_set_close(s);
  /* other JSON beside the traces (a report, a sweep table) is not taken */
  tu_write_text(beside, "{\"npus\": 4, \"ranks\": [{\"finish_ns\": 1}]}");
  s = open_ok(prefix, NULL);
  assert_int_equal(chakra_set_groups_origin(s), CHAKRA_GROUPS_NONE);
  chakra_set_close(s);
  tu_write_text(beside, "{\"vary\": [\"bandwidth\"]}");
  s = open_ok(prefix, NULL);
  assert_int_equal(chakra_set_groups_origin(s), CHAKRA_GROUPS_NONE);
  chakra_set_close(s);
  /* a malformed groups file is reported when the groups are read */
  tu_write_text(beside, "{\"1\": [0, \"x\"]}");
  s = open_ok(prefix, NULL);
  assert_int_equal(chakra_set_load_groups(s, &err), CHAKRA_EFORMAT);
  assert_contains(err.msg, "ar.json: line 1: group \"1\": entry 1 is a string");
  chakra_set_close(s);
  free(given), free(beside), free(prefix);
}

/* ---- a set in memory ---- */

typedef struct memset_ctx {
  uint8_t *bytes[NPUS];
  size_t len[NPUS];
  int with_groups, classes, closed;
} memset_ctx;

static int mem_input(void *ctx, uint32_t cls, chakra_input *out, chakra_error *err) {
  memset_ctx *m = ctx;
  if (cls >= NPUS) return chakra_error_set(err, CHAKRA_EINVAL, "no class %u", cls);
  out->data = m->bytes[cls];
  out->size = m->len[cls];
  return 0;
}

static int mem_groups(void *ctx, chakra_set *s, chakra_error *err) {
  memset_ctx *m = ctx;
  static const uint32_t lo[] = {0, 1}, hi[] = {2, 3}, bad[] = {4};
  int rc = chakra_set_add_group(s, "lo", lo, 2, err);
  if (!rc) rc = chakra_set_add_group(s, "hi", hi, 2, err);
  if (!rc && m->with_groups == 2) rc = chakra_set_add_group(s, "lo", hi, 2, err);
  if (!rc && m->with_groups == 3) rc = chakra_set_add_group(s, "out", bad, 1, err);
  return rc;
}

/* Two classes: even ranks share rank 0's template, odd ranks rank 1's;
 * a template's group "lo" is the rank's own half. */
static uint32_t mem_class_of(void *ctx, uint32_t rank) { return (void)ctx, rank % 2; }
static uint32_t mem_rep(void *ctx, uint32_t cls) { return (void)ctx, cls; }
static const char *mem_bind_group(void *ctx, uint32_t rank, const char *pg) {
  (void)ctx;
  return strcmp(pg, "lo") == 0 && rank >= 2 ? "hi" : pg;
}
static int32_t mem_bind_peer(void *ctx, uint32_t rank, int32_t peer) { return (void)ctx, (peer + (int32_t)rank) % NPUS; }
static void mem_close(void *ctx) { ((memset_ctx *)ctx)->closed++; }

static void mem_load(memset_ctx *m, const char *prefix) {
  for (uint32_t r = 0; r < NPUS; r++) {
    char *p = rank_file(prefix, r);
    m->bytes[r] = tu_read_file(p, &m->len[r]);
    free(p);
  }
}

static void mem_free(memset_ctx *m) {
  for (uint32_t r = 0; r < NPUS; r++) free(m->bytes[r]);
}

static chakra_set_source mem_source(const memset_ctx *m) {
  chakra_set_source src = {.ranks = NPUS, .input = mem_input, .close = mem_close};
  if (m->with_groups) src.groups = mem_groups;
  if (m->classes) {
    src.classes = 2;
    src.class_of = mem_class_of;
    src.class_rep = mem_rep;
    src.bind_group = mem_bind_group;
    src.bind_peer = mem_bind_peer;
  }
  return src;
}

static void memory_source(void **state) {
  (void)state;
  char *prefix = workload("ar");
  memset_ctx m = {.with_groups = 1};
  mem_load(&m, prefix);
  chakra_set_source src = mem_source(&m);
  chakra_set *s;
  chakra_error err = {0};
  assert_int_equal(chakra_set_from_source(&s, &src, &m, NULL, &err), 0);
  assert_int_equal(chakra_set_ranks(s), NPUS);
  assert_null(chakra_set_prefix(s));
  assert_null(chakra_set_rank_path(s, 0));
  assert_string_equal(chakra_set_rank_name(s, 2), "<rank 2>");
  chakra_graph *g;
  assert_int_equal(chakra_set_load_rank(s, 2, NULL, &g, &err), 0);
  assert_int_equal(g->n, 1);
  assert_string_equal(g->path, "<rank 2>");
  /* the graph re-reads the buffer for a node in full */
  chakra_node *full;
  assert_int_equal(chakra_graph_read_node(g, 0, &full, &err), 0);
  assert_int_equal(full->id, g->nodes[0].id);
  chakra_node_free(full);
  chakra_graph_free(g);
  assert_int_equal(chakra_set_groups_origin(s), CHAKRA_GROUPS_SOURCE);
  assert_int_equal(chakra_set_load_groups(s, &err), 0);
  assert_int_equal(chakra_set_group_count(s), 2);
  assert_string_equal(chakra_set_group_name(s, 1), "hi");
  /* validate reads the set as it reads the files */
  chakra_validate_summary sum;
  assert_int_equal(chakra_validate_set(s, NULL, NULL, NULL, &sum, &err), 0);
  assert_int_equal(sum.files, NPUS);
  assert_int_equal(sum.errors + sum.warnings, 0);
  chakra_set_close(s);
  assert_int_equal(m.closed, 1);
  /* a group named twice, or with a member outside the set */
  for (int bad = 2; bad <= 3; bad++) {
    m.with_groups = bad;
    src = mem_source(&m);
    assert_int_equal(chakra_set_from_source(&s, &src, &m, NULL, &err), 0);
    assert_int_equal(chakra_set_load_groups(s, &err), CHAKRA_EINVAL);
    assert_contains(err.msg, bad == 2 ? "group \"lo\" is defined twice" : "group \"out\" names rank 4, but the set has 4");
    chakra_set_close(s);
  }
  /* a source without input() is refused, and closed */
  chakra_set_source none = {.ranks = 2, .close = mem_close};
  m.closed = 0;
  assert_int_equal(chakra_set_from_source(&s, &none, &m, NULL, &err), CHAKRA_EINVAL);
  assert_int_equal(m.closed, 1);
  mem_free(&m);
  free(prefix);
}

static void classes_and_bindings(void **state) {
  (void)state;
  char *prefix = workload("ar");
  memset_ctx m = {.classes = 1};
  mem_load(&m, prefix);
  chakra_set_source src = mem_source(&m);
  chakra_set *s;
  chakra_error err = {0};
  assert_int_equal(chakra_set_from_source(&s, &src, &m, NULL, &err), 0);
  assert_int_equal(chakra_set_classes(s), 2);
  assert_int_equal(chakra_set_class_of(s, 3), 1);
  assert_int_equal(chakra_set_class_rep(s, 1), 1);
  assert_string_equal(chakra_set_rank_name(s, 3), "<class 1 (rank 3)>");
  assert_string_equal(chakra_set_bind_group(s, 3, "lo"), "hi");
  assert_string_equal(chakra_set_bind_group(s, 3, ""), ""); /* every rank stays every rank */
  assert_int_equal(chakra_set_bind_peer(s, 3, 2), 1);
  chakra_graph *g;
  assert_int_equal(chakra_set_load_class(s, 1, NULL, &g, &err), 0);
  chakra_graph_free(g);
  assert_int_equal(chakra_set_load_class(s, 2, NULL, &g, &err), CHAKRA_EINVAL);
  assert_contains(err.msg, "class 2 does not exist (2 classes)");
  chakra_set_close(s);
  /* classes need their count and representatives */
  src.class_rep = NULL;
  assert_int_equal(chakra_set_from_source(&s, &src, &m, NULL, &err), CHAKRA_EINVAL);
  mem_free(&m);
  free(prefix);
}

typedef struct sink_buf {
  uint8_t *p;
  size_t n;
  int fail;
} sink_buf;

static int collect(void *ctx, const void *data, size_t len) {
  sink_buf *b = ctx;
  if (b->fail) return -1;
  b->p = realloc(b->p, b->n + len);
  assert_non_null(b->p);
  memcpy(b->p + b->n, data, len);
  b->n += len;
  return 0;
}

/* The simulator runs a set held in memory to the same nanosecond as its
 * files. */
static void simulator_reads_memory_as_files(void **state) {
  (void)state;
  char *prefix = workload("ar");
  memset_ctx m = {0};
  mem_load(&m, prefix);
  chakra_set_source src = mem_source(&m);
  chakra_error err = {0};
  uint64_t finish[2][NPUS];
  for (int way = 0; way < 2; way++) {
    chakra_topo *topo;
    assert_int_equal(chakra_topo_parse(&topo, "ring:4", 50, 500, &err), 0);
    chakra_sim_config *c;
    assert_int_equal(chakra_sim_config_new(&c, topo, &err), 0);
    assert_int_equal(chakra_sim_config_set(c, "all-reduce-implementation", "[\"ring\"]", NULL, NULL, &err), 0);
    assert_int_equal(chakra_sim_config_set(c, "preferred-dataset-splits", "4", NULL, NULL, &err), 0);
    chakra_sim_workload *w;
    if (way == 0) {
      assert_int_equal(chakra_sim_workload_load(&w, prefix, NPUS, 1, NULL, NULL, &err), 0);
    } else {
      chakra_set *s;
      assert_int_equal(chakra_set_from_source(&s, &src, &m, NULL, &err), 0);
      assert_int_equal(chakra_sim_workload_load_set(&w, s, 2, NULL, NULL, &err), 0);
      chakra_set_close(s);
    }
    chakra_run_record res;
    if (chakra_sim_run(c, w, NULL, &res, &err)) fail_msg("%s", err.msg);
    for (uint32_t r = 0; r < NPUS; r++) finish[way][r] = res.ranks[r].finish_ns;
    if (way == 1) { /* the report to a callback holds the results too */
      sink_buf rep = {0};
      chakra_sink out = {.write = collect, .ctx = &rep};
      assert_int_equal(chakra_run_write_report_to(&res, &out, CHAKRA_RUN_JSON, &err), 0);
      rep.p = realloc(rep.p, rep.n + 1);
      rep.p[rep.n] = 0;
      assert_contains((char *)rep.p, tu_fmt("\"finish_ns\":%llu", (unsigned long long)finish[1][0]));
      free(rep.p);
    }
    chakra_run_record_free(&res);
    chakra_sim_workload_free(w);
    chakra_sim_config_free(c);
    chakra_topo_free(topo);
  }
  assert_true(finish[0][0] > 0);
  assert_memory_equal(finish[0], finish[1], sizeof finish[0]);
  mem_free(&m);
  free(prefix);
}

/* ---- the shared form ---- */

static void copy_file(const char *from, const char *to) {
  size_t n;
  uint8_t *b = tu_read_file(from, &n);
  tu_write_bytes(to, b, n);
  free(b);
}

/* chakra synth's layout of dp 2, tp 2, pp 2 (sp 1) as a grid, the pipeline
 * stage the class. */
static chakra_manifest *synth_grid(void) {
  chakra_manifest *m;
  chakra_error err = {0};
  assert_int_equal(chakra_manifest_new(&m, CHAKRA_MANIFEST_GRID, 8, &err), 0);
  static const char *axes[] = {"dp", "tp", "sp", "pp"};
  for (int a = 0; a < 4; a++) assert_int_equal(chakra_manifest_add_axis(m, axes[a], a == 1 || a == 0 || a == 3 ? 2 : 1, a == 3, &err), 0);
  const char *dp[] = {"dp"}, *tp[] = {"tp"}, *sp[] = {"sp"};
  const char *o_dp[] = {"pp", "tp", "sp"}, *o_tp[] = {"pp", "dp", "sp"}, *o_sp[] = {"pp", "dp", "tp"};
  assert_int_equal(chakra_manifest_add_group_rule(m, dp, 1, o_dp, 3, 1, &err), 0);
  assert_int_equal(chakra_manifest_add_group_rule(m, tp, 1, o_tp, 3, 5, &err), 0);
  assert_int_equal(chakra_manifest_add_group_rule(m, sp, 1, o_sp, 3, 9, &err), 0);
  assert_int_equal(chakra_manifest_add_class(m, "s.class0.et", 0, &err), 0);
  assert_int_equal(chakra_manifest_add_class(m, "s.class1.et", 4, &err), 0);
  return m;
}

static void shared_set_binds_every_rank(void **state) {
  (void)state;
  chakra_synth_config c;
  chakra_synth_config_default(&c);
  c.num_stacks = 2, c.dmodel = 64, c.dff = 128, c.head = 4, c.kvhead = 2, c.seq = 16, c.dvocal = 64, c.batch = 4;
  c.dp = c.tp = c.pp = 2;
  c.threads = 1;
  c.singleton_groups = 1; /* synth_grid() has the sp rule (groups of one rank) */
  char *d = tu_join(tu_dir, "d"), *sp = tu_join(tu_dir, "s");
  chakra_error err = {0};
  if (chakra_synth_write(&c, d, NULL, &err)) fail_msg("%s", err.msg);
  char *t0 = chakra_class_path_dup(sp, 0), *t1 = chakra_class_path_dup(sp, 1), *d0 = rank_file(d, 0), *d4 = rank_file(d, 4);
  copy_file(d0, t0), copy_file(d4, t1);
  chakra_manifest *m = synth_grid();
  char *mp = chakra_manifest_path_dup(sp);
  if (chakra_manifest_write(m, mp, &err)) fail_msg("%s", err.msg);
  chakra_manifest_free(m);
  chakra_set *s = open_ok(sp, NULL), *per = open_ok(d, NULL);
  assert_non_null(chakra_set_manifest(s));
  assert_null(chakra_set_manifest(per));
  assert_int_equal(chakra_set_ranks(s), 8);
  assert_int_equal(chakra_set_classes(s), 2);
  assert_int_equal(chakra_set_class_of(s, 6), 1);
  assert_int_equal(chakra_set_groups_origin(s), CHAKRA_GROUPS_MANIFEST);
  assert_null(chakra_set_rank_path(s, 3));
  assert_string_equal(chakra_set_rank_name(s, 5), tu_fmt("%s (rank 5)", t1));
  for (uint32_t r = 0; r < 8; r++) {
    /* the node stream: every message the rank file's */
    chakra_reader *a, *b;
    assert_int_equal(chakra_set_reader(s, r, NULL, &a, &err), 0);
    assert_int_equal(chakra_set_reader(per, r, NULL, &b, &err), 0);
    const uint8_t *x, *y;
    size_t nx, ny;
    int ra, rb, count = 0;
    while ((ra = chakra_reader_next_raw(a, &x, &nx, &err)) == 1) {
      rb = chakra_reader_next_raw(b, &y, &ny, &err);
      assert_int_equal(rb, 1);
      assert_int_equal(nx, ny);
      assert_memory_equal(x, y, nx);
      count++;
    }
    assert_int_equal(ra, 0);
    assert_int_equal(chakra_reader_next_raw(b, &y, &ny, &err), 0);
    assert_true(count > 50);
    chakra_reader_close(a), chakra_reader_close(b);
    /* the graph, and nodes read again from it */
    chakra_graph *ga, *gb;
    assert_int_equal(chakra_set_load_rank(s, r, NULL, &ga, &err), 0);
    assert_int_equal(chakra_set_load_rank(per, r, NULL, &gb, &err), 0);
    assert_int_equal(ga->n, gb->n);
    assert_int_equal(ga->n_pg_names, gb->n_pg_names);
    for (size_t i = 1; i < ga->n_pg_names; i++) assert_string_equal(ga->pg_names[i], gb->pg_names[i]);
    for (size_t i = 0; i < ga->n; i++) {
      assert_int_equal(ga->nodes[i].comm_src, gb->nodes[i].comm_src);
      assert_int_equal(ga->nodes[i].comm_dst, gb->nodes[i].comm_dst);
      assert_int_equal(ga->nodes[i].pg, gb->nodes[i].pg);
      if (gb->nodes[i].present & (CHAKRA_HAS_COMM_DST | CHAKRA_HAS_COMM_SRC | CHAKRA_HAS_PG_NAME)) {
        chakra_node *na, *nb;
        assert_int_equal(chakra_graph_read_node(ga, (uint32_t)i, &na, &err), 0);
        assert_int_equal(chakra_graph_read_node(gb, (uint32_t)i, &nb, &err), 0);
        size_t la = protobuf_c_message_get_packed_size(&na->base), lb = protobuf_c_message_get_packed_size(&nb->base);
        assert_int_equal(la, lb);
        uint8_t *pa = malloc(la + 1), *pb = malloc(lb + 1);
        protobuf_c_message_pack(&na->base, pa), protobuf_c_message_pack(&nb->base, pb);
        assert_memory_equal(pa, pb, la);
        free(pa), free(pb);
        chakra_node_free(na), chakra_node_free(nb);
      }
    }
    if (r == 5) assert_string_equal(ga->path, tu_fmt("%s (rank 5)", t1));
    chakra_graph_free(gb);
    if (r == 7) { /* a rank's graph outlives its set */
      chakra_set_close(s);
      s = NULL;
      chakra_node *na;
      uint32_t i = 0;
      while (!(ga->nodes[i].present & CHAKRA_HAS_PG_NAME)) i++;
      assert_int_equal(chakra_graph_read_node(ga, i, &na, &err), 0);
      chakra_node_free(na);
    }
    chakra_graph_free(ga);
  }
  /* the groups: the rules' are the groups file's */
  s = open_ok(sp, NULL);
  assert_int_equal(chakra_set_load_groups(s, &err), 0);
  assert_int_equal(chakra_set_load_groups(per, &err), 0);
  assert_int_equal(chakra_set_groups_origin(per), CHAKRA_GROUPS_BESIDE);
  assert_int_equal(chakra_set_group_count(s), chakra_set_group_count(per));
  for (size_t i = 0; i < chakra_set_group_count(s); i++) {
    uint32_t na, nb;
    assert_string_equal(chakra_set_group_name(s, i), chakra_set_group_name(per, i));
    const uint32_t *ma = chakra_set_group_members(s, i, &na), *mb = chakra_set_group_members(per, i, &nb);
    assert_int_equal(na, nb);
    assert_memory_equal(ma, mb, na * sizeof *ma);
  }
  chakra_set_close(s), chakra_set_close(per);
  /* given as its manifest; not among other traces; a missing template; both forms at one prefix */
  const char *args[] = {mp};
  assert_int_equal(chakra_set_open_args(&s, args, 1, NULL, &err), 0);
  assert_int_equal(chakra_set_ranks(s), 8);
  chakra_set_close(s);
  const char *two[] = {d0, sp};
  assert_int_not_equal(chakra_set_open_args(&s, two, 2, NULL, &err), 0);
  assert_contains(err.msg, "is a shared trace set");
  chakra_set_options want = {.ranks = 16, .ranks_reason = "the network has 16 NPUs"};
  assert_contains(open_fails(sp, &want), "the shared trace set has 8 rank(s), 16 expected (the network has 16 NPUs)");
  unlink(t1);
  assert_contains(open_fails(sp, NULL), tu_fmt("classes[1].template: %s does not exist", t1));
  copy_file(d4, t1);
  char *s0 = rank_file(sp, 0);
  copy_file(d0, s0);
  assert_contains(open_fails(sp, NULL), "both a shared trace set");
  free(s0), free(mp), free(t0), free(t1), free(d0), free(d4), free(d), free(sp);
}

/* ---- streams ---- */

static void readers_writers_and_reports_over_streams(void **state) {
  (void)state;
  char *prefix = workload("ar"), *p0 = rank_file(prefix, 0);
  size_t len;
  uint8_t *bytes = tu_read_file(p0, &len);
  chakra_error err = {0};
  /* a writer to a callback copies a trace byte for byte */
  chakra_reader *rd;
  assert_int_equal(chakra_reader_open(&rd, p0, NULL, &err), 0);
  sink_buf got = {0};
  chakra_sink out = {.write = collect, .ctx = &got};
  chakra_writer *w;
  assert_int_equal(chakra_writer_open_sink(&w, &out, 0, &err), 0);
  assert_int_equal(chakra_writer_put(w, &chakra_reader_metadata(rd)->base, &err), 0);
  const uint8_t *data;
  size_t n;
  while (chakra_reader_next_raw(rd, &data, &n, &err) == 1) assert_int_equal(chakra_writer_put_raw(w, data, n, &err), 0);
  chakra_reader_close(rd);
  assert_int_equal(chakra_writer_close(w, &err), 0);
  assert_int_equal(got.n, len);
  assert_memory_equal(got.p, bytes, len);
  /* a callback that fails fails the output; gzip goes to files only */
  sink_buf refuse = {.fail = 1};
  chakra_sink bad = {.write = collect, .ctx = &refuse, .name = "my sink"};
  assert_int_equal(chakra_writer_open_sink(&w, &bad, 0, &err), 0);
  uint8_t one = 0;
  assert_int_equal(chakra_writer_put_raw(w, &one, 1, &err), 0); /* buffered */
  assert_int_equal(chakra_writer_close(w, &err), CHAKRA_EIO);
  assert_contains(err.msg, "my sink: write failed");
  assert_int_equal(chakra_writer_open_sink(&w, &out, CHAKRA_WRITE_GZIP, &err), CHAKRA_EINVAL);
  /* a reader from a FILE*, from where the stream is */
  FILE *f = tmpfile();
  assert_non_null(f);
  assert_int_equal(fwrite("junk", 1, 4, f), 4);
  assert_int_equal(fwrite(bytes, 1, len, f), len);
  assert_int_equal(fseek(f, 4, SEEK_SET), 0);
  chakra_input in = {.file = f};
  chakra_graph *g;
  assert_int_equal(chakra_graph_load_input(&g, &in, NULL, &err), 0);
  assert_string_equal(g->path, "<stream>");
  chakra_node *full;
  assert_int_equal(chakra_graph_read_node(g, 0, &full, &err), 0); /* seeks back to where loading began */
  assert_int_equal(full->id, g->nodes[0].id);
  chakra_node_free(full);
  chakra_graph_free(g);
  fclose(f);
  /* bytes in memory: errors name the buffer */
  chakra_input cut = {.data = bytes, .size = len - 1, .name = "cut"};
  assert_int_not_equal(chakra_graph_load_input(&g, &cut, NULL, &err), 0);
  assert_contains(err.msg, "cut: offset");
  /* statistics JSON to a FILE* and to a callback, the same bytes */
  chakra_rank_stats st;
  assert_int_equal(chakra_stats_file(p0, 0, &st, &err), 0);
  const char *names[] = {p0};
  sink_buf js = {0};
  chakra_sink jout = {.write = collect, .ctx = &js};
  assert_int_equal(chakra_stats_write_json_to(&jout, names, &st, 1, &st, &err), 0);
  f = tmpfile();
  chakra_sink fout = {.file = f};
  assert_int_equal(chakra_stats_write_json_to(&fout, names, &st, 1, &st, &err), 0);
  assert_int_equal((size_t)ftell(f), js.n);
  assert_non_null(memchr(js.p, '{', js.n));
  fclose(f);
  chakra_stats_free(&st);
  /* jsonize from memory to a callback, pack it back from memory: the
   * bytes return; a workload writer to sinks writes them too */
  chakra_input et = {.data = bytes, .size = len};
  sink_buf json = {0}, back = {0}, wl = {0};
  chakra_sink jsink = {.write = collect, .ctx = &json}, bsink = {.write = collect, .ctx = &back};
  assert_int_equal(chakra_jsonize_io(&et, &jsink, CHAKRA_JSON_LINES, NULL, NULL, NULL, NULL, &err), 0);
  assert_non_null(memchr(json.p, '\n', json.n));
  chakra_input jin = {.data = json.p, .size = json.n};
  assert_int_equal(chakra_pack_io(&jin, &bsink, 0, NULL, NULL, NULL, NULL, &err), 0);
  assert_int_equal(back.n, len);
  assert_memory_equal(back.p, bytes, len);
  chakra_sink wsink = {.write = collect, .ctx = &wl};
  chakra_workload_writer *ww;
  assert_int_equal(chakra_workload_writer_open_sinks(&ww, &wsink, 1, NULL, &err), 0);
  assert_int_equal(chakra_workload_writer_put_framed(ww, 0, bytes, len, &err), 0);
  assert_int_equal(chakra_workload_writer_commit(ww, &err), 0);
  assert_int_equal(wl.n, len);
  assert_memory_equal(wl.p, bytes, len);
  free(wl.p), free(back.p), free(json.p);
  free(js.p), free(got.p), free(bytes), free(p0), free(prefix);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(prefix_ranks_names_and_identity_classes, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(missing_gap_and_extra_ranks, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(files_and_arguments, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(groups_given_beside_and_for_another_rank_count, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(memory_source, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(classes_and_bindings, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(simulator_reads_memory_as_files, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(shared_set_binds_every_rank, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(readers_writers_and_reports_over_streams, tu_dir_setup, tu_dir_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
