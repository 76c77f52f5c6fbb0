/* ingest_testutil.h - what the ingest tests share (private to tests/ingest):
 * temporary directories, small files, reading a .et back through the
 * library's reader, and finding ../shared. Helpers fail the test instead of
 * returning errors. Header-only so that each test program stands alone. */
#ifndef CHAKRA_INGEST_TESTUTIL_H
#define CHAKRA_INGEST_TESTUTIL_H

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "chakra/attr.h"
#include "chakra/trace.h"

#define IT_SKIP 77

/* Fails the test unless needle occurs in haystack. */
#define assert_contains(haystack, needle)                                                       \
  do {                                                                                          \
    const char *h_ = (haystack), *n_ = (needle);                                                \
    if (!h_ || !strstr(h_, n_)) fail_msg("expected \"%s\" in \"%s\"", n_, h_ ? h_ : "(null)"); \
  } while (0)

static inline char *it_mkdtemp(void) {
  const char *base = getenv("TMPDIR");
  if (!base || !*base) base = "/tmp";
  size_t n = strlen(base) + 32;
  char *p = malloc(n);
  snprintf(p, n, "%s/chakra-ingest.XXXXXX", base);
  if (!mkdtemp(p)) fail_msg("mkdtemp in %s failed", base);
  return p;
}

static inline char *it_join(const char *dir, const char *name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = malloc(n);
  snprintf(p, n, "%s/%s", dir, name);
  return p;
}

static inline void it_rmtree(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    char *p = it_join(dir, e->d_name);
    unlink(p);
    free(p);
  }
  closedir(d);
  rmdir(dir);
}

static inline size_t it_dir_count(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) fail_msg("cannot open %s", dir);
  size_t n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
  closedir(d);
  return n;
}

static inline void it_write(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  if (!f) fail_msg("cannot create %s", path);
  fputs(text, f);
  fclose(f);
}

static inline int it_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

static inline uint8_t *it_read(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) fail_msg("cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *p = malloc((size_t)len + 1);
  if (len && fread(p, 1, (size_t)len, f) != (size_t)len) fail_msg("cannot read %s", path);
  fclose(f);
  *n = (size_t)len;
  return p;
}

/* The shared folder ($CHAKRA_SHARED, else <repo>/../shared) if it holds
 * data/traces, else NULL. */
static inline const char *it_shared(const char *repo) {
  static char buf[4096];
  const char *env = getenv("CHAKRA_SHARED");
  if (env && *env) snprintf(buf, sizeof buf, "%s", env);
  else snprintf(buf, sizeof buf, "%s/../shared", repo);
  char probe[4200];
  snprintf(probe, sizeof probe, "%s/data/traces", buf);
  return it_exists(probe) ? buf : NULL;
}

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
  int64_t v;
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
