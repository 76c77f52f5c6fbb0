/* config.h - the simulator's input files, parsed and checked (private).
 *
 * ASTRA-sim's formats with its units: system JSON, network YAML, remote
 * memory JSON, comm-group JSON, per-node custom YAML. Every mistake is an
 * error naming the file and the key (and the line for YAML): unknown keys,
 * missing required keys, list lengths that disagree, bad values. Keys the
 * reference reads but ignores are accepted with a warning. */
#ifndef CHAKRA_SIM_CONFIG_H
#define CHAKRA_SIM_CONFIG_H

#include <stdint.h>

#include "chakra/error.h"
#include "chakra/json.h"
#include <yajl/yajl_tree.h>

#include "chakra/coll.h"
#include "chakra/sim.h"
#include "chakra/topo.h"
#include "diag.h"

#define SIM_MAX_DIMS CHAKRA_TOPO_MAX_DIMS
/* Bounds checked when a configuration is read: delays stay far inside the
 * 64-bit nanosecond time base (as the network's, lib/topo), and chunk
 * counts inside what a run can hold (each chunk is simulated on its own). */
#define SIM_MAX_LATENCY_NS 1e15
#define SIM_MIN_MEM_BW 1e-6
#define SIM_MAX_CHUNKS 1048576

enum { ALGO_RING, ALGO_DIRECT, ALGO_HALVING_DOUBLING, ALGO_DOUBLE_BINARY_TREE };

typedef struct sim_algo {
  int kind;    /* ALGO_* */
  int window;  /* direct: parallel peers, 0 = all */
  int one;     /* one* variant: one ring of all NPUs */
} sim_algo;

/* Collective types the simulator runs natively: the node vocabulary's
 * numbering (chakra_node_class.coll, chakra_coll_type). */
enum {
  SIM_AR = CHAKRA_COLL_ALLREDUCE,
  SIM_AG = CHAKRA_COLL_ALLGATHER,
  SIM_RS = CHAKRA_COLL_REDUCESCATTER,
  SIM_A2A = CHAKRA_COLL_ALLTOALL,
  SIM_NCOLL = CHAKRA_COLL_TYPES
};

typedef struct sim_coll_impl {
  int n;                      /* entries in the native list (0 = not given) */
  sim_algo algo[SIM_MAX_DIMS];
  char *custom;               /* *-implementation-custom prefix, resolved */
} sim_coll_impl;

enum { POLICY_LIFO, POLICY_FIFO, POLICY_EXPLICIT };

typedef struct sim_sys_config {
  int policy;                 /* checked, but orders nothing: see queue_append() in sys.c */
  int local_bw_aware;
  double endpoint_delay;      /* ns per packet before --injection-scale */
  uint32_t active_chunks;
  uint32_t splits;            /* 0 = not given */
  double local_mem_bw;        /* GB/s, GB = 10^9 */
  double peak_perf;           /* TFLOP/s */
  int roofline, replay_only, trace_enabled, track_local_mem;
  sim_coll_impl impl[SIM_NCOLL];
  /* per-node custom implementations (workload node id -> prefix) */
  uint64_t *per_node_ids;
  char **per_node_prefix;
  int n_per_node;
} sim_sys_config;

enum { MEM_NONE, MEM_PER_NPU, MEM_PER_NODE, MEM_POOL };

typedef struct sim_mem_config {
  int type;
  double latency;             /* ns */
  double bandwidth;           /* bytes per ns */
  uint32_t num_nodes, npus_per_node;
} sim_mem_config;

typedef struct sim_group {
  char *name;                 /* key in the file ("1") or PyTorch pg_name */
  uint32_t *members;          /* in file order */
  uint32_t n;
} sim_group;

typedef struct sim_groups {
  sim_group *v;
  int n;
} sim_groups;

/* Paths inside the system file are tried against cwd, then against the
 * file's folder. Warnings go to d. */
int sim_config_system(const char *path, sim_sys_config *out, const sim_diag *d, chakra_error *err);
int sim_config_memory(const char *path, sim_mem_config *out, chakra_error *err);
/* One key of a system or remote-memory file with its parsed value, as the
 * file readers apply them; `where` names the source in messages and base
 * resolves relative trace prefixes. On failure the field may be partly set. */
int sim_config_system_key(const char *where, const char *key, yajl_val v, sim_sys_config *c, const char *base,
                          const sim_diag *d, chakra_error *err);
int sim_config_memory_key(const char *where, const char *key, yajl_val v, sim_mem_config *c, chakra_error *err);
int sim_config_memory_check(const char *where, const sim_mem_config *c, chakra_error *err);
int sim_config_groups(const char *path, uint64_t npus, sim_groups *out, chakra_error *err);
void sim_config_system_free(sim_sys_config *c);
void sim_config_groups_free(sim_groups *g);
/* Appends a group (name and members copied); -1 when out of memory. */
int sim_groups_add(sim_groups *g, const char *name, const uint32_t *ranks, uint32_t n);
/* A deep copy; -1 when out of memory (dst then empty). */
int sim_groups_copy(sim_groups *dst, const sim_groups *src);

/* Resolves a trace prefix: as given if PREFIX.0.et exists relative to the
 * working directory, else relative to base_dir. Returns a malloc'd string. */
char *sim_config_resolve_prefix(const char *prefix, const char *base_dir);

#endif
