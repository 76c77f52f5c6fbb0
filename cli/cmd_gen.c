/* cmd_gen.c - chakra gen: generate workloads. */
#include <stdlib.h>
#include <string.h>

#include "chakra/attr.h"
#include "chakra/gen.h"
#include "cli.h"

static const char usage[] =
    "usage: chakra gen microbench --coll COLL --npus N --size BYTES -o PREFIX\n"
    "\n"
    "Generates workloads without an input trace.\n"
    "\n"
    "microbench  one collective per rank, as ASTRA-sim's microbenchmarks:\n"
    "            writes PREFIX.0.et .. PREFIX.<N-1>.et\n"
    "  --coll    all_reduce | all_gather | reduce_scatter | all_to_all\n"
    "  --npus    number of ranks\n"
    "  --size    bytes per rank (all_gather: the per-rank input); K, M, G\n"
    "            suffixes are binary (1M = 1048576)\n"
    "  -o        output prefix\n";

static int gen_microbench(int argc, char **argv) {
  const char *coll = NULL, *prefix = NULL;
  unsigned long long npus = 0, size = 0;
  int have_size = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (cli_is_help(a)) {
      fputs(usage, stdout);
      return 0;
    } else if (strcmp(a, "--coll") == 0 && v) {
      coll = v, i++;
    } else if (strcmp(a, "--npus") == 0 && v) {
      if (cli_parse_size(v, &npus) || npus == 0 || npus > 1000000) {
        cli_error("gen microbench: --npus '%s': expected a rank count from 1 to 1000000", v);
        return 2;
      }
      i++;
    } else if (strcmp(a, "--size") == 0 && v) {
      if (cli_parse_size(v, &size)) {
        cli_error("gen microbench: --size '%s': expected bytes, e.g. 1048576 or 1M", v);
        return 2;
      }
      have_size = 1, i++;
    } else if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && v) {
      prefix = v, i++;
    } else {
      cli_error("gen microbench: unexpected argument '%s'\n%s", a, usage);
      return 2;
    }
  }
  if (!coll || !npus || !have_size || !prefix) {
    cli_error("gen microbench: --coll, --npus, --size and -o are required\n%s", usage);
    return 2;
  }
  int type = chakra_comm_type_parse(coll);
  if (type != 0 && type != 2 && type != 6 && type != 7) {
    cli_error("gen microbench: --coll '%s': expected all_reduce, all_gather, reduce_scatter or all_to_all", coll);
    return 2;
  }
  chakra_error err = {0};
  if (chakra_gen_microbench(prefix, type, (uint32_t)npus, size, &err)) return cli_fail(&err);
  return 0;
}

int cmd_gen(int argc, char **argv) {
  if (argc < 2 || cli_is_help(argv[1])) {
    fputs(usage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (strcmp(argv[1], "microbench") == 0) return gen_microbench(argc - 1, argv + 1);
  cli_error("gen: unknown generator '%s'\n%s", argv[1], usage);
  return 2;
}
