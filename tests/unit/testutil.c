/* testutil.c - see testutil.h. */
#include "testutil.h"

#include "chakra/build.h"
#include "chakra/gen.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

char *tu_mkdtemp(void) {
  const char *base = getenv("TMPDIR");
  if (!base || !*base) base = "/tmp";
  size_t n = strlen(base) + 32;
  char *p = malloc(n);
  assert_non_null(p);
  snprintf(p, n, "%s/chakra-test.XXXXXX", base);
  if (!mkdtemp(p)) fail_msg("mkdtemp in %s failed", base);
  return p;
}

void tu_rmtree(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    char *p = tu_join(dir, e->d_name);
    struct stat st;
    if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) tu_rmtree(p);
    else unlink(p);
    free(p);
  }
  closedir(d);
  rmdir(dir);
}

char *tu_join(const char *dir, const char *name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = malloc(n);
  assert_non_null(p);
  snprintf(p, n, "%s/%s", dir, name);
  return p;
}

void tu_write_bytes(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) fail_msg("cannot create %s", path);
  if (n && fwrite(data, 1, n, f) != n) fail_msg("cannot write %s", path);
  if (fclose(f) != 0) fail_msg("cannot close %s", path);
}

uint8_t *tu_read_file(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) fail_msg("cannot open %s", path);
  size_t cap = 4096, used = 0;
  uint8_t *p = malloc(cap);
  assert_non_null(p);
  for (;;) {
    if (used == cap) {
      p = realloc(p, cap *= 2);
      assert_non_null(p);
    }
    size_t k = fread(p + used, 1, cap - used, f);
    used += k;
    if (k == 0) break;
  }
  fclose(f);
  *n = used;
  return p;
}

void tu_write_text(const char *path, const char *text) { tu_write_bytes(path, text, strlen(text)); }

char *tu_read_text(const char *path, size_t *n) {
  size_t len;
  uint8_t *p = tu_read_file(path, &len);
  p = realloc(p, len + 1);
  assert_non_null(p);
  p[len] = 0;
  if (n) *n = len;
  return (char *)p;
}

int tu_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

size_t tu_dir_count(const char *dir, char *first) {
  DIR *d = opendir(dir);
  if (!d) fail_msg("cannot open directory %s", dir);
  size_t n = 0;
  struct dirent *e;
  if (first) first[0] = 0;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    if (n++ == 0 && first) snprintf(first, 256, "%s", e->d_name);
  }
  closedir(d);
  return n;
}

char *tu_dir;

int tu_dir_setup(void **state) {
  (void)state;
  tu_dir = tu_mkdtemp();
  return 0;
}

int tu_dir_teardown(void **state) {
  (void)state;
  tu_rmtree(tu_dir);
  free(tu_dir);
  tu_dir = NULL;
  return 0;
}

const char *tu_shared_dir(void) {
  static char dir[4096];
  const char *env = getenv("CHAKRA_SHARED");
  if (env && *env) snprintf(dir, sizeof dir, "%s", env);
  else snprintf(dir, sizeof dir, "%s/../shared", CHAKRA_SOURCE_DIR);
  char probe[4200];
  snprintf(probe, sizeof probe, "%s/data/traces", dir);
  struct stat st;
  return stat(probe, &st) == 0 && S_ISDIR(st.st_mode) ? dir : NULL;
}

char *tu_shared_path(const char *rel) {
  const char *shared = tu_shared_dir();
  if (!shared) fail_msg("the shared folder is absent (set CHAKRA_SHARED or put it at ../shared)");
  size_t n = strlen(shared) + strlen(rel) + 8;
  char *p = malloc(n);
  assert_non_null(p);
  snprintf(p, n, "%s/data/%s", shared, rel);
  return p;
}

void tu_put(tu_buf *b, const void *data, size_t n) {
  if (b->n + n > b->cap) {
    size_t nc = b->cap ? b->cap : 256;
    while (nc < b->n + n) nc *= 2;
    b->p = realloc(b->p, nc);
    assert_non_null(b->p);
    b->cap = nc;
  }
  if (n) memcpy(b->p + b->n, data, n);
  b->n += n;
}

void tu_put_byte(tu_buf *b, uint8_t c) { tu_put(b, &c, 1); }

void tu_put_varint(tu_buf *b, uint64_t v) {
  uint8_t tmp[10];
  tu_put(b, tmp, chakra_varint_encode(v, tmp));
}

void tu_put_tag(tu_buf *b, unsigned field, unsigned wire_type) {
  tu_put_varint(b, (uint64_t)field << 3 | wire_type);
}

void tu_put_framed(tu_buf *b, const void *body, size_t n) {
  tu_put_varint(b, n);
  tu_put(b, body, n);
}

void tu_put_msg(tu_buf *b, const ProtobufCMessage *m) {
  size_t len = protobuf_c_message_get_packed_size(m);
  uint8_t *tmp = malloc(len ? len : 1);
  assert_non_null(tmp);
  protobuf_c_message_pack(m, tmp);
  tu_put_framed(b, tmp, len);
  free(tmp);
}

void tu_put_metadata(tu_buf *b) {
  ChakraProtoMsg__GlobalMetadata meta = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
  meta.version = "1.0.0";
  tu_put_msg(b, &meta.base);
}

void tu_buf_free(tu_buf *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}

void tu_write_trace(const char *path, const tu_node *nodes, size_t n) {
  chakra_error err = {0};
  chakra_writer *w;
  if (chakra_writer_open(&w, path, 0, &err)) fail_msg("writer_open: %s", err.msg);
  ChakraProtoMsg__GlobalMetadata meta = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
  meta.version = "1.0.0";
  if (chakra_writer_put(w, &meta.base, &err)) fail_msg("writer_put: %s", err.msg);
  for (size_t i = 0; i < n; i++) {
    ChakraProtoMsg__Node nd = CHAKRA_PROTO_MSG__NODE__INIT;
    nd.id = nodes[i].id;
    nd.name = (char *)(nodes[i].name ? nodes[i].name : "");
    nd.type = nodes[i].type ? (ChakraProtoMsg__NodeType)nodes[i].type
                            : CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE;
    nd.duration_micros = nodes[i].duration;
    nd.n_data_deps = nodes[i].n_data;
    nd.data_deps = (uint64_t *)nodes[i].data;
    nd.n_ctrl_deps = nodes[i].n_ctrl;
    nd.ctrl_deps = (uint64_t *)nodes[i].ctrl;
    if (chakra_writer_put(w, &nd.base, &err)) fail_msg("writer_put: %s", err.msg);
  }
  if (chakra_writer_close(w, &err)) fail_msg("writer_close: %s", err.msg);
}

char *tu_microbench(const char *name, uint32_t npus) {
  char *prefix = tu_join(tu_dir, name);
  chakra_error err = {0};
  if (chakra_gen_microbench(prefix, CHAKRA_ALL_REDUCE, npus, 1 << 20, NULL, &err)) fail_msg("%s", err.msg);
  return prefix;
}

static void put_wnode(chakra_builder *b, const tu_wnode *nd, char *name, size_t size) {
  snprintf(name, size, "n%llu", (unsigned long long)nd->id);
  chakra_builder_node(b, nd->id, nd->name ? nd->name : name, nd->type);
  chakra_builder_data_deps(b, nd->deps, nd->n_deps);
  chakra_builder_ctrl_deps(b, nd->ctrl, nd->n_ctrl);
  if (nd->start_us) chakra_builder_start_time(b, nd->start_us);
  chakra_builder_bool(b, "is_cpu_op", nd->cpu);
  switch (nd->type) {
    case CHAKRA_COMP_NODE: chakra_builder_duration(b, nd->us); break;
    case CHAKRA_COMM_SEND_NODE:
    case CHAKRA_COMM_RECV_NODE:
      chakra_builder_int64(b, nd->type == CHAKRA_COMM_SEND_NODE ? "comm_dst" : "comm_src", nd->peer);
      chakra_builder_int64(b, "comm_size", (int64_t)nd->size);
      chakra_builder_int64(b, "comm_tag", 3);
      break;
    case CHAKRA_COMM_COLL_NODE:
      chakra_builder_int64(b, "comm_type", nd->comm_type);
      chakra_builder_int64(b, "comm_size", (int64_t)nd->size);
      if (nd->pg) chakra_builder_string(b, "pg_name", nd->pg);
      break;
    default: break;
  }
}

void tu_write_rank(const char *prefix, uint32_t rank, const tu_wnode *nodes, size_t n) {
  chakra_builder *b;
  chakra_error err = {0};
  assert_int_equal(chakra_builder_new(&b), 0);
  chakra_builder_metadata(b, "0.0.4");
  if (chakra_builder_put(b, &err)) fail_msg("builder_put: %s", err.msg);
  for (size_t i = 0; i < n; i++) {
    char name[32];
    put_wnode(b, &nodes[i], name, sizeof name);
    if (chakra_builder_put(b, &err)) fail_msg("builder_put: %s", err.msg);
  }
  size_t len;
  const uint8_t *bytes = chakra_builder_bytes(b, &len);
  char *path = chakra_rank_path_dup(prefix, rank);
  assert_non_null(path);
  tu_write_bytes(path, bytes, len);
  free(path);
  chakra_builder_free(b);
}

chakra_graph *tu_rank_graph(const char *prefix, uint32_t r) {
  char *p = chakra_rank_path_dup(prefix, r);
  assert_non_null(p);
  chakra_graph *g;
  chakra_error err = {0};
  if (chakra_graph_load(&g, p, NULL, &err)) fail_msg("%s", err.msg);
  free(p);
  return g;
}

void tu_assert_same_ranks(const char *a, const char *b, uint32_t n) {
  for (uint32_t r = 0; r < n; r++) {
    char *pa = chakra_rank_path_dup(a, r), *pb = chakra_rank_path_dup(b, r);
    size_t na, nb;
    uint8_t *ba = tu_read_file(pa, &na), *bb = tu_read_file(pb, &nb);
    if (na != nb || memcmp(ba, bb, na) != 0) fail_msg("%s and %s differ", pa, pb);
    free(ba), free(bb), free(pa), free(pb);
  }
}

void tu_collect_line(void *ctx, const chakra_problem *p) {
  tu_lines *l = ctx;
  if (l->n < (int)(sizeof l->line / sizeof l->line[0])) {
    chakra_problem_format(p, l->line[l->n], sizeof l->line[0]);
    l->sev[l->n] = p->severity;
  }
  l->n++;
}

const char *tu_fmt(const char *fmt, ...) {
  static char bufs[4][512];
  static int next;
  char *b = bufs[next++ & 3];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(b, sizeof bufs[0], fmt, ap);
  va_end(ap);
  return b;
}
