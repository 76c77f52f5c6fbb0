/* convwrite.c - the Chakra ET (and --log) chakra convert pytorch writes;
 * see convwrite.h. */
#include "convwrite.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util/outfile.h"
#include "../util/tasks.h"
#include "chakra/build.h"
#include "../util/strbuf.h"
#include "pyrepr.h"

static int put_meta(conv *c, chakra_builder *b) {
  const hostet *h = c->h;
  chakra_builder_metadata(b, c->compat ? NULL : "1.0.0");
  chakra_builder_string(b, "schema", h->schema);
  if (h->has_pid) chakra_builder_uint64(b, "pid", (uint64_t)h->pid);
  if (h->has_time) chakra_builder_string(b, "time", h->time);
  if (h->has_start_ts) chakra_builder_uint64(b, "start_ts", (uint64_t)h->start_ts);
  if (h->has_finish_ts) chakra_builder_uint64(b, "finish_ts", (uint64_t)h->finish_ts);
  if (!c->compat) chakra_builder_string(b, "producer", "chakra-c " CHAKRA_VERSION " convert pytorch");
  return chakra_builder_put(b, c->err);
}

/* duration_micros, shared by the node and its --log line so that they agree:
 * the reference truncates exclusive_dur and zeroes Optimizer.step. */
static uint64_t node_dur(const conv *c, uint32_t i) {
  const ht_node *x = &c->h->nodes[i];
  if (x->excl <= 0 || conv_has(conv_nname(c, i), "Optimizer.step")) return 0;
  return (uint64_t)x->excl;
}

typedef struct wcount {
  uint64_t ctrl, data, nodes, meta, coll, send, recv, comp;
} wcount;

/* Everything of node i but its inputs/outputs and attributes. */
static void node_head(conv *c, uint32_t i, chakra_builder *b, wcount *w) {
  const ht_node *x = &c->h->nodes[i];
  chakra_builder_node(b, x->id, conv_nname(c, i), c->type[i]);
  uint32_t p = c->parent[i];
  if (p != CONV_NONE && c->sel[p]) {
    int write;
    if (c->compat) {
      /* only if the parent was converted earlier in the reference's pass:
       * non-device nodes in file order, each followed by its device ops */
      write = c->gpu[i] ? !c->gpu[p] : (!c->gpu[p] ? p < i : (c->parent[p] != CONV_NONE && c->parent[p] < i));
    } else {
      write = c->out[p];
    }
    if (write) {
      chakra_builder_ctrl_deps(b, &c->h->nodes[p].id, 1);
      w->ctrl++;
    }
  }
  chakra_builder_data_deps(b, c->deps + c->dep_start[i], c->dep_cnt[i]);
  w->data += c->dep_cnt[i];
  if (!c->compat && (x->flags & HT_TS) && x->ts >= 1) chakra_builder_start_time(b, (uint64_t)x->ts);
  chakra_builder_duration(b, node_dur(c, i));
  w->nodes++;
  switch (c->type[i]) {
    case CONV_T_METADATA: w->meta++; break;
    case CONV_T_COLL: w->coll++; break;
    case CONV_T_SEND: w->send++; break;
    case CONV_T_RECV: w->recv++; break;
    default: w->comp++; break;
  }
}

/* The inputs and outputs from the node's texts (hostet.h), borrowed. */
static void node_io(const ht_node *x, chakra_builder *b) {
  const char *t[HT_IO_N];
  const char *s = (const char *)x->blob;
  for (int k = 0; k < HT_IO_N; k++) {
    t[k] = s;
    s += strlen(s) + 1;
  }
  for (int w = 0; w < 2; w++) chakra_builder_io(b, w, t[3 * w], t[3 * w + 1], t[3 * w + 2]);
}

/* The attributes the parser kept for the output. */
static void extra_attrs(const ht_node *x, chakra_builder *b) {
  for (uint32_t k = 0; k < x->n_extra; k++) {
    const ht_extra *e = &x->extra[k];
    switch (e->kind) {
      case HT_X_INT64: chakra_builder_int64(b, e->name, e->v.i); break;
      case HT_X_UINT64: chakra_builder_uint64(b, e->name, e->v.u); break;
      case HT_X_DOUBLE: chakra_builder_double(b, e->name, e->v.d); break;
      case HT_X_BOOL: chakra_builder_bool(b, e->name, e->v.b); break;
      default: chakra_builder_string(b, e->name, e->v.s); break;
    }
  }
}

/* The standard attributes, then (except --compat) the extra ones. */
static void node_attrs(conv *c, uint32_t i, chakra_builder *b) {
  const ht_node *x = &c->h->nodes[i];
  for (int k = 0; k < HT_NATTR; k++)
    if (c->compat || (x->flags & (HT_ATTR0 << k))) chakra_builder_int64(b, ht_attr_names[k], x->a[k]);
  if (c->compat || (x->flags & HT_SCHEMA))
    chakra_builder_string(b, "op_schema", strtab_str(&c->h->strings, x->op_schema));
  chakra_builder_bool(b, "is_cpu_op", !(x->flags & HT_GPU));
  if (c->compat || c->gpu[i]) chakra_builder_int64(b, "stream", x->stream);
  int t = c->type[i];
  const char *pgn = strtab_str(&c->h->strings, c->pg[i]);
  int has_pg = strtab_len(&c->h->strings, c->pg[i]) != 0;
  if (t == CONV_T_COLL) {
    chakra_builder_int64(b, "comm_type", c->comm_type[i]);
    chakra_builder_int64(b, "comm_size", (int64_t)x->comm_bytes);
    if (has_pg) chakra_builder_string(b, "pg_name", pgn);
  } else if (t == CONV_T_SEND || t == CONV_T_RECV) {
    if (!c->compat) chakra_builder_int32(b, t == CONV_T_SEND ? "comm_dst" : "comm_src", c->peer[i]);
    chakra_builder_int64(b, "comm_size", (int64_t)x->comm_bytes);
    if (!c->compat) chakra_builder_int32(b, "comm_tag", c->tag[i]);
    if (has_pg) chakra_builder_string(b, "pg_name", pgn);
  }
  if (!c->compat && (x->flags & HT_EXCL) && x->excl >= 0)
    chakra_builder_uint64(b, "duration_ns", (uint64_t)llround(x->excl * 1000.0));
  if (!c->compat) extra_attrs(x, b);
}

/* Node i, packed at the end of b's buffer. */
static int put_node(conv *c, uint32_t i, chakra_builder *b, wcount *w, chakra_error *err) {
  node_head(c, i, b, w);
  node_io(&c->h->nodes[i], b);
  node_attrs(c, i, b);
  return chakra_builder_put(b, err);
}

static void add_counts(chakra_convert_report *r, const wcount *w) {
  r->ctrl_deps += w->ctrl, r->data_deps += w->data, r->nodes_out += w->nodes;
  r->metadata += w->meta, r->coll += w->coll, r->send += w->send, r->recv += w->recv, r->comp += w->comp;
}

static void log_line(conv *c, strbuf *lb, uint32_t i) {
  static const char *const tn[] = {"INVALID", "METADATA", "MEM_LOAD", "MEM_STORE", "COMP", "SEND", "RECV", "COLL"};
  const ht_node *x = &c->h->nodes[i];
  strbuf_puts(lb, "node ");
  strbuf_u64(lb, x->id);
  strbuf_putc(lb, ' ');
  strbuf_puts(lb, tn[c->type[i] & 7]);
  strbuf_putc(lb, ' ');
  const char *nm = conv_nname(c, i);
  json_str(lb, (const unsigned char *)nm, strlen(nm));
  strbuf_puts(lb, " data_deps [");
  for (uint32_t d = 0; d < c->dep_cnt[i]; d++) {
    if (d) strbuf_putc(lb, ' ');
    strbuf_u64(lb, c->deps[c->dep_start[i] + d]);
  }
  strbuf_puts(lb, "] duration_micros ");
  strbuf_u64(lb, node_dur(c, i));
  strbuf_putc(lb, '\n');
}

/* Encoding the nodes is most of the cost of writing, so they are built in
 * rounds: each of several jobs builds a run of consecutive nodes into its
 * own builder, while one more job hands the builders of the round before
 * to the writer, in order. Each part has two builders, used in alternate
 * rounds. */
#define WRITE_RUN 1024    /* nodes per job and round */
#define WRITE_THREADS 8

typedef struct wpart {
  const uint32_t *idx; /* node indexes, in output order */
  size_t n;
  chakra_builder *b[2];
  wcount w;
  chakra_error err;
} wpart;

typedef struct wround {
  conv *c;
  wpart *parts;
  int np;                    /* packing jobs this round */
  int set;                   /* the builders they fill */
  int prev_np;               /* parts of the round before, still to write */
  chakra_workload_writer *w;
  chakra_error werr;
} wround;

/* Writes the previous round's builders in part order. */
static int write_prev(wround *r) {
  int rc = 0;
  for (int t = 0; t < r->prev_np && !rc; t++)
    rc = chakra_workload_writer_put_built(r->w, 0, r->parts[t].b[r->set ^ 1], &r->werr);
  return rc;
}

static int round_job(void *ctx, size_t job) {
  wround *r = ctx;
  if ((int)job == r->np) return write_prev(r);
  wpart *p = &r->parts[job];
  chakra_builder *b = p->b[r->set];
  chakra_builder_clear(b);
  int rc = 0;
  for (size_t k = 0; k < p->n && !rc; k++) rc = put_node(r->c, p->idx[k], b, &p->w, &p->err);
  return rc;
}

/* Packs nodes idx[0..n) into builders `set` of parts[0..np) while the
 * writer takes the round before; the first error goes to c->err. */
static int run_round(conv *c, wround *r, const uint32_t *idx, size_t n) {
  for (int t = 0; t < r->np; t++) {
    size_t lo = n * (size_t)t / (size_t)r->np, hi = n * (size_t)(t + 1) / (size_t)r->np;
    r->parts[t].idx = idx + lo;
    r->parts[t].n = hi - lo;
    r->parts[t].err.code = 0;
  }
  r->werr.code = 0;
  size_t jobs = (size_t)r->np + (r->prev_np > 0);
  int rc = tasks_run(jobs, (unsigned)jobs, round_job, r, 0);
  if (!rc) return 0;
  for (int t = 0; t < r->np; t++)
    if (r->parts[t].err.code) {
      *c->err = r->parts[t].err;
      return rc;
    }
  *c->err = r->werr;
  return rc;
}

/* Packs the nodes in output order and hands them to w (see wpart). */
static int write_nodes(conv *c, chakra_workload_writer *w, wpart *parts, int threads, outfile *logf) {
  strbuf lb = {0};
  int rc = 0;
  size_t round = (size_t)threads * WRITE_RUN;
  wround r = {.c = c, .parts = parts, .w = w};
  for (size_t k = 0; k < c->n_order && !rc; k += round) {
    size_t n = c->n_order - k < round ? c->n_order - k : round;
    r.np = (int)((n + WRITE_RUN - 1) / WRITE_RUN);
    rc = run_round(c, &r, c->order + k, n);
    r.prev_np = r.np;
    r.set ^= 1;
    for (size_t j = k; j < k + n && logf && !rc; j++) {
      lb.n = 0;
      log_line(c, &lb, c->order[j]);
      rc = lb.oom ? conv_oom(c) : outfile_write(logf, lb.s, lb.n, c->err);
    }
  }
  if (!rc && write_prev(&r)) *c->err = r.werr, rc = r.werr.code ? r.werr.code : CHAKRA_EIO;
  strbuf_free(&lb);
  return rc;
}

/* The output and the --log file. */
static int open_outputs(conv *c, const conv_dest *to, chakra_workload_writer **w, outfile **logf) {
  *logf = NULL;
  int rc = to->sink ? chakra_workload_writer_open_sinks(w, to->sink, 1, NULL, c->err)
                    : chakra_workload_writer_open_paths(w, &to->path, 1, NULL, c->err);
  if (rc || !c->opt->log_path) return rc;
  rc = outfile_open(logf, c->opt->log_path, outfile_name_is_gzip(c->opt->log_path), c->err);
  if (rc) chakra_workload_writer_discard(*w);
  return rc;
}

/* Renames both into place after success (rc 0), else removes them. */
static int close_outputs(chakra_workload_writer *w, outfile *logf, int rc, chakra_error *err) {
  if (rc) {
    chakra_workload_writer_discard(w);
    if (logf) outfile_discard(logf);
    return rc;
  }
  rc = chakra_workload_writer_commit(w, err);
  if (logf) {
    if (rc) outfile_discard(logf);
    else rc = outfile_commit(logf, err);
  }
  return rc;
}

/* Metadata, then the nodes in order. */
int conv_write_et(conv *c, const conv_dest *to) {
  int threads = c->opt->threads > 0 ? c->opt->threads : (int)tasks_cpus();
  chakra_workload_writer *w;
  outfile *logf;
  int rc = open_outputs(c, to, &w, &logf);
  if (rc) return rc;
  int np = threads < WRITE_THREADS ? threads : WRITE_THREADS;
  wpart *parts = calloc((size_t)np, sizeof *parts);
  for (int t = 0; t < np && parts && !rc; t++)
    if (chakra_builder_new(&parts[t].b[0]) || chakra_builder_new(&parts[t].b[1])) rc = conv_oom(c);
  if (!parts) rc = conv_oom(c);
  if (!rc) rc = put_meta(c, parts[0].b[0]);
  if (!rc) rc = chakra_workload_writer_put_built(w, 0, parts[0].b[0], c->err);
  if (!rc) rc = write_nodes(c, w, parts, np, logf);
  rc = close_outputs(w, logf, rc, c->err);
  for (int t = 0; t < np && parts; t++) {
    add_counts(c->rep, &parts[t].w);
    chakra_builder_free(parts[t].b[0]);
    chakra_builder_free(parts[t].b[1]);
  }
  free(parts);
  return rc;
}
