/* report.c - what a finished simulation writes besides the run record:
 * its timeline, ASTRA-sim's result lines and log folder; see report.h and
 * chakra/sim.h. The record's writers are lib/report's. */
#include "report.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../report/timeline.h"
#include "../util/outfile.h"
#include "../util/textout.h"
#include "chakra/attr.h"
#include "chakra/sim.h"
#include "chakra/trace.h"
#include "net.h"
#include "workload.h"

typedef struct sim_rank_ref {
  sim *s;
  uint32_t rank;
} sim_rank_ref;

/* Node i of a rank as the simulator ran it (the workload keeps no names:
 * the timeline reads them back from the trace). */
static int sim_span(void *ctx, uint32_t i, const chakra_node *n, timeline_span *out) {
  (void)n;
  const sim_rank_ref *x = ctx;
  wl_node_view v;
  wl_node_at(x->s, x->rank, i, &v);
  if (v.start == UINT64_MAX || v.end == UINT64_MAX) return 0;
  *out = (timeline_span){.id = v.id, .start = v.start, .end = v.end, .track = (uint32_t)v.track};
  return 1;
}

static int rank_events(sim *s, chakra_timeline *t, uint32_t r) {
  const char *path = wl_names_path(s, r);
  chakra_reader *rd;
  if (!path) return chakra_error_set(s->err, CHAKRA_EINVAL, "%s: no trace file to read the node names from", wl_path(s, r));
  int rc = chakra_reader_open(&rd, path, NULL, s->err);
  if (rc) return rc;
  sim_rank_ref x = {s, r};
  rc = timeline_slot_rank(t, r, rd, wl_nodes(s, r), sim_span, &x, s->err);
  chakra_reader_close(rd);
  return rc;
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

/* ---- link report ---- */

static void link_object(jsonw *w, const chakra_topo_link *l, uint64_t i, const net_link_stat *st, uint64_t span) {
  jsonw_lit(w, i ? ",\n{" : "\n{");
  jsonw_key_u64(w, "link", i, 0);
  jsonw_key_u64(w, "src", l->src, 1);
  jsonw_key_u64(w, "dst", l->dst, 1);
  jsonw_key_u64(w, "dim", (uint64_t)l->dim, 1);
  jsonw_key_double(w, "bandwidth_gbps", l->bytes_per_ns * 1e9 / (1u << 30));
  jsonw_key_u64(w, "busy_ns", st->busy_ns, 1);
  jsonw_key_u64(w, "bytes", st->bytes, 1);
  jsonw_key_u64(w, "messages", st->messages, 1);
  jsonw_key_double(w, "utilisation", span ? (double)st->busy_ns / (double)span : 0.0);
  jsonw_char(w, '}');
}

int report_links(sim *s, const chakra_run_record *r, const char *path) {
  const net_link_stat *stats = net_link_stats(s);
  uint64_t n = chakra_topo_links(s->topo);
  chakra_run_summary sum;
  chakra_run_summarise(r, &sum);
  uint64_t span = sum.max_finish_ns;
  textout t;
  int rc = textout_open(&t, path, s->err);
  if (rc) return rc;
  jsonw *w = &t.w;
  jsonw_lit(w, "{\"npus\":");
  jsonw_u64(w, s->npus);
  jsonw_key_u64(w, "devices", chakra_topo_devices(s->topo), 1);
  jsonw_key_u64(w, "dims", (uint64_t)s->dims, 1);
  jsonw_key_u64(w, "makespan_ns", span, 1);
  jsonw_lit(w, ",\"links\":[");
  for (uint64_t i = 0; i < n && stats; i++) {
    chakra_topo_link l;
    if (chakra_topo_link_at(s->topo, i, &l) == 0) link_object(w, &l, i, &stats[i], span);
  }
  jsonw_lit(w, "\n]}\n");
  return textout_close(&t, stats ? 0 : chakra_error_set(s->err, CHAKRA_EINVAL, "no link was counted"), s->err);
}

/* ---- result lines ---- */

__attribute__((format(printf, 4, 5))) static void line(chakra_sim_line_fn fn, void *ctx, const char *logger,
                                                       const char *fmt, ...) {
  char text[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  fn(ctx, logger, text);
}

static void stat_lines(const chakra_run_rank *k, uint32_t r, chakra_sim_line_fn fn, void *ctx) {
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

static void roofline_lines(const chakra_run_rank *k, uint32_t r, chakra_sim_line_fn fn, void *ctx) {
  line(fn, ctx, "statistics", "sys[%u], Compute bound percentage: %.3f%%", r, k->compute_bound_pct);
  line(fn, ctx, "statistics", "sys[%u], Average compute utilization: %.3f%%", r, k->compute_util_pct);
  line(fn, ctx, "statistics", "sys[%u], Average memory utilization: %.3f%%", r, k->memory_util_pct);
  line(fn, ctx, "statistics", "sys[%u], Average operation intensity: %.3f", r, k->op_intensity);
}

void chakra_sim_rank_lines(const chakra_run_record *r, uint32_t rank, unsigned which, chakra_sim_line_fn fn,
                           void *ctx) {
  const chakra_run_rank *k = &r->ranks[rank];
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

static void rank_block(report_log *lg, const chakra_run_record *r, uint32_t rank) {
  chakra_sim_rank_lines(r, rank, CHAKRA_SIM_LINE_FINISHED | CHAKRA_SIM_LINE_POST | CHAKRA_SIM_LINE_STATS, log_info, lg);
}

/* A rank's lines follow the events of the tick it finished at; ranks come
 * in stdout order, which is by finish time. */
static int write_body(report_log *lg, sim *s, const chakra_run_record *r, const uint32_t *order, uint32_t n) {
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

int report_log_commit(report_log *lg, sim *s, const chakra_run_record *r) {
  lg->e = s->err;
  set_stamp(lg);
  uint32_t *order = malloc((r->npus ? r->npus : 1) * sizeof *order);
  if (!order) {
    report_log_discard(lg);
    return chakra_error_set(s->err, CHAKRA_ENOMEM, "out of memory");
  }
  uint32_t n = chakra_run_finish_order(r, order);
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
