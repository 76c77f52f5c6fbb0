/* cmd_replay.c - chakra replay: run a workload's communication and compute
 * over MPI (mpirun -np N chakra replay PREFIX) and measure it. Built only
 * when CMake finds MPI. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chakra/replay.h"
#include "chakra/sim.h"
#include "cli.h"

static const char about[] =
    "Run under MPI: rank r of an N-process job replays PREFIX.r.et (N must be the\n"
    "number of rank files). Nodes issue as chakra sim issues them (dependencies;\n"
    "one CPU, one GPU compute and one GPU communication slot; ascending ids).\n"
    "Collectives become non-blocking MPI collectives on communicators built once\n"
    "from the comm groups or METADATA nodes, sends and receives non-blocking\n"
    "point-to-point calls with their peers and tags, memory nodes copy\n"
    "tensor_size bytes, and compute nodes take their recorded duration while\n"
    "communication progresses. Rank 0 prints chakra sim's result line per rank\n"
    "(1 cycle = 1 ns, measured) and a summary.\n\n"
    "  mpirun -np 8 chakra replay traces/stage --comm-group-configuration groups.json\n";

static const char footer[] =
    "--compute: wait (poll communication through the recorded duration), sleep\n"
    "(sleep through it), skip (no compute time), scale:X (wait X times the duration).\n\n"
    "Exit status: 0 the workload ran; 1 it stalled (every rank's unfinished nodes\n"
    "are printed, then the job is aborted); 2 bad input or a job size that does not\n"
    "match the trace set.\n";

typedef struct replay_args {
  chakra_replay_options o;
  const char *compute, *report;
  int report_format;          /* chakra_run_format */
  int quiet;
  int calibrate;
  chakra_replay_calibrate_options cal;
} replay_args;

static int parse_compute(const char *s, chakra_replay_options *o) {
  char *end;
  if (!s || strcmp(s, "wait") == 0) return o->compute = CHAKRA_REPLAY_WAIT, 0;
  if (strcmp(s, "sleep") == 0) return o->compute = CHAKRA_REPLAY_SLEEP, 0;
  if (strcmp(s, "skip") == 0) return o->compute = CHAKRA_REPLAY_SKIP, 0;
  if (strncmp(s, "scale:", 6) == 0) {
    o->compute = CHAKRA_REPLAY_WAIT;
    o->compute_scale = strtod(s + 6, &end);
    if (end != s + 6 && !*end && o->compute_scale > 0 && o->compute_scale < 1e9) return 0;
  }
  cli_error("--compute: expected wait, sleep, skip or scale:X with X > 0, not '%s'", s);
  return 2;
}

static int parse_replay_args(replay_args *a, int argc, char **argv) {
  static const cli_choice models[] = {{"aware", CHAKRA_NET_AWARE}, {"unaware", CHAKRA_NET_UNAWARE}, {NULL, 0}};
  static const cli_choice kinds[] = {{"Ring", CHAKRA_TOPO_RING}, {"FullyConnected", CHAKRA_TOPO_FULLY_CONNECTED},
                                     {"Switch", CHAKRA_TOPO_SWITCH}, {NULL, 0}};
  chakra_replay_options *o = &a->o;
  chakra_replay_calibrate_options *c = &a->cal;
  o->timeout_s = 60;
  const cli_opt opts[] = {
      {.name = "comm-group-configuration", .alias = "comm-groups", .kind = CLI_OPT_STRING, .dest = &o->comm_groups, .metavar = "GROUPS.json",
       .help = "communicator groups ({\"1\": [0, 1], ...}); pg_name selects one", .file = CLI_FILE_IN},
      {.name = "compute", .kind = CLI_OPT_STRING, .dest = &a->compute, .metavar = "MODE",
       .help = "wait|sleep|skip|scale:X: how compute nodes are stood in for", .def = "wait"},
      {.name = "iterations", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&o->iterations), .min = 1, .max = 1000000,
       .help = "measured runs of the whole workload (--calibrate: of each microbenchmark)", .def = "1; 5"},
      {.name = "warmup", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&o->warmup), .max = 1000000,
       .help = "runs before the measured ones", .def = "0; 1"},
      {.name = "timeout", .kind = CLI_OPT_DOUBLE, .dest = &o->timeout_s, .metavar = "S",
       .help = "give up when no node finished for S seconds and no compute runs, or after waiting S seconds for "
               "the other ranks (0 = never)",
       .def = "60"},
      {.name = "report", .kind = CLI_OPT_STRING, .dest = &a->report, .metavar = "FILE.json",
       .help = "chakra sim's report (per rank, collectives by type, run totals, stuck) with the spread over the "
               "iterations and every collective instance's measured time (docs/report.md)",
       .file = CLI_FILE_OUT},
      {.name = "report-format", .kind = CLI_OPT_CHOICE, .dest = &a->report_format, .choices = cli_report_formats,
       .help = "json: the report document; csv: one row per rank (the report's per-rank figures, a column per "
               "collective type and figure)",
       .def = "json"},
      {.name = "timeline", .kind = CLI_OPT_STRING, .dest = &o->timeline, .metavar = "FILE.json",
       .help = "Chrome trace-event timeline of the last iteration (open in Perfetto)", .file = CLI_FILE_OUT},
      {.name = "no-validate", .kind = CLI_OPT_FLAG, .dest = &o->no_validate,
       .help = "skip the cross-rank validation before the run"},
      {.name = "quiet", .short_name = 'q', .kind = CLI_OPT_FLAG, .dest = &a->quiet, .help = "only errors"},
      {.name = "calibrate", .kind = CLI_OPT_FLAG, .dest = &a->calibrate,
       .help = "no PREFIX: measure point-to-point and collective sweeps over message sizes on the job's ranks and "
               "write the network YAML (-o) whose simulation with --system fits them"},
      {.name = "output", .short_name = 'o', .kind = CLI_OPT_STRING, .dest = &c->output, .metavar = "NET.yml",
       .help = "--calibrate: the network configuration to write", .file = CLI_FILE_OUT},
      {.name = "system-output", .kind = CLI_OPT_STRING, .dest = &c->system_output, .metavar = "SYS.json",
       .help = "--calibrate: also fit the system (local-mem-bw, each collective's implementation) and write it here",
       .file = CLI_FILE_OUT},
      {.name = "system", .alias = "system-configuration", .kind = CLI_OPT_STRING, .dest = &c->system,
       .metavar = "SYS.json", .help = "--calibrate: the system configuration the fit simulates with",
       .file = CLI_FILE_IN},
      {.name = "min-size", .kind = CLI_OPT_SIZE, .dest = CLI_INT(&c->min_bytes), .min = 1, .max = 1u << 30,
       .help = "--calibrate: the smallest message (sizes go up by 4x)", .def = "4K"},
      {.name = "max-size", .kind = CLI_OPT_SIZE, .dest = CLI_INT(&c->max_bytes), .min = 1, .max = 1u << 30,
       .help = "--calibrate: the largest message", .def = "16M"},
      {.name = "fit-from", .kind = CLI_OPT_SIZE, .dest = CLI_INT(&c->fit_min_bytes), .min = 1,
       .help = "--calibrate: fit the collectives of at least this size (smaller ones are reported)", .def = "64K"},
      {.name = "network-model", .kind = CLI_OPT_CHOICE, .dest = &c->network_model, .choices = models,
       .help = "--calibrate: the simulator's network model in the fit", .def = "aware"},
      {.name = "topology", .kind = CLI_OPT_CHOICE, .dest = &c->topology, .choices = kinds,
       .help = "--calibrate: the building block written", .def = "Ring"},
      {0}};
  const cli_command cmd = {.name = "replay", .args = "PREFIX", .min_args = 0, .max_args = 1, .about = about,
                           .footer = footer, .opts = opts, .args_file = CLI_FILE_TRACES, .check_later = 1};
  cli_args pos;
  int st = cli_parse(&cmd, argc, argv, &pos);
  if (st != CLI_PROCEED) return st;
  if (a->calibrate) {
    if (pos.n || !c->output || !c->system) {
      cli_error("--calibrate takes no PREFIX and needs -o NET.yml and --system SYS.json");
      return 2;
    }
    c->iterations = o->iterations, c->warmup = o->warmup;
    return CLI_PROCEED;
  }
  if (!pos.n) {
    cli_error("expected PREFIX (rank r replays PREFIX.r.et), or --calibrate");
    return 2;
  }
  o->workload = pos.v[0];
  if (o->timeout_s < 0) {
    cli_error("--timeout: expected a number of seconds >= 0");
    return 2;
  }
  return parse_compute(a->compute, o) ? 2 : CLI_PROCEED;
}

/* Under mpirun every rank parses the same arguments, before MPI_Init:
 * the launcher's environment says which rank this is, and only rank 0
 * prints what is wrong with them (or the help). */
static int launched_rank(void) {
  static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
  for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
    const char *v = getenv(vars[i]);
    if (v && *v) return atoi(v);
  }
  return -1; /* not started by a launcher */
}

/* A usage error under mpirun: every rank exits with it, but not before
 * rank 0 has printed it; a rank leaving at once with a non-zero status
 * makes mpirun kill the job, rank 0 included, sometimes before its line
 * is written. */
static int usage_exit(int st, int *argc, char ***argv) {
  chakra_error err = {0};
  if (st == 0 || launched_rank() < 0 || chakra_replay_init(argc, argv, &err)) return st;
  int shared = st;
  chakra_replay_share_status(&shared, 60, "rank 0's message on the arguments", &err);
  chakra_replay_finalize();
  return st;
}

static int parse_on_rank(replay_args *a, int argc, char **argv) {
  if (launched_rank() <= 0) return parse_replay_args(a, argc, argv);
  int out = dup(1), err = dup(2), null = open("/dev/null", O_WRONLY);
  if (null >= 0) dup2(null, 1), dup2(null, 2);
  int st = parse_replay_args(a, argc, argv);
  fflush(stdout);
  fflush(stderr);
  if (out >= 0) dup2(out, 1), close(out);
  if (err >= 0) dup2(err, 2), close(err);
  if (null >= 0) close(null);
  return st;
}

/* Several ranks may print at once: one write per line keeps the lines
 * whole where mpirun merges the ranks' stderr. */
static void rank_line(const char *head, const char *msg) {
  char *line = NULL;
  size_t n = 0;
  FILE *m = open_memstream(&line, &n);
  if (!m) return;
  cli_line(m, "chakra replay: ", "%s%s", head, msg);
  if (fclose(m) == 0 && write(2, line, n) < 0) n = 0;
  free(line);
}

/* Warnings and notes ("note: communicator groups from ..."), each under
 * its own word. */
static void on_warning(void *ctx, const chakra_problem *p) {
  (void)ctx;
  char line[1400], head[32];
  chakra_problem_format(p, line, sizeof line);
  snprintf(head, sizeof head, "%s: ", chakra_severity_name(p->severity));
  rank_line(head, line);
}

static void put_line(void *ctx, const char *logger, const char *text) {
  (void)ctx, (void)logger;
  puts(text);
}

static void print_results(const chakra_run_record *r) {
  for (uint32_t k = 0; k < r->npus; k++) chakra_sim_rank_lines(r, k, CHAKRA_SIM_LINE_FINISHED, put_line, NULL);
  uint64_t lo = UINT64_MAX, hi = 0;
  for (uint32_t i = 0; i < r->iterations; i++) {
    if (r->makespan_ns[i] < lo) lo = r->makespan_ns[i];
    if (r->makespan_ns[i] > hi) hi = r->makespan_ns[i];
  }
  printf("replayed %u ranks, %llu nodes, %u iteration(s) after %u warm-up: makespan %.3f us (min) .. %.3f us (max)\n",
         r->npus, (unsigned long long)r->events, r->iterations, r->warmup, (double)lo / 1000.0, (double)hi / 1000.0);
}

static int stalled(const replay_args *a, chakra_replay_result *r) {
  if (r->rank == 0) {
    cli_error("the run stalled (no node finished for %g s) or failed; per rank:", a->o.timeout_s);
    for (uint32_t i = 0; i < r->run.n_stuck; i++) cli_line(stderr, "  ", "%s", r->run.stuck[i]);
    chakra_error err = {0};
    int st = 1;
    if (a->report && chakra_run_write_report(&r->run, a->report, (chakra_run_format)a->report_format, &err))
      st = (cli_error("%s", err.msg), 2);
    cli_outputs_end(st); /* the abort below does not come back */
    fflush(stdout);
    fflush(stderr);
  }
  chakra_replay_abort(r, 1);
  return 1;
}

static const char *coll_name(int coll) {
  switch (coll) {
    case -1: return "point-to-point";
    case 0: return "all_reduce";
    case 2: return "all_gather";
    case 6: return "all_to_all";
    case 7: return "reduce_scatter";
    default: return "?";
  }
}

static void print_calibration(const replay_args *a, const chakra_replay_calibration *k) {
  printf("calibrated on %u ranks: bandwidth %.3f GB/s, latency %.1f ns -> %s\n", k->npus, k->bandwidth_gbps,
         k->latency_ns, a->cal.output);
  if (a->cal.system_output)
    printf("system: local-mem-bw %.6g GB/s; all-reduce %s, all-gather %s, reduce-scatter %s, all-to-all %s -> %s\n",
           k->local_mem_bw, k->implementation[0], k->implementation[1], k->implementation[2], k->implementation[3],
           a->cal.system_output);
  printf("point-to-point (ranks 0 and 1): bandwidth %.3f GB/s, latency %.1f ns\n", k->p2p_bandwidth_gbps,
         k->p2p_latency_ns);
  printf("%-15s %10s %13s %13s %8s %s\n", "measured", "bytes", "measured_us", "predicted_us", "error", "fitted");
  for (uint32_t i = 0; i < k->n_points; i++) {
    const chakra_replay_calibrate_point *p = &k->points[i];
    printf("%-15s %10llu %13.3f %13.3f %+7.1f%% %s\n", coll_name(p->coll), (unsigned long long)p->bytes,
           p->measured_ns / 1000, p->predicted_ns / 1000, 100 * (p->predicted_ns - p->measured_ns) / p->measured_ns,
           p->coll < 0 ? "line" : p->fitted ? "yes" : "no");
  }
}

static int calibrate(replay_args *a) {
  chakra_error err = {0};
  const char *tmp = getenv("TMPDIR");
  a->cal.workdir = tmp && *tmp ? tmp : "/tmp";
  chakra_replay_calibration k;
  int rc = chakra_replay_calibrate(&a->cal, &k, &err);
  if (k.must_abort) {
    if (chakra_replay_world_rank() == 0 || k.must_abort == CHAKRA_REPLAY_ABORT_ALONE) rank_line("", err.msg);
    chakra_replay_abort(NULL, k.must_abort == CHAKRA_REPLAY_ABORT_ALONE ? 2 : 1);
  }
  if (rc && chakra_replay_world_rank() == 0) rank_line("", err.msg);
  if (!rc && chakra_replay_world_rank() == 0 && !a->quiet) print_calibration(a, &k);
  chakra_replay_calibration_free(&k);
  chakra_replay_finalize();
  return rc ? 2 : 0;
}

/* Rank 0 writes every output: it checks them, and says so once; the
 * other ranks take its verdict, waiting for it no longer than --timeout. */
static int check_outputs_once(const replay_args *a) {
  int st = chakra_replay_world_rank() == 0 ? cli_outputs_begin() : 0;
  chakra_error err = {0};
  if (chakra_replay_share_status(&st, a->o.timeout_s, "rank 0 to check the outputs", &err)) {
    rank_line("", err.msg);
    chakra_replay_abort(NULL, CLI_EXIT_ERROR);
  }
  return st;
}

int cmd_replay(int argc, char **argv) {
  replay_args a;
  memset(&a, 0, sizeof a);
  int st = parse_on_rank(&a, argc, argv);
  if (st != CLI_PROCEED) return usage_exit(st, &argc, &argv);
  chakra_error err = {0};
  if (chakra_replay_init(&argc, &argv, &err)) return cli_fail(&err);
  if (check_outputs_once(&a)) {
    chakra_replay_finalize();
    return CLI_EXIT_ERROR;
  }
  if (a.calibrate) return calibrate(&a);
  chakra_replay_result res;
  if (chakra_replay_run(&a.o, &res, on_warning, NULL, &err)) {
    if (err.msg[0]) rank_line("", err.msg);
    if (res.must_abort) chakra_replay_abort(&res, 2);
    chakra_replay_result_free(&res);
    chakra_replay_finalize();
    return 2;
  }
  if (res.must_abort) return stalled(&a, &res);
  int status = 0;
  if (res.rank == 0) {
    if (!a.quiet) print_results(&res.run);
    if (a.report && chakra_run_write_report(&res.run, a.report, (chakra_run_format)a.report_format, &err)) {
      cli_error("%s", err.msg);
      status = 2;
    }
  }
  chakra_replay_result_free(&res);
  chakra_replay_finalize();
  return status;
}
