/* calls.c - a program outside the project that calls into every installed
 * header of libchakra through its stable tier (no CHAKRA_EXPERIMENTAL):
 * it generates a 4-rank workload in DIR, reads, converts, checks,
 * simulates, plots and draws it, and prints "HEADER: ok" for each header
 * it used. install_consumer.sh builds it against an installed tree and
 * checks that every installed header is named.
 *
 *   calls DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <chakra/attr.h>
#include <chakra/build.h>
#include <chakra/coll.h>
#include <chakra/compare.h>
#include <chakra/diff.h>
#include <chakra/error.h>
#include <chakra/export.h>
#include <chakra/flat.h>
#include <chakra/gen.h>
#include <chakra/graph.h>
#include <chakra/ingest.h>
#include <chakra/json.h>
#include <chakra/limits.h>
#include <chakra/node.h>
#include <chakra/obfuscate.h>
#include <chakra/oneshot.h>
#include <chakra/output.h>
#include <chakra/plot.h>
#include <chakra/run.h>
#include <chakra/set.h>
#include <chakra/sim.h>
#include <chakra/stats.h>
#include <chakra/stream.h>
#include <chakra/suite.h>
#include <chakra/sweep.h>
#include <chakra/synth.h>
#include <chakra/timeline.h>
#include <chakra/timeline_writer.h>
#include <chakra/topo.h>
#include <chakra/trace.h>
#include <chakra/validate.h>
#include <chakra/version.h>
#include <chakra/views.h>

#define NPUS 4

static const char *dir;
static chakra_error err;

static const char *in_dir(const char *name) {
  static char bufs[4][4096];
  static int next;
  char *b = bufs[next++ % 4];
  snprintf(b, sizeof bufs[0], "%s/%s", dir, name);
  return b;
}

/* Each step ends the program on failure, naming the header and the call. */
static void ok(const char *header, int cond, const char *what) {
  if (!cond) {
    fprintf(stderr, "calls: %s: %s failed: %s (%s)\n", header, what, err.msg, chakra_strerror(err.code));
    exit(1);
  }
}

static void done(const char *header) { printf("%s: ok\n", header); }

static void write_and_read(char **paths) {
  /* gen.h writes the workload, build.h names its files, trace.h reads one. */
  ok("gen.h", chakra_gen_microbench(in_dir("mb"), CHAKRA_ALL_REDUCE, NPUS, 1 << 20, NULL, &err) == 0, "microbench");
  char label[16];
  chakra_gen_size_label(1 << 20, label, sizeof label);
  ok("gen.h", strcmp(label, "1MB") == 0, "size label");
  done("gen.h");
  for (uint32_t r = 0; r < NPUS; r++) paths[r] = chakra_rank_path_dup(in_dir("mb"), r);
  ok("build.h", paths[NPUS - 1] && strstr(paths[NPUS - 1], "mb.3.et"), "rank path");
  done("build.h");
  chakra_reader *rd;
  ok("trace.h", chakra_reader_open(&rd, paths[0], NULL, &err) == 0, "reader open");
  const uint8_t *data;
  size_t len, nodes = 0;
  int rc;
  while ((rc = chakra_reader_next_raw(rd, &data, &len, &err)) == 1) nodes++;
  chakra_reader_close(rd);
  ok("trace.h", rc == 0 && nodes == 1, "one node per rank");
  done("trace.h");
}

static void inspect(char **paths, chakra_graph **g) {
  ok("attr.h", chakra_comm_type_parse("all_reduce") == CHAKRA_ALL_REDUCE, "comm type parse");
  done("attr.h");
  ok("graph.h", chakra_graph_load(g, paths[0], NULL, &err) == 0, "graph load");
  ok("graph.h", (*g)->n == 1 && (*g)->nodes[0].type == CHAKRA_COMM_COLL_NODE, "one collective");
  done("graph.h");
  chakra_json_stats js = {0};
  ok("json.h", chakra_jsonize(paths[0], in_dir("mb.json"), CHAKRA_JSON_LINES, 0, &js, NULL, NULL, NULL, &err) == 0,
     "jsonize");
  ok("json.h", js.nodes == 1, "one node converted");
  done("json.h");
  chakra_rank_stats st;
  ok("stats.h", chakra_stats_file(paths[0], 0, &st, &err) == 0, "stats");
  const char *const names[] = {paths[0]};
  ok("stats.h", chakra_stats_write_json(in_dir("stats.json"), names, &st, 1, &st, &err) == 0, "stats json");
  chakra_stats_free(&st);
  done("stats.h");
  chakra_plot_kind kind = 0;
  ok("plot.h", chakra_plot_file(in_dir("stats.json"), in_dir("stats.svg"), &kind, &err) == 0, "plot");
  ok("plot.h", kind == CHAKRA_PLOT_STATS, "a stats plot");
  done("plot.h");
  chakra_validate_summary sum;
  ok("validate.h", chakra_validate(paths, NPUS, NULL, NULL, &sum, &err) == 0, "validate");
  ok("validate.h", sum.errors == 0 && sum.files == NPUS, "a clean workload");
  done("validate.h");
  chakra_diff_options dopt = {0};
  chakra_diff_rank d;
  ok("diff.h", chakra_diff_files(paths[0], paths[0], &dopt, &d, &err) == 0, "diff");
  ok("diff.h", chakra_diff_rank_equal(&d), "a trace equals itself");
  chakra_diff_rank_free(&d);
  done("diff.h");
}

/* set.h opens the ranks by prefix, node.h classifies a rank's node,
 * stream.h reads the rank from memory. */
static void through_the_set(void) {
  chakra_set *s;
  ok("set.h", chakra_set_open(&s, in_dir("mb"), NULL, &err) == 0 && chakra_set_ranks(s) == NPUS, "set open");
  chakra_graph *g;
  ok("set.h", chakra_set_load_rank(s, 1, NULL, &g, &err) == 0, "load rank 1");
  done("set.h");
  chakra_node_class c;
  chakra_node_classify(&g->nodes[0], 1, NPUS, &c);
  ok("node.h", c.kind == CHAKRA_KIND_COLL && c.category == CHAKRA_CAT_COMM && c.problems == 0, "an all-reduce");
  done("node.h");
  chakra_graph_free(g);
  size_t n = 0;
  char *bytes = NULL;
  FILE *f = fopen(chakra_set_rank_path(s, 1), "rb");
  if (f && fseek(f, 0, SEEK_END) == 0 && (n = (size_t)ftell(f)) > 0 && (bytes = malloc(n))) {
    rewind(f);
    if (fread(bytes, 1, n, f) != n) n = 0;
  }
  if (f) fclose(f);
  chakra_set_close(s);
  chakra_input in = {.data = bytes, .size = n, .name = "rank 1 in memory"};
  ok("stream.h", chakra_graph_load_input(&g, &in, NULL, &err) == 0 && g->n == 1, "graph from memory");
  ok("stream.h", strcmp(chakra_input_name(&in), "rank 1 in memory") == 0, "input name");
  chakra_graph_free(g);
  free(bytes);
  done("stream.h");
}

static void draw(const chakra_graph *g) {
  chakra_view_options vopt = {.format = CHAKRA_VIEW_DOT, .max_nodes = CHAKRA_VIEW_DEFAULT_MAX_NODES};
  chakra_view_info vi;
  ok("views.h", chakra_view_write(g, in_dir("g.dot"), &vopt, &vi, &err) == 0 && vi.nodes == 1, "dot view");
  done("views.h");
  chakra_timeline *t;
  ok("timeline_writer.h", chakra_timeline_open(&t, in_dir("tl.json"), &err) == 0, "timeline open");
  ok("timeline.h", chakra_timeline_add_graph(t, 0, g, NULL, &err) == 0, "add graph");
  chakra_timeline_process(t, 1, "by hand");
  chakra_timeline_track(t, 1, 0, "track");
  chakra_timeline_slice(t, 1, 0, "slice", 5, "COMP_NODE", 0, 1000, 1);
  ok("timeline_writer.h", chakra_timeline_close(t, &err) == 0, "timeline close");
  done("timeline.h");
  done("timeline_writer.h");
}

static void simulate(void) {
  chakra_topo *topo;
  ok("topo.h", chakra_topo_parse(&topo, "ring:4", 50, 500, &err) == 0, "topology");
  ok("topo.h", chakra_topo_npus(topo) == NPUS, "4 NPUs");
  done("topo.h");
  chakra_sim_config *c;
  chakra_sim_workload *w;
  chakra_run_record res;
  ok("sim.h", chakra_sim_config_new(&c, topo, &err) == 0, "config");
  static const char *const system[][2] = {{"all-reduce-implementation", "[\"ring\"]"},
                                          {"preferred-dataset-splits", "4"}};
  for (size_t i = 0; i < sizeof system / sizeof *system; i++)
    ok("sim.h", chakra_sim_config_set(c, system[i][0], system[i][1], NULL, NULL, &err) == 0, system[i][0]);
  ok("sim.h", chakra_sim_workload_load(&w, in_dir("mb"), NPUS, 1, NULL, NULL, &err) == 0, "workload");
  ok("sim.h", chakra_sim_run(c, w, NULL, &res, &err) == 0 && res.n_stuck == 0, "run");
  ok("sim.h", res.ranks[0].finished && res.ranks[0].finish_ns > 0, "rank 0 finished");
  done("sim.h");
  ok("run.h", chakra_run_write_report(&res, in_dir("report.json"), CHAKRA_RUN_JSON, &err) == 0, "report");
  ok("run.h", chakra_run_write_report(&res, in_dir("report.csv"), CHAKRA_RUN_CSV, &err) == 0, "CSV");
  chakra_run_record back;
  ok("run.h", chakra_run_read_report(&back, in_dir("report.json"), &err) == 0, "read back");
  ok("run.h", back.npus == NPUS && back.ranks[1].finish_ns == res.ranks[1].finish_ns, "the same figures");
  chakra_run_summary sum;
  chakra_run_summarise(&back, &sum);
  ok("run.h", sum.finished == NPUS && sum.max_finish_ns == res.ranks[0].finish_ns, "summary");
  chakra_run_record_free(&back);
  chakra_run_record_free(&res);
  chakra_sim_workload_free(w);
  chakra_sim_config_free(c);
  chakra_topo_free(topo);
  done("run.h");
  chakra_compare cmp;
  ok("compare.h", chakra_compare_reports(in_dir("report.json"), in_dir("report.json"), &cmp, &err) == 0, "compare");
  ok("compare.h", cmp.ranks == NPUS && cmp.n > 0 && cmp.rows[0].predicted_ns == cmp.rows[0].measured_ns, "rows");
  chakra_compare_free(&cmp);
  done("compare.h");
  const char *vary[] = {"bandwidth=50,100"};
  chakra_sweep *s;
  ok("sweep.h", chakra_sweep_new(&s, vary, 1, &err) == 0 && chakra_sweep_points(s) == 2, "sweep");
  chakra_sweep_free(s);
  done("sweep.h");
  const chakra_suite_version *v = chakra_suite_version_find("tiny-1.0");
  ok("suite.h", v && chakra_suite_workload_find(v, "ar-1m-n8") >= 0, "suite table");
  chakra_sim_config *sc = NULL;
  ok("suite.h", chakra_suite_config(&sc, NULL, NULL, 64, &err) == 0 &&
                    chakra_topo_npus(chakra_sim_config_topo(sc)) == 64, "suite config");
  chakra_sim_config_free(sc);
  done("suite.h");
}

/* The bindings' entry points: a rank as flat arrays and back, validate,
 * stats and sim as JSON into a callback. */
typedef struct json_text {
  char buf[65536];
  size_t n;
} json_text;

static int collect(void *ctx, const void *data, size_t len) {
  json_text *t = ctx;
  if (len >= sizeof t->buf - t->n) return -1;
  memcpy(t->buf + t->n, data, len);
  t->buf[t->n += len] = 0;
  return 0;
}

static void bindings(char **paths) {
  chakra_flat *f;
  ok("flat.h", chakra_flat_read(&f, paths[0], NULL, &err) == 0 && f->n == 1, "flat read");
  ok("flat.h", f->type[0] == CHAKRA_COMM_COLL_NODE && f->attr_off[1] - f->attr_off[0] == 3,
     "an all-reduce, 3 attributes");
  ok("flat.h", chakra_flat_write(f, in_dir("flat.et"), &err) == 0, "flat write");
  chakra_flat_free(f);
  done("flat.h");
  const char *prefix[] = {in_dir("mb")};
  const char *kv[] = {"ignore-ctrl-deps", "false"};
  json_text t = {.n = 0};
  chakra_sink sink = {.write = collect, .ctx = &t};
  ok("oneshot.h", chakra_stats_json(prefix, 1, kv, 1, &sink, &err) == 0 && strstr(t.buf, "\"total\""), "stats json");
  t.n = 0;
  ok("oneshot.h", chakra_validate_json(prefix, 1, NULL, 0, &sink, &err) == 0 && strstr(t.buf, "\"errors\":0"),
     "validate json");
  ok("oneshot.h", chakra_sim_json(prefix, 1, kv, 1, &sink, NULL, NULL, &err) == CHAKRA_EINVAL, "an option sim has not");
  done("oneshot.h");
}

static void produce(char **paths) {
  chakra_coll_gen_options go = {.coll = CHAKRA_COLL_ALLREDUCE, .algo = CHAKRA_ALGO_RING, .ranks = NPUS,
                                .size = 1 << 20};
  ok("coll.h", chakra_coll_gen(in_dir("ring"), &go, &err) == 0, "coll gen");
  char *ring[NPUS];
  uint64_t problems = 1;
  for (uint32_t r = 0; r < NPUS; r++) ring[r] = chakra_rank_path_dup(in_dir("ring"), r);
  ok("coll.h", chakra_coll_check(ring, NPUS, NULL, NULL, &problems, &err) == 0 && problems == 0, "coll check");
  for (uint32_t r = 0; r < NPUS; r++) free(ring[r]);
  done("coll.h");
  chakra_synth_config sc;
  chakra_synth_config_default(&sc);
  ok("synth.h", chakra_synth_check(&sc, &err) == 0, "synth defaults check");
  done("synth.h");
  chakra_obfuscate_options oo = {0};
  chakra_obfuscate_key("key", 3, oo.key);
  chakra_writer *w;
  ok("obfuscate.h", chakra_writer_open(&w, in_dir("obf.et"), CHAKRA_WRITE_PLAIN, &err) == 0, "writer");
  ok("obfuscate.h", chakra_obfuscate_stream(paths[0], w, 0, &oo, NULL, &err) == 0, "obfuscate");
  ok("obfuscate.h", chakra_writer_close(w, &err) == 0, "writer close");
  done("obfuscate.h");
  /* ingest.h: the formats it reads, and a missing input refused. */
  ok("ingest.h", chakra_hostet_versions[0] != NULL, "host ET versions");
  ok("ingest.h", chakra_convert_text(in_dir("missing.txt"), in_dir("text"), NULL, NULL, &err) == CHAKRA_EIO,
     "a missing input is CHAKRA_EIO");
  done("ingest.h");
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: calls DIR\n");
    return 2;
  }
  dir = argv[1];
  ok("version.h", strcmp(chakra_version(), CHAKRA_VERSION_STRING) == 0, "version");
  done("version.h");
  ok("error.h", strcmp(chakra_strerror(CHAKRA_OK), chakra_strerror(CHAKRA_EIO)) != 0, "strerror");
  done("error.h");
  ok("limits.h", chakra_limits_gzip_ratio() == CHAKRA_DEFAULT_GZIP_RATIO, "gzip ratio");
  done("limits.h");
  ok("output.h", chakra_output_check(in_dir("out.txt"), NULL, 0, &err) == 0, "output check");
  done("output.h");
  done("export.h"); /* macros only: every call above went through CHAKRA_API */
  char *paths[NPUS];
  chakra_graph *g;
  write_and_read(paths);
  inspect(paths, &g);
  through_the_set();
  draw(g);
  chakra_graph_free(g);
  simulate();
  produce(paths);
  bindings(paths);
  for (uint32_t r = 0; r < NPUS; r++) free(paths[r]);
  return 0;
}
