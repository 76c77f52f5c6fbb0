/* svgplot.h - horizontal grouped bar charts as SVG (private to lib/analyze).
 *
 * Enough of a plotting library for reports: charts stacked vertically in one
 * SVG document, each a title, a group of bars per label (one bar per
 * series, coloured by series, with a legend), a value axis and the value at
 * the end of each bar. Every bar carries its exact number in data-value
 * (and data-label, data-series), so that a test, or a script, can read the
 * picture back. Text is XML-escaped; the document opens in any browser. */
#ifndef CHAKRA_SVGPLOT_H
#define CHAKRA_SVGPLOT_H

#include <stddef.h>

#include "chakra/error.h"

#define SVGPLOT_MAX_SERIES 4

typedef struct svgplot_group {
  char *label;                          /* malloc'd */
  double value[SVGPLOT_MAX_SERIES];
} svgplot_group;

typedef struct svgplot_chart {
  const char *title, *unit;             /* unit of the labels: "s", "B", "" */
  double display;                       /* label value = value * display (0 = 1) */
  const char *series[SVGPLOT_MAX_SERIES];
  size_t n_series;
  svgplot_group *groups;
  size_t n_groups, cap;
} svgplot_chart;

/* Adds a group (label copied); returns its values to fill, or NULL. */
double *svgplot_add(svgplot_chart *c, const char *label);
void svgplot_chart_free(svgplot_chart *c);

/* Writes the charts, one under the other, to path ("-" = stdout). Every
 * value must be finite and >= 0 (readers name the bad field first). */
int svgplot_write(const char *path, const char *title, const svgplot_chart *charts, size_t n, chakra_error *err);

#endif
