/* mpijob.c - a job's processes under mpirun; see mpijob.h. */
#include "mpijob.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#ifdef CHAKRA_HAVE_MPI
#include <mpi.h>
#endif

/* A plain start runs alone without initialising MPI, which would
 * otherwise spawn a runtime. */
int cli_under_mpirun(void) {
  static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"};
  for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
    if (getenv(vars[i])) return 1;
  return 0;
}

int cli_job_start(cli_job *j, int *argc, char ***argv, const char *alone_warning) {
  memset(j, 0, sizeof *j);
  j->size = 1;
#ifdef CHAKRA_HAVE_MPI
  (void)alone_warning;
  if (cli_under_mpirun()) {
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
  if (cli_under_mpirun()) cli_warn("%s", alone_warning);
#endif
  return 0;
}

void cli_job_end(const cli_job *j) {
#ifdef CHAKRA_HAVE_MPI
  if (j->mpi) MPI_Finalize();
#else
  (void)j;
#endif
}

int cli_job_agree(const cli_job *j, int status) {
#ifdef CHAKRA_HAVE_MPI
  int worst = status;
  if (j->mpi) MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return worst;
#else
  (void)j;
  return status;
#endif
}

int cli_job_rank0(const cli_job *j, int status) {
#ifdef CHAKRA_HAVE_MPI
  if (j->mpi) MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
#else
  (void)j;
#endif
  return status;
}

int cli_job_gather(const cli_job *j, const void *mine, size_t n, size_t size, void **all, size_t *total) {
  *all = NULL;
  *total = 0;
  if (!j->mpi) {
    if (!(*all = malloc(n ? n * size : 1))) return 1;
    if (n) memcpy(*all, mine, n * size);
    *total = n;
    return 0;
  }
#ifdef CHAKRA_HAVE_MPI
  int bytes = (int)(n * size), *counts = NULL, *displs = NULL;
  char *buf = NULL;
  int rc = 0;
  if (j->rank == 0) {
    counts = calloc((size_t)j->size, sizeof *counts);
    displs = calloc((size_t)j->size, sizeof *displs);
    if (!counts || !displs) rc = 1;
  }
  if (cli_job_agree(j, rc)) return free(counts), free(displs), 1;
  MPI_Gather(&bytes, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
  size_t sum = 0;
  if (j->rank == 0) {
    for (int r = 0; r < j->size; r++) displs[r] = (int)sum, sum += (size_t)counts[r];
    if (!(buf = malloc(sum ? sum : 1))) rc = 1;
  }
  if (cli_job_agree(j, rc)) return free(counts), free(displs), 1;
  MPI_Gatherv(mine, bytes, MPI_BYTE, buf, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
  free(counts);
  free(displs);
  *all = buf;
  *total = sum / size;
#endif
  return 0;
}

int cli_job_settle(const cli_job *j, int st) {
  int r0 = cli_job_rank0(j, st != CLI_PROCEED);
  cli_messages_release(j->rank == 0 || !r0);
  return cli_job_agree(j, st != CLI_PROCEED) && st == CLI_PROCEED ? CLI_EXIT_ERROR : st;
}
