/* reportjson.c - see reportjson.h. */
#include "reportjson.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/commgroups.h"
#include "../util/strbuf.h"

static yajl_val fail_oom(chakra_error *err) {
  chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  return NULL;
}

/* Parses text up to its NUL (yajl reads no further). */
static yajl_val parse_cstr(const char *text, const char *name, chakra_error *err) {
  char why[512] = "";
  yajl_val doc = yajl_tree_parse(text, why, sizeof why);
  if (doc) return doc;
  for (char *p = why; *p; p++)
    if (*p == '\n' || *p == '\r') *p = ' ';
  chakra_error_set(err, CHAKRA_EFORMAT, "%s: invalid JSON: %s", name, why);
  return NULL;
}

yajl_val reportjson_parse(const char *text, size_t len, const char *name, chakra_error *err) {
  char *copy = malloc(len + 1);
  if (!copy) return fail_oom(err);
  memcpy(copy, text, len);
  copy[len] = 0;
  yajl_val doc = parse_cstr(copy, name, err);
  free(copy);
  return doc;
}

/* The whole of f (at most REPORTJSON_MAX_BYTES) in *text, NUL-terminated
 * (what the parser takes as it is). */
static int read_all(FILE *f, const char *path, char **text, chakra_error *err) {
  strbuf b = {0};
  int got = strbuf_read_stream(&b, f, REPORTJSON_MAX_BYTES - 1);
  if (got) strbuf_free(&b);
  if (got == STRBUF_EBIG)
    return chakra_error_set(err, CHAKRA_EFORMAT, "%s: larger than %u MiB: not a report", path, REPORTJSON_MAX_BYTES >> 20);
  if (got == STRBUF_EREAD) return chakra_error_set(err, CHAKRA_EIO, "%s: read error", path);
  if (got || !strbuf_cstr(&b)) { /* yajl reads up to a NUL */
    strbuf_free(&b);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  *text = b.s;
  return 0;
}

yajl_val reportjson_load(const char *path, chakra_error *err) {
  FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
  if (!f) {
    chakra_error_set(err, CHAKRA_EIO, "%s: %s", path, strerror(errno));
    return NULL;
  }
  char *text = NULL;
  int rc = read_all(f, path, &text, err);
  if (f != stdin) fclose(f);
  if (rc) return NULL;
  yajl_val doc = parse_cstr(text, path, err); /* no second copy of up to 256 MiB */
  free(text);
  return doc;
}

yajl_val reportjson_get(yajl_val obj, const char *key) {
  const char *path[] = {key, NULL};
  return obj ? yajl_tree_get(obj, path, yajl_t_any) : NULL;
}

int reportjson_amount(yajl_val v, const char *name, const char *where, double *out, chakra_error *err) {
  *out = 0;
  if (!v || !YAJL_IS_NUMBER(v)) return 0;
  double d = YAJL_GET_DOUBLE(v); /* yajl gives +-HUGE_VAL for what overflows */
  if (isfinite(d) && d >= 0) {
    *out = d + 0.0; /* -0 drawn as 0 */
    return 0;
  }
  char text[48];
  return chakra_error_set(err, CHAKRA_EFORMAT, "%s: %s: expected a finite number >= 0, not %s", name, where,
                          cg_quote(v->u.number.r, text, sizeof text));
}

int reportjson_field(yajl_val obj, const char *key, const char *name, const char *where, double *out,
                     chakra_error *err) {
  char place[256], k[64];
  snprintf(place, sizeof place, "%s.%s", where, cg_quote(key, k, sizeof k));
  return reportjson_amount(reportjson_get(obj, key), name, place, out, err);
}

int reportjson_sum_overflow(const char *name, const char *what, chakra_error *err) {
  return chakra_error_set(err, CHAKRA_EFORMAT, "%s: %s: the sum over the ranks is beyond a double's range", name,
                          what);
}
