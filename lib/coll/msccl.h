/* msccl.h - an MSCCL-IR program in flat arrays and its conversion into
 * algorithm ETs (private to lib/coll).
 *
 * chakra_coll_from_msccl() fills these arrays from XML; the synthesiser
 * (synth.c) builds them directly and writes the same program as XML, so
 * the ETs it writes and the ones from-msccl makes of its XML come out of
 * one converter. GPUs hold thread blocks (tbs), tbs hold steps; a step's
 * cross-tb dependency is (depid, deps) = (tb id, step index) on its GPU. */
#ifndef CHAKRA_COLL_MSCCL_H
#define CHAKRA_COLL_MSCCL_H

#include <stddef.h>
#include <stdint.h>

#include "chakra/coll.h"
#include "emit.h"

enum { ST_S, ST_R, ST_RCS, ST_RRS, ST_RRC, ST_RRCS, ST_CPY, ST_RE, ST_NOP, ST_TYPES };

/* Whether a step of type t receives, sends. */
static inline int st_recvs(int t) { return t == ST_R || t == ST_RCS || t == ST_RRS || t == ST_RRC || t == ST_RRCS; }
static inline int st_sends(int t) { return t == ST_S || t == ST_RCS || t == ST_RRS || t == ST_RRCS; }

typedef struct mstep {
  int32_t s, cnt, depid, deps;
  uint8_t type;
  uint32_t first, n_nodes; /* nodes made of it (first = index in the GPU's DAG) */
  int32_t rtag, stag;      /* tags of its receive and its send */
  uint32_t stamp;          /* visit mark while resolving dependencies */
} mstep;

typedef struct mtb {
  int32_t id, send, recv, chan;
  uint32_t first, n;       /* steps */
} mtb;

typedef struct mgpu {
  int32_t id, i_chunks, o_chunks;
  uint32_t first, n;       /* tbs */
} mgpu;

/* Files of at least this many bytes (1 MiB) are parsed in parts, one per
 * thread; the fuzzer sets it to 0 to compare every input both ways. */
extern size_t msccl_split_min;

struct XML_ParserStruct;

typedef struct mx {
  const char *path;        /* names the program in errors */
  chakra_error *err;
  int failed;
  struct XML_ParserStruct *p; /* while parsing only */
  int depth, in_algo;
  char *name, *coll;
  int32_t ngpus;
  mgpu *gpus;
  size_t n_gpus, cap_gpus;
  mtb *tbs;
  size_t n_tbs, cap_tbs;
  mstep *steps;
  size_t n_steps, cap_steps;
} mx;

/* The tb of GPU g with id t, or NULL. */
static inline const mtb *mx_tb_of(const mx *x, const mgpu *g, int32_t t) {
  for (uint32_t i = 0; i < g->n; i++)
    if (x->tbs[g->first + i].id == t) return &x->tbs[g->first + i];
  return NULL;
}

/* Every GPU present once (by_id[g] receives GPU g, ngpus entries),
 * dependencies that exist, sends that match receives per connection; sets
 * the tags (channel << 16 | index of the message on its connection). */
int msccl_validate(mx *x, const mgpu **by_id);
/* Frees the arrays and names (not x). */
void msccl_free(mx *x);
/* Writes PREFIX.<gpu>.et for a validated program with metadata m. */
int msccl_write(mx *x, const mgpu **by_id, const chakra_coll_msccl_options *o, const char *prefix,
                const coll_meta *m, chakra_error *err);

#endif
