/* issuelog.c - a simulator's issue/callback log as the reference timeline
 * visualizer's trace-event JSON; see include/chakra/timeline.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/jsonw.h"
#include "../util/outfile.h"
#include "chakra/timeline.h"

/* A node issued and not yet called back. Few are in flight at a time (a
 * rank's ready queue), so a list searched from its end serves. */
typedef struct pending {
  uint32_t npu;
  long long node, cycle;
  char *name;
} pending;

typedef struct issuelog {
  const char *path;
  const chakra_issue_log_options *o;
  pending *p;
  size_t n, cap;
  uint64_t line;
  jsonw w;
  int events;
  chakra_error *err;
} issuelog;

/* The reference's tracks: local memory 1, remote memory 2, compute 3,
 * communication 4, by what the node's name holds. */
static int track_of(const char *name) {
  int mem = strstr(name, "MEM_LOAD_NODE") || strstr(name, "MEM_STORE_NODE");
  if (mem && strstr(name, "LOCAL_MEMORY")) return 1;
  if (mem && strstr(name, "REMOTE_MEMORY")) return 2;
  if (strstr(name, "COMP_NODE")) return 3;
  if (strstr(name, "COMM_SEND_NODE") || strstr(name, "COMM_RECV_NODE") || strstr(name, "COMM_COLL_NODE")) return 4;
  return 0;
}

/* Column k's value: the text after its first '=' up to the next '=' (the
 * reference's split("=")[1]). */
static const char *value_of(char *col) {
  char *eq = strchr(col, '=');
  if (!eq) return NULL;
  char *end = strchr(eq + 1, '=');
  if (end) *end = 0;
  return eq + 1;
}

static int integer(const char *s, long long *out) {
  char *end;
  errno = 0;
  *out = s ? strtoll(s, &end, 10) : 0;
  if (!s || end == s || errno) return -1;
  while (*end == ' ' || *end == '\t') end++;
  return *end ? -1 : 0;
}

static int bad(issuelog *L, const char *what) {
  return chakra_error_set(L->err, CHAKRA_EINVAL, "%s: line %llu: %s", L->path, (unsigned long long)L->line, what);
}

static void put_event(issuelog *L, const pending *p, long long cycle) {
  double mhz = L->o->npu_mhz, ts = (double)p->cycle / mhz / 1000.0, dur = (double)(cycle - p->cycle) / (mhz * 1000.0);
  jsonw *w = &L->w;
  jsonw_lit(w, L->events++ ? ", {\"pid\": " : "{\"pid\": ");
  jsonw_u64(w, p->npu);
  jsonw_lit(w, ", \"tid\": ");
  jsonw_u64(w, (uint64_t)track_of(p->name));
  jsonw_lit(w, ", \"ts\": ");
  jsonw_double_py(w, ts, 0);
  jsonw_lit(w, ", \"dur\": ");
  jsonw_double_py(w, dur, 0);
  jsonw_lit(w, ", \"ph\": \"X\", \"name\": ");
  jsonw_string(w, p->name, strlen(p->name));
  jsonw_lit(w, ", \"args\": {\"ms\": ");
  jsonw_double_py(w, dur, 0);
  jsonw_lit(w, "}}");
}

static int issue(issuelog *L, uint32_t npu, long long node, long long cycle, const char *name) {
  for (size_t i = L->n; i-- > 0;)
    if (L->p[i].npu == npu && L->p[i].node == node) { /* issued again: the later issue counts */
      char *copy = strdup(name);
      if (!copy) return chakra_error_set(L->err, CHAKRA_ENOMEM, "out of memory");
      free(L->p[i].name);
      L->p[i] = (pending){npu, node, cycle, copy};
      return 0;
    }
  if (L->n == L->cap) {
    size_t cap = L->cap ? 2 * L->cap : 64;
    pending *p = realloc(L->p, cap * sizeof *p);
    if (!p) return chakra_error_set(L->err, CHAKRA_ENOMEM, "out of memory");
    L->p = p, L->cap = cap;
  }
  char *copy = strdup(name);
  if (!copy) return chakra_error_set(L->err, CHAKRA_ENOMEM, "out of memory");
  L->p[L->n++] = (pending){npu, node, cycle, copy};
  return 0;
}

static int callback(issuelog *L, uint32_t npu, long long node, long long cycle) {
  for (size_t i = L->n; i-- > 0;)
    if (L->p[i].npu == npu && L->p[i].node == node) {
      if (!track_of(L->p[i].name)) {
        char what[420];
        snprintf(what, sizeof what, "node %lld: its type cannot be told from its name '%.200s' (expected "
                 "COMP_NODE, COMM_SEND_NODE, COMM_RECV_NODE, COMM_COLL_NODE, or MEM_LOAD_NODE or MEM_STORE_NODE "
                 "with LOCAL_MEMORY or REMOTE_MEMORY)", node, L->p[i].name);
        return bad(L, what);
      }
      put_event(L, &L->p[i], cycle);
      free(L->p[i].name);
      L->p[i] = L->p[--L->n];
      return 0;
    }
  char what[120];
  snprintf(what, sizeof what, "callback of node %lld on NPU %u, which was not issued", node, npu);
  return bad(L, what);
}

/* One "issue,..=NPU,..=CYCLE,..=NODE,..=NAME" or "callback,..." line. */
static int line(issuelog *L, char *text) {
  text[strcspn(text, "\r\n")] = 0;
  char *col[5];
  int k = 0;
  for (char *s = text; k < 5; k++) {
    col[k] = s;
    s = strchr(s, ',');
    if (!s) break;
    *s++ = 0;
  }
  long long npu, cycle, node;
  const char *name = k >= 4 ? value_of(col[4]) : NULL;
  if (k < 4 || integer(value_of(col[1]), &npu) || integer(value_of(col[2]), &cycle) ||
      integer(value_of(col[3]), &node) || !name)
    return bad(L, "expected issue|callback,NAME=NPU,NAME=CYCLE,NAME=NODE_ID,NAME=NODE_NAME");
  if (npu < 0 || npu >= (long long)L->o->npus) {
    char what[120];
    snprintf(what, sizeof what, "NPU %lld, but --num_npus is %u", npu, L->o->npus);
    return bad(L, what);
  }
  if (strcmp(col[0], "issue") == 0) return issue(L, (uint32_t)npu, node, cycle, name);
  if (strcmp(col[0], "callback") == 0) return callback(L, (uint32_t)npu, node, cycle);
  return bad(L, "expected issue or callback first");
}

static int read_lines(issuelog *L, FILE *in) {
  char *buf = NULL;
  size_t cap = 0;
  int rc = 0;
  while (!rc && getline(&buf, &cap, in) >= 0) {
    L->line++;
    if (strstr(buf, "issue") || strstr(buf, "callback")) rc = line(L, buf); /* the rest is other logging */
  }
  if (!rc && ferror(in)) rc = chakra_error_set(L->err, CHAKRA_EIO, "%s: read failed: %s", L->path, strerror(errno));
  free(buf);
  return rc;
}

int chakra_timeline_from_issue_log(const char *in_path, const char *out_path, const chakra_issue_log_options *o,
                                   chakra_error *err) {
  if (!o->npus || !(o->npu_mhz > 0))
    return chakra_error_set(err, CHAKRA_EINVAL, "the NPU count and frequency must be positive");
  FILE *in = fopen(in_path, "r");
  if (!in) return chakra_error_set(err, CHAKRA_EIO, "%s: cannot open: %s", in_path, strerror(errno));
  outfile *f = NULL;
  int rc = outfile_open(&f, out_path, 0, err);
  issuelog L = {.path = in_path, .o = o, .err = err};
  if (!rc && jsonw_init(&L.w, f)) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  if (!rc) {
    L.w.ascii_only = 1; /* Python's json.dump */
    jsonw_lit(&L.w, "{\"meta_user\": \"aras\", \"traceEvents\": [");
    rc = read_lines(&L, in);
    jsonw_lit(&L.w, "], \"meta_cpu_count\": ");
    jsonw_u64(&L.w, o->npus);
    jsonw_char(&L.w, '}');
    if (jsonw_flush(&L.w) && !rc) rc = (*err = L.w.err).code;
    jsonw_free(&L.w);
  }
  fclose(in);
  for (size_t i = 0; i < L.n; i++) free(L.p[i].name);
  free(L.p);
  if (rc) {
    if (f) outfile_discard(f);
    return rc;
  }
  return outfile_commit(f, err);
}
