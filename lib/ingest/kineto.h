/* kineto.h - reader of Kineto (PyTorch profiler) Chrome traces (private).
 *
 * Streams traceEvents with yajl and keeps only what linking needs: host
 * ops (cpu_op, user_annotation), runtime calls (cuda/hip runtime and
 * driver), device ops (kernel, gpu_memcpy, gpu_memset) and ac2g flow
 * arrows, each as a fixed-size record; everything else (metadata, python
 * frames, counters) is skipped as it streams by. */
#ifndef CHAKRA_INGEST_KINETO_H
#define CHAKRA_INGEST_KINETO_H

#include <stdint.h>

#include "chakra/error.h"
#include "store.h"

enum { KT_CPU = 1, KT_RUNTIME, KT_GPU, KT_FLOW_S, KT_FLOW_F };

enum {
  KT_HAS_EXT = 1u << 0,
  KT_HAS_RF = 1u << 1,
  KT_HAS_CORR = 1u << 2,
  KT_HAS_STREAM = 1u << 3,
  KT_HAS_DEVICE = 1u << 4,
  KT_HAS_FLOW_ID = 1u << 5
};

typedef struct kt_event {
  double ts, dur;        /* microseconds */
  int64_t pid, tid;
  int64_t ext_id, rf_id, correlation, flow_id, stream, device;
  uint32_t name, cat, pg_name; /* string ids ("Process Group Name" for pg_name) */
  uint32_t flags;
  uint32_t index;        /* position among traceEvents */
  uint8_t kind;          /* KT_* */
} kt_event;

typedef struct kineto {
  char *path;
  kt_event *ev;
  size_t n;
  strtab strings;
  int64_t rank;
  int has_rank;
  uint64_t events_seen; /* all traceEvents, kept or not */
} kineto;

int kineto_read(kineto **out, const char *path, chakra_error *err);
void kineto_free(kineto *k);

#endif
