/* output.h - the rules every output file of libchakra follows.
 *
 * Outputs are written to a temporary file beside the destination and
 * renamed into place only when complete, after fsync of the file and of
 * its directory, so that a failed or interrupted run never leaves a
 * half-written file and a crash after success never leaves an empty one.
 * Destinations that are not regular files are never replaced:
 *   - "-" is standard output;
 *   - character devices, FIFOs and sockets (/dev/null, a named pipe) and
 *     paths that name the process's own standard output or error
 *     (/dev/stdout, /dev/fd/2) are written in place;
 *   - a symbolic link is followed: its target is replaced, the link stays.
 *
 * A program declares its inputs and outputs as one set before any work
 * (chakra_output_set_*): every output is checked against every input and
 * every other output once, and the outputs are then committed together,
 * all or none. Its signal handlers call chakra_output_interrupt(), which
 * removes every live temporary. */
#ifndef CHAKRA_OUTPUT_H
#define CHAKRA_OUTPUT_H

#include <stddef.h>

#include "chakra/error.h"
#include "chakra/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- a program's outputs, checked once and committed together ----------
 *
 *   chakra_output_set *s = chakra_output_set_new();
 *   chakra_output_set_input(s, "sys.json");          a file it reads
 *   chakra_output_set_input_traces(s, "gpt");        a trace FILE, or a PREFIX:
 *                                                    every PREFIX.<r>.et
 *   chakra_output_set_output(s, "r.json", "--report");
 *   chakra_output_set_output_prefix(s, "out", "-o"); PREFIX.<r>.et it writes
 *   if (chakra_output_set_begin(s, &err)) ...        one line, nothing written
 *   ... the work: library calls that write those outputs ...
 *   chakra_output_set_commit(&err);                  or chakra_output_set_abort()
 *
 * begin checks, without creating anything, that no output is the same file
 * as an input or as another output: by device and inode where the file
 * exists, by folder (device and inode) and name where it does not;
 * symbolic links are followed to their final target, and a prefix stands
 * for every PREFIX.<r>.et in its folder (existing ones by identity, future
 * ones by name), and for the shared form's PREFIX.set.json and
 * PREFIX.class<k>.et. It also checks that each output is not a directory and
 * that its folder exists and is writable. Then the set is the process's
 * active one: every output the library writes must be one of its outputs
 * (others fail to open, naming the file), and each is held, complete and
 * closed under its temporary name, when the library commits it, until
 * chakra_output_set_commit() makes them all durable and puts them in place
 * together. If that fails for one of them, those already in place are put
 * back: an existing file is exchanged with its replacement (renameat2), so
 * the old contents return; on a file system that cannot exchange, the new
 * file is removed. chakra_output_set_abort() removes them all; so does a
 * set still active when the process exits. An output discarded unfinished
 * (a failed write) makes the commit refuse. "-" and special files are
 * written in place as they come and are not part of the check. One set is
 * active at a time; outputs may be written and committed from any thread.
 *
 * label names the output in messages ("--xml"; NULL: "an output"). The
 * declaring calls return CHAKRA_OK or CHAKRA_ENOMEM (begin reports it too). */
typedef struct chakra_output_set chakra_output_set;

CHAKRA_API chakra_output_set *chakra_output_set_new(void);
CHAKRA_API void chakra_output_set_free(chakra_output_set *s);
CHAKRA_API int chakra_output_set_input(chakra_output_set *s, const char *path);
CHAKRA_API int chakra_output_set_input_traces(chakra_output_set *s, const char *file_or_prefix);
CHAKRA_API int chakra_output_set_output(chakra_output_set *s, const char *path, const char *label);
CHAKRA_API int chakra_output_set_output_prefix(chakra_output_set *s, const char *prefix, const char *label);
/* A trace set written in the shared form (chakra/set.h: PREFIX.set.json
 * and PREFIX.class<k>.et; a prefix declared either way covers both forms'
 * names): begin also refuses it where PREFIX.0.et exists, since a reader
 * could not tell which form is the set. A prefix already declared with
 * chakra_output_set_output_prefix() becomes this declaration. */
CHAKRA_API int chakra_output_set_output_shared(chakra_output_set *s, const char *prefix, const char *label);
/* An output in a folder the program creates when it does not exist (sim's
 * --logging-folder): checked as any output when the folder exists. */
CHAKRA_API int chakra_output_set_output_mkdir(chakra_output_set *s, const char *path, const char *label);
/* The checks alone: CHAKRA_OK, or CHAKRA_EINVAL / CHAKRA_EIO /
 * CHAKRA_ENOMEM with a one-line message naming the file. */
CHAKRA_API int chakra_output_set_check(const chakra_output_set *s, chakra_error *err);
/* The checks, then s becomes the active set (which owns it from then on;
 * on failure s is freed). CHAKRA_EINVAL if a set is already active. */
CHAKRA_API int chakra_output_set_begin(chakra_output_set *s, chakra_error *err);
/* Puts every held output in place, all or none, and ends the set. OK when
 * no set is active. */
CHAKRA_API int chakra_output_set_commit(chakra_error *err);
/* Removes every held output and ends the set. */
CHAKRA_API void chakra_output_set_abort(void);

/* Checks one output against n inputs as chakra_output_set_check() does
 * (inputs that do not exist or are "-" are ignored). */
CHAKRA_API int chakra_output_check(const char *path, const char *const *inputs, size_t n, chakra_error *err);

/* For SIGINT, SIGTERM and SIGHUP handlers; async-signal-safe. From the
 * first call on no temporary can be created any more (creations already
 * under way are waited for, then) every live temporary is removed, and 0
 * is returned: the handler then ends the process. While a batch of
 * outputs is being put in place (milliseconds), it returns 1 instead: the
 * handler returns at once, and the signal is raised again, in the thread
 * that placed the batch, as soon as the batch is in place. */
CHAKRA_API int chakra_output_interrupt(int sig);

/* Stops the creation of temporaries and removes every live one, as
 * chakra_output_interrupt() does, without deferring; for programs that
 * end right after. */
CHAKRA_API void chakra_output_remove_temporaries(void);

#ifdef __cplusplus
}
#endif
#endif
