/* mxconv.h - one GPU of an MSCCL-IR program as an algorithm DAG (private
 * to lib/coll): each step becomes its send, receive and reduction or copy
 * nodes, with the dependencies of its thread block and its cross-tb
 * dependency resolved to nodes; chunk sizes per collectives.md 4.2
 * (--compat) or 4.3. */
#ifndef CHAKRA_COLL_MXCONV_H
#define CHAKRA_COLL_MXCONV_H

#include <stddef.h>
#include <stdint.h>

#include "dag.h"
#include "msccl.h"

/* The converter's state; one per worker, reused GPU after GPU. */
typedef struct mx_conv {
  mx *x;
  const chakra_coll_msccl_options *o;
  uint64_t chunk;      /* bytes per chunk */
  uint32_t stamp;
  uint32_t *deps;      /* scratch for one node's deps */
  size_t n_deps, cap_deps;
  struct wstep *work;  /* scratch for resolve() */
  size_t n_work, cap_work;
  uint32_t *ids;       /* node -> id in the file (--compat leaves gaps) */
  size_t n_ids, cap_ids;
  uint32_t id_gap;
  int oom;
} mx_conv;

/* Bytes per chunk of the program for the options' size. */
int mx_chunk_bytes(mx *x, const mgpu *g0, const chakra_coll_msccl_options *o, uint64_t *out);
/* GPU g's DAG into d (c->ids: node -> id in the file); refuses a cycle. */
int mx_convert_gpu(mx_conv *c, const mgpu *g, coll_dag *d);

#endif
