/* agree.c - agreeing on failure and bounded waits; see agree.h. */
#include "agree.h"

#include <time.h>

#include "engine.h"

void rp_peers_init(rp_peers *p, MPI_Comm comm, double timeout_s) {
  p->comm = comm;
  MPI_Comm_rank(comm, &p->me);
  MPI_Comm_size(comm, &p->size);
  p->timeout_ns = timeout_s > 0 ? (timeout_s < 1.8e10 ? (uint64_t)(timeout_s * 1e9) : UINT64_MAX / 2) : 0;
  p->nap_ns = 50000;
  p->timed_out = 0;
  p->agreed = 0;
}

/* When several ranks wait for a stuck one, the lowest should speak: its
 * abort ends the others before they print the same line. */
static uint64_t stagger_ns(const rp_peers *p) { return (uint64_t)(p->me < 8 ? p->me : 8) * 250000000u; }

int rp_wait(rp_peers *p, MPI_Request *r, const char *waiting_for, chakra_error *err) {
  uint64_t start = rp_now_ns();
  uint64_t limit = p->timeout_ns ? p->timeout_ns + stagger_ns(p) : 0;
  struct timespec nap = {0, (long)p->nap_ns};
  for (;;) {
    int done = 0;
    int rc = MPI_Test(r, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
      return chakra_error_set(err, CHAKRA_EIO, "rank %d: MPI failed while waiting for %s", p->me, waiting_for);
    if (done) return 0;
    if (limit && rp_now_ns() - start > limit) {
      p->timed_out = 1;
      return chakra_error_set(err, CHAKRA_EIO, "rank %d: waited %g s for %s (--timeout); ending the job", p->me,
                              (double)p->timeout_ns / 1e9, waiting_for);
    }
    if (nap.tv_nsec) nanosleep(&nap, NULL); /* the ranks waited for may need this core */
  }
}

int rp_agree(rp_peers *p, int rc, const char *waiting_for, chakra_error *err) {
  int mine = rc ? p->me : p->size, first = p->size;
  MPI_Request r;
  if (MPI_Iallreduce(&mine, &first, 1, MPI_INT, MPI_MIN, p->comm, &r) != MPI_SUCCESS)
    return chakra_error_set(err, CHAKRA_EIO, "rank %d: MPI_Iallreduce failed", p->me);
  int w = rp_wait(p, &r, waiting_for, err);
  if (w) return w;
  if (first == p->size) return 0;
  chakra_error m = {0};
  if (p->me == first && err) m = *err;
  if (p->me == first && !m.code) m.code = rc;
  if (MPI_Ibcast(&m, (int)sizeof m, MPI_BYTE, first, p->comm, &r) != MPI_SUCCESS)
    return chakra_error_set(err, CHAKRA_EIO, "rank %d: MPI_Ibcast failed", p->me);
  if ((w = rp_wait(p, &r, waiting_for, err))) return w;
  if (err) *err = m;
  p->agreed = 1;
  return m.code ? m.code : CHAKRA_EINVAL;
}
