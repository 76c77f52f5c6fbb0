/* csv.h - CSV tables (RFC 4180), the one place that knows how a field is
 * quoted (private to libchakra): chakra sweep's table and a run record's
 * per-rank table (chakra sim/replay --report-format csv). Text goes
 * through jsonw's buffer (util/textout), so numbers cost no printf. */
#ifndef CHAKRA_REPORT_CSV_H
#define CHAKRA_REPORT_CSV_H

#include <stdint.h>

#include "../util/jsonw.h"

/* s as one field: as is, or in double quotes (doubled inside) when it
 * holds a comma, a quote or a line break. */
void csv_field(jsonw *w, const char *s);
/* Ends a field (a comma) or a row (a line break). */
static inline void csv_next(jsonw *w) { jsonw_char(w, ','); }
static inline void csv_end(jsonw *w) { jsonw_char(w, '\n'); }

#endif
