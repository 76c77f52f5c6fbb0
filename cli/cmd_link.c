/* cmd_link.c - chakra link: merge a PyTorch host ET with its Kineto trace. */
#include <stdlib.h>
#include <string.h>

#include "chakra/ingest.h"
#include "cli.h"

static const char usage[] =
    "usage: chakra link --host HOST.json[.gz] --device KINETO.json[.gz] -o LINKED.json[.gz]\n"
    "                   [--rank N] [--thread-gap-us US] [--allow-partial] [--threads N] [-q]\n"
    "\n"
    "Merges a PyTorch host execution trace (schema 1.0.1 to 1.1.1-chakra.1.0.0)\n"
    "with the Kineto (profiler) trace of the same run: host ops get their measured\n"
    "ts, inclusive_dur and exclusive_dur; every GPU kernel, memcpy and memset is\n"
    "added after the host op that launched it; inter-thread and synchronisation\n"
    "dependencies are recorded. The output is the linked host ET that\n"
    "'chakra convert pytorch' (and the reference converter) reads.\n"
    "\n"
    "  --host FILE        host execution trace (JSON, gzip detected)\n"
    "  --device FILE      Kineto trace of the same run (JSON, gzip detected)\n"
    "  -o FILE            linked trace; compressed when the name ends in .gz\n"
    "  --rank N           refuse a Kineto trace of another rank\n"
    "  --thread-gap-us US idle gap that starts a new inter-thread group (1000)\n"
    "  --allow-partial    link even if more than 1% of host ops have no Kineto op\n"
    "  --threads N        parse threads for large files (default: CPUs)\n"
    "  -q                 no summary on stdout\n";

int cmd_link(int argc, char **argv) {
  const char *host = NULL, *dev = NULL, *out = NULL;
  chakra_link_options opt = {.rank = -1, .diag = cli_diag};
  int quiet = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    unsigned long long n;
    if (cli_is_help(a)) {
      fputs(usage, stdout);
      return 0;
    } else if (strcmp(a, "--host") == 0 && v) {
      host = v, i++;
    } else if (strcmp(a, "--device") == 0 && v) {
      dev = v, i++;
    } else if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && v) {
      out = v, i++;
    } else if (strcmp(a, "--rank") == 0 && v) {
      if (cli_parse_size(v, &n) || n > 100000000) {
        cli_error("link: --rank '%s': expected a rank number", v);
        return 2;
      }
      opt.rank = (int64_t)n, i++;
    } else if (strcmp(a, "--thread-gap-us") == 0 && v) {
      char *end;
      opt.thread_gap_us = strtod(v, &end);
      if (*end || !(opt.thread_gap_us > 0)) {
        cli_error("link: --thread-gap-us '%s': expected a positive number of microseconds", v);
        return 2;
      }
      i++;
    } else if (strcmp(a, "--threads") == 0 && v) {
      if (cli_parse_size(v, &n) || n < 1 || n > 64) {
        cli_error("link: --threads '%s': expected 1 to 64", v);
        return 2;
      }
      opt.threads = (int)n, i++;
    } else if (strcmp(a, "--allow-partial") == 0) {
      opt.allow_partial = 1;
    } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
      quiet = 1;
    } else {
      cli_error("link: unexpected argument '%s'\n%s", a, usage);
      return 2;
    }
  }
  if (!host || !dev || !out) {
    cli_error("link: --host, --device and -o are required\n%s", usage);
    return 2;
  }
  chakra_link_report rep;
  chakra_error err = {0};
  if (chakra_link(host, dev, out, &opt, &rep, &err)) return cli_fail(&err);
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
