/* htparse.c - the host-ET parser's errors, numbers, schema check and
 * driving; see htparse.h. */
#include "htparse.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/bigmem.h"
#include "../util/instream.h"
#include "chakra/ingest.h"
#include "htevents.h"
#include "../util/diag.h"

/* The reference converter parses these and nothing else (1.0.1 is refused,
 * 1.1.1-chakra.1.0.0 listed but crashes). */
static const char *const reference_versions[] = {"1.0.2-chakra.0.0.4", "1.0.3-chakra.0.0.4",
                                                 "1.1.0-chakra.0.0.4", "1.1.1-chakra.0.0.4", NULL};

void ht_node_label(hparse *p, char *out, size_t n) {
  if (p->cur.flags & HT_ID)
    snprintf(out, n, "node %llu (byte %llu)", (unsigned long long)p->cur.id,
             (unsigned long long)p->cur.offset);
  else
    snprintf(out, n, "node at byte %llu", (unsigned long long)p->cur.offset);
}

uint64_t ht_here(hparse *p) { return p->chunk_base + yajl_get_bytes_consumed(p->y); }

int ht_fail(hparse *p, int code, const char *fmt, ...) {
  if (p->rc) return 0;
  va_list ap;
  va_start(ap, fmt);
  p->rc = chakra_diag_failv(&p->err, code, p->path, fmt, ap);
  va_end(ap);
  return 0; /* stops yajl */
}

int ht_node_fail(hparse *p, const char *fmt, const char *what) {
  char where[96];
  ht_node_label(p, where, sizeof where);
  char msg[600];
  snprintf(msg, sizeof msg, fmt, what);
  return ht_fail(p, CHAKRA_EFORMAT, "%s: %s", where, msg);
}

int ht_oom(hparse *p) { return ht_fail(p, CHAKRA_ENOMEM, "out of memory"); }

/* ----------------------------------------------------------------- numbers */

int ht_parse_u64(const char *s, size_t n, uint64_t *out) {
  if (!n || n > 20) return -1;
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned d = (unsigned)(s[i] - '0');
    if (d > 9) return -1;
    if (v > (UINT64_MAX - d) / 10) return -1;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

int ht_parse_i64(const char *s, size_t n, int64_t *out) {
  uint64_t u;
  if (n && s[0] == '-') {
    if (ht_parse_u64(s + 1, n - 1, &u) || u > (uint64_t)INT64_MAX + 1) return -1;
    *out = (int64_t)(0 - u);
    return 0;
  }
  if (ht_parse_u64(s, n, &u) || u > (uint64_t)INT64_MAX) return -1;
  *out = (int64_t)u;
  return 0;
}

double ht_parse_double(const char *s, size_t n) {
  char t[64];
  if (n >= sizeof t) n = sizeof t - 1;
  memcpy(t, s, n);
  t[n] = 0;
  return strtod(t, NULL);
}

int ht_contains(const char *s, size_t n, const char *needle) {
  size_t k = strlen(needle);
  if (k > n) return 0;
  for (size_t i = 0; i + k <= n; i++)
    if (s[i] == needle[0] && memcmp(s + i, needle, k) == 0) return 1;
  return 0;
}

/* ----------------------------------------------------------------- schema */

static int version_known(const char *const *list, const char *s, size_t n) {
  for (int i = 0; list[i]; i++)
    if (strlen(list[i]) == n && memcmp(list[i], s, n) == 0) return 1;
  return 0;
}

/* The version list "a, b, c" of the schema messages, truncated to size. */
static void join_list(const char *const *list, char *out, size_t size) {
  out[0] = 0;
  for (int i = 0; list[i]; i++) snprintf(out + strlen(out), size - strlen(out), "%s%s", i ? ", " : "", list[i]);
}

int ht_check_schema(hparse *p, const unsigned char *s, size_t n) {
  const char *str = (const char *)s;
  if (p->versions == HT_VERSIONS_REFERENCE) {
    if (version_known(reference_versions, str, n)) return 1;
    char list[400];
    join_list(reference_versions, list, sizeof list);
    return ht_fail(p, CHAKRA_EFORMAT,
                "schema '%.*s' is not read by the reference converter, so the compat option cannot "
                "reproduce it (it reads %s); convert without compat",
                (int)(n > 100 ? 100 : n), str, list);
  }
  if (version_known(chakra_hostet_versions, str, n)) return 1;
  if (p->versions == HT_VERSIONS_NEWER_OK) {
    unsigned maj = 0, min = 0;
    char t[32];
    size_t k = n < sizeof t - 1 ? n : sizeof t - 1;
    memcpy(t, s, k);
    t[k] = 0;
    if (sscanf(t, "%u.%u", &maj, &min) == 2 && (maj > 1 || (maj == 1 && min > 1))) {
      p->h->newer_schema = 1;
      return 1;
    }
  }
  char list[400];
  join_list(chakra_hostet_versions, list, sizeof list);
  return ht_fail(p, CHAKRA_EFORMAT, "unsupported host ET schema version '%.*s' (supported: %s)",
              (int)(n > 100 ? 100 : n), str, list);
}

int ht_parse_init(hparse *p, const char *path, const hostet_options *opt, hostet *h, int seg_nodes) {
  memset(p, 0, sizeof *p);
  p->path = path;
  p->mode = opt->mode;
  p->versions = opt->versions;
  p->seg_nodes = seg_nodes;
  p->prog = opt->prog;
  p->h = h;
  p->want = seg_nodes ? W_SEGSTART : W_DOC;
  strtab_init(&p->st);
  p->y = yajl_alloc(&ht_callbacks, NULL, p);
  if (!p->y) return -1;
  if (seg_nodes) yajl_config(p->y, yajl_allow_trailing_garbage, 1);
  return 0;
}

void ht_parse_free_scratch(hparse *p) {
  if (p->y) yajl_free(p->y);
  p->y = NULL;
  for (int i = 0; i < HT_IO_N; i++) strbuf_free(&p->io[i]);
  strbuf_free(&p->strides[0]);
  strbuf_free(&p->strides[1]);
  strbuf_free(&p->attrs_json);
  strbuf_free(&p->others);
  free(p->xs);
  strbuf_free(&p->scratch);
  strbuf_free(&p->targ_str);
  strbuf_free(&p->a_name);
  strbuf_free(&p->a_type);
  strbuf_free(&p->a_val);
  free(p->arg_bytes);
  free(p->arg_tensor);
  free(p->targs);
  free(p->syncv);
  p->arg_bytes = NULL, p->arg_tensor = NULL, p->targs = NULL, p->syncv = NULL;
  p->xs = NULL, p->n_xs = p->cap_xs = 0;
}

void ht_parse_free_all(hparse *p) {
  ht_parse_free_scratch(p);
  bigmem_free(p->nodes);
  free(p->side);
  strtab_free(&p->st);
  bpool_free(&p->pool);
  strbuf_free(&p->top_extra);
}

/* Turns a yajl failure into an error naming the byte and, inside a node,
 * the node. */
static int yajl_failed(hparse *p, const unsigned char *chunk, size_t n) {
  if (p->rc) return p->rc;
  unsigned char *msg = yajl_get_error(p->y, 0, chunk, n);
  size_t len = msg ? strlen((const char *)msg) : 0;
  while (len && (msg[len - 1] == '\n' || msg[len - 1] == ' ')) msg[--len] = 0;
  /* at the end of the input (chunk NULL) the error is where the text ends */
  uint64_t at = p->chunk_base + (chunk ? yajl_get_bytes_consumed(p->y) : 0);
  char where[120] = "";
  for (int i = 0; i < p->depth; i++)
    if (p->fr[i] == F_NODE) ht_node_label(p, where, sizeof where);
  p->rc = chakra_error_set(&p->err, CHAKRA_EFORMAT, "%s: byte %llu%s%s: invalid JSON: %s", p->path,
                           (unsigned long long)at, where[0] ? ", in " : "", where,
                           len ? (const char *)msg : "parse error");
  if (msg) yajl_free_error(p->y, msg);
  return p->rc;
}

int ht_feed(hparse *p, const unsigned char *buf, size_t n, uint64_t base) {
  p->chunk_base = base;
  yajl_status s = yajl_parse(p->y, buf, n);
  if (s != yajl_status_ok) return yajl_failed(p, buf, n);
  if (!p->rc && p->prog) p->rc = ht_progress_add(p->prog, n) ? chakra_error_set(&p->err, CHAKRA_ECANCELED, "%s: reading stopped", p->path) : 0;
  return p->rc;
}

int ht_finish_doc(hparse *p) {
  yajl_status s = yajl_complete_parse(p->y);
  if (s != yajl_status_ok) return yajl_failed(p, NULL, 0);
  if (p->rc) return p->rc;
  return 0;
}

/* Checks what a whole document must hold. */
int ht_check_top(hparse *p) {
  if (!p->h->schema)
    return chakra_error_set(&p->err, CHAKRA_EFORMAT, "%s: no 'schema': not a PyTorch host execution trace", p->path);
  if (!p->seen_nodes)
    return chakra_error_set(&p->err, CHAKRA_EFORMAT, "%s: no 'nodes' list: not a PyTorch host execution trace", p->path);
  return 0;
}

int ht_parse_sequential(hparse *p, const chakra_input *input) {
  instream *in;
  int rc = instream_open_input(&in, input, &p->err);
  if (rc) return rc;
  enum { CHUNK = 256 * 1024 };
  unsigned char *buf = malloc(CHUNK);
  if (!buf) {
    instream_close(in);
    return chakra_error_set(&p->err, CHAKRA_ENOMEM, "out of memory");
  }
  uint64_t off = 0;
  int any = 0;
  for (;;) {
    ssize_t n = instream_read(in, buf, CHUNK, &p->err);
    if (n < 0) {
      rc = (int)n;
      break;
    }
    if (n == 0) break;
    for (ssize_t i = 0; !any && i < n; i++) any = buf[i] != ' ' && buf[i] != '\n' && buf[i] != '\t' && buf[i] != '\r';
    rc = ht_feed(p, buf, (size_t)n, off);
    if (rc) break;
    off += (uint64_t)n;
  }
  free(buf);
  instream_close(in);
  if (rc) return rc;
  if (!any) return chakra_error_set(&p->err, CHAKRA_EFORMAT, "%s: empty file", chakra_input_name(input));
  p->chunk_base = off;
  rc = ht_finish_doc(p);
  return rc ? rc : ht_check_top(p);
}
