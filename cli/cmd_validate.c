/* cmd_validate.c - chakra validate: check traces, one line per problem. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra/build.h"
#include "chakra/sim.h"
#include "chakra/validate.h"
#include "cli.h"
#include "progress.h"

static const char about[] =
    "Checks each file: framing and decoding, duplicate node ids, dependencies\n"
    "on absent ids, cycles, attribute kinds, and the attributes each node type\n"
    "requires. With several ranks (PREFIX means PREFIX.0.et, PREFIX.1.et, ...,\n"
    "or a shared set PREFIX.set.json; files given one by one are ranks 0, 1,\n"
    "... in order) it also checks that\n"
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
    "A shared set in the grid layout (chakra synth --shared) is checked by class:\n"
    "each class template once, and the cross-rank checks on the classes'\n"
    "representatives with their partners translated along the grid, which finds\n"
    "an error exactly when checking every rank does (--per-rank checks every\n"
    "rank; the summary says which was used).\n"
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
  cli_progress_clear(); /* a terminal shows stdout and stderr on one screen */
  const char *sev = p->severity == CHAKRA_SEV_WARNING ? "warning" : "error";
  if (p->has_node)
    printf("%s: node %llu (offset %llu): %s: %s\n", p->file, (unsigned long long)p->node_id,
           (unsigned long long)p->offset, sev, p->what);
  else
    printf("%s: %s: %s\n", p->file, sev, p->what);
}

int cmd_validate(int argc, char **argv) {
  out_state o = {0, 100, 0};
  int strict = 0;
  chakra_validate_options vopt = {0};
  chakra_validate_sim vsim = {.params = {.network_model = -1, .multidim_full = -1, .custom_as_is = -1, .symmetry = -1}, .diag = cli_diag}; /* -1: not given */
  chakra_sim_files *sf = &vsim.files;
  chakra_sim_params *sp = &vsim.params;
  static const cli_choice bools[] = {{"true", 1}, {"false", 0}, {"1", 1}, {"0", 0}, {NULL, 0}};
  static const cli_choice models[] = {{"aware", CHAKRA_NET_AWARE}, {"unaware", CHAKRA_NET_UNAWARE}, {NULL, 0}};
  static const cli_choice multidim[] = {{"lowest", 0}, {"full", 1}, {NULL, 0}};
  static const char as_sim[] = "for the simulation: as chakra sim's";
  const cli_opt opts[] = {
      {.name = "max-errors", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&o.limit),
       .help = "print at most N problem lines (0 = all)", .def = "100"},
      {.name = "strict", .kind = CLI_OPT_FLAG, .dest = &strict, .help = "warnings count as problems for the exit status"},
      {.name = "quiet", .short_name = 'q', .kind = CLI_OPT_FLAG, .dest = &o.quiet, .help = "print only the summary (and no progress line)"},
      {.name = "comm-group-configuration", .alias = "comm-groups", .kind = CLI_OPT_STRING, .dest = &vopt.comm_groups,
       .metavar = "FILE",
       .help = "communicator groups ({\"1\": [0, 1], ...}, as for chakra sim)", .file = CLI_FILE_IN},
      {.name = "rendezvous-protocol", .kind = CLI_OPT_CHOICE, .dest = &vopt.rendezvous, .choices = bools,
       .metavar = "BOOL",
       .help = "true|false: check deadlocks as chakra sim --rendezvous-protocol=true runs (a send waits for its "
               "receive)",
       .def = "false"},
      {.name = "per-rank", .kind = CLI_OPT_FLAG, .dest = &vopt.per_rank,
       .help = "check every rank of a shared grid set (PREFIX.set.json), not each class once"},
      {.name = "system-configuration", .kind = CLI_OPT_STRING, .dest = &sf->system, .metavar = "SYS.json",
       .help = "with --network-configuration: also simulate the workload (as chakra sim) and report ranks that do "
               "not finish",
       .file = CLI_FILE_IN},
      {.name = "network-configuration", .kind = CLI_OPT_STRING, .dest = &sf->network, .metavar = "NET.yml",
       .help = "the network to simulate on (with --system-configuration)", .file = CLI_FILE_IN},
      {.name = "remote-memory-configuration", .kind = CLI_OPT_STRING, .dest = &sf->remote_memory,
       .metavar = "MEM.json", .help = "remote memory for the simulation (memory nodes need one)",
       .file = CLI_FILE_IN},
      {.name = "network-model", .kind = CLI_OPT_CHOICE, .dest = &sp->network_model, .choices = models,
       .help = as_sim, .def = "aware"},
      {.name = "num-queues-per-dim", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&sp->queues_per_dim), .min = 1, .max = 64,
       .help = as_sim, .def = "1"},
      {.name = "injection-scale", .kind = CLI_OPT_DOUBLE, .flags = CLI_OPT_POSITIVE, .dest = &sp->injection_scale,
       .help = as_sim, .def = "1"},
      {.name = "multidim-p2p", .kind = CLI_OPT_CHOICE, .dest = &sp->multidim_full, .choices = multidim,
       .help = as_sim, .def = "lowest"},
      {.name = "custom-collective-scaling", .kind = CLI_OPT_CHOICE,
       .dest = &sp->custom_as_is, .choices = cli_scaling_choices,
       .help = as_sim, .def = "scale"},
      {.name = "symmetry", .kind = CLI_OPT_CHOICE,
       .dest = &sp->symmetry, .choices = cli_symmetry_choices, .help = as_sim,
       .def = "auto"},
      {0}};
  const cli_command cmd = {.name = "validate", .args = "FILE.et... | PREFIX", .min_args = 1, .max_args = -1,
                           .about = about, .footer = footer, .opts = opts, .args_file = CLI_FILE_TRACES};
  cli_args pos;
  int st = cli_parse(&cmd, argc, argv, &pos);
  if (st != CLI_PROCEED) return st;
  int sim_only = sf->remote_memory || sp->network_model >= 0 || sp->multidim_full >= 0 || sp->custom_as_is >= 0 || sp->queues_per_dim ||
                 sp->injection_scale > 0 || sp->symmetry >= 0;
  if (!sf->system != !sf->network || (sim_only && !sf->system)) {
    cli_error("--system-configuration and --network-configuration go together, and the other simulation options "
              "(--remote-memory-configuration, --network-model, --num-queues-per-dim, --injection-scale, "
              "--multidim-p2p, --custom-collective-scaling, --symmetry) need both");
    return 2;
  }
  if (sp->network_model < 0) sp->network_model = CHAKRA_NET_AWARE;
  if (sp->multidim_full < 0) sp->multidim_full = 0;
  if (sp->custom_as_is < 0) sp->custom_as_is = 0;
  if (sp->symmetry < 0) sp->symmetry = CHAKRA_SIM_SYMMETRY_AUTO;
  chakra_set_options so = {.comm_groups = vopt.comm_groups};
  cli_progress bar;
  so.progress = cli_progress_start(&bar, o.quiet, "ranks loaded", &so.progress_ctx);
  chakra_set *set = cli_open_set(pos.n, pos.v, &so);
  if (!set) return 2;
  chakra_validate_summary sum;
  chakra_error err = {0};
  int rc = chakra_validate_set_sim(set, &vopt, sf->system ? &vsim : NULL, print_problem, &o, &sum, &err);
  cli_progress_end(&bar);
  char beside[4200] = "";
  if (chakra_set_groups_origin(set) == CHAKRA_GROUPS_BESIDE)
    snprintf(beside, sizeof beside, "; groups from %s, found beside the traces", chakra_set_groups_path(set));
  chakra_set_close(set);
  if (rc) return cli_fail(&err);
  if (o.limit && sum.errors + sum.warnings > o.printed && !o.quiet)
    printf("... %llu more problem line(s) not shown (--max-errors)\n",
           (unsigned long long)(sum.errors + sum.warnings - o.printed));
  if (sum.classes)
    printf("%d rank(s) in %u class(es), checked by class: ", sum.files, sum.classes);
  else
    printf("%d file(s), ", sum.files);
  printf("%llu node(s): %llu error(s), %llu warning(s)%s%s\n",
         (unsigned long long)sum.nodes, (unsigned long long)sum.errors,
         (unsigned long long)sum.warnings, sum.unreadable ? ", unreadable input" : "", beside);
  if (sum.unreadable) return 2;
  return sum.errors || (strict && sum.warnings) ? 1 : 0;
}
