/* mxparse.c - MSCCL-IR XML elements into the program's arrays; see
 * mxparse.h. */
#include "mxparse.h"
#include "../util/diag.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const mx_step_types[ST_TYPES] = {"s", "r", "rcs", "rrs", "rrc", "rrcs", "cpy", "re", "nop"};

int mx_fail(mx *x, const char *fmt, ...) {
  if (x->failed) return x->err ? x->err->code : CHAKRA_EFORMAT;
  x->failed = 1;
  if (x->p) XML_StopParser(x->p, XML_FALSE);
  va_list ap;
  va_start(ap, fmt);
  int rc = chakra_diag_failv(x->err, CHAKRA_EFORMAT, x->path, fmt, ap);
  va_end(ap);
  return rc;
}

/* "gpu G tb T step S: " for the element being parsed or a stored step. */
void mx_place(char *buf, size_t size, const mgpu *g, const mtb *t, const mstep *s) {
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
    mx_place(pl, sizeof pl, g, t, st);
    return mx_fail(x, "%s%sline %lu: <%s> without attribute %s", pl, pl[0] ? ": " : "",
                   (unsigned long)XML_GetCurrentLineNumber(x->p), elem, name);
  }
  char *end;
  errno = 0;
  long l = strtol(v, &end, 10);
  if (end == v || *end || errno || l < INT32_MIN || l > INT32_MAX) {
    mx_place(pl, sizeof pl, g, t, st);
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
#define GROW(x, arr, n, cap)         \
  do {                               \
    if (COLL_ROOM(arr, n, cap)) {    \
      mx_fail((x), "out of memory"); \
      return;                        \
    }                                \
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
  mx_place(pl, sizeof pl, g, &t, NULL);
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
    mx_place(pl, sizeof pl, g, t, &s);
    mx_fail(x, "%s: <step> without attribute type", pl);
    return;
  }
  int k = 0;
  while (k < ST_TYPES && strcmp(type, mx_step_types[k]) != 0) k++;
  if (k == ST_TYPES) {
    mx_place(pl, sizeof pl, g, t, &s);
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
    mx_place(pl, sizeof pl, g, t, &s);
    mx_fail(x, "%s: %s", pl, bad);
    return;
  }
  x->steps[x->n_steps++] = s;
  t->n++;
}

void XMLCALL mx_on_start(void *ud, const XML_Char *el, const XML_Char **at) {
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

void XMLCALL mx_on_end(void *ud, const XML_Char *el) {
  (void)el;
  ((mx *)ud)->depth--;
}

void msccl_free(mx *x) {
  free(x->name), free(x->coll), free(x->gpus), free(x->tbs), free(x->steps);
}
