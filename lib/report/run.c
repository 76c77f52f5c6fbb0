/* run.c - the run record: its memory, metadata and the figures derived
 * from it; see include/chakra/run.h. The writers are runjson.c and
 * csv.c, the reader runread.c. */
#include "chakra/run.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cmp.h"
#include "chakra/attr.h"
#include "runint.h"

static int oom(chakra_error *err) { return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory"); }

int chakra_run_record_init(chakra_run_record *r, int source, uint32_t npus, chakra_error *err) {
  memset(r, 0, sizeof *r);
  r->source = source;
  r->ranks = calloc(npus ? npus : 1, sizeof *r->ranks);
  if (!r->ranks) return oom(err);
  r->npus = npus;
  return 0;
}

static void free_strings(char **v, uint32_t n) {
  for (uint32_t i = 0; v && i < n; i++) free(v[i]);
  free(v);
}

void chakra_run_record_free(chakra_run_record *r) {
  free(r->ranks);
  free_strings(r->stuck, r->n_stuck);
  free(r->instances);
  free_strings(r->groups, r->n_groups);
  free(r->makespan_ns);
  for (uint32_t i = 0; i < r->n_meta; i++) {
    free(r->meta[i].key);
    free(r->meta[i].value);
  }
  free(r->meta);
  free(r->symmetry);
  memset(r, 0, sizeof *r);
}

int chakra_run_add_stuck(chakra_run_record *r, const char *line, chakra_error *err) {
  char **v = realloc(r->stuck, ((size_t)r->n_stuck + 1) * sizeof *v);
  if (!v) return oom(err);
  r->stuck = v;
  if (!(v[r->n_stuck] = strdup(line))) return oom(err);
  r->n_stuck++;
  return 0;
}

const char *chakra_run_get_meta(const chakra_run_record *r, const char *key) {
  for (uint32_t i = 0; i < r->n_meta; i++)
    if (strcmp(r->meta[i].key, key) == 0) return r->meta[i].value;
  return NULL;
}

int chakra_run_set_meta(chakra_run_record *r, const char *key, const char *value, chakra_error *err) {
  char *v = strdup(value);
  if (!v) return oom(err);
  for (uint32_t i = 0; i < r->n_meta; i++)
    if (strcmp(r->meta[i].key, key) == 0) {
      free(r->meta[i].value);
      r->meta[i].value = v;
      return 0;
    }
  chakra_run_meta *m = realloc(r->meta, ((size_t)r->n_meta + 1) * sizeof *m);
  char *k = strdup(key);
  if (m) r->meta = m;
  if (!m || !k) {
    free(v);
    free(k);
    return oom(err);
  }
  m[r->n_meta++] = (chakra_run_meta){k, v};
  return 0;
}

uint64_t chakra_run_compute_ns(const chakra_run_rank *k) { return k->busy_ns[CHAKRA_CAT_GPU]; }
uint64_t chakra_run_comm_ns(const chakra_run_rank *k) { return k->busy_ns[CHAKRA_CAT_COMM]; }

uint64_t chakra_run_overlap_ns(const chakra_run_rank *k) {
  uint64_t both = k->busy_ns[CHAKRA_CAT_GPU] + k->busy_ns[CHAKRA_CAT_COMM];
  return both > k->wall_ns ? both - k->wall_ns : 0;
}

uint64_t chakra_run_exposed_coll_ns(const chakra_run_rank *k) {
  return k->exposed_comm_ns > k->bubble_ns ? k->exposed_comm_ns - k->bubble_ns : 0;
}

static const uint8_t coll_order[CHAKRA_RUN_COLLS] = {
    CHAKRA_ALL_REDUCE, CHAKRA_ALL_GATHER, CHAKRA_REDUCE_SCATTER, CHAKRA_ALL_TO_ALL, CHAKRA_REDUCE,
    CHAKRA_GATHER,     CHAKRA_SCATTER,    CHAKRA_BROADCAST,      CHAKRA_REDUCE_SCATTER_BLOCK, CHAKRA_BARRIER};

const uint8_t *chakra_run_coll_order(void) { return coll_order; }

/* a + b, or UINT64_MAX when that overflows: a total is then never 0 (or
 * small) while some rank has collectives of its type. */
static uint64_t add_sat(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

void chakra_run_coll_totals(const chakra_run_record *r, chakra_run_coll out[CHAKRA_RUN_COLLS]) {
  memset(out, 0, CHAKRA_RUN_COLLS * sizeof *out);
  for (uint32_t k = 0; k < r->npus; k++)
    for (int c = 0; c < CHAKRA_RUN_COLLS; c++) {
      out[c].count = add_sat(out[c].count, r->ranks[k].coll[c].count);
      out[c].bytes = add_sat(out[c].bytes, r->ranks[k].coll[c].bytes);
      out[c].time_ns = add_sat(out[c].time_ns, r->ranks[k].coll[c].time_ns);
    }
}

__extension__ typedef unsigned __int128 sum128;

/* sum / n rounded to the nearest integer, halves up (n > 0). The mean of
 * 64-bit values fits 64 bits. */
static uint64_t mean_of(sum128 sum, uint32_t n) { return (uint64_t)((sum + n / 2) / n); }

void chakra_run_summarise(const chakra_run_record *r, chakra_run_summary *out) {
  memset(out, 0, sizeof *out);
  sum128 fin = 0, exposed = 0, comm = 0, gpu = 0;
  out->min_finish_ns = r->npus ? UINT64_MAX : 0;
  for (uint32_t k = 0; k < r->npus; k++) {
    const chakra_run_rank *x = &r->ranks[k];
    out->finished += (uint32_t)(x->finished != 0);
    if (x->finish_ns > out->max_finish_ns) out->max_finish_ns = x->finish_ns, out->slowest_rank = k;
    if (x->finish_ns < out->min_finish_ns) out->min_finish_ns = x->finish_ns;
    if (x->exposed_comm_ns > out->max_exposed_comm_ns) out->max_exposed_comm_ns = x->exposed_comm_ns;
    fin += x->finish_ns, exposed += x->exposed_comm_ns;
    comm += x->busy_ns[CHAKRA_CAT_COMM], gpu += x->busy_ns[CHAKRA_CAT_GPU];
  }
  if (!r->npus) return;
  out->mean_finish_ns = mean_of(fin, r->npus);
  out->mean_exposed_comm_ns = mean_of(exposed, r->npus);
  out->mean_comm_ns = mean_of(comm, r->npus);
  out->mean_compute_ns = mean_of(gpu, r->npus);
}

static int cmp_finish(const void *a, const void *b, void *ctx) {
  const chakra_run_rank *r = ctx;
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  if (r[x].finish_ns != r[y].finish_ns) return r[x].finish_ns < r[y].finish_ns ? -1 : 1;
  return x < y ? -1 : x > y;
}

uint32_t chakra_run_finish_order(const chakra_run_record *r, uint32_t *order) {
  uint32_t n = 0;
  for (uint32_t k = 0; k < r->npus; k++)
    if (r->ranks[k].finished) order[n++] = k;
  qsort_r(order, n, sizeof *order, cmp_finish, r->ranks);
  return n;
}

/* ---- what the writers and the reader share (runint.h) ---- */

#define MEMBER(k) ",\"" k "\":"
#define RK(k, m) {k, MEMBER(k), sizeof MEMBER(k) - 1, offsetof(chakra_run_rank, m)}
#define IN(k, m) {k, MEMBER(k), sizeof MEMBER(k) - 1, offsetof(chakra_run_instance, m)}
#define FIELDS(name, ...)                                  \
  static const runrec_field name##_f[] = {__VA_ARGS__}; \
  const runrec_fields name = {name##_f, sizeof name##_f / sizeof *name##_f}

FIELDS(runrec_rank_times, RK("finish_ns", finish_ns), RK("exposed_comm_ns", exposed_comm_ns),
       RK("bubble_ns", bubble_ns), RK("wall_ns", wall_ns),
       RK("gpu_ns", busy_ns[CHAKRA_CAT_GPU]), RK("cpu_ns", busy_ns[CHAKRA_CAT_CPU]),
       RK("comm_ns", busy_ns[CHAKRA_CAT_COMM]), RK("remote_mem_ns", busy_ns[CHAKRA_CAT_MEM]),
       RK("invalid_ns", busy_ns[CHAKRA_CAT_INVALID]));
FIELDS(runrec_rank_nodes, RK("nodes", nodes), RK("nodes_done", nodes_done));
FIELDS(runrec_rank_p2p, RK("p2p_sends", send_ops), RK("p2p_bytes", send_bytes));
FIELDS(runrec_rank_replay, RK("finish_min_ns", finish_min_ns), RK("finish_median_ns", finish_median_ns),
       RK("finish_max_ns", finish_max_ns), RK("loop_ns", loop_ns), RK("mpi_ns", mpi_ns), RK("idle_ns", idle_ns));
FIELDS(runrec_rank_roofline, RK("compute_bound_pct", compute_bound_pct), RK("compute_util_pct", compute_util_pct),
       RK("memory_util_pct", memory_util_pct), RK("operation_intensity", op_intensity));
FIELDS(runrec_inst_ids, IN("rank", rank), IN("node_id", node_id));
FIELDS(runrec_inst_figures, IN("group_size", group_size), IN("bytes", bytes), IN("start_ns", start_ns),
       IN("time_ns", time_ns), IN("time_min_ns", time_min_ns), IN("time_median_ns", time_median_ns),
       IN("time_max_ns", time_max_ns));

static const char *const compute_names[] = {"wait", "sleep", "skip"};

const char *runrec_compute_name(int mode) { return mode >= 0 && mode < 3 ? compute_names[mode] : "wait"; }

int runrec_compute_parse(const char *name) {
  for (int m = 0; m < 3; m++)
    if (strcmp(name, compute_names[m]) == 0) return m;
  return -1;
}

uint64_t runrec_replayer_ns(const chakra_run_rank *k) {
  uint64_t waited = k->mpi_ns + k->idle_ns;
  return k->loop_ns > waited ? k->loop_ns - waited : 0;
}

int runrec_makespan_spread(const chakra_run_record *r, runrec_spread *out) {
  memset(out, 0, sizeof *out);
  uint32_t n = r->makespan_ns ? r->iterations : 0;
  if (!n) return 0;
  uint64_t *v = malloc(n * sizeof *v);
  if (!v) return CHAKRA_ENOMEM;
  memcpy(v, r->makespan_ns, n * sizeof *v);
  qsort(v, n, sizeof *v, cmp_u64);
  sum128 sum = 0;
  for (uint32_t i = 0; i < n; i++) sum += v[i];
  out->mean = mean_of(sum, n);
  double sq = 0, mean = (double)(uint64_t)(sum / n) + (double)(uint64_t)(sum % n) / n;
  for (uint32_t i = 0; i < n; i++) sq += ((double)v[i] - mean) * ((double)v[i] - mean);
  out->min = v[0], out->median = v[(n - 1) / 2], out->max = v[n - 1];
  out->stddev = n > 1 ? (uint64_t)llround(sqrt(sq / (n - 1))) : 0;
  free(v);
  return 0;
}
