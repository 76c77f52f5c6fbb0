/* convgroups.h - process groups for chakra convert pytorch (private to
 * lib/ingest): read from the "## process_group:init ##" nodes through
 * util/commgroups, and written as ASTRA-sim's comm-group JSON. */
#ifndef CHAKRA_INGEST_CONVGROUPS_H
#define CHAKRA_INGEST_CONVGROUPS_H

#include "convert.h"

int conv_parse_groups(conv *c);
const pgroup *conv_pg_by_backend(const conv *c, int64_t id);
pgroup *conv_pg_by_name(const conv *c, const char *name);
/* The groups as {"name": [ranks...], ...} (--comm-groups). */
int conv_write_groups(conv *c, const char *path);

#endif
