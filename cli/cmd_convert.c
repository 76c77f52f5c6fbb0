/* cmd_convert.c - chakra convert: PyTorch traces and ASTRA-sim 1.0 text
 * workloads into Chakra ETs. */
#include <string.h>

#include "chakra/ingest.h"
#include "cli.h"
#include "progress.h"

static const char pytorch_about[] =
    "A PyTorch host execution trace (schema 1.0.1 to 1.1.1-chakra.1.0.0) or a\n"
    "linked trace ('chakra link') to one Chakra ET. Given a Kineto trace as\n"
    "well, the two are linked first. GPU ops depend on their launcher and on the\n"
    "previous op of their stream; collectives carry comm_type, comm_size and\n"
    "pg_name; send/recv carry their peer and a tag.\n";

static const char text_about[] = "An ASTRA-sim 1.0 text workload to PREFIX.0.et .. PREFIX.<N-1>.et.\n";

/* The bytes parsed go to the progress line, the phases to --timing. */
typedef struct convert_watch {
  cli_progress bar;
  cli_timer timer;
  int timing;
} convert_watch;

static int watch(void *ctx, const char *phase, uint64_t done, uint64_t total) {
  convert_watch *w = ctx;
  if (strcmp(phase, "bytes") == 0) return cli_progress_report(&w->bar, phase, done, total);
  return w->timing ? cli_timing(&w->timer, phase, done, total) : 0;
}

static int convert_pytorch(int argc, char **argv) {
  static const cli_choice p2p[] = {{"error", CHAKRA_P2P_MISSING_ERROR}, {"drop", CHAKRA_P2P_MISSING_DROP}, {NULL, 0}};
  static const cli_choice unknown[] = {
      {"error", CHAKRA_UNKNOWN_COLL_ERROR}, {"comp", CHAKRA_UNKNOWN_COLL_COMP}, {NULL, 0}};
  const char *out = NULL;
  chakra_convert_options opt = {.diag = cli_diag};
  int quiet = 0, timing = 0;
  const cli_opt opts[] = {
      {.name = "output", .short_name = 'o', .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED, .dest = &out,
       .metavar = "OUT.et", .help = "the Chakra ET to write", .file = CLI_FILE_OUT},
      {.name = "comm-groups", .kind = CLI_OPT_STRING, .dest = &opt.comm_groups_path, .metavar = "FILE",
       .help = "write the process groups as ASTRA-sim's comm-group JSON", .file = CLI_FILE_OUT},
      {.name = "compat", .kind = CLI_OPT_FLAG, .dest = &opt.compat,
       .help = "reproduce the reference converter byte for byte (linked traces only)"},
      {.name = "log", .kind = CLI_OPT_STRING, .dest = &opt.log_path, .metavar = "FILE",
       .help = "one line per node with its dependencies", .file = CLI_FILE_OUT},
      {.name = "p2p-missing", .kind = CLI_OPT_CHOICE, .dest = &opt.p2p_missing, .choices = p2p,
       .help = "drop: send/recv without a known peer become compute nodes", .def = "error"},
      {.name = "unknown-coll", .kind = CLI_OPT_CHOICE, .dest = &opt.unknown_coll, .choices = unknown,
       .help = "comp: NCCL kernels of unknown collective become compute nodes", .def = "error"},
      {.name = "threads", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&opt.threads), .min = 1, .max = 64,
       .help = "threads that parse large files and pack the nodes (at most 8 are used); with N > 1 the "
               "output is also written by a thread of its own",
       .def = "CPUs"},
      {.name = "timing", .kind = CLI_OPT_FLAG, .dest = &timing,
       .help = "print the time of each phase on stderr (also when CHAKRA_TIMING is set)"},
      {.name = "quiet", .short_name = 'q', .kind = CLI_OPT_FLAG, .dest = &quiet,
       .help = "no summary on stdout, no progress line"},
      {0}};
  const cli_command cmd = {.name = "convert pytorch", .args = "IN.json[.gz] [KINETO.json[.gz]]", .min_args = 1,
                           .max_args = 2, .about = pytorch_about, .opts = opts, .args_file = CLI_FILE_IN};
  cli_args pos;
  int st = cli_parse(&cmd, argc, argv, &pos);
  if (st != CLI_PROCEED) return st;
  const char *in = pos.v[0], *kin = pos.n > 1 ? pos.v[1] : NULL;
  if (opt.compat && kin) {
    fputs("chakra convert pytorch: --compat: converts linked traces only; link first with 'chakra link'\n", stderr);
    return 2;
  }
  size_t ol = strlen(out);
  if (ol > 3 && strcmp(out + ol - 3, ".gz") == 0)
    cli_warn("%s: a compressed trace: ASTRA-sim cannot read it (chakra sim can)", out);
  convert_watch w = {.timing = cli_timing_wanted(timing)};
  if (cli_progress_start(&w.bar, quiet, "bytes", &opt.progress_ctx) || w.timing) opt.progress = watch;
  opt.progress_ctx = &w;
  chakra_convert_report rep;
  chakra_error err = {0};
  int failed = chakra_convert_pytorch(in, kin, out, &opt, &rep, &err);
  cli_progress_end(&w.bar);
  if (failed) return cli_fail(&err);
  if (!quiet)
    printf("%s: %llu nodes (%llu COMP, %llu COMM_COLL, %llu SEND, %llu RECV, %llu METADATA) from %llu, "
           "%llu data deps, %llu ctrl deps\n",
           out, (unsigned long long)rep.nodes_out, (unsigned long long)rep.comp, (unsigned long long)rep.coll,
           (unsigned long long)rep.send, (unsigned long long)rep.recv, (unsigned long long)rep.metadata,
           (unsigned long long)rep.nodes_in, (unsigned long long)rep.data_deps, (unsigned long long)rep.ctrl_deps);
  return 0;
}

static int convert_text(int argc, char **argv) {
  const char *out = NULL;
  chakra_text_options opt = {.npus = 1, .passes = 1};
  int quiet = 0;
  const cli_opt opts[] = {
      {.name = "output", .short_name = 'o', .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED, .dest = &out,
       .metavar = "PREFIX", .help = "writes PREFIX.0.et .. PREFIX.<N-1>.et", .file = CLI_FILE_OUT_PREFIX},
      {.name = "num-npus", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&opt.npus), .min = 1, .max = 1000000,
       .help = "number of files", .def = "1"},
      {.name = "num-passes", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&opt.passes), .min = 1, .max = 1000000,
       .metavar = "P", .help = "training passes", .def = "1"},
      {.name = "compat", .kind = CLI_OPT_FLAG, .dest = &opt.compat,
       .help = "as the reference: NONE communications become all-reduce nodes, ids continue across files"},
      {.name = "quiet", .short_name = 'q', .kind = CLI_OPT_FLAG, .dest = &quiet, .help = "no summary on stdout"},
      {0}};
  const cli_command cmd = {.name = "convert text", .args = "IN.txt", .min_args = 1, .max_args = 1,
                           .about = text_about, .opts = opts, .args_file = CLI_FILE_IN};
  cli_args pos;
  int st = cli_parse(&cmd, argc, argv, &pos);
  if (st != CLI_PROCEED) return st;
  const char *in = pos.v[0];
  chakra_text_report rep;
  chakra_error err = {0};
  if (chakra_convert_text(in, out, &opt, &rep, &err)) return cli_fail(&err);
  if (!quiet)
    printf("%s.0.et .. %s.%u.et: %s, %u layers, %u passes, %llu nodes per NPU\n", out, out, opt.npus - 1,
           rep.parallelism, rep.layers, opt.passes, (unsigned long long)rep.nodes_per_npu);
  return 0;
}

int cmd_convert(int argc, char **argv) {
  static const cli_mode modes[] = {{"pytorch", convert_pytorch}, {"text", convert_text}};
  return cli_run_mode("convert", modes, sizeof modes / sizeof *modes, argc, argv);
}
