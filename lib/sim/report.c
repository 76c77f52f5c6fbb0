/* report.c - timeline and JSON report; see report.h and chakra/sim.h. */
#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/jsonw.h"
#include "../util/outfile.h"
#include "chakra/attr.h"
#include "chakra/sim.h"
#include "chakra/trace.h"
#include "workload.h"

static const char *const track_names[] = {"CPU", "GPU compute", "GPU communication", "receives"};

/* Microseconds with nanosecond precision: 12345 ns -> 12.345 */
static void put_us(jsonw *w, uint64_t ns) {
  jsonw_u64(w, ns / 1000);
  char frac[5] = {'.', (char)('0' + ns / 100 % 10), (char)('0' + ns / 10 % 10), (char)('0' + ns % 10), 0};
  jsonw_raw(w, frac, 4);
}

static void meta_event(jsonw *w, const char *what, uint32_t pid, int tid, const char *name, int *first) {
  jsonw_lit(w, *first ? "\n" : ",\n");
  *first = 0;
  jsonw_lit(w, "{\"ph\":\"M\",\"name\":\"");
  jsonw_lit(w, what);
  jsonw_lit(w, "\",\"pid\":");
  jsonw_u64(w, pid);
  if (tid >= 0) {
    jsonw_lit(w, ",\"tid\":");
    jsonw_u64(w, (uint64_t)tid);
  }
  jsonw_lit(w, ",\"args\":{\"name\":");
  jsonw_string(w, name, strlen(name));
  jsonw_lit(w, "}}");
}

static int rank_events(sim *s, jsonw *w, const char *prefix, uint32_t r, int *first) {
  char path[4096], pname[32];
  snprintf(path, sizeof path, "%s.%u.et", prefix, r);
  snprintf(pname, sizeof pname, "rank %u", r);
  meta_event(w, "process_name", r, -1, pname, first);
  for (int t = 0; t < 4; t++) meta_event(w, "thread_name", r, t, track_names[t], first);
  chakra_reader *rd;
  int rc = chakra_reader_open(&rd, path, NULL, s->err);
  if (rc) return rc;
  chakra_node *n;
  uint32_t i = 0, count = wl_nodes(s, r);
  while (i < count && (rc = chakra_reader_next(rd, &n, s->err)) == 1) {
    wl_node_view v;
    wl_node_at(s, r, i++, &v);
    if (v.start == UINT64_MAX || v.end == UINT64_MAX) continue;
    const char *type = chakra_node_type_name(n->type);
    jsonw_lit(w, ",\n{\"ph\":\"X\",\"name\":");
    jsonw_string(w, n->name ? n->name : "", n->name ? strlen(n->name) : 0);
    jsonw_lit(w, ",\"cat\":\"");
    jsonw_lit(w, type ? type : "UNKNOWN");
    jsonw_lit(w, "\",\"pid\":");
    jsonw_u64(w, r);
    jsonw_lit(w, ",\"tid\":");
    jsonw_u64(w, (uint64_t)v.track);
    jsonw_lit(w, ",\"ts\":");
    put_us(w, v.start);
    jsonw_lit(w, ",\"dur\":");
    put_us(w, v.end - v.start);
    jsonw_lit(w, ",\"args\":{\"node_id\":");
    jsonw_u64(w, v.id);
    jsonw_lit(w, "}}");
  }
  chakra_reader_close(rd);
  return rc < 0 ? rc : 0;
}

int report_timeline(sim *s, const char *prefix, const char *path) {
  outfile *f;
  int rc = outfile_open(&f, path, outfile_name_is_gzip(path), s->err);
  if (rc) return rc;
  jsonw w;
  if (jsonw_init(&w, f)) {
    outfile_discard(f);
    return chakra_error_set(s->err, CHAKRA_ENOMEM, "out of memory");
  }
  jsonw_lit(&w, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
  int first = 1;
  for (uint32_t r = 0; r < s->npus && !rc; r++) rc = rank_events(s, &w, prefix, r, &first);
  jsonw_lit(&w, "\n]}\n");
  if (!rc && jsonw_flush(&w)) {
    *s->err = w.err;
    rc = w.err.code ? w.err.code : CHAKRA_EIO;
  }
  jsonw_free(&w);
  if (rc) {
    outfile_discard(f);
    return rc;
  }
  return outfile_commit(f, s->err);
}

/* ---- JSON report ---- */

static const char *const coll_names[CHAKRA_SIM_COLLS] = {"ALL_REDUCE", "ALL_GATHER", "REDUCE_SCATTER", "ALL_TO_ALL"};

static void key_u64(jsonw *w, const char *k, uint64_t v, int comma) {
  if (comma) jsonw_char(w, ',');
  jsonw_char(w, '"');
  jsonw_lit(w, k);
  jsonw_lit(w, "\":");
  jsonw_u64(w, v);
}

static void report_rank(jsonw *w, uint32_t r, const chakra_sim_rank *k) {
  uint64_t gpu = k->busy_ns[CHAKRA_CAT_GPU], comm = k->busy_ns[CHAKRA_CAT_COMM];
  jsonw_lit(w, "{\"rank\":");
  jsonw_u64(w, r);
  jsonw_lit(w, k->finished ? ",\"finished\":true" : ",\"finished\":false");
  key_u64(w, "finish_ns", k->finish_ns, 1);
  key_u64(w, "exposed_comm_ns", k->exposed_comm_ns, 1);
  key_u64(w, "wall_ns", k->wall_ns, 1);
  key_u64(w, "gpu_ns", gpu, 1);
  key_u64(w, "cpu_ns", k->busy_ns[CHAKRA_CAT_CPU], 1);
  key_u64(w, "comm_ns", comm, 1);
  key_u64(w, "remote_mem_ns", k->busy_ns[CHAKRA_CAT_MEM], 1);
  key_u64(w, "invalid_ns", k->busy_ns[CHAKRA_CAT_INVALID], 1);
  key_u64(w, "overlap_ns", gpu + comm > k->wall_ns ? gpu + comm - k->wall_ns : 0, 1);
  key_u64(w, "nodes", k->nodes, 1);
  key_u64(w, "nodes_done", k->nodes_done, 1);
  jsonw_lit(w, ",\"collectives\":{");
  int first = 1;
  for (int c = 0; c < CHAKRA_SIM_COLLS; c++) {
    if (!k->coll_ops[c]) continue;
    if (!first) jsonw_char(w, ',');
    first = 0;
    jsonw_char(w, '"');
    jsonw_lit(w, coll_names[c]);
    jsonw_lit(w, "\":{");
    key_u64(w, "count", k->coll_ops[c], 0);
    key_u64(w, "bytes", k->coll_bytes[c], 1);
    key_u64(w, "time_ns", k->coll_ns[c], 1);
    jsonw_char(w, '}');
  }
  jsonw_char(w, '}');
  key_u64(w, "p2p_sends", k->send_ops, 1);
  key_u64(w, "p2p_bytes", k->send_bytes, 1);
  jsonw_char(w, '}');
}

int chakra_sim_write_report(const chakra_sim_result *r, const char *path, chakra_error *err) {
  outfile *f;
  int rc = outfile_open(&f, path, outfile_name_is_gzip(path), err);
  if (rc) return rc;
  jsonw w;
  if (jsonw_init(&w, f)) {
    outfile_discard(f);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  jsonw_lit(&w, "{\"npus\":");
  jsonw_u64(&w, r->npus);
  key_u64(&w, "events", r->events, 1);
  key_u64(&w, "messages", r->messages, 1);
  char wall[64];
  snprintf(wall, sizeof wall, ",\"wall_clock_s\":%.3f", r->wall_seconds);
  jsonw_lit(&w, wall);
  uint64_t finish = 0;
  for (uint32_t k = 0; k < r->npus; k++)
    if (r->ranks[k].finish_ns > finish) finish = r->ranks[k].finish_ns;
  key_u64(&w, "max_finish_ns", finish, 1);
  jsonw_lit(&w, ",\"ranks\":[\n");
  for (uint32_t k = 0; k < r->npus; k++) {
    if (k) jsonw_lit(&w, ",\n");
    report_rank(&w, k, &r->ranks[k]);
  }
  jsonw_lit(&w, "\n],\"stuck\":[");
  for (uint32_t i = 0; i < r->n_stuck; i++) {
    if (i) jsonw_char(&w, ',');
    jsonw_string(&w, r->stuck[i], strlen(r->stuck[i]));
  }
  jsonw_lit(&w, "]}\n");
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
