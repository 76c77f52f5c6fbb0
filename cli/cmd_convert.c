/* cmd_convert.c - chakra convert: PyTorch traces and ASTRA-sim 1.0 text
 * workloads into Chakra ETs. */
#include <stdlib.h>
#include <string.h>

#include "chakra/ingest.h"
#include "cli.h"

static const char usage[] =
    "usage: chakra convert pytorch IN.json[.gz] [KINETO.json[.gz]] -o OUT.et\n"
    "                      [--comm-groups GROUPS.json] [--compat] [--log FILE]\n"
    "                      [--p2p-missing=error|drop] [--unknown-coll=error|comp]\n"
    "                      [--threads N] [--timing] [-q]\n"
    "       chakra convert text IN.txt -o PREFIX [--num-npus N] [--num-passes P]\n"
    "                      [--compat] [-q]\n"
    "\n"
    "pytorch  a PyTorch host execution trace (schema 1.0.1 to 1.1.1-chakra.1.0.0) or\n"
    "         a linked trace ('chakra link') to one Chakra ET. Given a Kineto trace\n"
    "         as well, the two are linked first. GPU ops depend on their launcher\n"
    "         and on the previous op of their stream; collectives carry comm_type,\n"
    "         comm_size and pg_name; send/recv carry their peer and a tag.\n"
    "  --comm-groups FILE  write the process groups as ASTRA-sim's comm-group JSON\n"
    "  --compat            reproduce the reference converter byte for byte\n"
    "  --log FILE          one line per node with its dependencies\n"
    "  --p2p-missing=drop  send/recv without a known peer become compute nodes\n"
    "                      (default: error)\n"
    "  --unknown-coll=comp NCCL kernels of unknown collective become compute\n"
    "                      nodes (default: error)\n"
    "  --threads N         threads that parse large files and pack the nodes (at\n"
    "                      most 8); with N > 1 the output is also written by a\n"
    "                      thread of its own (default: CPUs)\n"
    "  --timing            print the time of each phase on stderr (also when\n"
    "                      CHAKRA_TIMING is set)\n"
    "\n"
    "text     an ASTRA-sim 1.0 text workload to PREFIX.0.et .. PREFIX.<N-1>.et\n"
    "  --num-npus N        number of files (1)\n"
    "  --num-passes P      training passes (1)\n"
    "  --compat            as the reference: NONE communications become\n"
    "                      all-reduce nodes, ids continue across files\n"
    "\n"
    "  -q                  no summary on stdout\n";

static int convert_pytorch(int argc, char **argv) {
  const char *in = NULL, *kin = NULL, *out = NULL;
  chakra_convert_options opt = {.diag = cli_diag};
  int quiet = 0, timing = 0;
  cli_timer timer = {0};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    unsigned long long n;
    if (cli_is_help(a)) {
      fputs(usage, stdout);
      return 0;
    } else if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && v) {
      out = v, i++;
    } else if (strcmp(a, "--comm-groups") == 0 && v) {
      opt.comm_groups_path = v, i++;
    } else if (strcmp(a, "--log") == 0 && v) {
      opt.log_path = v, i++;
    } else if (strcmp(a, "--compat") == 0) {
      opt.compat = 1;
    } else if (strcmp(a, "--p2p-missing=drop") == 0) {
      opt.p2p_missing = CHAKRA_P2P_MISSING_DROP;
    } else if (strcmp(a, "--p2p-missing=error") == 0) {
      opt.p2p_missing = CHAKRA_P2P_MISSING_ERROR;
    } else if (strcmp(a, "--unknown-coll=comp") == 0) {
      opt.unknown_coll = CHAKRA_UNKNOWN_COLL_COMP;
    } else if (strcmp(a, "--unknown-coll=error") == 0) {
      opt.unknown_coll = CHAKRA_UNKNOWN_COLL_ERROR;
    } else if (strcmp(a, "--threads") == 0 && v) {
      if (cli_parse_size(v, &n) || n < 1 || n > 64) {
        cli_error("convert pytorch: --threads '%s': expected 1 to 64", v);
        return 2;
      }
      opt.threads = (int)n, i++;
    } else if (strcmp(a, "--timing") == 0) {
      timing = 1;
    } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
      quiet = 1;
    } else if (a[0] == '-' && a[1]) {
      cli_error("convert pytorch: unexpected argument '%s'\n%s", a, usage);
      return 2;
    } else if (!in) {
      in = a;
    } else if (!kin) {
      kin = a;
    } else {
      cli_error("convert pytorch: more than two input files ('%s')\n%s", a, usage);
      return 2;
    }
  }
  if (!in || !out) {
    cli_error("convert pytorch: an input file and -o are required\n%s", usage);
    return 2;
  }
  if (opt.compat && kin) {
    cli_error("convert pytorch: --compat converts linked traces only; link first with 'chakra link'");
    return 2;
  }
  size_t ol = strlen(out);
  if (ol > 3 && strcmp(out + ol - 3, ".gz") == 0)
    cli_warn("%s: a compressed trace: ASTRA-sim cannot read it (chakra sim can)", out);
  if (cli_timing_wanted(timing)) opt.progress = cli_timing, opt.progress_ctx = &timer;
  chakra_convert_report rep;
  chakra_error err = {0};
  if (chakra_convert_pytorch(in, kin, out, &opt, &rep, &err)) return cli_fail(&err);
  if (!quiet)
    printf("%s: %llu nodes (%llu COMP, %llu COMM_COLL, %llu SEND, %llu RECV, %llu METADATA) from %llu, "
           "%llu data deps, %llu ctrl deps\n",
           out, (unsigned long long)rep.nodes_out, (unsigned long long)rep.comp, (unsigned long long)rep.coll,
           (unsigned long long)rep.send, (unsigned long long)rep.recv, (unsigned long long)rep.metadata,
           (unsigned long long)rep.nodes_in, (unsigned long long)rep.data_deps, (unsigned long long)rep.ctrl_deps);
  return 0;
}

static int convert_text(int argc, char **argv) {
  const char *in = NULL, *out = NULL;
  chakra_text_options opt = {.npus = 1, .passes = 1};
  int quiet = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    unsigned long long n;
    if (cli_is_help(a)) {
      fputs(usage, stdout);
      return 0;
    } else if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && v) {
      out = v, i++;
    } else if ((strcmp(a, "--num-npus") == 0 || strcmp(a, "--num-passes") == 0) && v) {
      if (cli_parse_size(v, &n) || n < 1 || n > 1000000) {
        cli_error("convert text: %s '%s': expected 1 to 1000000", a, v);
        return 2;
      }
      if (a[6] == 'n') opt.npus = (uint32_t)n;
      else opt.passes = (uint32_t)n;
      i++;
    } else if (strcmp(a, "--compat") == 0) {
      opt.compat = 1;
    } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
      quiet = 1;
    } else if (a[0] == '-' && a[1]) {
      cli_error("convert text: unexpected argument '%s'\n%s", a, usage);
      return 2;
    } else if (!in) {
      in = a;
    } else {
      cli_error("convert text: more than one input file ('%s')\n%s", a, usage);
      return 2;
    }
  }
  if (!in || !out) {
    cli_error("convert text: an input file and -o PREFIX are required\n%s", usage);
    return 2;
  }
  chakra_text_report rep;
  chakra_error err = {0};
  if (chakra_convert_text(in, out, &opt, &rep, &err)) return cli_fail(&err);
  if (!quiet)
    printf("%s.0.et .. %s.%u.et: %s, %u layers, %u passes, %llu nodes per NPU\n", out, out, opt.npus - 1,
           rep.parallelism, rep.layers, opt.passes, (unsigned long long)rep.nodes_per_npu);
  return 0;
}

int cmd_convert(int argc, char **argv) {
  if (argc < 2 || cli_is_help(argv[1])) {
    fputs(usage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (strcmp(argv[1], "pytorch") == 0) return convert_pytorch(argc - 1, argv + 1);
  if (strcmp(argv[1], "text") == 0) return convert_text(argc - 1, argv + 1);
  cli_error("convert: unknown input kind '%s' (pytorch or text)\n%s", argv[1], usage);
  return 2;
}
