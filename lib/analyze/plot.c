/* plot.c - reading reports into bar charts; see include/chakra/plot.h. */
#include "chakra/plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/commgroups.h"
#include "../report/reportjson.h"
#include "../report/runread.h"
#include "../report/svgplot.h"
#include "chakra/attr.h"
#include "plotkinds.h"

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
static int run_rank(const chakra_run_rank *k, const char *label, svgplot_chart *c, chakra_error *err) {
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

/* Where each rank's time went, end to end: GPU compute, exposed
 * communication and the pipeline bubble (finish = their sum). */
static int split_bar(const chakra_run_rank *k, const char *label, svgplot_chart *c, chakra_error *err) {
  double *v = svgplot_add(c, label);
  if (!v) return oom(err);
  v[0] = (double)chakra_run_compute_ns(k);
  v[1] = (double)chakra_run_exposed_coll_ns(k);
  v[2] = (double)k->bubble_ns;
  return 0;
}

static const svgplot_chart split_chart = {
    .title = "Per rank: where the time went (GPU compute, then exposed communication and pipeline bubble)",
    .axis = "time", .unit = "s", .display = 1e-9, .stacked = 1,
    .series = {"GPU compute", "exposed communication", "pipeline bubble"}, .n_series = 3};

static int run_charts(const chakra_run_record *r, svgplot_chart *c, chakra_error *err) {
  int cpu = 0;
  for (uint32_t i = 0; i < r->npus; i++) cpu |= r->ranks[i].busy_ns[CHAKRA_CAT_CPU] > 0;
  c[0] = split_chart;
  c[1] = (svgplot_chart){.title = "Per rank: GPU compute, exposed communication, overlap", .axis = "time",
                         .unit = "s", .display = 1e-9,
                         .series = {"GPU compute", "exposed communication", "overlap", "CPU"}, .n_series = 3u + cpu};
  c[2] = (svgplot_chart){.title = "Collective time in flight by type, all ranks", .axis = "time", .unit = "s",
                         .display = 1e-9, .series = {"time"}, .n_series = 1};
  int rc = 0;
  for (uint32_t i = 0; !rc && i < r->npus; i++) {
    char label[64];
    snprintf(label, sizeof label, "rank %u", i);
    rc = split_bar(&r->ranks[i], label, &c[0], err);
    if (!rc) rc = run_rank(&r->ranks[i], label, c + 1, err);
  }
  return rc;
}

int chakra_plot_run(const chakra_run_record *r, const char *name, const char *out_path, chakra_error *err) {
  svgplot_chart charts[3];
  memset(charts, 0, sizeof charts);
  char *title = NULL;
  int rc = run_charts(r, charts, err);
  if (!rc && asprintf(&title, "chakra %s report: %s", r->source == CHAKRA_RUN_REPLAY ? "replay" : "sim", name) < 0)
    title = NULL, rc = oom(err);
  if (!rc) rc = svgplot_write(out_path, title, charts, 3, err);
  free(title);
  for (size_t i = 0; i < 3; i++) svgplot_chart_free(&charts[i]);
  return rc;
}

/* ---- reports side by side ---- */

/* Per report: latest finish, and the means over ranks of exposed
 * communication and of the bubble. */
static int side_summary(const chakra_run_record *r, const char *name, svgplot_chart *c, chakra_error *err) {
  double *v = svgplot_add(c, name);
  if (!v) return oom(err);
  chakra_run_summary s;
  chakra_run_summarise(r, &s);
  double coll = 0, bubble = 0;
  for (uint32_t k = 0; k < r->npus; k++)
    coll += (double)chakra_run_exposed_coll_ns(&r->ranks[k]), bubble += (double)r->ranks[k].bubble_ns;
  v[0] = (double)s.max_finish_ns;
  v[1] = r->npus ? coll / r->npus : 0;
  v[2] = r->npus ? bubble / r->npus : 0;
  return 0;
}

/* Collective time by type: a group per type either report has, a bar per
 * report. */
static int side_colls(const chakra_run_record *const *runs, size_t n, svgplot_chart *c, chakra_error *err) {
  const uint8_t *order = chakra_run_coll_order();
  for (int t = 0; t < CHAKRA_RUN_COLLS; t++) {
    double sum[SVGPLOT_MAX_SERIES] = {0};
    int any = 0;
    for (size_t i = 0; i < n; i++)
      for (uint32_t k = 0; k < runs[i]->npus; k++) {
        const chakra_run_coll *x = &runs[i]->ranks[k].coll[order[t]];
        any |= x->count != 0;
        sum[i] += (double)x->time_ns;
      }
    if (!any) continue;
    double *v = svgplot_add(c, chakra_comm_type_name(order[t]));
    if (!v) return oom(err);
    memcpy(v, sum, sizeof sum);
  }
  return 0;
}

static int side_charts(const chakra_run_record *const *runs, const char *const *names, size_t n, svgplot_chart *c,
                       chakra_error *err) {
  c[0] = (svgplot_chart){.title = "Iteration time (latest finish) and per-rank means, each report", .axis = "time",
                         .unit = "s", .display = 1e-9,
                         .series = {"iteration time", "mean exposed communication", "mean pipeline bubble"},
                         .n_series = 3};
  c[1] = split_chart;
  c[2] = (svgplot_chart){.title = "Collective time in flight by type, all ranks, each report", .axis = "time",
                         .unit = "s", .display = 1e-9, .n_series = n};
  for (size_t i = 0; i < n; i++) c[2].series[i] = names[i];
  int rc = 0;
  for (size_t i = 0; !rc && i < n; i++) rc = side_summary(runs[i], names[i], &c[0], err);
  uint32_t most = 0;
  for (size_t i = 0; i < n; i++) most = runs[i]->npus > most ? runs[i]->npus : most;
  for (uint32_t k = 0; !rc && k < most; k++)
    for (size_t i = 0; !rc && i < n; i++) {
      if (k >= runs[i]->npus) continue;
      char *label;
      if (asprintf(&label, "rank %u: %s", k, names[i]) < 0) return oom(err);
      rc = split_bar(&runs[i]->ranks[k], label, &c[1], err);
      free(label);
    }
  if (!rc) rc = side_colls(runs, n, &c[2], err);
  return rc;
}

int chakra_plot_runs(const chakra_run_record *const *runs, const char *const *names, size_t n, const char *out_path,
                     chakra_error *err) {
  if (n < 1 || n > SVGPLOT_MAX_SERIES)
    return chakra_error_set(err, CHAKRA_EINVAL, "plot: 1 to %d reports side by side, not %zu", SVGPLOT_MAX_SERIES, n);
  svgplot_chart charts[3];
  memset(charts, 0, sizeof charts);
  int rc = side_charts(runs, names, n, charts, err);
  if (!rc) rc = svgplot_write(out_path, "chakra reports side by side", charts, 3, err);
  for (size_t i = 0; i < 3; i++) svgplot_chart_free(&charts[i]);
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
  c[0] = (svgplot_chart){.title = "Nodes by type, all ranks", .axis = "nodes", .unit = "", .series = {"nodes"},
                         .n_series = 1};
  c[1] = (svgplot_chart){.title = "Collective bytes by type, all ranks", .axis = "size", .unit = "B",
                         .series = {"bytes"}, .n_series = 1};
  c[2] = (svgplot_chart){.title = "Communication volume per group (bytes sent), all ranks", .axis = "size",
                         .unit = "B", .series = {"bytes"}, .n_series = 1};
  int rc = object_chart(total, "nodes_by_type", NULL, name, &c[0], err);
  if (!rc) rc = object_chart(total, "collectives", "bytes", name, &c[1], err);
  if (!rc) rc = object_chart(total, "groups", "bytes", name, &c[2], err);
  svgplot_sort_groups(&c[2]); /* group names that are numbers in numeric order */
  return rc;
}

/* Plots the parsed document: a report through the run record, the other
 * kinds as they are. */
static int plot_doc(yajl_val doc, const char *name, const char *out_path, chakra_plot_kind *kind, chakra_error *err) {
  if (is_sim_report(doc)) {
    if (kind) *kind = CHAKRA_PLOT_SIM_REPORT;
    chakra_run_record r;
    int rc = runread_doc(doc, name, &r, err);
    if (!rc) rc = chakra_plot_run(&r, name, out_path, err);
    chakra_run_record_free(&r);
    return rc;
  }
  if (plotkinds_is_sweep(doc)) {
    if (kind) *kind = CHAKRA_PLOT_SWEEP;
    return plotkinds_sweep(doc, name, out_path, err);
  }
  if (plotkinds_is_links(doc)) {
    if (kind) *kind = CHAKRA_PLOT_LINKS;
    return plotkinds_links(doc, name, out_path, err);
  }
  if (!is_stats(doc))
    return chakra_error_set(err, CHAKRA_EFORMAT,
                            "%s: neither a 'chakra sim --report', 'chakra stats --json', 'chakra sweep -o FILE.json' "
                            "nor 'chakra sim --link-report' document (expected ranks[].finish_ns, "
                            "total.nodes_by_type, vary and rows, or links and devices)", name);
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

int chakra_plot_files(const char *const *in_paths, size_t n, const char *out_path, chakra_plot_kind *kind,
                      chakra_error *err) {
  if (n == 1) return chakra_plot_file(in_paths[0], out_path, kind, err);
  if (n < 1 || n > SVGPLOT_MAX_SERIES)
    return chakra_error_set(err, CHAKRA_EINVAL, "plot: 1 to %d reports, not %zu", SVGPLOT_MAX_SERIES, n);
  chakra_run_record recs[SVGPLOT_MAX_SERIES];
  const chakra_run_record *runs[SVGPLOT_MAX_SERIES];
  memset(recs, 0, sizeof recs);
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    rc = chakra_run_read_report(&recs[i], in_paths[i], err);
    runs[i] = &recs[i];
  }
  if (!rc && kind) *kind = CHAKRA_PLOT_SIDE_BY_SIDE;
  if (!rc) rc = chakra_plot_runs(runs, in_paths, n, out_path, err);
  for (size_t i = 0; i < n; i++) chakra_run_record_free(&recs[i]);
  return rc;
}
