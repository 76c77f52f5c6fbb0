/* kineto.c - Kineto Chrome-trace reader; see kineto.h. */
#include "kineto.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "../util/instream.h"
#include "../util/strbuf.h"
#include "../util/diag.h"
#include "../util/vec.h"

enum { F_TOP, F_EVENTS, F_EVENT, F_ARGS, F_DIST, F_SKIP };

enum {
  W_NONE, W_DOC, W_KEY, W_EVENTS, W_EVENT, W_DIST, W_RANK, W_SKIP,
  W_PH, W_CAT, W_NAME, W_PID, W_TID, W_TS, W_DUR, W_ID, W_ARGS,
  W_A_EXT, W_A_RF, W_A_CORR, W_A_STREAM, W_A_DEVICE, W_A_PG
};

#define MAX_DEPTH 64

typedef struct kparse {
  const char *path;
  kineto *k;
  yajl_handle y;
  uint64_t base;
  chakra_error err;
  int rc;
  int fr[MAX_DEPTH];
  int depth;
  int want;
  int skip_depth; /* nesting inside a skipped value */
  int seen_events;
  size_t cap;
  /* the event being read */
  kt_event e;
  uint64_t e_offset;
  strbuf ph, cat, name, pg;
  int has_ts;
} kparse;

static int fail(kparse *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(kparse *p, const char *fmt, ...) {
  if (p->rc) return 0;
  va_list ap;
  va_start(ap, fmt);
  p->rc = chakra_diag_failv(&p->err, CHAKRA_EFORMAT, p->path, fmt, ap);
  va_end(ap);
  return 0;
}

static uint64_t here(kparse *p) { return p->base + yajl_get_bytes_consumed(p->y); }

static int ev_fail(kparse *p, const char *what) {
  return fail(p, "trace event #%llu (byte %llu): %s", (unsigned long long)p->k->events_seen,
              (unsigned long long)p->e_offset, what);
}

/* integer from a JSON number or a string of digits; -1 if neither */
static int to_i64(const char *s, size_t n, int64_t *out) {
  if (!n || n > 20) return -1;
  size_t i = 0;
  int neg = 0;
  if (s[0] == '-') neg = 1, i = 1;
  if (i == n) return -1;
  uint64_t v = 0;
  for (; i < n; i++) {
    unsigned d = (unsigned)(s[i] - '0');
    if (d > 9) return -1;
    if (v > (UINT64_MAX - d) / 10) return -1;
    v = v * 10 + d;
  }
  if (v > (uint64_t)INT64_MAX) return -1;
  *out = neg ? -(int64_t)v : (int64_t)v;
  return 0;
}

static int to_double(const char *s, size_t n, double *out) {
  char t[64];
  if (!n || n >= sizeof t) return -1;
  memcpy(t, s, n);
  t[n] = 0;
  char *end;
  *out = strtod(t, &end);
  return *end ? -1 : 0;
}

static void after_value(kparse *p) {
  if (!p->depth) {
    p->want = W_NONE;
    return;
  }
  p->want = p->fr[p->depth - 1] == F_EVENTS ? W_EVENT : W_KEY;
}

static int eq(const strbuf *b, const char *s) { return b->n == strlen(s) && memcmp(b->s, s, b->n) == 0; }

static int finish_event(kparse *p) {
  kt_event *e = &p->e;
  int kind = 0;
  if (eq(&p->ph, "X")) {
    if (eq(&p->cat, "cpu_op") || eq(&p->cat, "user_annotation")) kind = KT_CPU;
    else if (eq(&p->cat, "cuda_runtime") || eq(&p->cat, "cuda_driver") || eq(&p->cat, "hip_runtime") ||
             eq(&p->cat, "hip_driver"))
      kind = KT_RUNTIME;
    else if (eq(&p->cat, "kernel") || eq(&p->cat, "gpu_memcpy") || eq(&p->cat, "gpu_memset"))
      kind = KT_GPU;
  } else if ((eq(&p->ph, "s") || eq(&p->ph, "f")) && eq(&p->cat, "ac2g")) {
    kind = eq(&p->ph, "s") ? KT_FLOW_S : KT_FLOW_F;
  }
  p->k->events_seen++;
  if (!kind) return 1;
  if (!p->has_ts) return ev_fail(p, "no 'ts'");
  if (e->pid == INT64_MIN || e->tid == INT64_MIN) return 1; /* not a process/thread track */
  if ((kind == KT_FLOW_S || kind == KT_FLOW_F) && !(e->flags & KT_HAS_FLOW_ID)) return 1;
  e->kind = (uint8_t)kind;
  e->name = strtab_intern(&p->k->strings, p->name.s ? p->name.s : "", p->name.n);
  e->cat = strtab_intern(&p->k->strings, p->cat.s, p->cat.n);
  e->pg_name = p->pg.n ? strtab_intern(&p->k->strings, p->pg.s, p->pg.n) : 0;
  if (e->name == STRTAB_OOM || e->cat == STRTAB_OOM || e->pg_name == STRTAB_OOM)
    return fail(p, "out of memory");
  e->index = (uint32_t)(p->k->events_seen - 1);
  kt_event *v = VEC_PUSH(p->k->ev, p->k->n, p->cap);
  if (!v) return fail(p, "out of memory");
  *v = *e;
  return 1;
}

static int on_scalar(kparse *p, int is_num, int is_str, const char *s, size_t n) {
  if (p->skip_depth) return 1;
  kt_event *e = &p->e;
  int64_t v;
  double d;
  switch (p->want) {
    case W_PH: p->ph.n = 0; if (is_str) strbuf_put(&p->ph, s, n); break;
    case W_CAT: p->cat.n = 0; if (is_str) strbuf_put(&p->cat, s, n); break;
    case W_NAME: p->name.n = 0; if (is_str) strbuf_put(&p->name, s, n); break;
    case W_A_PG: p->pg.n = 0; if (is_str) strbuf_put(&p->pg, s, n); break;
    case W_PID:
    case W_TID:
      if ((is_num || is_str) && !to_i64(s, n, &v)) {
        if (p->want == W_PID) e->pid = v;
        else e->tid = v;
      } else {
        if (p->want == W_PID) e->pid = INT64_MIN;
        else e->tid = INT64_MIN;
      }
      break;
    case W_TS:
    case W_DUR:
      if (!(is_num || is_str) || to_double(s, n, &d))
        return ev_fail(p, p->want == W_TS ? "'ts' is not a number" : "'dur' is not a number");
      if (p->want == W_TS) e->ts = d, p->has_ts = 1;
      else if (d < 0) return ev_fail(p, "'dur' is negative (a duration cannot be)");
      else e->dur = d;
      break;
    case W_ID:
      if ((is_num || is_str) && !to_i64(s, n, &v)) e->flow_id = v, e->flags |= KT_HAS_FLOW_ID;
      break;
    case W_A_EXT:
    case W_A_RF:
    case W_A_CORR:
    case W_A_STREAM:
    case W_A_DEVICE:
      if ((is_num || is_str) && !to_i64(s, n, &v)) {
        switch (p->want) {
          case W_A_EXT: e->ext_id = v, e->flags |= KT_HAS_EXT; break;
          case W_A_RF: e->rf_id = v, e->flags |= KT_HAS_RF; break;
          case W_A_CORR: e->correlation = v, e->flags |= KT_HAS_CORR; break;
          case W_A_STREAM: e->stream = v, e->flags |= KT_HAS_STREAM; break;
          default: e->device = v, e->flags |= KT_HAS_DEVICE; break;
        }
      }
      break;
    case W_RANK:
      if (is_num && !to_i64(s, n, &v)) p->k->rank = v, p->k->has_rank = 1;
      break;
    case W_EVENT:
      return fail(p, "byte %llu: an element of traceEvents is not an object", (unsigned long long)here(p));
    case W_EVENTS:
      return fail(p, "byte %llu: 'traceEvents' is not a list", (unsigned long long)here(p));
    case W_DOC:
      return fail(p, "byte %llu: the document is not a JSON object", (unsigned long long)here(p));
    default: break;
  }
  after_value(p);
  return 1;
}

static int cb_null(void *ctx) { return on_scalar(ctx, 0, 0, NULL, 0); }
static int cb_bool(void *ctx, int b) { (void)b; return on_scalar(ctx, 0, 0, NULL, 0); }
static int cb_number(void *ctx, const char *s, size_t n) { return on_scalar(ctx, 1, 0, s, n); }
static int cb_string(void *ctx, const unsigned char *s, size_t n) { return on_scalar(ctx, 0, 1, (const char *)s, n); }

#define KEY(lit) (n == sizeof(lit) - 1 && memcmp(s, lit, sizeof(lit) - 1) == 0)

static int cb_key(void *ctx, const unsigned char *us, size_t n) {
  kparse *p = ctx;
  if (p->skip_depth) return 1;
  const char *s = (const char *)us;
  switch (p->fr[p->depth - 1]) {
    case F_TOP:
      p->want = KEY("traceEvents") ? W_EVENTS : KEY("distributedInfo") ? W_DIST : W_SKIP;
      break;
    case F_DIST: p->want = KEY("rank") ? W_RANK : W_SKIP; break;
    case F_EVENT:
      if (KEY("ph")) p->want = W_PH;
      else if (KEY("cat")) p->want = W_CAT;
      else if (KEY("name")) p->want = W_NAME;
      else if (KEY("pid")) p->want = W_PID;
      else if (KEY("tid")) p->want = W_TID;
      else if (KEY("ts")) p->want = W_TS;
      else if (KEY("dur")) p->want = W_DUR;
      else if (KEY("id")) p->want = W_ID;
      else if (KEY("args")) p->want = W_ARGS;
      else p->want = W_SKIP;
      break;
    case F_ARGS:
      if (KEY("External id")) p->want = W_A_EXT;
      else if (KEY("Record function id")) p->want = W_A_RF;
      else if (KEY("correlation")) p->want = W_A_CORR;
      else if (KEY("stream")) p->want = W_A_STREAM;
      else if (KEY("device")) p->want = W_A_DEVICE;
      else if (KEY("Process Group Name")) p->want = W_A_PG;
      else p->want = W_SKIP;
      break;
    default: p->want = W_SKIP; break;
  }
  return 1;
}

static int push(kparse *p, int f) {
  if (p->depth == MAX_DEPTH) return fail(p, "byte %llu: nesting too deep", (unsigned long long)here(p));
  p->fr[p->depth++] = f;
  return 1;
}

static int open_container(kparse *p, int is_map) {
  if (p->skip_depth) {
    p->skip_depth++;
    return 1;
  }
  switch (p->want) {
    case W_DOC:
      if (!is_map) return fail(p, "byte %llu: the document is a list, not a Kineto trace object", (unsigned long long)here(p));
      p->want = W_KEY;
      return push(p, F_TOP);
    case W_EVENTS:
      if (is_map) return fail(p, "byte %llu: 'traceEvents' is not a list", (unsigned long long)here(p));
      p->seen_events = 1;
      p->want = W_EVENT;
      return push(p, F_EVENTS);
    case W_EVENT:
      if (!is_map) return fail(p, "byte %llu: an element of traceEvents is not an object", (unsigned long long)here(p));
      memset(&p->e, 0, sizeof p->e);
      p->ph.n = p->cat.n = p->name.n = p->pg.n = 0;
      p->has_ts = 0;
      p->e_offset = here(p) - 1;
      p->want = W_KEY;
      return push(p, F_EVENT);
    case W_ARGS:
      if (!is_map) break;
      p->want = W_KEY;
      return push(p, F_ARGS);
    case W_DIST:
      if (!is_map) break;
      p->want = W_KEY;
      return push(p, F_DIST);
    default: break;
  }
  p->skip_depth = 1;
  return 1;
}

static int close_container(kparse *p) {
  if (p->skip_depth) {
    if (--p->skip_depth == 0) after_value(p);
    return 1;
  }
  int f = p->fr[--p->depth];
  if (f == F_EVENT && !finish_event(p)) return 0;
  after_value(p);
  return 1;
}

static int cb_start_map(void *ctx) { return open_container(ctx, 1); }
static int cb_start_array(void *ctx) { return open_container(ctx, 0); }
static int cb_end(void *ctx) { return close_container(ctx); }

static const yajl_callbacks callbacks = {cb_null, cb_bool, NULL, NULL, cb_number, cb_string,
                                         cb_start_map, cb_key, cb_end, cb_start_array, cb_end};

/* The error a callback recorded, else yajl's, naming the byte (chunk NULL:
 * at the end of the input, where the text ends). */
static int yajl_failed(kparse *p, const unsigned char *chunk, size_t n) {
  if (p->rc) return p->rc;
  unsigned char *msg = yajl_get_error(p->y, 0, chunk, n);
  size_t len = msg ? strlen((const char *)msg) : 0;
  while (len && (msg[len - 1] == '\n' || msg[len - 1] == ' ')) msg[--len] = 0;
  uint64_t at = p->base + (chunk ? yajl_get_bytes_consumed(p->y) : 0);
  int rc = chakra_error_set(&p->err, CHAKRA_EFORMAT, "%s: byte %llu: invalid JSON: %s", p->path,
                            (unsigned long long)at, len ? (const char *)msg : "parse error");
  if (msg) yajl_free_error(p->y, msg);
  return rc;
}

int kineto_read(kineto **out, const char *path, chakra_error *err) {
  *out = NULL;
  kineto *k = calloc(1, sizeof *k);
  if (!k || !(k->path = strdup(path))) {
    free(k);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  strtab_init(&k->strings);
  kparse p;
  memset(&p, 0, sizeof p);
  p.path = path;
  p.k = k;
  p.want = W_DOC;
  p.y = yajl_alloc(&callbacks, NULL, &p);
  instream *in = NULL;
  unsigned char *buf = malloc(256 * 1024);
  int rc = 0, any = 0;
  if (!p.y || !buf) rc = chakra_error_set(&p.err, CHAKRA_ENOMEM, "out of memory");
  if (!rc) rc = instream_open(&in, path, &p.err);
  while (!rc) {
    ssize_t n = instream_read(in, buf, 256 * 1024, &p.err);
    if (n < 0) {
      rc = (int)n;
      break;
    }
    if (n == 0) {
      if (!any) {
        rc = chakra_error_set(&p.err, CHAKRA_EFORMAT, "%s: empty file", path);
        break;
      }
      if (yajl_complete_parse(p.y) != yajl_status_ok || p.rc) rc = yajl_failed(&p, NULL, 0);
      break;
    }
    for (ssize_t i = 0; !any && i < n; i++) any = buf[i] != ' ' && buf[i] != '\n' && buf[i] != '\r' && buf[i] != '\t';
    if (yajl_parse(p.y, buf, (size_t)n) != yajl_status_ok) {
      rc = yajl_failed(&p, buf, (size_t)n);
      break;
    }
    p.base += (uint64_t)n;
  }
  if (!rc && !p.seen_events)
    rc = chakra_error_set(&p.err, CHAKRA_EFORMAT, "%s: no 'traceEvents' list: not a Kineto trace", path);
  if (in) instream_close(in);
  if (p.y) yajl_free(p.y);
  free(buf);
  strbuf_free(&p.ph), strbuf_free(&p.cat), strbuf_free(&p.name), strbuf_free(&p.pg);
  if (rc) {
    *err = p.err;
    kineto_free(k);
    return rc;
  }
  *out = k;
  return 0;
}

void kineto_free(kineto *k) {
  if (!k) return;
  free(k->path);
  free(k->ev);
  strtab_free(&k->strings);
  free(k);
}
