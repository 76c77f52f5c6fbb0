/* compare.c - prediction against measurement; see chakra/compare.h. */
#include "chakra/compare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra/attr.h"
#include "../report/svgplot.h"
#include "../util/vec.h"

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
    if (!pt[t].count && !mt[t].count) continue; /* neither side ran it (totals saturate, never wrap to 0) */
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
  for (size_t i = 0; i < c->n; i++) free(c->rows[i].label);
  free(c->rows);
  memset(c, 0, sizeof *c);
}

/* ---- SVG ---- */

int chakra_compare_write_svg(const chakra_compare *c, const char *path, chakra_error *err) {
  svgplot_chart chart = {.title = "Predicted and measured time per row", .axis = "time", .unit = "s",
                         .display = 1e-9, .series = {"predicted", "measured"}, .n_series = 2};
  int rc = 0;
  for (size_t i = 0; i < c->n && !rc; i++) {
    const chakra_compare_row *r = &c->rows[i];
    double *v = svgplot_add(&chart, r->label ? r->label : r->what);
    if (!v) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    else v[0] = r->predicted_ns, v[1] = r->measured_ns;
  }
  if (!rc) rc = svgplot_write(path, "chakra compare: a simulation against a replay", &chart, 1, err);
  svgplot_chart_free(&chart);
  return rc;
}
