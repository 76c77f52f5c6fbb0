/* plot.c - reading reports into bar charts; see include/chakra/plot.h. */
#include "chakra/plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/commgroups.h"
#include "reportjson.h"
#include "svgplot.h"

#define get reportjson_get

static int is_sim_report(yajl_val doc) {
  yajl_val ranks = get(doc, "ranks");
  return YAJL_IS_ARRAY(ranks) && YAJL_GET_ARRAY(ranks)->len && get(YAJL_GET_ARRAY(ranks)->values[0], "finish_ns");
}

static int is_stats(yajl_val doc) {
  return YAJL_IS_OBJECT(get(doc, "total")) && YAJL_IS_OBJECT(get(get(doc, "total"), "nodes_by_type"));
}

static int oom(chakra_error *err) { return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory"); }

/* One rank's bars: its four times, and its collectives' time added to the
 * by-type chart. */
static int sim_rank(yajl_val r, size_t i, const char *name, svgplot_chart *c, chakra_error *err) {
  static const char *const fields[] = {"gpu_ns", "exposed_comm_ns", "overlap_ns", "cpu_ns"};
  char where[48], label[64];
  double rank;
  snprintf(where, sizeof where, "ranks[%zu]", i);
  int rc = reportjson_field(r, "rank", name, where, &rank, err);
  if (rc) return rc;
  snprintf(label, sizeof label, "rank %.0f", rank);
  double *v = svgplot_add(&c[0], label);
  if (!v) return oom(err);
  for (int k = 0; k < 4 && !rc; k++) rc = reportjson_field(r, fields[k], name, where, &v[k], err);
  yajl_val colls = get(r, "collectives");
  for (size_t k = 0; !rc && YAJL_IS_OBJECT(colls) && k < YAJL_GET_OBJECT(colls)->len; k++) {
    const char *type = YAJL_GET_OBJECT(colls)->keys[k];
    char place[128], q[64];
    double t;
    snprintf(place, sizeof place, "%s.collectives.%s", where, cg_quote(type, q, sizeof q));
    if ((rc = reportjson_field(YAJL_GET_OBJECT(colls)->values[k], "time_ns", name, place, &t, err))) break;
    size_t g = 0;
    while (g < c[1].n_groups && strcmp(c[1].groups[g].label, type) != 0) g++;
    double *cv = g < c[1].n_groups ? c[1].groups[g].value : svgplot_add(&c[1], type);
    if (!cv) return oom(err);
    if (!isfinite(cv[0] += t)) {
      snprintf(place, sizeof place, "collectives.%s.time_ns", cg_quote(type, q, sizeof q));
      rc = reportjson_sum_overflow(name, place, err);
    }
  }
  return rc;
}

static int sim_charts(yajl_val doc, const char *name, svgplot_chart *c, chakra_error *err) {
  yajl_val ranks = get(doc, "ranks");
  int cpu = 0;
  for (size_t i = 0; i < YAJL_GET_ARRAY(ranks)->len; i++) {
    yajl_val x = get(YAJL_GET_ARRAY(ranks)->values[i], "cpu_ns");
    cpu |= x && YAJL_IS_NUMBER(x) && YAJL_GET_DOUBLE(x) > 0;
  }
  c[0] = (svgplot_chart){.title = "Per rank: GPU compute, exposed communication, overlap", .unit = "s", .display = 1e-9,
                         .series = {"GPU compute", "exposed communication", "overlap", "CPU"}, .n_series = 3u + cpu};
  c[1] = (svgplot_chart){.title = "Collective time in flight by type, all ranks", .unit = "s", .display = 1e-9,
                         .series = {"time"}, .n_series = 1};
  int rc = 0;
  for (size_t i = 0; !rc && i < YAJL_GET_ARRAY(ranks)->len; i++)
    rc = sim_rank(YAJL_GET_ARRAY(ranks)->values[i], i, name, c, err);
  return rc;
}

/* One bar per member of total.FIELD (its number, or its member key). */
static int object_chart(yajl_val total, const char *field, const char *key, const char *name, svgplot_chart *c,
                        chakra_error *err) {
  yajl_val obj = get(total, field);
  int rc = 0;
  for (size_t k = 0; !rc && YAJL_IS_OBJECT(obj) && k < YAJL_GET_OBJECT(obj)->len; k++) {
    const char *label = YAJL_GET_OBJECT(obj)->keys[k];
    yajl_val v = YAJL_GET_OBJECT(obj)->values[k];
    double *out = svgplot_add(c, label[0] ? label : "(all ranks)");
    if (!out) return oom(err);
    char place[128], q[64];
    snprintf(place, sizeof place, "total.%s.%s", field, cg_quote(label, q, sizeof q));
    rc = key ? reportjson_field(v, key, name, place, out, err) : reportjson_amount(v, name, place, out, err);
  }
  return rc;
}

static int stats_charts(yajl_val doc, const char *name, svgplot_chart *c, chakra_error *err) {
  yajl_val total = get(doc, "total");
  c[0] = (svgplot_chart){.title = "Nodes by type, all ranks", .unit = "", .series = {"nodes"}, .n_series = 1};
  c[1] = (svgplot_chart){.title = "Collective bytes by type, all ranks", .unit = "B", .series = {"bytes"},
                         .n_series = 1};
  c[2] = (svgplot_chart){.title = "Communication volume per group (bytes sent), all ranks", .unit = "B",
                         .series = {"bytes"}, .n_series = 1};
  int rc = object_chart(total, "nodes_by_type", NULL, name, &c[0], err);
  if (!rc) rc = object_chart(total, "collectives", "bytes", name, &c[1], err);
  if (!rc) rc = object_chart(total, "groups", "bytes", name, &c[2], err);
  return rc;
}

/* Plots the parsed document. */
static int plot_doc(yajl_val doc, const char *name, const char *out_path, chakra_plot_kind *kind, chakra_error *err) {
  svgplot_chart charts[3];
  memset(charts, 0, sizeof charts);
  size_t n = 0;
  int rc = 0;
  const char *what = NULL;
  if (is_sim_report(doc)) {
    n = 2;
    if (kind) *kind = CHAKRA_PLOT_SIM_REPORT;
    rc = sim_charts(doc, name, charts, err);
    what = "chakra sim report";
  } else if (is_stats(doc)) {
    n = 3;
    if (kind) *kind = CHAKRA_PLOT_STATS;
    rc = stats_charts(doc, name, charts, err);
    what = "chakra stats";
  } else {
    rc = chakra_error_set(err, CHAKRA_EFORMAT,
                          "%s: neither a 'chakra sim --report' nor a 'chakra stats --json' document (expected "
                          "ranks[].finish_ns or total.nodes_by_type)", name);
  }
  char *title = NULL;
  if (!rc && asprintf(&title, "%s: %s", what, name) < 0) title = NULL, rc = oom(err);
  if (!rc) rc = svgplot_write(out_path, title, charts, n, err);
  free(title);
  for (size_t i = 0; i < 3; i++) svgplot_chart_free(&charts[i]);
  return rc;
}

int chakra_plot_json(const char *text, size_t len, const char *name, const char *out_path, chakra_plot_kind *kind,
                     chakra_error *err) {
  yajl_val doc = reportjson_parse(text, len, name, err);
  if (!doc) return err ? err->code : CHAKRA_EFORMAT;
  int rc = plot_doc(doc, name, out_path, kind, err);
  yajl_tree_free(doc);
  return rc;
}

int chakra_plot_file(const char *in_path, const char *out_path, chakra_plot_kind *kind, chakra_error *err) {
  yajl_val doc = reportjson_load(in_path, err);
  if (!doc) return err ? err->code : CHAKRA_EFORMAT;
  int rc = plot_doc(doc, in_path, out_path, kind, err);
  yajl_tree_free(doc);
  return rc;
}
