/* error.c - filling chakra_error values (see include/chakra/error.h). */
#include "chakra/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int chakra_error_set(chakra_error *err, int code, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->code = code;
  }
  return code;
}

void chakra_error_prefix(chakra_error *err, const char *fmt, ...) {
  if (!err) return;
  char prefix[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  /* Build in a buffer big enough for both, then truncate into place. */
  char joined[sizeof prefix + sizeof err->msg];
  snprintf(joined, sizeof joined, "%s%s", prefix, err->msg);
  size_t n = strlen(joined);
  if (n >= sizeof err->msg) n = sizeof err->msg - 1;
  memcpy(err->msg, joined, n);
  err->msg[n] = 0;
}

const char *chakra_strerror(int code) {
  switch (code) {
  case CHAKRA_OK: return "success";
  case CHAKRA_EIO: return "input/output error";
  case CHAKRA_EFORMAT: return "input is malformed";
  case CHAKRA_ENOMEM: return "out of memory";
  case CHAKRA_EINVAL: return "invalid argument or configuration";
  case CHAKRA_EGRAPH: return "invalid dependency graph";
  case CHAKRA_ECANCELED: return "canceled";
  }
  return "unknown error code";
}

chakra_problem chakra_problem_make(chakra_severity sev, const char *what) {
  chakra_problem p = {0};
  p.severity = sev;
  p.rank = -1;
  p.line = -1;
  p.what = what;
  return p;
}

const char *chakra_severity_name(chakra_severity sev) {
  switch (sev) {
  case CHAKRA_SEV_NOTE: return "note";
  case CHAKRA_SEV_WARNING: return "warning";
  case CHAKRA_SEV_ERROR: return "error";
  case CHAKRA_SEV_UNREADABLE: return "unreadable";
  }
  return "error";
}

size_t chakra_problem_format(const chakra_problem *p, char *buf, size_t size) {
  char tmp[64];
  size_t n = 0;
#define PUT(...)                                                                    \
  do {                                                                             \
    int k_ = snprintf(size > n ? buf + n : NULL, size > n ? size - n : 0, __VA_ARGS__); \
    if (k_ > 0) n += (size_t)k_;                                                   \
  } while (0)
  if (size) buf[0] = 0;
  if (p->file) PUT("%s: ", p->file);
  if (p->rank >= 0) PUT("rank %lld: ", (long long)p->rank);
  if (p->has_node && p->has_offset)
    PUT("node %llu at offset %llu: ", (unsigned long long)p->node_id, (unsigned long long)p->offset);
  else if (p->has_node)
    PUT("node %llu: ", (unsigned long long)p->node_id);
  else if (p->has_offset)
    PUT("offset %llu: ", (unsigned long long)p->offset);
  if (p->line >= 0) {
    snprintf(tmp, sizeof tmp, "line %lld: ", (long long)p->line);
    PUT("%s", tmp);
  }
  if (p->field) PUT("%s: ", p->field);
  PUT("%s", p->what ? p->what : "");
#undef PUT
  return n;
}
