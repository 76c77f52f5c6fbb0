/* cmd_replay.c - chakra replay: run a workload's communication and compute
 * over MPI (mpirun -np N chakra replay PREFIX) and measure it. Built only
 * when CMake finds MPI. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chakra/replay.h"
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
  int quiet;
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
  cli_error("replay: --compute: expected wait, sleep, skip or scale:X with X > 0, not '%s'", s);
  return 2;
}

static int parse_replay_args(replay_args *a, int argc, char **argv) {
  chakra_replay_options *o = &a->o;
  o->iterations = 1;
  o->timeout_s = 60;
  const cli_opt opts[] = {
      {.name = "comm-group-configuration", .kind = CLI_OPT_STRING, .dest = &o->comm_groups, .metavar = "GROUPS.json",
       .help = "communicator groups ({\"1\": [0, 1], ...}); pg_name selects one"},
      {.name = "compute", .kind = CLI_OPT_STRING, .dest = &a->compute, .metavar = "MODE",
       .help = "wait|sleep|skip|scale:X: how compute nodes are stood in for", .def = "wait"},
      {.name = "iterations", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&o->iterations), .min = 1, .max = 1000000,
       .help = "measured runs of the whole workload", .def = "1"},
      {.name = "warmup", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&o->warmup), .max = 1000000,
       .help = "runs before the measured ones", .def = "0"},
      {.name = "timeout", .kind = CLI_OPT_DOUBLE, .dest = &o->timeout_s, .metavar = "S",
       .help = "give up when no node finished for S seconds and no compute runs (0 = never)", .def = "60"},
      {.name = "report", .kind = CLI_OPT_STRING, .dest = &a->report, .metavar = "FILE.json",
       .help = "chakra sim's report (per rank, collectives by type, run totals, stuck) with the spread over the "
               "iterations and every collective instance's measured time"},
      {.name = "timeline", .kind = CLI_OPT_STRING, .dest = &o->timeline, .metavar = "FILE.json",
       .help = "Chrome trace-event timeline of the last iteration (open in Perfetto)"},
      {.name = "no-validate", .kind = CLI_OPT_FLAG, .dest = &o->no_validate,
       .help = "skip the cross-rank validation before the run"},
      {.name = "quiet", .short_name = 'q', .kind = CLI_OPT_FLAG, .dest = &a->quiet, .help = "only errors"},
      {0}};
  const cli_command cmd = {.name = "replay", .args = "PREFIX", .min_args = 1, .max_args = 1, .about = about,
                           .footer = footer, .opts = opts};
  cli_args pos;
  int st = cli_parse(&cmd, argc, argv, &pos);
  if (st != CLI_PROCEED) return st;
  o->workload = pos.v[0];
  if (o->timeout_s < 0) {
    cli_error("replay: --timeout: expected a number of seconds >= 0");
    return 2;
  }
  return parse_compute(a->compute, o) ? 2 : CLI_PROCEED;
}

/* Every rank may print the same error at once: one write per line keeps
 * the lines whole where mpirun merges the ranks' stderr. */
static void rank_line(const char *head, const char *msg) {
  char line[1600];
  int n = snprintf(line, sizeof line, "chakra: %s%s\n", head, msg);
  if (n > (int)sizeof line - 1) n = (int)sizeof line - 1;
  if (write(2, line, (size_t)n) < 0) return;
}

static void on_warning(void *ctx, const chakra_problem *p) {
  (void)ctx;
  char line[1400];
  chakra_problem_format(p, line, sizeof line);
  rank_line("warning: replay: ", line);
}

static void print_results(const chakra_replay_result *r) {
  for (uint32_t k = 0; k < r->npus; k++)
    printf("sys[%u] finished, %llu cycles, exposed communication %llu cycles.\n", k,
           (unsigned long long)r->ranks[k].finish_ns, (unsigned long long)r->ranks[k].exposed_comm_ns);
  uint64_t lo = UINT64_MAX, hi = 0;
  for (uint32_t i = 0; i < r->iterations; i++) {
    if (r->makespan_ns[i] < lo) lo = r->makespan_ns[i];
    if (r->makespan_ns[i] > hi) hi = r->makespan_ns[i];
  }
  printf("replayed %u ranks, %llu nodes, %u iteration(s) after %u warm-up: makespan %.3f us (min) .. %.3f us (max)\n",
         r->npus, (unsigned long long)r->nodes, r->iterations, r->warmup, (double)lo / 1000.0, (double)hi / 1000.0);
}

static int stalled(const replay_args *a, chakra_replay_result *r) {
  if (r->rank == 0) {
    cli_error("replay: the run stalled (no node finished for %g s) or failed; per rank:", a->o.timeout_s);
    for (uint32_t i = 0; i < r->n_stuck; i++) fprintf(stderr, "  %s\n", r->stuck[i]);
    chakra_error err = {0};
    if (a->report && chakra_replay_write_report(r, a->report, &err)) cli_error("%s", err.msg);
    fflush(stdout);
    fflush(stderr);
  }
  chakra_replay_abort(r, 1);
  return 1;
}

int cmd_replay(int argc, char **argv) {
  replay_args a;
  memset(&a, 0, sizeof a);
  int st = parse_replay_args(&a, argc, argv);
  if (st != CLI_PROCEED) return st;
  chakra_error err = {0};
  if (chakra_replay_init(&argc, &argv, &err)) return cli_fail(&err);
  chakra_replay_result res;
  if (chakra_replay_run(&a.o, &res, on_warning, NULL, &err)) {
    if (err.msg[0]) rank_line("", err.msg);
    chakra_replay_result_free(&res);
    chakra_replay_finalize();
    return 2;
  }
  if (res.must_abort) return stalled(&a, &res);
  int status = 0;
  if (res.rank == 0) {
    if (!a.quiet) print_results(&res);
    if (a.report && chakra_replay_write_report(&res, a.report, &err)) {
      cli_error("%s", err.msg);
      status = 2;
    }
  }
  chakra_replay_result_free(&res);
  chakra_replay_finalize();
  return status;
}
