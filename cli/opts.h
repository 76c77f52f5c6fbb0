/* opts.h - the option parser every chakra subcommand uses, git style.
 *
 * A subcommand describes its options in a table (long name, optional short
 * name, kind, destination, value name, help, default shown) and hands argv
 * to cli_parse(), which accepts
 *   --name=VALUE and --name VALUE     for every option that takes a value
 *   -x VALUE and -xVALUE              for options with a short name
 *   --                                ends the options
 * An option's `alias` lists other long names it is also known by (old or
 * foreign spellings, e.g. STAGE's --micro_batch); --help mentions them.
 * and keeps the other arguments, in order, as positional arguments. The
 * usage line and the --help text are generated from the same table, so they
 * cannot disagree with what is parsed. Any mistake gives one line on stderr,
 *   chakra CMD: --opt: what was expected
 * and exit status 2. A non-repeatable option given twice takes the last value.
 *
 * Values are checked by kind:
 *   FLAG    no value; stores `value` (1 unless set) into an int
 *   STRING  any text, stored as a pointer into argv
 *   COUNT   decimal digits only, no sign, suffix or blank, within
 *           [min, max] (max 0 = the destination type's largest value);
 *           stored into an unsigned or signed integer of any width
 *   SIZE    a COUNT of bytes that may end in K, M, G or T (binary:
 *           1M = 1048576), optionally followed by "iB" or "B"
 *   DOUBLE  a finite decimal number; CLI_OPT_POSITIVE requires > 0
 *   CHOICE  one of the names in `choices` (case-insensitive); stores the
 *           chosen entry's value into an int
 *   LIST    repeatable STRING, appended to a cli_list (free with
 *           cli_list_free) */
#ifndef CHAKRA_CLI_OPTS_H
#define CHAKRA_CLI_OPTS_H

#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum cli_opt_kind {
  CLI_OPT_FLAG,
  CLI_OPT_STRING,
  CLI_OPT_COUNT,
  CLI_OPT_SIZE,
  CLI_OPT_DOUBLE,
  CLI_OPT_CHOICE,
  CLI_OPT_LIST,
} cli_opt_kind;

enum {
  CLI_OPT_REQUIRED = 1, /* the command does not run without it */
  CLI_OPT_POSITIVE = 2, /* DOUBLE: must be > 0 */
};

/* What a STRING or LIST option's value, or the positional arguments, name:
 * the files a command reads and writes. cli_parse() declares them for the
 * output check (cli.h): no output may be an input or another output. */
typedef enum cli_file_role {
  CLI_FILE_NONE = 0,
  CLI_FILE_IN,         /* a file read (a value that names no file, such as mesh:8x8, is no input) */
  CLI_FILE_TRACES,     /* a trace FILE, or a PREFIX: every PREFIX.<r>.et */
  CLI_FILE_OUT,        /* a file written */
  CLI_FILE_OUT_PREFIX, /* PREFIX.<r>.et written */
  CLI_FILE_OUT_OR_PREFIX, /* a file written, or PREFIX.<r>.et when the first positional argument is a prefix */
  CLI_FILE_OUT_SHARED,    /* a trace set written in the shared form: PREFIX.set.json and PREFIX.class<k>.et */
} cli_file_role;

typedef struct cli_choice {
  const char *name; /* NULL ends the list */
  int value;
} cli_choice;

/* The values of a LIST option, pointers into argv; items is malloc'd. */
typedef struct cli_list {
  const char **items;
  size_t n, cap;
} cli_list;

typedef struct cli_opt {
  const char *name;  /* long name without "--"; NULL ends the table */
  const char *alias; /* other long names accepted, '|'-separated ("npus|n_pus"), or NULL */
  char short_name;   /* 0: none */
  cli_opt_kind kind;
  unsigned flags;    /* CLI_OPT_* */
  void *dest;        /* int (FLAG, CHOICE), const char * (STRING), double,
                        cli_list, or an integer type (COUNT, SIZE) */
  size_t dest_size;  /* COUNT, SIZE: sizeof the destination (1, 2, 4, 8) */
  uint64_t dest_max; /* COUNT, SIZE: the destination type's largest value */
  uint64_t min, max; /* COUNT, SIZE: accepted range; max 0 = dest_max */
  int value;         /* FLAG: what it stores (0 = 1) */
  const cli_choice *choices;
  const char *metavar; /* the value in usage and help: N, FILE (default by kind) */
  const char *help;
  const char *def;     /* default shown in --help, or NULL */
  cli_file_role file;  /* STRING, LIST: what the value names */
} cli_opt;

/* The largest value of an integer lvalue's type, for COUNT and SIZE. */
#define CLI_INT_MAX(x)                                                                          \
  _Generic((x), signed char: (uint64_t)SCHAR_MAX, unsigned char: (uint64_t)UCHAR_MAX,           \
           short: (uint64_t)SHRT_MAX, unsigned short: (uint64_t)USHRT_MAX, int: (uint64_t)INT_MAX, \
           unsigned: (uint64_t)UINT_MAX, long: (uint64_t)LONG_MAX, unsigned long: (uint64_t)ULONG_MAX, \
           long long: (uint64_t)LLONG_MAX, unsigned long long: (uint64_t)ULLONG_MAX)
/* Designated initialisers for an integer destination: .dest = CLI_INT(&n). */
#define CLI_INT(p) (p), .dest_size = sizeof *(p), .dest_max = CLI_INT_MAX(*(p))

/* The running subcommand's name ("convert pytorch"), set by the dispatcher
 * and by cli_run_mode(); every message of the CLI starts "chakra NAME: ". */
void cli_set_command(const char *name);
const char *cli_command_name(void); /* "" before dispatch */

/* Writes head then the formatted message as one line on f: line breaks and
 * other control characters in it (a value given with a newline, a file
 * name) are written as \n, \r, \t or \xHH, so every message stays one
 * line. Every message of the CLI goes through here. */
void cli_vline(FILE *f, const char *head, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));
void cli_line(FILE *f, const char *head, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The positional arguments, in order; v points into argv. */
typedef struct cli_args {
  char **v;
  int n;
} cli_args;

typedef struct cli_command {
  const char *name;   /* as typed after "chakra": "convert pytorch" */
  const char *args;   /* positional arguments in the usage line, or NULL */
  int min_args;       /* positional arguments needed */
  int max_args;       /* at most; -1 = any number */
  int show_equals;    /* usage shows --name=VALUE (ASTRA-sim's spelling) */
  const char *about;  /* text after the usage line in --help, or NULL */
  const char *footer; /* text after the option list, or NULL */
  const cli_opt *opts;
  cli_file_role args_file; /* what the positional arguments name */
  /* Files the table cannot mark (an output named after another, a prefix
   * inside a rule): added with cli_files_*() after the parse, before the
   * check. */
  void (*files)(void *ctx, const cli_args *pos);
  void *files_ctx;
  int check_later; /* the command calls cli_outputs_begin() itself (replay: after MPI_Init, on rank 0) */
} cli_command;

/* cli_parse's "go on and run the command". */
#define CLI_PROCEED (-1)

/* Parses argv[1..argc-1] (argv[0] is the subcommand's own name) against
 * cmd and fills the destinations. Returns CLI_PROCEED when the command
 * should run; otherwise the exit status to return at once: 0 after printing
 * --help on stdout, 2 after printing one line on stderr. Positional
 * arguments are gathered at the front of argv + 1, which pos points to; LIST
 * destinations are malloc'd even on failure (cli_list_free them).
 * cli_parse() (cli/outputs.c) then runs the output check of cli.h. */
int cli_parse(const cli_command *cmd, int argc, char **argv, cli_args *pos);
/* The parse alone, printing help on out and errors on err. */
int cli_parse_to(const cli_command *cmd, int argc, char **argv, cli_args *pos, FILE *out, FILE *err);

/* The usage line(s): "usage: chakra NAME [options] ARGS", wrapped. */
void cli_usage(const cli_command *cmd, FILE *f);
/* Usage, about, the option list and the footer. */
void cli_help(const cli_command *cmd, FILE *f);

void cli_list_free(cli_list *l);

/* Number parsers of the COUNT and SIZE kinds, for values that do not come
 * from an option (0 on success, -1 for garbage, -2 for overflow). */
int cli_parse_count(const char *s, uint64_t *out);
int cli_parse_bytes(const char *s, uint64_t *out);

/* A subcommand whose first argument names a mode ("convert pytorch"). */
typedef struct cli_mode {
  const char *name;
  int (*run)(int argc, char **argv); /* argv[0] is the mode's name */
} cli_mode;

/* Runs the mode argv[1] names. "GROUP --help" prints every mode's help;
 * a missing or unknown mode is one line on stderr and status 2. */
int cli_run_mode(const char *group, const cli_mode *modes, size_t n, int argc, char **argv);

#endif
