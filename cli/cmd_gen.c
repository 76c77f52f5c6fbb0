/* cmd_gen.c - chakra gen: generate workloads. */
#include "chakra/et_def.pb-c.h"
#include "chakra/build.h"
#include "chakra/gen.h"
#include "cli.h"

static const char about[] =
    "One collective per rank, as ASTRA-sim's microbenchmarks: writes\n"
    "PREFIX.0.et .. PREFIX.<N-1>.et.\n";

static int gen_microbench(int argc, char **argv) {
  static const cli_choice colls[] = {{"all_reduce", CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_REDUCE},
                                     {"all_gather", CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_GATHER},
                                     {"reduce_scatter", CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__REDUCE_SCATTER},
                                     {"all_to_all", CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_TO_ALL},
                                     {NULL, 0}};
  const char *prefix = NULL;
  int coll = 0;
  uint32_t npus = 0;
  uint64_t size = 0;
  const cli_opt opts[] = {
      {.name = "coll", .kind = CLI_OPT_CHOICE, .flags = CLI_OPT_REQUIRED, .dest = &coll, .choices = colls,
       .metavar = "COLL", .help = "all_reduce, all_gather, reduce_scatter or all_to_all"},
      {.name = "npus", .kind = CLI_OPT_COUNT, .flags = CLI_OPT_REQUIRED, .dest = CLI_INT(&npus), .min = 1,
       .max = 1000000, .help = "number of ranks"},
      {.name = "size", .kind = CLI_OPT_SIZE, .flags = CLI_OPT_REQUIRED, .dest = CLI_INT(&size),
       .help = "bytes per rank (all_gather: the per-rank input); K, M, G suffixes are binary (1M = 1048576)"},
      {.name = "output", .short_name = 'o', .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED, .dest = &prefix,
       .metavar = "PREFIX", .help = "output prefix", .file = CLI_FILE_OUT_PREFIX},
      {0}};
  const cli_command cmd = {.name = "gen microbench", .max_args = 0, .about = about, .opts = opts};
  cli_args pos;
  int st = cli_parse(&cmd, argc, argv, &pos);
  if (st != CLI_PROCEED) return st;
  chakra_error err = {0};
  if (chakra_gen_microbench(prefix, coll, npus, size, &err)) return cli_fail(&err);
  return 0;
}

int cmd_gen(int argc, char **argv) {
  static const cli_mode modes[] = {{"microbench", gen_microbench}};
  return cli_run_mode("gen", modes, sizeof modes / sizeof *modes, argc, argv);
}
