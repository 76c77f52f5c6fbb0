/* measure.c - per-rank figures of a replayed iteration; see measure.h. */
#include "measure.h"
#include "../util/cmp.h"

#include <stdlib.h>
#include <string.h>

#include "../report/spans.h"

int rp_measure_init(rp_measure *m, const rp_plan *p, uint32_t iters) {
  memset(m, 0, sizeof *m);
  m->iters = iters;
  m->n_inst = p->n_colls;
  m->finish = calloc(iters ? iters : 1, sizeof *m->finish);
  m->inst_node = malloc((m->n_inst ? m->n_inst : 1) * sizeof *m->inst_node);
  m->inst_ns = calloc((size_t)(m->n_inst ? m->n_inst : 1) * (iters ? iters : 1), sizeof *m->inst_ns);
  if (!m->finish || !m->inst_node || !m->inst_ns) return -1;
  uint32_t k = 0;
  for (uint32_t i = 0; i < p->n; i++)
    if (p->nodes[i].kind == RP_COLL) m->inst_node[k++] = i;
  return 0;
}

void rp_measure_free(rp_measure *m) {
  free(m->finish);
  free(m->inst_node);
  free(m->inst_ns);
  memset(m, 0, sizeof *m);
}

/* The intervals of the finished nodes of category cat (or, with cat < 0,
 * those that keep the rank out of the pipeline bubble) into v; how many. */
static uint32_t node_spans(const rp_engine *e, int cat, uint64_t *v) {
  const rp_plan *p = e->p;
  uint32_t k = 0;
  for (uint32_t i = 0; i < p->n; i++) {
    const rp_node *n = &p->nodes[i];
    if (e->end[i] == UINT64_MAX || (cat >= 0 ? n->cat != cat : !spans_not_bubble(n->slot, n->cat))) continue;
    v[2 * k] = e->start[i], v[2 * k + 1] = e->end[i], k++;
  }
  return k;
}

int rp_measure_record(rp_measure *m, const rp_engine *e) {
  const rp_plan *p = e->p;
  chakra_run_rank *r = &m->last;
  memset(r, 0, sizeof *r);
  uint64_t *scratch = malloc(2 * (size_t)(p->n ? p->n : 1) * sizeof *scratch);
  if (!scratch) return -1;
  r->nodes = p->n;
  r->nodes_done = e->done;
  r->finished = e->done == p->n;
  for (uint32_t i = 0; i < p->n; i++) {
    if (e->end[i] == UINT64_MAX) continue;
    const rp_node *n = &p->nodes[i];
    if (e->end[i] > r->wall_ns) r->wall_ns = e->end[i];
    if (n->kind == RP_COLL) {
      r->coll[n->coll].count++;
      r->coll[n->coll].bytes += n->value;
      r->coll[n->coll].time_ns += e->end[i] - e->start[i];
    } else if (n->kind == RP_SEND) {
      r->send_ops++;
      r->send_bytes += n->value;
    }
  }
  r->finish_ns = r->wall_ns;
  for (int c = 0; c < RP_CATS; c++) r->busy_ns[c] = spans_union(scratch, node_spans(e, c, scratch));
  uint64_t gpu_or_comm = spans_union(scratch, node_spans(e, -1, scratch));
  free(scratch);
  /* As the simulator: finish minus the GPU compute that was stood in for. */
  r->exposed_comm_ns = r->finish_ns > e->gpu_ns ? r->finish_ns - e->gpu_ns : 0;
  r->bubble_ns = spans_bubble(r->exposed_comm_ns, r->busy_ns[CHAKRA_CAT_GPU], gpu_or_comm);
  r->mpi_ns = e->mpi_ns;
  r->idle_ns = e->idle_ns;
  r->loop_ns = e->loop_ns;
  if (m->k < m->iters) {
    m->finish[m->k] = r->finish_ns;
    for (uint32_t j = 0; j < m->n_inst; j++) {
      uint32_t i = m->inst_node[j];
      m->inst_ns[(size_t)j * m->iters + m->k] = e->end[i] - e->start[i];
    }
    m->k++;
  }
  return 0;
}

/* min, median (lower middle), max of v[0..n), sorted in place. */
static void spread(uint64_t *v, uint32_t n, uint64_t *lo, uint64_t *med, uint64_t *hi) {
  if (!n) {
    *lo = *med = *hi = 0;
    return;
  }
  qsort(v, n, sizeof *v, cmp_u64);
  *lo = v[0];
  *med = v[(n - 1) / 2];
  *hi = v[n - 1];
}

void rp_measure_spread(rp_measure *m) {
  uint64_t *tmp = malloc((m->k ? m->k : 1) * sizeof *tmp);
  if (!tmp) return;
  memcpy(tmp, m->finish, m->k * sizeof *tmp);
  spread(tmp, m->k, &m->last.finish_min_ns, &m->last.finish_median_ns, &m->last.finish_max_ns);
  free(tmp);
}

chakra_run_instance *rp_measure_instances(const rp_measure *m, const rp_engine *e) {
  chakra_run_instance *v = calloc(m->n_inst ? m->n_inst : 1, sizeof *v);
  uint64_t *tmp = malloc((m->k ? m->k : 1) * sizeof *tmp);
  if (!v || !tmp) {
    free(v);
    free(tmp);
    return NULL;
  }
  for (uint32_t j = 0; j < m->n_inst; j++) {
    uint32_t i = m->inst_node[j];
    const rp_node *n = &e->p->nodes[i];
    chakra_run_instance *x = &v[j];
    x->rank = e->p->rank;
    x->node_id = n->id;
    x->comm_type = n->coll;
    x->bytes = n->value;
    x->group = e->c->group_of[n->tag];
    x->group_size = (uint64_t)e->c->size[n->tag];
    x->start_ns = e->start[i];
    x->time_ns = e->end[i] != UINT64_MAX ? e->end[i] - e->start[i] : 0;
    memcpy(tmp, &m->inst_ns[(size_t)j * m->iters], m->k * sizeof *tmp);
    spread(tmp, m->k, &x->time_min_ns, &x->time_median_ns, &x->time_max_ns);
  }
  free(tmp);
  return v;
}
