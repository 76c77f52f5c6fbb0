/* tasks.h - N independent jobs on T threads (private to libchakra).
 *
 * Loading ranks, parsing segments of a file and packing runs of nodes are
 * each a set of jobs that share nothing while they run. This runs them on
 * a few threads, the calling thread included, and hands the jobs out in
 * ascending order, so that the results (which each job keeps in its own
 * slot) and the status returned do not depend on the scheduling. */
#ifndef CHAKRA_TASKS_H
#define CHAKRA_TASKS_H

#include <stddef.h>

/* One job: returns 0 or a negative status. */
typedef int (*tasks_fn)(void *ctx, size_t job);

enum {
  TASKS_STOP_ON_ERROR = 1 /* once a job fails, jobs not yet started are skipped */
};

/* Runs fn(ctx, 0) .. fn(ctx, n - 1), each once, on at most `threads`
 * threads (0 = one per CPU; never more than n). Jobs start in ascending
 * order, so with TASKS_STOP_ON_ERROR every job before the first failing
 * one has run. Returns the status of the lowest-numbered job that failed,
 * or 0. Starting a thread can fail: the threads that did start (or the
 * calling thread alone) then run every job. */
int tasks_run(size_t n, unsigned threads, tasks_fn fn, void *ctx, int flags);

/* The same, telling each job which thread runs it: worker is in
 * [0, threads) (threads after 0 is resolved, and at most n), so that a
 * caller can keep one scratch area per thread in an array of that size. */
typedef int (*tasks_worker_fn)(void *ctx, unsigned worker, size_t job);
int tasks_run_workers(size_t n, unsigned threads, tasks_worker_fn fn, void *ctx, int flags);

/* Online CPUs (at least 1). */
unsigned tasks_cpus(void);

#endif
