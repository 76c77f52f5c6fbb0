/* msccl.c - MSCCL-IR XML to algorithm ETs (collectives.md sections 3-4);
 * see chakra_coll_from_msccl() in include/chakra/coll.h.
 *
 * The XML is read in blocks through expat (streaming; the text is kept
 * only when it must be embedded) into flat arrays of GPUs, thread blocks
 * and steps. Everything is validated before anything is written, so a bad
 * input leaves no file behind; errors name file, gpu, tb and step. */
#include <errno.h>
#include <expat.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra/coll.h"
#include "dag.h"
#include "emit.h"
#include "msccl.h"
#include "sha256.h"

static const char *const step_types[ST_TYPES] = {"s", "r", "rcs", "rrs", "rrc", "rrcs", "cpy", "re", "nop"};

static int st_recvs(int t) { return t == ST_R || t == ST_RCS || t == ST_RRS || t == ST_RRC || t == ST_RRCS; }
static int st_sends(int t) { return t == ST_S || t == ST_RCS || t == ST_RRS || t == ST_RRCS; }

static int mx_fail(mx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int mx_fail(mx *x, const char *fmt, ...) {
  if (x->failed) return x->err ? x->err->code : CHAKRA_EFORMAT;
  char what[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  x->failed = 1;
  if (x->p) XML_StopParser(x->p, XML_FALSE);
  return chakra_error_set(x->err, CHAKRA_EFORMAT, "%s: %s", x->path, what);
}

/* "gpu G tb T step S: " for the element being parsed or a stored step. */
static void place(char *buf, size_t size, const mgpu *g, const mtb *t, const mstep *s) {
  int n = 0;
  buf[0] = 0;
  if (g) n += snprintf(buf + n, size - (size_t)n, "gpu %d", g->id);
  if (t && (size_t)n < size) n += snprintf(buf + n, size - (size_t)n, " tb %d", t->id);
  if (s && (size_t)n < size) snprintf(buf + n, size - (size_t)n, " step %d", s->s);
}

static const char *attr_get(const XML_Char **at, const char *name) {
  for (; at[0]; at += 2)
    if (strcmp(at[0], name) == 0) return at[1];
  return NULL;
}

/* Reads integer attribute `name` (value v, NULL when absent) of element
 * `elem` at the place (g, t, s) (each may be NULL); required unless
 * has_def. The place is formatted only for an error: this runs for every
 * attribute of every step. */
static int int_value(mx *x, const char *v, const char *elem, const mgpu *g, const mtb *t, const mstep *st,
                     const char *name, int has_def, int32_t def, int32_t *out) {
  char pl[96];
  if (!v) {
    if (has_def) {
      *out = def;
      return 0;
    }
    place(pl, sizeof pl, g, t, st);
    return mx_fail(x, "%s%sline %lu: <%s> without attribute %s", pl, pl[0] ? ": " : "",
                   (unsigned long)XML_GetCurrentLineNumber(x->p), elem, name);
  }
  char *end;
  errno = 0;
  long l = strtol(v, &end, 10);
  if (end == v || *end || errno || l < INT32_MIN || l > INT32_MAX) {
    place(pl, sizeof pl, g, t, st);
    return mx_fail(x, "%s%sline %lu: %s=\"%s\": expected an integer", pl, pl[0] ? ": " : "",
                   (unsigned long)XML_GetCurrentLineNumber(x->p), name, v);
  }
  *out = (int32_t)l;
  return 0;
}

static int attr_int(mx *x, const XML_Char **at, const char *elem, const mgpu *g, const mtb *t, const mstep *st,
                    const char *name, int has_def, int32_t def, int32_t *out) {
  return int_value(x, attr_get(at, name), elem, g, t, st, name, has_def, def, out);
}

/* Makes room for one more element of arr; on failure stops the parse and
 * returns from the (void) handler. */
#define GROW(x, arr, n, cap)                                  \
  do {                                                        \
    void *q_ = coll_grow((arr), (n), &(cap), sizeof *(arr));  \
    if (!q_) {                                                \
      mx_fail((x), "out of memory");                          \
      return;                                                 \
    }                                                         \
    (arr) = q_;                                               \
  } while (0)

static void on_algo(mx *x, const XML_Char **at) {
  const char *name = attr_get(at, "name"), *coll = attr_get(at, "coll");
  if (!coll) {
    mx_fail(x, "algo: line %lu: <algo> without attribute coll", (unsigned long)XML_GetCurrentLineNumber(x->p));
    return;
  }
  if (attr_int(x, at, "algo", NULL, NULL, NULL, "ngpus", 0, 0, &x->ngpus)) return;
  if (x->ngpus < 1 || x->ngpus > (1 << 20)) {
    mx_fail(x, "algo: ngpus=\"%d\": expected 1 to %d", x->ngpus, 1 << 20);
    return;
  }
  x->name = strdup(name ? name : "");
  x->coll = strdup(coll);
  if (!x->name || !x->coll) mx_fail(x, "out of memory");
  x->in_algo = 1;
}

static void on_gpu(mx *x, const XML_Char **at) {
  GROW(x, x->gpus, x->n_gpus, x->cap_gpus);
  mgpu g = {0};
  if (attr_int(x, at, "gpu", NULL, NULL, NULL, "id", 0, 0, &g.id) ||
      attr_int(x, at, "gpu", &g, NULL, NULL, "i_chunks", 0, 0, &g.i_chunks) ||
      attr_int(x, at, "gpu", &g, NULL, NULL, "o_chunks", 0, 0, &g.o_chunks))
    return;
  if (g.id < 0 || g.id >= x->ngpus) {
    mx_fail(x, "gpu %d: id outside 0..%d (ngpus)", g.id, x->ngpus - 1);
    return;
  }
  g.first = (uint32_t)x->n_tbs;
  x->gpus[x->n_gpus++] = g;
}

static void on_tb(mx *x, const XML_Char **at) {
  GROW(x, x->tbs, x->n_tbs, x->cap_tbs);
  mgpu *g = &x->gpus[x->n_gpus - 1];
  mtb t = {0};
  char pl[64];
  if (attr_int(x, at, "tb", g, NULL, NULL, "id", 0, 0, &t.id)) return;
  if (attr_int(x, at, "tb", g, &t, NULL, "send", 0, 0, &t.send) ||
      attr_int(x, at, "tb", g, &t, NULL, "recv", 0, 0, &t.recv) ||
      attr_int(x, at, "tb", g, &t, NULL, "chan", 1, 0, &t.chan))
    return;
  place(pl, sizeof pl, g, &t, NULL);
  if (t.id < 0 || t.id > 65535) {
    mx_fail(x, "%s: id outside 0..65535", pl);
    return;
  }
  if (t.chan < 0 || t.chan > 32767) {
    mx_fail(x, "%s: chan=\"%d\": expected 0..32767", pl, t.chan);
    return;
  }
  t.first = (uint32_t)x->n_steps;
  x->tbs[x->n_tbs++] = t;
  g->n++;
}

/* The attributes of a <step> that are read, found in one pass (a lookup
 * per name was the largest part of the step handler); NULL when absent. */
typedef struct step_attrs {
  const char *s, *type, *cnt, *depid, *deps;
} step_attrs;

static void find_step_attrs(const XML_Char **at, step_attrs *o) {
  memset(o, 0, sizeof *o);
  for (; at[0]; at += 2) {
    const char *n = at[0];
    if (n[0] == 's' && !n[1]) o->s = at[1];
    else if (n[0] == 't' && strcmp(n, "type") == 0) o->type = at[1];
    else if (n[0] == 'c' && strcmp(n, "cnt") == 0) o->cnt = at[1];
    else if (n[0] == 'd' && strcmp(n, "depid") == 0) o->depid = at[1];
    else if (n[0] == 'd' && strcmp(n, "deps") == 0) o->deps = at[1];
  }
}

static void on_step(mx *x, const XML_Char **at) {
  GROW(x, x->steps, x->n_steps, x->cap_steps);
  mgpu *g = &x->gpus[x->n_gpus - 1];
  mtb *t = &x->tbs[x->n_tbs - 1];
  mstep s = {0};
  char pl[96];
  step_attrs a;
  find_step_attrs(at, &a);
  if (int_value(x, a.s, "step", g, t, NULL, "s", 0, 0, &s.s)) return;
  const char *type = a.type;
  if (!type) {
    place(pl, sizeof pl, g, t, &s);
    mx_fail(x, "%s: <step> without attribute type", pl);
    return;
  }
  int k = 0;
  while (k < ST_TYPES && strcmp(type, step_types[k]) != 0) k++;
  if (k == ST_TYPES) {
    place(pl, sizeof pl, g, t, &s);
    mx_fail(x, "%s: unknown step type \"%s\" (expected s, r, rcs, rrs, rrc, rrcs, cpy, re or nop)", pl, type);
    return;
  }
  s.type = (uint8_t)k;
  if (int_value(x, a.cnt, "step", g, t, &s, "cnt", k == ST_NOP, 0, &s.cnt) ||
      int_value(x, a.depid, "step", g, t, &s, "depid", 0, 0, &s.depid) ||
      int_value(x, a.deps, "step", g, t, &s, "deps", 0, 0, &s.deps))
    return;
  const char *bad = NULL;
  char why[160];
  if (s.s != (int32_t)t->n) {
    snprintf(why, sizeof why, "s=\"%d\": steps must be numbered 0, 1, ... in order (expected %u)", s.s, t->n);
    bad = why;
  } else if (k != ST_NOP && s.cnt < 1) {
    snprintf(why, sizeof why, "cnt=\"%d\": expected at least 1 chunk", s.cnt);
    bad = why;
  } else if (st_sends(k) && (t->send < 0 || t->send >= x->ngpus || t->send == g->id)) {
    snprintf(why, sizeof why, "type \"%s\" sends, but the tb's send=\"%d\" is not another GPU (0..%d)", type, t->send,
             x->ngpus - 1);
    bad = why;
  } else if (st_recvs(k) && (t->recv < 0 || t->recv >= x->ngpus || t->recv == g->id)) {
    snprintf(why, sizeof why, "type \"%s\" receives, but the tb's recv=\"%d\" is not another GPU (0..%d)", type,
             t->recv, x->ngpus - 1);
    bad = why;
  }
  if (bad) {
    place(pl, sizeof pl, g, t, &s);
    mx_fail(x, "%s: %s", pl, bad);
    return;
  }
  x->steps[x->n_steps++] = s;
  t->n++;
}

static void XMLCALL on_start(void *ud, const XML_Char *el, const XML_Char **at) {
  mx *x = ud;
  if (x->failed) return;
  static const char *const levels[] = {"algo", "gpu", "tb", "step"};
  int d = x->depth++;
  if (d > 3 || strcmp(el, levels[d]) != 0) {
    mx_fail(x, "line %lu: unexpected <%s> (expected <%s>)", (unsigned long)XML_GetCurrentLineNumber(x->p), el,
            d > 3 ? "nothing inside <step>" : levels[d]);
    return;
  }
  if (d == 0) on_algo(x, at);
  else if (d == 1) on_gpu(x, at);
  else if (d == 2) on_tb(x, at);
  else on_step(x, at);
}

static void XMLCALL on_end(void *ud, const XML_Char *el) {
  (void)el;
  ((mx *)ud)->depth--;
}

void msccl_free(mx *x) {
  free(x->name), free(x->coll), free(x->gpus), free(x->tbs), free(x->steps);
}

typedef struct hash_job {
  const uint8_t *p;
  size_t n;
  char hex[65];
} hash_job;

static void *hash_run(void *arg) {
  hash_job *j = arg;
  sha256 sh;
  sha256_init(&sh);
  sha256_update(&sh, j->p, j->n);
  sha256_hex(&sh, j->hex);
  return NULL;
}

/* The whole file, mapped (or read when it cannot be: a pipe). */
static int map_file(mx *x, uint8_t **data, size_t *len, int *mapped) {
  int fd = open(x->path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return chakra_error_set(x->err, CHAKRA_EIO, "%s: cannot open: %s", x->path, strerror(errno));
  struct stat st;
  *mapped = 0;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p != MAP_FAILED) {
      close(fd);
      *data = p, *len = (size_t)st.st_size, *mapped = 1;
      return 0;
    }
  }
  size_t cap = 1 << 16, n = 0;
  uint8_t *buf = malloc(cap);
  for (;;) {
    if (!buf) {
      close(fd);
      return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
    }
    ssize_t got = read(fd, buf + n, cap - n);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      free(buf);
      close(fd);
      return chakra_error_set(x->err, CHAKRA_EIO, "%s: read error: %s", x->path, strerror(errno));
    }
    if (got == 0) break;
    n += (size_t)got;
    if (n == cap) {
      uint8_t *b = realloc(buf, cap *= 2);
      if (!b) free(buf);
      buf = b;
    }
  }
  close(fd);
  *data = buf, *len = n;
  return 0;
}

/* Feeds the segments to one expat parser in 1 MiB pieces (the parser
 * never holds more), as if they were one document. */
typedef struct mseg {
  const uint8_t *p;
  size_t n;
} mseg;

static int mx_feed(mx *x, const mseg *seg, int nseg) {
  x->p = XML_ParserCreate(NULL);
  if (!x->p) return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  XML_SetUserData(x->p, x);
  XML_SetElementHandler(x->p, on_start, on_end);
  int rc = 0;
  for (int i = 0; i < nseg && !rc; i++) {
    for (size_t off = 0; !rc;) {
      size_t k = seg[i].n - off < (1u << 20) ? seg[i].n - off : (1u << 20);
      int last = i == nseg - 1 && off + k == seg[i].n;
      if (XML_Parse(x->p, (const char *)seg[i].p + off, (int)k, last) == XML_STATUS_ERROR && !x->failed)
        rc = chakra_error_set(x->err, CHAKRA_EFORMAT, "%s: line %lu: XML error: %s", x->path,
                              (unsigned long)XML_GetCurrentLineNumber(x->p), XML_ErrorString(XML_GetErrorCode(x->p)));
      if (x->failed) rc = x->err ? x->err->code : CHAKRA_EFORMAT;
      off += k;
      if (off == seg[i].n) break;
    }
  }
  XML_ParserFree(x->p);
  x->p = NULL;
  if (!rc && !x->in_algo) rc = chakra_error_set(x->err, CHAKRA_EFORMAT, "%s: no <algo> element", x->path);
  return rc;
}

/* ---- parsing a large file in parts, one per core ----
 *
 * Expat is most of a conversion's time and runs on one core, so a large
 * program is cut before top-level <gpu> tags and each part is parsed on
 * its own thread as a document of its own: the text up to the end of the
 * <algo> start tag (declaration, doctype and all), the part, "</algo>".
 * A cut in the wrong place (inside a comment, say) makes some part
 * ill-formed; then the parts are discarded and the file is parsed whole,
 * which also gives the error its true line. Parts that all parse give the
 * arrays the whole parse would, concatenated. */
#define MX_MAX_PARTS 8
size_t msccl_split_min = 1u << 20;

typedef struct mpart {
  mx x;
  chakra_error err;
  mseg seg[3];
  int nseg, rc;
} mpart;

static void *part_run(void *arg) {
  mpart *m = arg;
  m->rc = mx_feed(&m->x, m->seg, m->nseg);
  return NULL;
}

/* The end of the <algo> start tag (one past its '>'), or 0. */
static size_t algo_tag_end(const uint8_t *d, size_t len) {
  const uint8_t *a = memmem(d, len, "<algo", 5);
  if (!a) return 0;
  uint8_t quote = 0;
  for (size_t i = (size_t)(a - d) + 5; i < len; i++) {
    if (quote) quote = d[i] == quote ? 0 : quote;
    else if (d[i] == '"' || d[i] == '\'') quote = d[i];
    else if (d[i] == '>') return i + 1;
  }
  return 0;
}

/* The first "<gpu" tag at or after from, or len. */
static size_t next_gpu_tag(const uint8_t *d, size_t len, size_t from) {
  while (from + 5 < len) {
    const uint8_t *g = memmem(d + from, len - from, "<gpu", 4);
    if (!g) break;
    size_t at = (size_t)(g - d);
    uint8_t c = at + 4 < len ? d[at + 4] : 0;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '>' || c == '/') return at;
    from = at + 4;
  }
  return len;
}

/* Cuts data (whose <algo> tag ends at head) into up to `want` parts;
 * returns their count (1: no split). */
static int mx_cuts(const uint8_t *d, size_t len, size_t head, int want, size_t *cut) {
  int n = 0;
  if (!head) return 1;
  cut[n++] = 0;
  for (int k = 1; k < want; k++) {
    size_t target = len / (size_t)want * (size_t)k;
    size_t at = next_gpu_tag(d, len, target > head ? target : head);
    if (at >= len || at <= cut[n - 1] || at <= head) break;
    cut[n++] = at;
  }
  cut[n] = len;
  return n;
}

/* Appends part m's arrays to x. */
static int mx_append(mx *x, mpart *m) {
  mx *y = &m->x;
  if (y->ngpus != x->ngpus || strcmp(y->name, x->name) || strcmp(y->coll, x->coll)) return -1;
  size_t ng = x->n_gpus + y->n_gpus, nt = x->n_tbs + y->n_tbs, ns = x->n_steps + y->n_steps;
  mgpu *g = realloc(x->gpus, (ng ? ng : 1) * sizeof *g);
  if (g) x->gpus = g;
  mtb *t = g ? realloc(x->tbs, (nt ? nt : 1) * sizeof *t) : NULL;
  if (t) x->tbs = t;
  mstep *s = t ? realloc(x->steps, (ns ? ns : 1) * sizeof *s) : NULL;
  if (!s) return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  x->steps = s;
  for (size_t i = 0; i < y->n_gpus; i++, x->n_gpus++) {
    x->gpus[x->n_gpus] = y->gpus[i];
    x->gpus[x->n_gpus].first += (uint32_t)x->n_tbs;
  }
  for (size_t i = 0; i < y->n_tbs; i++, x->n_tbs++) {
    x->tbs[x->n_tbs] = y->tbs[i];
    x->tbs[x->n_tbs].first += (uint32_t)x->n_steps;
  }
  if (y->n_steps) memcpy(x->steps + x->n_steps, y->steps, y->n_steps * sizeof *y->steps);
  x->n_steps = ns;
  x->cap_gpus = x->n_gpus, x->cap_tbs = x->n_tbs, x->cap_steps = x->n_steps;
  return 0;
}

/* Parses in parts; 0 when every part parsed and x holds the whole program,
 * 1 when the file should be parsed whole instead, an error code when out
 * of memory. */
static int mx_parse_parts(mx *x, const uint8_t *d, size_t len, int want) {
  static const uint8_t close_tag[] = "</algo>";
  size_t cut[MX_MAX_PARTS + 1], head = algo_tag_end(d, len);
  int n = mx_cuts(d, len, head, want, cut);
  if (n < 2) return 1;
  mpart *m = calloc((size_t)n, sizeof *m);
  pthread_t th[MX_MAX_PARTS];
  int started[MX_MAX_PARTS] = {0};
  if (!m) return 1;
  for (int k = 0; k < n; k++) {
    m[k].x.path = x->path;
    m[k].x.err = &m[k].err;
    if (k) m[k].seg[m[k].nseg++] = (mseg){d, head};
    m[k].seg[m[k].nseg++] = (mseg){d + cut[k], cut[k + 1] - cut[k]};
    if (k < n - 1) m[k].seg[m[k].nseg++] = (mseg){close_tag, sizeof close_tag - 1};
    if (k) started[k] = pthread_create(&th[k], NULL, part_run, &m[k]) == 0;
  }
  for (int k = 0; k < n; k++) {
    if (k && started[k]) pthread_join(th[k], NULL);
    else part_run(&m[k]);
  }
  int rc = 0;
  for (int k = 0; k < n; k++)
    if (m[k].rc) rc = m[k].err.code == CHAKRA_ENOMEM ? -1 : 1;
  if (!rc) {
    chakra_error *err = x->err;
    *x = m[0].x;
    x->err = err;
    m[0].x = (mx){0};
    for (int k = 1; k < n && !rc; k++)
      if (mx_append(x, &m[k])) rc = 1;
  }
  for (int k = 0; k < n; k++) msccl_free(&m[k].x);
  free(m);
  if (rc == -1) return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  if (rc) { /* start again from nothing */
    msccl_free(x);
    *x = (mx){.path = x->path, .err = x->err};
  }
  return rc;
}

/* Parses the whole file (in parts when it is large and there are cores to
 * spare) while another thread computes the digest. */
static int mx_parse(mx *x, const uint8_t *data, size_t len, unsigned threads, char hex[65]) {
  hash_job job = {data, len, {0}};
  pthread_t th;
  int threaded = pthread_create(&th, NULL, hash_run, &job) == 0;
  if (!threaded) hash_run(&job);
  int parts = (int)coll_set_threads(threads);
  if (parts > MX_MAX_PARTS) parts = MX_MAX_PARTS;
  int rc = len >= msccl_split_min && parts > 1 ? mx_parse_parts(x, data, len, parts) : 1;
  if (rc == 1) rc = mx_feed(x, &(mseg){data, len}, 1);
  if (threaded) pthread_join(th, NULL);
  memcpy(hex, job.hex, sizeof job.hex);
  return rc;
}

/* ---- validation over the whole program ---------------------------------- */

static const mgpu *gpu_of(const mx *x, int32_t id, const mgpu **by_id) {
  (void)x;
  return by_id[id];
}

/* The tb of GPU g with id t, or NULL. */
static const mtb *tb_of(const mx *x, const mgpu *g, int32_t t) {
  for (uint32_t i = 0; i < g->n; i++)
    if (x->tbs[g->first + i].id == t) return &x->tbs[g->first + i];
  return NULL;
}

/* Every GPU present once, dependencies that exist, sends that match receives
 * per connection; assigns tags (channel << 16 | message index on the
 * connection, counted in program order on both sides). */
int msccl_validate(mx *x, const mgpu **by_id) {
  char pl[96];
  for (size_t i = 0; i < x->n_gpus; i++) {
    if (by_id[x->gpus[i].id]) return mx_fail(x, "gpu %d: defined twice", x->gpus[i].id);
    by_id[x->gpus[i].id] = &x->gpus[i];
  }
  for (int32_t gi = 0; gi < x->ngpus; gi++)
    if (!by_id[gi]) return mx_fail(x, "gpu %d: missing (ngpus=\"%d\")", gi, x->ngpus);
  for (size_t gi = 0; gi < x->n_gpus; gi++) {
    const mgpu *g = &x->gpus[gi];
    for (uint32_t ti = 0; ti < g->n; ti++) {
      const mtb *t = &x->tbs[g->first + ti];
      for (uint32_t j = 0; j < ti; j++)
        if (x->tbs[g->first + j].id == t->id) return mx_fail(x, "gpu %d tb %d: defined twice", g->id, t->id);
      for (uint32_t si = 0; si < t->n; si++) {
        const mstep *s = &x->steps[t->first + si];
        if (s->depid == -1) continue;
        place(pl, sizeof pl, g, t, s);
        const mtb *dt = tb_of(x, g, s->depid);
        if (!dt || s->deps < 0 || (uint32_t)s->deps >= dt->n)
          return mx_fail(x, "%s: depends on tb %d step %d, which does not exist", pl, s->depid, s->deps);
      }
    }
  }
  /* Connections: per (sender, receiver, channel), the k-th sending step of
   * the sender pairs with the k-th receiving step of the receiver. Counted
   * per GPU pair with a small scan: tbs are few per GPU. */
  for (size_t gi = 0; gi < x->n_gpus; gi++) {
    const mgpu *g = &x->gpus[gi];
    for (uint32_t ti = 0; ti < g->n; ti++) {
      const mtb *t = &x->tbs[g->first + ti];
      if (t->send < 0 || t->send >= x->ngpus) continue;
      /* skip if an earlier tb of g already covered this connection */
      int seen = 0;
      for (uint32_t j = 0; j < ti && !seen; j++)
        seen = x->tbs[g->first + j].send == t->send && x->tbs[g->first + j].chan == t->chan;
      if (seen) continue;
      const mgpu *peer = gpu_of(x, t->send, by_id);
      /* walk the sends of g and the receives of peer on this connection together */
      uint32_t sa = 0, ra = 0; /* tb cursors */
      uint32_t ss = 0, rs = 0; /* step cursors */
      int32_t k = 0;
      for (;;) {
        mstep *snd = NULL, *rcv = NULL;
        const mtb *stb = NULL, *rtb = NULL;
        for (; sa < g->n && !snd; sa++, ss = 0) {
          stb = &x->tbs[g->first + sa];
          if (stb->send != t->send || stb->chan != t->chan) continue;
          for (; ss < stb->n; ss++)
            if (st_sends(x->steps[stb->first + ss].type)) break;
          if (ss < stb->n) {
            snd = &x->steps[stb->first + ss++];
            break;
          }
        }
        for (; ra < peer->n && !rcv; ra++, rs = 0) {
          rtb = &x->tbs[peer->first + ra];
          if (rtb->recv != g->id || rtb->chan != t->chan) continue;
          for (; rs < rtb->n; rs++)
            if (st_recvs(x->steps[rtb->first + rs].type)) break;
          if (rs < rtb->n) {
            rcv = &x->steps[rtb->first + rs++];
            break;
          }
        }
        if (!snd && !rcv) break;
        if (!rcv) {
          place(pl, sizeof pl, g, stb, snd);
          return mx_fail(x, "%s: send #%d to gpu %d on channel %d has no matching receive", pl, k, t->send, t->chan);
        }
        if (!snd) {
          place(pl, sizeof pl, peer, rtb, rcv);
          return mx_fail(x, "%s: receive #%d from gpu %d on channel %d has no matching send", pl, k, g->id, t->chan);
        }
        if (snd->cnt != rcv->cnt) {
          place(pl, sizeof pl, peer, rtb, rcv);
          return mx_fail(x, "%s: receives %d chunks, but send #%d of gpu %d tb %d step %d sends %d", pl, rcv->cnt, k,
                         g->id, stb->id, snd->s, snd->cnt);
        }
        if (k > 65535) {
          place(pl, sizeof pl, g, stb, snd);
          return mx_fail(x, "%s: more than 65536 messages on one connection", pl);
        }
        snd->stag = (t->chan << 16) | k;
        rcv->rtag = snd->stag;
        k++;
      }
    }
  }
  /* receives on connections nobody sends on */
  for (size_t gi = 0; gi < x->n_gpus; gi++) {
    const mgpu *g = &x->gpus[gi];
    for (uint32_t ti = 0; ti < g->n; ti++) {
      const mtb *t = &x->tbs[g->first + ti];
      if (t->recv < 0 || t->recv >= x->ngpus) continue;
      const mgpu *peer = by_id[t->recv];
      int found = 0;
      for (uint32_t j = 0; j < peer->n && !found; j++)
        found = x->tbs[peer->first + j].send == g->id && x->tbs[peer->first + j].chan == t->chan;
      if (found) continue;
      for (uint32_t si = 0; si < t->n; si++)
        if (st_recvs(x->steps[t->first + si].type)) {
          place(pl, sizeof pl, g, t, &x->steps[t->first + si]);
          return mx_fail(x, "%s: receive from gpu %d on channel %d, which never sends to gpu %d", pl, t->recv, t->chan,
                         g->id);
        }
    }
  }
  return 0;
}

/* ---- conversion ---------------------------------------------------------- */

typedef struct conv {
  mx *x;
  const chakra_coll_msccl_options *o;
  uint64_t chunk;      /* bytes per chunk */
  uint32_t stamp;
  uint32_t *deps;      /* scratch for one node's deps */
  size_t n_deps, cap_deps;
  struct wstep *work;  /* scratch for resolve() */
  size_t n_work, cap_work;
  uint32_t *ids;       /* node -> id in the file (--compat leaves gaps) */
  size_t n_ids, cap_ids;
  uint32_t id_gap;
  int oom;
} conv;

static void add_dep(conv *c, uint32_t node) {
  for (size_t i = 0; i < c->n_deps; i++)
    if (c->deps[i] == node) return;
  uint32_t *v = coll_grow(c->deps, c->n_deps, &c->cap_deps, sizeof *v);
  if (!v) {
    c->oom = 1;
    return;
  }
  c->deps = v;
  c->deps[c->n_deps++] = node;
}

typedef struct wstep { const mtb *t; uint32_t si; } wstep;

static int push_work(conv *c, const mtb *t, uint32_t si) {
  wstep *v = coll_grow(c->work, c->n_work, &c->cap_work, sizeof *v);
  if (!v) {
    c->oom = 1;
    return -1;
  }
  c->work = v;
  c->work[c->n_work++] = (wstep){t, si};
  return 0;
}

/* A dependency on step si of tb t: its last node, or, for a step without
 * nodes (a nop), whatever that step waits for (expanded later). */
static void target(conv *c, const mtb *t, uint32_t si) {
  mstep *s = &c->x->steps[t->first + si];
  if (s->n_nodes) {
    add_dep(c, s->first + s->n_nodes - 1);
  } else if (s->stamp != c->stamp) {
    s->stamp = c->stamp;
    push_work(c, t, si);
  }
}

/* The dependencies of step si into c->deps: its cross-tb target, then
 * program order, walking through nops with an explicit stack (a chain of
 * nops may be as long as the input). */
static void resolve(conv *c, const mgpu *g, const mtb *t, uint32_t si) {
  c->n_deps = 0;
  c->n_work = 0;
  c->stamp++;
  push_work(c, t, si);
  while (c->n_work && !c->oom) {
    wstep w = c->work[--c->n_work];
    const mstep *s = &c->x->steps[w.t->first + w.si];
    if (s->depid != -1) target(c, tb_of(c->x, g, s->depid), (uint32_t)s->deps);
    if (w.si > 0) target(c, w.t, w.si - 1);
  }
}

static int add_id(conv *c, uint32_t id) {
  uint32_t *v = coll_grow(c->ids, c->n_ids, &c->cap_ids, sizeof *v);
  if (!v) return -1;
  c->ids = v;
  c->ids[c->n_ids++] = id;
  return 0;
}

static void add_node(conv *c, coll_dag *d, int kind, int32_t peer, int32_t tag, uint64_t bytes, const mstep *s,
                     const mtb *t) {
  uint64_t ns = 0;
  if (kind == COLL_REDUCE || kind == COLL_COPY) ns = coll_comp_ns(kind, bytes, c->o->reduce_bw);
  uint32_t i = coll_dag_add(d, kind, peer, tag, bytes, ns, (uint32_t)s->s);
  if (i != COLL_NONE) d->tb[i] = (uint16_t)t->id;
  if (i == COLL_NONE || add_id(c, i + c->id_gap)) d->oom = 1;
}

/* Cross-tb dependencies can close a cycle (a step waiting on a later step
 * of its own tb, two tbs waiting on each other): refuse it, naming a step
 * on it, rather than write a DAG nothing can run. Kahn's algorithm. */
static int check_acyclic(conv *c, const mgpu *g, const coll_dag *d) {
  uint32_t *indeg = calloc(d->n ? d->n : 1, sizeof *indeg), *stack = malloc((d->n ? d->n : 1) * sizeof *stack);
  uint32_t *off = calloc((size_t)d->n + 1, sizeof *off), *kids = malloc((d->n_deps ? d->n_deps : 1) * sizeof *kids);
  int rc = 0;
  if (!indeg || !stack || !off || !kids) {
    rc = chakra_error_set(c->x->err, CHAKRA_ENOMEM, "out of memory");
    goto out;
  }
  for (uint32_t i = 0; i < d->n; i++) {
    indeg[i] = coll_dag_ndeps(d, i);
    for (uint32_t k = d->dep_off[i]; k < d->dep_off[i + 1]; k++) off[d->deps[k] + 1]++;
  }
  for (uint32_t i = 0; i < d->n; i++) off[i + 1] += off[i];
  for (uint32_t i = 0; i < d->n; i++)
    for (uint32_t k = d->dep_off[i]; k < d->dep_off[i + 1]; k++) kids[off[d->deps[k]]++] = i;
  for (uint32_t i = d->n; i > 0; i--) off[i] = off[i - 1]; /* back to starts */
  off[0] = 0;
  uint32_t sp = 0, seen = 0;
  for (uint32_t i = 0; i < d->n; i++)
    if (!indeg[i]) stack[sp++] = i;
  while (sp) {
    uint32_t i = stack[--sp];
    seen++;
    for (uint32_t k = off[i]; k < off[i + 1]; k++)
      if (--indeg[kids[k]] == 0) stack[sp++] = kids[k];
  }
  if (seen < d->n) {
    uint32_t i = 0;
    while (!indeg[i]) i++;
    rc = mx_fail(c->x, "gpu %d tb %u step %u: its dependencies form a cycle", g->id, (unsigned)d->tb[i],
                 (unsigned)d->label[i]);
  }
out:
  free(indeg), free(stack), free(off), free(kids);
  return rc;
}

static int convert_gpu(conv *c, const mgpu *g, coll_dag *d) {
  mx *x = c->x;
  int compat = c->o->compat;
  coll_dag_clear(d);
  c->n_ids = 0;
  c->id_gap = 0;
  /* pass 1: nodes, in XML order */
  for (uint32_t ti = 0; ti < g->n; ti++) {
    const mtb *t = &x->tbs[g->first + ti];
    for (uint32_t si = 0; si < t->n; si++) {
      mstep *s = &x->steps[t->first + si];
      if (s->cnt > 0 && c->chunk > (uint64_t)INT64_MAX / (uint64_t)s->cnt) {
        char pl[96];
        place(pl, sizeof pl, g, t, s);
        return mx_fail(x, "%s: %d chunks of %llu bytes do not fit a 64-bit size", pl, s->cnt,
                       (unsigned long long)c->chunk);
      }
      uint64_t bytes = c->chunk * (uint64_t)s->cnt;
      int32_t tag = compat ? t->chan : st_sends(s->type) && !st_recvs(s->type) ? s->stag : s->rtag;
      s->first = d->n;
      switch (s->type) {
        case ST_S: add_node(c, d, COLL_SEND, t->send, tag, bytes, s, t); break;
        case ST_R: add_node(c, d, COLL_RECV, t->recv, tag, bytes, s, t); break;
        case ST_RRC:
          add_node(c, d, COLL_RECV, t->recv, tag, bytes, s, t);
          add_node(c, d, COLL_REDUCE, -1, 0, bytes, s, t);
          break;
        case ST_RCS:
        case ST_RRS:
        case ST_RRCS:
          add_node(c, d, COLL_RECV, t->recv, tag, bytes, s, t);
          if (s->type != ST_RCS) add_node(c, d, COLL_REDUCE, -1, 0, bytes, s, t);
          /* the forwarded message travels on the send connection, whose tag
           * was assigned when the connection was walked */
          add_node(c, d, COLL_SEND, t->send, compat ? t->chan : s->stag, bytes, s, t);
          break;
        case ST_CPY:
        case ST_RE:
          if (compat) c->id_gap++; /* the reference drops the step but spends an id on it */
          else add_node(c, d, s->type == ST_CPY ? COLL_COPY : COLL_REDUCE, -1, 0, bytes, s, t);
          break;
        default: /* nop: carries dependencies only */
          if (compat) c->id_gap++; /* the reference spends an id on every step, nops included */
          break;
      }
      s->n_nodes = d->n - s->first;
    }
  }
  if (d->oom) return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  /* pass 2: dependencies; rebuild the DAG with them (nodes are appended in
   * the same order, so indexes do not change) */
  coll_dag full;
  coll_dag_init(&full);
  for (uint32_t ti = 0; ti < g->n; ti++) {
    const mtb *t = &x->tbs[g->first + ti];
    for (uint32_t si = 0; si < t->n; si++) {
      const mstep *s = &x->steps[t->first + si];
      for (uint32_t k = 0; k < s->n_nodes; k++) {
        uint32_t i = s->first + k;
        uint32_t j = coll_dag_add(&full, d->kind[i], d->peer[i], d->tag[i], d->bytes[i], d->dur_ns[i], d->label[i]);
        if (j != COLL_NONE) full.tb[j] = d->tb[i];
        if (k > 0) {
          coll_dag_dep(&full, i - 1); /* RECV -> COMP -> SEND inside a fused step */
          continue;
        }
        resolve(c, g, t, si);
        for (size_t q = 0; q < c->n_deps; q++) coll_dag_dep(&full, c->deps[q]);
      }
    }
  }
  int oom = full.oom || c->oom;
  coll_dag_free(d);
  *d = full;
  if (oom) return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  return check_acyclic(c, g, d);
}

/* Bytes per chunk (collectives.md 4.2 for --compat, 4.3 otherwise). */
static int chunk_bytes(mx *x, const mgpu *g0, const chakra_coll_msccl_options *o, uint64_t *out) {
  int gather = strcmp(x->coll, "allgather") == 0, reduce = strcmp(x->coll, "reduce") == 0;
  if (o->compat) {
    int32_t total = g0->i_chunks ? g0->i_chunks : g0->o_chunks;
    if (gather || reduce) *out = o->size;
    else if (total <= 0) return mx_fail(x, "gpu %d: i_chunks and o_chunks are 0", g0->id);
    else *out = o->size / (uint64_t)total;
    return 0;
  }
  int64_t in = g0->i_chunks > 0 ? g0->i_chunks : gather ? g0->o_chunks / x->ngpus : g0->o_chunks;
  if (gather && g0->i_chunks <= 0 && g0->o_chunks % x->ngpus)
    return mx_fail(x, "gpu %d: o_chunks=\"%d\" is not a multiple of ngpus=\"%d\"", g0->id, g0->o_chunks, x->ngpus);
  if (in <= 0) return mx_fail(x, "gpu %d: no input chunks (i_chunks and o_chunks are 0)", g0->id);
  if (o->size % (uint64_t)in)
    return mx_fail(x, "size %llu is not a multiple of the %lld input chunks per rank", (unsigned long long)o->size,
                   (long long)in);
  *out = o->size / (uint64_t)in;
  return 0;
}

/* One worker's scratch: its view of the program (steps are marked while
 * converting, and each GPU's steps belong to one worker), converter state,
 * DAG and encoding. */
typedef struct mscratch {
  mx x;
  chakra_error err;
  conv c;
  coll_dag d;
  enc_buf buf;
} mscratch;

typedef struct mjob {
  const mgpu **by_id;
  const coll_meta *m;
  const chakra_coll_msccl_options *o;
  mscratch *w; /* one per worker */
} mjob;

static int msccl_rank(void *ctx, unsigned worker, uint32_t gi, coll_set *set, chakra_error *err) {
  mjob *j = ctx;
  mscratch *w = &j->w[worker];
  int rc = convert_gpu(&w->c, j->by_id[gi], &w->d);
  if (rc) {
    if (err) *err = w->err;
    return rc;
  }
  coll_place pl = {.self = -1, .style = j->o->compat ? COLL_STYLE_COMPAT : COLL_STYLE_CHAKRA,
                   .names = COLL_NAMES_MSCCL, .id_of = w->c.ids};
  w->buf.n = 0;
  coll_encode_meta(&w->buf, j->m);
  for (uint32_t i = 0; i < w->d.n; i++) coll_encode_node(&w->buf, &w->d, i, &pl);
  return coll_set_write(set, gi, &w->buf, err);
}

/* from-msccl's metadata: the XML's name and digest (or its whole text). */
static void msccl_meta(coll_meta *m, const mx *x, const chakra_coll_msccl_options *o, const char *text,
                       size_t text_len, const char *hex) {
  const char *base = strrchr(x->path, '/');
  base = base ? base + 1 : x->path;
  memset(m, 0, sizeof *m);
  if (o->compat) {
    coll_meta_str(m, "schema", "1.0.2-chakra.0.0.4");
    coll_meta_str(m, "input_file", text);
    m->a[m->n - 1].len = text_len;
    coll_meta_str(m, "collective", x->coll);
    return;
  }
  m->version = "1.0.0";
  coll_meta_str(m, "producer", o->producer ? o->producer : "chakra-c coll from-msccl");
  coll_meta_str(m, "schema", "1.0.2-chakra.0.0.4");
  coll_meta_str(m, "collective", x->coll);
  coll_meta_str(m, "algorithm", x->name);
  coll_meta_int(m, "npus", x->ngpus);
  coll_meta_int(m, "size", (int64_t)o->size);
  coll_meta_str(m, "input_file", o->embed_xml ? text : base);
  if (o->embed_xml) m->a[m->n - 1].len = text_len;
  coll_meta_str(m, "input_sha256", hex);
}

int msccl_write(mx *x, const mgpu **by_id, const chakra_coll_msccl_options *o, const char *prefix,
                const coll_meta *mp, chakra_error *err) {
  conv c = {.x = x, .o = o};
  int rc = chunk_bytes(x, by_id[0], o, &c.chunk);
  if (rc) return rc;
  coll_set *set;
  rc = coll_set_open(&set, prefix, (uint32_t)x->ngpus, err);
  if (rc) return rc;
  unsigned nt = coll_set_threads(o->threads);
  mjob j = {by_id, mp, o, calloc(nt, sizeof *j.w)};
  if (!j.w) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (unsigned t = 0; j.w && t < nt; t++) {
    mscratch *w = &j.w[t];
    w->x = *x; /* shared, read-only program; own error and failure mark */
    w->x.err = &w->err;
    w->c = c;
    w->c.x = &w->x;
    coll_dag_init(&w->d);
  }
  if (!rc) rc = coll_set_fill(set, o->threads, msccl_rank, &j, err);
  for (unsigned t = 0; j.w && t < nt; t++) {
    coll_dag_free(&j.w[t].d);
    enc_buf_free(&j.w[t].buf);
    free(j.w[t].c.deps);
    free(j.w[t].c.work);
    free(j.w[t].c.ids);
  }
  free(j.w);
  if (rc) {
    coll_set_abort(set);
    return rc;
  }
  return coll_set_commit(set, err);
}

/* --compat reproduces a converter that cannot express fused steps, nor a
 * step after a dropped copy: refuse those instead of guessing its crash. */
static int compat_supported(mx *x) {
  char pl[96];
  for (size_t gi = 0; gi < x->n_gpus; gi++) {
    const mgpu *g = &x->gpus[gi];
    for (uint32_t ti = 0; ti < g->n; ti++) {
      const mtb *t = &x->tbs[g->first + ti];
      for (uint32_t si = 0; si < t->n; si++) {
        const mstep *s = &x->steps[t->first + si];
        place(pl, sizeof pl, g, t, s);
        if (s->type == ST_RCS || s->type == ST_RRS || s->type == ST_RRCS)
          return mx_fail(x, "%s: compat: the 2025-04 reference converter cannot convert fused step \"%s\" (drop compat)",
                         pl, step_types[s->type]);
        if ((s->type == ST_CPY || s->type == ST_RE) && si + 1 < t->n)
          return mx_fail(x, "%s: compat: the reference converter fails on a step after a dropped \"%s\" (drop compat)",
                         pl, step_types[s->type]);
      }
    }
  }
  return 0;
}

int chakra_coll_from_msccl(const char *xml_path, const char *prefix, const chakra_coll_msccl_options *o,
                           chakra_error *err) {
  mx x = {0};
  x.path = xml_path;
  x.err = err;
  uint8_t *data = NULL;
  size_t len = 0;
  int mapped = 0;
  char hex[65];
  int rc = map_file(&x, &data, &len, &mapped);
  if (!rc) rc = mx_parse(&x, data, len, o->threads, hex);
  const mgpu **by_id = NULL;
  if (!rc) {
    by_id = calloc((size_t)x.ngpus, sizeof *by_id);
    rc = by_id ? msccl_validate(&x, by_id) : chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  if (!rc && o->compat) rc = compat_supported(&x);
  /* the text may hold NULs: its length is passed along */
  coll_meta m;
  if (!rc) msccl_meta(&m, &x, o, len ? (const char *)data : "", len, hex);
  if (!rc) rc = msccl_write(&x, by_id, o, prefix, &m, err);
  free(by_id);
  if (mapped) munmap(data, len);
  else free(data);
  msccl_free(&x);
  return rc;
}
