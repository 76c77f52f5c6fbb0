/* svgplot.h - the one SVG writer (private to libchakra): charts stacked
 * vertically in one document, drawn by plot, compare and timelines.
 *
 * Three kinds of chart, each with a title:
 * - bars: a group of bars per label (one bar per series, or the series end
 *   to end in one bar when stacked), a legend, a value axis whose end is
 *   the first of 1, 1.2, 1.4, ... 9 x 10^k (steps at most 20% apart) at
 *   or above the largest bar, ticks in the unit and the axis's name under
 *   it, the value at the end of each bar;
 * - heat: a square matrix of cells (rows and columns numbered, one cell
 *   per pair, or per block of pairs), coloured by a value from 0 to 1, with
 *   a colour scale;
 * - gantt: named lanes of slices on a time axis (slices closer than a
 *   pixel are drawn as one).
 * The document is as wide as its widest label needs, so no text is cut
 * off. Every bar, cell and slice carries its exact numbers in data-
 * attributes, so a test or a script can read the picture back. Text is
 * XML-escaped; the document opens in any browser and renders without one
 * (rsvg-convert). */
#ifndef CHAKRA_SVGPLOT_H
#define CHAKRA_SVGPLOT_H

#include <stddef.h>
#include <stdint.h>

#include "chakra/error.h"

#define SVGPLOT_MAX_SERIES 6

enum { SVGPLOT_BARS, SVGPLOT_HEAT, SVGPLOT_GANTT };

typedef struct svgplot_group {
  char *label;                          /* malloc'd */
  double value[SVGPLOT_MAX_SERIES];
} svgplot_group;

typedef struct svgplot_slice {
  uint32_t lane, colour;                /* colour: an index into the series */
  double start, end;                    /* in the axis's units before display */
} svgplot_slice;

typedef struct svgplot_chart {
  int kind;                             /* SVGPLOT_* (BARS when zeroed) */
  const char *title;
  const char *axis;                     /* the value (bars) or time (gantt) axis: "time", "bytes" */
  const char *unit;                     /* unit of the labels: "s", "B", "" */
  double display;                       /* label value = value * display (0 = 1) */
  const char *series[SVGPLOT_MAX_SERIES];
  size_t n_series;
  int stacked;                          /* bars: the series end to end */
  svgplot_group *groups;                /* bars: one per label; gantt: one per lane (values unused) */
  size_t n_groups, cap;
  /* heat: n x n values from 0 to 1 (row-major, row = first index), below 0
   * where there is nothing; each row and column stands for `per` items
   * numbered from 0; rows and cols name what they are ("source NPU"). */
  uint32_t n, per;
  double *cells;
  const char *rows, *cols;
  /* gantt */
  svgplot_slice *slices;
  size_t n_slices, slices_cap;
} svgplot_chart;

/* Adds a group (label copied); returns its values to fill, or NULL. */
double *svgplot_add(svgplot_chart *c, const char *label);
/* Puts the groups in the order of their labels, numbers within them
 * compared as numbers ("rank 2" before "rank 10", "8" before "16"). */
void svgplot_sort_groups(svgplot_chart *c);
/* Adds a slice of a gantt chart; -1 when out of memory. */
int svgplot_slice_add(svgplot_chart *c, uint32_t lane, uint32_t colour, double start, double end);
void svgplot_chart_free(svgplot_chart *c);

/* Writes the charts, one under the other, to path ("-" = stdout). Every
 * value must be finite and >= 0 (readers name the bad field first). */
int svgplot_write(const char *path, const char *title, const svgplot_chart *charts, size_t n, chakra_error *err);

#endif
