/* cmd_unshare.c - chakra unshare: a trace set as standard per-rank files
 * (for ASTRA-sim and every other reader of PREFIX.<r>.et). */
#include <stdio.h>

#include "cli.h"
#include "progress.h"

static const char about[] =
    "Writes every rank of a trace set as a standard per-rank file, OUT.<r>.et,\n"
    "and its communicator groups as OUT.json: a shared set (PREFIX.set.json and\n"
    "its class templates) with each rank's bindings applied, byte for byte what\n"
    "a per-rank writer writes (chakra synth --shared, then unshare, gives chakra\n"
    "synth's files). All files are put in place together, or none.\n";

typedef struct unshare_cli {
  const char *out, *groups;
  unsigned threads;
  int quiet;
} unshare_cli;

/* OUT.json, the groups, beside the ranks. */
static void unshare_files(void *ctx, const cli_args *pos) {
  (void)pos;
  cli_files_groups_of(((const unshare_cli *)ctx)->out);
}

int cmd_unshare(int argc, char **argv) {
  unshare_cli u = {0};
  const cli_opt opts[] = {
      {.name = "output", .short_name = 'o', .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED, .dest = &u.out,
       .metavar = "OUT", .help = "writes OUT.<r>.et and OUT.json", .file = CLI_FILE_OUT_PREFIX},
      {.name = "comm-group-configuration", .alias = "comm-groups", .kind = CLI_OPT_STRING, .dest = &u.groups,
       .metavar = "FILE", .help = "the groups (default: the set's own, or PREFIX.json beside the traces)",
       .file = CLI_FILE_IN},
      {.name = "threads", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&u.threads), .min = 1, .max = 256,
       .help = "write the rank files on N threads (the bytes never depend on it)", .def = "one per CPU, at most 8"},
      {.name = "quiet", .short_name = 'q', .kind = CLI_OPT_FLAG, .dest = &u.quiet, .help = "no summary line, no progress line"},
      {0}};
  const cli_command cmd = {.name = "unshare", .args = "PREFIX", .min_args = 1, .max_args = -1, .about = about,
                           .opts = opts, .args_file = CLI_FILE_TRACES, .files = unshare_files, .files_ctx = &u};
  cli_args pos;
  int rc = cli_parse(&cmd, argc, argv, &pos);
  if (rc != CLI_PROCEED) return rc;
  chakra_set_options so = {.comm_groups = u.groups};
  cli_progress bar;
  so.progress = cli_progress_start(&bar, u.quiet, "ranks", &so.progress_ctx);
  chakra_set *set = cli_open_set(pos.n, pos.v, &so);
  if (!set) return CLI_EXIT_ERROR;
  chakra_error err = {0};
  uint32_t ranks = chakra_set_ranks(set), classes = chakra_set_classes(set);
  int groups = chakra_set_groups_origin(set) != CHAKRA_GROUPS_NONE;
  rc = chakra_set_unshare(set, u.out, u.threads, &err);
  cli_progress_end(&bar);
  chakra_set_close(set);
  if (rc) return cli_fail(&err);
  if (!u.quiet)
    printf("wrote %u rank file(s) %s.<r>.et from %u class template(s)%s%s%s\n", ranks, u.out, classes,
           groups ? ", groups in " : "", groups ? u.out : "", groups ? ".json" : "");
  return 0;
}
