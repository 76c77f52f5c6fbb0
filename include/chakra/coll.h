/* coll.h - collective algorithms as Chakra ETs (docs/coll.md).
 *
 * An algorithm is one ET per rank, PREFIX.<r>.et, r = the rank's position
 * in its communicator: a DAG of COMM_SEND, COMM_RECV and COMP nodes. This
 * header generates the standard algorithms, synthesises topology-aware
 * ones, converts MSCCL-IR XML, checks that a set of algorithm ETs can
 * complete, and expands the collectives of a workload into algorithm DAGs.
 * Every writer produces all of its rank files or none. */
#ifndef CHAKRA_COLL_H
#define CHAKRA_COLL_H

#include <stddef.h>
#include <stdint.h>

#include "chakra/error.h"
#include "chakra/export.h"
#include "chakra/node.h"
#include "chakra/set.h"

#ifdef __cplusplus
extern "C" {
#endif

/* chakra_coll_type, the collectives run natively, is node vocabulary
 * (chakra/node.h). */

typedef enum chakra_coll_algo {
  CHAKRA_ALGO_RING,
  CHAKRA_ALGO_DIRECT,
  CHAKRA_ALGO_HD,   /* recursive halving-doubling */
  CHAKRA_ALGO_TREE, /* one binary tree */
  CHAKRA_ALGO_DBT,  /* double binary tree */
  CHAKRA_ALGO_COUNT
} chakra_coll_algo;

/* "allreduce", "all_reduce", "all-reduce" (any case) ...; -1 if unknown. */
CHAKRA_API int chakra_coll_type_parse(const char *s);
CHAKRA_API const char *chakra_coll_type_name(chakra_coll_type t); /* "allreduce", ... */
CHAKRA_API int chakra_coll_algo_parse(const char *s);             /* ring|direct|hd|tree|dbt; -1 */
CHAKRA_API const char *chakra_coll_algo_name(chakra_coll_algo a);

#define CHAKRA_COLL_DEFAULT_REDUCE_BW 50.0 /* GB/s = bytes per ns */

typedef struct chakra_coll_gen_options {
  chakra_coll_type coll;
  chakra_coll_algo algo;
  uint32_t ranks;
  uint64_t size;      /* whole buffer; all-gather: the per-rank input; at most CHAKRA_COLL_MAX_SIZE */
  uint32_t chunks;    /* independent pipelines; 0 = 1 */
  double reduce_bw;   /* GB/s for reduction COMP nodes; 0 = none */
  unsigned threads;   /* ranks made at once; 0 = one per CPU (at most 8); the bytes never depend on it */
} chakra_coll_gen_options;

/* Checks that the algorithm supports the collective and rank count; the
 * message names what is wrong. */
CHAKRA_API int chakra_coll_gen_check(const chakra_coll_gen_options *o, chakra_error *err);

/* Writes PREFIX.0.et .. PREFIX.<ranks-1>.et. */
CHAKRA_API int chakra_coll_gen(const char *prefix, const chakra_coll_gen_options *o, chakra_error *err);

typedef struct chakra_coll_msccl_options {
  uint64_t size;      /* the collective's comm_size (all-gather: per-rank input); at most CHAKRA_COLL_MAX_SIZE */
  double reduce_bw;   /* GB/s for reduce / copy COMP nodes (default 50) */
  int compat;         /* the 2025-04 reference converter's bytes exactly */
  int embed_xml;      /* store the whole XML in input_file, as the reference */
  const char *producer; /* "chakra-c <version> coll from-msccl" or NULL */
  unsigned threads;   /* ranks converted at once; 0 = one per CPU (at most 8); the bytes never depend on it */
} chakra_coll_msccl_options;

/* The largest XML program chakra_coll_from_msccl() reads (1 GiB; the
 * 1,024-rank ring all-reduce is 7.7 MB): a larger file, or a stream that
 * goes on past it (a pipe, /dev/zero), is refused without reading on. */
#define CHAKRA_COLL_MSCCL_MAX_BYTES (1ull << 30)
/* The largest collective size: comm_size and the size metadata are 64-bit
 * signed fields. */
#define CHAKRA_COLL_MAX_SIZE 9223372036854775807ull

/* Converts MSCCL-IR XML into PREFIX.<gpu>.et. Errors name the file, gpu, tb
 * and step; on error no output file is left. */
CHAKRA_API int chakra_coll_from_msccl(const char *xml_path, const char *prefix,
                                      const chakra_coll_msccl_options *o, chakra_error *err);

/* Topology-aware synthesis (docs/coll.md, "coll synth"): greedy link-chunk
 * matching over the time-expanded network, TACOS style, one chunk per
 * channel at a time. */
typedef struct chakra_coll_synth_options {
  chakra_coll_type coll;    /* allgather, reducescatter or allreduce */
  const char *topology;     /* inline (mesh:8x8, torus:8x8, ring:8, ...) or a file, as chakra_topo_open() */
  double bandwidth_gbps;    /* per link of an inline topology, GB/s with GB = 2^30 (the simulator's); 0 = 50 */
  double latency_ns;        /* per link of an inline topology; negative = 500 */
  uint64_t size;            /* as coll gen: the per-rank input for allgather, the whole buffer otherwise */
  uint32_t chunks_per_npu;  /* 0 = 1 */
  uint64_t seed;            /* the matcher's random ties: the same seed, the same algorithm */
  double reduce_bw;         /* GB/s (10^9) of reduction COMP nodes, as coll gen; 0 = none */
  unsigned threads;         /* ranks written at once; 0 = one per CPU (at most 8) */
  const char *xml_path;     /* also write the program as MSCCL-IR XML; NULL = no */
  const char *producer;     /* metadata producer, or NULL */
  uint64_t max_memory;      /* bytes the synthesis may need (estimated before it starts; refused beyond);
                               0 = what this process may use: physical memory, ulimit, cgroup */
  uint64_t max_steps;       /* steps the synthesis may take (estimated before it starts; refused beyond);
                               0 = CHAKRA_COLL_SYNTH_MAX_STEPS */
} chakra_coll_synth_options;

/* The default limit on a synthesis's estimated steps: about 100 seconds
 * of one core (docs/coll.md "Cost"). */
#define CHAKRA_COLL_SYNTH_MAX_STEPS 10000000000ull

typedef struct chakra_coll_synth_result {
  uint64_t collective_time_ns; /* the written algorithm's time, every link FIFO (the simulator's aware model) */
  double synthesis_seconds;    /* topology, matching and dependencies; not the writing */
  uint32_t npus;
  uint64_t chunks;             /* chunks of the collective: NPUs x chunks per NPU */
  uint64_t chunk_bytes;
  uint64_t messages;           /* sends over all ranks */
  uint64_t links;              /* directed links of the topology */
} chakra_coll_synth_result;

/* Checks the options that need no topology (the collective, the size). */
CHAKRA_API int chakra_coll_synth_check(const chakra_coll_synth_options *o, chakra_error *err);
/* Synthesises the collective on the topology; writes PREFIX.<r>.et when
 * prefix is not NULL and the XML when o->xml_path is set (all or none of
 * each). Chunk bytes are the size divided by the chunks, rounded down as
 * TACOS does (r->chunk_bytes; the ETs' metadata size is what they move).
 * Errors: an unreadable or bad topology, a size smaller than the chunks, a
 * synthesis whose estimated memory exceeds o->max_memory (or what the
 * process may use), a graph some NPU cannot reach. */
CHAKRA_API int chakra_coll_synth(const char *prefix, const chakra_coll_synth_options *o,
                                 chakra_coll_synth_result *r, chakra_error *err);

/* Checks a set of algorithm ETs (paths[r] = rank r): send/receive matching
 * by (src, dst, tag, size), valid peers, acyclic DAGs, and completion when
 * run with unlimited resources. Each problem goes to diag (one line each,
 * naming the file, node id and the unmatched key); *problems receives
 * their count. Returns non-zero only when the files could not be read. */
CHAKRA_API int chakra_coll_check(char *const *paths, uint32_t n, chakra_diag_fn diag, void *ctx,
                                 uint64_t *problems, chakra_error *err);
/* The same over a trace set (chakra/set.h): problems name its ranks by
 * chakra_set_rank_name(). */
CHAKRA_API int chakra_coll_check_set(const chakra_set *set, chakra_diag_fn diag, void *ctx, uint64_t *problems,
                                     chakra_error *err);

/* One --algo rule of chakra_coll_expand(): collectives of type coll (-1 =
 * any) whose comm_size is within [min_size, max_size] and, when pg is set,
 * whose pg_name is pg, use algo (a generated algorithm, or the ETs at
 * prefix when prefix is non-NULL). A rule without a type that cannot run a
 * collective (tree for an all-gather, hd on 6 ranks) is passed over. */
typedef struct chakra_coll_rule {
  int coll;
  uint64_t min_size, max_size;
  const char *pg;      /* NULL = any communicator */
  size_t pg_len;
  int algo;            /* chakra_coll_algo, or -1 with prefix */
  const char *prefix;  /* algorithm ETs, or NULL */
} chakra_coll_rule;

/* Parses "[COLL][:MIN-MAX][@PG]=ALGO" or "ALGO" (sizes with K/M/G
 * suffixes, either end may be empty); strings point into s. */
CHAKRA_API int chakra_coll_rule_parse(const char *s, chakra_coll_rule *out, chakra_error *err);

typedef struct chakra_coll_expand_options {
  const chakra_coll_rule *rules; /* first match wins */
  size_t n_rules;
  const char *comm_groups;  /* comm-group JSON, or NULL */
  double reduce_bw;         /* for generated algorithms (default 50) */
  int overlap;              /* split consumers of collective outputs per chunk */
  int custom_as_is;         /* algorithm ETs keep the sizes they were made for; 0 = scaled to each
                               collective's size (docs/coll.md, --custom-collective-scaling) */
  const char *producer;
  chakra_diag_fn diag;      /* warnings (collectives left alone, ...) */
  void *diag_ctx;
  unsigned threads;         /* ranks expanded at once; 0 = one per CPU (at most 8); the bytes never depend on it */
} chakra_coll_expand_options;

/* Reads the workload WORKLOAD_PREFIX.<r>.et (r = 0.. while files exist)
 * and writes OUT_PREFIX.<r>.et with every matched COMM_COLL node replaced
 * by its rank's copy of the algorithm DAG. *nodes_out receives the number
 * of nodes written (may be NULL). */
CHAKRA_API int chakra_coll_expand(const char *workload_prefix, const char *out_prefix,
                                  const chakra_coll_expand_options *o, uint64_t *nodes_out,
                                  chakra_error *err);
/* The same over a trace set (chakra/set.h), with the set's communicator
 * groups (o->comm_groups is not read). chakra_coll_expand() opens
 * workload_prefix with o->comm_groups. */
CHAKRA_API int chakra_coll_expand_set(const chakra_set *in, const char *out_prefix,
                                      const chakra_coll_expand_options *o, uint64_t *nodes_out, chakra_error *err);

#ifdef __cplusplus
}
#endif
#endif
