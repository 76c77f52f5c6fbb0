/* oneshot.h - validate, stats and sim in one call each, the answer as
 * JSON: for language bindings (python/chakra_c) and programs that want
 * what the chakra command gives without assembling the library's parts.
 *
 * Each call takes the traces as the commands do (args: FILE.et... or a
 * PREFIX), options by the command's long option names with their
 * command-line values (kv[2i] the name, kv[2i+1] the value: "network-model",
 * "unaware"), and writes one JSON document to out. An unknown name or a
 * bad value is CHAKRA_EINVAL naming it, before anything is read. */
#ifndef CHAKRA_ONESHOT_H
#define CHAKRA_ONESHOT_H

#include <stddef.h>
#include <stdint.h>

#include "chakra/error.h"
#include "chakra/export.h"
#include "chakra/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/* chakra validate: {"problems": [{"severity", "file", "rank", "node",
 * "offset", "line", "field", "what"}, ...], "files", "nodes", "errors",
 * "warnings", "unreadable", "groups_beside"}; a part of a problem that is
 * not known is left out, groups_beside is the groups file found beside the
 * traces or null. Problems are findings, not failures: the call returns
 * CHAKRA_OK. Options: comm-group-configuration (comm-groups),
 * rendezvous-protocol (true|false), max-errors (problems listed at most;
 * 0, the default, lists all). */
CHAKRA_API int chakra_validate_json(const char *const *args, uint32_t n_args, const char *const *kv, size_t n_kv,
                                    const chakra_sink *out, chakra_error *err);

/* chakra stats --json, the same document (docs/stats.md). Options:
 * comm-group-configuration (comm-groups), ignore-ctrl-deps (true|false). */
CHAKRA_API int chakra_stats_json(const char *const *args, uint32_t n_args, const char *const *kv, size_t n_kv,
                                 const chakra_sink *out, chakra_error *err);

/* chakra sim --report, the same document (docs/sim.md), for the set on
 * the network's NPUs (a PREFIX needs exactly that many rank files, so do
 * files). Options: system-configuration and network-configuration
 * (required), remote-memory-configuration, comm-group-configuration
 * (comm-groups), network-model, num-queues-per-dim, injection-scale,
 * rendezvous-protocol, multidim-p2p, custom-collective-scaling, threads,
 * timeline (a file to write). Warnings go to diag (may be NULL). */
CHAKRA_API int chakra_sim_json(const char *const *args, uint32_t n_args, const char *const *kv, size_t n_kv,
                               const chakra_sink *out, chakra_diag_fn diag, void *diag_ctx, chakra_error *err);

#ifdef __cplusplus
}
#endif
#endif
