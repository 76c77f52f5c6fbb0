/* etgen.c - builds the large traces the format benchmarks run on.
 *
 *   etgen replicate SRC.et OUT.et MIN_NODES
 *       SRC's nodes copied k = 0, 1, ... times until OUT holds at least
 *       MIN_NODES nodes. Copy k adds k * stride to every id and every dep,
 *       where stride is a power of ten above every id and dep in SRC: the
 *       copies are independent, resolvable deps stay resolvable inside their
 *       copy and dangling ones stay dangling (an id below stride shifted by
 *       k * stride can only meet an id of the same copy).
 *   etgen small OUT.et NODES
 *       NODES collective nodes shaped like the ASTRA-sim microbenchmark
 *       node (COMM_COLL_NODE, attrs is_cpu_op=false, comm_type, comm_size),
 *       ids 0..NODES-1, each with a data dep on the previous one.
 *
 * Both write through chakra_writer (the library's own writer), so the
 * inputs are what chakra itself produces. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra/trace.h"

static int die(const chakra_error *err) {
  fprintf(stderr, "etgen: %s\n", err->msg);
  return 1;
}

static int replicate(const char *src, const char *dst, uint64_t min_nodes) {
  chakra_error err = {0};
  chakra_reader *r;
  if (chakra_reader_open(&r, src, NULL, &err)) return die(&err);
  size_t n = 0, cap = 0;
  chakra_node **nodes = NULL;
  const uint8_t *data;
  size_t len;
  int rc;
  uint64_t max_id = 0;
  while ((rc = chakra_reader_next_raw(r, &data, &len, &err)) == 1) {
    if (n == cap) {
      cap = cap ? 2 * cap : 4096;
      nodes = realloc(nodes, cap * sizeof *nodes);
      if (!nodes) return fprintf(stderr, "etgen: out of memory\n"), 1;
    }
    chakra_node *nd = chakra_node_decode(data, len);
    if (!nd) return fprintf(stderr, "etgen: %s: node %zu does not decode\n", src, n), 1;
    nodes[n++] = nd;
    if (nd->id > max_id) max_id = nd->id;
    for (size_t i = 0; i < nd->n_data_deps; i++)
      if (nd->data_deps[i] > max_id) max_id = nd->data_deps[i];
    for (size_t i = 0; i < nd->n_ctrl_deps; i++)
      if (nd->ctrl_deps[i] > max_id) max_id = nd->ctrl_deps[i];
  }
  if (rc < 0) return die(&err);
  if (n == 0) return fprintf(stderr, "etgen: %s has no nodes\n", src), 1;
  uint64_t stride = 10;
  while (stride <= max_id) stride *= 10;
  uint64_t copies = (min_nodes + n - 1) / n;
  if (copies == 0) copies = 1;
  if (max_id + (copies - 1) * stride < max_id)
    return fprintf(stderr, "etgen: ids would overflow\n"), 1;

  chakra_writer *w;
  if (chakra_writer_open(&w, dst, CHAKRA_WRITE_PLAIN, &err)) return die(&err);
  rc = chakra_writer_put(w, &chakra_reader_metadata(r)->base, &err);
  for (uint64_t k = 0; k < copies && !rc; k++) {
    for (size_t i = 0; i < n && !rc; i++) {
      chakra_node *nd = nodes[i];
      rc = chakra_writer_put(w, &nd->base, &err);
      /* Shift in place for the next copy. */
      nd->id += stride;
      for (size_t j = 0; j < nd->n_data_deps; j++) nd->data_deps[j] += stride;
      for (size_t j = 0; j < nd->n_ctrl_deps; j++) nd->ctrl_deps[j] += stride;
    }
  }
  if (rc) {
    chakra_writer_discard(w);
    return die(&err);
  }
  if (chakra_writer_close(w, &err)) return die(&err);
  printf("etgen: %s: %llu copies x %zu nodes = %llu nodes (id stride %llu)\n", dst,
         (unsigned long long)copies, n, (unsigned long long)(copies * n),
         (unsigned long long)stride);
  for (size_t i = 0; i < n; i++) protobuf_c_message_free_unpacked(&nodes[i]->base, NULL);
  free(nodes);
  chakra_reader_close(r);
  return 0;
}

static int small(const char *dst, uint64_t count) {
  static const int comm_types[] = {0, 2, 6, 7}; /* ALL_REDUCE, ALL_GATHER, ALL_TO_ALL, REDUCE_SCATTER */
  static const char *const names[] = {"all_reduce_4npus_1MB", "all_gather_4npus_1MB",
                                      "all_to_all_4npus_1MB", "reduce_scatter_4npus_1MB"};
  chakra_error err = {0};
  chakra_writer *w;
  if (chakra_writer_open(&w, dst, CHAKRA_WRITE_PLAIN, &err)) return die(&err);
  ChakraProtoMsg__GlobalMetadata meta = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
  meta.version = "0.0.4";
  int rc = chakra_writer_put(w, &meta.base, &err);
  ChakraProtoMsg__AttributeProto a_cpu = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT;
  ChakraProtoMsg__AttributeProto a_type = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT;
  ChakraProtoMsg__AttributeProto a_size = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT;
  a_cpu.name = "is_cpu_op";
  a_cpu.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL;
  a_type.name = "comm_type";
  a_type.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
  a_size.name = "comm_size";
  a_size.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
  a_size.int64_val = 1 << 20;
  ChakraProtoMsg__AttributeProto *attrs[] = {&a_cpu, &a_type, &a_size};
  ChakraProtoMsg__Node node = CHAKRA_PROTO_MSG__NODE__INIT;
  node.type = CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE;
  node.n_attr = 3;
  node.attr = attrs;
  uint64_t dep;
  node.data_deps = &dep;
  for (uint64_t i = 0; i < count && !rc; i++) {
    node.id = i;
    node.name = (char *)names[i % 4];
    a_type.int64_val = comm_types[i % 4];
    dep = i - 1;
    node.n_data_deps = i > 0;
    rc = chakra_writer_put(w, &node.base, &err);
  }
  if (rc) {
    chakra_writer_discard(w);
    return die(&err);
  }
  if (chakra_writer_close(w, &err)) return die(&err);
  printf("etgen: %s: %llu small collective nodes\n", dst, (unsigned long long)count);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 5 && strcmp(argv[1], "replicate") == 0)
    return replicate(argv[2], argv[3], strtoull(argv[4], NULL, 10));
  if (argc == 4 && strcmp(argv[1], "small") == 0) return small(argv[2], strtoull(argv[3], NULL, 10));
  fprintf(stderr,
          "usage: etgen replicate SRC.et OUT.et MIN_NODES\n"
          "       etgen small OUT.et NODES\n");
  return 2;
}
