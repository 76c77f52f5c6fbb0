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
#ifdef CHAKRA_HAVE_MPI
#include <mpi.h>
#endif

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
  static const cli_choice scaling[] = {{"scale", 0}, {"as-is", 1}, {NULL, 0}};
  static const cli_choice symmetry[] = {{"auto", CHAKRA_SIM_SYMMETRY_AUTO}, {"off", CHAKRA_SIM_SYMMETRY_OFF}, {NULL, 0}};
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
      {.name = "comm-group-configuration", .kind = CLI_OPT_STRING, .dest = &a->files.comm_groups,
       .metavar = "GROUPS.json", .help = "communicator groups JSON", .file = CLI_FILE_IN},
      {.name = "vary", .kind = CLI_OPT_LIST, .dest = &a->vary, .metavar = "KEY=V1,V2,...",
       .help = "a key and its values (repeatable; the grid is the product)"},
      {.name = "symmetry", .kind = CLI_OPT_CHOICE, .dest = &a->symmetry, .choices = symmetry,
       .help = "as chakra sim's, for every configuration (auto: one NPU per rank class where the classes are a "
               "symmetry of the run; also a --vary key)",
       .def = "auto"},
      {.name = "output", .short_name = 'o', .kind = CLI_OPT_STRING, .dest = &a->output, .metavar = "FILE",
       .help = "the table: FILE.csv or FILE.json (rank 0 writes it)", .def = "stdout (CSV)", .file = CLI_FILE_OUT},
      {.name = "custom-collective-scaling", .kind = CLI_OPT_CHOICE, .dest = &a->scaling, .choices = scaling,
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

/* ---- the processes of the job ---- */

typedef struct sweep_job {
  int rank, size, mpi;
} sweep_job;

/* Started by mpirun (Open MPI, MPICH, Slurm's PMI)? A plain start runs
 * alone without initialising MPI, which would otherwise spawn a runtime. */
static int under_mpirun(void) {
  static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"};
  for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
    if (getenv(vars[i])) return 1;
  return 0;
}

static int job_start(sweep_job *j, int *argc, char ***argv) {
  memset(j, 0, sizeof *j);
  j->size = 1;
#ifdef CHAKRA_HAVE_MPI
  if (under_mpirun()) {
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
      cli_error("MPI_Init failed");
      return 2;
    }
    j->mpi = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &j->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &j->size);
  }
#else
  (void)argc, (void)argv;
  if (under_mpirun()) cli_warn("built without MPI: every process runs the whole grid");
#endif
  return 0;
}

static void job_end(const sweep_job *j) {
#ifdef CHAKRA_HAVE_MPI
  if (j->mpi) MPI_Finalize();
#else
  (void)j;
#endif
}

/* The worst status over the processes, so all take the same way out. */
static int job_agree(const sweep_job *j, int status) {
#ifdef CHAKRA_HAVE_MPI
  int worst = status;
  if (j->mpi) MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return worst;
#else
  (void)j;
  return status;
#endif
}

/* Rank 0's status, on every process. */
static int job_rank0(const sweep_job *j, int status) {
#ifdef CHAKRA_HAVE_MPI
  if (j->mpi) MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
#else
  (void)j;
#endif
  return status;
}

/* Rank 0 receives every process's rows and puts row i at all[point]. */
static int job_gather(const sweep_job *j, const chakra_sweep_row *mine, size_t n, chakra_sweep_row *all) {
  if (!j->mpi) {
    for (size_t i = 0; i < n; i++) all[mine[i].point] = mine[i];
    return 0;
  }
#ifdef CHAKRA_HAVE_MPI
  int bytes = (int)(n * sizeof *mine), *counts = NULL, *displs = NULL;
  char *buf = NULL;
  int rc = 0;
  if (j->rank == 0) {
    counts = calloc((size_t)j->size, sizeof *counts);
    displs = calloc((size_t)j->size, sizeof *displs);
    if (!counts || !displs) rc = 1;
  }
  if (job_agree(j, rc)) return free(counts), free(displs), 1;
  MPI_Gather(&bytes, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
  size_t total = 0;
  if (j->rank == 0) {
    for (int r = 0; r < j->size; r++) displs[r] = (int)total, total += (size_t)counts[r];
    if (!(buf = malloc(total ? total : 1))) rc = 1;
  }
  if (job_agree(j, rc)) return free(counts), free(displs), 1;
  MPI_Gatherv(mine, bytes, MPI_BYTE, buf, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
  if (j->rank == 0)
    for (size_t i = 0; i < total / sizeof *mine; i++) {
      chakra_sweep_row row;
      memcpy(&row, buf + i * sizeof row, sizeof row);
      all[row.point] = row;
    }
  free(buf);
  free(counts);
  free(displs);
#endif
  return 0;
}

/* ---- the run ---- */

static void print_problem(void *ctx, const chakra_problem *p) {
  const sweep_job *j = ctx;
  if (j->rank != 0) return; /* every process reads the same files */
  char line[2048];
  chakra_problem_format(p, line, sizeof line);
  cli_warn("%s", line);
}

static int print_progress(void *ctx, const char *phase, uint64_t done, uint64_t total) {
  (void)ctx, (void)phase;
  fprintf(stderr, "\rchakra sweep: %llu of %llu configurations\033[K", (unsigned long long)done,
          (unsigned long long)total);
  return 0;
}

/* Rank r runs points r, r + size, r + 2 size, ... */
static int run_share(const sweep_args *a, const chakra_sim_files *files, const sweep_job *j, const chakra_sweep *s,
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
  int tty = !a->quiet && j->rank == 0 && isatty(2);
  int rc = chakra_sweep_run(s, files, w, points, *n, threads, *rows, tty ? print_progress : NULL, NULL, err);
  if (tty) fputs("\r\033[K", stderr);
  free(points);
  return rc;
}

/* Loads, runs this process's points and gathers; the table on rank 0. */
static int sweep(const sweep_args *a, const sweep_job *j, const chakra_sweep *s, chakra_sweep_row *all) {
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
  int rank0_failed = job_rank0(j, rc ? 1 : 0);
  if (rc && (j->rank == 0 || !rank0_failed)) cli_error("%s", err.msg);
  if (job_agree(j, rc ? 1 : 0)) {
    free(mine);
    return 2;
  }
  rc = job_gather(j, mine, n, all);
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

/* The options and outputs checked by every process of a job: their
 * messages once, rank 0's (or, when rank 0 had none, the others'), and
 * the job goes on only if every process may. */
static int settle(const sweep_job *j, int st) {
  int r0 = job_rank0(j, st != CLI_PROCEED);
  cli_messages_release(j->rank == 0 || !r0);
  return job_agree(j, st != CLI_PROCEED) && st == CLI_PROCEED ? CLI_EXIT_ERROR : st;
}

int cmd_sweep(int argc, char **argv) {
  sweep_args a;
  memset(&a, 0, sizeof a);
  int mpi = under_mpirun();
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
  sweep_job j;
  if (mpi || st == CLI_PROCEED) {
    int started = job_start(&j, &argc, &argv);
    if (started) {
      cli_messages_release(1);
      st = started;
    } else {
      if (mpi) st = settle(&j, st);
      if (st == CLI_PROCEED) {
        st = sweep(&a, &j, s, all);
        if (!st && j.rank == 0) st = finish(&a, s, all);
        st = job_agree(&j, st);
      }
      job_end(&j);
    }
  }
  free(all);
  chakra_sweep_free(s);
  return st;
}
