/* compare.c - prediction against measurement; see chakra/compare.h. */
#include "chakra/compare.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "../util/outfile.h"

static yajl_val load(const char *path, chakra_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    chakra_error_set(err, CHAKRA_EIO, "%s: cannot open the report", path);
    return NULL;
  }
  size_t cap = 1 << 16, n = 0, got;
  char *text = malloc(cap);
  while (text && (got = fread(text + n, 1, cap - n - 1, f)) > 0) {
    n += got;
    char *t = n + 1 >= cap ? realloc(text, cap *= 2) : text;
    if (!t) free(text);
    text = t;
  }
  fclose(f);
  if (!text) {
    chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", path);
    return NULL;
  }
  text[n] = 0;
  char why[512] = "";
  yajl_val v = yajl_tree_parse(text, why, sizeof why);
  free(text);
  for (char *p = why; *p; p++)
    if (*p == '\n') *p = ' ';
  if (!v) chakra_error_set(err, CHAKRA_EFORMAT, "%s: invalid JSON: %s", path, why);
  return v;
}

static double num(yajl_val obj, const char *key) {
  const char *path[] = {key, NULL};
  yajl_val v = yajl_tree_get(obj, path, yajl_t_number);
  return v ? YAJL_GET_DOUBLE(v) : 0.0;
}

static yajl_val ranks_of(yajl_val root, const char *path, chakra_error *err) {
  const char *p[] = {"ranks", NULL};
  yajl_val v = yajl_tree_get(root, p, yajl_t_array);
  if (!v) chakra_error_set(err, CHAKRA_EFORMAT, "%s: no \"ranks\" list: not a chakra sim or replay report", path);
  return v;
}

static int add_row(chakra_compare *c, size_t *cap, const char *what, double pred, double meas) {
  if (c->n == *cap) {
    size_t nc = *cap ? *cap * 2 : 32;
    chakra_compare_row *v = realloc(c->rows, nc * sizeof *v);
    if (!v) return -1;
    c->rows = v;
    *cap = nc;
  }
  chakra_compare_row *r = &c->rows[c->n++];
  snprintf(r->what, sizeof r->what, "%s", what);
  r->predicted_ns = pred;
  r->measured_ns = meas;
  return 0;
}

/* Time in flight of collective type name, summed over the ranks. */
static double coll_time(yajl_val ranks, const char *name) {
  double t = 0;
  for (size_t i = 0; i < ranks->u.array.len; i++) {
    const char *p[] = {"collectives", name, "time_ns", NULL};
    yajl_val v = yajl_tree_get(ranks->u.array.values[i], p, yajl_t_number);
    if (v) t += YAJL_GET_DOUBLE(v);
  }
  return t;
}

static int coll_rows(chakra_compare *c, size_t *cap, yajl_val ps, yajl_val ms) {
  /* Types in the order they first appear, in either report. */
  for (int side = 0; side < 2; side++) {
    yajl_val rs = side ? ms : ps;
    for (size_t i = 0; i < rs->u.array.len; i++) {
      const char *p[] = {"collectives", NULL};
      yajl_val cl = yajl_tree_get(rs->u.array.values[i], p, yajl_t_object);
      for (size_t k = 0; cl && k < cl->u.object.len; k++) {
        char what[64];
        snprintf(what, sizeof what, "%s time", cl->u.object.keys[k]);
        int seen = 0;
        for (size_t j = 0; j < c->n && !seen; j++) seen = strcmp(c->rows[j].what, what) == 0;
        if (!seen && add_row(c, cap, what, coll_time(ps, cl->u.object.keys[k]), coll_time(ms, cl->u.object.keys[k])))
          return -1;
      }
    }
  }
  return 0;
}

int chakra_compare_reports(const char *predicted, const char *measured, chakra_compare *out, chakra_error *err) {
  memset(out, 0, sizeof *out);
  yajl_val p = load(predicted, err), m = p ? load(measured, err) : NULL;
  yajl_val ps = p ? ranks_of(p, predicted, err) : NULL, ms = ps && m ? ranks_of(m, measured, err) : NULL;
  int rc = ms ? 0 : err ? err->code : CHAKRA_EFORMAT;
  if (!rc && ps->u.array.len != ms->u.array.len)
    rc = chakra_error_set(err, CHAKRA_EINVAL, "%s has %zu ranks but %s has %zu", predicted, ps->u.array.len, measured,
                          ms->u.array.len);
  size_t cap = 0;
  for (size_t i = 0; !rc && i < ps->u.array.len; i++) {
    char what[64];
    yajl_val a = ps->u.array.values[i], b = ms->u.array.values[i];
    snprintf(what, sizeof what, "rank %zu finish", i);
    if (add_row(out, &cap, what, num(a, "finish_ns"), num(b, "finish_ns"))) rc = CHAKRA_ENOMEM;
    snprintf(what, sizeof what, "rank %zu exposed comm", i);
    if (!rc && add_row(out, &cap, what, num(a, "exposed_comm_ns"), num(b, "exposed_comm_ns"))) rc = CHAKRA_ENOMEM;
  }
  if (!rc && coll_rows(out, &cap, ps, ms)) rc = CHAKRA_ENOMEM;
  if (rc == CHAKRA_ENOMEM) chakra_error_set(err, rc, "out of memory");
  if (!rc) out->ranks = (unsigned)ps->u.array.len;
  if (p) yajl_tree_free(p);
  if (m) yajl_tree_free(m);
  if (rc) chakra_compare_free(out);
  return rc;
}

void chakra_compare_free(chakra_compare *c) {
  free(c->rows);
  memset(c, 0, sizeof *c);
}

/* ---- SVG ---- */

static int put(outfile *f, chakra_error *err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int put(outfile *f, chakra_error *err, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return outfile_write(f, buf, n < (int)sizeof buf ? (size_t)n : sizeof buf - 1, err);
}

int chakra_compare_write_svg(const chakra_compare *c, const char *path, chakra_error *err) {
  outfile *f;
  int rc = outfile_open(&f, path, 0, err);
  if (rc) return rc;
  double max = 1;
  for (size_t i = 0; i < c->n; i++) {
    if (c->rows[i].predicted_ns > max) max = c->rows[i].predicted_ns;
    if (c->rows[i].measured_ns > max) max = c->rows[i].measured_ns;
  }
  const int left = 200, width = 560, row = 30;
  int height = (int)c->n * row + 50;
  rc = put(f, err,
           "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
           "font-size=\"11\">\n<text x=\"%d\" y=\"14\"><tspan fill=\"#4477aa\">predicted</tspan> / "
           "<tspan fill=\"#ee6677\">measured</tspan> (us; longest bar %.3f)</text>\n",
           left + width + 120, height, left, max / 1000.0);
  for (size_t i = 0; i < c->n && !rc; i++) {
    const chakra_compare_row *r = &c->rows[i];
    int y = 24 + (int)i * row;
    double wp = r->predicted_ns / max * width, wm = r->measured_ns / max * width;
    rc = put(f, err,
             "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n"
             "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"11\" fill=\"#4477aa\"/>\n"
             "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"11\" fill=\"#ee6677\"/>\n"
             "<text x=\"%.1f\" y=\"%d\">%.3f / %.3f</text>\n",
             left - 6, y + 15, r->what, left, y, wp, left, y + 12, wm, left + (wp > wm ? wp : wm) + 4, y + 15,
             r->predicted_ns / 1000.0, r->measured_ns / 1000.0);
  }
  if (!rc) rc = put(f, err, "</svg>\n");
  if (rc) {
    outfile_discard(f);
    return rc;
  }
  return outfile_commit(f, err);
}
