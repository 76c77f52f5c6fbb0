/* agree.h - how the replayer's ranks wait for each other (private to
 * lib/replay).
 *
 * A step that can fail on some rank ends with rp_agree() before anything
 * that depends on it is posted: every rank learns the lowest failing
 * rank's error, so all stop together and none waits in a call the others
 * never make. Every wait for the other ranks goes through rp_wait(), which
 * gives up after the job's --timeout: the ranks it waited for may then be
 * anywhere, so the job can only be ended by this rank (MPI_Abort), and
 * rp_peers.timed_out says so. */
#ifndef CHAKRA_REPLAY_AGREE_H
#define CHAKRA_REPLAY_AGREE_H

#include <mpi.h>
#include <stdint.h>

#include "chakra/error.h"

typedef struct rp_peers {
  MPI_Comm comm;
  int me, size;
  uint64_t timeout_ns; /* 0 = wait for ever */
  uint64_t nap_ns;     /* sleep between tests of a request (0 = test without pause) */
  int timed_out;       /* a wait gave up: end the job from this rank */
  int agreed;          /* rp_agree() returned a failure: every rank has its message */
} rp_peers;

/* The peers of comm, waiting at most timeout_s seconds (0 = for ever). */
void rp_peers_init(rp_peers *p, MPI_Comm comm, double timeout_s);
/* Completes *r, or gives up after the timeout with err naming this rank
 * and what it waited for ("the others to finish validating"). */
int rp_wait(rp_peers *p, MPI_Request *r, const char *waiting_for, chakra_error *err);
/* Every rank's rc; the lowest failing rank's error on all (0 when none
 * failed). */
int rp_agree(rp_peers *p, int rc, const char *waiting_for, chakra_error *err);

#endif
