/* compare.c - prediction against measurement; see chakra/compare.h. */
#include "chakra/compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/textout.h"
#include "../util/xmltext.h"
#include "chakra/attr.h"

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

/* Whether some rank of r ran collectives of type t. */
static int has_coll(const chakra_run_record *r, int t) {
  for (uint32_t k = 0; k < r->npus; k++)
    if (r->ranks[k].coll[t].count) return 1;
  return 0;
}

int chakra_compare_runs(const chakra_run_record *predicted, const chakra_run_record *measured, chakra_compare *out,
                        chakra_error *err) {
  memset(out, 0, sizeof *out);
  if (predicted->npus != measured->npus)
    return chakra_error_set(err, CHAKRA_EINVAL, "the prediction has %u ranks but the measurement has %u",
                            predicted->npus, measured->npus);
  size_t cap = 0;
  int rc = 0;
  for (uint32_t i = 0; !rc && i < predicted->npus; i++) {
    const chakra_run_rank *a = &predicted->ranks[i], *b = &measured->ranks[i];
    char what[64];
    snprintf(what, sizeof what, "rank %u finish", i);
    rc = add_row(out, &cap, what, (double)a->finish_ns, (double)b->finish_ns);
    snprintf(what, sizeof what, "rank %u exposed comm", i);
    if (!rc) rc = add_row(out, &cap, what, (double)a->exposed_comm_ns, (double)b->exposed_comm_ns);
  }
  chakra_run_coll pt[CHAKRA_RUN_COLLS], mt[CHAKRA_RUN_COLLS];
  chakra_run_coll_totals(predicted, pt);
  chakra_run_coll_totals(measured, mt);
  const uint8_t *order = chakra_run_coll_order();
  for (int i = 0; !rc && i < CHAKRA_RUN_COLLS; i++) {
    int t = order[i];
    if (!has_coll(predicted, t) && !has_coll(measured, t)) continue;
    char what[64];
    snprintf(what, sizeof what, "%s time", chakra_comm_type_name(t));
    rc = add_row(out, &cap, what, (double)pt[t].time_ns, (double)mt[t].time_ns);
  }
  if (rc) {
    chakra_compare_free(out);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  out->ranks = predicted->npus;
  return 0;
}

int chakra_compare_reports(const char *predicted, const char *measured, chakra_compare *out, chakra_error *err) {
  memset(out, 0, sizeof *out);
  chakra_run_record p, m;
  int rc = chakra_run_read_report(&p, predicted, err);
  if (rc) return rc;
  rc = chakra_run_read_report(&m, measured, err);
  if (!rc && p.npus != m.npus)
    rc = chakra_error_set(err, CHAKRA_EINVAL, "%s has %u ranks but %s has %u", predicted, p.npus, measured, m.npus);
  if (!rc) rc = chakra_compare_runs(&p, &m, out, err);
  chakra_run_record_free(&p);
  chakra_run_record_free(&m);
  return rc;
}

void chakra_compare_free(chakra_compare *c) {
  free(c->rows);
  memset(c, 0, sizeof *c);
}

/* ---- SVG ---- */

static void svg_row(jsonw *w, const chakra_compare_row *r, long long y, int left, int width, double max) {
  double wp = r->predicted_ns / max * width, wm = r->measured_ns / max * width;
  textout_printf(w, "<text x=\"%d\" y=\"%lld\" text-anchor=\"end\">", left - 6, y + 15);
  xmltext_put(w, r->what);
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
