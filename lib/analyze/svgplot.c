/* svgplot.c - SVG bar charts; see svgplot.h. */
#include "svgplot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/xmltext.h"
#include "textout.h"
#include "../util/vec.h"

enum { WIDTH = 900, LEFT = 200, BAR_AREA = 560, BAR_H = 14, GAP = 8, TITLE_H = 30, AXIS_H = 28, LEGEND_H = 22 };

static const char *const colours[SVGPLOT_MAX_SERIES] = {"#4e79a7", "#e15759", "#f28e2b", "#59a14f"};

double *svgplot_add(svgplot_chart *c, const char *label) {
  if (VEC_ROOM(c->groups, c->n_groups, c->cap, 1)) return NULL;
  svgplot_group *g = &c->groups[c->n_groups];
  memset(g, 0, sizeof *g);
  if (!(g->label = strdup(label))) return NULL;
  c->n_groups++;
  return g->value;
}

void svgplot_chart_free(svgplot_chart *c) {
  for (size_t i = 0; i < c->n_groups; i++) free(c->groups[i].label);
  free(c->groups);
  c->groups = NULL;
  c->n_groups = c->cap = 0;
}

/* "12.3 MB", "640 us": three significant digits and an SI prefix; beyond
 * the prefixes, three significant digits in exponent form (a value near
 * the largest double has 309 digits). */
static void human(double v, const char *unit, char *buf, size_t size) {
  static const char *const up[] = {"", "k", "M", "G", "T", "P"}, *const down[] = {"", "m", "\xc2\xb5", "n", "p"};
  const char *pre = "";
  int p = 0, exact = v == floor(v) && (fabs(v) < 1000 || !unit[0]);
  if (exact && !unit[0] && fabs(v) < 1e15) {
    snprintf(buf, size, "%.0f", v); /* counts are shown whole */
    return;
  }
  while (fabs(v) >= 1000 && p < 5) v /= 1000, pre = up[++p];
  while (v != 0 && fabs(v) < 1 && p > -4) v *= 1000, pre = down[-(--p)];
  if (fabs(v) >= 1000) snprintf(buf, size, "%.3g %s%s", v, pre, unit);
  else snprintf(buf, size, "%.*f %s%s", exact ? 0 : fabs(v) < 10 ? 2 : fabs(v) < 100 ? 1 : 0, v, pre, unit);
}

/* An axis maximum of 1, 2 or 5 times a power of ten at or above max, or
 * max itself where that would overflow a double. */
static double nice_max(double max) {
  if (max <= 0) return 1;
  double p = pow(10, floor(log10(max)));
  for (int i = 0; i < 4; i++) {
    double m = (i == 0 ? 1 : i == 1 ? 2 : i == 2 ? 5 : 10) * p;
    if (m >= max) return isfinite(m) ? m : max;
  }
  return max;
}

static double chart_height(const svgplot_chart *c) {
  return TITLE_H + LEGEND_H + (double)c->n_groups * ((double)c->n_series * BAR_H + GAP) + AXIS_H;
}

static void axis(jsonw *w, double y, double top, double max, const char *unit, double display) {
  for (int t = 0; t <= 4; t++) {
    double x = LEFT + BAR_AREA * t / 4.0;
    char lab[64];
    human(max / 4 * t * display, unit, lab, sizeof lab); /* max * t may overflow */
    textout_printf(w, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", x, top, x, y);
    textout_printf(w, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" class=\"axis\">", x, y + 14);
    xmltext_put(w, lab);
    jsonw_lit(w, "</text>\n");
  }
}

static double chart(jsonw *w, const svgplot_chart *c, double y0) {
  double max = 0;
  for (size_t g = 0; g < c->n_groups; g++)
    for (size_t s = 0; s < c->n_series; s++)
      if (c->groups[g].value[s] > max) max = c->groups[g].value[s];
  double top_val = nice_max(max), scale = BAR_AREA / top_val, display = c->display ? c->display : 1;
  textout_printf(w, "<g class=\"chart\" data-scale=\"%.17g\">\n<text x=\"10\" y=\"%.1f\" class=\"title\">", scale, y0 + 20);
  xmltext_put(w, c->title);
  jsonw_lit(w, "</text>\n");
  double y = y0 + TITLE_H;
  double x = LEFT;
  for (size_t s = 0; s < c->n_series; x += 30 + 7.0 * (double)strlen(c->series[s]), s++) {
    textout_printf(w, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\">", x, y,
        colours[s], x + 16, y + 10);
    xmltext_put(w, c->series[s]);
    jsonw_lit(w, "</text>\n");
  }
  y += LEGEND_H;
  double top = y;
  for (size_t g = 0; g < c->n_groups; g++) {
    const svgplot_group *gr = &c->groups[g];
    textout_printf(w, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", LEFT - 6, y + (double)c->n_series * BAR_H / 2 + 4);
    xmltext_put(w, gr->label);
    jsonw_lit(w, "</text>\n");
    for (size_t s = 0; s < c->n_series; s++, y += BAR_H) {
      char val[64];
      human(gr->value[s] * display, c->unit, val, sizeof val);
      textout_printf(w, "<rect class=\"bar\" x=\"%d\" y=\"%.1f\" width=\"%.4f\" height=\"%d\" fill=\"%s\" data-value=\"%.17g\" "
             "data-label=\"", LEFT, y, gr->value[s] * scale, BAR_H - 2, colours[s], gr->value[s]);
      xmltext_put(w, gr->label);
      jsonw_lit(w, "\" data-series=\"");
      xmltext_put(w, c->series[s]);
      jsonw_lit(w, "\"><title>");
      xmltext_put(w, val);
      textout_printf(w, "</title></rect>\n<text x=\"%.1f\" y=\"%.1f\" class=\"value\">", LEFT + gr->value[s] * scale + 4,
          y + BAR_H - 4);
      xmltext_put(w, val);
      jsonw_lit(w, "</text>\n");
    }
    y += GAP;
  }
  axis(w, y, top, top_val, c->unit, display);
  jsonw_lit(w, "</g>\n");
  return y + AXIS_H;
}

int svgplot_write(const char *path, const char *title, const svgplot_chart *charts, size_t n, chakra_error *err) {
  for (size_t i = 0; i < n; i++)
    for (size_t g = 0; g < charts[i].n_groups; g++)
      for (size_t s = 0; s < charts[i].n_series; s++)
        if (!isfinite(charts[i].groups[g].value[s]) || charts[i].groups[g].value[s] < 0)
          return chakra_error_set(err, CHAKRA_EINVAL, "chart %zu, bar %zu: values must be finite and >= 0 to be drawn",
                                  i, g);
  double height = 40;
  for (size_t i = 0; i < n; i++) height += chart_height(&charts[i]) + 10;
  textout t;
  int rc = textout_open(&t, path, err);
  if (rc) return rc;
  jsonw *w = &t.w;
  textout_printf(w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\" "
          "font-family=\"Helvetica, Arial, sans-serif\" font-size=\"11\">\n"
          "<style>.title{font-size:14px;font-weight:bold}.axis{fill:#666;font-size:10px}"
          ".value{fill:#333;font-size:10px}</style>\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
          "<text x=\"10\" y=\"24\" font-size=\"16\" font-weight=\"bold\">", WIDTH, height, WIDTH, height);
  xmltext_put(w, title);
  jsonw_lit(w, "</text>\n");
  double y = 40;
  for (size_t i = 0; i < n; i++) y = chart(w, &charts[i], y) + 10;
  jsonw_lit(w, "</svg>\n");
  return textout_close(&t, 0, err);
}
