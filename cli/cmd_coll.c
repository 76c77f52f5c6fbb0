/* cmd_coll.c - chakra coll: collective algorithms as per-rank ETs
 * (generate, synthesise for a topology, convert from MSCCL-IR XML, check,
 * expand into workloads). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "chakra/build.h"
#include "chakra/coll.h"
#include "chakra/sim.h"
#include "chakra/version.h"
#include "cli.h"
#include "progress.h"

static const char gen_about[] =
    "Collective algorithms as Chakra ETs: one file per rank, PREFIX.<r>.et, a DAG\n"
    "of COMM_SEND, COMM_RECV and COMP nodes (r = position in the communicator).\n"
    "gen writes a standard algorithm: ring (AR RS AG), direct (AR RS AG A2A),\n"
    "hd (AR RS AG), tree (AR) or dbt (AR); hd, tree and dbt need a power-of-two\n"
    "--ranks. Details and worked examples: docs/coll.md\n";
static const char msccl_about[] = "Converts MSCCL-IR XML (every step type; deterministic tags).\n";
static const char check_about[] =
    "Send/receive matching, peers, cycles, completion; exit 1 on problems.\n";
static const char expand_about[] =
    "Replaces each COMM_COLL node by its rank's copy of an algorithm. A rule\n"
    "[COLL][:MIN-MAX][@PG]=ALGO: ALGO is a generated algorithm's name or a prefix\n"
    "of algorithm ETs; COLL, a comm_size range (64K-1M) and a pg_name restrict it;\n"
    "the first match wins.\n";

#define REDUCE_BW_OPT(to)                                                                                    \
  {.name = "reduce-bw", .kind = CLI_OPT_DOUBLE, .dest = (to), .metavar = "GBPS",                             \
   .help = "GB/s of reductions (COMP nodes 3 * bytes / bw ns); 0 = no COMP nodes", .def = "50"}
#define THREADS_OPT(to)                                                                                      \
  {.name = "threads", .kind = CLI_OPT_COUNT, .dest = CLI_INT(to), .min = 1, .max = 64,                          \
   .help = "ranks made at once (the files are the same whatever the count)", .def = "CPUs, at most 8"}
#define QUIET_OPT(to) {.name = "quiet", .short_name = 'q', .kind = CLI_OPT_FLAG, .dest = (to), .help = "no progress line"}
#define OUTPUT_OPT(to)                                                                                       \
  {.name = "output", .alias = "out", .short_name = 'o', .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED,     \
   .dest = (to), .metavar = "PREFIX", .help = "output prefix", .file = CLI_FILE_OUT_PREFIX}

/* --reduce-bw is a DOUBLE; only the sign is left to check. */
static int reduce_bw_ok(double bw) {
  if (bw >= 0 && bw <= 1e12) return 1;
  cli_error("--reduce-bw: expected GB/s from 0 to 1e12, got %g", bw);
  return 0;
}

static int coll_gen(int argc, char **argv) {
  chakra_coll_gen_options g = {.reduce_bw = CHAKRA_COLL_DEFAULT_REDUCE_BW, .chunks = 1};
  const char *prefix = NULL, *coll = NULL, *algo = NULL;
  int quiet = 0;
  const cli_opt opts[] = {
      {.name = "coll", .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED, .dest = &coll, .metavar = "COLL",
       .help = "allreduce, allgather, reducescatter or alltoall"},
      {.name = "algo", .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED, .dest = &algo, .metavar = "ALGO",
       .help = "ring, direct, hd, tree or dbt"},
      {.name = "ranks", .alias = "npus", .kind = CLI_OPT_COUNT, .flags = CLI_OPT_REQUIRED, .dest = CLI_INT(&g.ranks),
       .min = 1, .help = "rank count"},
      {.name = "size", .kind = CLI_OPT_SIZE, .flags = CLI_OPT_REQUIRED, .dest = CLI_INT(&g.size),
       .max = CHAKRA_COLL_MAX_SIZE,
       .help = "bytes: the whole buffer, or the per-rank input for allgather; K, M, G suffixes are binary"},
      {.name = "chunks", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&g.chunks), .min = 1, .max = 32767, .metavar = "C",
       .help = "independent pipelines (tags offset by chunk * 65536)", .def = "1"},
      REDUCE_BW_OPT(&g.reduce_bw),
      THREADS_OPT(&g.threads),
      QUIET_OPT(&quiet),
      OUTPUT_OPT(&prefix),
      {0}};
  const cli_command cmd = {.name = "coll gen", .max_args = 0, .about = gen_about, .opts = opts};
  cli_args pos;
  int st = cli_parse(&cmd, argc, argv, &pos);
  if (st != CLI_PROCEED) return st;
  if (!reduce_bw_ok(g.reduce_bw)) return 2;
  int t = chakra_coll_type_parse(coll), a = chakra_coll_algo_parse(algo);
  if (t < 0) {
    cli_error("--coll: expected allreduce, allgather, reducescatter or alltoall, got '%s'", coll);
    return 2;
  }
  if (a < 0) {
    cli_error("--algo: expected ring, direct, hd, tree or dbt, got '%s'", algo);
    return 2;
  }
  g.coll = (chakra_coll_type)t;
  g.algo = (chakra_coll_algo)a;
  chakra_error err = {0};
  if (chakra_coll_gen_check(&g, &err)) {
    cli_error("%s", err.msg);
    return 2;
  }
  cli_progress bar;
  g.progress = cli_progress_start(&bar, quiet, "ranks", &g.progress_ctx);
  int failed = chakra_coll_gen(prefix, &g, &err);
  cli_progress_end(&bar);
  return failed ? cli_fail(&err) : 0;
}

static int coll_from_msccl(int argc, char **argv) {
  chakra_coll_msccl_options m = {.reduce_bw = CHAKRA_COLL_DEFAULT_REDUCE_BW,
                                 .producer = "chakra-c " CHAKRA_VERSION_STRING " coll from-msccl"};
  const char *prefix = NULL;
  int quiet = 0;
  const cli_opt opts[] = {
      {.name = "size", .alias = "coll-size", .kind = CLI_OPT_SIZE, .flags = CLI_OPT_REQUIRED,
       .dest = CLI_INT(&m.size), .max = CHAKRA_COLL_MAX_SIZE, .help = "the collective's size, as for gen"},
      REDUCE_BW_OPT(&m.reduce_bw),
      {.name = "compat", .kind = CLI_OPT_FLAG, .dest = &m.compat,
       .help = "the 2025-04 reference converter's bytes exactly"},
      {.name = "embed-xml", .kind = CLI_OPT_FLAG, .dest = &m.embed_xml,
       .help = "store the whole XML in every file (the reference's input_file)"},
      THREADS_OPT(&m.threads),
      QUIET_OPT(&quiet),
      OUTPUT_OPT(&prefix),
      {0}};
  const cli_command cmd = {.name = "coll from-msccl", .args = "X.xml", .min_args = 1, .max_args = 1,
                           .about = msccl_about, .opts = opts, .args_file = CLI_FILE_IN};
  cli_args pos;
  int st = cli_parse(&cmd, argc, argv, &pos);
  if (st != CLI_PROCEED) return st;
  if (!reduce_bw_ok(m.reduce_bw)) return 2;
  chakra_error err = {0};
  cli_progress bar;
  m.progress = cli_progress_start(&bar, quiet, "ranks", &m.progress_ctx);
  int failed = chakra_coll_from_msccl(pos.v[0], prefix, &m, &err);
  cli_progress_end(&bar);
  return failed ? cli_fail(&err) : 0;
}

static const char synth_about[] =
    "Synthesises a topology-aware algorithm (greedy link-chunk matching, TACOS\n"
    "style; one chunk per link at a time) and prints its collective time on the\n"
    "topology. Reduce-Scatter is the All-Gather of the reversed links run backwards\n"
    "with reductions; All-Reduce is Reduce-Scatter then All-Gather. --topology is\n"
    "inline (mesh:8x8, mesh:4x4x4, torus:8x8, hypercube:64, ring:8, switch:16,\n"
    "fc:8) or a link-list file (docs/topology.md).\n";

/* A double in [lo, hi], or one line naming the option. */
static int double_in(const char *opt, double v, double lo, double hi) {
  if (v >= lo && v <= hi) return 1;
  cli_error("--%s: expected a number from %g to %g, got %g", opt, lo, hi, v);
  return 0;
}

static int coll_synth(int argc, char **argv) {
  chakra_coll_synth_options so = {.reduce_bw = CHAKRA_COLL_DEFAULT_REDUCE_BW, .chunks_per_npu = 1,
                                  .bandwidth_gbps = 50, .latency_ns = 500,
                                  .producer = "chakra-c " CHAKRA_VERSION_STRING " coll synth"};
  const char *prefix = NULL, *coll = NULL;
  int json = 0, quiet = 0;
  const cli_opt opts[] = {
      {.name = "topology", .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED, .dest = &so.topology, .metavar = "T",
       .help = "inline KIND:SHAPE (mesh:8x8, torus:8x8, hypercube:64, ring:8, switch:16, fc:8) or a link-list file",
       .file = CLI_FILE_IN},
      {.name = "coll", .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED, .dest = &coll, .metavar = "COLL",
       .help = "allgather, reducescatter or allreduce"},
      {.name = "size", .kind = CLI_OPT_SIZE, .flags = CLI_OPT_REQUIRED, .dest = CLI_INT(&so.size),
       .help = "bytes, as for gen: the per-NPU input for allgather, the whole buffer otherwise; K, M, G binary"},
      {.name = "chunks-per-npu", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&so.chunks_per_npu), .min = 1,
       .max = 1u << 26, .metavar = "C", .help = "chunks each NPU's share is cut into", .def = "1"},
      {.name = "seed", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&so.seed), .metavar = "S",
       .help = "the matcher's random ties (the same seed, the same files)", .def = "0"},
      {.name = "bandwidth", .kind = CLI_OPT_DOUBLE, .flags = CLI_OPT_POSITIVE, .dest = &so.bandwidth_gbps,
       .metavar = "GBPS", .help = "per link of an inline topology, GB/s with GB = 2^30 (the simulator's)",
       .def = "50"},
      {.name = "latency", .kind = CLI_OPT_DOUBLE, .dest = &so.latency_ns, .metavar = "NS",
       .help = "per link of an inline topology", .def = "500"},
      REDUCE_BW_OPT(&so.reduce_bw),
      {.name = "output", .alias = "out", .short_name = 'o', .kind = CLI_OPT_STRING, .dest = &prefix,
       .metavar = "PREFIX", .help = "write the per-rank algorithm ETs PREFIX.<r>.et", .def = "none",
       .file = CLI_FILE_OUT_PREFIX},
      {.name = "xml", .kind = CLI_OPT_STRING, .dest = &so.xml_path, .metavar = "FILE",
       .help = "write the algorithm as MSCCL-IR XML (coll from-msccl reads it back to the same ETs)",
       .def = "none", .file = CLI_FILE_OUT},
      {.name = "json", .kind = CLI_OPT_FLAG, .dest = &json, .help = "print one JSON object instead of text"},
      THREADS_OPT(&so.threads),
      QUIET_OPT(&quiet),
      {.name = "max-memory", .kind = CLI_OPT_SIZE, .dest = CLI_INT(&so.max_memory), .metavar = "BYTES",
       .help = "refuse at once a synthesis estimated to need more (K, M, G binary)",
       .def = "what the process may use: physical memory, ulimit, cgroup"},
      {.name = "max-steps", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&so.max_steps), .min = 1, .metavar = "N",
       .help = "refuse at once a synthesis estimated to take more steps (about 100 million a second)",
       .def = "10000000000, about 100 seconds"},
      {0}};
  const cli_command cmd = {.name = "coll synth", .max_args = 0, .about = synth_about, .opts = opts};
  cli_args pos;
  int st = cli_parse(&cmd, argc, argv, &pos);
  if (st != CLI_PROCEED) return st;
  if (!reduce_bw_ok(so.reduce_bw) || !double_in("bandwidth", so.bandwidth_gbps, 1e-6, 1e12) ||
      !double_in("latency", so.latency_ns, 0, 1e15))
    return 2;
  int t = chakra_coll_type_parse(coll);
  if (t != CHAKRA_COLL_ALLGATHER && t != CHAKRA_COLL_REDUCESCATTER && t != CHAKRA_COLL_ALLREDUCE) {
    cli_error("--coll: expected allgather, reducescatter or allreduce, got '%s'", coll);
    return 2;
  }
  so.coll = (chakra_coll_type)t;
  chakra_error err = {0};
  if (chakra_coll_synth_check(&so, &err)) {
    cli_error("%s", err.msg);
    return 2;
  }
  chakra_coll_synth_result r;
  cli_progress bar;
  so.progress = cli_progress_start(&bar, quiet, "transfers", &so.progress_ctx);
  int failed = chakra_coll_synth(prefix, &so, &r, &err);
  cli_progress_end(&bar);
  if (failed) return cli_fail(&err);
  double out_bytes = (double)r.chunk_bytes * (double)r.chunks; /* the output buffer the chunks fill */
  uint64_t moved = r.chunk_bytes * (so.coll == CHAKRA_COLL_ALLGATHER ? r.chunks / r.npus : r.chunks);
  double algbw = r.collective_time_ns ? out_bytes / (double)r.collective_time_ns : 0;
  if (json) {
    printf("{\"collective\": \"%s\", \"npus\": %u, \"size\": %llu, \"chunks_per_npu\": %u, \"chunks\": %llu, "
           "\"chunk_bytes\": %llu, \"moved_bytes\": %llu, \"seed\": %llu, \"links\": %llu, \"messages\": %llu, \"collective_time_ns\": %llu, "
           "\"algbw_GBps\": %.3f, \"synthesis_seconds\": %.6f}\n",
           chakra_coll_type_name(so.coll), r.npus, (unsigned long long)so.size, so.chunks_per_npu,
           (unsigned long long)r.chunks, (unsigned long long)r.chunk_bytes, (unsigned long long)moved,
           (unsigned long long)so.seed,
           (unsigned long long)r.links, (unsigned long long)r.messages, (unsigned long long)r.collective_time_ns,
           algbw, r.synthesis_seconds);
  } else {
    printf("%s on %u NPUs (%llu links): %llu chunks of %llu bytes, %llu messages\n", chakra_coll_type_name(so.coll),
           r.npus, (unsigned long long)r.links, (unsigned long long)r.chunks, (unsigned long long)r.chunk_bytes,
           (unsigned long long)r.messages);
    printf("collective time %llu ns (%.1f GB/s algorithmic), synthesised in %.3f s\n",
           (unsigned long long)r.collective_time_ns, algbw, r.synthesis_seconds);
    if (moved != so.size)
      printf("size %llu is not a multiple of its %llu chunks: chunk bytes rounded down as TACOS does, %llu bytes "
             "moved\n", (unsigned long long)so.size, (unsigned long long)(moved / r.chunk_bytes),
             (unsigned long long)moved);
  }
  return 0;
}

/* coll check's lines: problems as they are, warnings (which leave a set
 * sound) marked so. */
static void print_problem(void *ctx, const chakra_problem *p) {
  char line[2048], what[1024];
  chakra_problem w = *p;
  if (p->severity == CHAKRA_SEV_WARNING) {
    snprintf(what, sizeof what, "warning: %s", p->what ? p->what : "");
    w.what = what;
  }
  chakra_problem_format(&w, line, sizeof line);
  cli_progress_clear(); /* a terminal shows stdout and stderr on one screen */
  fprintf((FILE *)ctx, "%s\n", line);
}

static void warn_problem(void *ctx, const chakra_problem *p) {
  (void)ctx;
  char line[2048];
  chakra_problem_format(p, line, sizeof line);
  if (p->severity == CHAKRA_SEV_NOTE) cli_note("%s", line);
  else cli_warn("%s", line);
}

/* The reductions' bandwidth: --reduce-bw if given (not NaN, which the
 * parser never stores), else the system file's local-mem-bw (what chakra
 * sim will charge), else the default. */
static int expand_reduce_bw(double given, const char *system, double *out) {
  *out = !isnan(given) ? given : CHAKRA_COLL_DEFAULT_REDUCE_BW;
  if (!isnan(given) || !system) return 0;
  chakra_error err = {0};
  return chakra_sim_system_local_mem_bw(system, out, warn_problem, NULL, &err) ? cli_fail(&err) : 0;
}

/* The algorithm ETs a rule names (ALGO that is not a generated
 * algorithm's name) are read too; rules that do not parse are refused
 * later, naming the rule. */
static void expand_files(void *ctx, const cli_args *pos) {
  (void)pos;
  const cli_list *algos = ctx;
  for (size_t i = 0; i < algos->n; i++) {
    chakra_coll_rule r;
    chakra_error err = {0};
    if (!chakra_coll_rule_parse(algos->items[i], &r, &err) && r.prefix) cli_files_traces(r.prefix);
  }
}

static int coll_expand(int argc, char **argv) {
  chakra_coll_expand_options x = {.reduce_bw = NAN, .diag = warn_problem,
                                  .producer = "chakra-c " CHAKRA_VERSION_STRING " coll expand"};
  const char *out = NULL, *system = NULL;
  int quiet = 0;
  cli_list algos = {0};
  const cli_opt opts[] = {
      {.name = "algo", .kind = CLI_OPT_LIST, .flags = CLI_OPT_REQUIRED, .dest = &algos,
       .metavar = "[COLL][:MIN-MAX][@PG]=ALGO", .help = "a rule; the first match wins"},
      {.name = "comm-group-configuration", .alias = "comm-groups", .kind = CLI_OPT_STRING, .dest = &x.comm_groups,
       .metavar = "GROUPS.json", .help = "communicator groups (ASTRA-sim JSON); PyTorch METADATA nodes are read too",
       .file = CLI_FILE_IN},
      {.name = "reduce-bw", .kind = CLI_OPT_DOUBLE, .dest = &x.reduce_bw, .metavar = "GBPS",
       .help = "GB/s of reductions (COMP nodes 3 * bytes / bw ns); 0 = no COMP nodes",
       .def = "the system file's local-mem-bw, else 50"},
      {.name = "system-configuration", .alias = "system", .kind = CLI_OPT_STRING, .dest = &system,
       .metavar = "SYS.json", .help = "cost reductions at its local-mem-bw, as chakra sim with it will",
       .file = CLI_FILE_IN},
      {.name = "overlap", .kind = CLI_OPT_FLAG, .dest = &x.overlap,
       .help = "split each compute node that consumes an all-gather or all-reduce into one piece per chunk "
               "received in its final phase, plus the local piece and a join (a reduce-scatter's consumer waits "
               "for its own chunk only)"},
      {.name = "custom-collective-scaling", .kind = CLI_OPT_CHOICE,
       .dest = &x.custom_as_is, .choices = cli_scaling_choices,
       .help = "scale: algorithm ETs (a prefix) have their messages multiplied by the collective's size / the size "
               "they were made for (their \"size\" metadata), rounded down, and reductions re-costed; as-is: "
               "they are copied as made. Either way a size or collective other than the ETs' is warned about",
       .def = "scale"},
      THREADS_OPT(&x.threads),
      QUIET_OPT(&quiet),
      {.name = "output", .alias = "out", .short_name = 'o', .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED,
       .dest = &out, .metavar = "PREFIX",
       .help = "output prefix: OUT.<r>.et, or for a shared workload (a grid) the shared form, OUT.set.json and "
               "OUT.class<k>.et", .file = CLI_FILE_OUT_PREFIX},
      {0}};
  /* the output is the shared form when the workload is (known once it is open) */
  const cli_command cmd = {.name = "coll expand", .args = "WORKLOAD_PREFIX", .min_args = 1, .max_args = 1,
                           .about = expand_about, .opts = opts, .args_file = CLI_FILE_TRACES,
                           .files = expand_files, .files_ctx = &algos, .check_later = 1};
  cli_args pos;
  int rc = cli_parse(&cmd, argc, argv, &pos);
  chakra_coll_rule *rules = NULL;
  chakra_error err = {0};
  if (rc != CLI_PROCEED) goto done;
  rc = 2;
  if (!isnan(x.reduce_bw) && !reduce_bw_ok(x.reduce_bw)) goto done;
  uint64_t nodes = 0;
  chakra_set_options so = {.comm_groups = x.comm_groups};
  cli_progress bar;
  x.progress = cli_progress_start(&bar, quiet, "ranks", &x.progress_ctx);
  so.progress = x.progress, so.progress_ctx = x.progress_ctx; /* its reading pass: ranks loaded */
  chakra_set *in = cli_open_set(1, pos.v, &so);
  if (!in) goto done;
  const chakra_manifest *man = chakra_set_manifest(in);
  if (man && chakra_manifest_kind(man) == CHAKRA_MANIFEST_GRID) cli_files_shared(out, "--output");
  if (cli_outputs_begin()) {
    rc = CLI_EXIT_ERROR;
    goto close;
  }
  if ((rc = expand_reduce_bw(x.reduce_bw, system, &x.reduce_bw)) != 0) goto close;
  rc = 2;
  if (!(rules = calloc(algos.n, sizeof *rules))) {
    rc = cli_fail(&err);
    goto close;
  }
  for (size_t i = 0; i < algos.n; i++, x.n_rules++)
    if (chakra_coll_rule_parse(algos.items[i], &rules[i], &err)) {
      cli_error("%s", err.msg);
      goto close;
    }
  x.rules = rules;
  int failed = chakra_coll_expand_set(in, out, &x, &nodes, &err);
  cli_progress_end(&bar);
  rc = failed ? cli_fail(&err) : 0;
  if (!rc) cli_note_groups(in);
close:
  chakra_set_close(in);
done:
  free(rules);
  cli_list_free(&algos);
  return rc;
}

static int coll_check(int argc, char **argv) {
  int quiet = 0;
  const cli_opt opts[] = {QUIET_OPT(&quiet), {0}};
  const cli_command cmd = {.name = "coll check", .args = "PREFIX|FILES...", .min_args = 1, .max_args = -1,
                           .about = check_about, .opts = opts, .args_file = CLI_FILE_TRACES};
  cli_args pos;
  int st = cli_parse(&cmd, argc, argv, &pos);
  if (st != CLI_PROCEED) return st;
  chakra_set_options so = {0};
  cli_progress bar;
  so.progress = cli_progress_start(&bar, quiet, "ranks loaded", &so.progress_ctx);
  chakra_set *set = cli_open_set(pos.n, pos.v, &so);
  if (!set) return 2;
  int n = (int)chakra_set_ranks(set);
  chakra_error err = {0};
  uint64_t problems = 0;
  int rc = chakra_coll_check_set(set, print_problem, stdout, &problems, &err);
  cli_progress_end(&bar);
  chakra_set_close(set);
  if (rc) return cli_fail(&err);
  if (problems) {
    printf("%d file(s): %llu problem(s)\n", n, (unsigned long long)problems);
    return 1;
  }
  printf("%d file(s): sound (every message matched, acyclic, completes)\n", n);
  return 0;
}

int cmd_coll(int argc, char **argv) {
  static const cli_mode modes[] = {
      {"gen", coll_gen},       {"from-msccl", coll_from_msccl}, {"check", coll_check},
      {"expand", coll_expand}, {"synth", coll_synth}};
  return cli_run_mode("coll", modes, sizeof modes / sizeof *modes, argc, argv);
}
