/* linkout.h - the linked host ET that chakra link writes (private to
 * lib/ingest): host nodes renumbered in id order, each followed by its
 * device ops, with the measured times and the derived dependencies, in the
 * layout the reference converter reads; written through util/jsonw and
 * committed all or nothing. */
#ifndef CHAKRA_INGEST_LINKOUT_H
#define CHAKRA_INGEST_LINKOUT_H

#include "link.h"

/* Writes out_path from L; refuses duplicate host ids (renumbering would
 * hide them). Warns about parents that are not in the trace. */
int link_write(linker *L, const char *out_path);

#endif
