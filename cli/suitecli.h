/* suitecli.h - what the files of `chakra suite` share (cmd_suite.c: list,
 * make, score, board; cmd_suiterun.c: run and check, which simulate;
 * cmd_suitereplay.c: run --replay). */
#ifndef CHAKRA_CLI_SUITECLI_H
#define CHAKRA_CLI_SUITECLI_H

#include "chakra/suite.h"
#include "mpijob.h"

/* The version named (NULL: the default), or NULL after one error line. */
const chakra_suite_version *suitecli_version(const char *name);
int suitecli_run(int argc, char **argv);
int suitecli_check(int argc, char **argv);
/* --replay (cmd_suitereplay.c): MPI started through the replay library;
 * then d's workloads of exactly the job's size replayed, their metrics on
 * rank 0 in out (*n of them; 0 on the other ranks). 0 or an exit status. */
int suitecli_replay_start(cli_job *j, int *argc, char ***argv);
int suitecli_replay(const chakra_suite_dir *d, const char *cls, const cli_job *j, chakra_suite_metrics *out,
                    size_t *n);

#endif
