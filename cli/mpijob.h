/* mpijob.h - the processes of a job started by mpirun, for commands that
 * deal independent simulations out over them (sweep's points, suite run's
 * workloads): start, agree on a status, gather fixed-size records on rank
 * 0. Without MPI (or without mpirun) a job is one process. */
#ifndef CHAKRA_CLI_MPIJOB_H
#define CHAKRA_CLI_MPIJOB_H

#include <stddef.h>

typedef struct cli_job {
  int rank, size, mpi;
} cli_job;

/* Started by mpirun (Open MPI, MPICH, Slurm's PMI)? */
int cli_under_mpirun(void);
/* MPI_Init when under mpirun (what names the whole job in warnings). 0 or
 * an exit status after one line. */
int cli_job_start(cli_job *j, int *argc, char ***argv, const char *alone_warning);
void cli_job_end(const cli_job *j);
/* The worst status over the processes, so all take the same way out. */
int cli_job_agree(const cli_job *j, int status);
/* Rank 0's status, on every process. */
int cli_job_rank0(const cli_job *j, int status);
/* Rank 0 receives every process's n records of `size` bytes: *all
 * (malloc'd, on rank 0) holds *total of them, process by process. 0, or 1
 * when memory ran out somewhere. */
int cli_job_gather(const cli_job *j, const void *mine, size_t n, size_t size, void **all, size_t *total);
/* The options and outputs checked by every process: their messages once
 * (rank 0's, or when rank 0 had none, the others'); the job goes on only
 * if every process may. */
int cli_job_settle(const cli_job *j, int st);

#endif
