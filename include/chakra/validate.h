/* validate.h - checking traces before anyone trusts them.
 *
 * Per file: framing and decoding, duplicate ids, dependencies on absent
 * ids, cycles, attribute kinds, and the attributes each node type needs.
 * Across the ranks of a workload: every send has exactly one receive with
 * the same (src, dst, tag, size); the collectives of each communicator
 * group agree in order, type and size on every member, and only members
 * use it; and an untimed execution of the send/receive and collective
 * order finishes every rank (no deadlock). Group members come from a
 * comm-group configuration and PyTorch METADATA nodes, as in chakra sim.
 * Which of two ready nodes takes a communication slot can depend on compute
 * and network times, which the untimed check does not know: given a
 * simulator configuration, chakra_validate_set_sim() also simulates a
 * workload that passes, an exact answer for that configuration.
 * Problems are handed to a callback one at a time, so output streams and
 * memory stays per rank. */
#ifndef CHAKRA_VALIDATE_H
#define CHAKRA_VALIDATE_H

#include <stdint.h>

#include "chakra/export.h"
#include "chakra/error.h"
#include "chakra/set.h"
#include "chakra/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct chakra_validate_summary {
  int files, unreadable;   /* ranks, and those unreadable */
  uint64_t nodes, errors, warnings;
  /* 0: every rank was checked; else the set was checked by class, each of
   * these classes' templates once (chakra_validate_set), and files, nodes
   * and unreadable still count every rank. */
  uint32_t classes;
} chakra_validate_summary;

/* paths[r] is rank r's file. Cross-rank checks run when n > 1. Each
 * finding goes to fn (NULL: only the summary is wanted) with file set to
 * paths[r] as given;
 * severities are WARNING, ERROR, or UNREADABLE for a file that could not be
 * loaded at all (its other checks are skipped). sum (required) is filled
 * in. Returns CHAKRA_OK (problems are reported, not returned) or an error
 * for allocation failure. Nothing is kept: paths stay the caller's. */
CHAKRA_API int chakra_validate(char *const *paths, int n, chakra_diag_fn fn, void *ctx,
                               chakra_validate_summary *sum, chakra_error *err);

typedef struct chakra_validate_options {
  /* The comm-group configuration ({"1": [0, 1], ...}, as ASTRA-sim's
   * --comm-group-configuration); NULL: groups come from METADATA nodes
   * only, and a group neither defines is taken to be the ranks using it
   * (with a warning). */
  const char *comm_groups;
  /* Check deadlocks as chakra sim --rendezvous-protocol=true runs: a send
   * finishes only once its receive has been issued. */
  int rendezvous;
  /* Check every rank of a shared grid set (chakra_validate_set), as for
   * per-rank files, instead of each class once. */
  int per_rank;
} chakra_validate_options;

/* chakra_validate with options (opt may be NULL). A comm-group
 * configuration that cannot be read or parsed is returned as an error
 * (CHAKRA_EIO / CHAKRA_EFORMAT, naming file and line) before any trace is
 * read; a group in it naming a rank without a file is a reported ERROR. */
CHAKRA_API int chakra_validate_with(char *const *paths, int n, const chakra_validate_options *opt,
                                    chakra_diag_fn fn, void *ctx, chakra_validate_summary *sum,
                                    chakra_error *err);

/* The same over a trace set (chakra/set.h): its ranks, named in problems
 * by chakra_set_rank_name(), and its communicator groups
 * (opt->comm_groups is not read: the set's groups are used).
 * A shared set in the grid layout, with its manifest's groups and no
 * METADATA node, is checked by class unless opt->per_rank: each class
 * template once, messages and collectives matched up to the grid's
 * translations, the deadlock check run on the representatives. It finds an
 * error exactly when checking every rank does (docs/validate.md, "By
 * class"); a problem is then reported once per class, named
 * "TEMPLATE (class C, rank R and its translations)" with R the class's
 * representative, and sum->classes says how many there were. */
CHAKRA_API int chakra_validate_set(const chakra_set *set, const chakra_validate_options *opt, chakra_diag_fn fn,
                                   void *ctx, chakra_validate_summary *sum, chakra_error *err);

/* What chakra_validate_set_sim() simulates on. */
typedef struct chakra_validate_sim {
  /* The simulator's files (chakra/sim.h); system and network are required.
   * comm_groups is not read: the set's groups are used, as by the checks. */
  chakra_sim_files files;
  /* The run parameters; a zero field is the default, and rendezvous is
   * chakra_validate_options.rendezvous (both run the same protocol). */
  chakra_sim_params params;
  /* The simulator's own warnings (configuration keys without effect,
   * loading, the run); NULL drops them. Problems with the workload go to
   * the validate callback. */
  chakra_diag_fn diag;
  void *diag_ctx;
} chakra_validate_sim;

/* chakra_validate_set(), then, when sim is not NULL and the checks found
 * no error and every rank was readable, the set simulated on sim's
 * configuration: each rank the simulator cannot finish is an ERROR problem
 * named by chakra_set_rank_name() ("deadlock: simulated on SYS and NET,
 * this rank does not finish: " and the simulator's line on the nodes in
 * flight), counted in sum->errors. A configuration that cannot be read, or
 * a network whose NPU count is not the set's rank count, is returned as an
 * error (after the checks' problems were reported; sum holds their count).
 * sim NULL: chakra_validate_set() itself. */
CHAKRA_API int chakra_validate_set_sim(const chakra_set *set, const chakra_validate_options *opt,
                                       const chakra_validate_sim *sim, chakra_diag_fn fn, void *ctx,
                                       chakra_validate_summary *sum, chakra_error *err);
/* The same on a configuration built in code (chakra_suite_config), used as
 * it is, its run parameters included; sim->diag and sim->files (which only
 * name the configuration in messages, and may be NULL) are read. result,
 * when not NULL, receives the simulation's result (free it with
 * chakra_run_record_free; it stays empty when nothing was simulated). */
CHAKRA_API int chakra_validate_set_sim_on(const chakra_set *set, const chakra_validate_options *opt,
                                          const chakra_validate_sim *sim, const chakra_sim_config *config,
                                          chakra_run_record *result, chakra_diag_fn fn, void *ctx,
                                          chakra_validate_summary *sum, chakra_error *err);

#ifdef __cplusplus
}
#endif
#endif
