/* engine.h - one rank's replay loop (private to lib/replay).
 *
 * The issue rule is the simulator's workload layer: a node is ready when
 * its dependencies are done; ready nodes issue in ascending id order while
 * their slot is free (one CPU, one GPU compute, one GPU communication
 * slot; receives take none), and again after every completion. Collectives
 * and messages are posted as non-blocking MPI calls; compute nodes occupy
 * their slot for their recorded duration (or a stand-in) while the loop
 * keeps testing the posted requests, so communication progresses under
 * compute as it does on a GPU. Nothing in the loop blocks.
 *
 * In the simulator a send finishes when its message arrives, whether or
 * not the receiver has issued its receive yet; MPI completes a large send
 * only once a receive is posted for it. So receives are posted ahead, in
 * trace order, up to RP_PREPOST_BYTES of buffers: a message lands as soon
 * as it is sent, and its receive node, when it issues, finishes at once or
 * when the message is in. (Without this an MSCCL ring, where each rank
 * sends before it receives, deadlocks.) */
#ifndef CHAKRA_REPLAY_ENGINE_H
#define CHAKRA_REPLAY_ENGINE_H

#include <mpi.h>
#include <stdint.h>

#include "comms.h"
#include "plan.h"
#include "pool.h"
#include "../util/toposort.h"

enum { RP_RUN_WAIT, RP_RUN_SLEEP, RP_RUN_SKIP };

#define RP_PREPOST_BYTES (256u << 20)

typedef struct rp_engine {
  const rp_plan *p;
  const rp_comms *c;
  rp_pool *pool;
  int mode;                 /* RP_RUN_* */
  double scale;             /* compute duration factor */
  uint64_t stall_ns;        /* give up after this long without progress; 0 = never */
  uint32_t *indeg;
  uint64_t *start, *end;    /* ns since the iteration's start; UINT64_MAX = not yet */
  idheap ready[RP_SLOTS];   /* ready nodes of each slot, by id (rp_node.id keys them) */
  int busy[RP_SLOTS];
  /* Posted MPI requests, with the node and buffer of each. */
  MPI_Request *req;
  uint32_t *req_node;
  void **req_buf;
  uint64_t *req_bytes;
  int *req_idx;
  uint32_t n_req, cap_req;
  uint8_t *arrived;          /* receive node: its message is in (posted ahead, not issued yet) */
  uint8_t *posted;           /* receive node: its MPI receive is posted */
  uint32_t next_recv;        /* next of plan->recvs to post */
  uint64_t prepost_bytes;    /* buffers of receives posted and not yet in */
  uint64_t idle_sleep_ns;    /* sleep this long when a poll finds nothing (oversubscribed nodes) */
  uint32_t comp_node[2];    /* compute in flight on the CPU and GPU slots */
  uint64_t comp_end[2];
  int *counts;              /* v-collective counts and displacements (one collective at a time) */
  uint32_t done, in_flight;
  uint64_t t0;              /* CLOCK_MONOTONIC ns at the iteration's start */
  uint64_t gpu_ns;          /* GPU compute time stood in for */
  uint64_t mpi_ns;          /* time inside MPI calls that post or test */
  uint64_t idle_ns;         /* polls that found nothing, sleeps, compute stand-ins */
  uint64_t loop_ns;         /* the whole run */
  uint64_t messages;        /* sends posted */
  int failed;
} rp_engine;

uint64_t rp_now_ns(void);
/* Bytes the node needs from the pool with a communicator of group_size. */
uint64_t rp_node_bytes(const rp_node *n, int group_size);

int rp_engine_init(rp_engine *e, const rp_plan *p, const rp_comms *c, rp_pool *pool, int mode, double scale,
                   uint64_t stall_ns, chakra_error *err);
/* Runs the plan once. Returns 0 when every node finished, 1 when nothing
 * progressed for stall_ns (requests stay posted), or an error code. */
int rp_engine_run(rp_engine *e, chakra_error *err);
/* One line naming the unfinished nodes of a stuck run (malloc'd). */
char *rp_engine_stuck_line(const rp_engine *e);
void rp_engine_free(rp_engine *e);

#endif
