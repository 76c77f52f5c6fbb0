/* runjson.c - the report JSON of a run record, the one writer of the
 * schema in docs/report.md (chakra sim --report, chakra replay --report);
 * see include/chakra/run.h. runread.c reads it back. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/textout.h"
#include "chakra/attr.h"
#include "chakra/run.h"
#include "runint.h"

static void collectives(jsonw *w, const chakra_run_rank *k) {
  const uint8_t *order = chakra_run_coll_order();
  jsonw_lit(w, ",\"collectives\":{");
  int first = 1;
  for (int i = 0; i < CHAKRA_RUN_COLLS; i++) {
    const chakra_run_coll *c = &k->coll[order[i]];
    if (!c->count) continue;
    if (!first) jsonw_char(w, ',');
    first = 0;
    jsonw_char(w, '"');
    jsonw_lit(w, chakra_comm_type_name(order[i]));
    jsonw_lit(w, "\":{");
    jsonw_key_u64(w, "count", c->count, 0);
    jsonw_key_u64(w, "bytes", c->bytes, 1);
    jsonw_key_u64(w, "time_ns", c->time_ns, 1);
    jsonw_char(w, '}');
  }
  jsonw_char(w, '}');
}

/* ,"key":value for each field of base. */
static void members(jsonw *w, const void *base, const runrec_fields *fs) {
  for (size_t i = 0; i < fs->n; i++) {
    jsonw_raw(w, fs->f[i].member, fs->f[i].member_len);
    jsonw_u64(w, runrec_u64(base, &fs->f[i]));
  }
}

static void rank_object(jsonw *w, const chakra_run_record *r, uint32_t i) {
  const chakra_run_rank *k = &r->ranks[i];
  jsonw_lit(w, "{\"rank\":");
  jsonw_u64(w, i);
  jsonw_lit(w, k->finished ? ",\"finished\":true" : ",\"finished\":false");
  members(w, k, &runrec_rank_times);
  jsonw_key_u64(w, "overlap_ns", chakra_run_overlap_ns(k), 1);
  members(w, k, &runrec_rank_nodes);
  for (size_t f = 0; r->roofline && f < runrec_rank_roofline.n; f++)
    jsonw_key_double(w, runrec_rank_roofline.f[f].key,
                     *(const double *)(const void *)((const char *)k + runrec_rank_roofline.f[f].off));
  collectives(w, k);
  members(w, k, &runrec_rank_p2p);
  if (r->source == CHAKRA_RUN_REPLAY) { /* the spread over the iterations, where the loop's time went */
    members(w, k, &runrec_rank_replay);
    jsonw_key_u64(w, "replayer_ns", runrec_replayer_ns(k), 1);
  }
  jsonw_char(w, '}');
}

static void iterations(jsonw *w, const chakra_run_record *r) {
  jsonw_lit(w, ",\"replay\":{\"compute\":\"");
  jsonw_lit(w, runrec_compute_name(r->compute));
  jsonw_char(w, '"');
  jsonw_key_double(w, "compute_scale", r->compute_scale);
  jsonw_key_u64(w, "iterations", r->iterations, 1);
  jsonw_key_u64(w, "warmup", r->warmup, 1);
  jsonw_lit(w, ",\"makespan_ns\":[");
  uint32_t n = r->makespan_ns ? r->iterations : 0;
  for (uint32_t i = 0; i < n; i++) {
    if (i) jsonw_char(w, ',');
    jsonw_u64(w, r->makespan_ns[i]);
  }
  jsonw_char(w, ']');
  runrec_spread s;
  int rc = n ? runrec_makespan_spread(r, &s) : 0;
  if (rc) {
    w->failed = 1;
    chakra_error_set(&w->err, CHAKRA_ENOMEM, "out of memory");
  } else if (n) {
    jsonw_key_u64(w, "makespan_min_ns", s.min, 1);
    jsonw_key_u64(w, "makespan_median_ns", s.median, 1);
    jsonw_key_u64(w, "makespan_max_ns", s.max, 1);
    jsonw_key_u64(w, "makespan_mean_ns", s.mean, 1);
    jsonw_key_u64(w, "makespan_stddev_ns", s.stddev, 1);
  }
  jsonw_char(w, '}');
}

static void instances(jsonw *w, const chakra_run_record *r) {
  jsonw_lit(w, ",\"collective_instances\":[");
  for (uint64_t i = 0; i < r->n_instances; i++) {
    const chakra_run_instance *x = &r->instances[i];
    jsonw_lit(w, i ? ",\n{" : "\n{");
    jsonw_key_u64(w, runrec_inst_ids.f[0].key, runrec_u64(x, &runrec_inst_ids.f[0]), 0);
    jsonw_key_u64(w, runrec_inst_ids.f[1].key, runrec_u64(x, &runrec_inst_ids.f[1]), 1);
    jsonw_lit(w, ",\"type\":\"");
    const char *t = chakra_comm_type_name((int64_t)x->comm_type);
    jsonw_lit(w, t ? t : "UNKNOWN");
    jsonw_lit(w, "\",\"pg\":");
    const char *g = x->group >= 0 && (uint64_t)x->group < r->n_groups ? r->groups[x->group] : "";
    jsonw_string(w, g, strlen(g));
    members(w, x, &runrec_inst_figures);
    jsonw_char(w, '}');
  }
  jsonw_lit(w, "]");
}

static void meta(jsonw *w, const chakra_run_record *r) {
  jsonw_lit(w, ",\"meta\":{");
  for (uint32_t i = 0; i < r->n_meta; i++) {
    if (i) jsonw_char(w, ',');
    jsonw_string(w, r->meta[i].key, strlen(r->meta[i].key));
    jsonw_char(w, ':');
    jsonw_string(w, r->meta[i].value, strlen(r->meta[i].value));
  }
  jsonw_char(w, '}');
}

void runrec_write_json(jsonw *w, const chakra_run_record *r) {
  jsonw_lit(w, "{\"npus\":");
  jsonw_u64(w, r->npus);
  jsonw_key_u64(w, "events", r->events, 1);
  jsonw_key_u64(w, "messages", r->messages, 1);
  char wall[64];
  snprintf(wall, sizeof wall, ",\"wall_clock_s\":%.3f", r->wall_seconds);
  jsonw_lit(w, wall);
  if (r->symmetry) { /* how many NPUs the run simulated for the ranks, and why */
    jsonw_key_u64(w, "classes", r->classes, 1);
    jsonw_key_u64(w, "simulated_npus", r->simulated, 1);
    jsonw_lit(w, ",\"symmetry\":");
    jsonw_string(w, r->symmetry, strlen(r->symmetry));
  }
  uint64_t finish = 0;
  for (uint32_t k = 0; k < r->npus; k++)
    if (r->ranks[k].finish_ns > finish) finish = r->ranks[k].finish_ns;
  jsonw_key_u64(w, "max_finish_ns", finish, 1);
  jsonw_lit(w, ",\"ranks\":[\n");
  for (uint32_t k = 0; k < r->npus; k++) {
    if (k) jsonw_lit(w, ",\n");
    rank_object(w, r, k);
  }
  jsonw_lit(w, "\n],\"stuck\":[");
  for (uint32_t i = 0; i < r->n_stuck; i++) {
    if (i) jsonw_char(w, ',');
    jsonw_string(w, r->stuck[i], strlen(r->stuck[i]));
  }
  jsonw_char(w, ']');
  if (r->source == CHAKRA_RUN_REPLAY) iterations(w, r);
  if (r->source == CHAKRA_RUN_REPLAY || r->n_instances) instances(w, r);
  if (r->n_meta) meta(w, r);
  jsonw_lit(w, "}\n");
}

/* Writes r in format into t and closes it (the file committed or
 * removed). */
static int write_to(textout *t, const chakra_run_record *r, chakra_run_format format, chakra_error *err) {
  if (format == CHAKRA_RUN_CSV) runrec_write_csv(&t->w, r);
  else runrec_write_json(&t->w, r);
  return textout_close(t, 0, err);
}

static int bad_format(chakra_run_format format, chakra_error *err) {
  return chakra_error_set(err, CHAKRA_EINVAL, "run report: format %d is neither JSON nor CSV", (int)format);
}

int chakra_run_write_report(const chakra_run_record *r, const char *path, chakra_run_format format,
                            chakra_error *err) {
  if (format != CHAKRA_RUN_JSON && format != CHAKRA_RUN_CSV) return bad_format(format, err);
  textout t;
  int rc = textout_open(&t, path, err);
  return rc ? rc : write_to(&t, r, format, err);
}

int chakra_run_write_report_to(const chakra_run_record *r, const chakra_sink *out, chakra_run_format format,
                               chakra_error *err) {
  if (format != CHAKRA_RUN_JSON && format != CHAKRA_RUN_CSV) return bad_format(format, err);
  textout t;
  int rc = textout_open_sink(&t, out, err);
  return rc ? rc : write_to(&t, r, format, err);
}
