/* viewgen.c - writes large layered workloads for the view commands' benchmarks
 * (dot --collapse, timeline, diff, obfuscate; bench/views.sh).
 *
 *   viewgen PREFIX RANKS NODES [--starts]
 *
 * Each rank is a stack of layers: 49 compute nodes in a chain (every 7th
 * also depends on the node 7 back, every 5th is a CPU op), then an
 * all-reduce of the layer's output that the layer after next waits for,
 * as data-parallel training overlaps communication. Names look like
 * PyTorch's ("aten::mm", "layer12.attn.mm"); rank r adds r microseconds to
 * every 1000th duration, so ranks differ a little (for diff). --starts
 * writes recorded start times (an as-soon-as-possible schedule). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra/trace.h"

#define LAYER 50

typedef ChakraProtoMsg__AttributeProto attr_t;

static attr_t attr_int(const char *name, int64_t v) {
  attr_t a = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT;
  a.name = (char *)name;
  a.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
  a.int64_val = v;
  return a;
}

static attr_t attr_bool(const char *name, int v) {
  attr_t a = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT;
  a.name = (char *)name;
  a.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL;
  a.bool_val = v;
  return a;
}

static int write_rank(const char *path, int rank, uint64_t nodes, int starts, chakra_error *err) {
  static const char *const ops[] = {"aten::mm", "aten::add", "aten::gelu", "aten::softmax", "aten::layer_norm",
                                    "aten::bmm", "aten::copy_"};
  chakra_writer *w;
  if (chakra_writer_open(&w, path, 0, err)) return -1;
  ChakraProtoMsg__GlobalMetadata md = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
  md.version = "1.0.0";
  int rc = chakra_writer_put(w, &md.base, err);
  uint64_t *end = calloc(nodes + 1, sizeof *end);
  if (!end) return -1;
  for (uint64_t id = 0; id < nodes && !rc; id++) {
    uint64_t layer = id / LAYER, pos = id % LAYER, deps[3];
    size_t nd = 0;
    char name[64];
    attr_t a[3];
    attr_t *ap[3] = {&a[0], &a[1], &a[2]};
    ChakraProtoMsg__Node n = CHAKRA_PROTO_MSG__NODE__INIT;
    n.id = id;
    n.name = name;
    if (pos == LAYER - 1) {
      snprintf(name, sizeof name, "nccl:all_reduce layer%llu", (unsigned long long)layer);
      n.type = CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE;
      deps[nd++] = id - 1;
      a[0] = attr_bool("is_cpu_op", 0), a[1] = attr_int("comm_type", 0), a[2] = attr_int("comm_size", 1 << 20);
      n.n_attr = 3;
      n.duration_micros = 100;
    } else {
      const char *op = ops[id % 7];
      snprintf(name, sizeof name, "layer%llu.%s", (unsigned long long)layer, op);
      n.type = CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE;
      if (pos > 0) deps[nd++] = id - 1;
      else if (id > 0) deps[nd++] = id - 2; /* the last compute of the layer before */
      if (pos == 0 && layer >= 2) deps[nd++] = id - LAYER - 1; /* all-reduce two layers back */
      if (pos >= 7 && pos % 7 == 0) deps[nd++] = id - 7;
      a[0] = attr_bool("is_cpu_op", id % 5 == 0);
      n.n_attr = 1;
      n.duration_micros = 1 + id % 13 + (id % 1000 == 0 ? (uint64_t)rank : 0);
    }
    n.data_deps = deps;
    n.n_data_deps = nd;
    n.attr = ap;
    uint64_t start = 0;
    for (size_t k = 0; k < nd; k++)
      if (end[deps[k]] > start) start = end[deps[k]];
    end[id] = start + n.duration_micros;
    if (starts) n.start_time_micros = 1000000 + start;
    rc = chakra_writer_put(w, &n.base, err);
  }
  free(end);
  if (rc) {
    chakra_writer_discard(w);
    return -1;
  }
  return chakra_writer_close(w, err) ? -1 : 0;
}

int main(int argc, char **argv) {
  if (argc < 4 || argc > 5 || (argc == 5 && strcmp(argv[4], "--starts") != 0)) {
    fprintf(stderr, "usage: viewgen PREFIX RANKS NODES [--starts]\n");
    return 2;
  }
  int ranks = atoi(argv[2]);
  uint64_t nodes = strtoull(argv[3], NULL, 10);
  chakra_error err = {0};
  for (int r = 0; r < ranks; r++) {
    char path[4096];
    snprintf(path, sizeof path, "%s.%d.et", argv[1], r);
    if (write_rank(path, r, nodes, argc == 5, &err)) {
      fprintf(stderr, "viewgen: %s\n", err.msg);
      return 1;
    }
  }
  return 0;
}
