/* plot.h - SVG pictures of reports: `chakra sim --report` and `chakra
 * replay --report`, or any run record (per rank where the time went:
 * GPU compute, exposed communication, pipeline bubble; compute, exposed
 * communication and overlap; collective time by type), two or more of
 * them side by side, `chakra stats --json` (nodes by type, collective
 * bytes by type, communication volume per group), a `chakra sweep` table
 * and a `chakra sim --link-report` (a heat map of link utilisation).
 * Every bar and cell carries its exact number in a data-value attribute. */
#ifndef CHAKRA_PLOT_H
#define CHAKRA_PLOT_H

#include <stddef.h>

#include "chakra/error.h"
#include "chakra/export.h"
#include "chakra/run.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  CHAKRA_PLOT_SIM_REPORT = 1,   /* a run report (sim or replay) */
  CHAKRA_PLOT_STATS = 2,        /* chakra stats --json */
  CHAKRA_PLOT_SWEEP = 3,        /* chakra sweep -o FILE.json */
  CHAKRA_PLOT_LINKS = 4,        /* chakra sim --link-report */
  CHAKRA_PLOT_SIDE_BY_SIDE = 5  /* two or more run reports */
} chakra_plot_kind;

/* Plots the JSON document text (len bytes; name is used in messages and
 * the title) to out_path ("-" = standard output). The kind is recognised
 * from the document and stored in *kind (may be NULL). */
CHAKRA_API int chakra_plot_json(const char *text, size_t len, const char *name, const char *out_path,
                                chakra_plot_kind *kind, chakra_error *err);

/* The same, reading the document from in_path ("-" = standard input). */
CHAKRA_API int chakra_plot_file(const char *in_path, const char *out_path, chakra_plot_kind *kind, chakra_error *err);

/* in_paths[0..n): one document (as chakra_plot_file()), or 2 to 6 run
 * reports drawn side by side (iteration time and means, each rank's split
 * of its time, collective time by type), each named by its path. */
CHAKRA_API int chakra_plot_files(const char *const *in_paths, size_t n, const char *out_path, chakra_plot_kind *kind,
                                 chakra_error *err);

/* Run records side by side (1 to 6), named by names[i]. */
CHAKRA_API int chakra_plot_runs(const chakra_run_record *const *runs, const char *const *names, size_t n,
                                const char *out_path, chakra_error *err);

/* The report's charts of a run record (what chakra_plot_json() draws of a
 * report, which it reads into a record with chakra_run_read_report()'s
 * rules); name goes into the title. */
CHAKRA_API int chakra_plot_run(const chakra_run_record *r, const char *name, const char *out_path, chakra_error *err);

#ifdef __cplusplus
}
#endif
#endif
