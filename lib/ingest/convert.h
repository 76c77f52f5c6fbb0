/* convert.h - what the steps of chakra convert pytorch share (private to
 * lib/ingest).
 *
 * chakra_convert_pytorch() (convert.c) reads the host ET or linked trace
 * (hostet.c: one record per JSON node, inputs/outputs kept as their
 * Python-repr texts) and runs the steps in order, each reading and filling
 * the converter below: the id index, parent tree and selection
 * (convindex.c), process groups (convgroups.c), each node's type, peer,
 * tag and group (convtype.c), dependencies (convdeps.c), dangling deps,
 * cycles and the output order (convorder.c), the ET and its log
 * (convwrite.c). Everything works on index arrays; no recursion, so trees
 * and chains of any depth are fine. */
#ifndef CHAKRA_INGEST_CONVERT_H
#define CHAKRA_INGEST_CONVERT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "chakra/ingest.h"
#include "hostet.h"
#include "../util/diag.h"

#define CONV_NONE UINT32_MAX

enum { CONV_T_INVALID = 0, CONV_T_METADATA = 1, CONV_T_COMP = 4, CONV_T_SEND = 5, CONV_T_RECV = 6, CONV_T_COLL = 7 };

/* one process group from a "## process_group:init ##" node */
typedef struct pgroup {
  char *name;
  int64_t backend_id;
  int has_backend_id;
  int64_t *ranks; /* NULL: all ranks */
  size_t n_ranks;
  int64_t size;   /* group_size */
} pgroup;

typedef struct conv {
  const chakra_convert_options *opt;
  chakra_convert_report *rep;
  chakra_error *err;
  hostet *h;
  size_t n;
  int compat;
  /* ids */
  uint64_t *sid;     /* ids in ascending order */
  uint32_t *sidx;    /* their node indexes */
  uint32_t *direct;  /* dense ids: index of id - id_min, or CONV_NONE */
  uint64_t id_min;
  size_t direct_n;
  /* tree */
  uint32_t *parent;
  uint32_t *child_off, *children; /* children of i in ascending id order */
  /* selection and typing */
  uint8_t *sel;      /* converted (before dangling removal) */
  uint8_t *out;      /* written */
  uint8_t *gpu;      /* a device op (cat present, not METADATA) */
  uint8_t *type;
  int8_t *comm_type;
  int32_t *peer;     /* SEND: comm_dst, RECV: comm_src */
  int32_t *tag;
  uint32_t *pg;      /* pg_name string id for comm nodes (0 = none) */
  /* deps */
  uint32_t *dep_start, *dep_cnt;
  uint64_t *deps;
  size_t ndeps, capdeps;
  uint32_t *order;   /* output order (indexes) */
  size_t n_order;
  /* process groups */
  pgroup *pgs;
  size_t n_pgs, cap_pgs;
} conv;

/* A warning about file, to the options' diag callback. */
#define conv_warnf(c, file, ...) chakra_diag_warnf((c)->opt->diag, (c)->opt->diag_ctx, (file), __VA_ARGS__)
/* Node i's name. */
const char *conv_nname(const conv *c, uint32_t i);
/* An error about node i (where it is in the file, its name), returned. */
int conv_node_err(conv *c, uint32_t i, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Sets "out of memory" and returns its code. */
int conv_oom(conv *c);

static inline int conv_has(const char *s, const char *needle) { return strstr(s, needle) != NULL; }

#endif
