/* fuzz_sim.h - what the simulator-configuration fuzz targets share
 * (private to tests/fuzz): fixed configuration files for the parts not
 * being fuzzed, a small 4-rank workload that touches every kind of node
 * the configuration steers (compute with and without roofline figures,
 * the four built-in collectives, remote memory, send/receive), and one
 * configuration load followed, when it succeeds, by short runs.
 *
 * A configuration that loads must run without a sanitizer finding: either
 * to the end or to a clean error. Runs are cut after about a million events
 * (the progress callback) so that a legal but enormous configuration
 * (10^6 chunks per collective) costs a bounded time. */
#ifndef CHAKRA_FUZZ_SIM_H
#define CHAKRA_FUZZ_SIM_H

#include <stdio.h>
#include <stdlib.h>

#include "chakra/json.h"
#include "chakra/sim.h"
#include "fuzz_common.h"

#define FUZZ_SIM_NPUS 4

/* The files of the parts held fixed; each is written once. */
static const char fuzz_sim_system[] =
    "{\"scheduling-policy\": \"LIFO\", \"endpoint-delay\": 10, \"active-chunks-per-dimension\": 1,\n"
    " \"preferred-dataset-splits\": 4, \"all-reduce-implementation\": [\"ring\", \"direct\"],\n"
    " \"all-gather-implementation\": [\"ring\", \"ring\"], \"reduce-scatter-implementation\": [\"ring\", \"ring\"],\n"
    " \"all-to-all-implementation\": [\"direct\", \"ring\"], \"collective-optimization\": \"localBWAware\",\n"
    " \"local-mem-bw\": 1600, \"roofline-enabled\": 1, \"peak-perf\": 900}\n";
static const char fuzz_sim_network[] =
    "topology: [ Ring, Switch ]\nnpus_count: [ 2, 2 ]\nbandwidth: [ 50.0, 25.0 ]\nlatency: [ 500.0, 700.0 ]\n";
static const char fuzz_sim_memory[] =
    "{\"memory-type\": \"PER_NPU_MEMORY_EXPANSION\", \"remote-mem-latency\": 100, \"remote-mem-bw\": 10}\n";

static inline const char *fuzz_sim_file(const char *name, const char *text) {
  const char *p = fuzz_out(name);
  if (access(p, F_OK) == 0) return p;
  FILE *f = fopen(p, "w");
  if (!f || fputs(text, f) < 0 || fclose(f)) abort();
  return p;
}

/* A system file like fuzz_sim_system whose implementation lists have one
 * entry per dimension (ring, direct, ring, ...), for a network of `dims`
 * dimensions; written once per dimension count. */
static inline const char *fuzz_sim_system_for(int dims) {
  char name[32], list[8 * 12 + 8] = "", text[1024];
  snprintf(name, sizeof name, "sys%d.json", dims);
  size_t len = 0;
  for (int d = 0; d < dims && d < 8; d++)
    len += (size_t)snprintf(list + len, sizeof list - len, "%s\"%s\"", d ? ", " : "", d % 2 ? "direct" : "ring");
  snprintf(text, sizeof text,
           "{\"scheduling-policy\": \"FIFO\", \"preferred-dataset-splits\": 2, \"collective-optimization\": "
           "\"baseline\", \"local-mem-bw\": 100, \"all-reduce-implementation\": [%s], \"all-gather-implementation\": "
           "[%s], \"reduce-scatter-implementation\": [%s], \"all-to-all-implementation\": [%s]}\n",
           list, list, list, list);
  return fuzz_sim_file(name, text);
}

/* One rank of the workload as JSON Lines for chakra_pack(). */
static inline void fuzz_sim_rank_jsonl(FILE *f, int r) {
  int next = (r + 1) % FUZZ_SIM_NPUS, prev = (r + FUZZ_SIM_NPUS - 1) % FUZZ_SIM_NPUS;
  fprintf(f, "{\"version\":\"0.0.4\"}\n");
  fprintf(f, "{\"id\":\"1\",\"name\":\"c\",\"type\":\"COMP_NODE\",\"duration_micros\":\"5\","
             "\"attr\":[{\"name\":\"is_cpu_op\",\"bool_val\":false},{\"name\":\"num_ops\",\"int64_val\":\"4096\"},"
             "{\"name\":\"tensor_size\",\"uint64_val\":\"1024\"}]}\n");
  static const struct { int id, type, size; } colls[] = {{2, 0, 65536}, {3, 2, 4096}, {4, 7, 8192}, {5, 6, 8192}};
  for (int i = 0; i < 4; i++)
    fprintf(f, "{\"id\":\"%d\",\"name\":\"k%d\",\"type\":\"COMM_COLL_NODE\",\"data_deps\":[\"%d\"],"
               "\"attr\":[{\"name\":\"is_cpu_op\",\"bool_val\":false},{\"name\":\"comm_type\",\"int64_val\":\"%d\"},"
               "{\"name\":\"comm_size\",\"int64_val\":\"%d\"}]}\n",
            colls[i].id, i, i ? 2 : 1, colls[i].type, colls[i].size);
  fprintf(f, "{\"id\":\"6\",\"name\":\"m\",\"type\":\"MEM_LOAD_NODE\",\"data_deps\":[\"1\"],"
             "\"attr\":[{\"name\":\"is_cpu_op\",\"bool_val\":false},{\"name\":\"tensor_size\",\"uint64_val\":\"2048\"}]}\n");
  fprintf(f, "{\"id\":\"7\",\"name\":\"s\",\"type\":\"COMM_SEND_NODE\",\"data_deps\":[\"6\"],"
             "\"attr\":[{\"name\":\"comm_dst\",\"int32_val\":%d},{\"name\":\"comm_tag\",\"int32_val\":3},"
             "{\"name\":\"comm_size\",\"int64_val\":\"1024\"}]}\n", next);
  fprintf(f, "{\"id\":\"8\",\"name\":\"r\",\"type\":\"COMM_RECV_NODE\",\"data_deps\":[\"6\"],"
             "\"attr\":[{\"name\":\"comm_src\",\"int32_val\":%d},{\"name\":\"comm_tag\",\"int32_val\":3},"
             "{\"name\":\"comm_size\",\"int64_val\":\"1024\"}]}\n", prev);
  fprintf(f, "{\"id\":\"9\",\"name\":\"cpu\",\"type\":\"COMP_NODE\",\"duration_micros\":\"2\",\"data_deps\":[\"8\",\"5\"],"
             "\"attr\":[{\"name\":\"is_cpu_op\",\"bool_val\":true}]}\n");
}

/* The workload, written and loaded once for the whole fuzzing process. */
static inline const chakra_sim_workload *fuzz_sim_workload(void) {
  static chakra_sim_workload *w;
  if (w) return w;
  const char *prefix = fuzz_out("w");
  for (int r = 0; r < FUZZ_SIM_NPUS; r++) {
    char jl[700], et[700];
    snprintf(jl, sizeof jl, "%.600s.%d.jsonl", prefix, r);
    snprintf(et, sizeof et, "%.600s.%d.et", prefix, r);
    FILE *f = fopen(jl, "w");
    if (!f) abort();
    fuzz_sim_rank_jsonl(f, r);
    if (fclose(f)) abort();
    chakra_error err;
    if (chakra_pack(jl, et, 0, NULL, NULL, NULL, NULL, &err)) {
      fprintf(stderr, "fuzz_sim: the workload does not pack: %s\n", err.msg);
      abort();
    }
    unlink(jl);
  }
  chakra_error err;
  if (chakra_sim_workload_load(&w, prefix, FUZZ_SIM_NPUS, 1, NULL, NULL, &err)) {
    fprintf(stderr, "fuzz_sim: the workload does not load: %s\n", err.msg);
    abort();
  }
  return w;
}

/* CHAKRA_FUZZ_VERBOSE=1 says what each input did (to check that seeds
 * reach the runs). */
static inline void fuzz_sim_say(const char *what, const chakra_error *err) {
  if (getenv("CHAKRA_FUZZ_VERBOSE")) fprintf(stderr, "fuzz_sim: %s%s%s\n", what, err ? ": " : "", err ? err->msg : "");
}

static inline int fuzz_sim_stop(void *ctx, const char *phase, uint64_t done, uint64_t total) {
  (void)ctx, (void)phase, (void)done, (void)total;
  return 1;
}

/* Formats every problem, as a front end would. */
static inline void fuzz_sim_diag(void *ctx, const chakra_problem *p) {
  (void)ctx;
  char line[1024];
  chakra_problem_format(p, line, sizeof line);
}

static inline void fuzz_sim_line(void *ctx, const char *logger, const char *text) { (void)ctx, (void)logger, (void)text; }

/* Runs the workload on c with both network models; each run either ends
 * or fails cleanly. */
static inline void fuzz_sim_runs(chakra_sim_config *c) {
  if (chakra_topo_npus(chakra_sim_config_topo(c)) != FUZZ_SIM_NPUS) return;
  const chakra_sim_workload *w = fuzz_sim_workload();
  for (int model = 0; model < 2; model++) {
    chakra_sim_config_params(c)->network_model = model ? CHAKRA_NET_UNAWARE : CHAKRA_NET_AWARE;
    chakra_sim_run_options opt = {.diag = fuzz_sim_diag, .progress = fuzz_sim_stop};
    chakra_run_record res;
    chakra_error err;
    int rc = chakra_sim_run(c, w, &opt, &res, &err);
    fuzz_sim_say(rc ? "run failed" : "ran", rc ? &err : NULL);
    if (rc == 0) {
      uint32_t order[FUZZ_SIM_NPUS];
      uint32_t n = chakra_run_finish_order(&res, order);
      for (uint32_t i = 0; i < n; i++)
        chakra_sim_rank_lines(&res, order[i], CHAKRA_SIM_LINE_FINISHED | CHAKRA_SIM_LINE_POST | CHAKRA_SIM_LINE_STATS,
                              fuzz_sim_line, NULL);
      chakra_run_write_report(&res, fuzz_out("report.json"), CHAKRA_RUN_JSON, &err);
    }
    chakra_run_record_free(&res);
  }
}

/* Loads the configuration from files (NULL parts take the fixed files)
 * and runs it when it loads. */
static inline void fuzz_sim_config(const char *system, const char *network, const char *memory) {
  chakra_sim_files files = {
      .system = system ? system : fuzz_sim_file("sys.json", fuzz_sim_system),
      .network = network ? network : fuzz_sim_file("net.yml", fuzz_sim_network),
      .remote_memory = memory ? memory : fuzz_sim_file("mem.json", fuzz_sim_memory),
  };
  chakra_sim_config *c;
  chakra_error err;
  if (chakra_sim_config_load(&c, &files, fuzz_sim_diag, NULL, &err) == 0) {
    fuzz_sim_runs(c);
    chakra_sim_config_free(c);
  } else {
    fuzz_sim_say("not loaded", &err);
  }
}

#endif
