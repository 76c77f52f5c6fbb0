/* cmd_stats.c - chakra stats: per-rank and total statistics. */
#include <stdlib.h>
#include <string.h>

#include "chakra/attr.h"
#include "chakra/stats.h"
#include "chakra/validate.h"
#include "cli.h"

static const char about[] =
    "Per rank and in total: nodes by type and collective type, communication\n"
    "bytes by type and group, compute nodes, ops and recorded durations,\n"
    "dependency counts and the critical path (longest chain of duration_micros).\n"
    "PREFIX means PREFIX.0.et, PREFIX.1.et, ... or a shared set, PREFIX.set.json\n"
    "and its class templates (docs/share.md).\n"
    "\n"
    "Also runs chakra validate's checks and prints each problem it would\n"
    "report as one warning line on stderr (at most 20, then a count); the\n"
    "statistics and the exit status do not change.\n";

/* Problems validate would report, as stats warnings: one line each, the
 * first CHECK_LINES of them, then how many more. */
enum { CHECK_LINES = 20 };

typedef struct checks {
  unsigned long long seen;
} checks;

static void check_problem(void *ctx, const chakra_problem *p) {
  checks *c = ctx;
  if (c->seen++ >= CHECK_LINES) return;
  char line[2048];
  chakra_problem_format(p, line, sizeof line);
  cli_warn("%s%s", line, p->severity >= CHAKRA_SEV_ERROR ? " (an error for chakra validate)" : "");
}

/* Fails only when the checks cannot run (the groups file cannot be read or
 * is not one): an input given and unusable, before anything is printed. */
static int run_checks(const chakra_set *set, chakra_error *err) {
  checks c = {0};
  chakra_validate_summary sum;
  int rc = chakra_validate_set(set, NULL, check_problem, &c, &sum, err);
  if (!rc && c.seen > CHECK_LINES)
    cli_warn("%llu more problem(s) not shown; chakra validate lists them all", c.seen - CHECK_LINES);
  return rc;
}

static const char *type_name(int i) { return i < 8 ? chakra_node_type_name(i) : "UNKNOWN_TYPE"; }

static const char *coll_name(int i) { return i < 10 ? chakra_comm_type_name(i) : "UNSPECIFIED"; }

static void print_text(const char *title, const chakra_rank_stats *s, int is_file) {
  printf("%s\n", title);
  if (is_file) printf("  version %s, schema %s\n", *s->version ? s->version : "(unset)",
                            *s->schema ? s->schema : "(unset)");
  printf("  nodes           %llu:", (unsigned long long)s->nodes);
  for (int i = 0; i < CHAKRA_STATS_TYPES; i++)
    if (s->by_type[i]) printf(" %s %llu", type_name(i), (unsigned long long)s->by_type[i]);
  printf("\n");
  for (int i = 0; i < CHAKRA_STATS_COLLS; i++)
    if (s->coll_ops[i])
      printf("  collective      %-20s %llu ops, %llu bytes\n", coll_name(i),
             (unsigned long long)s->coll_ops[i], (unsigned long long)s->coll_bytes[i]);
  if (s->send_ops || s->recv_ops)
    printf("  point-to-point  send %llu ops, %llu bytes; recv %llu ops, %llu bytes\n",
           (unsigned long long)s->send_ops, (unsigned long long)s->send_bytes,
           (unsigned long long)s->recv_ops, (unsigned long long)s->recv_bytes);
  if (s->mem_ops)
    printf("  remote memory   %llu ops, %llu bytes\n", (unsigned long long)s->mem_ops,
           (unsigned long long)s->mem_bytes);
  for (uint64_t i = 0; i < s->n_groups; i++)
    printf("  group %-9s %llu ops, %llu bytes sent\n",
           s->groups[i].name[0] ? s->groups[i].name : "(all)", (unsigned long long)s->groups[i].ops,
           (unsigned long long)s->groups[i].bytes);
  printf("  compute         GPU %llu nodes, %llu us; CPU %llu nodes, %llu us; %llu ops, %llu tensor bytes\n",
         (unsigned long long)s->gpu_ops, (unsigned long long)s->gpu_us,
         (unsigned long long)s->cpu_ops, (unsigned long long)s->cpu_us,
         (unsigned long long)s->num_ops, (unsigned long long)s->tensor_bytes);
  printf("  dependencies    %llu data, %llu ctrl as written; %llu edges used (%llu forward); "
         "max %llu on a node; %llu roots, %llu leaves\n",
         (unsigned long long)s->data_deps, (unsigned long long)s->ctrl_deps,
         (unsigned long long)s->edges, (unsigned long long)s->forward_deps,
         (unsigned long long)s->max_deps, (unsigned long long)s->roots, (unsigned long long)s->leaves);
  if (s->missing_ctrl_deps || s->self_ctrl_deps || s->duplicate_deps)
    printf("  ignored deps    %llu ctrl on absent ids, %llu ctrl on self, %llu duplicates\n",
           (unsigned long long)s->missing_ctrl_deps, (unsigned long long)s->self_ctrl_deps,
           (unsigned long long)s->duplicate_deps);
  if (s->unordered)
    printf("  critical path   undefined: %llu nodes are on dependency cycles (try --ignore-ctrl-deps)\n",
           (unsigned long long)s->unordered);
  else if (is_file)
    printf("  critical path   %llu us (ends at node %llu)\n", (unsigned long long)s->critical_path_us,
           (unsigned long long)s->critical_end_id);
  else
    printf("  critical path   %llu us (longest rank)\n", (unsigned long long)s->critical_path_us);
}

int cmd_stats(int argc, char **argv) {
  int json = 0, ignore_ctrl = 0, no_checks = 0;
  const char *groups = NULL;
  const cli_opt opts[] = {
      {.name = "json", .kind = CLI_OPT_FLAG, .dest = &json, .help = "machine-readable output on stdout"},
      {.name = "ignore-ctrl-deps", .kind = CLI_OPT_FLAG, .dest = &ignore_ctrl,
       .help = "use data deps only (some older traces are cyclic through their control deps; the critical "
               "path is then undefined unless this is given)"},
      {.name = "comm-group-configuration", .alias = "comm-groups", .kind = CLI_OPT_STRING, .dest = &groups,
       .metavar = "FILE",
       .help = "communicator groups for the checks ({\"1\": [0, 1], ...}, as for chakra sim)",
       .file = CLI_FILE_IN},
      {.name = "no-checks", .kind = CLI_OPT_FLAG, .dest = &no_checks,
       .help = "skip validate's checks (they read every file a second time)"},
      {0}};
  const cli_command cmd = {.name = "stats", .args = "FILE.et... | PREFIX", .min_args = 1, .max_args = -1,
                           .about = about, .opts = opts, .args_file = CLI_FILE_TRACES};
  cli_args pos;
  int st = cli_parse(&cmd, argc, argv, &pos);
  if (st != CLI_PROCEED) return st;
  chakra_set_options so = {.comm_groups = groups};
  chakra_set *set = cli_open_set(pos.n, pos.v, &so);
  if (!set) return 2;
  int n = (int)chakra_set_ranks(set);
  const char **names = calloc((size_t)n, sizeof *names);
  chakra_rank_stats *ranks = calloc((size_t)n, sizeof *ranks), total;
  memset(&total, 0, sizeof total);
  chakra_error err = {0};
  int rc = !ranks || !names ? chakra_error_set(&err, CHAKRA_ENOMEM, "out of memory") : 0;
  for (int r = 0; r < n && !rc; r++) {
    names[r] = chakra_set_rank_name(set, (uint32_t)r);
    rc = chakra_stats_set_rank(set, (uint32_t)r, ignore_ctrl, &ranks[r], &err);
  }
  if (!rc && chakra_stats_sum(&total, ranks, (size_t)n)) rc = chakra_error_set(&err, CHAKRA_ENOMEM, "out of memory");
  if (!rc && !no_checks) rc = run_checks(set, &err);
  if (!rc) {
    if (json) {
      rc = chakra_stats_write_json("-", names, ranks, (size_t)n, &total, &err);
    } else {
      for (int r = 0; r < n; r++) {
        char title[4200];
        snprintf(title, sizeof title, "rank %d: %s", r, names[r]);
        print_text(title, &ranks[r], 1);
      }
      if (n > 1) print_text("total", &total, 0);
    }
  }
  if (!rc && !no_checks) cli_note_groups(set);
  if (!rc && total.saturated)
    cli_warn("a sum of durations, bytes or ops passed 2^64 - 1 and is shown stopped there (18446744073709551615)");
  if (!rc && total.num_ops && !total.cpu_us && !total.gpu_us)
    cli_warn("compute nodes carry num_ops but no duration_micros, so the critical path (durations only) is 0; "
             "chakra sim times them from num_ops with roofline-enabled in the system configuration");
  for (int r = 0; ranks && r < n; r++) chakra_stats_free(&ranks[r]);
  chakra_stats_free(&total);
  free(ranks);
  free(names);
  chakra_set_close(set);
  return rc ? cli_fail(&err) : 0;
}
