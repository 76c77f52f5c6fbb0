/* cli.h - what the subcommands of the chakra program share.
 *
 * chakra.c only dispatches; each cmd_<name>.c declares its options as a
 * table for the parser in opts.h, calls libchakra and turns errors into one line on stderr and an exit
 * status: 0 success, 1 the input has problems (validate) or the command
 * failed, 2 usage errors and unreadable input. */
#ifndef CHAKRA_CLI_H
#define CHAKRA_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "chakra/error.h"
#include "chakra/graph.h"
#include "chakra/set.h"
#include "opts.h"

int cmd_jsonize(int argc, char **argv);
int cmd_pack(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_sim(int argc, char **argv);
int cmd_link(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_coll(int argc, char **argv);
int cmd_synth(int argc, char **argv);
int cmd_share(int argc, char **argv);
int cmd_unshare(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_replay(int argc, char **argv); /* only with MPI (CHAKRA_HAVE_MPI) */
int cmd_sweep(int argc, char **argv);
int cmd_suite(int argc, char **argv);
int cmd_dot(int argc, char **argv);
int cmd_timeline(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_obfuscate(int argc, char **argv);
int cmd_plot(int argc, char **argv);
/* Runs the subcommand argv[0] (as typed after "chakra") with its words;
 * returns its exit status (chakra.c; compat.c runs the reference tools'
 * commands through it). */
int cli_run_command(int argc, char **argv);

/* Exit statuses, the same in every command: */
enum {
  CLI_EXIT_OK = 0,       /* done; for checkers: nothing found */
  CLI_EXIT_PROBLEMS = 1, /* the command ran and found problems (validate, sim ranks that cannot finish) */
  CLI_EXIT_ERROR = 2     /* usage error, unreadable or invalid input, or the command could not do its job */
};

/* Prints "chakra CMD: <message>" on stderr (one line). */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A summary line on stderr in the same form, "chakra CMD: <message>". */
void cli_summary(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "chakra CMD: note: ..." on stderr: what a command chose for the user. */
void cli_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Messages (cli_error, cli_warn, cli_diag) held back, then printed or
 * dropped: a command run by every process of an MPI job prints its
 * option and output checks' messages once per job. */
void cli_messages_hold(void);
void cli_messages_release(int print);
FILE *cli_messages(void); /* where they go now (the option parser's too) */
/* Flushes standard output: a write that failed there (a full disk, a
 * closed pipe) makes status CLI_EXIT_ERROR, with one line unless the
 * command already failed with its own. */
int cli_stdout_end(int status);
/* Prints err's message as a one-line error; returns CLI_EXIT_ERROR. */
int cli_fail(const chakra_error *err);

/* Choice tables several commands' options share (one spelling everywhere):
 * --custom-collective-scaling scale|as-is, --symmetry auto|off,
 * --report-format json|csv. */
extern const cli_choice cli_scaling_choices[];
extern const cli_choice cli_symmetry_choices[];
extern const cli_choice cli_report_formats[];
/* The output check (cli/outputs.c). cli_parse() declares the files the
 * command's table marks (cli_opt.file, cli_command.args_file) and those
 * its `files` hook adds with cli_files_*(), and checks them once, before
 * the command does any work (no output is an input or another output,
 * prefixes and links resolved: chakra/output.h); a problem is one line
 * and CLI_EXIT_ERROR. From then on the outputs are held complete under
 * temporary names; main() passes the command's status to
 * cli_outputs_end(), which puts them all in place after 0 or 1 and
 * removes them after anything else. label names an output in messages. */
void cli_files_input(const char *path);
void cli_files_traces(const char *file_or_prefix);
void cli_files_output(const char *path, const char *label);
void cli_files_prefix(const char *prefix, const char *label);
void cli_files_shared(const char *prefix, const char *label); /* a set in the shared form (refused over rank files) */
void cli_files_groups_of(const char *prefix);                  /* PREFIX.json, the groups written with a set */
void cli_files_output_mkdir(const char *path, const char *label); /* its folder is created if missing */
/* The check, for commands with check_later; 0 or CLI_EXIT_ERROR. */
int cli_outputs_begin(void);
/* Returns status, or CLI_EXIT_ERROR when the outputs cannot be put in place. */
int cli_outputs_end(int status);
/* For library warnings given as callbacks: cli_diag prints
 * "chakra CMD: SEVERITY: FILE: node N at offset O: FIELD: what" on stderr;
 * cli_warn_cb takes an already formatted line (chakra_sim_run). */
void cli_diag(void *ctx, const chakra_problem *p);
void cli_warn_cb(void *ctx, const char *msg);

/* Phase timing (--timing, or CHAKRA_TIMING set and not "0"): a
 * chakra_progress_fn that prints "chakra CMD: timing: PHASE SECONDS" on stderr
 * as each phase ends; ctx is a cli_timer. */
typedef struct cli_timer {
  double start;
} cli_timer;
int cli_timing(void *ctx, const char *phase, uint64_t done, uint64_t total);
int cli_timing_wanted(int flag);

/* True if arg is "-h" or "--help". */
int cli_is_help(const char *arg);

/* Opens FILE... | PREFIX arguments as a trace set (chakra_set_open_args:
 * files as ranks in order, a prefix's rank files, gaps refused); prints
 * the error and returns NULL on failure. opt may be NULL. */
chakra_set *cli_open_set(int argc, char **argv, const chakra_set_options *opt);
/* "chakra CMD: note: communicator groups from PREFIX.json, found beside the
 * traces ..." when the set's groups came from there. */
void cli_note_groups(const chakra_set *s);

/* 1 if arg is a trace PREFIX rather than a FILE: not "-", and no file
 * (nor FIFO: anything but a directory) of that name exists, or it is a
 * shared set's manifest PREFIX.set.json. */
int cli_names_prefix(const char *arg);

/* Loads a rank of s for a view (dot, timeline) whatever the graph's defects:
 * missing deps are dropped and cycle members appended, each problem
 * counted; one warning line summarises them. Returns 0 or an exit status;
 * the caller frees *out with chakra_graph_free. */
int cli_load_tolerant(const chakra_set *s, uint32_t rank, int ignore_ctrl_deps, chakra_graph **out);

#endif
