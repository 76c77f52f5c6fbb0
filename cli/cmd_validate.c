/* cmd_validate.c - chakra validate: check traces, one line per problem. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra/build.h"
#include "chakra/sim.h"
#include "chakra/validate.h"
#include "cli.h"

static const char about[] =
    "Checks each file: framing and decoding, duplicate node ids, dependencies\n"
    "on absent ids, cycles, attribute kinds, and the attributes each node type\n"
    "requires. With several ranks (PREFIX means PREFIX.0.et, PREFIX.1.et, ...;\n"
    "files given one by one are ranks 0, 1, ... in order) it also checks that\n"
    "every send has exactly one receive with the same src, dst, tag and size,\n"
    "that the collectives of each communicator group agree in order, type and\n"
    "size on every member and are issued only by members, and that the ranks\n"
    "cannot deadlock (an untimed run of the send/receive and collective order,\n"
    "with the orders the one communication slot per NPU imposes in every timing).\n"
    "Groups come from --comm-group-configuration (else PREFIX.json beside the\n"
    "traces, when it exists: the summary says so) and METADATA nodes, as in sim.\n"
    "Which of two ready nodes takes the slot can depend on compute and network\n"
    "times: given --system-configuration and --network-configuration, a\n"
    "workload that passes is also simulated on them, and a rank the simulator\n"
    "cannot finish is an error (an exact answer for that configuration).\n"
    "\n"
    "Prints one line per problem (file, node id, offset, problem) and a summary.\n";

static const char footer[] = "Exit status: 0 clean (warnings allowed), 1 problems found, 2 unreadable input.\n";

typedef struct out_state {
  unsigned long long printed, limit;
  int quiet;
} out_state;

static void print_problem(void *ctx, const chakra_problem *p) {
  out_state *o = ctx;
  if (o->quiet || (o->limit && o->printed >= o->limit)) return;
  o->printed++;
  const char *sev = p->severity == CHAKRA_SEV_WARNING ? "warning" : "error";
  if (p->has_node)
    printf("%s: node %llu (offset %llu): %s: %s\n", p->file, (unsigned long long)p->node_id,
           (unsigned long long)p->offset, sev, p->what);
  else
    printf("%s: %s: %s\n", p->file, sev, p->what);
}

/* The simulator's configuration, when validate is to run it. */
typedef struct sim_check {
  const char *system, *network, *remote_memory;
  int network_model, multidim_full;
  uint32_t queues_per_dim;
  double injection_scale;
} sim_check;

/* One error line per rank the simulator stops with; returns how many, or
 * -1 after printing why the simulation could not run. */
static int sim_stuck_ranks(const sim_check *c, const chakra_validate_options *vopt, const chakra_set *set,
                           chakra_diag_fn report, void *ctx) {
  int n = (int)chakra_set_ranks(set);
  chakra_sim_files files = {c->system, c->network, c->remote_memory, NULL}; /* groups: the set's */
  chakra_sim_config *cfg;
  chakra_sim_workload *w = NULL;
  chakra_run_record res = {0};
  chakra_error err = {0};
  int rc = chakra_sim_config_load(&cfg, &files, cli_diag, NULL, &err);
  if (!rc) {
    chakra_sim_params *p = chakra_sim_config_params(cfg);
    p->rendezvous = vopt->rendezvous;
    p->network_model = c->network_model;
    p->multidim_full = c->multidim_full;
    if (c->queues_per_dim) p->queues_per_dim = c->queues_per_dim;
    if (c->injection_scale > 0) p->injection_scale = c->injection_scale;
    uint32_t npus = chakra_topo_npus(chakra_sim_config_topo(cfg));
    if (npus != (uint32_t)n)
      rc = chakra_error_set(&err, CHAKRA_EINVAL, "%s: the network has %u NPUs but the workload has %d rank file(s)",
                            c->network, npus, n);
    if (!rc) rc = chakra_sim_workload_load_set(&w, set, 0, cli_diag, NULL, &err);
    chakra_sim_run_options ro = {.diag = cli_diag};
    if (!rc) rc = chakra_sim_run(cfg, w, &ro, &res, &err);
  }
  int stuck = 0;
  for (uint32_t r = 0; !rc && r < res.npus && r < (uint32_t)n; r++) {
    if (res.ranks[r].finished) continue;
    char what[700], head[32];
    const char *detail = "";
    int hl = snprintf(head, sizeof head, "rank %u ", r);
    for (uint32_t i = 0; i < res.n_stuck && !*detail; i++) /* the simulator's line on it, for the nodes in flight */
      if (strncmp(res.stuck[i], head, (size_t)hl) == 0) {
        const char *colon = strstr(res.stuck[i], ": ");
        detail = colon ? colon + 2 : res.stuck[i];
      }
    snprintf(what, sizeof what, "deadlock: simulated on %s and %s, this rank does not finish%s%s", c->system,
             c->network, *detail ? ": " : "", detail);
    chakra_problem p = chakra_problem_make(CHAKRA_SEV_ERROR, what);
    p.file = chakra_set_rank_name(set, r);
    report(ctx, &p);
    stuck++;
  }
  chakra_run_record_free(&res);
  chakra_sim_workload_free(w);
  chakra_sim_config_free(cfg);
  if (rc) {
    cli_fail(&err);
    return -1;
  }
  return stuck;
}

int cmd_validate(int argc, char **argv) {
  out_state o = {0, 100, 0};
  int strict = 0;
  chakra_validate_options vopt = {0};
  sim_check sc = {.network_model = -1, .multidim_full = -1}; /* -1: not given */
  static const cli_choice bools[] = {{"true", 1}, {"false", 0}, {"1", 1}, {"0", 0}, {NULL, 0}};
  static const cli_choice models[] = {{"aware", CHAKRA_NET_AWARE}, {"unaware", CHAKRA_NET_UNAWARE}, {NULL, 0}};
  static const cli_choice multidim[] = {{"lowest", 0}, {"full", 1}, {NULL, 0}};
  static const char as_sim[] = "for the simulation: as chakra sim's";
  const cli_opt opts[] = {
      {.name = "max-errors", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&o.limit),
       .help = "print at most N problem lines (0 = all)", .def = "100"},
      {.name = "strict", .kind = CLI_OPT_FLAG, .dest = &strict, .help = "warnings count as problems for the exit status"},
      {.name = "quiet", .short_name = 'q', .kind = CLI_OPT_FLAG, .dest = &o.quiet, .help = "print only the summary"},
      {.name = "comm-group-configuration", .alias = "comm-groups", .kind = CLI_OPT_STRING, .dest = &vopt.comm_groups,
       .metavar = "FILE",
       .help = "communicator groups ({\"1\": [0, 1], ...}, as for chakra sim)", .file = CLI_FILE_IN},
      {.name = "rendezvous-protocol", .kind = CLI_OPT_CHOICE, .dest = &vopt.rendezvous, .choices = bools,
       .metavar = "BOOL",
       .help = "true|false: check deadlocks as chakra sim --rendezvous-protocol=true runs (a send waits for its "
               "receive)",
       .def = "false"},
      {.name = "system-configuration", .kind = CLI_OPT_STRING, .dest = &sc.system, .metavar = "SYS.json",
       .help = "with --network-configuration: also simulate the workload (as chakra sim) and report ranks that do "
               "not finish",
       .file = CLI_FILE_IN},
      {.name = "network-configuration", .kind = CLI_OPT_STRING, .dest = &sc.network, .metavar = "NET.yml",
       .help = "the network to simulate on (with --system-configuration)", .file = CLI_FILE_IN},
      {.name = "remote-memory-configuration", .kind = CLI_OPT_STRING, .dest = &sc.remote_memory,
       .metavar = "MEM.json", .help = "remote memory for the simulation (memory nodes need one)",
       .file = CLI_FILE_IN},
      {.name = "network-model", .kind = CLI_OPT_CHOICE, .dest = &sc.network_model, .choices = models,
       .help = as_sim, .def = "aware"},
      {.name = "num-queues-per-dim", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&sc.queues_per_dim), .min = 1, .max = 64,
       .help = as_sim, .def = "1"},
      {.name = "injection-scale", .kind = CLI_OPT_DOUBLE, .flags = CLI_OPT_POSITIVE, .dest = &sc.injection_scale,
       .help = as_sim, .def = "1"},
      {.name = "multidim-p2p", .kind = CLI_OPT_CHOICE, .dest = &sc.multidim_full, .choices = multidim,
       .help = as_sim, .def = "lowest"},
      {0}};
  const cli_command cmd = {.name = "validate", .args = "FILE.et... | PREFIX", .min_args = 1, .max_args = -1,
                           .about = about, .footer = footer, .opts = opts, .args_file = CLI_FILE_TRACES};
  cli_args pos;
  int st = cli_parse(&cmd, argc, argv, &pos);
  if (st != CLI_PROCEED) return st;
  int sim_only = sc.remote_memory || sc.network_model >= 0 || sc.multidim_full >= 0 || sc.queues_per_dim ||
                 sc.injection_scale > 0;
  if (!sc.system != !sc.network || (sim_only && !sc.system)) {
    cli_error("--system-configuration and --network-configuration go together, and the other simulation options "
              "(--remote-memory-configuration, --network-model, --num-queues-per-dim, --injection-scale, "
              "--multidim-p2p) need both");
    return 2;
  }
  if (sc.network_model < 0) sc.network_model = CHAKRA_NET_AWARE;
  if (sc.multidim_full < 0) sc.multidim_full = 0;
  chakra_set_options so = {.comm_groups = vopt.comm_groups};
  chakra_set *set = cli_open_set(pos.n, pos.v, &so);
  if (!set) return 2;
  chakra_validate_summary sum;
  chakra_error err = {0};
  int rc = chakra_validate_set(set, &vopt, print_problem, &o, &sum, &err);
  if (!rc && sc.system && !sum.errors && !sum.unreadable) {
    int stuck = sim_stuck_ranks(&sc, &vopt, set, print_problem, &o);
    if (stuck < 0) {
      chakra_set_close(set);
      return 2;
    }
    sum.errors += (uint64_t)stuck;
  }
  char beside[4200] = "";
  if (chakra_set_groups_origin(set) == CHAKRA_GROUPS_BESIDE)
    snprintf(beside, sizeof beside, "; groups from %s, found beside the traces", chakra_set_groups_path(set));
  chakra_set_close(set);
  if (rc) return cli_fail(&err);
  if (o.limit && sum.errors + sum.warnings > o.printed && !o.quiet)
    printf("... %llu more problem line(s) not shown (--max-errors)\n",
           (unsigned long long)(sum.errors + sum.warnings - o.printed));
  printf("%d file(s), %llu node(s): %llu error(s), %llu warning(s)%s%s\n", sum.files,
         (unsigned long long)sum.nodes, (unsigned long long)sum.errors,
         (unsigned long long)sum.warnings, sum.unreadable ? ", unreadable input" : "", beside);
  if (sum.unreadable) return 2;
  return sum.errors || (strict && sum.warnings) ? 1 : 0;
}
