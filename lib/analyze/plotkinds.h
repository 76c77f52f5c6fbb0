/* plotkinds.h - the pictures chakra plot draws of documents other than
 * run reports and statistics (private to lib/analyze): a sweep's table
 * (chakra sweep -o FILE.json) and a link report (chakra sim
 * --link-report). */
#ifndef CHAKRA_PLOTKINDS_H
#define CHAKRA_PLOTKINDS_H

#include <yajl/yajl_tree.h>

#include "chakra/error.h"

/* Whether doc is a sweep table ("vary" and "rows") or a link report
 * ("links" and "devices"). */
int plotkinds_is_sweep(yajl_val doc);
int plotkinds_is_links(yajl_val doc);

/* Iteration time, mean exposed communication and mean GPU compute per
 * configuration, configurations in numeric order of their values. */
int plotkinds_sweep(yajl_val doc, const char *name, const char *out_path, chakra_error *err);
/* A heat map of link utilisation (source device x destination device;
 * blocks of devices past 128), the busiest links, mean utilisation per
 * dimension. */
int plotkinds_links(yajl_val doc, const char *name, const char *out_path, chakra_error *err);

#endif
