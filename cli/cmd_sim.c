/* cmd_sim.c - chakra sim: ASTRA-sim-compatible simulation of per-rank ETs. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "chakra/attr.h"
#include "chakra/build.h"
#include "chakra/sim.h"
#include "cli.h"
#include "progress.h"

static const char about[] =
    "Simulates the per-rank traces PREFIX.0.et .. PREFIX.<N-1>.et (N = product of the\n"
    "network's npus_count) on the modelled system and prints, per rank, the line\n"
    "ASTRA-sim prints:  sys[R] finished, T cycles, exposed communication E cycles.\n"
    "followed by its statistics lines (with roofline-enabled, also the compute-bound\n"
    "percentage, average compute and memory utilisation and operation intensity,\n"
    "weighted by compute node duration). 1 cycle = 1 ns. Options take '=VALUE' or a\n"
    "separate argument.\n";

static const char footer[] =
    "Exit status: 0 when every rank finished; 1 when some could not (a report of\n"
    "the stuck ranks and unmatched messages goes to stderr); 2 bad input.\n";

/* What the options ask for; handed to the library's three parts in run(). */
typedef struct sim_options {
  const char *workload, *system, *network, *remote_memory, *comm_groups;
  int network_model;
  uint32_t queues_per_dim;
  double injection_scale;
  int rendezvous, multidim_full, custom_as_is, symmetry;
  const char *timeline, *logging_folder, *link_report;
  uint32_t load_threads;
  int quiet; /* -q: no progress line either */
} sim_options;

typedef struct sim_args {
  sim_options o;
  int quiet, summary;
  const char *report;
  int report_format;          /* chakra_run_format */
  const char *no_effect[3]; /* ASTRA-sim options accepted and ignored */
} sim_args;

static const char *const no_effect_names[3] = {"logging-configuration", "comm-scale", "compute-scale"};

/* --logging-folder DIR writes DIR/log.log and DIR/err.log. */
static void logging_files(void *ctx, const cli_args *pos) {
  (void)pos;
  const sim_options *o = ctx;
  if (!o->logging_folder) return;
  static const char *const names[] = {"log.log", "err.log"};
  for (int i = 0; i < 2; i++) {
    size_t n = strlen(o->logging_folder) + strlen(names[i]) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", o->logging_folder, names[i]);
    cli_files_output_mkdir(p, "--logging-folder");
    free(p);
  }
}

/* Fills a from argv; returns CLI_PROCEED or the exit status. */
static int parse_sim_args(sim_args *a, int argc, char **argv) {
  static const cli_choice models[] = {{"aware", CHAKRA_NET_AWARE}, {"unaware", CHAKRA_NET_UNAWARE}, {NULL, 0}};
  static const cli_choice bools[] = {{"true", 1}, {"false", 0}, {"1", 1}, {"0", 0}, {NULL, 0}};
  static const cli_choice multidim[] = {{"lowest", 0}, {"full", 1}, {NULL, 0}};
  static const char no_effect[] = "accepted for ASTRA-sim compatibility; no effect";
  sim_options *o = &a->o;
  const cli_opt opts[] = {
      {.name = "workload-configuration", .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED, .dest = &o->workload,
       .metavar = "PREFIX", .help = "trace prefix", .file = CLI_FILE_TRACES},
      {.name = "system-configuration", .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED, .dest = &o->system,
       .metavar = "SYS.json", .help = "system JSON", .file = CLI_FILE_IN},
      {.name = "network-configuration", .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED, .dest = &o->network,
       .metavar = "NET", .help = "network: ASTRA-sim's YAML (also Mesh dimensions), a link-list file or an inline "
                                 "topology such as mesh:8x8@50,500 (GB/s, ns per link); docs/topology.md",
       .file = CLI_FILE_IN},
      {.name = "remote-memory-configuration", .kind = CLI_OPT_STRING, .dest = &o->remote_memory,
       .metavar = "MEM.json", .help = "remote memory JSON", .def = "none", .file = CLI_FILE_IN},
      {.name = "comm-group-configuration", .alias = "comm-groups", .kind = CLI_OPT_STRING, .dest = &o->comm_groups,
       .metavar = "GROUPS.json", .help = "communicator groups JSON", .file = CLI_FILE_IN},
      {.name = "network-model", .kind = CLI_OPT_CHOICE, .dest = &o->network_model, .choices = models,
       .help = "congestion-aware or -unaware network", .def = "aware"},
      {.name = "num-queues-per-dim", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&o->queues_per_dim), .min = 1,
       .max = 64, .help = "scheduling queues per dimension", .def = "1"},
      {.name = "injection-scale", .kind = CLI_OPT_DOUBLE, .flags = CLI_OPT_POSITIVE, .dest = &o->injection_scale,
       .help = "multiplies endpoint-delay", .def = "1"},
      {.name = "rendezvous-protocol", .kind = CLI_OPT_CHOICE, .dest = &o->rendezvous, .choices = bools,
       .metavar = "BOOL", .help = "true|false: the receiver sends an 8 KiB invitation before each send",
       .def = "false"},
      {.name = "multidim-p2p", .kind = CLI_OPT_CHOICE, .dest = &o->multidim_full, .choices = multidim,
       .help = "lowest: as ASTRA-sim, a message between NPUs that differ in several dimensions is charged the "
               "lowest one only; full: all of them",
       .def = "lowest"},
      {.name = "custom-collective-scaling", .kind = CLI_OPT_CHOICE,
       .dest = &o->custom_as_is, .choices = cli_scaling_choices,
       .help = "scale: a custom collective's messages and compute times are multiplied by the collective's size / "
               "the size its ETs were made for (their \"size\" metadata), rounded down; as-is: they run as made, "
               "as in ASTRA-sim. Either way a size or collective other than the ETs' is warned about",
       .def = "scale"},
      {.name = "symmetry", .kind = CLI_OPT_CHOICE, .dest = &o->symmetry, .choices = cli_symmetry_choices,
       .help = "auto: when ranks of a class (same graph, other groups and peers) are shown to run alike, simulate "
               "one NPU per class and report every rank from it (docs/sim.md says when); off: simulate every NPU",
       .def = "auto"},
      {.name = "logging-folder", .kind = CLI_OPT_STRING, .dest = &o->logging_folder, .metavar = "DIR",
       .help = "write ASTRA-sim's DIR/log.log (the result and statistics lines with its [time] [logger] [level] "
               "heads, then 'Exiting'; with trace-enabled in the system config also one issue and one callback "
               "line per node) and an empty DIR/err.log; DIR is created"},
      {.name = "logging-configuration", .kind = CLI_OPT_STRING, .dest = &a->no_effect[0], .metavar = "FILE",
       .help = no_effect},
      {.name = "comm-scale", .kind = CLI_OPT_STRING, .dest = &a->no_effect[1], .help = no_effect},
      {.name = "compute-scale", .kind = CLI_OPT_STRING, .dest = &a->no_effect[2], .help = no_effect},
      {.name = "report", .kind = CLI_OPT_STRING, .dest = &a->report, .metavar = "FILE.json",
       .help = "per-rank times (finish, exposed communication, compute, communication, overlap), collectives by "
               "type (count, bytes, time) and run totals (docs/report.md)",
       .file = CLI_FILE_OUT},
      {.name = "report-format", .kind = CLI_OPT_CHOICE, .dest = &a->report_format, .choices = cli_report_formats,
       .help = "json: the report document; csv: one row per rank (the report's per-rank figures, a column per "
               "collective type and figure)",
       .def = "json"},
      {.name = "timeline", .kind = CLI_OPT_STRING, .dest = &o->timeline, .metavar = "FILE.json",
       .help = "Chrome trace-event timeline (open in Perfetto): a process per rank, a track per hardware slot",
       .file = CLI_FILE_OUT},
      {.name = "link-report", .kind = CLI_OPT_STRING, .dest = &o->link_report, .metavar = "FILE.json",
       .help = "per-link busy time, bytes, messages and utilisation of the congestion-aware model (needs "
               "--network-model=aware; 'chakra plot FILE.json' draws a heat map)",
       .file = CLI_FILE_OUT},
      {.name = "threads", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&o->load_threads), .min = 1, .max = 64,
       .help = "threads that load the rank files", .def = "CPUs"},
      {.name = "summary", .kind = CLI_OPT_FLAG, .dest = &a->summary, .help = "a short human summary after the result lines"},
      {.name = "quiet", .short_name = 'q', .kind = CLI_OPT_FLAG, .dest = &a->quiet, .help = "only the 'finished' lines"},
      {0}};
  const cli_command cmd = {.name = "sim", .max_args = 0, .show_equals = 1, .about = about, .footer = footer,
                           .opts = opts, .files = logging_files, .files_ctx = o};
  cli_args pos;
  int st = cli_parse(&cmd, argc, argv, &pos);
  if (st != CLI_PROCEED) return st;
  for (int i = 0; i < 3; i++)
    if (a->no_effect[i]) cli_warn("sim: --%s has no effect in chakra sim", no_effect_names[i]);
  return CLI_PROCEED;
}

static void put_line(void *ctx, const char *logger, const char *text) {
  (void)ctx;
  (void)logger;
  puts(text);
}

static void print_rank(const chakra_run_record *res, uint32_t r, int quiet) {
  unsigned which = CHAKRA_SIM_LINE_FINISHED | (quiet ? 0 : CHAKRA_SIM_LINE_STATS);
  chakra_sim_rank_lines(res, r, which, put_line, NULL);
}

/* ns as microseconds, exactly (a double would round above 2^53 ns). */
static const char *us(uint64_t ns, char *buf, size_t size) {
  snprintf(buf, size, "%llu.%03u", (unsigned long long)(ns / 1000), (unsigned)(ns % 1000));
  return buf;
}

/* "all-reduce" for ALL_REDUCE. */
static const char *coll_words(int comm_type, char *buf, size_t size) {
  snprintf(buf, size, "%s", chakra_comm_type_name(comm_type));
  for (char *p = buf; *p; p++) *p = *p == '_' ? '-' : (char)(*p - 'A' + 'a');
  return buf;
}

static void print_summary(const chakra_run_record *r, const char *groups_beside) {
  chakra_run_summary m;
  chakra_run_summarise(r, &m);
  char a[32], b[32], g[32], w[32];
  const chakra_run_rank *s = &r->ranks[m.slowest_rank];
  printf("\nsummary: %u of %u ranks finished; the last, rank %u, at %s us\n", m.finished, r->npus, m.slowest_rank,
         us(s->finish_ns, a, sizeof a));
  printf("  mean exposed communication %s us, mean GPU compute %s us per rank\n",
         us(m.mean_exposed_comm_ns, b, sizeof b), us(m.mean_compute_ns, g, sizeof g));
  const uint8_t *order = chakra_run_coll_order();
  for (int i = 0; i < CHAKRA_RUN_COLLS; i++) {
    const chakra_run_coll *c = &s->coll[order[i]];
    if (c->count)
      printf("  rank %u: %llu %s, %llu bytes, %s us in flight\n", m.slowest_rank, (unsigned long long)c->count,
             coll_words(order[i], w, sizeof w), (unsigned long long)c->bytes, us(c->time_ns, a, sizeof a));
  }
  printf("  simulated %llu events and %llu messages in %.3f s\n", (unsigned long long)r->events,
         (unsigned long long)r->messages, r->wall_seconds);
  printf("  %u rank class(es); symmetry: %s\n", r->classes, r->symmetry ? r->symmetry : "-");
  if (*groups_beside) printf("  communicator groups from %s, found beside the traces\n", groups_beside);
}

/* Each loading thread takes rank after rank, each through tens of MiB of
 * scratch arrays. By default glibc maps such blocks afresh and returns them
 * on free, so every rank faults its scratch in again (at ~10 us a page on a
 * VM); a 64-rank load spent a third of its time there. Keeping freed memory
 * in the heap lets the next rank reuse pages already mapped. */
static void keep_freed_memory(void) {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 64 << 20);
#endif
}

static void print_problem(void *ctx, const chakra_problem *p) {
  (void)ctx;
  char line[2048];
  chakra_problem_format(p, line, sizeof line);
  cli_warn("%s", line);
}

/* Configuration, workload, run: the library's three parts. */
/* groups_beside (4096 bytes) receives the groups file found beside the
 * traces, or "". */
static int run(const sim_options *o, chakra_run_record *res, char *groups_beside, chakra_error *err) {
  *groups_beside = 0;
  memset(res, 0, sizeof *res);
  chakra_sim_files files = {o->system, o->network, o->remote_memory, NULL}; /* groups: the trace set's */
  chakra_sim_config *cfg;
  int rc = chakra_sim_config_load(&cfg, &files, print_problem, NULL, err);
  if (rc) return rc;
  chakra_sim_params *p = chakra_sim_config_params(cfg);
  p->network_model = o->network_model;
  if (o->queues_per_dim) p->queues_per_dim = o->queues_per_dim;
  if (o->injection_scale > 0) p->injection_scale = o->injection_scale;
  p->rendezvous = o->rendezvous;
  p->multidim_full = o->multidim_full;
  p->custom_as_is = o->custom_as_is;
  p->symmetry = o->symmetry;
  /* exactly one rank per NPU: a missing rank file, or more rank files
   * than NPUs (the extra ranks would be ignored silently), is an error */
  uint32_t npus = chakra_topo_npus(chakra_sim_config_topo(cfg));
  char why[64];
  snprintf(why, sizeof why, "the network has %u NPUs", npus);
  chakra_set_options so = {.ranks = npus, .ranks_reason = why, .comm_groups = o->comm_groups};
  cli_progress loading;
  so.progress = cli_progress_start(&loading, o->quiet, "ranks loaded", &so.progress_ctx);
  chakra_set *set = NULL;
  chakra_sim_workload *w = NULL;
  rc = chakra_set_open(&set, o->workload, &so, err);
  if (!rc) rc = chakra_sim_workload_load_set(&w, set, o->load_threads, print_problem, NULL, err);
  cli_progress_end(&loading);
  if (!rc) cli_note_groups(set);
  if (!rc && chakra_set_groups_origin(set) == CHAKRA_GROUPS_BESIDE)
    snprintf(groups_beside, 4096, "%s", chakra_set_groups_path(set));
  chakra_set_close(set);
  if (!rc) {
    cli_progress bar;
    chakra_sim_run_options ro = {.timeline = o->timeline, .logging_folder = o->logging_folder, .diag = print_problem,
                                 .link_report = o->link_report};
    ro.progress = cli_progress_start(&bar, o->quiet, "nodes", &ro.progress_ctx);
    rc = chakra_sim_run(cfg, w, &ro, res, err);
    cli_progress_end(&bar);
  }
  chakra_sim_workload_free(w);
  chakra_sim_config_free(cfg);
  return rc;
}

int cmd_sim(int argc, char **argv) {
  sim_args a;
  memset(&a, 0, sizeof a);
  int st = parse_sim_args(&a, argc, argv);
  if (st != CLI_PROCEED) return st;
  keep_freed_memory();
  chakra_run_record res;
  chakra_error err = {0};
  char groups_beside[4096];
  a.o.quiet = a.quiet;
  if (run(&a.o, &res, groups_beside, &err)) {
    cli_error("%s", err.msg);
    chakra_run_record_free(&res);
    return 2;
  }
  uint32_t *order = malloc((res.npus ? res.npus : 1) * sizeof *order);
  if (!order) {
    cli_error("out of memory");
    chakra_run_record_free(&res);
    return 2;
  }
  uint32_t n = chakra_run_finish_order(&res, order);
  for (uint32_t k = 0; k < n; k++) print_rank(&res, order[k], a.quiet);
  free(order);
  int status = 0;
  if (a.report && chakra_run_write_report(&res, a.report, (chakra_run_format)a.report_format, &err)) {
    cli_error("%s", err.msg);
    status = 2;
  }
  if (a.summary) print_summary(&res, groups_beside);
  if (res.n_stuck) {
    cli_error("%u of %u ranks did not finish (deadlock or unmatched communication):", res.npus - n, res.npus);
    for (uint32_t i = 0; i < res.n_stuck; i++) cli_line(stderr, "  ", "%s", res.stuck[i]);
    status = 1;
  }
  chakra_run_record_free(&res);
  return status;
}
