/* csv.c - CSV fields, and a run record as a per-rank table; see csv.h and
 * docs/report.md. */
#include "csv.h"

#include <string.h>

#include "chakra/attr.h"
#include "runint.h"

void csv_field(jsonw *w, const char *s) {
  if (!strpbrk(s, ",\"\n\r")) {
    jsonw_lit(w, s);
    return;
  }
  jsonw_char(w, '"');
  for (const char *p = s; *p; p++) {
    if (*p == '"') jsonw_char(w, '"');
    jsonw_char(w, *p);
  }
  jsonw_char(w, '"');
}

/* Column heads: a list of fields' keys. */
static void heads(jsonw *w, const runrec_fields *fs) {
  for (size_t i = 0; i < fs->n; i++) {
    csv_next(w);
    csv_field(w, fs->f[i].key);
  }
}

static void values(jsonw *w, const void *base, const runrec_fields *fs) {
  for (size_t i = 0; i < fs->n; i++) {
    csv_next(w);
    jsonw_u64(w, runrec_u64(base, &fs->f[i]));
  }
}

/* The collective types some rank has, in the report's order. */
static int present_colls(const chakra_run_record *r, uint8_t *types) {
  const uint8_t *order = chakra_run_coll_order();
  chakra_run_coll total[CHAKRA_RUN_COLLS];
  chakra_run_coll_totals(r, total);
  int n = 0;
  for (int i = 0; i < CHAKRA_RUN_COLLS; i++)
    if (total[order[i]].count) types[n++] = order[i];
  return n;
}

static const char *const coll_heads[] = {"_count", "_bytes", "_time_ns"};

/* The report's per-rank members in its order, the collectives last: a
 * column each. */
static void header(jsonw *w, const chakra_run_record *r, const uint8_t *types, int n_types) {
  jsonw_lit(w, "rank,finished");
  heads(w, &runrec_rank_times);
  jsonw_lit(w, ",overlap_ns");
  heads(w, &runrec_rank_nodes);
  heads(w, &runrec_rank_p2p);
  if (r->roofline) heads(w, &runrec_rank_roofline);
  if (r->source == CHAKRA_RUN_REPLAY) {
    heads(w, &runrec_rank_replay);
    jsonw_lit(w, ",replayer_ns");
  }
  for (int t = 0; t < n_types; t++)
    for (size_t i = 0; i < 3; i++) {
      csv_next(w);
      jsonw_lit(w, chakra_comm_type_name(types[t]));
      jsonw_lit(w, coll_heads[i]);
    }
  csv_end(w);
}

static void row(jsonw *w, const chakra_run_record *r, uint32_t i, const uint8_t *types, int n_types) {
  const chakra_run_rank *k = &r->ranks[i];
  jsonw_u64(w, i);
  jsonw_lit(w, k->finished ? ",true" : ",false");
  values(w, k, &runrec_rank_times);
  csv_next(w);
  jsonw_u64(w, chakra_run_overlap_ns(k));
  values(w, k, &runrec_rank_nodes);
  values(w, k, &runrec_rank_p2p);
  for (size_t f = 0; r->roofline && f < runrec_rank_roofline.n; f++) {
    csv_next(w);
    jsonw_double(w, *(const double *)(const void *)((const char *)k + runrec_rank_roofline.f[f].off));
  }
  if (r->source == CHAKRA_RUN_REPLAY) {
    values(w, k, &runrec_rank_replay);
    csv_next(w);
    jsonw_u64(w, runrec_replayer_ns(k));
  }
  for (int t = 0; t < n_types; t++) {
    const chakra_run_coll *c = &k->coll[types[t]];
    const uint64_t cv[] = {c->count, c->bytes, c->time_ns};
    for (size_t j = 0; j < 3; j++) {
      csv_next(w);
      jsonw_u64(w, cv[j]);
    }
  }
  csv_end(w);
}

void runrec_write_csv(jsonw *w, const chakra_run_record *r) {
  uint8_t types[CHAKRA_RUN_COLLS];
  int n_types = present_colls(r, types);
  header(w, r, types, n_types);
  for (uint32_t i = 0; i < r->npus; i++) row(w, r, i, types, n_types);
}
