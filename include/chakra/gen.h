/* gen.h - workload generators that need no input trace.
 *
 * microbench: one COMM_COLL_NODE per rank, the ASTRA-sim microbenchmark
 * shape (GlobalMetadata version "0.0.4", node id = rank, name
 * "<coll>_<N>npus_<size>", attributes is_cpu_op=false, comm_type,
 * comm_size). For the shipped parameters the files are byte-identical to
 * the reference ones. */
#ifndef CHAKRA_GEN_H
#define CHAKRA_GEN_H

#include <stdint.h>

#include "chakra/export.h"
#include "chakra/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes PREFIX.<r>.et for r in 0..npus-1. comm_type is a
 * CollectiveCommType value (ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER,
 * ALL_TO_ALL). Each file is written atomically, one after the other: after
 * a failure the files of the ranks before the failing one are in place. */
CHAKRA_API int chakra_gen_microbench(const char *prefix, int comm_type, uint32_t npus, uint64_t size_bytes,
                                     chakra_error *err);

/* The size label used in node names: "1MB" for 1 MiB, "64KB", "100B";
 * written into out (always terminated when out_size > 0). */
CHAKRA_API void chakra_gen_size_label(uint64_t bytes, char *out, size_t out_size);

#ifdef __cplusplus
}
#endif
#endif
