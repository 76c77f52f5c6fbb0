/* cli.h - what the subcommands of the chakra program share.
 *
 * chakra.c only dispatches; each cmd_<name>.c parses its own options,
 * calls libchakra and turns errors into one line on stderr and an exit
 * status: 0 success, 1 the input has problems (validate) or the command
 * failed, 2 usage errors and unreadable input. */
#ifndef CHAKRA_CLI_H
#define CHAKRA_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "chakra/error.h"

int cmd_jsonize(int argc, char **argv);
int cmd_pack(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_sim(int argc, char **argv);
int cmd_link(int argc, char **argv);
int cmd_convert(int argc, char **argv);

/* Prints "chakra: <message>" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints err's message as a one-line error; returns the exit status for it. */
int cli_fail(const chakra_error *err);
/* For library warnings given as callbacks: cli_diag prints
 * "chakra: SEVERITY: FILE: node N at offset O: FIELD: what" on stderr;
 * cli_warn_cb takes an already formatted line (chakra_sim_run). */
void cli_diag(void *ctx, const chakra_problem *p);
void cli_warn_cb(void *ctx, const char *msg);

/* Phase timing (--timing, or CHAKRA_TIMING set and not "0"): a
 * chakra_progress_fn that prints "chakra: timing: PHASE SECONDS" on stderr
 * as each phase ends; ctx is a cli_timer. */
typedef struct cli_timer {
  double start;
} cli_timer;
int cli_timing(void *ctx, const char *phase, uint64_t done, uint64_t total);
int cli_timing_wanted(int flag);

/* True if arg is "-h" or "--help". */
int cli_is_help(const char *arg);
/* Parses an unsigned integer with an optional K/M/G (binary) suffix;
 * returns 0 on success. */
int cli_parse_size(const char *s, unsigned long long *out);

/* Expands a list of FILE or PREFIX arguments into .et paths: an argument
 * that names an existing file is taken as is, otherwise it is a prefix and
 * PREFIX.0.et, PREFIX.1.et, ... are taken while they exist. Returns the
 * count (paths malloc'd in *out) or -1 after printing an error. */
int cli_expand_traces(int argc, char **argv, char ***out);
void cli_free_paths(char **paths, int n);

#endif
