/* ymap.h - the simple YAML shape of ASTRA-sim's configuration files: a
 * top-level mapping of scalar keys to a scalar or a list of scalars, with
 * the line of each key for messages (private, libyaml underneath). Used by
 * the network description (lib/topo) and the simulator's per-node custom
 * implementation file. */
#ifndef CHAKRA_UTIL_YMAP_H
#define CHAKRA_UTIL_YMAP_H

#include "chakra/error.h"

typedef struct yentry {
  char *key;
  char **vals;
  int n, is_list;
  unsigned long line;
} yentry;

typedef struct ymap {
  yentry *e;
  int n;
} ymap;

/* Reads path into m. On failure m holds nothing (no need to free it);
 * otherwise ymap_free() releases it. */
int ymap_read(const char *path, ymap *m, chakra_error *err);
void ymap_free(ymap *m);

#endif
