/* hostet.h - reader of PyTorch host execution traces (private).
 *
 * One streaming parser (yajl callbacks) for every layout: the flat 1.0.1
 * nodes and the nested 1.0.2+ ones, plain host traces and linked ones
 * (inclusive_dur, ts, cat, stream, ...). Each node becomes a fixed-size
 * record in an array, in file order; its inputs/outputs are kept only in
 * the form the consumer writes (the Python-repr texts of the IOInfo
 * messages for convert, a JSON fragment for link), so memory follows the
 * nodes, not the text.
 * Large plain files are parsed by several threads, each from a node
 * boundary; every boundary is verified by the parser that ends on it, and
 * any doubt falls back to one sequential pass. */
#ifndef CHAKRA_INGEST_HOSTET_H
#define CHAKRA_INGEST_HOSTET_H

#include <pthread.h>
#include <stdint.h>

#include "chakra/error.h"
#include "chakra/stream.h"
#include "chakra/json.h"
#include "store.h"

enum { HT_MODE_CONVERT = 0, HT_MODE_LINK = 1 };

/* Which schema versions are accepted. */
enum {
  HT_VERSIONS_KNOWN = 0,     /* the versions of chakra_hostet_versions only */
  HT_VERSIONS_NEWER_OK = 1,  /* also newer major.minor than 1.1 (warning) */
  HT_VERSIONS_REFERENCE = 2  /* what the reference converter reads */
};

/* Integer attributes every PyTorch op carries, in the reference's order. */
enum { HT_A_RF_ID, HT_A_FW_PARENT, HT_A_SEQ_ID, HT_A_SCOPE, HT_A_TID, HT_A_FW_TID, HT_NATTR };
extern const char *const ht_attr_names[HT_NATTR];

enum {
  HT_ID = 1u << 0,
  HT_PARENT = 1u << 1,
  HT_NAME = 1u << 2,
  HT_INPUTS = 1u << 3,
  HT_OUTPUTS = 1u << 4,
  HT_GPU = 1u << 5,      /* has a "cat" string: a device op of a linked trace */
  HT_EXCL = 1u << 6,
  HT_TS = 1u << 8,
  HT_ITD = 1u << 9,      /* non-zero inter_thread_dep */
  HT_ATTR0 = 1u << 12,   /* HT_ATTR0 << k: integer attribute k present */
  HT_SCHEMA = 1u << 18,  /* op_schema present */
  HT_FLAT = 1u << 19,    /* written in the 1.0.1 layout */
  HT_META = 1u << 20,    /* "process_group:init" in the name */
  HT_THREAD_ROOT = 1u << 21,
  HT_RPC = 1u << 22,     /* "record_param_comms" in the name */
  HT_PG_ATTR = 1u << 24  /* pg_name from attrs: it wins over the member */
};

/* An attribute that travels to the output as read: a scalar attrs entry or
 * node member the converter does not interpret (HT_X_* kinds). */
enum { HT_X_INT64, HT_X_UINT64, HT_X_DOUBLE, HT_X_BOOL, HT_X_STRING };

typedef struct ht_extra {
  const char *name;         /* NUL-terminated */
  union {
    int64_t i;
    uint64_t u;
    double d;
    int b;
    const char *s;          /* NUL-terminated */
  } v;
  int kind;
} ht_extra;

/* The IOInfo texts of a node (convert), in this order in ht_node.blob. */
enum {
  HT_IO_IN_VALUES, HT_IO_IN_SHAPES, HT_IO_IN_TYPES,
  HT_IO_OUT_VALUES, HT_IO_OUT_SHAPES, HT_IO_OUT_TYPES,
  HT_IO_N
};

typedef struct ht_node {
  uint64_t id;
  uint64_t parent;          /* ctrl_deps / parent */
  int64_t a[HT_NATTR];
  double excl, ts;          /* microseconds */
  int64_t stream;
  int64_t itd;              /* inter_thread_dep */
  uint64_t comm_bytes;      /* bytes of the tensors among the inputs */
  uint64_t offset;          /* byte offset of the node's '{' */
  const unsigned char *blob;/* convert: the HT_IO_N texts, NUL-terminated, back to back;
                               link: JSON members "inputs":..,"outputs":..,"attrs":.. */
  const ht_extra *extra;    /* convert: n_extra attributes for the output */
  uint32_t blob_len, n_extra;
  uint32_t name, op_schema, cat, pg_name; /* string ids */
  uint32_t flags;
  uint32_t side;            /* index into hostet.side, or UINT32_MAX */
  int32_t device;
} ht_node;

typedef struct ht_side {
  uint32_t node;
  uint32_t coll_name;       /* record_param_comms: the collective's name (string id) */
  int64_t rpc_int[3];       /* the integers right before it: [0] nearest (rank/peer) */
  uint8_t n_rpc_int;
  uint8_t has_grs, has_grstride;
  int64_t grs, grstride;    /* global_rank_start / global_rank_stride attributes */
  const char *pg_json;      /* process_group:init: the JSON text of the group list */
  uint32_t n_sync;
  const uint64_t *sync;     /* sync_dep ids */
} ht_side;

typedef struct hostet {
  char *path;
  char *schema, *time;
  int64_t pid, start_ts, finish_ts;
  int has_pid, has_time, has_start_ts, has_finish_ts;
  int newer_schema;         /* accepted under HT_VERSIONS_NEWER_OK */
  ht_node *nodes;
  size_t n;
  ht_side *side;
  size_t n_side;
  strtab strings;
  bpool *pools;             /* blob storage, one per parse segment */
  int n_pools;
  char *top_extra;          /* link: other top-level members as JSON ("k":v,...) */
  size_t top_extra_len;
  int segments;             /* how many parallel segments parsed the file */
} hostet;

/* The bytes parsed, over every parse thread, told to a progress callback
 * as phase "bytes" (done of total, the file's size; 0 when unknown: a
 * compressed file, a pipe) about every 4 MiB, one call at a time. */
typedef struct ht_progress {
  chakra_progress_fn fn;
  void *ctx;
  uint64_t total, done, next;
  pthread_mutex_t mu;
} ht_progress;
/* n more bytes parsed; CHAKRA_ECANCELED when the callback asks to stop. */
int ht_progress_add(ht_progress *g, size_t n);

typedef struct hostet_options {
  int mode;            /* HT_MODE_* */
  int versions;        /* HT_VERSIONS_* */
  int threads;         /* 0 = number of CPUs */
  chakra_diag_fn diag;      /* warnings (may be NULL) */
  void *diag_ctx;
  chakra_progress_fn progress; /* bytes parsed (ht_progress); may be NULL */
  void *progress_ctx;
  ht_progress *prog;   /* set by the reader itself */
} hostet_options;

int hostet_read(hostet **out, const char *path, const hostet_options *opt, chakra_error *err);
/* The same from a file, FILE* or buffer (chakra/stream.h); only a file by
 * name is parsed in parallel parts. */
int hostet_read_input(hostet **out, const chakra_input *in, const hostet_options *opt, chakra_error *err);
void hostet_free(hostet *h);
/* Memory held by h (node records, blobs, strings). */
size_t hostet_memory(const hostet *h);
/* "node 123 (byte 4567)" for messages. */
void hostet_where(const hostet *h, size_t i, char *out, size_t n);

#endif
