/* suitecli.h - what the files of `chakra suite` share (cmd_suite.c: list,
 * make, score, board; cmd_suiterun.c: run and check, which simulate). */
#ifndef CHAKRA_CLI_SUITECLI_H
#define CHAKRA_CLI_SUITECLI_H

#include "chakra/suite.h"

/* The version named (NULL: the default), or NULL after one error line. */
const chakra_suite_version *suitecli_version(const char *name);
int suitecli_run(int argc, char **argv);
int suitecli_check(int argc, char **argv);

#endif
