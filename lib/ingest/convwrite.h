/* convwrite.h - the Chakra ET chakra convert pytorch writes, and its --log
 * (private to lib/ingest): nodes built on several threads in rounds, in
 * output order, through the workload writer (all or nothing). */
#ifndef CHAKRA_INGEST_CONVWRITE_H
#define CHAKRA_INGEST_CONVWRITE_H

#include "convert.h"

/* Where the ET goes: a file (atomic, gzip by name) or a sink. */
typedef struct conv_dest {
  const char *path;
  const chakra_sink *sink;
} conv_dest;

int conv_write_et(conv *c, const conv_dest *to);

#endif
