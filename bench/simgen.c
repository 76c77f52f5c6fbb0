/* simgen.c - writes the simulator's scaling workloads (spec section 13):
 *   compute  N ranks x M compute nodes of D us in one chain
 *   chain    k iterations of (D us compute -> all-reduce of S bytes)
 *   overlap  k computes in a chain, all-reduce i depending on compute i only
 * Every rank gets the same graph. Used by bench/sim_bench.sh.
 *
 * usage: simgen compute|chain|overlap NPUS COUNT PREFIX [DURATION_US] [SIZE] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra/build.h"
#include "chakra/trace.h"

static ChakraProtoMsg__AttributeProto attr_bool(const char *name, int v) {
  ChakraProtoMsg__AttributeProto a = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT;
  a.name = (char *)name;
  a.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL;
  a.bool_val = v;
  return a;
}

static ChakraProtoMsg__AttributeProto attr_int(const char *name, int64_t v) {
  ChakraProtoMsg__AttributeProto a = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT;
  a.name = (char *)name;
  a.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
  a.int64_val = v;
  return a;
}

static int put_node(chakra_writer *w, uint64_t id, int coll, uint64_t dur_us, uint64_t size,
                    uint64_t *deps, size_t ndeps, chakra_error *err) {
  ChakraProtoMsg__AttributeProto cpu = attr_bool("is_cpu_op", 0), type = attr_int("comm_type", 0),
                                 sz = attr_int("comm_size", (int64_t)size);
  ChakraProtoMsg__AttributeProto *attrs[] = {&cpu, &type, &sz};
  ChakraProtoMsg__Node n = CHAKRA_PROTO_MSG__NODE__INIT;
  char name[32];
  snprintf(name, sizeof name, coll ? "allreduce_%llu" : "compute_%llu", (unsigned long long)id);
  n.id = id;
  n.name = name;
  n.type = coll ? CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE : CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE;
  n.duration_micros = coll ? 0 : dur_us;
  n.data_deps = deps;
  n.n_data_deps = ndeps;
  n.attr = attrs;
  n.n_attr = coll ? 3 : 1;
  return chakra_writer_put(w, &n.base, err);
}

static int write_rank(const char *kind, const char *path, uint64_t count, uint64_t dur, uint64_t size,
                      chakra_error *err) {
  chakra_writer *w;
  int rc = chakra_writer_open(&w, path, 0, err);
  if (rc) return rc;
  ChakraProtoMsg__GlobalMetadata m = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
  m.version = "1.0.0";
  rc = chakra_writer_put(w, &m.base, err);
  for (uint64_t i = 0; i < count && !rc; i++) {
    uint64_t dep;
    if (strcmp(kind, "compute") == 0) {
      dep = i - 1;
      rc = put_node(w, i, 0, dur, 0, &dep, i ? 1 : 0, err);
    } else if (strcmp(kind, "chain") == 0) { /* 2i compute, 2i+1 all-reduce */
      dep = 2 * i - 1;
      rc = put_node(w, 2 * i, 0, dur, 0, &dep, i ? 1 : 0, err);
      dep = 2 * i;
      if (!rc) rc = put_node(w, 2 * i + 1, 1, 0, size, &dep, 1, err);
    } else { /* overlap: computes chain, all-reduce i waits for compute i */
      dep = 2 * i - 2;
      rc = put_node(w, 2 * i, 0, dur, 0, &dep, i ? 1 : 0, err);
      dep = 2 * i;
      if (!rc) rc = put_node(w, 2 * i + 1, 1, 0, size, &dep, 1, err);
    }
  }
  if (rc) {
    chakra_writer_discard(w);
    return rc;
  }
  return chakra_writer_close(w, err);
}

int main(int argc, char **argv) {
  if (argc < 5 || (strcmp(argv[1], "compute") && strcmp(argv[1], "chain") && strcmp(argv[1], "overlap"))) {
    fprintf(stderr, "usage: simgen compute|chain|overlap NPUS COUNT PREFIX [DURATION_US=10] [SIZE=1048576]\n"
                    "  COUNT is nodes per rank (compute) or iterations (chain, overlap)\n");
    return 2;
  }
  unsigned npus = (unsigned)strtoul(argv[2], NULL, 10);
  uint64_t count = strtoull(argv[3], NULL, 10);
  uint64_t dur = argc > 5 ? strtoull(argv[5], NULL, 10) : 10;
  uint64_t size = argc > 6 ? strtoull(argv[6], NULL, 10) : 1048576;
  size_t plen = strlen(argv[4]) + 24;
  char *path = malloc(plen);
  chakra_error err = {0};
  for (unsigned r = 0; r < npus; r++) {
    chakra_rank_path(path, plen, argv[4], r);
    if (write_rank(argv[1], path, count, dur, size, &err)) {
      fprintf(stderr, "simgen: %s\n", err.msg);
      return 1;
    }
  }
  free(path);
  return 0;
}
