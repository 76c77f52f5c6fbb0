/* cmd_sim.c - chakra sim: ASTRA-sim-compatible simulation of per-rank ETs. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "chakra/sim.h"
#include "cli.h"

static const char usage[] =
    "usage: chakra sim --workload-configuration=PREFIX --system-configuration=SYS.json\n"
    "                  --network-configuration=NET.yml [--remote-memory-configuration=MEM.json]\n"
    "                  [--comm-group-configuration=GROUPS.json] [--network-model=aware|unaware]\n"
    "                  [--num-queues-per-dim=N] [--injection-scale=X] [options]\n"
    "\n"
    "Simulates the per-rank traces PREFIX.0.et .. PREFIX.<N-1>.et (N = product of the\n"
    "network's npus_count) on the modelled system and prints, per rank, the line\n"
    "ASTRA-sim prints:  sys[R] finished, T cycles, exposed communication E cycles.\n"
    "followed by its statistics lines (with roofline-enabled, also the compute-bound\n"
    "percentage, average compute and memory utilisation and operation intensity,\n"
    "weighted by compute node duration). 1 cycle = 1 ns. Options take '=VALUE' or a\n"
    "separate argument.\n"
    "\n"
    "  --workload-configuration      trace prefix (required)\n"
    "  --system-configuration        system JSON (required)\n"
    "  --network-configuration       network YAML (required)\n"
    "  --remote-memory-configuration remote memory JSON (default: none)\n"
    "  --comm-group-configuration    communicator groups JSON\n"
    "  --network-model               aware (default) or unaware\n"
    "  --num-queues-per-dim          scheduling queues per dimension (default 1)\n"
    "  --injection-scale             multiplies endpoint-delay (default 1)\n"
    "  --rendezvous-protocol         true|false: the receiver sends an 8 KiB invitation\n"
    "                                before each send (default false)\n"
    "  --multidim-p2p                lowest (default, as ASTRA-sim: a message between NPUs\n"
    "                                that differ in several dimensions is charged the\n"
    "                                lowest one only) or full (all of them)\n"
    "  --logging-folder=DIR          write ASTRA-sim's DIR/log.log (the result and\n"
    "                                statistics lines with its [time] [logger] [level]\n"
    "                                heads, then 'Exiting'; with trace-enabled in the\n"
    "                                system config also one issue and one callback line\n"
    "                                per node) and an empty DIR/err.log; DIR is created\n"
    "  --logging-configuration, --comm-scale, --compute-scale\n"
    "                                accepted for ASTRA-sim compatibility; no effect\n"
    "  --report=FILE.json            per-rank times (finish, exposed communication,\n"
    "                                compute, communication, overlap), collectives by\n"
    "                                type (count, bytes, time) and run totals\n"
    "  --timeline=FILE.json          Chrome trace-event timeline (open in Perfetto):\n"
    "                                a process per rank, a track per hardware slot\n"
    "  --summary                     a short human summary after the result lines\n"
    "  -q, --quiet                   only the 'finished' lines\n"
    "\n"
    "Exit status: 0 when every rank finished; 1 when some could not (a report of\n"
    "the stuck ranks and unmatched messages goes to stderr); 2 bad input.\n";

/* What the options ask for; handed to the library's three parts in run(). */
typedef struct sim_options {
  const char *workload, *system, *network, *remote_memory, *comm_groups;
  int network_model;
  uint32_t queues_per_dim;
  double injection_scale;
  int rendezvous, multidim_full;
  const char *timeline, *logging_folder;
  uint32_t load_threads;
} sim_options;

typedef struct sim_args {
  sim_options o;
  int quiet, summary;
  const char *report;
} sim_args;

static int set_opt(sim_args *a, const char *key, const char *val) {
  sim_options *o = &a->o;
  char *end;
  if (strcmp(key, "workload-configuration") == 0) o->workload = val;
  else if (strcmp(key, "system-configuration") == 0) o->system = val;
  else if (strcmp(key, "network-configuration") == 0) o->network = val;
  else if (strcmp(key, "remote-memory-configuration") == 0) o->remote_memory = val;
  else if (strcmp(key, "comm-group-configuration") == 0) o->comm_groups = val;
  else if (strcmp(key, "report") == 0) a->report = val;
  else if (strcmp(key, "timeline") == 0) o->timeline = val;
  else if (strcmp(key, "logging-folder") == 0) o->logging_folder = val;
  else if (strcmp(key, "network-model") == 0) {
    if (strcmp(val, "aware") == 0) o->network_model = CHAKRA_NET_AWARE;
    else if (strcmp(val, "unaware") == 0) o->network_model = CHAKRA_NET_UNAWARE;
    else return cli_error("sim: --network-model '%s': expected aware or unaware", val), 2;
  } else if (strcmp(key, "num-queues-per-dim") == 0) {
    long v = strtol(val, &end, 10);
    if (*end || v < 1 || v > 64) return cli_error("sim: --num-queues-per-dim '%s': expected 1..64", val), 2;
    o->queues_per_dim = (uint32_t)v;
  } else if (strcmp(key, "injection-scale") == 0) {
    double v = strtod(val, &end);
    if (*end || !(v > 0)) return cli_error("sim: --injection-scale '%s': expected a positive number", val), 2;
    o->injection_scale = v;
  } else if (strcmp(key, "rendezvous-protocol") == 0) {
    if (strcasecmp(val, "true") == 0 || strcmp(val, "1") == 0) o->rendezvous = 1;
    else if (strcasecmp(val, "false") == 0 || strcmp(val, "0") == 0) o->rendezvous = 0;
    else return cli_error("sim: --rendezvous-protocol '%s': expected true or false", val), 2;
  } else if (strcmp(key, "multidim-p2p") == 0) {
    if (strcmp(val, "full") == 0) o->multidim_full = 1;
    else if (strcmp(val, "lowest") == 0) o->multidim_full = 0;
    else return cli_error("sim: --multidim-p2p '%s': expected lowest or full", val), 2;
  } else if (strcmp(key, "threads") == 0) {
    long v = strtol(val, &end, 10);
    if (*end || v < 1 || v > 64) return cli_error("sim: --threads '%s': expected 1..64", val), 2;
    o->load_threads = (uint32_t)v;
  } else if (strcmp(key, "logging-configuration") == 0 || strcmp(key, "comm-scale") == 0 ||
             strcmp(key, "compute-scale") == 0) {
    cli_warn("sim: --%s has no effect in chakra sim", key);
  } else {
    return cli_error("sim: unknown option '--%s'\n%s", key, usage), 2;
  }
  return 0;
}

static void put_line(void *ctx, const char *logger, const char *text) {
  (void)ctx;
  (void)logger;
  puts(text);
}

static void print_rank(const chakra_sim_result *res, uint32_t r, int quiet) {
  unsigned which = CHAKRA_SIM_LINE_FINISHED | (quiet ? 0 : CHAKRA_SIM_LINE_STATS);
  chakra_sim_rank_lines(res, r, which, put_line, NULL);
}

static void print_summary(const chakra_sim_result *r) {
  static const char *const names[CHAKRA_SIM_COLLS] = {"all-reduce", "all-gather", "reduce-scatter", "all-to-all"};
  uint32_t slowest = 0, done = 0;
  uint64_t exposed = 0, gpu = 0;
  for (uint32_t k = 0; k < r->npus; k++) {
    const chakra_sim_rank *x = &r->ranks[k];
    done += (uint32_t)x->finished;
    if (x->finish_ns > r->ranks[slowest].finish_ns) slowest = k;
    exposed += x->exposed_comm_ns;
    gpu += x->busy_ns[CHAKRA_CAT_GPU];
  }
  const chakra_sim_rank *s = &r->ranks[slowest];
  printf("\nsummary: %u of %u ranks finished; the last, rank %u, at %.3f us\n", done, r->npus, slowest,
         (double)s->finish_ns / 1000.0);
  printf("  mean exposed communication %.3f us, mean GPU compute %.3f us per rank\n",
         (double)exposed / r->npus / 1000.0, (double)gpu / r->npus / 1000.0);
  for (int c = 0; c < CHAKRA_SIM_COLLS; c++)
    if (s->coll_ops[c])
      printf("  rank %u: %llu %s, %llu bytes, %.3f us in flight\n", slowest, (unsigned long long)s->coll_ops[c],
             names[c], (unsigned long long)s->coll_bytes[c], (double)s->coll_ns[c] / 1000.0);
  printf("  simulated %llu events and %llu messages in %.3f s\n", (unsigned long long)r->events,
         (unsigned long long)r->messages, r->wall_seconds);
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

/* The progress line, on a terminal only, redrawn in place. */
static int print_progress(void *ctx, const char *phase, uint64_t done, uint64_t total) {
  (void)ctx, (void)phase, (void)total;
  fprintf(stderr, "\rchakra sim: %llu ns simulated\033[K", (unsigned long long)done);
  return 0;
}

/* Configuration, workload, run: the library's three parts. */
static int run(const sim_options *o, chakra_sim_result *res, chakra_error *err) {
  memset(res, 0, sizeof *res);
  chakra_sim_files files = {o->system, o->network, o->remote_memory, o->comm_groups};
  chakra_sim_config *cfg;
  int rc = chakra_sim_config_load(&cfg, &files, print_problem, NULL, err);
  if (rc) return rc;
  chakra_sim_params *p = chakra_sim_config_params(cfg);
  p->network_model = o->network_model;
  if (o->queues_per_dim) p->queues_per_dim = o->queues_per_dim;
  if (o->injection_scale > 0) p->injection_scale = o->injection_scale;
  p->rendezvous = o->rendezvous;
  p->multidim_full = o->multidim_full;
  chakra_sim_workload *w;
  rc = chakra_sim_workload_load(&w, o->workload, chakra_topo_npus(chakra_sim_config_topo(cfg)), o->load_threads,
                                print_problem, NULL, err);
  if (!rc) {
    int tty = isatty(2);
    chakra_sim_run_options ro = {.timeline = o->timeline, .logging_folder = o->logging_folder,
                                 .diag = print_problem, .progress = tty ? print_progress : NULL};
    rc = chakra_sim_run(cfg, w, &ro, res, err);
    if (tty) fputs("\r\033[K", stderr);
  }
  chakra_sim_workload_free(w);
  chakra_sim_config_free(cfg);
  return rc;
}

int cmd_sim(int argc, char **argv) {
  sim_args a;
  memset(&a, 0, sizeof a);
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (cli_is_help(arg)) {
      fputs(usage, stdout);
      return 0;
    }
    if (strcmp(arg, "-q") == 0 || strcmp(arg, "--quiet") == 0) {
      a.quiet = 1;
      continue;
    }
    if (strcmp(arg, "--summary") == 0) {
      a.summary = 1;
      continue;
    }
    if (strncmp(arg, "--", 2) != 0) {
      cli_error("sim: unexpected argument '%s'\n%s", arg, usage);
      return 2;
    }
    char key[64];
    const char *eq = strchr(arg, '='), *val;
    size_t kl = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
    if (kl >= sizeof key) kl = sizeof key - 1;
    memcpy(key, arg + 2, kl);
    key[kl] = 0;
    if (eq) val = eq + 1;
    else if (i + 1 < argc) val = argv[++i];
    else {
      cli_error("sim: --%s needs a value", key);
      return 2;
    }
    int rc = set_opt(&a, key, val);
    if (rc) return rc;
  }
  if (!a.o.workload || !a.o.system || !a.o.network) {
    cli_error("sim: --workload-configuration, --system-configuration and --network-configuration are required\n%s", usage);
    return 2;
  }
  keep_freed_memory();
  chakra_sim_result res;
  chakra_error err = {0};
  if (run(&a.o, &res, &err)) {
    cli_error("%s", err.msg);
    chakra_sim_result_free(&res);
    return 2;
  }
  uint32_t *order = malloc((res.npus ? res.npus : 1) * sizeof *order);
  if (!order) {
    cli_error("sim: out of memory");
    chakra_sim_result_free(&res);
    return 2;
  }
  uint32_t n = chakra_sim_finish_order(&res, order);
  for (uint32_t k = 0; k < n; k++) print_rank(&res, order[k], a.quiet);
  free(order);
  int status = 0;
  if (a.report && chakra_sim_write_report(&res, a.report, &err)) {
    cli_error("%s", err.msg);
    status = 2;
  }
  if (a.summary) print_summary(&res);
  if (res.n_stuck) {
    cli_error("sim: %u of %u ranks did not finish (deadlock or unmatched communication):", res.npus - n, res.npus);
    for (uint32_t i = 0; i < res.n_stuck; i++) fprintf(stderr, "  %s\n", res.stuck[i]);
    status = 1;
  }
  chakra_sim_result_free(&res);
  return status;
}
