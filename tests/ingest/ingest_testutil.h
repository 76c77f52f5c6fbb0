/* ingest_testutil.h - what the ingest tests share beyond testutil.h
 * (tests/unit: temporary directories, files, ../shared, assert_contains):
 * reading a .et back through the library's reader and looking into the
 * nodes. Helpers fail the test instead of returning errors. */
#ifndef CHAKRA_INGEST_TESTUTIL_H
#define CHAKRA_INGEST_TESTUTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "chakra/attr.h"
#include "chakra/trace.h"
#include "testutil.h"

/* A decoded trace: metadata and nodes (each malloc'd by protobuf-c). */
typedef struct it_trace {
  chakra_metadata *meta;
  chakra_node **v;
  size_t n;
} it_trace;

static inline it_trace it_load(const char *path) {
  it_trace t = {0};
  chakra_reader *r;
  chakra_error err = {0};
  if (chakra_reader_open(&r, path, NULL, &err)) fail_msg("%s", err.msg);
  const chakra_metadata *m = chakra_reader_metadata(r);
  size_t ml = protobuf_c_message_get_packed_size(&m->base);
  uint8_t *mb = malloc(ml ? ml : 1);
  protobuf_c_message_pack(&m->base, mb);
  t.meta = chakra_proto_msg__global_metadata__unpack(NULL, ml, mb);
  free(mb);
  const uint8_t *data;
  size_t len;
  size_t cap = 0;
  int rc;
  while ((rc = chakra_reader_next_raw(r, &data, &len, &err)) == 1) {
    if (t.n == cap) t.v = realloc(t.v, (cap = cap ? cap * 2 : 64) * sizeof *t.v);
    t.v[t.n] = chakra_node_decode(data, len);
    if (!t.v[t.n]) fail_msg("%s: node %zu does not decode", path, t.n);
    t.n++;
  }
  if (rc < 0) fail_msg("%s", err.msg);
  chakra_reader_close(r);
  return t;
}

static inline void it_free(it_trace *t) {
  for (size_t i = 0; i < t->n; i++) protobuf_c_message_free_unpacked(&t->v[i]->base, NULL);
  free(t->v);
  if (t->meta) protobuf_c_message_free_unpacked(&t->meta->base, NULL);
  memset(t, 0, sizeof *t);
}

static inline const chakra_node *it_by_id(const it_trace *t, uint64_t id) {
  for (size_t i = 0; i < t->n; i++)
    if (t->v[i]->id == id) return t->v[i];
  return NULL;
}

static inline const chakra_node *it_by_name(const it_trace *t, const char *name) {
  for (size_t i = 0; i < t->n; i++)
    if (strcmp(t->v[i]->name, name) == 0) return t->v[i];
  return NULL;
}

static inline int64_t it_attr_int(const chakra_node *n, const char *name) {
  const chakra_attr *a = chakra_attr_find(n, name);
  int64_t v = 0; /* fail_msg() does not return, but is not declared noreturn */
  int inexact;
  if (!a || chakra_attr_as_int(a, &v, &inexact)) fail_msg("node %llu: no integer attribute %s", (unsigned long long)n->id, name);
  return v;
}

static inline int it_has_dep(const chakra_node *n, uint64_t id) {
  for (size_t i = 0; i < n->n_data_deps; i++)
    if (n->data_deps[i] == id) return 1;
  return 0;
}

#endif
