/* compare.c - prediction against measurement; see chakra/compare.h. */
#include "chakra/compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/commgroups.h"
#include "../util/xmltext.h"
#include "reportjson.h"
#include "textout.h"
#include "../util/vec.h"

static yajl_val ranks_of(yajl_val root, const char *path, chakra_error *err) {
  const char *p[] = {"ranks", NULL};
  yajl_val v = yajl_tree_get(root, p, yajl_t_array);
  if (!v) chakra_error_set(err, CHAKRA_EFORMAT, "%s: no \"ranks\" list: not a chakra sim or replay report", path);
  return v;
}

/* Every number compare reads from one report, refused unless it can be
 * drawn: the ranks' finish and exposed times, their collectives' times. */
static int check_ranks(yajl_val ranks, const char *path, chakra_error *err) {
  static const char *const fields[] = {"finish_ns", "exposed_comm_ns"};
  double v;
  for (size_t i = 0; i < ranks->u.array.len; i++) {
    yajl_val r = ranks->u.array.values[i];
    char where[48];
    snprintf(where, sizeof where, "ranks[%zu]", i);
    for (int k = 0; k < 2; k++)
      if (reportjson_field(r, fields[k], path, where, &v, err)) return err ? err->code : CHAKRA_EFORMAT;
    yajl_val cl = reportjson_get(r, "collectives");
    for (size_t k = 0; cl && YAJL_IS_OBJECT(cl) && k < cl->u.object.len; k++) {
      char place[128], q[64];
      snprintf(place, sizeof place, "%s.collectives.%s", where, cg_quote(cl->u.object.keys[k], q, sizeof q));
      if (reportjson_field(cl->u.object.values[k], "time_ns", path, place, &v, err))
        return err ? err->code : CHAKRA_EFORMAT;
    }
  }
  return 0;
}

static double num(yajl_val obj, const char *key) {
  const char *path[] = {key, NULL};
  yajl_val v = yajl_tree_get(obj, path, yajl_t_number);
  return v ? YAJL_GET_DOUBLE(v) : 0.0;
}

static int add_row(chakra_compare *c, size_t *cap, const char *what, double pred, double meas) {
  if (VEC_ROOM(c->rows, c->n, *cap, 1)) return -1;
  chakra_compare_row *r = &c->rows[c->n];
  if (!(r->label = strdup(what))) return -1;
  snprintf(r->what, sizeof r->what, "%s", what);
  c->n++;
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

/* The row of collective type name, unless the report already has it. Its
 * label is the whole name made printable (escaping is one to one: two
 * names are one row only when they are one name). */
static int coll_row(chakra_compare *c, size_t *cap, const char *name, yajl_val ps, yajl_val ms,
                    const char *const paths[2], chakra_error *err) {
  size_t size = 4 * strlen(name) + 16;
  char *what = malloc(size);
  if (!what) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  cg_quote(name, what, size - 5);
  strcat(what, " time");
  int rc = 0, seen = 0;
  for (size_t j = 0; j < c->n && !seen; j++) seen = strcmp(c->rows[j].label, what) == 0;
  double t[2] = {coll_time(ps, name), coll_time(ms, name)};
  for (int side = 0; side < 2 && !seen && !rc; side++)
    if (!isfinite(t[side])) {
      char place[128], q[64];
      snprintf(place, sizeof place, "collectives.%s.time_ns", cg_quote(name, q, sizeof q));
      rc = reportjson_sum_overflow(paths[side], place, err);
    }
  if (!seen && !rc && add_row(c, cap, what, t[0], t[1])) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  free(what);
  return rc;
}

static int coll_rows(chakra_compare *c, size_t *cap, yajl_val ps, yajl_val ms, const char *const paths[2],
                     chakra_error *err) {
  /* Types in the order they first appear, in either report. */
  int rc = 0;
  for (int side = 0; side < 2 && !rc; side++) {
    yajl_val rs = side ? ms : ps;
    for (size_t i = 0; i < rs->u.array.len && !rc; i++) {
      const char *p[] = {"collectives", NULL};
      yajl_val cl = yajl_tree_get(rs->u.array.values[i], p, yajl_t_object);
      for (size_t k = 0; cl && k < cl->u.object.len && !rc; k++)
        rc = coll_row(c, cap, cl->u.object.keys[k], ps, ms, paths, err);
    }
  }
  return rc;
}

int chakra_compare_reports(const char *predicted, const char *measured, chakra_compare *out, chakra_error *err) {
  memset(out, 0, sizeof *out);
  yajl_val p = reportjson_load(predicted, err), m = p ? reportjson_load(measured, err) : NULL;
  yajl_val ps = p ? ranks_of(p, predicted, err) : NULL, ms = ps && m ? ranks_of(m, measured, err) : NULL;
  int rc = ms ? 0 : err ? err->code : CHAKRA_EFORMAT;
  if (!rc) rc = check_ranks(ps, predicted, err);
  if (!rc) rc = check_ranks(ms, measured, err);
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
  if (rc == CHAKRA_ENOMEM) chakra_error_set(err, rc, "out of memory");
  const char *const paths[2] = {predicted, measured};
  if (!rc) rc = coll_rows(out, &cap, ps, ms, paths, err);
  if (!rc) out->ranks = (unsigned)ps->u.array.len;
  if (p) yajl_tree_free(p);
  if (m) yajl_tree_free(m);
  if (rc) chakra_compare_free(out);
  return rc;
}

void chakra_compare_free(chakra_compare *c) {
  for (size_t i = 0; i < c->n; i++) free(c->rows[i].label);
  free(c->rows);
  memset(c, 0, sizeof *c);
}

/* ---- SVG ---- */

static void svg_row(jsonw *w, const chakra_compare_row *r, long long y, int left, int width, double max) {
  double wp = r->predicted_ns / max * width, wm = r->measured_ns / max * width;
  textout_printf(w, "<text x=\"%d\" y=\"%lld\" text-anchor=\"end\">", left - 6, y + 15);
  xmltext_put(w, r->label ? r->label : r->what);
  textout_printf(w,
                 "</text>\n<rect x=\"%d\" y=\"%lld\" width=\"%.1f\" height=\"11\" fill=\"#4477aa\"/>\n"
                 "<rect x=\"%d\" y=\"%lld\" width=\"%.1f\" height=\"11\" fill=\"#ee6677\"/>\n"
                 "<text x=\"%.1f\" y=\"%lld\">%.6g / %.6g</text>\n",
                 left, y, wp, left, y + 12, wm, left + (wp > wm ? wp : wm) + 4, y + 15, r->predicted_ns / 1000.0,
                 r->measured_ns / 1000.0);
}

int chakra_compare_write_svg(const chakra_compare *c, const char *path, chakra_error *err) {
  double max = 1;
  for (size_t i = 0; i < c->n; i++) {
    const chakra_compare_row *r = &c->rows[i];
    /* the reader refuses these; a caller building rows by hand is told */
    if (!isfinite(r->predicted_ns) || !isfinite(r->measured_ns) || r->predicted_ns < 0 || r->measured_ns < 0)
      return chakra_error_set(err, CHAKRA_EINVAL, "row %zu: times must be finite and >= 0 to be drawn", i);
    if (r->predicted_ns > max) max = r->predicted_ns;
    if (r->measured_ns > max) max = r->measured_ns;
  }
  textout t;
  int rc = textout_open(&t, path, err);
  if (rc) return rc;
  const int left = 200, width = 560, row = 30;
  textout_printf(&t.w,
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%zu\" font-family=\"sans-serif\" "
                 "font-size=\"11\">\n<text x=\"%d\" y=\"14\"><tspan fill=\"#4477aa\">predicted</tspan> / "
                 "<tspan fill=\"#ee6677\">measured</tspan> (us; longest bar %.6g)</text>\n",
                 left + width + 120, c->n * (size_t)row + 50, left, max / 1000.0);
  for (size_t i = 0; i < c->n; i++) svg_row(&t.w, &c->rows[i], 24 + (long long)i * row, left, width, max);
  jsonw_lit(&t.w, "</svg>\n");
  return textout_close(&t, 0, err);
}
