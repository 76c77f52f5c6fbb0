/* dag.c - per-rank algorithm DAG arrays; see dag.h. */
#include "dag.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void coll_dag_init(coll_dag *d) { memset(d, 0, sizeof *d); }

void *coll_grow(void *arr, size_t n, size_t *cap, size_t elem) {
  return vec_room_by(&arr, cap, n, 1, elem, COLL_MIN_CAP, SIZE_MAX, realloc) ? NULL : arr;
}

void coll_dag_clear(coll_dag *d) {
  d->n = 0;
  d->n_deps = 0;
  d->oom = 0;
  if (d->dep_off) d->dep_off[0] = 0;
}

void coll_dag_free(coll_dag *d) {
  free(d->kind), free(d->peer), free(d->tag), free(d->bytes), free(d->dur_ns);
  free(d->label), free(d->tb), free(d->dep_off), free(d->deps);
  coll_dag_init(d);
}

#define GROW(p, cap) \
  do { if (vec_resize(&(p), (size_t)(cap), sizeof *(p))) return -1; } while (0)

static int grow_nodes(coll_dag *d) {
  size_t cap = vec_next_cap(d->cap, (size_t)d->cap + 1, COLL_MIN_CAP, sizeof *d->bytes, UINT32_MAX - 1);
  if (!cap) return -1;
  GROW(d->kind, cap);
  GROW(d->peer, cap);
  GROW(d->tag, cap);
  GROW(d->bytes, cap);
  GROW(d->dur_ns, cap);
  GROW(d->label, cap);
  GROW(d->tb, cap);
  GROW(d->dep_off, cap + 1);
  if (d->cap == 0) d->dep_off[0] = 0;
  d->cap = (uint32_t)cap;
  return 0;
}

uint32_t coll_dag_add(coll_dag *d, int kind, int32_t peer, int32_t tag, uint64_t bytes,
                      uint64_t dur_ns, uint32_t label) {
  if (d->oom) return COLL_NONE;
  if (d->n == d->cap && grow_nodes(d)) {
    d->oom = 1;
    return COLL_NONE;
  }
  uint32_t i = d->n++;
  d->kind[i] = (uint8_t)kind;
  d->peer[i] = peer;
  d->tag[i] = tag;
  d->bytes[i] = bytes;
  d->dur_ns[i] = dur_ns;
  d->label[i] = label;
  d->tb[i] = 0;
  d->dep_off[i + 1] = d->n_deps;
  return i;
}

void coll_dag_dep(coll_dag *d, uint32_t on) {
  if (on == COLL_NONE || d->oom || d->n == 0) return;
  if (COLL_ROOM(d->deps, d->n_deps, d->cap_deps)) {
    d->oom = 1;
    return;
  }
  d->deps[d->n_deps++] = on;
  d->dep_off[d->n] = d->n_deps;
}

uint64_t coll_comp_ns(int kind, uint64_t bytes, double bw) {
  if (!(bw > 0)) return 0;
  double q = floor((double)bytes / bw);
  /* held at 2^62 so that the conversion is defined and 3 q fits */
  return (kind == COLL_COPY ? 2 : 3) * (q < 0x1p62 ? (uint64_t)q : (uint64_t)1 << 62);
}

static uint32_t rel(int32_t peer, uint32_t r, uint32_t n) {
  return peer < 0 ? UINT32_MAX : (uint32_t)(((uint64_t)(uint32_t)peer + n - r % n) % n);
}

int coll_dag_same_rotated(const coll_dag *a, uint32_t ra, const coll_dag *b, uint32_t rb, uint32_t n) {
  if (a->n != b->n || a->n_deps != b->n_deps) return 0;
  for (uint32_t i = 0; i < a->n; i++)
    if (a->kind[i] != b->kind[i] || a->tag[i] != b->tag[i] || a->bytes[i] != b->bytes[i] ||
        a->dur_ns[i] != b->dur_ns[i] || a->label[i] != b->label[i] || a->tb[i] != b->tb[i] ||
        a->dep_off[i + 1] != b->dep_off[i + 1] || rel(a->peer[i], ra, n) != rel(b->peer[i], rb, n))
      return 0;
  return a->n_deps == 0 || memcmp(a->deps, b->deps, a->n_deps * sizeof *a->deps) == 0;
}
