/* obfuscate.h - traces that can be published without revealing the model.
 *
 * Operator names, tensor shapes, string values and exact timings reveal a
 * model's architecture; what a simulator needs is kept exactly: node types,
 * ids, dependencies, durations (unless noise is asked for), and every
 * attribute that is not a string (comm_type, comm_size, comm_src/dst/tag,
 * involved_dim, num_ops, tensor_size, is_cpu_op, ...), plus pg_name and
 * the process groups of METADATA nodes. Names become an op-class token and
 * a keyed hash ("comp#3f2a9c01d4e5b677"): the same key maps the same name the
 * same way in every rank and every run, so obfuscated traces stay
 * comparable (chakra diff --by-name) without the key revealing anything. */
#ifndef CHAKRA_OBFUSCATE_H
#define CHAKRA_OBFUSCATE_H

#include <stddef.h>
#include <stdint.h>

#include "chakra/error.h"
#include "chakra/set.h"
#include "chakra/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct chakra_obfuscate_options {
  uint8_t key[16];            /* SipHash key; see chakra_obfuscate_key() */
  int hash_strings;           /* string attributes hashed (keyed) instead of dropped */
  double time_noise_pct;      /* 0: durations exact; else each scaled by 1 + u * pct / 100, u in [-1, 1) */
  uint64_t seed;              /* of the noise: the same seed gives the same durations */
  const char *const *keep;    /* more attribute names kept exactly as they are */
  size_t n_keep;
} chakra_obfuscate_options;

typedef struct chakra_obfuscate_stats {
  uint64_t nodes;
  uint64_t attrs_dropped, attrs_hashed;
  uint64_t io_removed;        /* inputs/outputs removed */
  uint64_t unknown_kept;      /* nodes with fields outside the schema (kept, as the format requires) */
  uint64_t durations_noised;
} chakra_obfuscate_stats;

/* Derives a key from any bytes (a key file's contents). */
CHAKRA_API void chakra_obfuscate_key(const void *data, size_t len, uint8_t key[16]);

/* Reads trace in and writes its obfuscated copy to w (opened by the
 * caller, so that all ranks of a workload can be committed together or
 * not at all). rank seeds the noise. st (may be NULL) is added to. */
CHAKRA_API int chakra_obfuscate_stream(const char *in, chakra_writer *w, uint32_t rank,
                                       const chakra_obfuscate_options *o, chakra_obfuscate_stats *st,
                                       chakra_error *err);
/* The same reading a file, FILE* or buffer (chakra/stream.h). */
CHAKRA_API int chakra_obfuscate_input(const chakra_input *in, chakra_writer *w, uint32_t rank,
                                      const chakra_obfuscate_options *o, chakra_obfuscate_stats *st,
                                      chakra_error *err);
/* The same reading rank of a trace set (a shared set's rank bound, as its
 * own file would be). */
CHAKRA_API int chakra_obfuscate_set_rank(const chakra_set *s, uint32_t rank, chakra_writer *w,
                                         const chakra_obfuscate_options *o, chakra_obfuscate_stats *st,
                                         chakra_error *err);

/* ---- experimental tier (CHAKRA_EXPERIMENTAL, trace.h) --------------------- */
#ifdef CHAKRA_EXPERIMENTAL

/* The token for a name: "<class>#<16 hex digits>" into out (>= 48 bytes);
 * class is from the node type ("comp", "comp_cpu", "all_reduce", "send",
 * ...). An empty name stays empty. */
CHAKRA_API void chakra_obfuscate_name(const chakra_obfuscate_options *o, const chakra_node *n, int is_cpu, char *out,
                                      size_t size);

#endif /* CHAKRA_EXPERIMENTAL */

#ifdef __cplusplus
}
#endif
#endif
