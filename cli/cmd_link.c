/* cmd_link.c - chakra link: merge a PyTorch host ET with its Kineto trace. */
#include "chakra/ingest.h"
#include "cli.h"
#include "progress.h"

static const char about[] =
    "Merges a PyTorch host execution trace (schema 1.0.1 to 1.1.1-chakra.1.0.0)\n"
    "with the Kineto (profiler) trace of the same run: host ops get their measured\n"
    "ts, inclusive_dur and exclusive_dur; every GPU kernel, memcpy and memset is\n"
    "added after the host op that launched it; inter-thread and synchronisation\n"
    "dependencies are recorded. The output is the linked host ET that\n"
    "'chakra convert pytorch' (and the reference converter) reads.\n";

int cmd_link(int argc, char **argv) {
  const char *host = NULL, *dev = NULL, *out = NULL;
  chakra_link_options opt = {.rank = -1, .diag = cli_diag};
  int quiet = 0;
  const cli_opt opts[] = {
      {.name = "host", .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED, .dest = &host, .metavar = "HOST.json[.gz]",
       .help = "host execution trace (JSON, gzip detected)", .file = CLI_FILE_IN},
      {.name = "device", .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED, .dest = &dev,
       .metavar = "KINETO.json[.gz]", .help = "Kineto trace of the same run (JSON, gzip detected)",
       .file = CLI_FILE_IN},
      {.name = "output", .short_name = 'o', .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED, .dest = &out,
       .metavar = "LINKED.json[.gz]", .help = "linked trace; compressed when the name ends in .gz",
       .file = CLI_FILE_OUT},
      {.name = "rank", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&opt.rank), .max = 100000000,
       .help = "refuse a Kineto trace of another rank", .def = "the Kineto trace's"},
      {.name = "thread-gap-us", .kind = CLI_OPT_DOUBLE, .flags = CLI_OPT_POSITIVE, .dest = &opt.thread_gap_us,
       .metavar = "US", .help = "idle gap that starts a new inter-thread group", .def = "1000"},
      {.name = "allow-partial", .kind = CLI_OPT_FLAG, .dest = &opt.allow_partial,
       .help = "link even if more than 1% of host ops have no Kineto op"},
      {.name = "threads", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&opt.threads), .min = 1, .max = 64,
       .help = "parse threads for large files", .def = "CPUs"},
      {.name = "quiet", .short_name = 'q', .kind = CLI_OPT_FLAG, .dest = &quiet, .help = "no summary on stdout, no progress line"},
      {0}};
  const cli_command cmd = {.name = "link", .max_args = 0, .about = about, .opts = opts};
  cli_args pos;
  int st = cli_parse(&cmd, argc, argv, &pos);
  if (st != CLI_PROCEED) return st;
  chakra_link_report rep;
  chakra_error err = {0};
  cli_progress bar;
  opt.progress = cli_progress_start(&bar, quiet, "bytes", &opt.progress_ctx);
  int rc = chakra_link(host, dev, out, &opt, &rep, &err);
  cli_progress_end(&bar);
  if (rc) return cli_fail(&err);
  if (!quiet) {
    printf("%s: %llu of %llu host ops matched (%s), %llu Kineto CPU ops without a host op\n", out,
           (unsigned long long)rep.matched, (unsigned long long)rep.host_ops,
           rep.by_record_function_id ? "by record function id" : "by name, per thread",
           (unsigned long long)rep.unmatched_kineto);
    printf("%s: %llu of %llu device ops attached; %llu sync deps, %llu inter-thread deps%s\n", out,
           (unsigned long long)rep.gpu_linked, (unsigned long long)rep.kineto_gpu_ops,
           (unsigned long long)rep.sync_deps, (unsigned long long)rep.inter_thread_deps,
           rep.rank >= 0 ? "" : "; rank unknown");
  }
  return 0;
}
