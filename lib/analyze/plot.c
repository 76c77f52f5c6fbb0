/* plot.c - reading reports into bar charts; see include/chakra/plot.h. */
#include "chakra/plot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "svgplot.h"

#define MAX_INPUT (256u << 20)

static yajl_val get(yajl_val v, const char *key) {
  const char *path[] = {key, NULL};
  return v ? yajl_tree_get(v, path, yajl_t_any) : NULL;
}

static double num(yajl_val v, const char *key) {
  yajl_val x = get(v, key);
  return x && YAJL_IS_NUMBER(x) ? YAJL_GET_DOUBLE(x) : 0;
}

static int is_sim_report(yajl_val doc) {
  yajl_val ranks = get(doc, "ranks");
  return YAJL_IS_ARRAY(ranks) && YAJL_GET_ARRAY(ranks)->len && get(YAJL_GET_ARRAY(ranks)->values[0], "finish_ns");
}

static int is_stats(yajl_val doc) {
  return YAJL_IS_OBJECT(get(doc, "total")) && YAJL_IS_OBJECT(get(get(doc, "total"), "nodes_by_type"));
}

static int oom(chakra_error *err) { return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory"); }

static int sim_charts(yajl_val doc, svgplot_chart *c, chakra_error *err) {
  yajl_val ranks = get(doc, "ranks");
  int cpu = 0;
  for (size_t i = 0; i < YAJL_GET_ARRAY(ranks)->len; i++) cpu |= num(YAJL_GET_ARRAY(ranks)->values[i], "cpu_ns") > 0;
  c[0] = (svgplot_chart){.title = "Per rank: GPU compute, exposed communication, overlap", .unit = "s", .display = 1e-9,
                         .series = {"GPU compute", "exposed communication", "overlap", "CPU"}, .n_series = 3u + cpu};
  c[1] = (svgplot_chart){.title = "Collective time in flight by type, all ranks", .unit = "s", .display = 1e-9,
                         .series = {"time"}, .n_series = 1};
  for (size_t i = 0; i < YAJL_GET_ARRAY(ranks)->len; i++) {
    yajl_val r = YAJL_GET_ARRAY(ranks)->values[i];
    char label[64];
    /* %.0f, not a cast: a hand-edited report may hold any number here */
    snprintf(label, sizeof label, "rank %.0f", num(r, "rank"));
    double *v = svgplot_add(&c[0], label);
    if (!v) return oom(err);
    v[0] = num(r, "gpu_ns"), v[1] = num(r, "exposed_comm_ns"), v[2] = num(r, "overlap_ns"), v[3] = num(r, "cpu_ns");
    yajl_val colls = get(r, "collectives");
    for (size_t k = 0; YAJL_IS_OBJECT(colls) && k < YAJL_GET_OBJECT(colls)->len; k++) {
      const char *type = YAJL_GET_OBJECT(colls)->keys[k];
      double t = num(YAJL_GET_OBJECT(colls)->values[k], "time_ns");
      size_t g = 0;
      while (g < c[1].n_groups && strcmp(c[1].groups[g].label, type) != 0) g++;
      double *cv = g < c[1].n_groups ? c[1].groups[g].value : svgplot_add(&c[1], type);
      if (!cv) return oom(err);
      cv[0] += t;
    }
  }
  return 0;
}

static int object_chart(yajl_val obj, const char *field, svgplot_chart *c, chakra_error *err) {
  for (size_t k = 0; YAJL_IS_OBJECT(obj) && k < YAJL_GET_OBJECT(obj)->len; k++) {
    const char *key = YAJL_GET_OBJECT(obj)->keys[k];
    yajl_val v = YAJL_GET_OBJECT(obj)->values[k];
    double *out = svgplot_add(c, key[0] ? key : "(all ranks)");
    if (!out) return oom(err);
    out[0] = field ? num(v, field) : YAJL_IS_NUMBER(v) ? YAJL_GET_DOUBLE(v) : 0;
  }
  return 0;
}

static int stats_charts(yajl_val doc, svgplot_chart *c, chakra_error *err) {
  yajl_val total = get(doc, "total");
  c[0] = (svgplot_chart){.title = "Nodes by type, all ranks", .unit = "", .series = {"nodes"}, .n_series = 1};
  c[1] = (svgplot_chart){.title = "Collective bytes by type, all ranks", .unit = "B", .series = {"bytes"},
                         .n_series = 1};
  c[2] = (svgplot_chart){.title = "Communication volume per group (bytes sent), all ranks", .unit = "B",
                         .series = {"bytes"}, .n_series = 1};
  int rc = object_chart(get(total, "nodes_by_type"), NULL, &c[0], err);
  if (!rc) rc = object_chart(get(total, "collectives"), "bytes", &c[1], err);
  if (!rc) rc = object_chart(get(total, "groups"), "bytes", &c[2], err);
  return rc;
}

int chakra_plot_json(const char *text, size_t len, const char *name, const char *out_path, chakra_plot_kind *kind,
                     chakra_error *err) {
  char *copy = malloc(len + 1), msg[512];
  if (!copy) return oom(err);
  memcpy(copy, text, len);
  copy[len] = 0;
  yajl_val doc = yajl_tree_parse(copy, msg, sizeof msg);
  free(copy);
  if (!doc) {
    char *nl = strchr(msg, '\n');
    if (nl) *nl = 0;
    return chakra_error_set(err, CHAKRA_EFORMAT, "%s: not JSON: %s", name, msg);
  }
  svgplot_chart charts[3];
  memset(charts, 0, sizeof charts);
  size_t n = 0;
  int rc = 0;
  char title[600];
  if (is_sim_report(doc)) {
    n = 2;
    if (kind) *kind = CHAKRA_PLOT_SIM_REPORT;
    rc = sim_charts(doc, charts, err);
    snprintf(title, sizeof title, "chakra sim report: %s", name);
  } else if (is_stats(doc)) {
    n = 3;
    if (kind) *kind = CHAKRA_PLOT_STATS;
    rc = stats_charts(doc, charts, err);
    snprintf(title, sizeof title, "chakra stats: %s", name);
  } else {
    rc = chakra_error_set(err, CHAKRA_EFORMAT,
                          "%s: neither a 'chakra sim --report' nor a 'chakra stats --json' document (expected "
                          "ranks[].finish_ns or total.nodes_by_type)", name);
  }
  if (!rc) rc = svgplot_write(out_path, title, charts, n, err);
  for (size_t i = 0; i < 3; i++) svgplot_chart_free(&charts[i]);
  yajl_tree_free(doc);
  return rc;
}

int chakra_plot_file(const char *in_path, const char *out_path, chakra_plot_kind *kind, chakra_error *err) {
  FILE *f = strcmp(in_path, "-") == 0 ? stdin : fopen(in_path, "rb");
  if (!f) return chakra_error_set(err, CHAKRA_EIO, "%s: %s", in_path, strerror(errno));
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  int rc = buf ? 0 : oom(err);
  while (!rc) {
    if (len == cap) {
      char *p = cap < MAX_INPUT ? realloc(buf, cap *= 2) : NULL;
      if (!p) {
        rc = cap >= MAX_INPUT ? chakra_error_set(err, CHAKRA_EFORMAT, "%s: larger than 256 MiB", in_path) : oom(err);
        break;
      }
      buf = p;
    }
    size_t got = fread(buf + len, 1, cap - len, f);
    len += got;
    if (got == 0) {
      if (ferror(f)) rc = chakra_error_set(err, CHAKRA_EIO, "%s: read error", in_path);
      break;
    }
  }
  if (f != stdin) fclose(f);
  if (!rc) rc = chakra_plot_json(buf, len, in_path, out_path, kind, err);
  free(buf);
  return rc;
}
