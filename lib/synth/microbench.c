/* microbench.c - one-collective-per-rank workloads; see include/chakra/gen.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "chakra/attr.h"
#include "chakra/build.h"
#include "chakra/gen.h"
#include "chakra/set.h"
#include "chakra/trace.h"
#include "../util/outfile.h"

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

/* "<coll>_<N>npus_<size>" into name; 0 or an error. */
static int node_name(int comm_type, uint32_t npus, uint64_t size_bytes, char *name, size_t size, chakra_error *err) {
  if (npus == 0) return chakra_error_set(err, CHAKRA_EINVAL, "npus must be at least 1");
  if (size_bytes > INT64_MAX) return chakra_error_set(err, CHAKRA_EINVAL, "size_bytes %llu is larger than a comm_size can hold", (unsigned long long)size_bytes);
  const char *cname = chakra_comm_type_name(comm_type);
  if (!cname) return chakra_error_set(err, CHAKRA_EINVAL, "unknown collective type %d", comm_type);
  char label[32], lower[32];
  chakra_gen_size_label(size_bytes, label, sizeof label);
  size_t i = 0;
  for (; cname[i] && i < sizeof lower - 1; i++)
    lower[i] = cname[i] >= 'A' && cname[i] <= 'Z' ? (char)(cname[i] + 32) : cname[i];
  lower[i] = 0;
  snprintf(name, size, "%s_%unpus_%s", lower, npus, label);
  return CHAKRA_OK;
}

int chakra_gen_microbench(const char *prefix, int comm_type, uint32_t npus, uint64_t size_bytes,
                          const chakra_microbench_options *opt, chakra_error *err) {
  char name[96];
  int rc = node_name(comm_type, npus, size_bytes, name, sizeof name, err);
  if (rc) return rc;
  chakra_workload_writer *w;
  chakra_builder *b;
  rc = chakra_builder_new(&b);
  if (rc) return chakra_error_set(err, rc, "out of memory");
  rc = chakra_workload_writer_open(&w, prefix, npus, NULL, err);
  for (uint32_t r = 0; r < npus && !rc; r++) {
    rc = put_rank(w, b, r, name, comm_type, size_bytes, err);
    if (!rc && opt && opt->progress && opt->progress(opt->progress_ctx, "ranks", r + 1, npus))
      rc = chakra_error_set(err, CHAKRA_ECANCELED, "%s: stopped by the progress callback", prefix);
  }
  chakra_builder_free(b);
  if (rc) {
    chakra_workload_writer_discard(w);
    return rc;
  }
  return chakra_workload_writer_commit(w, err);
}

/* The template: rank 0's file (node id 0), which every rank runs. */
static int write_template(const char *path, int comm_type, const char *name, uint64_t size, chakra_error *err) {
  chakra_builder *b;
  if (chakra_builder_new(&b)) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  chakra_builder_metadata(b, "0.0.4");
  int rc = chakra_builder_put(b, err);
  chakra_builder_node(b, 0, name, CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE);
  chakra_builder_bool(b, "is_cpu_op", 0);
  chakra_builder_int64(b, "comm_type", comm_type);
  chakra_builder_int64(b, "comm_size", (int64_t)size);
  if (!rc) rc = chakra_builder_put(b, err);
  outfile *f = NULL;
  if (!rc) rc = outfile_open(&f, path, 0, err);
  size_t len = 0;
  const uint8_t *bytes = chakra_builder_bytes(b, &len);
  if (!rc) rc = outfile_write(f, bytes, len, err);
  if (!rc) rc = outfile_commit(f, err);
  else if (f) outfile_discard(f);
  chakra_builder_free(b);
  return rc;
}

static int write_grid(const char *prefix, uint32_t npus, chakra_error *err) {
  char *mpath = chakra_manifest_path_dup(prefix), *cpath = chakra_class_path_dup(prefix, 0);
  chakra_manifest *m = NULL;
  int rc = mpath && cpath ? chakra_manifest_new(&m, CHAKRA_MANIFEST_GRID, npus, err)
                          : chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  if (!rc) rc = chakra_manifest_add_axis(m, "rank", npus, 0, err);
  const char *base = cpath ? strrchr(cpath, '/') : NULL;
  if (!rc) rc = chakra_manifest_add_class(m, base ? base + 1 : cpath, 0, err);
  if (!rc) rc = chakra_manifest_write(m, mpath, err);
  chakra_manifest_free(m);
  free(mpath);
  free(cpath);
  return rc;
}

int chakra_gen_microbench_shared(const char *prefix, int comm_type, uint32_t npus, uint64_t size_bytes,
                                 chakra_error *err) {
  char name[96];
  int rc = node_name(comm_type, npus, size_bytes, name, sizeof name, err);
  if (rc) return rc;
  char *cpath = chakra_class_path_dup(prefix, 0);
  if (!cpath) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  rc = outfile_group_begin(err);
  if (!rc) {
    rc = write_template(cpath, comm_type, name, size_bytes, err);
    if (!rc) rc = write_grid(prefix, npus, err);
    chakra_error ignored = {0};
    int end = outfile_group_end(rc == 0, rc ? &ignored : err);
    if (!rc) rc = end;
  }
  free(cpath);
  return rc;
}
