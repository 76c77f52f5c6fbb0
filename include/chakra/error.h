/* error.h - errors as values for every libchakra call that can fail.
 *
 * A function that can fail returns an int status (CHAKRA_OK or a negative
 * CHAKRA_E* code) and, when given a non-NULL chakra_error, fills it with one
 * human-readable line that names the file and the place (byte offset,
 * message index, node id, line) so that the CLI can print it unchanged.
 * A chakra_error is a plain value owned by the caller; nothing in it needs
 * freeing. Ownership rules for the whole API are in docs/library.md. */
#ifndef CHAKRA_ERROR_H
#define CHAKRA_ERROR_H

#include <stddef.h>
#include <stdint.h>

#include "chakra/export.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
  CHAKRA_OK = 0,
  CHAKRA_EIO = -1,       /* open/read/write/rename failed */
  CHAKRA_EFORMAT = -2,   /* input is not what the format says it must be */
  CHAKRA_ENOMEM = -3,    /* allocation failed */
  CHAKRA_EINVAL = -4,    /* bad argument or configuration */
  CHAKRA_EGRAPH = -5,    /* graph problem: duplicate id, missing dep, cycle */
  CHAKRA_ECANCELED = -6  /* a progress callback asked to stop */
};

typedef struct chakra_error {
  int code;
  char msg[1024];
} chakra_error;

/* What a status code means, in a few words ("input is malformed"): a
 * static string for every CHAKRA_OK and CHAKRA_E* value, and "unknown
 * error code" for anything else. The chakra_error message says more. */
CHAKRA_API const char *chakra_strerror(int code);

/* Records code and a printf-style message in err (if non-NULL); returns code
 * so that callers can write `return chakra_error_set(err, ...)`. */
CHAKRA_API int chakra_error_set(chakra_error *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Diagnostics: the one vocabulary for everything that is reported rather
 * than returned (warnings while loading, validation findings, simulator
 * warnings). Every module that reports problems hands them to a
 * chakra_diag_fn; none prints. Fields that do not apply are NULL / -1 /
 * has_* = 0, so a consumer formats whatever is known. */
typedef enum chakra_severity {
  CHAKRA_SEV_NOTE = 0,       /* informational: a hint, a summary */
  CHAKRA_SEV_WARNING = 1,    /* the result is usable; something was odd or dropped */
  CHAKRA_SEV_ERROR = 2,      /* the input is wrong; the result is not trustworthy */
  CHAKRA_SEV_UNREADABLE = 3  /* the input could not be read at all */
} chakra_severity;

typedef struct chakra_problem {
  chakra_severity severity;
  const char *file;       /* the input concerned, or NULL */
  int64_t rank;           /* the rank concerned, or -1 */
  int has_node;           /* node_id is meaningful */
  uint64_t node_id;
  int has_offset;         /* offset (bytes into the uncompressed stream) is meaningful */
  uint64_t offset;
  int64_t line;           /* 1-based line of a text input, or -1 */
  const char *field;      /* the attribute, key or field concerned, or NULL */
  const char *what;       /* one line, without file or place */
} chakra_problem;

/* Receives each problem as it is found; p and its strings are valid only
 * during the call. */
typedef void (*chakra_diag_fn)(void *ctx, const chakra_problem *p);

/* Long operations report progress here instead of printing: phase is a
 * short static name ("load", "run"), done/total in the phase's own unit
 * (total 0 = unknown). Returning nonzero asks the operation to stop early
 * with CHAKRA_ECANCELED. */
typedef int (*chakra_progress_fn)(void *ctx, const char *phase, uint64_t done, uint64_t total);

/* A problem with every field "unknown" and the given severity and text
 * (borrowed, not copied). */
CHAKRA_API chakra_problem chakra_problem_make(chakra_severity sev, const char *what);

/* Formats p as one line, "FILE: rank R: node N at offset O: line L: FIELD: what"
 * with the parts that are known, into buf (always terminated). Returns the
 * length the whole line needs, like snprintf. */
CHAKRA_API size_t chakra_problem_format(const chakra_problem *p, char *buf, size_t size);

/* "note", "warning", "error" or "unreadable" (static strings). */
CHAKRA_API const char *chakra_severity_name(chakra_severity sev);

/* Prefixes an existing message with more context ("file: " ...); err may
 * be NULL. The result is truncated to the size of msg. */
CHAKRA_API void chakra_error_prefix(chakra_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#ifdef __cplusplus
}
#endif
#endif
