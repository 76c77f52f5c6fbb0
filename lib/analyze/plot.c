/* plot.c - reading reports into bar charts; see include/chakra/plot.h. */
#include "chakra/plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/commgroups.h"
#include "../report/reportjson.h"
#include "../report/runread.h"
#include "chakra/attr.h"
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
 * by-type chart (types in the order they first appear, as listed). */
static int run_rank(const chakra_run_record *r, uint32_t i, svgplot_chart *c, chakra_error *err) {
  const chakra_run_rank *k = &r->ranks[i];
  char label[64];
  snprintf(label, sizeof label, "rank %u", i);
  double *v = svgplot_add(&c[0], label);
  if (!v) return oom(err);
  v[0] = (double)chakra_run_compute_ns(k);
  v[1] = (double)k->exposed_comm_ns;
  v[2] = (double)chakra_run_overlap_ns(k);
  v[3] = (double)k->busy_ns[CHAKRA_CAT_CPU];
  const uint8_t *order = chakra_run_coll_order();
  for (int t = 0; t < CHAKRA_RUN_COLLS; t++) {
    if (!k->coll[order[t]].count) continue;
    const char *type = chakra_comm_type_name(order[t]);
    size_t g = 0;
    while (g < c[1].n_groups && strcmp(c[1].groups[g].label, type) != 0) g++;
    double *cv = g < c[1].n_groups ? c[1].groups[g].value : svgplot_add(&c[1], type);
    if (!cv) return oom(err);
    cv[0] += (double)k->coll[order[t]].time_ns;
  }
  return 0;
}

static int run_charts(const chakra_run_record *r, svgplot_chart *c, chakra_error *err) {
  int cpu = 0;
  for (uint32_t i = 0; i < r->npus; i++) cpu |= r->ranks[i].busy_ns[CHAKRA_CAT_CPU] > 0;
  c[0] = (svgplot_chart){.title = "Per rank: GPU compute, exposed communication, overlap", .unit = "s", .display = 1e-9,
                         .series = {"GPU compute", "exposed communication", "overlap", "CPU"}, .n_series = 3u + cpu};
  c[1] = (svgplot_chart){.title = "Collective time in flight by type, all ranks", .unit = "s", .display = 1e-9,
                         .series = {"time"}, .n_series = 1};
  int rc = 0;
  for (uint32_t i = 0; !rc && i < r->npus; i++) rc = run_rank(r, i, c, err);
  return rc;
}

int chakra_plot_run(const chakra_run_record *r, const char *name, const char *out_path, chakra_error *err) {
  svgplot_chart charts[2];
  memset(charts, 0, sizeof charts);
  char *title = NULL;
  int rc = run_charts(r, charts, err);
  if (!rc && asprintf(&title, "chakra sim report: %s", name) < 0) title = NULL, rc = oom(err);
  if (!rc) rc = svgplot_write(out_path, title, charts, 2, err);
  free(title);
  for (size_t i = 0; i < 2; i++) svgplot_chart_free(&charts[i]);
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

/* Plots the parsed document: a report through the run record, statistics
 * as they are. */
static int plot_doc(yajl_val doc, const char *name, const char *out_path, chakra_plot_kind *kind, chakra_error *err) {
  if (is_sim_report(doc)) {
    if (kind) *kind = CHAKRA_PLOT_SIM_REPORT;
    chakra_run_record r;
    int rc = runread_doc(doc, name, &r, err);
    if (!rc) rc = chakra_plot_run(&r, name, out_path, err);
    chakra_run_record_free(&r);
    return rc;
  }
  if (!is_stats(doc))
    return chakra_error_set(err, CHAKRA_EFORMAT,
                            "%s: neither a 'chakra sim --report' nor a 'chakra stats --json' document (expected "
                            "ranks[].finish_ns or total.nodes_by_type)", name);
  if (kind) *kind = CHAKRA_PLOT_STATS;
  svgplot_chart charts[3];
  memset(charts, 0, sizeof charts);
  char *title = NULL;
  int rc = stats_charts(doc, name, charts, err);
  if (!rc && asprintf(&title, "chakra stats: %s", name) < 0) title = NULL, rc = oom(err);
  if (!rc) rc = svgplot_write(out_path, title, charts, 3, err);
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
