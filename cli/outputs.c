/* outputs.c - the output check every command goes through: cli_parse()
 * declares the files the command's table marks (cli_opt.file,
 * cli_command.args_file) and those its hook adds to the library's output
 * set (chakra/output.h), which checks them once, before any work; main()
 * commits the set when the command ends. See cli.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra/output.h"
#include "cli.h"

/* The declarations of the command being parsed, until the check. */
static chakra_output_set *pending;

static chakra_output_set *declared(void) {
  if (!pending) pending = chakra_output_set_new();
  return pending; /* NULL when out of memory: cli_outputs_begin says so */
}

void cli_files_input(const char *path) {
  if (path && declared()) chakra_output_set_input(pending, path);
}

void cli_files_traces(const char *file_or_prefix) {
  if (file_or_prefix && declared()) chakra_output_set_input_traces(pending, file_or_prefix);
}

void cli_files_output(const char *path, const char *label) {
  if (path && declared()) chakra_output_set_output(pending, path, label);
}

void cli_files_output_mkdir(const char *path, const char *label) {
  if (path && declared()) chakra_output_set_output_mkdir(pending, path, label);
}

void cli_files_prefix(const char *prefix, const char *label) {
  if (prefix && declared()) chakra_output_set_output_prefix(pending, prefix, label);
}

void cli_files_shared(const char *prefix, const char *label) {
  if (prefix && declared()) chakra_output_set_output_shared(pending, prefix, label);
}

void cli_files_groups_of(const char *prefix) {
  size_t n = prefix ? strlen(prefix) + 6 : 0;
  char *json = n ? malloc(n) : NULL;
  if (json) snprintf(json, n, "%s.json", prefix);
  cli_files_output(json, "the groups file of --output");
  free(json);
}

static void declare(cli_file_role role, const char *value, const char *label, const cli_args *pos) {
  switch (role) {
  case CLI_FILE_OUT_OR_PREFIX:
    if (pos->n && cli_names_prefix(pos->v[0])) cli_files_prefix(value, label);
    else cli_files_output(value, label);
    break;
  case CLI_FILE_IN: cli_files_input(value); break;
  case CLI_FILE_TRACES: cli_files_traces(value); break;
  case CLI_FILE_OUT: cli_files_output(value, label); break;
  case CLI_FILE_OUT_PREFIX: cli_files_prefix(value, label); break;
  case CLI_FILE_OUT_SHARED: cli_files_shared(value, label); break;
  case CLI_FILE_NONE: break;
  }
}

/* The files cmd's table marks, with the values just parsed. */
static void declare_table(const cli_command *cmd, const cli_args *pos) {
  for (int i = 0; i < pos->n; i++) declare(cmd->args_file, pos->v[i], NULL, pos);
  for (const cli_opt *o = cmd->opts; o->name; o++) {
    if (!o->file) continue;
    char label[72];
    snprintf(label, sizeof label, "--%s", o->name);
    if (o->kind == CLI_OPT_STRING) declare(o->file, *(const char *const *)o->dest, label, pos);
    if (o->kind == CLI_OPT_LIST)
      for (size_t k = 0; k < ((const cli_list *)o->dest)->n; k++)
        declare(o->file, ((const cli_list *)o->dest)->items[k], label, pos);
  }
}

int cli_parse(const cli_command *cmd, int argc, char **argv, cli_args *pos) {
  int st = cli_parse_to(cmd, argc, argv, pos, stdout, cli_messages());
  if (st != CLI_PROCEED) return st;
  declare_table(cmd, pos);
  if (cmd->files) cmd->files(cmd->files_ctx, pos);
  if (cmd->check_later) return CLI_PROCEED;
  return cli_outputs_begin() ? CLI_EXIT_ERROR : CLI_PROCEED;
}

int cli_outputs_begin(void) {
  chakra_output_set *s = declared();
  pending = NULL;
  chakra_error err = {0};
  if (!s) chakra_error_set(&err, CHAKRA_ENOMEM, "out of memory");
  else chakra_output_set_begin(s, &err);
  return err.code ? cli_fail(&err) : 0;
}

int cli_outputs_end(int status) {
  if (status != CLI_EXIT_OK && status != CLI_EXIT_PROBLEMS) {
    chakra_output_set_abort();
    return status;
  }
  chakra_error err = {0};
  return chakra_output_set_commit(&err) ? cli_fail(&err) : status;
}
