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
 * Programs check each output before doing any work (chakra_output_check)
 * and remove live temporaries when interrupted
 * (chakra_output_remove_temporaries from a signal handler). */
#ifndef CHAKRA_OUTPUT_H
#define CHAKRA_OUTPUT_H

#include <stddef.h>

#include "chakra/error.h"
#include "chakra/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Checks, without creating anything, that path can be written as an
 * output: not empty, not a directory, its folder exists and is writable
 * (for a regular destination), and it is not the same file as any of the
 * n inputs (which would be destroyed). Inputs that do not exist or are
 * "-" are ignored. Returns CHAKRA_OK or CHAKRA_EINVAL / CHAKRA_EIO with a
 * one-line message naming path. */
CHAKRA_API int chakra_output_check(const char *path, const char *const *inputs, size_t n, chakra_error *err);

/* Removes every temporary file that an output still in progress holds.
 * Async-signal-safe (only unlink(2) is called): meant for SIGINT, SIGTERM
 * and SIGHUP handlers, which then end the process. */
CHAKRA_API void chakra_output_remove_temporaries(void);

#ifdef __cplusplus
}
#endif
#endif
