/* runint.h - what the run record's writers and reader share (private to
 * lib/report): the report's names for categories and compute modes, and
 * the figures the writers derive. */
#ifndef CHAKRA_REPORT_RUNINT_H
#define CHAKRA_REPORT_RUNINT_H

#include "../util/jsonw.h"
#include "chakra/run.h"

/* The report's members that are fields of a struct, by key and offset,
 * in the order the report lists them; the writers and the reader share
 * them, so a key is spelled once. Groups of a rank object: */
typedef struct runrec_field {
  const char *key;
  const char *member;     /* ,"key": as the JSON writer puts it before the value */
  size_t member_len;
  size_t off;
} runrec_field;

typedef struct runrec_fields {
  const runrec_field *f;
  size_t n;
} runrec_fields;

/* uint64_t members of chakra_run_rank: finish, exposed, bubble, wall,
 * then the busy time of each category (gpu_ns ... invalid_ns) */
extern const runrec_fields runrec_rank_times;
extern const runrec_fields runrec_rank_nodes;    /* nodes, nodes_done */
extern const runrec_fields runrec_rank_p2p;      /* p2p_sends, p2p_bytes */
extern const runrec_fields runrec_rank_replay;   /* finish spread, loop_ns, mpi_ns, idle_ns */
extern const runrec_fields runrec_rank_roofline; /* the four roofline doubles */
/* uint64_t members of chakra_run_instance: before its type and group
 * (rank, node_id), and after them */
extern const runrec_fields runrec_inst_ids;
extern const runrec_fields runrec_inst_figures;

static inline uint64_t runrec_u64(const void *base, const runrec_field *f) {
  return *(const uint64_t *)(const void *)((const char *)base + f->off);
}

/* Replay's compute mode as the report names it ("wait", "sleep", "skip";
 * anything else "wait"), and back (-1 when unknown). */
const char *runrec_compute_name(int mode);
int runrec_compute_parse(const char *name);

/* The replayer's own time: the loop less MPI and waiting. */
uint64_t runrec_replayer_ns(const chakra_run_rank *k);

/* The makespan over the measured iterations: min, median (lower middle),
 * max, mean and sample standard deviation, in whole nanoseconds (mean and
 * deviation rounded to the nearest). */
typedef struct runrec_spread {
  uint64_t min, median, max, mean, stddev;
} runrec_spread;
/* Returns 0, or CHAKRA_ENOMEM. */
int runrec_makespan_spread(const chakra_run_record *r, runrec_spread *out);

/* The documents, into w (errors are w's). */
void runrec_write_json(jsonw *w, const chakra_run_record *r);
void runrec_write_csv(jsonw *w, const chakra_run_record *r);

#endif
