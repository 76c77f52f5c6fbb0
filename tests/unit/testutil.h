/* testutil.h - what the C tests share (private to tests/): temporary
 * directories, raw byte files, hand-framed messages and small trace builders.
 *
 * Every helper aborts the test (cmocka fail) rather than returning an error,
 * so a test body reads as the behaviour it pins. */
#ifndef CHAKRA_TESTUTIL_H
#define CHAKRA_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "chakra/attr.h"
#include "chakra/graph.h"
#include "chakra/trace.h"

/* ---- files ---------------------------------------------------------- */

/* A fresh empty directory under $TMPDIR (or /tmp); malloc'd path. */
char *tu_mkdtemp(void);
/* Removes dir and everything in it (one level of files is all tests make,
 * but nested directories are handled too). Frees nothing. */
void tu_rmtree(const char *dir);
/* dir + "/" + name, malloc'd. */
char *tu_join(const char *dir, const char *name);
void tu_write_bytes(const char *path, const void *data, size_t n);
/* Whole file, malloc'd; *n receives its size. Fails the test if unreadable. */
uint8_t *tu_read_file(const char *path, size_t *n);
/* tu_write_bytes of a NUL-terminated string (without the NUL). */
void tu_write_text(const char *path, const char *text);
/* Whole file as a NUL-terminated string, malloc'd; *n (if non-NULL)
 * receives its size without the NUL. */
char *tu_read_text(const char *path, size_t *n);
int tu_exists(const char *path);
/* Number of entries in dir other than . and ..; the first one's name is
 * copied to first (if non-NULL, 256 bytes). */
size_t tu_dir_count(const char *dir, char *first);

/* A temporary directory per test or group: tu_dir_setup, a cmocka setup
 * function, makes a fresh tu_dir (tu_mkdtemp); tu_dir_teardown removes it
 * with everything in it. */
extern char *tu_dir;
int tu_dir_setup(void **state);
int tu_dir_teardown(void **state);

/* The shared folder (README: $CHAKRA_SHARED, else <repo>/../shared) if it
 * holds data/traces, else NULL. */
const char *tu_shared_dir(void);
/* <shared>/data/<rel>, malloc'd. Fails the test when the shared folder is
 * absent: main() checks tu_shared_dir() first and skips with a message. */
char *tu_shared_path(const char *rel);
/* Exit status CTest reads as "skipped" (SKIP_RETURN_CODE). */
#define TU_SKIP 77

/* ---- bytes ---------------------------------------------------------- */

typedef struct tu_buf {
  uint8_t *p;
  size_t n, cap;
} tu_buf;

void tu_put(tu_buf *b, const void *data, size_t n);
void tu_put_byte(tu_buf *b, uint8_t c);
void tu_put_varint(tu_buf *b, uint64_t v);
/* A field tag: number << 3 | wire type. */
void tu_put_tag(tu_buf *b, unsigned field, unsigned wire_type);
/* Length prefix + body, as a message appears in a .et file. */
void tu_put_framed(tu_buf *b, const void *body, size_t n);
/* Length prefix + the packed message. */
void tu_put_msg(tu_buf *b, const ProtobufCMessage *m);
/* The GlobalMetadata {version: "1.0.0"} every valid test file starts with. */
void tu_put_metadata(tu_buf *b);
void tu_buf_free(tu_buf *b);

/* ---- traces --------------------------------------------------------- */

typedef struct tu_node {
  uint64_t id;
  int type;                 /* ChakraProtoMsg__NodeType; 0 = COMP_NODE */
  uint64_t duration;
  const uint64_t *data;
  size_t n_data;
  const uint64_t *ctrl;
  size_t n_ctrl;
  const char *name;
} tu_node;

#define TU_COUNT(...) (sizeof((uint64_t[]){__VA_ARGS__}) / sizeof(uint64_t))
#define TU_DATA(...) .data = (const uint64_t[]){__VA_ARGS__}, .n_data = TU_COUNT(__VA_ARGS__)
#define TU_CTRL(...) .ctrl = (const uint64_t[]){__VA_ARGS__}, .n_ctrl = TU_COUNT(__VA_ARGS__)

/* Writes a trace with chakra_writer_*: GlobalMetadata version "1.0.0",
 * then the nodes in array order (the file order). */
void tu_write_trace(const char *path, const tu_node *nodes, size_t n);

/* A node of a workload rank, with the attributes its type needs:
 * compute (is_cpu_op = cpu, duration us), send (comm_dst = peer) and
 * receive (comm_src = peer) with comm_size = size and comm_tag = 3,
 * collective (comm_type, comm_size = size, pg_name = pg when set); a name,
 * control dependencies and a recorded start when given. */
typedef struct tu_wnode {
  uint64_t id;
  int type;                 /* CHAKRA_COMP_NODE, CHAKRA_COMM_SEND_NODE, ... (chakra/attr.h) */
  int cpu;
  uint64_t us;
  int32_t peer;
  uint64_t size;
  int comm_type;            /* CHAKRA_ALL_REDUCE, ... */
  const char *pg;
  uint64_t deps[4];         /* data dependencies: the first n_deps */
  size_t n_deps;
  const uint64_t *ctrl;     /* control dependencies (TU_CTRL) */
  size_t n_ctrl;
  const char *name;         /* NULL: "n<id>" */
  uint64_t start_us;        /* recorded start_time_micros; 0 = none */
} tu_wnode;

/* A 1 MiB all-reduce microbenchmark of npus ranks (chakra gen microbench)
 * at tu_dir/NAME; the prefix, malloc'd. */
char *tu_microbench(const char *name, uint32_t npus);

/* Initialisers: TU_COMP(2, 10, 0, TU_DEPS(1)) is GPU compute node 2 of
 * 10 us after node 1; the dependencies are optional. */
#define TU_DEPS(...) .deps = {__VA_ARGS__}, .n_deps = TU_COUNT(__VA_ARGS__)
#define TU_COMP(i, us_, cpu_, ...) {.id = (i), .type = CHAKRA_COMP_NODE, .us = (us_), .cpu = (cpu_), __VA_ARGS__}
#define TU_SEND(i, peer_, size_, ...) \
  {.id = (i), .type = CHAKRA_COMM_SEND_NODE, .peer = (peer_), .size = (size_), __VA_ARGS__}
#define TU_RECV(i, peer_, size_, ...) \
  {.id = (i), .type = CHAKRA_COMM_RECV_NODE, .peer = (peer_), .size = (size_), __VA_ARGS__}
#define TU_COLL(i, type_, size_, ...) \
  {.id = (i), .type = CHAKRA_COMM_COLL_NODE, .comm_type = (type_), .size = (size_), __VA_ARGS__}

/* Writes rank r of a workload, PREFIX.r.et, through chakra_builder:
 * GlobalMetadata version "0.0.4", then the nodes in array order. */
void tu_write_rank(const char *prefix, uint32_t rank, const tu_wnode *nodes, size_t n);

/* Rank r of the workload at prefix, loaded (fails the test otherwise). */
chakra_graph *tu_rank_graph(const char *prefix, uint32_t r);
/* Fails the test unless ranks 0..n-1 of workloads a and b are the same
 * bytes. */
void tu_assert_same_ranks(const char *a, const char *b, uint32_t n);

/* ---- messages ------------------------------------------------------- */

/* Collects problems (a chakra_diag_fn) as chakra_problem_format() lines,
 * with their severities. */
typedef struct tu_lines {
  char line[16][1024];
  chakra_severity sev[16];
  int n;
} tu_lines;
void tu_collect_line(void *ctx, const chakra_problem *p);

/* Fails the test unless needle occurs in haystack. */
#define assert_contains(haystack, needle)                                          \
  do {                                                                             \
    const char *h_ = (haystack), *n_ = (needle);                                   \
    if (!h_ || !strstr(h_, n_)) fail_msg("expected \"%s\" in \"%s\"", n_, h_ ? h_ : "(null)"); \
  } while (0)

#define assert_not_contains(haystack, needle)                                      \
  do {                                                                             \
    const char *h_ = (haystack), *n_ = (needle);                                   \
    if (h_ && strstr(h_, n_)) fail_msg("did not expect \"%s\" in \"%s\"", n_, h_); \
  } while (0)

/* printf into a static buffer (one at a time). */
const char *tu_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
