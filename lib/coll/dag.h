/* dag.h - one rank's collective-algorithm DAG in compact arrays (private
 * to lib/coll).
 *
 * Generators, the MSCCL converter, the checker and the expander all speak
 * this one shape: nodes 0..n-1 (SEND, RECV, REDUCE, COPY) with their peer
 * (algorithm rank), tag, bytes and cost, and data dependencies as an index
 * list (CSR). Deps are appended to the node added last, so a producer that
 * knows its dependencies when it adds a node (the generators) builds the
 * DAG in one pass. */
#ifndef CHAKRA_COLL_DAG_H
#define CHAKRA_COLL_DAG_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include "../util/vec.h"

enum { COLL_SEND, COLL_RECV, COLL_REDUCE, COLL_COPY };

#define COLL_NONE UINT32_MAX

typedef struct coll_dag {
  uint32_t n, cap;
  uint8_t *kind;
  int32_t *peer;     /* SEND: destination; RECV: source; COMP: -1 */
  int32_t *tag;
  uint64_t *bytes;   /* message bytes, or bytes reduced / copied */
  uint64_t *dur_ns;  /* COMP cost; 0 for messages */
  uint32_t *label;   /* step index, for names */
  uint16_t *tb;      /* thread block (MSCCL), for names */
  uint32_t *dep_off; /* n + 1 entries */
  uint32_t *deps;
  uint32_t n_deps;
  size_t cap_deps;
  int oom;           /* an allocation failed: the DAG is incomplete */
} coll_dag;

void coll_dag_init(coll_dag *d);
void coll_dag_clear(coll_dag *d); /* keeps the memory */
void coll_dag_free(coll_dag *d);

/* Appends a node; returns its index (COLL_NONE once out of memory). */
uint32_t coll_dag_add(coll_dag *d, int kind, int32_t peer, int32_t tag, uint64_t bytes,
                      uint64_t dur_ns, uint32_t label);
/* Adds a data dependency of the last node on node `on` (COLL_NONE: none). */
void coll_dag_dep(coll_dag *d, uint32_t on);

static inline uint32_t coll_dag_ndeps(const coll_dag *d, uint32_t i) {
  return d->dep_off[i + 1] - d->dep_off[i];
}

/* Whether a (rank ra's DAG) and b (rank rb's) are the same once each
 * peer is taken relative to its own rank, modulo n: node for node the
 * same kind, tag, bytes, cost, label, thread block and dependencies, and
 * a peer ra + k for a where b has rb + k. Such DAGs differ only by a
 * rotation of the ranks. */
int coll_dag_same_rotated(const coll_dag *a, uint32_t ra, const coll_dag *b, uint32_t rb, uint32_t n);

/* The one growth rule of lib/coll's arrays: util/vec's, from 64 elements
 * (synth.c's estimate of what a synthesis needs counts on it). COLL_ROOM
 * makes room for element n of arr (cap a size_t): 0, or -1 when out of
 * memory with arr and cap unchanged. coll_grow is the same returning arr
 * (NULL on failure). */
#define COLL_MIN_CAP 64
#define COLL_ROOM(arr, n, cap) \
  ((n) < (cap) ? 0 : vec_room_by(&(arr), &(cap), (n), 1, sizeof *(arr), COLL_MIN_CAP, SIZE_MAX, realloc))
void *coll_grow(void *arr, size_t n, size_t *cap, size_t elem);

/* a * b / c without overflow (c > 0). */
static inline uint64_t coll_muldiv(uint64_t a, uint64_t b, uint64_t c) {
#if defined(__SIZEOF_INT128__)
  __extension__ typedef unsigned __int128 u128;
  return (uint64_t)((u128)a * b / c);
#else
  return (uint64_t)((long double)a * (long double)b / (long double)c);
#endif
}

/* Cost model of the generators and the converter: GB/s = bytes per ns;
 * 3 passes (two reads, one write) per reduced byte, 2 per copied byte;
 * the byte quotient truncated first, as the reference converter does.
 * 0 when bw <= 0. */
uint64_t coll_comp_ns(int kind, uint64_t bytes, double bw);

#endif
