/* test_tasks.c - util/tasks: every job runs once whatever the thread
 * count, results land in their own slots, the lowest failing job's status
 * is returned, and TASKS_STOP_ON_ERROR starts no job after a failure
 * once it is known but always runs every job before it. */
#include <stdatomic.h>
#include <stdlib.h>

#include "tasks.h"
#include "testutil.h"

typedef struct jobs {
  atomic_int runs[1000];
  long out[1000];
  long fail_at[3]; /* jobs that fail, with status -(job + 1) */
} jobs;

static int job(void *ctx, size_t i) {
  jobs *J = ctx;
  atomic_fetch_add(&J->runs[i], 1);
  J->out[i] = (long)i * (long)i;
  for (int k = 0; k < 3; k++)
    if (J->fail_at[k] == (long)i) return -(int)(i + 1);
  return 0;
}

static jobs *new_jobs(void) {
  jobs *J = calloc(1, sizeof *J);
  for (int k = 0; k < 3; k++) J->fail_at[k] = -1;
  return J;
}

static void test_tasks_run_every_job_once_in_its_slot(void **state) {
  (void)state;
  unsigned counts[] = {0, 1, 2, 7, 64};
  for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
    jobs *J = new_jobs();
    assert_int_equal(tasks_run(1000, counts[c], job, J, 0), 0);
    for (long i = 0; i < 1000; i++) {
      assert_int_equal(atomic_load(&J->runs[i]), 1);
      assert_int_equal(J->out[i], i * i);
    }
    free(J);
  }
  assert_int_equal(tasks_run(0, 4, job, NULL, 0), 0); /* no jobs: nothing is called */
}

static void test_tasks_return_the_lowest_failing_job(void **state) {
  (void)state;
  for (unsigned t = 1; t <= 8; t *= 2) {
    jobs *J = new_jobs();
    J->fail_at[0] = 900, J->fail_at[1] = 17, J->fail_at[2] = 400;
    assert_int_equal(tasks_run(1000, t, job, J, 0), -18);
    for (long i = 0; i < 1000; i++) assert_int_equal(atomic_load(&J->runs[i]), 1); /* no stop asked */
    free(J);
  }
}

static void test_tasks_stop_on_error_runs_every_job_before_the_failure(void **state) {
  (void)state;
  for (unsigned t = 1; t <= 8; t *= 2) {
    jobs *J = new_jobs();
    J->fail_at[0] = 100;
    assert_int_equal(tasks_run(1000, t, job, J, TASKS_STOP_ON_ERROR), -101);
    for (long i = 0; i <= 100; i++) assert_int_equal(atomic_load(&J->runs[i]), 1);
    int later = 0;
    for (long i = 101; i < 1000; i++) later += atomic_load(&J->runs[i]);
    assert_true(later < 899); /* jobs handed out before the failure was seen may run */
    if (t == 1) assert_int_equal(later, 0);
    free(J);
  }
}

static void test_tasks_cpus_is_at_least_one(void **state) {
  (void)state;
  assert_true(tasks_cpus() >= 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tasks_run_every_job_once_in_its_slot),
      cmocka_unit_test(test_tasks_return_the_lowest_failing_job),
      cmocka_unit_test(test_tasks_stop_on_error_runs_every_job_before_the_failure),
      cmocka_unit_test(test_tasks_cpus_is_at_least_one),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
