/* report.c - the replay report as JSON, in the simulator report's schema
 * (see chakra_sim_write_report) with the replay's own additions; see
 * chakra/replay.h. Rank 0 only; no MPI here. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cmp.h"
#include "../util/jsonw.h"
#include "../util/outfile.h"
#include "chakra/attr.h"
#include "chakra/replay.h"

static void collectives(jsonw *w, const chakra_replay_rank *k) {
  jsonw_lit(w, ",\"collectives\":{");
  int first = 1;
  for (int c = 0; c < CHAKRA_REPLAY_COLLS; c++) {
    if (!k->coll_ops[c]) continue;
    if (!first) jsonw_char(w, ',');
    first = 0;
    jsonw_char(w, '"');
    jsonw_lit(w, chakra_comm_type_name(c));
    jsonw_lit(w, "\":{");
    jsonw_key_u64(w, "count", k->coll_ops[c], 0);
    jsonw_key_u64(w, "bytes", k->coll_bytes[c], 1);
    jsonw_key_u64(w, "time_ns", k->coll_ns[c], 1);
    jsonw_char(w, '}');
  }
  jsonw_char(w, '}');
}

/* busy_ns is in CHAKRA_CAT_* order: GPU, CPU, Comm, Remote mem, Invalid. */
static void rank_object(jsonw *w, uint32_t r, const chakra_replay_rank *k) {
  uint64_t gpu = k->busy_ns[0], comm = k->busy_ns[2];
  jsonw_lit(w, "{\"rank\":");
  jsonw_u64(w, r);
  jsonw_lit(w, k->finished ? ",\"finished\":true" : ",\"finished\":false");
  jsonw_key_u64(w, "finish_ns", k->finish_ns, 1);
  jsonw_key_u64(w, "exposed_comm_ns", k->exposed_comm_ns, 1);
  jsonw_key_u64(w, "wall_ns", k->wall_ns, 1);
  jsonw_key_u64(w, "gpu_ns", gpu, 1);
  jsonw_key_u64(w, "cpu_ns", k->busy_ns[1], 1);
  jsonw_key_u64(w, "comm_ns", comm, 1);
  jsonw_key_u64(w, "remote_mem_ns", k->busy_ns[3], 1);
  jsonw_key_u64(w, "invalid_ns", k->busy_ns[4], 1);
  jsonw_key_u64(w, "overlap_ns", gpu + comm > k->wall_ns ? gpu + comm - k->wall_ns : 0, 1);
  jsonw_key_u64(w, "nodes", k->nodes, 1);
  jsonw_key_u64(w, "nodes_done", k->nodes_done, 1);
  collectives(w, k);
  jsonw_key_u64(w, "p2p_sends", k->send_ops, 1);
  jsonw_key_u64(w, "p2p_bytes", k->send_bytes, 1);
  jsonw_key_u64(w, "finish_min_ns", k->finish_min_ns, 1);
  jsonw_key_u64(w, "finish_median_ns", k->finish_median_ns, 1);
  jsonw_key_u64(w, "finish_max_ns", k->finish_max_ns, 1);
  jsonw_key_u64(w, "loop_ns", k->loop_ns, 1);
  jsonw_key_u64(w, "mpi_ns", k->mpi_ns, 1);
  jsonw_key_u64(w, "idle_ns", k->idle_ns, 1);
  /* The replayer's own time: what the overhead floor is about. */
  uint64_t waited = k->mpi_ns + k->idle_ns;
  jsonw_key_u64(w, "replayer_ns", k->loop_ns > waited ? k->loop_ns - waited : 0, 1);
  jsonw_char(w, '}');
}

static void iterations(jsonw *w, const chakra_replay_result *r) {
  static const char *const modes[] = {"wait", "sleep", "skip"};
  jsonw_lit(w, ",\"replay\":{\"compute\":\"");
  jsonw_lit(w, r->compute >= 0 && r->compute < 3 ? modes[r->compute] : "wait");
  jsonw_char(w, '"');
  jsonw_key_double(w, "compute_scale", r->compute_scale);
  jsonw_key_u64(w, "iterations", r->iterations, 1);
  jsonw_key_u64(w, "warmup", r->warmup, 1);
  jsonw_lit(w, ",\"makespan_ns\":[");
  double sum = 0, sq = 0;
  uint32_t n = r->makespan_ns ? r->iterations : 0;
  for (uint32_t i = 0; i < n; i++) {
    if (i) jsonw_char(w, ',');
    jsonw_u64(w, r->makespan_ns[i]);
    sum += (double)r->makespan_ns[i];
  }
  jsonw_char(w, ']');
  uint64_t *v = malloc((n ? n : 1) * sizeof *v);
  if (v && n) {
    memcpy(v, r->makespan_ns, n * sizeof *v);
    qsort(v, n, sizeof *v, cmp_u64);
    double mean = sum / n;
    for (uint32_t i = 0; i < n; i++) sq += ((double)v[i] - mean) * ((double)v[i] - mean);
    jsonw_key_u64(w, "makespan_min_ns", v[0], 1);
    jsonw_key_u64(w, "makespan_median_ns", v[(n - 1) / 2], 1);
    jsonw_key_u64(w, "makespan_max_ns", v[n - 1], 1);
    jsonw_key_double(w, "makespan_mean_ns", mean);
    jsonw_key_double(w, "makespan_stddev_ns", n > 1 ? sqrt(sq / (n - 1)) : 0.0);
  }
  free(v);
  jsonw_char(w, '}');
}

static void instances(jsonw *w, const chakra_replay_result *r) {
  jsonw_lit(w, ",\"collective_instances\":[");
  for (uint64_t i = 0; i < r->n_instances; i++) {
    const chakra_replay_instance *x = &r->instances[i];
    jsonw_lit(w, i ? ",\n{" : "\n{");
    jsonw_key_u64(w, "rank", x->rank, 0);
    jsonw_key_u64(w, "node_id", x->node_id, 1);
    jsonw_lit(w, ",\"type\":\"");
    const char *t = chakra_comm_type_name((int64_t)x->comm_type);
    jsonw_lit(w, t ? t : "UNKNOWN");
    jsonw_lit(w, "\",\"pg\":");
    const char *g = x->group >= 0 && (uint64_t)x->group < r->n_groups ? r->groups[x->group] : "";
    jsonw_string(w, g, strlen(g));
    jsonw_key_u64(w, "bytes", x->bytes, 1);
    jsonw_key_u64(w, "start_ns", x->start_ns, 1);
    jsonw_key_u64(w, "time_ns", x->time_ns, 1);
    jsonw_key_u64(w, "time_min_ns", x->time_min_ns, 1);
    jsonw_key_u64(w, "time_median_ns", x->time_median_ns, 1);
    jsonw_key_u64(w, "time_max_ns", x->time_max_ns, 1);
    jsonw_char(w, '}');
  }
  jsonw_lit(w, "]");
}

static void body(jsonw *w, const chakra_replay_result *r) {
  jsonw_lit(w, "{\"npus\":");
  jsonw_u64(w, r->npus);
  jsonw_key_u64(w, "events", r->nodes, 1);
  jsonw_key_u64(w, "messages", r->messages, 1);
  char wall[64];
  snprintf(wall, sizeof wall, ",\"wall_clock_s\":%.3f", r->wall_seconds);
  jsonw_lit(w, wall);
  uint64_t finish = 0;
  for (uint32_t k = 0; r->ranks && k < r->npus; k++)
    if (r->ranks[k].finish_ns > finish) finish = r->ranks[k].finish_ns;
  jsonw_key_u64(w, "max_finish_ns", finish, 1);
  jsonw_lit(w, ",\"ranks\":[\n");
  for (uint32_t k = 0; r->ranks && k < r->npus; k++) {
    if (k) jsonw_lit(w, ",\n");
    rank_object(w, k, &r->ranks[k]);
  }
  jsonw_lit(w, "\n],\"stuck\":[");
  for (uint32_t i = 0; i < r->n_stuck; i++) {
    if (i) jsonw_char(w, ',');
    jsonw_string(w, r->stuck[i], strlen(r->stuck[i]));
  }
  jsonw_char(w, ']');
  iterations(w, r);
  instances(w, r);
  jsonw_lit(w, "}\n");
}

int chakra_replay_write_report(const chakra_replay_result *r, const char *path, chakra_error *err) {
  outfile *f;
  int rc = outfile_open(&f, path, outfile_name_is_gzip(path), err);
  if (rc) return rc;
  jsonw w;
  if (jsonw_init(&w, f)) {
    outfile_discard(f);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  body(&w, r);
  if (jsonw_flush(&w)) {
    rc = w.err.code ? w.err.code : CHAKRA_EIO;
    if (err) *err = w.err;
  }
  jsonw_free(&w);
  if (rc) {
    outfile_discard(f);
    return rc;
  }
  return outfile_commit(f, err);
}
