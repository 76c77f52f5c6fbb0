/* chakra.c - the chakra program: dispatches to one cmd_<name>() per
 * subcommand, git style. Nothing else lives here. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "chakra/output.h"
#include "chakra/version.h"
#include "cli.h"

typedef struct command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} command;

static const command commands[] = {
    {"jsonize", cmd_jsonize, "write a trace as JSON Lines (or one document, or the reference layout)"},
    {"pack", cmd_pack, "turn JSON back into a .et trace"},
    {"link", cmd_link, "merge a PyTorch host trace with its Kineto trace"},
    {"convert", cmd_convert, "PyTorch traces and ASTRA-sim 1.0 text workloads to Chakra ETs"},
    {"validate", cmd_validate, "check traces: framing, ids, deps, cycles, attributes, cross-rank matching"},
    {"stats", cmd_stats, "per-rank and total statistics of a workload"},
    {"sim", cmd_sim, "simulate per-rank traces on a modelled system (ASTRA-sim compatible)"},
    {"gen", cmd_gen, "generate workloads (microbench: one collective per rank)"},
    {"coll", cmd_coll, "collective algorithms as ETs: generate, synthesise for a topology, from MSCCL XML, check, expand"},
    {"synth", cmd_synth, "synthesise per-rank ETs for LLM training (DP/TP/SP/PP, FSDP; STAGE-like)"},
    {"share", cmd_share, "a trace set in the shared form: one template per rank class, bindings proven"},
    {"unshare", cmd_unshare, "a trace set as standard per-rank files (a shared set's bindings applied)"},
    {"sweep", cmd_sweep, "simulate a workload on a grid of configurations (in-process; MPI spreads it)"},
    {"compare", cmd_compare, "a simulation's report against a replay's: per rank and per collective type"},
#ifdef CHAKRA_HAVE_MPI
    {"replay", cmd_replay, "run a workload's communication and compute over MPI and measure it"},
#endif
    {"timeline", cmd_timeline, "Chrome/Perfetto timeline from a trace's own timing"},
    {"diff", cmd_diff, "what changed between two traces: nodes added, removed, changed; summary figures"},
    {"obfuscate", cmd_obfuscate, "a shareable copy: names hashed, strings and shapes gone, same simulation"},
    {"plot", cmd_plot, "SVG bar charts of a sim report or of stats --json output"},
    {"dot", cmd_dot, "Graphviz/GraphML view of one rank: neighbourhood, critical path, folded"},
};

static void usage(FILE *f) {
  fprintf(f,
          "usage: chakra [--version] [--help] <command> [<args>]\n\n"
          "Tools for Chakra execution traces (.et). Commands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
    fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fprintf(f, "\n'chakra <command> --help' describes one command.\n");
}

/* An interrupted command must not leave hidden temporaries (up to hundreds
 * of MB) beside its outputs: remove them, then die of the same signal so
 * the caller sees how the command ended. While its outputs are being put
 * in place the library defers the signal and raises it again once they
 * are, so the outputs are all old or all new. */
static void on_fatal_signal(int sig) {
  if (chakra_output_interrupt(sig)) return;
  signal(sig, SIG_DFL);
  raise(sig);
}

static void remove_temporaries_on_signals(void) {
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
  for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
    struct sigaction sa = {0};
    sa.sa_handler = on_fatal_signal;
    sa.sa_flags = SA_RESTART; /* a deferred signal returns: calls it interrupted go on */
    sigemptyset(&sa.sa_mask);
    sigaction(sigs[i], &sa, NULL);
  }
}

int main(int argc, char **argv) {
  remove_temporaries_on_signals();
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (cli_is_help(argv[1]) || strcmp(argv[1], "help") == 0) {
    if (argc > 2) {
      char *help[] = {argv[2], "--help", NULL};
      for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (strcmp(commands[i].name, argv[2]) == 0) return cli_stdout_end(commands[i].run(2, help));
    }
    usage(stdout);
    return cli_stdout_end(0);
  }
  if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
    printf("chakra %s\n", chakra_version());
    return cli_stdout_end(0);
  }
  for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
    if (strcmp(commands[i].name, argv[1]) == 0) {
      cli_set_command(commands[i].name);
      /* what went to standard output before the files are put in place */
      return cli_outputs_end(cli_stdout_end(commands[i].run(argc - 1, argv + 1)));
    }
  cli_error("'%s' is not a command; see 'chakra --help'", argv[1]);
  return 2;
}
