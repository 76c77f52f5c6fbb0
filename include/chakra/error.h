/* error.h - errors as values for every libchakra call that can fail.
 *
 * A function that can fail returns an int status (CHAKRA_OK or a negative
 * CHAKRA_E* code) and, when given a non-NULL chakra_error, fills it with one
 * human-readable line that names the file and the place (byte offset,
 * message index, node id, line) so that the CLI can print it unchanged. */
#ifndef CHAKRA_ERROR_H
#define CHAKRA_ERROR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
  CHAKRA_OK = 0,
  CHAKRA_EIO = -1,       /* open/read/write/rename failed */
  CHAKRA_EFORMAT = -2,   /* input is not what the format says it must be */
  CHAKRA_ENOMEM = -3,    /* allocation failed */
  CHAKRA_EINVAL = -4,    /* bad argument or configuration */
  CHAKRA_EGRAPH = -5     /* graph problem: duplicate id, missing dep, cycle */
};

typedef struct chakra_error {
  int code;
  char msg[1024];
} chakra_error;

/* Records code and a printf-style message in err (if non-NULL); returns code
 * so that callers can write `return chakra_error_set(err, ...)`. */
int chakra_error_set(chakra_error *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Prefixes an existing message with more context ("file: " ...). */
void chakra_error_prefix(chakra_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#ifdef __cplusplus
}
#endif
#endif
