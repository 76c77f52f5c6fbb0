/* encbench.c - encodes N million Chakra nodes through one of the writing
 * paths and prints nodes per second and peak RSS.
 *
 *   encbench PATH MILLIONS
 *
 * PATH is one of
 *   coll     coll_encode_node(): collective-algorithm nodes (coll gen,
 *            from-msccl, synth, expand)
 *   synth    emit_node_*(): chakra synth's stage encoder
 *   builder  chakra_builder_*() + put (gen microbench, convert, text)
 *   writer   chakra_writer_put() of protobuf-c structs to /dev/null (pack,
 *            obfuscate, coll expand's copied nodes)
 *
 * Every path encodes the same nodes: rank 0 of a 64-rank ring all-reduce
 * (coll_gen_rank: sends, receives and reductions with their data deps),
 * repeated with fresh ids; each node as coll writes it (id, name, type,
 * data deps, duration, comm_dst/comm_src + comm_size + comm_tag or
 * duration_ns + num_ops + tensor_size). One path per process, so the peak
 * RSS (getrusage ru_maxrss) is that path's alone. Output, one line:
 *   path= nodes= bytes= wall_s= cpu_s= nodes_per_s= maxrss_kb=
 * (bytes: the encoded size where the path hands it back, else 0).
 * bench/encoder_bench.sh alternates the paths of two builds.
 *
 * The source builds against trees before and after the encoder was shared
 * (lib/trace/encode.h), so the same program measures both. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "chakra/build.h"
#include "chakra/trace.h"
#include "dag.h"
#include "gen.h"
#include "../coll/emit.h"
#include "../synth/emit.h"

#if __has_include("encode.h")
#include "encode.h"
typedef enc_buf bench_buf;
#define bench_buf_free enc_buf_free
#else
typedef coll_buf bench_buf;
#define bench_buf_free coll_buf_free
#endif

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* One node as every path sees it. */
typedef struct bnode {
  uint64_t id, deps[8], micros;
  uint32_t dep[8]; /* the deps' indexes in the DAG */
  size_t ndeps;
  const char *name;  /* "send." ... */
  char label[12];    /* the step, the name's suffix */
  char full[32];     /* name + label */
  int type, kind;
  int32_t peer, tag;
  uint64_t bytes, ns;
} bnode;

static void node_of(bnode *x, const coll_dag *d, uint32_t i, uint64_t base) {
  static const char *const names[] = {"send.", "recv.", "reduce.", "copy."};
  x->kind = d->kind[i];
  x->id = base + i;
  x->name = names[x->kind];
  snprintf(x->label, sizeof x->label, "%u", d->label[i]);
  snprintf(x->full, sizeof x->full, "%s%s", x->name, x->label);
  x->type = x->kind == COLL_SEND ? 5 : x->kind == COLL_RECV ? 6 : 4;
  x->ndeps = 0;
  for (uint32_t k = d->dep_off[i]; k < d->dep_off[i + 1] && x->ndeps < 8; k++) x->dep[x->ndeps++] = d->deps[k];
  for (size_t k = 0; k < x->ndeps; k++) x->deps[k] = base + x->dep[k];
  x->peer = d->peer[i], x->tag = d->tag[i], x->bytes = d->bytes[i], x->ns = d->dur_ns[i];
  x->micros = x->ns / 1000;
}

/* The node in round `base`: ids and deps move on, the rest stays. */
static void rebase(bnode *x, uint64_t base, uint32_t i) {
  x->id = base + i;
  for (size_t k = 0; k < x->ndeps; k++) x->deps[k] = base + x->dep[k];
}

static void build(chakra_builder *b, const bnode *x) {
  chakra_builder_node(b, x->id, x->full, x->type);
  chakra_builder_data_deps(b, x->deps, x->ndeps);
  chakra_builder_duration(b, x->micros);
  if (x->kind == COLL_SEND || x->kind == COLL_RECV) {
    chakra_builder_int32(b, x->kind == COLL_SEND ? "comm_dst" : "comm_src", x->peer);
    chakra_builder_int64(b, "comm_size", (int64_t)x->bytes);
    chakra_builder_int32(b, "comm_tag", x->tag);
  } else {
    chakra_builder_uint64(b, "duration_ns", x->ns);
    chakra_builder_int64(b, "num_ops", (int64_t)(x->bytes / 4));
    chakra_builder_uint64(b, "tensor_size", x->bytes * 3);
  }
}

static void emit(emit_stage *s, const bnode *x) {
  emit_node_begin(s, x->id, x->name, x->label, x->type);
  emit_node_deps(s, NULL, 0, x->deps, x->ndeps);
  emit_node_duration(s, x->micros);
  if (x->kind == COLL_SEND || x->kind == COLL_RECV) {
    emit_attr_i32(s, x->kind == COLL_SEND ? "comm_dst" : "comm_src", x->peer);
    emit_attr_i64(s, "comm_size", (int64_t)x->bytes);
    emit_attr_i32(s, "comm_tag", x->tag);
  } else {
    emit_attr_u64(s, "duration_ns", x->ns);
    emit_attr_i64(s, "num_ops", (int64_t)(x->bytes / 4));
    emit_attr_u64(s, "tensor_size", x->bytes * 3);
  }
  emit_node_end(s);
}

/* The struct the writer packs: three attributes, set per node. */
typedef struct snode {
  chakra_node n;
  chakra_attr a[3];
  chakra_attr *pa[3];
} snode;

static void to_struct(snode *s, const bnode *x) {
  chakra_node n = CHAKRA_PROTO_MSG__NODE__INIT;
  n.id = x->id, n.name = (char *)x->full, n.type = (ChakraProtoMsg__NodeType)x->type;
  n.data_deps = (uint64_t *)x->deps, n.n_data_deps = x->ndeps, n.duration_micros = x->micros;
  for (int k = 0; k < 3; k++) {
    s->a[k] = (chakra_attr)CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT;
    s->pa[k] = &s->a[k];
  }
  int msg = x->kind == COLL_SEND || x->kind == COLL_RECV;
  s->a[0].name = msg ? (x->kind == COLL_SEND ? "comm_dst" : "comm_src") : "duration_ns";
  s->a[1].name = msg ? "comm_size" : "num_ops";
  s->a[2].name = msg ? "comm_tag" : "tensor_size";
  if (msg) {
    s->a[0].value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL, s->a[0].int32_val = x->peer;
    s->a[1].value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL, s->a[1].int64_val = (int64_t)x->bytes;
    s->a[2].value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL, s->a[2].int32_val = x->tag;
  } else {
    s->a[0].value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL, s->a[0].uint64_val = x->ns;
    s->a[1].value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL, s->a[1].int64_val = (int64_t)(x->bytes / 4);
    s->a[2].value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL, s->a[2].uint64_val = x->bytes * 3;
  }
  n.attr = s->pa, n.n_attr = 3;
  s->n = n;
}

static int usage(void) {
  fprintf(stderr, "usage: encbench coll|synth|builder|writer MILLIONS\n");
  return 2;
}

int main(int argc, char **argv) {
  if (argc != 3) return usage();
  const char *path = argv[1];
  uint64_t want = (uint64_t)(atof(argv[2]) * 1e6);
  coll_dag d;
  coll_dag_init(&d);
  chakra_coll_gen_options o = {.coll = CHAKRA_COLL_ALLREDUCE, .algo = CHAKRA_ALGO_RING, .ranks = 64, .size = 64u << 20,
                               .chunks = 1, .reduce_bw = 50, .threads = 1};
  coll_gen_rank(&d, &o, 0);
  if (d.oom || !d.n) return fprintf(stderr, "encbench: no DAG\n"), 1;
  /* The nodes are prepared before the clock starts: only encoding is timed. */
  bnode *x = calloc(d.n, sizeof *x);
  if (!x) return 1;
  for (uint32_t i = 0; i < d.n; i++) node_of(&x[i], &d, i, 1);
  uint64_t done = 0, bytes = 0;
  coll_place pl = {.self = -1, .style = COLL_STYLE_CHAKRA, .names = COLL_NAMES_SHORT};
  bench_buf cb = {0};
  chakra_builder *b = NULL;
  chakra_writer *w = NULL;
  emit_stage *s = NULL;
  chakra_error err = {0};
  if (!strcmp(path, "builder") && chakra_builder_new(&b)) return 1;
  if (!strcmp(path, "writer") && chakra_writer_open(&w, "/dev/null", CHAKRA_WRITE_PLAIN, &err))
    return fprintf(stderr, "encbench: %s\n", err.msg), 1;
  if (!strcmp(path, "synth") && !(s = emit_stage_new())) return 1;
  if (!b && !w && !s && strcmp(path, "coll")) return usage();
  snode sn;
  double t0 = now();
  for (uint64_t round = 0; done < want; round++) {
    uint64_t base = 1 + round * d.n;
    if (b) {
      for (uint32_t i = 0; i < d.n; i++) {
        rebase(&x[i], base, i);
        build(b, &x[i]);
        if (chakra_builder_put(b, &err)) return fprintf(stderr, "encbench: %s\n", err.msg), 1;
      }
      size_t len;
      chakra_builder_bytes(b, &len);
      bytes += len;
      chakra_builder_clear(b);
    } else if (w) {
      for (uint32_t i = 0; i < d.n; i++) {
        rebase(&x[i], base, i);
        to_struct(&sn, &x[i]);
        if (chakra_writer_put(w, &sn.n.base, &err)) return fprintf(stderr, "encbench: %s\n", err.msg), 1;
      }
    } else if (s) {
      for (uint32_t i = 0; i < d.n; i++) rebase(&x[i], base, i), emit(s, &x[i]);
      if (emit_stage_failed(s)) return fprintf(stderr, "encbench: out of memory\n"), 1;
      if (emit_stage_nodes(s) >= 65536) { /* a stage of 64 Ki nodes, then a fresh one */
        emit_stage_free(s);
        s = emit_stage_new();
      }
    } else {
      cb.n = 0;
      pl.id_base = base;
      for (uint32_t i = 0; i < d.n; i++) coll_encode_node(&cb, &d, i, &pl);
      bytes += cb.n;
    }
    done += d.n;
  }
  double wall = now() - t0;
  if (w && chakra_writer_close(w, &err)) return fprintf(stderr, "encbench: %s\n", err.msg), 1;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
  printf("path=%s nodes=%llu bytes=%llu wall_s=%.3f cpu_s=%.3f nodes_per_s=%.0f maxrss_kb=%ld\n", path,
         (unsigned long long)done, (unsigned long long)bytes, wall, cpu, done / wall, ru.ru_maxrss);
  chakra_builder_free(b);
  emit_stage_free(s);
  bench_buf_free(&cb);
  coll_dag_free(&d);
  free(x);
  return 0;
}
