/* cli.h - what the subcommands of the chakra program share.
 *
 * chakra.c only dispatches; each cmd_<name>.c parses its own options,
 * calls libchakra and turns errors into one line on stderr and an exit
 * status: 0 success, 1 the input has problems (validate) or the command
 * failed, 2 usage errors and unreadable input. */
#ifndef CHAKRA_CLI_H
#define CHAKRA_CLI_H

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
int cmd_dot(int argc, char **argv);
int cmd_timeline(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_obfuscate(int argc, char **argv);
int cmd_plot(int argc, char **argv);

/* Prints "chakra: <message>" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints err's message as a one-line error; returns the exit status for it. */
int cli_fail(const chakra_error *err);
/* For library warnings given as callbacks. */
void cli_warn_cb(void *ctx, const char *msg);

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
