/* plot.h - SVG pictures of reports: `chakra sim --report` and `chakra
 * replay --report`, or any run record (per-rank GPU compute, exposed
 * communication and overlap; collective time by type) and
 * `chakra stats --json` (nodes by type, collective bytes by type,
 * communication volume per group). Every bar carries its exact number in
 * a data-value attribute. */
#ifndef CHAKRA_PLOT_H
#define CHAKRA_PLOT_H

#include <stddef.h>

#include "chakra/error.h"
#include "chakra/export.h"
#include "chakra/run.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { CHAKRA_PLOT_SIM_REPORT = 1, CHAKRA_PLOT_STATS = 2 } chakra_plot_kind;

/* Plots the JSON document text (len bytes; name is used in messages and
 * the title) to out_path ("-" = standard output). The kind is recognised
 * from the document and stored in *kind (may be NULL). */
CHAKRA_API int chakra_plot_json(const char *text, size_t len, const char *name, const char *out_path,
                                chakra_plot_kind *kind, chakra_error *err);

/* The same, reading the document from in_path ("-" = standard input). */
CHAKRA_API int chakra_plot_file(const char *in_path, const char *out_path, chakra_plot_kind *kind, chakra_error *err);

/* The report's charts of a run record (what chakra_plot_json() draws of a
 * report, which it reads into a record with chakra_run_read_report()'s
 * rules); name goes into the title. */
CHAKRA_API int chakra_plot_run(const chakra_run_record *r, const char *name, const char *out_path, chakra_error *err);

#ifdef __cplusplus
}
#endif
#endif
