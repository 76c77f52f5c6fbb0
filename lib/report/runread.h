/* runread.h - a parsed report document into a run record (private to
 * libchakra): what chakra_run_read_report() does after parsing, for
 * readers that have the document already (plot tells reports from
 * statistics by looking at it first). */
#ifndef CHAKRA_REPORT_RUNREAD_H
#define CHAKRA_REPORT_RUNREAD_H

#include <yajl/yajl_tree.h>

#include "chakra/run.h"

/* Fills out (emptied first; empty again on failure) from doc; name is
 * the file for messages. */
int runread_doc(yajl_val doc, const char *name, chakra_run_record *out, chakra_error *err);

#endif
