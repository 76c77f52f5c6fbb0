/* suitesys.h - the system under test (private to lib/suite): files read
 * and hashed, the reference system, a system file's keys as JSON values. */
#ifndef CHAKRA_SUITE_SUITESYS_H
#define CHAKRA_SUITE_SUITESYS_H

#include <stddef.h>

#include <stdint.h>
#include <yajl/yajl_tree.h>

#include "chakra/error.h"
#include "chakra/suite.h"
#include "chakra/topo.h"

/* The whole file as a NUL-terminated malloc'd text (at most 16 MiB), its
 * length in *len (may be NULL). */
int suitesys_read(const char *path, char **text, size_t *len, chakra_error *err);
/* The system under test read once (chakra_suite_sut_open): each file's
 * text, SHA-256 and recorded path, the system's keys parsed from its text,
 * the network's dimensions before scaling. */
struct chakra_suite_sut {
  int given;                         /* a system or network file was named */
  char *system_name, *network_name;  /* for messages: the path given, or the reference's */
  char *system_path, *system_sha256, *system_text;
  char *network_path, *network_sha256, *network_text;
  yajl_val system;
  chakra_topo_dim dims[CHAKRA_TOPO_MAX_DIMS];
  int n_dims;
};

/* A simulator configuration for a workload of `ranks` ranks on s. */
int suitesys_config(chakra_sim_config **out, const chakra_suite_sut *s, uint32_t ranks, chakra_error *err);
/* The closed division's rules for s (chakra_suite_rules_closed). */
int suitesys_rules_closed(const chakra_suite_sut *s, chakra_diag_fn diag, void *ctx, uint64_t *problems,
                          chakra_error *err);
/* The system's peak-perf (TFLOP/s; 0 when absent). */
double suitesys_peak(const chakra_suite_sut *s);
/* The network as text for the declared quantities: "Switch 8 x 400 GB/s
 * 936.25 ns; Switch N x 50 GB/s 3000 ns" (the outer count as N). */
int suitesys_network_text(const chakra_suite_sut *s, char **out, chakra_error *err);

#endif
