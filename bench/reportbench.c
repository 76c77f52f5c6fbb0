/* reportbench.c - how long a run record's report takes to write and read
 * back at scale: N ranks (default 32,768, the largest workloads the
 * benchmark suite simulates) each with four collective types and
 * point-to-point sends, written as the report JSON and as CSV to DIR, then
 * read back; the fastest of REPEAT runs of each is printed.
 *
 * usage: reportbench DIR [N] [REPEAT] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chakra/attr.h"
#include "chakra/run.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Figures of the size a long training run gives (tens of ms of
 * nanoseconds, GB of bytes), varied per rank so no two lines are alike. */
static void fill(chakra_run_record *r) {
  static const int types[] = {CHAKRA_ALL_REDUCE, CHAKRA_ALL_GATHER, CHAKRA_REDUCE_SCATTER, CHAKRA_ALL_TO_ALL};
  for (uint32_t k = 0; k < r->npus; k++) {
    chakra_run_rank *x = &r->ranks[k];
    x->finished = 1;
    x->finish_ns = x->wall_ns = 30900186ull + 7919ull * k;
    x->busy_ns[CHAKRA_CAT_GPU] = 5496427ull + 13ull * k;
    x->busy_ns[CHAKRA_CAT_COMM] = 25403786ull + 31ull * k;
    x->exposed_comm_ns = x->finish_ns - x->busy_ns[CHAKRA_CAT_GPU];
    x->nodes = x->nodes_done = 1440 + k % 17;
    for (int t = 0; t < 4; t++)
      x->coll[types[t]] = (chakra_run_coll){8u + (unsigned)t, (67108864ull << t) + k, 1345504ull * (unsigned)(t + 1) + k};
    x->send_ops = 96, x->send_bytes = 100663296ull + k;
  }
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: reportbench DIR [N] [REPEAT]\n");
    return 2;
  }
  uint32_t n = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 32768;
  int repeat = argc > 3 ? atoi(argv[3]) : 5;
  chakra_run_record r;
  chakra_error err = {0};
  if (chakra_run_record_init(&r, CHAKRA_RUN_SIM, n, &err)) return fprintf(stderr, "%s\n", err.msg), 1;
  fill(&r);
  char json[4096], csv[4096];
  snprintf(json, sizeof json, "%s/report.json", argv[1]);
  snprintf(csv, sizeof csv, "%s/report.csv", argv[1]);
  double best[3] = {1e9, 1e9, 1e9};
  for (int i = 0; i < repeat; i++) {
    double t0 = now();
    if (chakra_run_write_report(&r, json, CHAKRA_RUN_JSON, &err)) return fprintf(stderr, "%s\n", err.msg), 1;
    double t1 = now();
    if (chakra_run_write_report(&r, csv, CHAKRA_RUN_CSV, &err)) return fprintf(stderr, "%s\n", err.msg), 1;
    double t2 = now();
    chakra_run_record back;
    if (chakra_run_read_report(&back, json, &err)) return fprintf(stderr, "%s\n", err.msg), 1;
    double t3 = now();
    chakra_run_record_free(&back);
    if (t1 - t0 < best[0]) best[0] = t1 - t0;
    if (t2 - t1 < best[1]) best[1] = t2 - t1;
    if (t3 - t2 < best[2]) best[2] = t3 - t2;
  }
  printf("%u ranks: report JSON %.1f ms, CSV %.1f ms, read back %.1f ms (fastest of %d)\n", n, best[0] * 1e3,
         best[1] * 1e3, best[2] * 1e3, repeat);
  chakra_run_record_free(&r);
  return 0;
}
