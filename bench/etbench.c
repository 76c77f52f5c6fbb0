/* etbench.c - times one format-layer operation on one input.
 *
 *   etbench OP INPUT [OUTPUT] [lines|document|compat]
 *
 * OP is one of
 *   iterate   chakra_reader_next() over every node (full protobuf decode)
 *   raw       chakra_reader_next_raw() over every node (framing only)
 *   jsonize   chakra_jsonize() INPUT.et to OUTPUT ("-" = /dev/null)
 *   pack      chakra_pack() INPUT.json to OUTPUT.et
 *   graph     chakra_graph_load() of INPUT.et
 *
 * One operation per process, so that the peak RSS reported (getrusage
 * ru_maxrss) belongs to that operation alone; bench/run.sh runs them one by
 * one. The result is one line of key=value pairs on standard output:
 *   op= nodes= in_bytes= out_bytes= wall_s= cpu_s= maxrss_kb=
 * plus, for graph, graph_bytes= (chakra_graph_memory), dep_entries=
 * (entries of the dependency and children lists together) and problems=
 * (loading is tolerant, as validate's: problems are counted, bad deps
 * dropped, nodes on a cycle appended to the order). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "chakra/graph.h"
#include "chakra/json.h"
#include "chakra/trace.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double cpu_seconds(const struct rusage *ru) {
  return (double)ru->ru_utime.tv_sec + ru->ru_utime.tv_usec * 1e-6 + (double)ru->ru_stime.tv_sec +
         ru->ru_stime.tv_usec * 1e-6;
}

static unsigned long long file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (unsigned long long)st.st_size : 0;
}

static int fail(const char *op, const chakra_error *err) {
  fprintf(stderr, "etbench %s: %s\n", op, err->msg);
  return 1;
}

static void ignore_warning(void *ctx, const chakra_problem *p) {
  (void)ctx;
  (void)p;
}

/* Graph problems are counted, not fatal: pytorch_converted.0.et has a
 * control-dependency cycle, so a strict load would stop at it. */
static void count_problem(void *ctx, const chakra_problem *p) {
  (void)p;
  ++*(unsigned long long *)ctx;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: etbench iterate|raw|jsonize|pack|graph INPUT [OUTPUT] [lines|document|compat]\n");
    return 2;
  }
  const char *op = argv[1], *in = argv[2], *out = argc > 3 ? argv[3] : NULL;
  int layout = CHAKRA_JSON_LINES;
  if (argc > 4 && strcmp(argv[4], "document") == 0) layout = CHAKRA_JSON_DOCUMENT;
  if (argc > 4 && strcmp(argv[4], "compat") == 0) layout = CHAKRA_JSON_COMPAT;
  /* Results go to the original stdout; "-" outputs go to /dev/null. */
  FILE *res = fdopen(dup(1), "w");
  if (!res) return perror("etbench: dup"), 1;
  if (out && strcmp(out, "-") == 0) {
    int fd = open("/dev/null", O_WRONLY);
    if (fd < 0 || dup2(fd, 1) < 0) return perror("etbench: /dev/null"), 1;
    close(fd);
  }

  chakra_error err = {0};
  unsigned long long nodes = 0, in_bytes = file_size(in), out_bytes = 0;
  unsigned long long graph_bytes = 0, dep_entries = 0, problems = 0;
  double t0 = now();
  if (strcmp(op, "iterate") == 0 || strcmp(op, "raw") == 0) {
    chakra_reader *r;
    if (chakra_reader_open(&r, in, NULL, &err)) return fail(op, &err);
    int rc;
    if (op[0] == 'i') {
      chakra_node *nd;
      uint64_t sum = 0; /* touches every node so nothing is skipped */
      while ((rc = chakra_reader_next(r, &nd, &err)) == 1) nodes++, sum += nd->n_data_deps;
      dep_entries = sum;
    } else {
      const uint8_t *data;
      size_t len;
      while ((rc = chakra_reader_next_raw(r, &data, &len, &err)) == 1) nodes++;
    }
    if (rc < 0) return fail(op, &err);
    in_bytes = chakra_reader_offset(r);
    chakra_reader_close(r);
  } else if (strcmp(op, "jsonize") == 0 && out) {
    chakra_json_stats st;
    if (chakra_jsonize(in, out, layout, 0, &st, ignore_warning, NULL, NULL, &err)) return fail(op, &err);
    nodes = st.nodes;
    if (strcmp(out, "-") != 0) out_bytes = file_size(out);
  } else if (strcmp(op, "pack") == 0 && out) {
    chakra_json_stats st;
    if (chakra_pack(in, out, CHAKRA_WRITE_PLAIN, &st, ignore_warning, NULL, NULL, &err))
      return fail(op, &err);
    nodes = st.nodes;
    out_bytes = file_size(out);
  } else if (strcmp(op, "graph") == 0) {
    chakra_graph *g;
    chakra_graph_options opt = {0};
    opt.tolerant = 1;
    opt.diag = count_problem;
    opt.diag_ctx = &problems;
    if (chakra_graph_load(&g, in, &opt, &err)) return fail(op, &err);
    nodes = g->n;
    graph_bytes = chakra_graph_memory(g);
    dep_entries = 2ull * g->dep_off[g->n]; /* deps + children */
    chakra_graph_free(g);
  } else {
    fprintf(stderr, "etbench: unknown operation '%s' (or OUTPUT missing)\n", op);
    return 2;
  }
  double wall = now() - t0;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  fprintf(res,
          "op=%s nodes=%llu in_bytes=%llu out_bytes=%llu wall_s=%.4f cpu_s=%.4f maxrss_kb=%ld "
          "graph_bytes=%llu dep_entries=%llu problems=%llu\n",
          op, nodes, in_bytes, out_bytes, wall, cpu_seconds(&ru), ru.ru_maxrss, graph_bytes,
          dep_entries, problems);
  fclose(res);
  return 0;
}
