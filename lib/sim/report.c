/* report.c - timeline and JSON report; see report.h and chakra/sim.h. */
#include "report.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../util/jsonw.h"
#include "../util/outfile.h"
#include "chakra/attr.h"
#include "chakra/sim.h"
#include "chakra/timeline.h"
#include "chakra/trace.h"
#include "workload.h"

static const char *const track_names[] = {"CPU", "GPU compute", "GPU communication", "receives"};

/* The timeline is written by the same writer as `chakra timeline`
 * (chakra/timeline.h), so both tools' files look alike. */
static int rank_events(sim *s, chakra_timeline *t, uint32_t r) {
  char pname[32];
  const char *path = wl_names_path(s, r);
  snprintf(pname, sizeof pname, "rank %u", r);
  chakra_timeline_process(t, r, pname);
  for (uint32_t k = 0; k < 4; k++) chakra_timeline_track(t, r, k, track_names[k]);
  chakra_reader *rd;
  if (!path) return chakra_error_set(s->err, CHAKRA_EINVAL, "%s: no trace file to read the node names from", wl_path(s, r));
  int rc = chakra_reader_open(&rd, path, NULL, s->err);
  if (rc) return rc;
  chakra_node *n;
  uint32_t i = 0, count = wl_nodes(s, r);
  while (i < count && (rc = chakra_reader_next(rd, &n, s->err)) == 1) {
    wl_node_view v;
    wl_node_at(s, r, i++, &v);
    if (v.start == UINT64_MAX || v.end == UINT64_MAX) continue;
    const char *type = chakra_node_type_name(n->type);
    chakra_timeline_slice(t, r, (uint32_t)v.track, n->name ? n->name : "", n->name ? strlen(n->name) : 0,
                          type ? type : "UNKNOWN", v.start, v.end - v.start, v.id);
  }
  chakra_reader_close(rd);
  return rc < 0 ? rc : 0;
}

int report_timeline(sim *s, const char *path) {
  chakra_timeline *t;
  int rc = chakra_timeline_open(&t, path, s->err);
  if (rc) return rc;
  for (uint32_t r = 0; r < s->npus && !rc; r++) rc = rank_events(s, t, r);
  if (rc) {
    chakra_timeline_discard(t);
    return rc;
  }
  return chakra_timeline_close(t, s->err);
}

/* ---- JSON report ---- */

static const char *const coll_names[CHAKRA_SIM_COLLS] = {"ALL_REDUCE", "ALL_GATHER", "REDUCE_SCATTER", "ALL_TO_ALL"};

static void report_roofline(jsonw *w, const chakra_sim_rank *k) {
  jsonw_key_double(w, "compute_bound_pct", k->compute_bound_pct);
  jsonw_key_double(w, "compute_util_pct", k->compute_util_pct);
  jsonw_key_double(w, "memory_util_pct", k->memory_util_pct);
  jsonw_key_double(w, "operation_intensity", k->op_intensity);
}

static void report_rank(jsonw *w, uint32_t r, const chakra_sim_rank *k, int roofline) {
  uint64_t gpu = k->busy_ns[CHAKRA_CAT_GPU], comm = k->busy_ns[CHAKRA_CAT_COMM];
  jsonw_lit(w, "{\"rank\":");
  jsonw_u64(w, r);
  jsonw_lit(w, k->finished ? ",\"finished\":true" : ",\"finished\":false");
  jsonw_key_u64(w, "finish_ns", k->finish_ns, 1);
  jsonw_key_u64(w, "exposed_comm_ns", k->exposed_comm_ns, 1);
  jsonw_key_u64(w, "wall_ns", k->wall_ns, 1);
  jsonw_key_u64(w, "gpu_ns", gpu, 1);
  jsonw_key_u64(w, "cpu_ns", k->busy_ns[CHAKRA_CAT_CPU], 1);
  jsonw_key_u64(w, "comm_ns", comm, 1);
  jsonw_key_u64(w, "remote_mem_ns", k->busy_ns[CHAKRA_CAT_MEM], 1);
  jsonw_key_u64(w, "invalid_ns", k->busy_ns[CHAKRA_CAT_INVALID], 1);
  jsonw_key_u64(w, "overlap_ns", gpu + comm > k->wall_ns ? gpu + comm - k->wall_ns : 0, 1);
  jsonw_key_u64(w, "nodes", k->nodes, 1);
  jsonw_key_u64(w, "nodes_done", k->nodes_done, 1);
  if (roofline) report_roofline(w, k);
  jsonw_lit(w, ",\"collectives\":{");
  int first = 1;
  for (int c = 0; c < CHAKRA_SIM_COLLS; c++) {
    if (!k->coll_ops[c]) continue;
    if (!first) jsonw_char(w, ',');
    first = 0;
    jsonw_char(w, '"');
    jsonw_lit(w, coll_names[c]);
    jsonw_lit(w, "\":{");
    jsonw_key_u64(w, "count", k->coll_ops[c], 0);
    jsonw_key_u64(w, "bytes", k->coll_bytes[c], 1);
    jsonw_key_u64(w, "time_ns", k->coll_ns[c], 1);
    jsonw_char(w, '}');
  }
  jsonw_char(w, '}');
  jsonw_key_u64(w, "p2p_sends", k->send_ops, 1);
  jsonw_key_u64(w, "p2p_bytes", k->send_bytes, 1);
  jsonw_char(w, '}');
}

static int write_report(const chakra_sim_result *r, outfile *f, chakra_error *err);

int chakra_sim_write_report(const chakra_sim_result *r, const char *path, chakra_error *err) {
  outfile *f;
  int rc = outfile_open(&f, path, outfile_name_is_gzip(path), err);
  return rc ? rc : write_report(r, f, err);
}

int chakra_sim_write_report_to(const chakra_sim_result *r, const chakra_sink *out, chakra_error *err) {
  outfile *f;
  int rc = outfile_open_sink(&f, out, err);
  return rc ? rc : write_report(r, f, err);
}

/* Writes the report into f and commits it (or discards it). */
static int write_report(const chakra_sim_result *r, outfile *f, chakra_error *err) {
  int rc = 0;
  jsonw w;
  if (jsonw_init(&w, f)) {
    outfile_discard(f);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  jsonw_lit(&w, "{\"npus\":");
  jsonw_u64(&w, r->npus);
  jsonw_key_u64(&w, "events", r->events, 1);
  jsonw_key_u64(&w, "messages", r->messages, 1);
  char wall[64];
  snprintf(wall, sizeof wall, ",\"wall_clock_s\":%.3f", r->wall_seconds);
  jsonw_lit(&w, wall);
  if (r->symmetry) { /* how many NPUs the run simulated for the ranks, and why */
    jsonw_key_u64(&w, "classes", r->classes, 1);
    jsonw_key_u64(&w, "simulated_npus", r->simulated, 1);
    jsonw_lit(&w, ",\"symmetry\":");
    jsonw_string(&w, r->symmetry, strlen(r->symmetry));
  }
  uint64_t finish = 0;
  for (uint32_t k = 0; k < r->npus; k++)
    if (r->ranks[k].finish_ns > finish) finish = r->ranks[k].finish_ns;
  jsonw_key_u64(&w, "max_finish_ns", finish, 1);
  jsonw_lit(&w, ",\"ranks\":[\n");
  for (uint32_t k = 0; k < r->npus; k++) {
    if (k) jsonw_lit(&w, ",\n");
    report_rank(&w, k, &r->ranks[k], r->roofline);
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

/* ---- result lines ---- */

static int cmp_finish(const void *a, const void *b, void *ctx) {
  const chakra_sim_rank *r = ctx;
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  if (r[x].finish_ns != r[y].finish_ns) return r[x].finish_ns < r[y].finish_ns ? -1 : 1;
  return x < y ? -1 : x > y;
}

uint32_t chakra_sim_finish_order(const chakra_sim_result *r, uint32_t *order) {
  uint32_t n = 0;
  for (uint32_t k = 0; k < r->npus; k++)
    if (r->ranks[k].finished) order[n++] = k;
  qsort_r(order, n, sizeof *order, cmp_finish, r->ranks);
  return n;
}

__attribute__((format(printf, 4, 5))) static void line(chakra_sim_line_fn fn, void *ctx, const char *logger,
                                                       const char *fmt, ...) {
  char text[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  fn(ctx, logger, text);
}

static void stat_lines(const chakra_sim_rank *k, uint32_t r, chakra_sim_line_fn fn, void *ctx) {
  static const char *const cat[CHAKRA_CAT_N] = {"GPU", "CPU", "Comm", "Remote mem", "Invalid"};
  static const int order[CHAKRA_CAT_N] = {CHAKRA_CAT_CPU, CHAKRA_CAT_GPU, CHAKRA_CAT_COMM, CHAKRA_CAT_MEM,
                                          CHAKRA_CAT_INVALID};
  line(fn, ctx, "statistics", "sys[%u], Wall time: %llu", r, (unsigned long long)k->wall_ns);
  for (int i = 0; i < CHAKRA_CAT_N; i++)
    if (k->busy_ns[order[i]])
      line(fn, ctx, "statistics", "sys[%u], %s time: %llu", r, cat[order[i]], (unsigned long long)k->busy_ns[order[i]]);
  uint64_t both = k->busy_ns[CHAKRA_CAT_GPU] + k->busy_ns[CHAKRA_CAT_COMM];
  if (both > k->wall_ns)
    line(fn, ctx, "statistics", "sys[%u], Total compute-communication overlap: %llu", r,
         (unsigned long long)(both - k->wall_ns));
}

static void roofline_lines(const chakra_sim_rank *k, uint32_t r, chakra_sim_line_fn fn, void *ctx) {
  line(fn, ctx, "statistics", "sys[%u], Compute bound percentage: %.3f%%", r, k->compute_bound_pct);
  line(fn, ctx, "statistics", "sys[%u], Average compute utilization: %.3f%%", r, k->compute_util_pct);
  line(fn, ctx, "statistics", "sys[%u], Average memory utilization: %.3f%%", r, k->memory_util_pct);
  line(fn, ctx, "statistics", "sys[%u], Average operation intensity: %.3f", r, k->op_intensity);
}

void chakra_sim_rank_lines(const chakra_sim_result *r, uint32_t rank, unsigned which, chakra_sim_line_fn fn,
                           void *ctx) {
  const chakra_sim_rank *k = &r->ranks[rank];
  if (which & CHAKRA_SIM_LINE_FINISHED)
    line(fn, ctx, "workload", "sys[%u] finished, %llu cycles, exposed communication %llu cycles.", rank,
         (unsigned long long)k->finish_ns, (unsigned long long)k->exposed_comm_ns);
  if (which & CHAKRA_SIM_LINE_POST) {
    line(fn, ctx, "statistics", "sys[%u]. Post statistics processing start.", rank);
    line(fn, ctx, "statistics", "sys[%u]. Post statistics processing end.", rank);
  }
  if (!(which & CHAKRA_SIM_LINE_STATS)) return;
  stat_lines(k, rank, fn, ctx);
  if (r->roofline) roofline_lines(k, rank, fn, ctx);
}

/* ---- log folder ---- */

struct report_log {
  outfile *log, *err;
  char stamp[64];      /* "[YYYY-MM-DD HH:MM:SS.mmm] ", ASTRA-sim's line head */
  int rc;              /* first write error; later writes are skipped */
  chakra_error *e;
};

/* Creates dir and its missing parents, as the reference's logger does. */
static int make_dirs(const char *dir, chakra_error *err) {
  char *p = strdup(dir);
  if (!p) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  int rc = 0;
  for (char *c = p + 1; !rc; c++) {
    if (*c != '/' && *c) continue;
    char keep = *c;
    *c = 0;
    if (mkdir(p, 0777) && errno != EEXIST)
      rc = chakra_error_set(err, CHAKRA_EIO, "%s: cannot create the logging folder: %s", p, strerror(errno));
    *c = keep;
    if (!keep) break;
  }
  free(p);
  struct stat st;
  if (!rc && (stat(dir, &st) || !S_ISDIR(st.st_mode)))
    rc = chakra_error_set(err, CHAKRA_EIO, "%s: the logging folder is not a folder", dir);
  return rc;
}

static int open_in(outfile **f, const char *dir, const char *name, chakra_error *err) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *path = malloc(n);
  if (!path) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  snprintf(path, n, "%s/%s", dir, name);
  int rc = outfile_open(f, path, 0, err);
  free(path);
  return rc;
}

int report_log_open(report_log **out, const char *dir, chakra_error *err) {
  *out = NULL;
  int rc = make_dirs(dir, err);
  if (rc) return rc;
  report_log *lg = calloc(1, sizeof *lg);
  if (!lg) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  rc = open_in(&lg->log, dir, "log.log", err);
  if (!rc) rc = open_in(&lg->err, dir, "err.log", err);
  if (rc) {
    report_log_discard(lg);
    return rc;
  }
  *out = lg;
  return 0;
}

void report_log_discard(report_log *lg) {
  if (!lg) return;
  if (lg->log) outfile_discard(lg->log);
  if (lg->err) outfile_discard(lg->err);
  free(lg);
}

/* One time for every line: the lines are written after the run, and a
 * clock read per trace line would cost more than the line. */
static void set_stamp(report_log *lg) {
  struct timespec ts;
  struct tm tm;
  clock_gettime(CLOCK_REALTIME, &ts);
  localtime_r(&ts.tv_sec, &tm);
  char day[32];
  strftime(day, sizeof day, "%Y-%m-%d %H:%M:%S", &tm);
  snprintf(lg->stamp, sizeof lg->stamp, "[%s.%03ld] ", day, ts.tv_nsec / 1000000);
}

static void log_write(report_log *lg, const char *text, size_t len) {
  if (!lg->rc) lg->rc = outfile_write(lg->log, text, len, lg->e);
}

static void log_put(report_log *lg, const char *logger, const char *level, const char *text) {
  char head[128];
  int n = snprintf(head, sizeof head, "%s[%s] [%s] ", lg->stamp, logger, level);
  log_write(lg, head, n < (int)sizeof head ? (size_t)n : sizeof head - 1);
  log_write(lg, text, strlen(text));
  log_write(lg, "\n", 1);
}

static void log_info(void *ctx, const char *logger, const char *text) { log_put(ctx, logger, "info", text); }

/* What follows "node->id=" in a rank's trace lines, per node, back to back:
 * the simulator keeps no names, so they are read back from the traces. */
typedef struct rank_names {
  char *text;
  size_t *off;  /* n + 1 offsets into text */
} rank_names;

static int names_from(chakra_reader *rd, uint32_t count, rank_names *out, const char *path, chakra_error *err) {
  size_t len = 0;
  FILE *m = open_memstream(&out->text, &len);
  if (!m) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  int rc = 0;
  for (uint32_t i = 0; i < count && !rc; i++) {
    chakra_node *n;
    out->off[i] = (size_t)ftello(m);
    int got = chakra_reader_next(rd, &n, err);
    if (got < 0) rc = got;
    else if (got == 0)
      rc = chakra_error_set(err, CHAKRA_EFORMAT, "%s: has fewer nodes than when it was simulated", path);
    else if (fprintf(m, "%llu, node->name=%s, node->type=%d", (unsigned long long)n->id, n->name ? n->name : "",
                     (int)n->type) < 0)
      rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  out->off[count] = (size_t)ftello(m);
  if (fclose(m) && !rc) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  return rc;
}

static int read_names(sim *s, uint32_t r, rank_names *out) {
  const char *path = wl_names_path(s, r);
  uint32_t count = wl_nodes(s, r);
  out->off = malloc(((size_t)count + 1) * sizeof *out->off);
  if (!out->off) return chakra_error_set(s->err, CHAKRA_ENOMEM, "out of memory");
  chakra_reader *rd;
  if (!path) return chakra_error_set(s->err, CHAKRA_EINVAL, "%s: no trace file to read the node names from", wl_path(s, r));
  int rc = chakra_reader_open(&rd, path, NULL, s->err);
  if (rc) return rc;
  rc = names_from(rd, count, out, path, s->err);
  chakra_reader_close(rd);
  return rc;
}

static void free_names(rank_names *v, uint32_t n) {
  for (uint32_t r = 0; v && r < n; r++) {
    free(v[r].text);
    free(v[r].off);
  }
  free(v);
}

static void trace_line(report_log *lg, const wl_trace_ev *e, const rank_names *names) {
  uint32_t r = e->rank & ~WL_TRACE_DONE;
  const rank_names *nm = &names[r];
  char head[256];
  int n = snprintf(head, sizeof head, "%s[workload] [debug] %s,sys->id=%u, tick=%llu, node->id=", lg->stamp,
                   e->rank & WL_TRACE_DONE ? "callback" : "issue", r, (unsigned long long)e->tick);
  log_write(lg, head, n < (int)sizeof head ? (size_t)n : sizeof head - 1);
  log_write(lg, nm->text + nm->off[e->node], nm->off[e->node + 1] - nm->off[e->node]);
  log_write(lg, "\n", 1);
}

static void rank_block(report_log *lg, const chakra_sim_result *r, uint32_t rank) {
  chakra_sim_rank_lines(r, rank, CHAKRA_SIM_LINE_FINISHED | CHAKRA_SIM_LINE_POST | CHAKRA_SIM_LINE_STATS, log_info, lg);
}

/* A rank's lines follow the events of the tick it finished at; ranks come
 * in stdout order, which is by finish time. */
static int write_body(report_log *lg, sim *s, const chakra_sim_result *r, const uint32_t *order, uint32_t n) {
  size_t n_ev;
  const wl_trace_ev *ev = wl_trace_events(s, &n_ev);
  rank_names *names = n_ev ? calloc(s->npus, sizeof *names) : NULL;
  if (n_ev && !names) return chakra_error_set(s->err, CHAKRA_ENOMEM, "out of memory");
  int rc = 0;
  for (uint32_t k = 0; n_ev && k < s->npus && !rc; k++) rc = read_names(s, k, &names[k]);
  uint32_t k = 0;
  for (size_t e = 0; e < n_ev && !rc; e++) {
    for (; k < n && r->ranks[order[k]].finish_ns < ev[e].tick; k++) rank_block(lg, r, order[k]);
    trace_line(lg, &ev[e], names);
  }
  for (; k < n && !rc; k++) rank_block(lg, r, order[k]);
  free_names(names, s->npus);
  return rc ? rc : lg->rc;
}

int report_log_commit(report_log *lg, sim *s, const chakra_sim_result *r) {
  lg->e = s->err;
  set_stamp(lg);
  uint32_t *order = malloc((r->npus ? r->npus : 1) * sizeof *order);
  if (!order) {
    report_log_discard(lg);
    return chakra_error_set(s->err, CHAKRA_ENOMEM, "out of memory");
  }
  uint32_t n = chakra_sim_finish_order(r, order);
  int rc = write_body(lg, s, r, order, n);
  free(order);
  if (!rc) log_put(lg, "system", "warning", "Exiting");
  if (!rc) rc = lg->rc;
  if (!rc) {
    rc = outfile_commit(lg->log, s->err);
    lg->log = NULL;
  }
  if (!rc) {
    rc = outfile_commit(lg->err, s->err);
    lg->err = NULL;
  }
  report_log_discard(lg);
  return rc;
}

/* ---- the summary over ranks ---- */

__extension__ typedef unsigned __int128 sum128;

/* sum / n rounded to the nearest integer, halves up (n > 0). The mean of
 * 64-bit values fits 64 bits. */
static uint64_t mean_of(sum128 sum, uint32_t n) { return (uint64_t)((sum + n / 2) / n); }

void chakra_sim_summarise(const chakra_sim_result *r, chakra_sim_summary *out) {
  memset(out, 0, sizeof *out);
  sum128 fin = 0, exposed = 0, comm = 0, gpu = 0;
  out->min_finish_ns = r->npus ? UINT64_MAX : 0;
  for (uint32_t k = 0; k < r->npus; k++) {
    const chakra_sim_rank *x = &r->ranks[k];
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
