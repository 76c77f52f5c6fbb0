/* test_run.c - the run record (include/chakra/run.h, lib/report): its
 * memory and derived figures, and each of its writers and its reader,
 * text pinned to the byte: the report JSON of a simulation and of a
 * replay, what the reader refuses and that it gives back what was written,
 * the per-rank CSV and the CSV field rule sweep shares, and the timeline
 * writer with the slot layout the simulator and replay share. */
#include <stdlib.h>
#include <string.h>

#include "chakra/attr.h"
#include "chakra/run.h"
#include "csv.h"
#include "testutil.h"
#include "textout.h"
#include "timeline.h"

typedef struct sink_buf {
  char *p;
  size_t n;
} sink_buf;

static int collect(void *ctx, const void *data, size_t len) {
  sink_buf *b = ctx;
  b->p = realloc(b->p, b->n + len + 1);
  assert_non_null(b->p);
  memcpy(b->p + b->n, data, len);
  b->n += len;
  b->p[b->n] = 0;
  return 0;
}

/* The document r is in format, as a string (malloc'd). */
static char *written(const chakra_run_record *r, chakra_run_format format) {
  sink_buf b = {0};
  chakra_sink out = {.write = collect, .ctx = &b};
  chakra_error err = {0};
  if (chakra_run_write_report_to(r, &out, format, &err)) fail_msg("%s", err.msg);
  return b.p ? b.p : strdup("");
}

/* Two ranks as a simulation leaves them: one finished with three
 * collective types, one stuck. */
static void sim_record(chakra_run_record *r) {
  chakra_error err = {0};
  assert_int_equal(chakra_run_record_init(r, CHAKRA_RUN_SIM, 2, &err), 0);
  r->events = 10, r->messages = 4, r->wall_seconds = 1.5;
  chakra_run_rank *a = &r->ranks[0], *b = &r->ranks[1];
  a->finished = 1, a->finish_ns = 100, a->exposed_comm_ns = 40, a->bubble_ns = 15, a->wall_ns = 100;
  a->busy_ns[CHAKRA_CAT_GPU] = 60, a->busy_ns[CHAKRA_CAT_CPU] = 5, a->busy_ns[CHAKRA_CAT_COMM] = 70;
  a->nodes = a->nodes_done = 3;
  a->coll[CHAKRA_ALL_REDUCE] = (chakra_run_coll){1, 1024, 70};
  a->coll[CHAKRA_ALL_TO_ALL] = (chakra_run_coll){2, 64, 10};
  a->coll[CHAKRA_REDUCE_SCATTER] = (chakra_run_coll){1, 8, 3};
  a->send_ops = 1, a->send_bytes = 16;
  b->finish_ns = b->exposed_comm_ns = b->wall_ns = 50;
  b->nodes = 3, b->nodes_done = 1;
  assert_int_equal(chakra_run_add_stuck(r, "rank 1: node 7 \"x\"\n", &err), 0);
}

static const char sim_json[] =
    "{\"npus\":2,\"events\":10,\"messages\":4,\"wall_clock_s\":1.500,\"max_finish_ns\":100,\"ranks\":[\n"
    "{\"rank\":0,\"finished\":true,\"finish_ns\":100,\"exposed_comm_ns\":40,\"bubble_ns\":15,\"wall_ns\":100,\"gpu_ns\":60,"
    "\"cpu_ns\":5,\"comm_ns\":70,\"remote_mem_ns\":0,\"invalid_ns\":0,\"overlap_ns\":30,\"nodes\":3,"
    "\"nodes_done\":3,\"collectives\":{\"ALL_REDUCE\":{\"count\":1,\"bytes\":1024,\"time_ns\":70},"
    "\"REDUCE_SCATTER\":{\"count\":1,\"bytes\":8,\"time_ns\":3},\"ALL_TO_ALL\":{\"count\":2,\"bytes\":64,"
    "\"time_ns\":10}},\"p2p_sends\":1,\"p2p_bytes\":16},\n"
    "{\"rank\":1,\"finished\":false,\"finish_ns\":50,\"exposed_comm_ns\":50,\"bubble_ns\":0,\"wall_ns\":50,\"gpu_ns\":0,"
    "\"cpu_ns\":0,\"comm_ns\":0,\"remote_mem_ns\":0,\"invalid_ns\":0,\"overlap_ns\":0,\"nodes\":3,"
    "\"nodes_done\":1,\"collectives\":{},\"p2p_sends\":0,\"p2p_bytes\":0}\n"
    "],\"stuck\":[\"rank 1: node 7 \\\"x\\\"\\n\"]}\n";

static void test_record_memory_stuck_lines_and_metadata(void **state) {
  (void)state;
  chakra_run_record r;
  chakra_error err = {0};
  assert_int_equal(chakra_run_record_init(&r, CHAKRA_RUN_REPLAY, 3, &err), 0);
  assert_int_equal(r.source, CHAKRA_RUN_REPLAY);
  assert_int_equal(r.npus, 3);
  assert_int_equal(r.ranks[2].finish_ns, 0);
  assert_int_equal(chakra_run_add_stuck(&r, "one", &err), 0);
  assert_int_equal(chakra_run_add_stuck(&r, "two", &err), 0);
  assert_int_equal(r.n_stuck, 2);
  assert_string_equal(r.stuck[1], "two");
  assert_int_equal(chakra_run_set_meta(&r, "system", "a.json", &err), 0);
  assert_int_equal(chakra_run_set_meta(&r, "network", "n.yml", &err), 0);
  assert_int_equal(chakra_run_set_meta(&r, "system", "b.json", &err), 0); /* replaced, kept in place */
  assert_int_equal(r.n_meta, 2);
  assert_string_equal(r.meta[0].key, "system");
  assert_string_equal(chakra_run_get_meta(&r, "system"), "b.json");
  assert_null(chakra_run_get_meta(&r, "workload"));
  chakra_run_record_free(&r);
  assert_int_equal(r.npus, 0);
  assert_null(r.ranks);
  assert_int_equal(r.n_meta, 0);
  chakra_run_record_free(&r); /* an emptied record frees again */
}

static void test_derived_figures_summary_and_finish_order(void **state) {
  (void)state;
  chakra_run_record r;
  sim_record(&r);
  assert_int_equal(chakra_run_compute_ns(&r.ranks[0]), 60);
  assert_int_equal(chakra_run_comm_ns(&r.ranks[0]), 70);
  assert_int_equal(chakra_run_overlap_ns(&r.ranks[0]), 30);
  assert_int_equal(chakra_run_overlap_ns(&r.ranks[1]), 0);
  chakra_run_coll t[CHAKRA_RUN_COLLS];
  r.ranks[1].coll[CHAKRA_ALL_REDUCE] = (chakra_run_coll){2, 10, 5};
  chakra_run_coll_totals(&r, t);
  assert_int_equal(t[CHAKRA_ALL_REDUCE].count, 3);
  assert_int_equal(t[CHAKRA_ALL_REDUCE].bytes, 1034);
  assert_int_equal(t[CHAKRA_ALL_REDUCE].time_ns, 75);
  assert_int_equal(t[CHAKRA_BROADCAST].count, 0);
  r.ranks[0].coll[CHAKRA_BARRIER] = r.ranks[1].coll[CHAKRA_BARRIER] = (chakra_run_coll){1ull << 63, 1, UINT64_MAX};
  chakra_run_coll_totals(&r, t);
  assert_true(t[CHAKRA_BARRIER].count == UINT64_MAX); /* not 0: 2^63 + 2^63 wraps */
  assert_true(t[CHAKRA_BARRIER].time_ns == UINT64_MAX);
  assert_int_equal(t[CHAKRA_BARRIER].bytes, 2);
  r.ranks[0].coll[CHAKRA_BARRIER] = r.ranks[1].coll[CHAKRA_BARRIER] = (chakra_run_coll){0, 0, 0};
  const uint8_t *order = chakra_run_coll_order();
  assert_int_equal(order[0], CHAKRA_ALL_REDUCE);
  assert_int_equal(order[2], CHAKRA_REDUCE_SCATTER);
  assert_int_equal(order[3], CHAKRA_ALL_TO_ALL);
  unsigned seen = 0;
  for (int i = 0; i < CHAKRA_RUN_COLLS; i++) seen |= 1u << order[i];
  assert_int_equal(seen, (1u << CHAKRA_RUN_COLLS) - 1);
  chakra_run_summary m;
  chakra_run_summarise(&r, &m);
  assert_int_equal(m.finished, 1);
  assert_int_equal(m.slowest_rank, 0);
  assert_int_equal(m.max_finish_ns, 100);
  assert_int_equal(m.min_finish_ns, 50);
  assert_int_equal(m.mean_finish_ns, 75);
  assert_int_equal(m.mean_exposed_comm_ns, 45);
  assert_int_equal(m.mean_comm_ns, 35);
  assert_int_equal(m.mean_compute_ns, 30);
  uint32_t order_r[2];
  assert_int_equal(chakra_run_finish_order(&r, order_r), 1); /* the stuck rank is left out */
  chakra_run_record_free(&r);

  /* Means are exact: two ranks at 2^64-1 and one at 2^64-2 average to
   * 2^64-1 - 1/3, which rounds to 2^64-1. */
  chakra_error err = {0};
  assert_int_equal(chakra_run_record_init(&r, CHAKRA_RUN_SIM, 3, &err), 0);
  r.ranks[0].finish_ns = r.ranks[2].finish_ns = UINT64_MAX, r.ranks[1].finish_ns = UINT64_MAX - 1;
  for (int k = 0; k < 3; k++) r.ranks[k].finished = 1;
  chakra_run_summarise(&r, &m);
  assert_true(m.mean_finish_ns == UINT64_MAX);
  assert_int_equal(m.slowest_rank, 0);
  uint32_t o3[3];
  assert_int_equal(chakra_run_finish_order(&r, o3), 3);
  assert_int_equal(o3[0], 1); /* earliest first, ties by rank */
  assert_int_equal(o3[1], 0);
  assert_int_equal(o3[2], 2);
  chakra_run_record_free(&r);
}

static void test_report_json_of_a_simulation(void **state) {
  (void)state;
  chakra_run_record r;
  sim_record(&r);
  char *got = written(&r, CHAKRA_RUN_JSON);
  assert_string_equal(got, sim_json);
  free(got);
  /* roofline figures sit between the node counts and the collectives */
  r.roofline = 1;
  r.ranks[0].compute_bound_pct = 12.5, r.ranks[0].op_intensity = 0.1;
  got = written(&r, CHAKRA_RUN_JSON);
  assert_contains(got, "\"nodes_done\":3,\"compute_bound_pct\":12.5,\"compute_util_pct\":0,\"memory_util_pct\":0,"
                       "\"operation_intensity\":0.1,\"collectives\":{\"ALL_REDUCE\"");
  free(got);
  chakra_run_record_free(&r);
}

static void replay_record(chakra_run_record *r) {
  chakra_error err = {0};
  assert_int_equal(chakra_run_record_init(r, CHAKRA_RUN_REPLAY, 1, &err), 0);
  r->events = 4, r->messages = 0, r->wall_seconds = 2;
  r->iterations = 3, r->warmup = 1, r->compute = 1, r->compute_scale = 0.5;
  r->makespan_ns = malloc(3 * sizeof *r->makespan_ns);
  assert_non_null(r->makespan_ns);
  r->makespan_ns[0] = 30, r->makespan_ns[1] = 10, r->makespan_ns[2] = 20;
  chakra_run_rank *k = &r->ranks[0];
  k->finished = 1, k->finish_ns = k->wall_ns = 20, k->exposed_comm_ns = 20, k->nodes = k->nodes_done = 4;
  k->busy_ns[CHAKRA_CAT_COMM] = 2;
  k->coll[CHAKRA_BROADCAST] = (chakra_run_coll){1, 64, 2};
  k->finish_min_ns = 10, k->finish_median_ns = 20, k->finish_max_ns = 30;
  k->loop_ns = 100, k->mpi_ns = 20, k->idle_ns = 30;
  r->groups = calloc(1, sizeof *r->groups);
  assert_non_null(r->groups);
  r->groups[0] = strdup("tp");
  r->n_groups = 1;
  r->instances = calloc(1, sizeof *r->instances);
  assert_non_null(r->instances);
  r->instances[0] = (chakra_run_instance){.rank = 0, .node_id = 5, .comm_type = CHAKRA_BROADCAST, .bytes = 64,
                                          .group = 0, .group_size = 2, .start_ns = 1, .time_ns = 2,
                                          .time_min_ns = 1, .time_median_ns = 2, .time_max_ns = 3};
  r->n_instances = 1;
  assert_int_equal(chakra_run_set_meta(r, "workload", "job", &err), 0);
}

static void test_report_json_of_a_replay(void **state) {
  (void)state;
  chakra_run_record r;
  replay_record(&r);
  char *got = written(&r, CHAKRA_RUN_JSON);
  assert_string_equal(
      got,
      "{\"npus\":1,\"events\":4,\"messages\":0,\"wall_clock_s\":2.000,\"max_finish_ns\":20,\"ranks\":[\n"
      "{\"rank\":0,\"finished\":true,\"finish_ns\":20,\"exposed_comm_ns\":20,\"bubble_ns\":0,\"wall_ns\":20,\"gpu_ns\":0,\"cpu_ns\":0,"
      "\"comm_ns\":2,\"remote_mem_ns\":0,\"invalid_ns\":0,\"overlap_ns\":0,\"nodes\":4,\"nodes_done\":4,"
      "\"collectives\":{\"BROADCAST\":{\"count\":1,\"bytes\":64,\"time_ns\":2}},\"p2p_sends\":0,\"p2p_bytes\":0,"
      "\"finish_min_ns\":10,\"finish_median_ns\":20,\"finish_max_ns\":30,\"loop_ns\":100,\"mpi_ns\":20,"
      "\"idle_ns\":30,\"replayer_ns\":50}\n"
      "],\"stuck\":[],\"replay\":{\"compute\":\"sleep\",\"compute_scale\":0.5,\"iterations\":3,\"warmup\":1,"
      "\"makespan_ns\":[30,10,20],\"makespan_min_ns\":10,\"makespan_median_ns\":20,\"makespan_max_ns\":30,"
      "\"makespan_mean_ns\":20,\"makespan_stddev_ns\":10},\"collective_instances\":[\n"
      "{\"rank\":0,\"node_id\":5,\"type\":\"BROADCAST\",\"pg\":\"tp\",\"group_size\":2,\"bytes\":64,\"start_ns\":1,"
      "\"time_ns\":2,\"time_min_ns\":1,\"time_median_ns\":2,\"time_max_ns\":3}],\"meta\":{\"workload\":\"job\"}}\n");
  free(got);
  chakra_run_record_free(&r);
}

/* Reading a report gives back what was written: the same figures, and
 * the same bytes when written again. */
static void roundtrip(const chakra_run_record *r) {
  char *text = written(r, CHAKRA_RUN_JSON);
  chakra_run_record back;
  chakra_error err = {0};
  if (chakra_run_parse_report(&back, text, strlen(text), "r.json", &err)) fail_msg("%s", err.msg);
  assert_int_equal(back.source, r->source);
  assert_int_equal(back.npus, r->npus);
  assert_memory_equal(back.ranks, r->ranks, r->npus * sizeof *r->ranks);
  assert_int_equal(back.n_instances, r->n_instances);
  for (uint64_t i = 0; i < r->n_instances; i++) {
    assert_memory_equal(&back.instances[i], &r->instances[i], sizeof *r->instances);
  }
  char *again = written(&back, CHAKRA_RUN_JSON);
  assert_string_equal(again, text);
  free(again);
  free(text);
  chakra_run_record_free(&back);
}

/* The makespan's mean and deviation are whole nanoseconds, rounded to the
 * nearest (they were written as fractions), exact for makespans whose sum
 * overflows 64 bits. */
static void test_makespan_spread_in_whole_nanoseconds(void **state) {
  (void)state;
  static const struct {
    uint64_t v[3];
    const char *want;
  } cases[] = {
      {{10, 11, 11}, "\"makespan_mean_ns\":11,\"makespan_stddev_ns\":1}"},  /* 10.67, 0.577 */
      {{10, 11, 13}, "\"makespan_mean_ns\":11,\"makespan_stddev_ns\":2}"},  /* 11.33, 1.528 */
      {{1, 2, 3}, "\"makespan_mean_ns\":2,\"makespan_stddev_ns\":1}"},
      {{UINT64_MAX, UINT64_MAX, UINT64_MAX - 1}, "\"makespan_mean_ns\":18446744073709551615,"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    chakra_run_record r;
    replay_record(&r);
    memcpy(r.makespan_ns, cases[c].v, sizeof cases[c].v);
    char *got = written(&r, CHAKRA_RUN_JSON);
    if (!strstr(got, cases[c].want)) fail_msg("case %zu: %s not in %s", c, cases[c].want, got);
    free(got);
    chakra_run_record_free(&r);
  }
}

static void test_reader_gives_back_what_the_writer_wrote(void **state) {
  (void)state;
  chakra_run_record r;
  sim_record(&r);
  r.roofline = 1;
  r.ranks[0].compute_bound_pct = 1.0 / 3, r.ranks[1].memory_util_pct = 99.99, r.ranks[0].op_intensity = 1e-300;
  r.ranks[1].finish_ns = UINT64_MAX; /* 2^64-1 is kept whole */
  chakra_error err = {0};
  assert_int_equal(chakra_run_add_stuck(&r, "ctl \x01 and \xc3\xa9", &err), 0);
  assert_int_equal(chakra_run_set_meta(&r, "system", "sys \"a\".json", &err), 0);
  roundtrip(&r);
  chakra_run_record_free(&r);
  replay_record(&r);
  roundtrip(&r);
  chakra_run_record_free(&r);
}

/* Groups are numbered in the order instances first name them, however
 * often and in whatever order they come back; "" (all ranks) is -1. */
static void test_reader_numbers_groups_by_first_appearance(void **state) {
  (void)state;
  static const char *const names[] = {"tp", "dp", "pp"};
  static const int64_t named[] = {0, 1, 0, -1, 2, 1, 2, 0};
  const size_t n = sizeof named / sizeof named[0];
  chakra_run_record r;
  replay_record(&r);
  char **g = realloc(r.groups, 3 * sizeof *g);
  chakra_run_instance *x = realloc(r.instances, n * sizeof *x);
  assert_non_null(g);
  r.groups = g;
  assert_non_null(x);
  r.instances = x;
  for (size_t i = 1; i < 3; i++) assert_non_null(g[i] = strdup(names[i]));
  r.n_groups = 3;
  for (size_t i = 0; i < n; i++) {
    x[i] = x[0];
    x[i].node_id = i, x[i].group = named[i];
  }
  r.n_instances = n;
  roundtrip(&r);
  chakra_run_record_free(&r);
}

static void test_reader_takes_whole_numbers_however_written(void **state) {
  (void)state;
  static const char doc[] = "{\"ranks\":[{\"rank\":0.0,\"finish_ns\":1000.0,\"gpu_ns\":1e3,\"cpu_ns\":-0,"
                            "\"comm_ns\":18446744073709551615,\"future_field\":[1,2],"
                            "\"collectives\":{\"all_reduce\":{\"count\":1,\"time_ns\":5}}}],\"also\":{}}";
  chakra_run_record r;
  chakra_error err = {0};
  if (chakra_run_parse_report(&r, doc, sizeof doc - 1, "d.json", &err)) fail_msg("%s", err.msg);
  assert_int_equal(r.npus, 1);
  assert_int_equal(r.source, CHAKRA_RUN_SIM);
  assert_int_equal(r.ranks[0].finish_ns, 1000);
  assert_int_equal(r.ranks[0].busy_ns[CHAKRA_CAT_GPU], 1000);
  assert_int_equal(r.ranks[0].busy_ns[CHAKRA_CAT_CPU], 0);
  assert_true(r.ranks[0].busy_ns[CHAKRA_CAT_COMM] == UINT64_MAX);
  assert_int_equal(r.ranks[0].coll[CHAKRA_ALL_REDUCE].time_ns, 5);
  assert_false(r.ranks[0].finished);
  chakra_run_record_free(&r);
}

static void test_reader_refuses_with_one_line_naming_the_field(void **state) {
  (void)state;
  static const struct {
    const char *doc, *says;
  } bad[] = {
      {"{}", "b.json: no \"ranks\" list: not a chakra sim or replay report"},
      {"[1]", "no \"ranks\" list"},
      {"{\"ranks\":[{\"finish_ns\":-1}]}", "b.json: ranks[0].finish_ns: expected a whole number >= 0 of at most 2^64-1, not -1"},
      {"{\"ranks\":[{\"finish_ns\":\"5\"}]}", "ranks[0].finish_ns: expected a whole number >= 0 of at most 2^64-1, not \"5\""},
      {"{\"ranks\":[{\"finish_ns\":18446744073709551616}]}", "ranks[0].finish_ns: expected a whole number"},
      {"{\"ranks\":[{\"finish_ns\":2.5}]}", "ranks[0].finish_ns: expected a whole number"},
      {"{\"ranks\":[7]}", "ranks[0]: expected an object, not 7"},
      {"{\"ranks\":[{\"finished\":1}]}", "ranks[0].finished: expected true or false, not 1"},
      {"{\"ranks\":[{\"rank\":1}]}", "ranks[0].rank: expected 0 (ranks are listed in order), not 1"},
      {"{\"ranks\":[{\"compute_bound_pct\":-1}]}", "ranks[0].compute_bound_pct: expected a finite number >= 0, not -1"},
      {"{\"ranks\":[{}],\"wall_clock_s\":\"1\"}", "b.json: wall_clock_s: expected a finite number >= 0, not \"1\""},
      {"{\"ranks\":[{}],\"wall_clock_s\":1e999}", "b.json: wall_clock_s: expected a finite number >= 0, not 1e999"},
      {"{\"ranks\":[{\"collectives\":{\"ALL_REDUCE\":{\"count\":1},\"all_reduce\":{\"count\":2}}}]}",
       "ranks[0].collectives.all_reduce: ALL_REDUCE is listed twice"},
      {"{\"ranks\":[{\"collectives\":{\"SPLAT\":{}}}]}", "ranks[0].collectives.SPLAT: not a collective type"},
      {"{\"ranks\":[{\"collectives\":{\"ALL_REDUCE\":[]}}]}", "ranks[0].collectives.ALL_REDUCE: expected an object, not a list"},
      {"{\"npus\":2,\"ranks\":[{}]}", "b.json: npus: 2, but \"ranks\" lists 1"},
      {"{\"ranks\":[{}],\"stuck\":[1]}", "stuck[0]: expected a string, not 1"},
      {"{\"ranks\":[{}],\"meta\":{\"a\":1}}", "meta.a: expected a string, not 1"},
      {"{\"ranks\":[{}],\"replay\":{\"compute\":\"run\"}}", "replay.compute: expected wait, sleep or skip, not \"run\""},
      {"{\"ranks\":[{}],\"replay\":{\"iterations\":4294967296}}", "replay.iterations: expected a whole number >= 0 of at most 2^32-1"},
      {"{\"ranks\":[{}],\"replay\":{\"iterations\":2,\"makespan_ns\":[1]}}",
       "replay.makespan_ns: 1 entries, but replay.iterations is 2"},
      {"{\"ranks\":[{}],\"replay\":{\"makespan_stddev_ns\":-2}}", "replay.makespan_stddev_ns: expected a finite number"},
      {"{\"ranks\":[{}],\"collective_instances\":[{\"rank\":1}]}",
       "collective_instances[0].rank: 1, but the report has 1 ranks"},
      {"{\"ranks\":[{}],\"collective_instances\":[{\"type\":\"FOO\"}]}",
       "collective_instances[0].type: expected a CollectiveCommType name (ALL_REDUCE, ...), not \"FOO\""},
      {"{\"ranks\":[{}],\"collective_instances\":[{\"pg\":3}]}", "collective_instances[0].pg: expected a string, not 3"},
      {"{\"ranks\":[{\"x\\u0001\":1,\"collectives\":{\"\\u001b[2J\":{}}}]}", "ranks[0].collectives.\\x1b[2J: not a collective type"},
      {"{\"ranks\":[{}", "b.json: invalid JSON"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    chakra_run_record r;
    chakra_error err = {0};
    int rc = chakra_run_parse_report(&r, bad[i].doc, strlen(bad[i].doc), "b.json", &err);
    if (rc == 0) fail_msg("accepted %s", bad[i].doc);
    assert_int_equal(rc, CHAKRA_EFORMAT);
    assert_contains(err.msg, bad[i].says);
    assert_null(strchr(err.msg, '\n'));
    assert_int_equal(r.npus, 0); /* emptied on failure */
    assert_null(r.ranks);
  }
}

static void test_report_files_and_formats(void **state) {
  (void)state;
  chakra_run_record r, back;
  sim_record(&r);
  chakra_error err = {0};
  char *json = tu_join(tu_dir, "r.json"), *csv = tu_join(tu_dir, "r.csv");
  assert_int_equal(chakra_run_write_report(&r, json, CHAKRA_RUN_JSON, &err), 0);
  assert_int_equal(chakra_run_read_report(&back, json, &err), 0);
  assert_int_equal(back.ranks[0].coll[CHAKRA_ALL_TO_ALL].count, 2);
  chakra_run_record_free(&back);
  assert_int_equal(chakra_run_write_report(&r, csv, (chakra_run_format)7, &err), CHAKRA_EINVAL);
  assert_false(tu_exists(csv)); /* nothing half-written */
  char *missing = tu_join(tu_dir, "none.json");
  assert_int_equal(chakra_run_read_report(&back, missing, &err), CHAKRA_EIO);
  assert_contains(err.msg, "none.json");
  free(missing);
  free(json);
  free(csv);
  chakra_run_record_free(&r);
}

static void test_csv_rows_per_rank(void **state) {
  (void)state;
  chakra_run_record r;
  sim_record(&r);
  char *got = written(&r, CHAKRA_RUN_CSV);
  assert_string_equal(got,
                      "rank,finished,finish_ns,exposed_comm_ns,bubble_ns,wall_ns,gpu_ns,cpu_ns,comm_ns,remote_mem_ns,invalid_ns,"
                      "overlap_ns,nodes,nodes_done,p2p_sends,p2p_bytes,ALL_REDUCE_count,ALL_REDUCE_bytes,"
                      "ALL_REDUCE_time_ns,REDUCE_SCATTER_count,REDUCE_SCATTER_bytes,REDUCE_SCATTER_time_ns,"
                      "ALL_TO_ALL_count,ALL_TO_ALL_bytes,ALL_TO_ALL_time_ns\n"
                      "0,true,100,40,15,100,60,5,70,0,0,30,3,3,1,16,1,1024,70,1,8,3,2,64,10\n"
                      "1,false,50,50,0,50,0,0,0,0,0,0,3,1,0,0,0,0,0,0,0,0,0,0,0\n");
  free(got);
  chakra_run_record_free(&r);
  replay_record(&r);
  r.roofline = 1;
  r.ranks[0].compute_util_pct = 2.25;
  got = written(&r, CHAKRA_RUN_CSV);
  assert_string_equal(got,
                      "rank,finished,finish_ns,exposed_comm_ns,bubble_ns,wall_ns,gpu_ns,cpu_ns,comm_ns,remote_mem_ns,invalid_ns,"
                      "overlap_ns,nodes,nodes_done,p2p_sends,p2p_bytes,compute_bound_pct,compute_util_pct,"
                      "memory_util_pct,operation_intensity,finish_min_ns,finish_median_ns,finish_max_ns,loop_ns,"
                      "mpi_ns,idle_ns,replayer_ns,BROADCAST_count,BROADCAST_bytes,BROADCAST_time_ns\n"
                      "0,true,20,20,0,20,0,0,2,0,0,0,4,4,0,0,0,2.25,0,0,10,20,30,100,20,30,50,1,64,2\n");
  free(got);
  chakra_run_record_free(&r);
}

static void test_csv_fields_are_quoted_only_when_they_must_be(void **state) {
  (void)state;
  char *path = tu_join(tu_dir, "f.csv");
  textout t;
  chakra_error err = {0};
  assert_int_equal(textout_open(&t, path, &err), 0);
  static const char *const fields[] = {"plain", "a,b", "say \"hi\"", "two\nlines", "cr\r", ""};
  for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
    if (i) csv_next(&t.w);
    csv_field(&t.w, fields[i]);
  }
  csv_end(&t.w);
  assert_int_equal(textout_close(&t, 0, &err), 0);
  char *got = tu_read_text(path, NULL);
  assert_string_equal(got, "plain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",\"cr\r\",\n");
  free(got);
  free(path);
}

static void test_timeline_writer_text(void **state) {
  (void)state;
  char *path = tu_join(tu_dir, "t.json");
  chakra_timeline *t;
  chakra_error err = {0};
  assert_int_equal(chakra_timeline_open(&t, path, &err), 0);
  chakra_timeline_process(t, 0, "rank 0");
  chakra_timeline_track(t, 0, 1, "GPU \"compute\"");
  chakra_timeline_slice(t, 0, 1, "a\"b\x01", 4, "COMP_NODE", 12345, 1000, 7);
  chakra_timeline_slice(t, 0, 1, "c", 1, "COMM_COLL_NODE", 5, 0, 8);
  assert_int_equal(chakra_timeline_close(t, &err), 0);
  char *got = tu_read_text(path, NULL);
  assert_string_equal(got,
                      "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"
                      "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"args\":{\"name\":\"rank 0\"}},\n"
                      "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":0,\"tid\":1,\"args\":{\"name\":\"GPU \\\"compute\\\"\"}},\n"
                      "{\"ph\":\"X\",\"name\":\"a\\\"b\\u0001\",\"cat\":\"COMP_NODE\",\"pid\":0,\"tid\":1,\"ts\":12.345,"
                      "\"dur\":1.000,\"args\":{\"node_id\":7}},\n"
                      "{\"ph\":\"X\",\"name\":\"c\",\"cat\":\"COMM_COLL_NODE\",\"pid\":0,\"tid\":1,\"ts\":0.005,"
                      "\"dur\":0.000,\"args\":{\"node_id\":8}}\n"
                      "]}\n");
  free(got);
  /* an abandoned timeline leaves nothing */
  char *gone = tu_join(tu_dir, "gone.json");
  assert_int_equal(chakra_timeline_open(&t, gone, &err), 0);
  chakra_timeline_process(t, 0, "rank 0");
  chakra_timeline_discard(t);
  assert_false(tu_exists(gone));
  free(gone);
  free(path);
}

/* An SVG timeline of more tracks than it draws is refused at close, with
 * the count, and leaves nothing. */
static void test_timeline_svg_refuses_too_many_tracks(void **state) {
  (void)state;
  char *path = tu_join(tu_dir, "t.svg");
  chakra_timeline *t;
  chakra_error err = {0};
  assert_int_equal(chakra_timeline_open_svg(&t, path, &err), 0);
  chakra_timeline_process(t, 0, "rank 0");
  for (uint32_t tid = 0; tid <= 2000; tid++) {
    chakra_timeline_track(t, 0, tid, "GPU compute");
    chakra_timeline_slice(t, 0, tid, "n", 1, "COMP_NODE", tid, 10, tid);
  }
  assert_int_equal(chakra_timeline_close(t, &err), CHAKRA_EINVAL);
  char want[512];
  snprintf(want, sizeof want,
           "%s: an SVG timeline draws at most 2000 tracks and this one has 2001: name fewer ranks, or write the "
           "JSON timeline and open it in ui.perfetto.dev",
           path);
  assert_string_equal(err.msg, want);
  assert_false(tu_exists(path));
  free(path);
}

/* Node 1 never ran; node 0 on the GPU compute track, node 2 a receive. */
static int spans(void *ctx, uint32_t i, const chakra_node *n, timeline_span *out) {
  (*(int *)ctx)++;
  if (i == 1) return 0;
  *out = (timeline_span){.id = n->id * 10, .start = i * 1000, .end = i * 1000 + 1500, .track = i ? 3 : 1};
  return 1;
}

static void test_timeline_slot_layout_of_sim_and_replay(void **state) {
  (void)state;
  char *et = tu_join(tu_dir, "r.et"), *path = tu_join(tu_dir, "s.json");
  const tu_node nodes[] = {{.id = 4, .name = "gemm"}, {.id = 5, .name = "skipped"},
                           {.id = 6, .type = CHAKRA_COMM_RECV_NODE, .name = "recv"}};
  tu_write_trace(et, nodes, 3);
  chakra_reader *rd;
  chakra_error err = {0};
  assert_int_equal(chakra_reader_open(&rd, et, NULL, &err), 0);
  chakra_timeline *t;
  assert_int_equal(chakra_timeline_open(&t, path, &err), 0);
  int calls = 0;
  assert_int_equal(timeline_slot_rank(t, 5, rd, 3, spans, &calls, &err), 0);
  chakra_reader_close(rd);
  assert_int_equal(chakra_timeline_close(t, &err), 0);
  assert_int_equal(calls, 3);
  char *got = tu_read_text(path, NULL);
  assert_string_equal(
      got, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"
           "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":5,\"args\":{\"name\":\"rank 5\"}},\n"
           "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":5,\"tid\":0,\"args\":{\"name\":\"CPU\"}},\n"
           "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":5,\"tid\":1,\"args\":{\"name\":\"GPU compute\"}},\n"
           "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":5,\"tid\":2,\"args\":{\"name\":\"GPU communication\"}},\n"
           "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":5,\"tid\":3,\"args\":{\"name\":\"receives\"}},\n"
           "{\"ph\":\"X\",\"name\":\"gemm\",\"cat\":\"COMP_NODE\",\"pid\":5,\"tid\":1,\"ts\":0.000,\"dur\":1.500,"
           "\"args\":{\"node_id\":40}},\n"
           "{\"ph\":\"X\",\"name\":\"recv\",\"cat\":\"COMM_RECV_NODE\",\"pid\":5,\"tid\":3,\"ts\":2.000,\"dur\":1.500,"
           "\"args\":{\"node_id\":60}}\n"
           "]}\n");
  free(got);
  /* a trace shorter than the count asked for is an error, not a short timeline */
  assert_int_equal(chakra_reader_open(&rd, et, NULL, &err), 0);
  assert_int_equal(chakra_timeline_open(&t, path, &err), 0);
  int rc = timeline_slot_rank(t, 0, rd, 4, spans, &calls, &err);
  chakra_reader_close(rd);
  chakra_timeline_discard(t);
  assert_int_not_equal(rc, 0);
  free(et);
  free(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_record_memory_stuck_lines_and_metadata),
      cmocka_unit_test(test_derived_figures_summary_and_finish_order),
      cmocka_unit_test(test_report_json_of_a_simulation),
      cmocka_unit_test(test_report_json_of_a_replay),
      cmocka_unit_test(test_makespan_spread_in_whole_nanoseconds),
      cmocka_unit_test(test_reader_gives_back_what_the_writer_wrote),
      cmocka_unit_test(test_reader_numbers_groups_by_first_appearance),
      cmocka_unit_test(test_reader_takes_whole_numbers_however_written),
      cmocka_unit_test(test_reader_refuses_with_one_line_naming_the_field),
      cmocka_unit_test_setup_teardown(test_report_files_and_formats, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test(test_csv_rows_per_rank),
      cmocka_unit_test_setup_teardown(test_csv_fields_are_quoted_only_when_they_must_be, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_timeline_writer_text, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_timeline_svg_refuses_too_many_tracks, tu_dir_setup, tu_dir_teardown),
      cmocka_unit_test_setup_teardown(test_timeline_slot_layout_of_sim_and_replay, tu_dir_setup, tu_dir_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
