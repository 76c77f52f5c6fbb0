/* htparse.h - the host-ET parser's state and its driving (private to the
 * host-ET reader, lib/ingest/hostet*.c and ht*.c).
 *
 * The parser is a state machine over yajl's callbacks (htevents.c): a
 * stack of frames (top object, nodes array, node, inputs/outputs object,
 * attrs array, attr object), what value comes next (want), and, for
 * values whose text is kept (inputs, shapes, types, unknown members), a
 * "capture" (htcapture.c) that rewrites the value as Python repr or
 * compact JSON while it streams by. Each node is assembled in `cur` and
 * appended to `nodes` when its object closes (htnode.c). Here: the state,
 * errors, numbers, the schema check, and feeding text to yajl. */
#ifndef CHAKRA_INGEST_HTPARSE_H
#define CHAKRA_INGEST_HTPARSE_H

#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_parse.h>

#include "hostet.h"
#include "../util/strbuf.h"
#include "store.h"

enum frame { F_TOP, F_NODES, F_NODE, F_IO, F_ATTRS, F_ATTR, F_SYNC, F_PARENTS };

enum want {
  W_KEY,       /* a map key comes next */
  W_DOC,       /* the document's value */
  W_SEGSTART,  /* segment text starting inside the nodes array: the synthetic '[' */
  W_DONE,
  W_T_SCHEMA, W_T_PID, W_T_TIME, W_T_START, W_T_FINISH, W_T_NODES, W_T_OTHER,
  W_NODE,
  W_N_ID, W_N_NAME, W_N_PARENT, W_N_INPUTS, W_N_OUTPUTS, W_N_ATTRS, W_N_INCL, W_N_EXCL, W_N_TS,
  W_N_ITD, W_N_SYNC, W_N_CAT, W_N_STREAM, W_N_DEVICE, W_N_PG, W_N_FLAT_SCHEMA, W_N_OTHER,
  W_N_FLAT_INT0, /* + attribute index */
  W_N_IN_SHAPES = W_N_FLAT_INT0 + HT_NATTR, W_N_IN_TYPES, W_N_OUT_SHAPES, W_N_OUT_TYPES,
  W_IO_VALUES, W_IO_SHAPES, W_IO_TYPES, W_IO_STRIDES, W_IO_OTHER,
  W_ATTR, W_A_NAME, W_A_TYPE, W_A_VALUE, W_A_OTHER, W_N_EXTRA,
  W_SYNC_ELEM, W_PARENT_ELEM
};

/* capture flags */
enum { CAP_REPR = 1, CAP_TENSORS = 2, CAP_ARGS = 4, CAP_TYPES = 8 };

#define MAX_DEPTH 16
#define MAX_EXTRA_NAME 127 /* longer names of extra attributes are dropped */
#define MAX_CAP_DEPTH 512

typedef struct clevel {
  uint8_t is_map, first, tens_ok;
  uint32_t count;
  uint64_t e3, e4;
} clevel;

typedef struct targ {
  int kind; /* 0 other, 1 int, 2 string */
  int64_t v;
  uint32_t off, len;
} targ;

enum { AV_NONE, AV_INT, AV_DOUBLE, AV_BOOL, AV_STRING, AV_NULL, AV_COMPLEX };

typedef struct hparse {
  /* configuration */
  const char *path;
  int mode, versions, seg_nodes; /* seg_nodes: text starts inside the nodes array */
  hostet *h;                     /* top-level fields go here (segment 0 only) */
  chakra_error err;
  int rc;
  volatile int *abort_flag;
  ht_progress *prog;             /* may be NULL */
  /* results */
  ht_node *nodes;
  size_t n, cap;
  ht_side *side;
  size_t n_side, cap_side;
  strtab st;
  bpool pool;
  strbuf top_extra;
  /* parser */
  yajl_handle y;
  uint64_t chunk_base;
  int fr[MAX_DEPTH];
  int depth;
  int want;
  int at_boundary;      /* the last event closed a node at nodes-array level */
  int nodes_done;       /* the nodes array has been closed */
  uint64_t nodes_end;   /* byte offset just past the nodes array's ']' */
  int seen_nodes;
  /* capture */
  strbuf *ct;
  int cflags;
  int capd;
  clevel cl[MAX_CAP_DEPTH];
  /* the node being read */
  ht_node cur;
  int io_which;          /* F_IO: 0 inputs, 1 outputs */
  strbuf io[HT_IO_N];
  int io_set[HT_IO_N];
  strbuf strides[2];
  int strides_set[2];
  strbuf attrs_json, others, scratch;
  ht_extra *xs;          /* convert: the node's extra attributes so far */
  size_t n_xs, cap_xs;
  uint64_t *arg_bytes;
  uint8_t *arg_tensor;
  size_t n_argv, n_argt, cap_arg;
  targ *targs;
  size_t n_targs, cap_targs;
  strbuf targ_str;
  uint64_t *syncv;
  size_t n_sync, cap_sync;
  int has_sync;
  int n_parents;
  int64_t grs, grstride;
  int has_grs, has_grstride;
  /* the attr object being read */
  strbuf a_name, a_type, a_val;
  int a_kind, a_has_name;
  int n_attrs_json;
} hparse;
enum { K_NUM, K_STR, K_TRUE, K_FALSE, K_NULL };

/* Errors. A callback returns what these return (0 stops yajl); the first
 * error is kept in p->err, p->rc. */
void ht_node_label(hparse *p, char *out, size_t n);
uint64_t ht_here(hparse *p);
int ht_fail(hparse *p, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int ht_node_fail(hparse *p, const char *fmt, const char *what);
int ht_oom(hparse *p);

/* JSON number text (0 or -1). */
int ht_parse_u64(const char *s, size_t n, uint64_t *out);
int ht_parse_i64(const char *s, size_t n, int64_t *out);
double ht_parse_double(const char *s, size_t n);
/* 1 if needle occurs in s[0..n). */
int ht_contains(const char *s, size_t n, const char *needle);

/* The document's schema against the accepted versions (1, or 0 after an
 * error). */
int ht_check_schema(hparse *p, const unsigned char *s, size_t n);

/* A parser of path for h; seg_nodes: its text starts inside the nodes
 * array (a segment of a parallel parse). -1 when out of memory. */
int ht_parse_init(hparse *p, const char *path, const hostet_options *opt, hostet *h, int seg_nodes);
/* Frees what only parsing needs / everything. */
void ht_parse_free_scratch(hparse *p);
void ht_parse_free_all(hparse *p);
/* Feeds n bytes at file offset base; ends the document; checks that it
 * holds a schema and nodes. 0 or the error (in p->err). */
int ht_feed(hparse *p, const unsigned char *buf, size_t n, uint64_t base);
int ht_finish_doc(hparse *p);
int ht_check_top(hparse *p);
/* The whole input, in one pass (gzip, standard input, FILE* and buffers
 * too). */
int ht_parse_sequential(hparse *p, const chakra_input *input);

#endif
