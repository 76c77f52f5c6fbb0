/* plotkinds.c - sweep tables and link reports as pictures; see plotkinds.h. */
#include "plotkinds.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../report/reportjson.h"
#include "../report/svgplot.h"
#include "../util/strbuf.h"

#define get reportjson_get
#define HEAT_MAX 128   /* cells per side; more devices share a cell */
#define BUSIEST 12

static int oom(chakra_error *err) { return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory"); }

static int is_list(yajl_val v) { return YAJL_IS_ARRAY(v); }

int plotkinds_is_sweep(yajl_val doc) { return is_list(get(doc, "vary")) && is_list(get(doc, "rows")); }
int plotkinds_is_links(yajl_val doc) { return is_list(get(doc, "links")) && YAJL_IS_NUMBER(get(doc, "devices")); }

/* ---- sweep ---- */

/* "bandwidth=50, latency=500" from a row's config, and its status when
 * not ok; NULL when out of memory. */
static char *row_label(yajl_val row) {
  yajl_val cfg = get(row, "config"), st = get(row, "status");
  strbuf b = {0};
  for (size_t i = 0; YAJL_IS_OBJECT(cfg) && i < YAJL_GET_OBJECT(cfg)->len; i++) {
    yajl_val v = YAJL_GET_OBJECT(cfg)->values[i];
    if (i) strbuf_puts(&b, ", ");
    strbuf_puts(&b, YAJL_GET_OBJECT(cfg)->keys[i]);
    strbuf_puts(&b, "=");
    strbuf_puts(&b, YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : "?");
  }
  if (!b.n) strbuf_puts(&b, "(no axis)");
  const char *status = YAJL_IS_STRING(st) ? YAJL_GET_STRING(st) : NULL;
  if (status && strcmp(status, "ok") != 0) {
    strbuf_puts(&b, " (");
    strbuf_puts(&b, status);
    strbuf_puts(&b, ")");
  }
  if (!strbuf_cstr(&b)) strbuf_free(&b);
  return b.s;
}

static int sweep_row(yajl_val row, size_t i, const char *name, svgplot_chart *c, chakra_error *err) {
  char *label = row_label(row), where[48];
  if (!label) return oom(err);
  double *v = svgplot_add(c, label);
  free(label);
  if (!v) return oom(err);
  snprintf(where, sizeof where, "rows[%zu]", i);
  static const char *const keys[] = {"max_finish_ns", "mean_exposed_comm_ns", "mean_compute_ns"};
  int rc = 0;
  for (int k = 0; k < 3 && !rc; k++) rc = reportjson_field(row, keys[k], name, where, &v[k], err);
  return rc;
}

int plotkinds_sweep(yajl_val doc, const char *name, const char *out_path, chakra_error *err) {
  yajl_val rows = get(doc, "rows");
  svgplot_chart c = {.title = "Each configuration of the sweep: iteration time (slowest rank), mean exposed "
                              "communication, mean GPU compute",
                     .axis = "time", .unit = "s", .display = 1e-9,
                     .series = {"iteration time", "mean exposed communication", "mean GPU compute"}, .n_series = 3};
  int rc = 0;
  for (size_t i = 0; !rc && i < YAJL_GET_ARRAY(rows)->len; i++) {
    yajl_val row = YAJL_GET_ARRAY(rows)->values[i];
    if (!YAJL_IS_OBJECT(row))
      rc = chakra_error_set(err, CHAKRA_EFORMAT, "%s: rows[%zu]: expected an object (a row of chakra sweep)", name, i);
    else rc = sweep_row(row, i, name, &c, err);
  }
  svgplot_sort_groups(&c);
  char *title = NULL;
  if (!rc && asprintf(&title, "chakra sweep: %s", name) < 0) title = NULL, rc = oom(err);
  if (!rc) rc = svgplot_write(out_path, title, &c, 1, err);
  free(title);
  svgplot_chart_free(&c);
  return rc;
}

/* ---- link report ---- */

typedef struct link_row {
  double src, dst, dim, util;
} link_row;

static int link_read(yajl_val v, size_t i, double devices, const char *name, link_row *out, chakra_error *err) {
  char where[48];
  snprintf(where, sizeof where, "links[%zu]", i);
  if (!YAJL_IS_OBJECT(v))
    return chakra_error_set(err, CHAKRA_EFORMAT, "%s: %s: expected an object (a link of chakra sim --link-report)",
                            name, where);
  int rc = reportjson_field(v, "src", name, where, &out->src, err);
  if (!rc) rc = reportjson_field(v, "dst", name, where, &out->dst, err);
  if (!rc) rc = reportjson_field(v, "dim", name, where, &out->dim, err);
  if (!rc) rc = reportjson_field(v, "utilisation", name, where, &out->util, err);
  if (!rc && (out->src >= devices || out->dst >= devices || out->src != floor(out->src) || out->dst != floor(out->dst)))
    rc = chakra_error_set(err, CHAKRA_EFORMAT, "%s: %s: src and dst must be device numbers below devices (%.0f)",
                          name, where, devices);
  if (!rc && out->util > 1) out->util = 1; /* rounding of busy / makespan */
  return rc;
}

/* Busiest first; ties in order of source, then destination. */
static int util_cmp(const void *a, const void *b) {
  const link_row *x = a, *y = b;
  if (x->util != y->util) return x->util > y->util ? -1 : 1;
  if (x->src != y->src) return x->src < y->src ? -1 : 1;
  return x->dst < y->dst ? -1 : x->dst > y->dst;
}

static int link_bars(link_row *v, size_t n, svgplot_chart *busiest, svgplot_chart *dims, chakra_error *err) {
  double sum[64] = {0}, count[64] = {0};
  for (size_t i = 0; i < n; i++)
    if (v[i].dim < 64) sum[(int)v[i].dim] += v[i].util, count[(int)v[i].dim]++;
  for (int d = 0; d < 64; d++) {
    if (!count[d]) continue;
    char label[32];
    snprintf(label, sizeof label, "dimension %d", d);
    double *x = svgplot_add(dims, label);
    if (!x) return oom(err);
    x[0] = sum[d] / count[d];
  }
  qsort(v, n, sizeof *v, util_cmp);
  for (size_t i = 0; i < n && i < BUSIEST; i++) {
    char label[96];
    snprintf(label, sizeof label, "%.0f \xe2\x86\x92 %.0f (dimension %.0f)", v[i].src, v[i].dst, v[i].dim);
    double *x = svgplot_add(busiest, label);
    if (!x) return oom(err);
    x[0] = v[i].util;
  }
  return 0;
}

static int link_charts(yajl_val doc, const char *name, svgplot_chart *c, link_row *v, chakra_error *err) {
  yajl_val links = get(doc, "links");
  double devices = 0;
  int rc = reportjson_amount(get(doc, "devices"), name, "devices", &devices, err);
  if (!rc && (devices < 1 || devices > 1e6 || devices != floor(devices)))
    rc = chakra_error_set(err, CHAKRA_EFORMAT, "%s: devices: expected a whole number from 1 to 1000000", name);
  if (rc) return rc;
  uint32_t per = (uint32_t)ceil(devices / HEAT_MAX), m = (uint32_t)ceil(devices / per);
  c[0].n = m, c[0].per = per;
  if (!(c[0].cells = malloc((size_t)m * m * sizeof *c[0].cells))) return oom(err);
  for (size_t i = 0; i < (size_t)m * m; i++) c[0].cells[i] = -1;
  size_t n = YAJL_GET_ARRAY(links)->len;
  for (size_t i = 0; !rc && i < n; i++) {
    rc = link_read(YAJL_GET_ARRAY(links)->values[i], i, devices, name, &v[i], err);
    double *cell = rc ? NULL : &c[0].cells[(size_t)(v[i].src / per) * m + (size_t)(v[i].dst / per)];
    if (cell && v[i].util > *cell) *cell = v[i].util;
  }
  return rc ? rc : link_bars(v, n, &c[1], &c[2], err);
}

int plotkinds_links(yajl_val doc, const char *name, const char *out_path, chakra_error *err) {
  svgplot_chart c[3] = {
      {.kind = SVGPLOT_HEAT, .title = "Link utilisation: busy time over the makespan, per link (source row, "
                                      "destination column; devices past the NPUs are switches)",
       .rows = "source device", .cols = "destination device"},
      {.title = "The busiest links", .axis = "utilisation", .unit = "%", .display = 100, .series = {"utilisation"},
       .n_series = 1},
      {.title = "Mean utilisation per dimension", .axis = "utilisation", .unit = "%", .display = 100,
       .series = {"utilisation"}, .n_series = 1}};
  size_t n = YAJL_GET_ARRAY(get(doc, "links"))->len;
  link_row *v = malloc((n ? n : 1) * sizeof *v);
  int rc = v ? link_charts(doc, name, c, v, err) : oom(err);
  char *title = NULL;
  if (!rc && asprintf(&title, "chakra sim --link-report: %s", name) < 0) title = NULL, rc = oom(err);
  if (!rc) rc = svgplot_write(out_path, title, c, 3, err);
  free(title);
  free(v);
  free(c[0].cells);
  for (int i = 0; i < 3; i++) svgplot_chart_free(&c[i]);
  return rc;
}
