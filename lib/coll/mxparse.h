/* mxparse.h - MSCCL-IR XML elements into the program's arrays (private to
 * lib/coll): expat's element handlers for <algo>, <gpu>, <tb> and <step>,
 * their attributes checked as they come; errors name file, line, gpu, tb
 * and step. */
#ifndef CHAKRA_COLL_MXPARSE_H
#define CHAKRA_COLL_MXPARSE_H

#include <expat.h>
#include <stddef.h>

#include "msccl.h"

/* Step type names, as the XML spells them (ST_* order). */
extern const char *const mx_step_types[ST_TYPES];

/* Records the first error (file and what) and stops the parse; returns the
 * error code. */
int mx_fail(mx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "gpu G tb T step S" for the element being parsed or a stored step
 * (each of g, t, s may be NULL). */
void mx_place(char *buf, size_t size, const mgpu *g, const mtb *t, const mstep *s);

/* expat's handlers; the user data is the mx being filled. */
void XMLCALL mx_on_start(void *ud, const XML_Char *el, const XML_Char **at);
void XMLCALL mx_on_end(void *ud, const XML_Char *el);

#endif
