/* cmd_sweep.c - chakra sweep: one workload simulated on a grid of
 * configurations, in-process through the library (chakra/sweep.h). Under
 * mpirun the points are dealt out over the processes and rank 0 gathers the
 * table; otherwise they run on the local cores. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chakra/build.h"
#include "chakra/sweep.h"
#include "cli.h"
#include "mpijob.h"
#include "progress.h"

static const char about[] =
    "Simulates the workload PREFIX.0.et .. PREFIX.<N-1>.et (or a shared set,\n"
    "PREFIX.set.json) on every configuration of\n"
    "a grid: the system, network (and remote-memory, comm-group) files with the\n"
    "values of each --vary KEY=V1,V2,... set on top (the cartesian product of the\n"
    "--vary options; the last one varies fastest). The workload is loaded once per\n"
    "process; the simulations run in-process. Writes one row per configuration:\n"
    "the varied values, then status, ranks finished, max/min/mean finish time,\n"
    "the slowest rank, exposed communication, busy communication and compute per\n"
    "rank, events, messages and the simulation's wall time.\n\n"
    "KEY: bandwidth, latency, topology (every dimension; GB/s, ns, Ring|\n"
    "FullyConnected|Switch) or bandwidth[D], latency[D], topology[D] (dimension D,\n"
    "also spelt network.bandwidth[D]); network-model (aware|unaware),\n"
    "injection-scale, num-queues-per-dim, symmetry (auto|off); any other KEY (or\n"
    "system.KEY) is a key of the system or remote-memory JSON, its value JSON or a\n"
    "plain word.\n\n"
    "  chakra sweep --workload ar --system sys.json --network ring.yml \\\n"
    "      --vary bandwidth=25,50,100 --vary active-chunks-per-dimension=1,2,4 -o grid.csv\n"
    "  mpirun -np 8 chakra sweep ... -o grid.json     (points spread over 8 processes)\n";

static const char footer[] =
    "Output: CSV, or JSON when FILE ends in .json; standard output by default.\n"
    "Exit status: 0 every configuration ran and every rank finished; 1 some\n"
    "configuration failed or had ranks that could not finish (see its row); 2 bad\n"
    "input (an unknown --vary key, unreadable files).\n";

typedef struct sweep_args {
  chakra_sim_files files;
  const char *workload, *output;
  cli_list vary;
  uint32_t threads;
  int quiet, scaling; /* scaling: -1 not given, else chakra sim's --custom-collective-scaling */
  int symmetry;       /* -1 not given, else chakra sim's --symmetry */
} sweep_args;

static int parse_sweep_args(sweep_args *a, int argc, char **argv) {
  a->scaling = a->symmetry = -1;
  const cli_opt opts[] = {
      {.name = "workload", .alias = "workload-configuration", .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED,
       .dest = &a->workload, .metavar = "PREFIX", .help = "trace prefix", .file = CLI_FILE_TRACES},
      {.name = "system", .alias = "system-configuration", .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED,
       .dest = &a->files.system, .metavar = "SYS.json", .help = "system JSON", .file = CLI_FILE_IN},
      {.name = "network", .alias = "network-configuration", .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED,
       .dest = &a->files.network, .metavar = "NET.yml",
       .help = "network: ASTRA-sim YAML, a link-list file or an inline topology (docs/topology.md)",
       .file = CLI_FILE_IN},
      {.name = "remote-memory", .alias = "remote-memory-configuration", .kind = CLI_OPT_STRING,
       .dest = &a->files.remote_memory, .metavar = "MEM.json", .help = "remote memory JSON", .def = "none",
       .file = CLI_FILE_IN},
      {.name = "comm-group-configuration", .alias = "comm-groups", .kind = CLI_OPT_STRING, .dest = &a->files.comm_groups,
       .metavar = "GROUPS.json", .help = "communicator groups JSON", .file = CLI_FILE_IN},
      {.name = "vary", .kind = CLI_OPT_LIST, .dest = &a->vary, .metavar = "KEY=V1,V2,...",
       .help = "a key and its values (repeatable; the grid is the product)"},
      {.name = "symmetry", .kind = CLI_OPT_CHOICE, .dest = &a->symmetry, .choices = cli_symmetry_choices,
       .help = "as chakra sim's, for every configuration (auto: one NPU per rank class where the classes are a "
               "symmetry of the run; also a --vary key)",
       .def = "auto"},
      {.name = "output", .short_name = 'o', .kind = CLI_OPT_STRING, .dest = &a->output, .metavar = "FILE",
       .help = "the table: FILE.csv or FILE.json (rank 0 writes it)", .def = "stdout (CSV)", .file = CLI_FILE_OUT},
      {.name = "custom-collective-scaling", .kind = CLI_OPT_CHOICE, .dest = &a->scaling, .choices = cli_scaling_choices,
       .help = "as chakra sim's, for every configuration (scale: a custom collective's messages and compute "
               "times follow the collective's size; as-is: they run as made; also a --vary key)",
       .def = "scale"},
      {.name = "threads", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&a->threads), .min = 1, .max = 1024,
       .help = "simulations at once in each process", .def = "CPUs; 1 per process under mpirun"},
      {.name = "quiet", .short_name = 'q', .kind = CLI_OPT_FLAG, .dest = &a->quiet,
       .help = "no progress line on stderr"},
      {0}};
  const cli_command cmd = {.name = "sweep", .max_args = 0, .about = about, .footer = footer, .opts = opts};
  cli_args pos;
  return cli_parse(&cmd, argc, argv, &pos);
}

/* Rank 0 receives every process's rows and puts row i at all[point]. */
static int gather_rows(const cli_job *j, const chakra_sweep_row *mine, size_t n, chakra_sweep_row *all) {
  void *got = NULL;
  size_t total = 0;
  if (cli_job_gather(j, mine, n, sizeof *mine, &got, &total)) return 1;
  for (size_t i = 0; i < total; i++) {
    chakra_sweep_row row;
    memcpy(&row, (char *)got + i * sizeof row, sizeof row);
    all[row.point] = row;
  }
  free(got);
  return 0;
}

/* ---- the run ---- */

static void print_problem(void *ctx, const chakra_problem *p) {
  const cli_job *j = ctx;
  if (j->rank != 0) return; /* every process reads the same files */
  char line[2048];
  chakra_problem_format(p, line, sizeof line);
  cli_warn("%s", line);
}

/* Rank r runs points r, r + size, r + 2 size, ... */
static int run_share(const sweep_args *a, const chakra_sim_files *files, const cli_job *j, const chakra_sweep *s,
                     const chakra_sim_workload *w, chakra_sweep_row **rows, size_t *n, chakra_error *err) {
  size_t total = chakra_sweep_points(s);
  *n = total / (size_t)j->size + (size_t)((size_t)j->rank < total % (size_t)j->size);
  size_t *points = malloc((*n ? *n : 1) * sizeof *points);
  *rows = calloc(*n ? *n : 1, sizeof **rows);
  if (!points || !*rows) {
    free(points);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < *n; i++) points[i] = (size_t)j->rank + i * (size_t)j->size;
  unsigned threads = a->threads ? a->threads : j->mpi ? 1 : 0;
  cli_progress bar;
  void *ctx;
  chakra_progress_fn fn = cli_progress_start(&bar, a->quiet || j->rank != 0, "configurations", &ctx);
  int rc = chakra_sweep_run(s, files, w, points, *n, threads, *rows, fn, ctx, err);
  cli_progress_end(&bar);
  free(points);
  return rc;
}

/* Loads, runs this process's points and gathers; the table on rank 0. */
static int sweep(const sweep_args *a, const cli_job *j, const chakra_sweep *s, chakra_sweep_row *all) {
  chakra_error err = {0};
  chakra_sim_config *base = NULL;
  chakra_sim_workload *w = NULL;
  chakra_set *set = NULL;
  chakra_sim_files files = a->files;
  files.comm_groups = NULL; /* the trace set's, loaded once with it */
  int rc = chakra_sweep_check(s, &files, print_problem, (void *)j, &err);
  if (!rc) rc = chakra_sim_config_load(&base, &files, NULL, NULL, &err);
  if (!rc) {
    uint32_t npus = chakra_topo_npus(chakra_sim_config_topo(base));
    char why[64];
    snprintf(why, sizeof why, "the network has %u NPUs", npus);
    chakra_set_options so = {.ranks = npus, .ranks_reason = why, .comm_groups = a->files.comm_groups};
    rc = chakra_set_open(&set, a->workload, &so, &err);
  }
  if (!rc) rc = chakra_sim_workload_load_set(&w, set, j->mpi ? 1 : 0, print_problem, (void *)j, &err);
  if (!rc && j->rank == 0 && !a->quiet) cli_note_groups(set);
  chakra_set_close(set);
  chakra_sim_config_free(base);
  chakra_sweep_row *mine = NULL;
  size_t n = 0;
  if (!rc) rc = run_share(a, &files, j, s, w, &mine, &n, &err);
  chakra_sim_workload_free(w);
  /* The files are the same for all: one line from rank 0, unless only
   * some other process failed (a node without the traces). */
  int rank0_failed = cli_job_rank0(j, rc ? 1 : 0);
  if (rc && (j->rank == 0 || !rank0_failed)) cli_error("%s", err.msg);
  if (cli_job_agree(j, rc ? 1 : 0)) {
    free(mine);
    return 2;
  }
  rc = gather_rows(j, mine, n, all);
  free(mine);
  return rc ? (cli_error("out of memory"), 2) : 0;
}

static int finish(const sweep_args *a, const chakra_sweep *s, const chakra_sweep_row *all) {
  chakra_error err = {0};
  if (chakra_sweep_write(s, all, a->output ? a->output : "-", &err)) return cli_fail(&err);
  size_t bad = 0, first = 0;
  for (size_t p = chakra_sweep_points(s); p-- > 0;)
    if (all[p].status != CHAKRA_SWEEP_OK) bad++, first = p;
  if (!bad) return 0;
  cli_error("%zu of %zu configurations did not run to the end; the first, row %zu: %s", bad,
            chakra_sweep_points(s), first + 1, all[first].error);
  return 1;
}

int cmd_sweep(int argc, char **argv) {
  sweep_args a;
  memset(&a, 0, sizeof a);
  int mpi = cli_under_mpirun();
  if (mpi) cli_messages_hold();
  int st = parse_sweep_args(&a, argc, argv);
  chakra_sweep *s = NULL;
  chakra_sweep_row *all = NULL;
  chakra_error err = {0};
  if (st == CLI_PROCEED && chakra_sweep_new(&s, a.vary.items, a.vary.n, &err)) st = cli_fail(&err);
  if (st == CLI_PROCEED && a.scaling >= 0 &&
      chakra_sweep_fix(s, a.scaling ? "custom-collective-scaling=as-is" : "custom-collective-scaling=scale", &err))
    st = cli_fail(&err);
  if (st == CLI_PROCEED && a.symmetry >= 0 &&
      chakra_sweep_fix(s, a.symmetry == CHAKRA_SIM_SYMMETRY_OFF ? "symmetry=off" : "symmetry=auto", &err))
    st = cli_fail(&err);
  cli_list_free(&a.vary);
  if (st == CLI_PROCEED && !(all = calloc(chakra_sweep_points(s), sizeof *all))) st = (cli_error("out of memory"), 2);
  cli_job j;
  if (mpi || st == CLI_PROCEED) {
    int started = cli_job_start(&j, &argc, &argv, "built without MPI: every process runs the whole grid");
    if (started) {
      cli_messages_release(1);
      st = started;
    } else {
      if (mpi) st = cli_job_settle(&j, st);
      if (st == CLI_PROCEED) {
        st = sweep(&a, &j, s, all);
        if (!st && j.rank == 0) st = finish(&a, s, all);
        st = cli_job_agree(&j, st);
      }
      cli_job_end(&j);
    }
  }
  free(all);
  chakra_sweep_free(s);
  return st;
}
