/* wkload.h - the loaded workload (chakra_sim_workload): rank classes and
 * their bindings (private).
 *
 * Ranks that differ only in the groups they name and the ranks they talk
 * to form a class: its template (the graph of its representative, the
 * lowest rank of the class) is converted to the simulator's node form
 * once, and each rank keeps its binding of the template's roles to its
 * own values. A template names peers by role (its distinct send and
 * receive peers, in node order) and groups by its pg_name index; role i
 * of rank r is bind_peer[peer_off[r] + i], group k (k >= 1) is
 * bind_pg[pg_off[r] + k - 1]. Classes come from a trace set that stores
 * them (chakra_set_classes) or, for per-rank traces, from the canonical
 * forms of the rank files (trace/canon.h): every file is read once at I/O
 * speed and only one per class is decoded. A rank whose values would make
 * a node read differently (its own rank where the representative has its
 * own, a peer inside the job where the representative's is) is a class of
 * its own, read from its file. The workload is read-only while runs use
 * it. */
#ifndef CHAKRA_SIM_WKLOAD_H
#define CHAKRA_SIM_WKLOAD_H

#include <stdint.h>

#include "../util/arena.h"
#include "chakra/sim.h"
#include "config.h"
#include "diag.h"

/* A node's kind as loaded; WK_COMP (GPU compute) becomes WK_ROOFLINE or
 * WK_DELAY by the configuration, and replay-only makes every node WK_DELAY. */
enum { WK_DELAY, WK_ROOFLINE, WK_COLL, WK_SEND, WK_RECV, WK_MEM, WK_NOOP, WK_COMP };
enum { WF_ROOFLINE_ATTRS = 1, WF_TENSOR_SIZE = 2, WF_STORE = 4 };
enum { SLOT_CPU = CHAKRA_SLOT_CPU, SLOT_GPU = CHAKRA_SLOT_GPU, SLOT_COMM = CHAKRA_SLOT_COMM, SLOT_NONE = CHAKRA_SLOT_NONE, SLOT_N };

typedef struct wl_node { /* 32 bytes: a 100k-node rank is 3 MiB of these */
  uint64_t id;
  uint64_t value;       /* DELAY: ns; COLL/SEND/RECV/MEM: bytes; COMP: tensor_size */
  union {
    uint64_t num_ops;                          /* ROOFLINE */
    struct { uint32_t role; int32_t tag; } p2p; /* SEND, RECV: the peer's role */
    struct { uint32_t involved_dim, pg; } cl;  /* COLL; pg indexes the template's pg_names (0 = all) */
  } u;
  uint32_t replay_us;   /* duration_micros (wl_replay_ns()) */
  unsigned kind : 3, slot : 2, cat : 3, coll : 2, n_involved : 4, flags : 3;
} wl_node;

/* One class's template as loaded. */
typedef struct wl_class {
  uint32_t n;
  wl_node *nodes;                          /* owns the block of nodes, child_off, children */
  uint32_t *child_off, *children;
  uint64_t *replay_wide;                   /* replay ns per node, when a duration needs 64 bits; else NULL */
  char **pg_names;                         /* 1..n_pg-1: the representative's group names */
  uint32_t n_pg;
  int32_t *peer;                           /* peer roles: the representative's peers */
  uint32_t n_peer;
  uint32_t rep, members;
  sim_lines groups;                        /* METADATA process-group lists (JSON) */
  sim_lines warns;                         /* load warnings, as written for the representative */
  int comm_rc;                             /* a communication node could not be read: an error */
  chakra_error comm_err;                   /* for runs that are not replay-only */
} wl_class;

struct chakra_sim_workload {
  uint32_t npus, n_cls;
  wl_class *cls;
  uint32_t *cls_of;                        /* per rank */
  uint32_t *peer_off, *pg_off;             /* per rank: where its bindings start; [npus]: their total */
  int32_t *bind_peer;
  const char **bind_pg;                    /* in names */
  const char **name;                       /* per rank: what messages call its trace */
  const char **names_path;                 /* per rank: a file to read its node names from, or NULL */
  arena strs;                              /* owns every string above */
  sim_groups groups;                       /* the trace set's communicator groups */
  int detected;                            /* classes found by reading the rank files */
};

static inline const wl_class *wk_class(const chakra_sim_workload *w, uint32_t rank) { return &w->cls[w->cls_of[rank]]; }
static inline const int32_t *wk_peers(const chakra_sim_workload *w, uint32_t rank) { return w->bind_peer + w->peer_off[rank]; }
/* Rank's name for group k of its template (k >= 1). */
static inline const char *wk_pg(const chakra_sim_workload *w, uint32_t rank, uint32_t k) {
  return w->bind_pg[w->pg_off[rank] + k - 1];
}

#endif
