/* viewargs.h - what the view commands (dot, timeline, diff, obfuscate,
 * plot) share on the command line: "--key value" / "--key=value" options,
 * numbers, and loading one rank's graph tolerantly. Kept apart from cli.h
 * so that these commands can move to a table-driven parser as one. */
#ifndef CHAKRA_VIEWARGS_H
#define CHAKRA_VIEWARGS_H

#include <stdint.h>

#include "chakra/graph.h"

/* If argv[*i] is option name ("--name value" or "--name=value"), stores
 * the value in *value, advances *i past it and returns 1; returns -1 when
 * the value is missing (after printing why), else 0. */
int viewargs_value(int argc, char **argv, int *i, const char *name, const char **value);

/* Parses a whole unsigned decimal number; prints an error naming opt and
 * returns -1 when s is not one. */
int viewargs_u64(const char *opt, const char *s, uint64_t *out);
int viewargs_double(const char *opt, const char *s, double *out);

/* Loads path so that a drawing can be made whatever the graph's defects:
 * missing deps are dropped and cycle members appended, each problem
 * counted; one warning line summarises them. Returns 0 or an exit status. */
int viewargs_load(const char *path, int ignore_ctrl_deps, chakra_graph **out);

/* FILE if it names a file, else PREFIX.<rank>.et; malloc'd. */
char *viewargs_rank_path(const char *arg, uint64_t rank);

#endif
