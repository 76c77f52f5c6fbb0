/* mxconv.c - one GPU of an MSCCL-IR program as an algorithm DAG; see
 * mxconv.h. */
#include "mxconv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxparse.h"


static void add_dep(mx_conv *c, uint32_t node) {
  for (size_t i = 0; i < c->n_deps; i++)
    if (c->deps[i] == node) return;
  if (COLL_ROOM(c->deps, c->n_deps, c->cap_deps)) {
    c->oom = 1;
    return;
  }
  c->deps[c->n_deps++] = node;
}

typedef struct wstep { const mtb *t; uint32_t si; } wstep;

static int push_work(mx_conv *c, const mtb *t, uint32_t si) {
  if (COLL_ROOM(c->work, c->n_work, c->cap_work)) {
    c->oom = 1;
    return -1;
  }
  c->work[c->n_work++] = (wstep){t, si};
  return 0;
}

/* A dependency on step si of tb t: its last node, or, for a step without
 * nodes (a nop), whatever that step waits for (expanded later). */
static void target(mx_conv *c, const mtb *t, uint32_t si) {
  mstep *s = &c->x->steps[t->first + si];
  if (s->n_nodes) {
    add_dep(c, s->first + s->n_nodes - 1);
  } else if (s->stamp != c->stamp) {
    s->stamp = c->stamp;
    push_work(c, t, si);
  }
}

/* The dependencies of step si into c->deps: its cross-tb target, then
 * program order, walking through nops with an explicit stack (a chain of
 * nops may be as long as the input). */
static void resolve(mx_conv *c, const mgpu *g, const mtb *t, uint32_t si) {
  c->n_deps = 0;
  c->n_work = 0;
  c->stamp++;
  push_work(c, t, si);
  while (c->n_work && !c->oom) {
    wstep w = c->work[--c->n_work];
    const mstep *s = &c->x->steps[w.t->first + w.si];
    if (s->depid != -1) target(c, mx_tb_of(c->x, g, s->depid), (uint32_t)s->deps);
    if (w.si > 0) target(c, w.t, w.si - 1);
  }
}

static int add_id(mx_conv *c, uint32_t id) {
  if (COLL_ROOM(c->ids, c->n_ids, c->cap_ids)) return -1;
  c->ids[c->n_ids++] = id;
  return 0;
}

static void add_node(mx_conv *c, coll_dag *d, int kind, int32_t peer, int32_t tag, uint64_t bytes, const mstep *s,
                     const mtb *t) {
  uint64_t ns = 0;
  if (kind == COLL_REDUCE || kind == COLL_COPY) ns = coll_comp_ns(kind, bytes, c->o->reduce_bw);
  uint32_t i = coll_dag_add(d, kind, peer, tag, bytes, ns, (uint32_t)s->s);
  if (i != COLL_NONE) d->tb[i] = (uint16_t)t->id;
  if (i == COLL_NONE || add_id(c, i + c->id_gap)) d->oom = 1;
}

/* Cross-tb dependencies can close a cycle (a step waiting on a later step
 * of its own tb, two tbs waiting on each other): refuse it, naming a step
 * on it, rather than write a DAG nothing can run. Kahn's algorithm. */
static int check_acyclic(mx_conv *c, const mgpu *g, const coll_dag *d) {
  uint32_t *indeg = calloc(d->n ? d->n : 1, sizeof *indeg), *stack = malloc((d->n ? d->n : 1) * sizeof *stack);
  uint32_t *off = calloc((size_t)d->n + 1, sizeof *off), *kids = malloc((d->n_deps ? d->n_deps : 1) * sizeof *kids);
  int rc = 0;
  if (!indeg || !stack || !off || !kids) {
    rc = chakra_error_set(c->x->err, CHAKRA_ENOMEM, "out of memory");
    goto out;
  }
  for (uint32_t i = 0; i < d->n; i++) {
    indeg[i] = coll_dag_ndeps(d, i);
    for (uint32_t k = d->dep_off[i]; k < d->dep_off[i + 1]; k++) off[d->deps[k] + 1]++;
  }
  for (uint32_t i = 0; i < d->n; i++) off[i + 1] += off[i];
  for (uint32_t i = 0; i < d->n; i++)
    for (uint32_t k = d->dep_off[i]; k < d->dep_off[i + 1]; k++) kids[off[d->deps[k]]++] = i;
  for (uint32_t i = d->n; i > 0; i--) off[i] = off[i - 1]; /* back to starts */
  off[0] = 0;
  uint32_t sp = 0, seen = 0;
  for (uint32_t i = 0; i < d->n; i++)
    if (!indeg[i]) stack[sp++] = i;
  while (sp) {
    uint32_t i = stack[--sp];
    seen++;
    for (uint32_t k = off[i]; k < off[i + 1]; k++)
      if (--indeg[kids[k]] == 0) stack[sp++] = kids[k];
  }
  if (seen < d->n) {
    uint32_t i = 0;
    while (!indeg[i]) i++;
    rc = mx_fail(c->x, "gpu %d tb %u step %u: its dependencies form a cycle", g->id, (unsigned)d->tb[i],
                 (unsigned)d->label[i]);
  }
out:
  free(indeg), free(stack), free(off), free(kids);
  return rc;
}

int mx_convert_gpu(mx_conv *c, const mgpu *g, coll_dag *d) {
  mx *x = c->x;
  int compat = c->o->compat;
  coll_dag_clear(d);
  c->n_ids = 0;
  c->id_gap = 0;
  /* pass 1: nodes, in XML order */
  for (uint32_t ti = 0; ti < g->n; ti++) {
    const mtb *t = &x->tbs[g->first + ti];
    for (uint32_t si = 0; si < t->n; si++) {
      mstep *s = &x->steps[t->first + si];
      if (s->cnt > 0 && c->chunk > (uint64_t)INT64_MAX / (uint64_t)s->cnt) {
        char pl[96];
        mx_place(pl, sizeof pl, g, t, s);
        return mx_fail(x, "%s: %d chunks of %llu bytes do not fit a 64-bit size", pl, s->cnt,
                       (unsigned long long)c->chunk);
      }
      uint64_t bytes = c->chunk * (uint64_t)s->cnt;
      int32_t tag = compat ? t->chan : st_sends(s->type) && !st_recvs(s->type) ? s->stag : s->rtag;
      s->first = d->n;
      switch (s->type) {
        case ST_S: add_node(c, d, COLL_SEND, t->send, tag, bytes, s, t); break;
        case ST_R: add_node(c, d, COLL_RECV, t->recv, tag, bytes, s, t); break;
        case ST_RRC:
          add_node(c, d, COLL_RECV, t->recv, tag, bytes, s, t);
          add_node(c, d, COLL_REDUCE, -1, 0, bytes, s, t);
          break;
        case ST_RCS:
        case ST_RRS:
        case ST_RRCS:
          add_node(c, d, COLL_RECV, t->recv, tag, bytes, s, t);
          if (s->type != ST_RCS) add_node(c, d, COLL_REDUCE, -1, 0, bytes, s, t);
          /* the forwarded message travels on the send connection, whose tag
           * was assigned when the connection was walked */
          add_node(c, d, COLL_SEND, t->send, compat ? t->chan : s->stag, bytes, s, t);
          break;
        case ST_CPY:
        case ST_RE:
          if (compat) c->id_gap++; /* the reference drops the step but spends an id on it */
          else add_node(c, d, s->type == ST_CPY ? COLL_COPY : COLL_REDUCE, -1, 0, bytes, s, t);
          break;
        default: /* nop: carries dependencies only */
          if (compat) c->id_gap++; /* the reference spends an id on every step, nops included */
          break;
      }
      s->n_nodes = d->n - s->first;
    }
  }
  if (d->oom) return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  /* pass 2: dependencies; rebuild the DAG with them (nodes are appended in
   * the same order, so indexes do not change) */
  coll_dag full;
  coll_dag_init(&full);
  for (uint32_t ti = 0; ti < g->n; ti++) {
    const mtb *t = &x->tbs[g->first + ti];
    for (uint32_t si = 0; si < t->n; si++) {
      const mstep *s = &x->steps[t->first + si];
      for (uint32_t k = 0; k < s->n_nodes; k++) {
        uint32_t i = s->first + k;
        uint32_t j = coll_dag_add(&full, d->kind[i], d->peer[i], d->tag[i], d->bytes[i], d->dur_ns[i], d->label[i]);
        if (j != COLL_NONE) full.tb[j] = d->tb[i];
        if (k > 0) {
          coll_dag_dep(&full, i - 1); /* RECV -> COMP -> SEND inside a fused step */
          continue;
        }
        resolve(c, g, t, si);
        for (size_t q = 0; q < c->n_deps; q++) coll_dag_dep(&full, c->deps[q]);
      }
    }
  }
  int oom = full.oom || c->oom;
  coll_dag_free(d);
  *d = full;
  if (oom) return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  return check_acyclic(c, g, d);
}

/* Bytes per chunk (collectives.md 4.2 for --compat, 4.3 otherwise). */
int mx_chunk_bytes(mx *x, const mgpu *g0, const chakra_coll_msccl_options *o, uint64_t *out) {
  int gather = strcmp(x->coll, "allgather") == 0, reduce = strcmp(x->coll, "reduce") == 0;
  if (o->compat) {
    int32_t total = g0->i_chunks ? g0->i_chunks : g0->o_chunks;
    if (gather || reduce) *out = o->size;
    else if (total <= 0) return mx_fail(x, "gpu %d: i_chunks and o_chunks are 0", g0->id);
    else *out = o->size / (uint64_t)total;
    return 0;
  }
  int64_t in = g0->i_chunks > 0 ? g0->i_chunks : gather ? g0->o_chunks / x->ngpus : g0->o_chunks;
  if (gather && g0->i_chunks <= 0 && g0->o_chunks % x->ngpus)
    return mx_fail(x, "gpu %d: o_chunks=\"%d\" is not a multiple of ngpus=\"%d\"", g0->id, g0->o_chunks, x->ngpus);
  if (in <= 0) return mx_fail(x, "gpu %d: no input chunks (i_chunks and o_chunks are 0)", g0->id);
  if (o->size % (uint64_t)in)
    return mx_fail(x, "size %llu is not a multiple of the %lld input chunks per rank", (unsigned long long)o->size,
                   (long long)in);
  *out = o->size / (uint64_t)in;
  return 0;
}
