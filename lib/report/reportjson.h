/* reportjson.h - reading report documents (private to libchakra).
 *
 * Run reports (chakra sim/replay --report, read into a run record by
 * runread.c) and chakra stats --json (drawn by plot) come from files a
 * user can hand over whatever they hold. This bounds the document's size
 * and parses it, and takes a statistics number only when it can be drawn
 * (finite, not negative), otherwise one line naming the file and the
 * field. */
#ifndef CHAKRA_REPORTJSON_H
#define CHAKRA_REPORTJSON_H

#include <stddef.h>
#include <yajl/yajl_tree.h>

#include "chakra/error.h"

/* The largest document read (bytes). */
#define REPORTJSON_MAX_BYTES (256u << 20)

/* Parses len bytes of text; name is for messages. NULL with err set. */
yajl_val reportjson_parse(const char *text, size_t len, const char *name, chakra_error *err);
/* Reads and parses path ("-" = standard input). */
yajl_val reportjson_load(const char *path, chakra_error *err);

/* Member key of obj, or NULL. */
yajl_val reportjson_get(yajl_val obj, const char *key);

/* The number v (0 when v is NULL or not a number) in *out, or an error
 * "NAME: WHERE: expected a finite number >= 0, not TEXT" when it is
 * negative or beyond a double's range. */
int reportjson_amount(yajl_val v, const char *name, const char *where, double *out, chakra_error *err);

/* The same for member key of obj; the place is WHERE.KEY. */
int reportjson_field(yajl_val obj, const char *key, const char *name, const char *where, double *out,
                     chakra_error *err);

/* A sum of amounts that overflowed a double: the error for it. */
int reportjson_sum_overflow(const char *name, const char *what, chakra_error *err);

#endif
