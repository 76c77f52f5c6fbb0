/* svgplot.c - the one SVG writer: bar, heat and gantt charts; see svgplot.h. */
#include "svgplot.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/textout.h"
#include "../util/vec.h"
#include "../util/xmltext.h"

enum { BAR_AREA = 560, BAR_H = 14, GAP = 8, TITLE_H = 30, AXIS_H = 40, LEGEND_H = 22, MARGIN = 10, MIN_WIDTH = 900 };
enum { HEAT_AREA = 560, LANE_H = 14, GANTT_AREA = 760 };

/* Colour-blind safe (Tol's bright scheme). */
static const char *const colours[SVGPLOT_MAX_SERIES] = {"#4477aa", "#ee6677", "#ccbb44", "#228833", "#66ccee",
                                                        "#aa3377"};

double *svgplot_add(svgplot_chart *c, const char *label) {
  if (VEC_ROOM(c->groups, c->n_groups, c->cap, 1)) return NULL;
  svgplot_group *g = &c->groups[c->n_groups];
  memset(g, 0, sizeof *g);
  if (!(g->label = strdup(label))) return NULL;
  c->n_groups++;
  return g->value;
}

/* Labels compared with runs of digits as numbers (leading zeros aside). */
static int natural_cmp(const char *a, const char *b) {
  while (*a && *b) {
    if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
      while (*a == '0') a++;
      while (*b == '0') b++;
      size_t la = 0, lb = 0;
      while (isdigit((unsigned char)a[la])) la++;
      while (isdigit((unsigned char)b[lb])) lb++;
      if (la != lb) return la < lb ? -1 : 1;
      int d = strncmp(a, b, la);
      if (d) return d;
      a += la, b += lb;
    } else {
      if (*a != *b) return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
      a++, b++;
    }
  }
  return *a ? 1 : *b ? -1 : 0;
}

static int group_cmp(const void *x, const void *y) {
  return natural_cmp(((const svgplot_group *)x)->label, ((const svgplot_group *)y)->label);
}

void svgplot_sort_groups(svgplot_chart *c) {
  if (c->n_groups > 1) qsort(c->groups, c->n_groups, sizeof *c->groups, group_cmp);
}

int svgplot_slice_add(svgplot_chart *c, uint32_t lane, uint32_t colour, double start, double end) {
  svgplot_slice *v = VEC_PUSH(c->slices, c->n_slices, c->slices_cap);
  if (!v) return -1;
  *v = (svgplot_slice){lane, colour, start, end};
  return 0;
}

void svgplot_chart_free(svgplot_chart *c) {
  for (size_t i = 0; i < c->n_groups; i++) free(c->groups[i].label);
  free(c->groups);
  free(c->slices);
  c->groups = NULL, c->slices = NULL;
  c->n_groups = c->cap = c->n_slices = c->slices_cap = 0;
}

/* ---- text ---- */

/* Width of s in pixels at font size px, on the generous side: a wide
 * sans-serif (DejaVu Sans, what renderers fall back to) takes 0.6-0.7 em
 * for lower case and capitals. */
static double text_w(const char *s, double px) {
  size_t chars = 0;
  for (; *s; s++) chars += ((unsigned char)*s & 0xc0) != 0x80;
  return (double)chars * px * 0.7;
}

static void text(jsonw *w, double x, double y, const char *anchor, const char *cls, const char *s) {
  textout_printf(w, "<text x=\"%.1f\" y=\"%.1f\"", x, y);
  if (anchor) textout_printf(w, " text-anchor=\"%s\"", anchor);
  if (cls) textout_printf(w, " class=\"%s\"", cls);
  jsonw_char(w, '>');
  xmltext_put(w, s);
  jsonw_lit(w, "</text>\n");
}

/* "12.3 MB", "640 us": three significant digits and an SI prefix; beyond
 * the prefixes, three significant digits in exponent form (a value near
 * the largest double has 309 digits). */
static void human(double v, const char *unit, char *buf, size_t size) {
  static const char *const up[] = {"", "k", "M", "G", "T", "P"}, *const down[] = {"", "m", "\xc2\xb5", "n", "p"};
  if (strcmp(unit, "%") == 0) { /* shares: no prefixes */
    snprintf(buf, size, "%.*f%%", v != 0 && v < 1 ? 2 : 1, v);
    return;
  }
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

/* ---- value axes ---- */

typedef struct axis_end {
  double max;  /* the axis's end */
  int ticks;   /* intervals */
} axis_end;

/* The first of m x 10^k at or above max, with a tick count that makes
 * round steps: consecutive ends are at most 20% apart, so the axis ends
 * at most 20% beyond the data. */
static axis_end nice_end(double max) {
  static const struct {
    double m;
    int ticks;
  } steps[] = {{1, 5},   {1.2, 6}, {1.4, 7}, {1.6, 4}, {1.8, 6}, {2, 4}, {2.4, 6}, {2.5, 5}, {3, 6},
               {3.5, 7}, {4, 4},   {4.5, 3}, {5, 5},   {6, 6},   {7, 7}, {8, 4},   {9, 3},   {10, 5}};
  if (max <= 0) return (axis_end){1, 4};
  double p = pow(10, floor(log10(max)));
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
    double m = steps[i].m * p;
    if (m >= max * (1 - 1e-12)) return (axis_end){isfinite(m) ? m : max, steps[i].ticks};
  }
  return (axis_end){max, 4};
}

/* Counts and bytes are whole: below 10, one tick per unit. */
static axis_end value_end(const svgplot_chart *c, double max) {
  int whole = !c->unit || !*c->unit || strcmp(c->unit, "B") == 0;
  if (whole && max <= 10) {
    double end = max < 1 ? 1 : ceil(max);
    return (axis_end){end, (int)end};
  }
  return nice_end(max);
}

static void axis(jsonw *w, double left, double area, double top, double y, axis_end e, const svgplot_chart *c) {
  double display = c->display ? c->display : 1;
  for (int t = 0; t <= e.ticks; t++) {
    double x = left + area * t / e.ticks;
    char lab[64];
    human(e.max * ((double)t / e.ticks) * display, c->unit, lab, sizeof lab); /* max * t may overflow */
    textout_printf(w, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", x, top, x, y);
    text(w, x, y + 14, "middle", "axis", lab);
  }
  if (c->axis && *c->axis) text(w, left + area / 2, y + 30, "middle", "axisname", c->axis); /* ticks carry units */
}

static void legend(jsonw *w, const svgplot_chart *c, double x, double y) {
  for (size_t s = 0; s < c->n_series; x += 30 + text_w(c->series[s], 11), s++) {
    textout_printf(w, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>", x, y, colours[s]);
    text(w, x + 16, y + 10, NULL, NULL, c->series[s]);
  }
}

static double legend_w(const svgplot_chart *c) {
  double x = 0;
  for (size_t s = 0; s < c->n_series; s++) x += 30 + text_w(c->series[s], 11);
  return x;
}

/* ---- bars ---- */

static double bar_total(const svgplot_chart *c, const svgplot_group *g) {
  double t = 0;
  for (size_t s = 0; s < c->n_series; s++) t = c->stacked ? t + g->value[s] : fmax(t, g->value[s]);
  return t;
}

static double bars_left(const svgplot_chart *c) {
  double l = 60;
  for (size_t g = 0; g < c->n_groups; g++) l = fmax(l, text_w(c->groups[g].label, 11) + 2 * MARGIN);
  return l;
}

static double bars_width(const svgplot_chart *c) {
  double right = 0, display = c->display ? c->display : 1;
  char val[64];
  for (size_t g = 0; g < c->n_groups; g++)
    for (size_t s = 0; s < c->n_series; s++) {
      human((c->stacked ? bar_total(c, &c->groups[g]) : c->groups[g].value[s]) * display, c->unit, val, sizeof val);
      right = fmax(right, text_w(val, 10) + 4);
    }
  return bars_left(c) + fmax(BAR_AREA + right, legend_w(c)) + 2 * MARGIN;
}

static double bars_height(const svgplot_chart *c) {
  double per = c->stacked ? BAR_H : (double)c->n_series * BAR_H;
  return TITLE_H + LEGEND_H + (double)c->n_groups * (per + GAP) + AXIS_H;
}

static void bar(jsonw *w, const svgplot_chart *c, const svgplot_group *g, size_t s, double x, double y, double scale) {
  char val[64];
  human(g->value[s] * (c->display ? c->display : 1), c->unit, val, sizeof val);
  textout_printf(w, "<rect class=\"bar\" x=\"%.4f\" y=\"%.1f\" width=\"%.4f\" height=\"%d\" fill=\"%s\" "
                    "data-value=\"%.17g\" data-label=\"",
                 x, y, g->value[s] * scale, BAR_H - 2, colours[s], g->value[s]);
  xmltext_put(w, g->label);
  jsonw_lit(w, "\" data-series=\"");
  xmltext_put(w, c->series[s]);
  jsonw_lit(w, "\"><title>");
  xmltext_put(w, c->series[s]);
  jsonw_lit(w, ": ");
  xmltext_put(w, val);
  jsonw_lit(w, "</title></rect>\n");
}

static double bars_chart(jsonw *w, const svgplot_chart *c, double y0) {
  double max = 0;
  for (size_t g = 0; g < c->n_groups; g++) max = fmax(max, bar_total(c, &c->groups[g]));
  axis_end e = value_end(c, max);
  double scale = BAR_AREA / e.max, left = bars_left(c), display = c->display ? c->display : 1;
  textout_printf(w, "<g class=\"chart\" data-kind=\"bars\" data-scale=\"%.17g\" data-axis-max=\"%.17g\">\n", scale,
                 e.max);
  text(w, MARGIN, y0 + 20, NULL, "title", c->title);
  legend(w, c, left, y0 + TITLE_H);
  double y = y0 + TITLE_H + LEGEND_H, top = y;
  axis(w, left, BAR_AREA, top, y0 + bars_height(c) - AXIS_H, e, c); /* the grid under the bars */
  for (size_t g = 0; g < c->n_groups; g++) {
    const svgplot_group *gr = &c->groups[g];
    double h = c->stacked ? BAR_H : (double)c->n_series * BAR_H, x = left;
    text(w, left - 6, y + h / 2 + 4, "end", NULL, gr->label);
    char val[64];
    for (size_t s = 0; s < c->n_series; s++) {
      bar(w, c, gr, s, x, y, scale);
      if (c->stacked) {
        x += gr->value[s] * scale;
        continue;
      }
      human(gr->value[s] * display, c->unit, val, sizeof val);
      text(w, left + gr->value[s] * scale + 4, y + BAR_H - 4, NULL, "value", val);
      y += BAR_H;
    }
    if (c->stacked) {
      human(bar_total(c, gr) * display, c->unit, val, sizeof val);
      text(w, x + 4, y + BAR_H - 4, NULL, "value", val);
      y += BAR_H;
    }
    y += GAP;
  }
  jsonw_lit(w, "</g>\n");
  return y + AXIS_H;
}

/* ---- heat ---- */

static double heat_cell(const svgplot_chart *c) {
  double cell = floor(HEAT_AREA / (double)(c->n ? c->n : 1));
  return cell < 2 ? 2 : cell > 40 ? 40 : cell;
}

/* Every how many rows a number is printed: 1, 2 or 5 x 10^k, at least
 * min_px apart. */
static uint32_t label_step(double cell, double min_px) {
  for (uint32_t p = 1;; p *= 10) {
    if (p * cell >= min_px) return p;
    if (2 * p * cell >= min_px) return 2 * p;
    if (5 * p * cell >= min_px) return 5 * p;
    if (p > UINT32_MAX / 100) return p * 10;
  }
}

static double heat_left(const svgplot_chart *c) {
  char lab[32];
  snprintf(lab, sizeof lab, "%u", c->n * (c->per ? c->per : 1));
  return 2 * MARGIN + 20 + text_w(lab, 10);
}

static double heat_width(const svgplot_chart *c) {
  return heat_left(c) + heat_cell(c) * c->n + 2 * MARGIN + 120;
}

static double heat_height(const svgplot_chart *c) { return TITLE_H + 20 + heat_cell(c) * c->n + 50; }

/* YlOrRd: light yellow (idle) to dark red (always busy). */
static void heat_colour(double v, char out[8]) {
  static const unsigned char stops[5][3] = {{255, 255, 204}, {254, 217, 118}, {253, 141, 60}, {227, 26, 28},
                                            {128, 0, 38}};
  double x = (v < 0 ? 0 : v > 1 ? 1 : v) * 4;
  int i = x >= 4 ? 3 : (int)x;
  double f = x - i;
  unsigned char rgb[3];
  for (int k = 0; k < 3; k++) rgb[k] = (unsigned char)lround(stops[i][k] + f * (stops[i + 1][k] - stops[i][k]));
  snprintf(out, 8, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

static void heat_labels(jsonw *w, const svgplot_chart *c, double left, double top, double cell) {
  uint32_t per = c->per ? c->per : 1, rs = label_step(cell, 12), cs = label_step(cell, 14 + text_w("0000", 10));
  char lab[32];
  for (uint32_t i = 0; i < c->n; i += rs) {
    snprintf(lab, sizeof lab, "%u", i * per);
    text(w, left - 4, top + cell * i + cell / 2 + 3.5, "end", "axis", lab);
  }
  for (uint32_t j = 0; j < c->n; j += cs) {
    snprintf(lab, sizeof lab, "%u", j * per);
    text(w, left + cell * j + cell / 2, top - 4, "middle", "axis", lab);
  }
  double bottom = top + cell * c->n;
  text(w, left + cell * c->n / 2, bottom + 18, "middle", "axisname", c->cols ? c->cols : "");
  textout_printf(w, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" class=\"axisname\" "
                    "transform=\"rotate(-90 %.1f %.1f)\">", MARGIN + 10.0, top + cell * c->n / 2, MARGIN + 10.0,
                 top + cell * c->n / 2);
  xmltext_put(w, c->rows ? c->rows : "");
  jsonw_lit(w, "</text>\n");
}

static void heat_scale(jsonw *w, double x, double top) {
  char col[8];
  for (int i = 0; i < 10; i++) {
    heat_colour((9 - i) / 9.0, col);
    textout_printf(w, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"14\" fill=\"%s\"/>\n", x, top + 14.0 * i, col);
  }
  text(w, x + 18, top + 10, NULL, "axis", "100% busy");
  text(w, x + 18, top + 14 * 10 - 3, NULL, "axis", "idle");
}

static double heat_chart(jsonw *w, const svgplot_chart *c, double y0) {
  double cell = heat_cell(c), left = heat_left(c), top = y0 + TITLE_H + 20;
  uint32_t per = c->per ? c->per : 1;
  textout_printf(w, "<g class=\"chart\" data-kind=\"heat\" data-n=\"%u\" data-per=\"%u\">\n", c->n, per);
  text(w, MARGIN, y0 + 20, NULL, "title", c->title);
  textout_printf(w, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#f4f4f4\"/>\n", left, top,
                 cell * c->n, cell * c->n);
  char col[8];
  for (uint32_t i = 0; i < c->n; i++)
    for (uint32_t j = 0; j < c->n; j++) {
      double v = c->cells[(size_t)i * c->n + j];
      if (v < 0) continue;
      heat_colour(v, col);
      textout_printf(w, "<rect class=\"cell\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
                        "data-row=\"%u\" data-col=\"%u\" data-value=\"%.17g\"><title>%u \xe2\x86\x92 %u: %.1f%%</title>"
                        "</rect>\n", left + cell * j, top + cell * i, cell, cell, col, i * per, j * per, v, i * per,
                     j * per, 100 * v);
    }
  heat_labels(w, c, left, top, cell);
  heat_scale(w, left + cell * c->n + 2 * MARGIN, top);
  jsonw_lit(w, "</g>\n");
  return y0 + heat_height(c);
}

/* ---- gantt ---- */

static double gantt_left(const svgplot_chart *c) { return bars_left(c); }
static double gantt_width(const svgplot_chart *c) {
  return gantt_left(c) + fmax(GANTT_AREA, legend_w(c)) + 2 * MARGIN + 30;
}
static double gantt_height(const svgplot_chart *c) {
  return TITLE_H + LEGEND_H + (double)c->n_groups * LANE_H + 8 + AXIS_H;
}

static int slice_cmp(const void *x, const void *y) {
  const svgplot_slice *a = x, *b = y;
  if (a->lane != b->lane) return a->lane < b->lane ? -1 : 1;
  return a->start < b->start ? -1 : a->start > b->start;
}

static void gantt_rect(jsonw *w, double left, double top, double scale, const svgplot_slice *s, size_t count) {
  double x = left + s->start * scale, wd = fmax((s->end - s->start) * scale, 0.5);
  textout_printf(w, "<rect class=\"slice\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"%s\" "
                    "data-lane=\"%u\" data-start=\"%.17g\" data-end=\"%.17g\" data-count=\"%zu\"/>\n", x,
                 top + (double)s->lane * LANE_H, wd, LANE_H - 3, colours[s->colour % SVGPLOT_MAX_SERIES], s->lane,
                 s->start, s->end, count);
}

/* Slices sorted by lane and start; those of a lane and colour that meet
 * within a pixel are drawn as one rectangle (a million nodes stay a
 * document a browser opens). */
static void gantt_slices(jsonw *w, const svgplot_chart *c, svgplot_slice *v, double left, double top, double scale) {
  qsort(v, c->n_slices, sizeof *v, slice_cmp);
  for (size_t i = 0; i < c->n_slices;) {
    svgplot_slice cur = v[i];
    size_t count = 1;
    for (i++; i < c->n_slices && v[i].lane == cur.lane && v[i].colour == cur.colour &&
              (v[i].start - cur.end) * scale < 1;
         i++, count++)
      if (v[i].end > cur.end) cur.end = v[i].end;
    gantt_rect(w, left, top, scale, &cur, count);
  }
}

static double gantt_chart(jsonw *w, const svgplot_chart *c, double y0, chakra_error *err, int *rc) {
  double end = 0;
  for (size_t i = 0; i < c->n_slices; i++) end = fmax(end, c->slices[i].end);
  axis_end e = nice_end(end);
  double left = gantt_left(c), scale = GANTT_AREA / e.max, top = y0 + TITLE_H + LEGEND_H;
  textout_printf(w, "<g class=\"chart\" data-kind=\"gantt\" data-scale=\"%.17g\" data-axis-max=\"%.17g\">\n", scale,
                 e.max);
  text(w, MARGIN, y0 + 20, NULL, "title", c->title);
  legend(w, c, left, y0 + TITLE_H);
  for (size_t g = 0; g < c->n_groups; g++) {
    if (g % 2 == 0)
      textout_printf(w, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%d\" fill=\"#f6f6f6\"/>\n", left,
                     top + (double)g * LANE_H - 1, GANTT_AREA, LANE_H);
    text(w, left - 6, top + (double)g * LANE_H + LANE_H - 4, "end", NULL, c->groups[g].label);
  }
  double y = top + (double)c->n_groups * LANE_H + 8;
  axis(w, left, GANTT_AREA, top, y, e, c);
  svgplot_slice *v = malloc((c->n_slices ? c->n_slices : 1) * sizeof *v);
  if (!v) *rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  else {
    memcpy(v, c->slices, c->n_slices * sizeof *v);
    gantt_slices(w, c, v, left, top, scale);
    free(v);
  }
  jsonw_lit(w, "</g>\n");
  return y + AXIS_H;
}

/* ---- the document ---- */

static double chart_width(const svgplot_chart *c) {
  return c->kind == SVGPLOT_HEAT ? heat_width(c) : c->kind == SVGPLOT_GANTT ? gantt_width(c) : bars_width(c);
}

static double chart_height(const svgplot_chart *c) {
  double h = c->kind == SVGPLOT_HEAT ? heat_height(c) : c->kind == SVGPLOT_GANTT ? gantt_height(c) : bars_height(c);
  return h + MARGIN;
}

static int check_values(const svgplot_chart *charts, size_t n, chakra_error *err) {
  for (size_t i = 0; i < n; i++) {
    const svgplot_chart *c = &charts[i];
    for (size_t g = 0; c->kind == SVGPLOT_BARS && g < c->n_groups; g++)
      for (size_t s = 0; s < c->n_series; s++)
        if (!isfinite(c->groups[g].value[s]) || c->groups[g].value[s] < 0)
          return chakra_error_set(err, CHAKRA_EINVAL, "chart %zu, bar %zu: values must be finite and >= 0 to be drawn",
                                  i, g);
    for (size_t s = 0; c->kind == SVGPLOT_GANTT && s < c->n_slices; s++)
      if (!isfinite(c->slices[s].start) || !isfinite(c->slices[s].end) || c->slices[s].start < 0 ||
          c->slices[s].end < c->slices[s].start || c->slices[s].lane >= c->n_groups)
        return chakra_error_set(err, CHAKRA_EINVAL, "chart %zu, slice %zu: a slice must lie on a lane, from a "
                                "finite start >= 0 to an end no earlier", i, s);
  }
  return 0;
}

int svgplot_write(const char *path, const char *title, const svgplot_chart *charts, size_t n, chakra_error *err) {
  int rc = check_values(charts, n, err);
  if (rc) return rc;
  double height = 40, width = fmax(MIN_WIDTH, text_w(title, 16) + 2 * MARGIN);
  for (size_t i = 0; i < n; i++) {
    height += chart_height(&charts[i]);
    width = fmax(width, fmax(chart_width(&charts[i]), text_w(charts[i].title, 14) + 2 * MARGIN));
  }
  textout t;
  rc = textout_open(&t, path, err);
  if (rc) return rc;
  jsonw *w = &t.w;
  textout_printf(w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
          "font-family=\"Helvetica, Arial, sans-serif\" font-size=\"11\">\n"
          "<style>.title{font-size:14px;font-weight:bold}.axis{fill:#666;font-size:10px}"
          ".axisname{fill:#333;font-size:11px}.value{fill:#333;font-size:10px}</style>\n"
          "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
          "<text x=\"10\" y=\"24\" font-size=\"16\" font-weight=\"bold\">", ceil(width), height, ceil(width), height);
  xmltext_put(w, title);
  jsonw_lit(w, "</text>\n");
  double y = 40;
  for (size_t i = 0; i < n && !rc; i++) {
    const svgplot_chart *c = &charts[i];
    y = (c->kind == SVGPLOT_HEAT ? heat_chart(w, c, y) : c->kind == SVGPLOT_GANTT ? gantt_chart(w, c, y, err, &rc)
                                                                                   : bars_chart(w, c, y)) + MARGIN;
  }
  jsonw_lit(w, "</svg>\n");
  return textout_close(&t, rc, err);
}
