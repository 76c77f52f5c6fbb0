/* board.c - `chakra suite board`: one self-contained HTML page (inline CSS,
 * inline SVG bar charts, a few lines of inline script to sort tables; no
 * network access), with the overall table, one table and chart per class,
 * and every result's configuration (division, versions, rules, declared
 * quantities, the system and network files) under an anchor the tables
 * link to. Every number a cell shows is also in its data-v attribute,
 * exactly, for sorting and for tests. */
#include "chakra/suite.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/textout.h"
#include "../util/xmltext.h"

static const char style[] =
    "<style>\n"
    "body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1200px}\n"
    "h1{font-size:1.6em}h2{font-size:1.25em;margin-top:2em;border-bottom:1px solid #ccc}\n"
    "table{border-collapse:collapse;margin:.5em 0}th,td{padding:.25em .7em;border:1px solid #ddd;text-align:right}\n"
    "th{background:#f3f5f8;cursor:pointer;user-select:none}th:first-child,td:first-child{text-align:left}\n"
    "td.name,th.name{text-align:left}tr:nth-child(even) td{background:#fafbfc}\n"
    "pre{background:#f6f8fa;padding:.7em;overflow:auto;font-size:.85em}\n"
    ".note{color:#555;font-size:.9em}.closed{color:#1a7f37}.open{color:#9a6700}\n"
    "svg text{font-family:system-ui,sans-serif;font-size:12px}\n"
    "</style>\n";

/* Sorts a table by the clicked column: numbers by data-v, else by text. */
static const char script[] =
    "<script>\n"
    "document.querySelectorAll('table.sortable th').forEach(function(th){th.addEventListener('click',function(){\n"
    " var t=th.closest('table'),b=t.tBodies[0],i=Array.prototype.indexOf.call(th.parentNode.children,th);\n"
    " var up=th.dataset.dir!=='desc';th.dataset.dir=up?'desc':'asc';\n"
    " var rows=Array.prototype.slice.call(b.rows);\n"
    " rows.sort(function(x,y){var a=x.cells[i],c=y.cells[i];\n"
    "  var u=a.dataset.v,w=c.dataset.v;var r=(u!==undefined&&w!==undefined)?parseFloat(u)-parseFloat(w):\n"
    "  a.textContent.localeCompare(c.textContent);return up?-r:r;});\n"
    " rows.forEach(function(r){b.appendChild(r);});});});\n"
    "</script>\n";

static double board_axis_max(const double *scores, size_t n) {
  double best = 1.5;
  for (size_t i = 0; i < n; i++)
    if (scores[i] > best) best = scores[i];
  return ceil(best * 2) / 2;
}

static void lit(jsonw *j, const char *s) { jsonw_lit(j, s); }

static void fmt(jsonw *j, const char *f, double v) {
  char buf[256];
  snprintf(buf, sizeof buf, f, v);
  jsonw_lit(j, buf);
}

/* A score cell: 4 decimals shown, the exact value in data-v; "-" when none. */
static void score_cell(jsonw *j, double v) {
  if (v <= 0) {
    lit(j, "<td data-v=\"0\">-</td>");
    return;
  }
  fmt(j, "<td data-v=\"%.17g\">", v);
  fmt(j, "%.4f</td>", v);
}

static void name_cell(jsonw *j, const chakra_suite_result *r, size_t k) {
  fmt(j, "<td class=\"name\"><a href=\"#cfg-%.0f\">", (double)k);
  xmltext_put(j, r[k].name);
  lit(j, "</a></td>");
}

/* A horizontal bar chart of one score per result, the baseline's line at 1. */
static void bar_chart(jsonw *j, const chakra_suite_result *r, const double *v, size_t n, const char *title) {
  const double left = 170, width = 520, bar = 22;
  double max = board_axis_max(v, n), height = 40 + bar * (double)n;
  fmt(j, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"760\" height=\"%.0f\" role=\"img\">", height + 20);
  lit(j, "<title>");
  xmltext_put(j, title);
  lit(j, "</title>");
  for (size_t k = 0; k < n; k++) {
    double y = 10 + bar * (double)k, w = v[k] > 0 ? v[k] / max * width : 0;
    fmt(j, "<text x=\"%.1f\" ", left - 6);
    fmt(j, "y=\"%.1f\" text-anchor=\"end\">", y + 15);
    xmltext_put(j, r[k].name);
    lit(j, "</text>");
    fmt(j, "<rect x=\"%.1f\" ", left);
    fmt(j, "y=\"%.1f\" ", y + 3);
    fmt(j, "width=\"%.2f\" height=\"16\" fill=\"#4c78a8\"/>", w);
    fmt(j, "<text x=\"%.1f\" ", left + w + 4);
    fmt(j, "y=\"%.1f\">", y + 15);
    if (v[k] > 0) fmt(j, "%.3f", v[k]);
    else lit(j, "-");
    lit(j, "</text>");
  }
  double base = left + width / max, bottom = 10 + bar * (double)n;
  fmt(j, "<line x1=\"%.2f\" y1=\"6\" ", base);
  fmt(j, "x2=\"%.2f\" ", base);
  fmt(j, "y2=\"%.1f\" stroke=\"#d62728\" stroke-dasharray=\"4 3\"/>", bottom + 4);
  fmt(j, "<text x=\"%.2f\" ", base);
  fmt(j, "y=\"%.1f\" text-anchor=\"middle\">1 = baseline</text>", bottom + 18);
  lit(j, "</svg>\n");
}

static void overall_section(jsonw *j, const chakra_suite_score *s, const chakra_suite_result *r) {
  lit(j, "<h2 id=\"overall\">Overall</h2>\n");
  bar_chart(j, r, s->overall, s->n_results, "overall score");
  lit(j, "<table class=\"sortable\" id=\"table-overall\"><thead><tr><th class=\"name\">system</th>"
         "<th class=\"name\">division</th><th>overall</th>");
  for (size_t c = 0; c < s->n_classes; c++) {
    lit(j, "<th>");
    xmltext_put(j, s->classes[c]);
    lit(j, "</th>");
  }
  lit(j, "</tr></thead><tbody>\n");
  for (size_t k = 0; k < s->n_results; k++) {
    lit(j, "<tr>");
    name_cell(j, r, k);
    lit(j, "<td class=\"name ");
    xmltext_put(j, r[k].division);
    lit(j, "\">");
    xmltext_put(j, r[k].division);
    lit(j, "</td>");
    score_cell(j, s->overall[k]);
    for (size_t c = 0; c < s->n_classes; c++) score_cell(j, s->class_score[k * s->n_classes + c]);
    lit(j, "</tr>\n");
  }
  lit(j, "</tbody></table>\n");
}

static void class_section(jsonw *j, const chakra_suite_score *s, const chakra_suite_result *r, size_t c) {
  const chakra_suite_version *v = s->version;
  double *scores = calloc(s->n_results, sizeof *scores);
  if (!scores) {
    j->failed = 1;
    return;
  }
  for (size_t k = 0; k < s->n_results; k++) scores[k] = s->class_score[k * s->n_classes + c];
  lit(j, "<h2 id=\"class-");
  xmltext_put(j, s->classes[c]);
  lit(j, "\">Class ");
  xmltext_put(j, s->classes[c]);
  lit(j, "</h2>\n");
  bar_chart(j, r, scores, s->n_results, s->classes[c]);
  free(scores);
  lit(j, "<table class=\"sortable\" id=\"table-");
  xmltext_put(j, s->classes[c]);
  lit(j, "\"><thead><tr><th class=\"name\">system</th><th>score</th>");
  for (size_t w = 0; w < s->n_workloads; w++)
    if (strcmp(v->workloads[w].cls, s->classes[c]) == 0) {
      lit(j, "<th title=\"");
      xmltext_put(j, v->workloads[w].what);
      lit(j, "\">");
      xmltext_put(j, v->workloads[w].name);
      lit(j, "</th>");
    }
  lit(j, "</tr></thead><tbody>\n");
  for (size_t k = 0; k < s->n_results; k++) {
    lit(j, "<tr>");
    name_cell(j, r, k);
    score_cell(j, s->class_score[k * s->n_classes + c]);
    for (size_t w = 0; w < s->n_workloads; w++)
      if (strcmp(v->workloads[w].cls, s->classes[c]) == 0) score_cell(j, s->speedup[k * s->n_workloads + w]);
    lit(j, "</tr>\n");
  }
  lit(j, "</tbody></table>\n");
}

static void pre(jsonw *j, const char *title, const char *path, const char *sha, const char *text) {
  lit(j, "<p>");
  xmltext_put(j, title);
  lit(j, ": <code>");
  xmltext_put(j, path);
  lit(j, "</code>, sha256 <code>");
  xmltext_put(j, sha);
  lit(j, "</code></p><pre>");
  xmltext_put(j, text);
  lit(j, "</pre>\n");
}

static void config_section(jsonw *j, const chakra_suite_result *r, size_t n) {
  lit(j, "<h2 id=\"configurations\">Configurations</h2>\n");
  for (size_t k = 0; k < n; k++) {
    fmt(j, "<h3 id=\"cfg-%.0f\">", (double)k);
    xmltext_put(j, r[k].name);
    lit(j, " <span class=\"");
    xmltext_put(j, r[k].division);
    lit(j, "\">(");
    xmltext_put(j, r[k].division);
    lit(j, " division)</span></h3>\n<p class=\"note\">");
    xmltext_put(j, r[k].tool_version);
    lit(j, "; declared: peak ");
    fmt(j, "%g TFLOP/s; network ", r[k].peak_tflops);
    xmltext_put(j, r[k].declared_network);
    lit(j, "; rules: ");
    if (!r[k].n_rules) lit(j, "none");
    for (size_t i = 0; i < r[k].n_rules; i++) {
      if (i) lit(j, ", ");
      lit(j, "<code>");
      xmltext_put(j, r[k].rules[i]);
      lit(j, "</code>");
    }
    lit(j, "</p>\n");
    pre(j, "system", r[k].system_path, r[k].system_sha256, r[k].system_text);
    pre(j, "network", r[k].network_path, r[k].network_sha256, r[k].network_text);
  }
}

static void page(jsonw *j, const chakra_suite_score *s, const chakra_suite_result *r) {
  lit(j, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Chakra suite ");
  xmltext_put(j, s->version->name);
  lit(j, " leaderboard</title>\n");
  lit(j, style);
  lit(j, "</head><body>\n<h1>Chakra benchmark suite ");
  xmltext_put(j, s->version->name);
  lit(j, "</h1>\n<p class=\"note\">Scores are speedups over the baseline <b>");
  xmltext_put(j, r[s->baseline].name);
  lit(j, "</b> (1 by definition): per workload its time over the system's, per class the geometric mean of "
         "the class's workloads, overall the geometric mean of the classes. Click a column to sort.</p>\n");
  overall_section(j, s, r);
  for (size_t c = 0; c < s->n_classes; c++) class_section(j, s, r, c);
  config_section(j, r, s->n_results);
  lit(j, script);
  lit(j, "</body></html>\n");
}

int chakra_suite_board_write(const chakra_suite_score *s, const chakra_suite_result *results, const char *path,
                             chakra_error *err) {
  textout t;
  int rc = textout_open(&t, path, err);
  if (rc) return rc;
  page(&t.w, s, results);
  return textout_close(&t, 0, err);
}
