/* microbench.c - one-collective-per-rank workloads; see include/chakra/gen.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "chakra/attr.h"
#include "chakra/build.h"
#include "chakra/gen.h"
#include "chakra/trace.h"

void chakra_gen_size_label(uint64_t bytes, char *out, size_t out_size) {
  if (bytes && bytes % (1ull << 30) == 0) snprintf(out, out_size, "%lluGB", (unsigned long long)(bytes >> 30));
  else if (bytes && bytes % (1ull << 20) == 0) snprintf(out, out_size, "%lluMB", (unsigned long long)(bytes >> 20));
  else if (bytes && bytes % 1024 == 0) snprintf(out, out_size, "%lluKB", (unsigned long long)(bytes >> 10));
  else snprintf(out, out_size, "%lluB", (unsigned long long)bytes);
}

/* Rank r's file: the metadata and its one collective node. */
static int put_rank(chakra_workload_writer *w, chakra_builder *b, uint32_t rank, const char *name, int comm_type,
                    uint64_t size, chakra_error *err) {
  chakra_builder_metadata(b, "0.0.4");
  int rc = chakra_builder_put(b, err);
  chakra_builder_node(b, rank, name, CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE);
  chakra_builder_bool(b, "is_cpu_op", 0);
  chakra_builder_int64(b, "comm_type", comm_type);
  chakra_builder_int64(b, "comm_size", (int64_t)size);
  if (!rc) rc = chakra_builder_put(b, err);
  if (!rc) rc = chakra_workload_writer_put_built(w, rank, b, err);
  chakra_builder_clear(b);
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
  chakra_workload_writer *w;
  chakra_builder *b;
  int rc = chakra_builder_new(&b);
  if (rc) return chakra_error_set(err, rc, "out of memory");
  rc = chakra_workload_writer_open(&w, prefix, npus, NULL, err);
  for (uint32_t r = 0; r < npus && !rc; r++) rc = put_rank(w, b, r, name, comm_type, size_bytes, err);
  chakra_builder_free(b);
  if (rc) {
    chakra_workload_writer_discard(w);
    return rc;
  }
  return chakra_workload_writer_commit(w, err);
}
