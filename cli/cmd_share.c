/* cmd_share.c - chakra share: any trace set in the shared form (rank
 * classes with proven bindings). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char about[] =
    "Finds the rank classes of a trace set (ranks whose graphs are equal once\n"
    "their group names and peers are replaced by their roles) and writes it in\n"
    "the shared form: OUT.set.json (table layout), one template per class,\n"
    "OUT.class<k>.et, and the groups, OUT.json. Every rank's binding is proven:\n"
    "its template bound to it is its own trace byte for byte, or the rank is a\n"
    "class of its own. chakra unshare writes the per-rank files back.\n";

typedef struct share_cli {
  const char *out, *groups;
  unsigned threads;
  int quiet;
} share_cli;

/* OUT.json, the groups, beside the shared set. */
static void share_files(void *ctx, const cli_args *pos) {
  (void)pos;
  cli_files_groups_of(((const share_cli *)ctx)->out);
}

int cmd_share(int argc, char **argv) {
  share_cli s = {0};
  const cli_opt opts[] = {
      {.name = "output", .short_name = 'o', .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED, .dest = &s.out,
       .metavar = "OUT", .help = "writes OUT.set.json, OUT.class<k>.et and OUT.json", .file = CLI_FILE_OUT_SHARED},
      {.name = "comm-group-configuration", .alias = "comm-groups", .kind = CLI_OPT_STRING, .dest = &s.groups,
       .metavar = "FILE", .help = "the groups (default: PREFIX.json beside the traces, or the set's own)",
       .file = CLI_FILE_IN},
      {.name = "threads", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&s.threads), .min = 1, .max = 256,
       .help = "read and prove ranks on N threads (the output never depends on it)", .def = "one per CPU"},
      {.name = "quiet", .short_name = 'q', .kind = CLI_OPT_FLAG, .dest = &s.quiet, .help = "no summary line"},
      {0}};
  const cli_command cmd = {.name = "share", .args = "PREFIX | FILE.et...", .min_args = 1, .max_args = -1,
                           .about = about, .opts = opts, .args_file = CLI_FILE_TRACES, .files = share_files,
                           .files_ctx = &s};
  cli_args pos;
  int rc = cli_parse(&cmd, argc, argv, &pos);
  if (rc != CLI_PROCEED) return rc;
  chakra_set_options so = {.comm_groups = s.groups};
  chakra_set *set = cli_open_set(pos.n, pos.v, &so);
  if (!set) return CLI_EXIT_ERROR;
  chakra_error err = {0};
  uint32_t classes = 0, ranks = chakra_set_ranks(set);
  int groups = chakra_set_groups_origin(set) != CHAKRA_GROUPS_NONE;
  rc = chakra_set_share(set, s.out, s.threads, &classes, &err);
  if (!rc) cli_note_groups(set);
  chakra_set_close(set);
  if (rc) return cli_fail(&err);
  if (!s.quiet)
    printf("%u rank(s) in %u class(es): wrote %s.set.json, %u template(s) %s.class<k>.et%s%s%s\n", ranks, classes,
           s.out, classes, s.out, groups ? ", groups in " : "", groups ? s.out : "", groups ? ".json" : "");
  return 0;
}
