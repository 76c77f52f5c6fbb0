/* microbench.c - one-collective-per-rank workloads; see include/chakra/gen.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "chakra/attr.h"
#include "chakra/gen.h"
#include "chakra/trace.h"

void chakra_gen_size_label(uint64_t bytes, char *out, size_t out_size) {
  if (bytes && bytes % (1ull << 30) == 0) snprintf(out, out_size, "%lluGB", (unsigned long long)(bytes >> 30));
  else if (bytes && bytes % (1ull << 20) == 0) snprintf(out, out_size, "%lluMB", (unsigned long long)(bytes >> 20));
  else if (bytes && bytes % 1024 == 0) snprintf(out, out_size, "%lluKB", (unsigned long long)(bytes >> 10));
  else snprintf(out, out_size, "%lluB", (unsigned long long)bytes);
}

static int write_rank(const char *prefix, uint32_t rank, const char *name, int comm_type,
                      uint64_t size, chakra_error *err) {
  size_t plen = strlen(prefix) + 32;
  char *path = malloc(plen);
  if (!path) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  snprintf(path, plen, "%s.%u.et", prefix, rank);
  ChakraProtoMsg__GlobalMetadata meta = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
  meta.version = "0.0.4";
  ChakraProtoMsg__AttributeProto a_cpu = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT;
  ChakraProtoMsg__AttributeProto a_type = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT;
  ChakraProtoMsg__AttributeProto a_size = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT;
  a_cpu.name = "is_cpu_op";
  a_cpu.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL;
  a_cpu.bool_val = 0;
  a_type.name = "comm_type";
  a_type.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
  a_type.int64_val = comm_type;
  a_size.name = "comm_size";
  a_size.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
  a_size.int64_val = (int64_t)size;
  ChakraProtoMsg__AttributeProto *attrs[] = {&a_cpu, &a_type, &a_size};
  ChakraProtoMsg__Node node = CHAKRA_PROTO_MSG__NODE__INIT;
  node.id = rank;
  node.name = (char *)name;
  node.type = CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE;
  node.n_attr = 3;
  node.attr = attrs;
  chakra_writer *w;
  int rc = chakra_writer_open(&w, path, 0, err);
  if (!rc) {
    rc = chakra_writer_put(w, &meta.base, err);
    if (!rc) rc = chakra_writer_put(w, &node.base, err);
    if (rc) chakra_writer_discard(w);
    else rc = chakra_writer_close(w, err);
  }
  free(path);
  return rc;
}

int chakra_gen_microbench(const char *prefix, int comm_type, uint32_t npus, uint64_t size_bytes,
                          chakra_error *err) {
  if (npus == 0) return chakra_error_set(err, CHAKRA_EINVAL, "npus must be at least 1");
  if (size_bytes > INT64_MAX) return chakra_error_set(err, CHAKRA_EINVAL, "size_bytes %llu is larger than a comm_size can hold", (unsigned long long)size_bytes);
  const char *cname = chakra_comm_type_name(comm_type);
  if (!cname) return chakra_error_set(err, CHAKRA_EINVAL, "unknown collective type %d", comm_type);
  char label[32], name[96], lower[32];
  chakra_gen_size_label(size_bytes, label, sizeof label);
  size_t i = 0;
  for (; cname[i] && i < sizeof lower - 1; i++)
    lower[i] = cname[i] >= 'A' && cname[i] <= 'Z' ? (char)(cname[i] + 32) : cname[i];
  lower[i] = 0;
  snprintf(name, sizeof name, "%s_%unpus_%s", lower, npus, label);
  for (uint32_t r = 0; r < npus; r++) {
    int rc = write_rank(prefix, r, name, comm_type, size_bytes, err);
    if (rc) return rc;
  }
  return 0;
}
