/* mxread.c - an MSCCL-IR file read and parsed; see mxread.h. */
#include "mxread.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mxparse.h"
#include "../util/sha256.h"
#include "../util/strbuf.h"
#include "../util/vec.h"

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

static int too_big(mx *x) {
  return chakra_error_set(x->err, CHAKRA_EINVAL, "%s: more than %llu bytes of XML (from-msccl's limit)", x->path,
                          (unsigned long long)CHAKRA_COLL_MSCCL_MAX_BYTES);
}

/* A stream (a pipe, a device) read whole, at most the limit. A parser
 * without handlers follows it, so that what is not XML (/dev/zero) stops
 * the reading at once: the prefix read holds the first error, which the
 * real parse then reports as it would for a file. */
static int read_stream(mx *x, int fd, uint8_t **data, size_t *len) {
  strbuf b = {0};
  XML_Parser check = XML_ParserCreate(NULL);
  int rc = check ? 0 : chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  while (!rc) {
    uint8_t *at = strbuf_room(&b, 1 << 16);
    if (!at) {
      rc = chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
      break;
    }
    ssize_t got = read(fd, at, b.cap - b.n);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) rc = chakra_error_set(x->err, CHAKRA_EIO, "%s: read error: %s", x->path, strerror(errno));
    if (got <= 0) break;
    int bad = XML_Parse(check, (const char *)at, (int)got, 0) == XML_STATUS_ERROR;
    b.n += (size_t)got;
    if (bad) break; /* the error is in what was read */
    if (b.n > CHAKRA_COLL_MSCCL_MAX_BYTES) rc = too_big(x);
  }
  if (check) XML_ParserFree(check);
  if (rc) return strbuf_free(&b), rc;
  *data = b.p, *len = b.n;
  return 0;
}

/* The whole file, mapped (or read when it cannot be: a pipe). */
int mx_map_file(mx *x, uint8_t **data, size_t *len, int *mapped) {
  int fd = open(x->path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return chakra_error_set(x->err, CHAKRA_EIO, "%s: cannot open: %s", x->path, strerror(errno));
  struct stat st;
  *mapped = 0;
  int rc = fstat(fd, &st) ? chakra_error_set(x->err, CHAKRA_EIO, "%s: %s", x->path, strerror(errno)) : 0;
  if (!rc && S_ISDIR(st.st_mode)) rc = chakra_error_set(x->err, CHAKRA_EIO, "%s: is a folder, not an XML file", x->path);
  if (!rc && S_ISREG(st.st_mode) && (uint64_t)st.st_size > CHAKRA_COLL_MSCCL_MAX_BYTES) rc = too_big(x);
  if (!rc && S_ISREG(st.st_mode) && st.st_size > 0) {
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p != MAP_FAILED) {
      close(fd);
      *data = p, *len = (size_t)st.st_size, *mapped = 1;
      return 0;
    }
  }
  if (!rc) rc = read_stream(x, fd, data, len);
  close(fd);
  return rc;
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
  XML_SetElementHandler(x->p, mx_on_start, mx_on_end);
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

/* One past the end of the construct at d[i] that starts with open and
 * ends with close ("<!--" .. "-->"), or 0 when it does not end. */
static size_t past(const uint8_t *d, size_t len, size_t i, const char *open, const char *close) {
  size_t no = strlen(open), nc = strlen(close);
  if (len - i < no || memcmp(d + i, open, no)) return 0;
  const uint8_t *e = memmem(d + i + no, len - i - no, close, nc);
  return e ? (size_t)(e - d) + nc : 0;
}

/* One past the '>' closing the tag or declaration at d[i], quoted
 * literals, comments and the DOCTYPE's internal subset skipped; 0 when it
 * does not close. */
static size_t tag_end(const uint8_t *d, size_t len, size_t i) {
  uint8_t quote = 0;
  int subset = 0;
  for (i++; i < len; i++) {
    size_t skip = quote ? 0 : past(d, len, i, "<!--", "-->");
    if (!skip && !quote) skip = past(d, len, i, "<?", "?>");
    if (skip) {
      i = skip - 1;
      continue;
    }
    uint8_t c = d[i];
    if (quote) quote = c == quote ? 0 : quote;
    else if (c == '"' || c == '\'') quote = c;
    else if (c == '[') subset++;
    else if (c == ']' && subset) subset--;
    else if (c == '>' && !subset) return i + 1;
  }
  return 0;
}

/* The end of the root element's start tag (one past its '>') when the root
 * is <algo>, else 0 (no split). The prolog before it - XML declaration,
 * processing instructions, comments, the DOCTYPE - is skipped as XML
 * defines it, so an "<algo" or a quote in a comment cannot be taken for
 * the root. */
static size_t algo_tag_end(const uint8_t *d, size_t len) {
  size_t i = len >= 3 && !memcmp(d, "\xEF\xBB\xBF", 3) ? 3 : 0; /* a byte order mark */
  for (;;) {
    while (i < len && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r')) i++;
    if (i >= len || d[i] != '<') return 0;
    size_t next = past(d, len, i, "<!--", "-->");
    if (!next) next = past(d, len, i, "<?", "?>");
    if (!next && len - i > 9 && !memcmp(d + i, "<!DOCTYPE", 9)) next = tag_end(d, len, i);
    if (next) {
      i = next;
      continue;
    }
    if (len - i < 6 || memcmp(d + i, "<algo", 5)) return 0;
    uint8_t c = d[i + 5];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '>') return 0;
    return tag_end(d, len, i);
  }
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
  if (VEC_ROOM(x->gpus, x->n_gpus, x->cap_gpus, y->n_gpus) || VEC_ROOM(x->tbs, x->n_tbs, x->cap_tbs, y->n_tbs) ||
      VEC_ROOM(x->steps, x->n_steps, x->cap_steps, y->n_steps))
    return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  for (size_t i = 0; i < y->n_gpus; i++, x->n_gpus++) {
    x->gpus[x->n_gpus] = y->gpus[i];
    x->gpus[x->n_gpus].first += (uint32_t)x->n_tbs;
  }
  for (size_t i = 0; i < y->n_tbs; i++, x->n_tbs++) {
    x->tbs[x->n_tbs] = y->tbs[i];
    x->tbs[x->n_tbs].first += (uint32_t)x->n_steps;
  }
  if (y->n_steps) memcpy(x->steps + x->n_steps, y->steps, y->n_steps * sizeof *y->steps);
  x->n_steps += y->n_steps;
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
int mx_parse(mx *x, const uint8_t *data, size_t len, unsigned threads, char hex[65]) {
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
