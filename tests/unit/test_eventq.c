/* test_eventq.c - pins the simulator's clock (lib/sim/eventq.c): events run
 * in time order, equal times in the order they were scheduled (also work
 * scheduled for the current time while it runs), per-time buckets are
 * reused, and an NPU's batch for a time runs whole, in registration order,
 * when its first registration's global event fires (simulator spec 2). */
#include "testutil.h"

#include <stdlib.h>

#include "eventq.h"

typedef struct log_ctx {
  uint64_t t[4096];
  uint64_t id[4096];
  size_t n;
} log_ctx;

static log_ctx g_log;
static eventq *g_q;

/* The queue is the first member of struct sim, so the callbacks' sim
 * pointer is the queue itself here. */
static void record(struct sim *s, void *obj, uint64_t arg) {
  (void)obj;
  eventq *q = (eventq *)s;
  g_log.t[g_log.n] = q->now;
  g_log.id[g_log.n++] = arg;
}

static void setup_q(eventq *q, uint32_t npus) {
  memset(&g_log, 0, sizeof g_log);
  assert_int_equal(eventq_init(q, npus), 0);
  g_q = q;
}

static void run(eventq *q) { eventq_run(q, (struct sim *)q, NULL); }

static void test_events_run_in_time_order(void **state) {
  (void)state;
  eventq q;
  setup_q(&q, 1);
  eventq_at(&q, 30, record, NULL, 3);
  eventq_at(&q, 10, record, NULL, 1);
  eventq_at(&q, 20, record, NULL, 2);
  run(&q);
  assert_int_equal(g_log.n, 3);
  for (size_t i = 0; i < 3; i++) {
    assert_int_equal(g_log.id[i], i + 1);
    assert_int_equal(g_log.t[i], 10 * (i + 1));
  }
  assert_int_equal(q.fired, 3);
  eventq_free(&q);
}

/* At time 5, event 1 schedules 9 for the same time: it runs after the
 * events already queued for 5 (2, 3), before anything later. */
static void schedule_now(struct sim *s, void *obj, uint64_t arg) {
  record(s, obj, arg);
  eventq_at(g_q, g_q->now, record, NULL, 9);
}

static void test_same_time_runs_first_scheduled_first(void **state) {
  (void)state;
  eventq q;
  setup_q(&q, 1);
  eventq_at(&q, 5, schedule_now, NULL, 1);
  eventq_at(&q, 5, record, NULL, 2);
  eventq_at(&q, 6, record, NULL, 4);
  eventq_at(&q, 5, record, NULL, 3);
  run(&q);
  uint64_t want[] = {1, 2, 3, 9, 4};
  assert_int_equal(g_log.n, 5);
  for (size_t i = 0; i < 5; i++) assert_int_equal(g_log.id[i], want[i]);
  assert_int_equal(g_log.t[3], 5);
  eventq_free(&q);
}

/* Thousands of events over a few hundred distinct times, scheduled out of
 * order, twice (the second round reuses drained buckets): times never go
 * back and equal times keep scheduling order. */
static void test_many_times_keep_order_and_reuse_buckets(void **state) {
  (void)state;
  eventq q;
  setup_q(&q, 1);
  for (int round = 0; round < 2; round++) {
    g_log.n = 0;
    uint64_t base = q.now;
    unsigned x = 12345;
    for (uint64_t i = 0; i < 4000; i++) {
      x = x * 1103515245u + 12345u;
      eventq_at(&q, base + (x >> 16) % 300, record, NULL, i);
    }
    run(&q);
    assert_int_equal(g_log.n, 4000);
    for (size_t i = 1; i < g_log.n; i++) {
      assert_true(g_log.t[i] >= g_log.t[i - 1]);
      if (g_log.t[i] == g_log.t[i - 1]) assert_true(g_log.id[i] > g_log.id[i - 1]);
    }
  }
  assert_true(q.b_n <= 600); /* buckets of the first round were reused */
  eventq_free(&q);
}

/* NPU 0 registers a at t=5, a global event g is queued for 5, then NPU 0
 * registers b for 5: a and b run together when a's entry fires, before g.
 * NPU 1's work for 5 is its own batch, queued after g. */
static void test_npu_batch_runs_whole_at_its_first_entry(void **state) {
  (void)state;
  eventq q;
  setup_q(&q, 2);
  eventq_npu_after(&q, 0, 5, record, NULL, 1);   /* a */
  eventq_at(&q, 5, record, NULL, 100);          /* g */
  eventq_npu_after(&q, 0, 5, record, NULL, 2);   /* b joins a's batch */
  eventq_npu_after(&q, 1, 5, record, NULL, 10);
  eventq_npu_after(&q, 0, 7, record, NULL, 3);   /* another time: another batch */
  run(&q);
  uint64_t want[] = {1, 2, 100, 10, 3};
  assert_int_equal(g_log.n, 5);
  for (size_t i = 0; i < 5; i++) assert_int_equal(g_log.id[i], want[i]);
  assert_int_equal(g_log.t[4], 7);
  eventq_free(&q);
}

/* Work an NPU appends to its batch for the current time while the batch
 * runs is part of that batch. */
static void append_to_batch(struct sim *s, void *obj, uint64_t arg) {
  record(s, obj, arg);
  eventq_npu_after(g_q, 0, 0, record, NULL, 2);
}

static void test_batch_takes_work_appended_while_it_runs(void **state) {
  (void)state;
  eventq q;
  setup_q(&q, 1);
  eventq_npu_after(&q, 0, 4, append_to_batch, NULL, 1);
  eventq_at(&q, 4, record, NULL, 100);
  run(&q);
  uint64_t want[] = {1, 2, 100};
  assert_int_equal(g_log.n, 3);
  for (size_t i = 0; i < 3; i++) assert_int_equal(g_log.id[i], want[i]);
  eventq_free(&q);
}

static void test_stop_flag_ends_the_loop(void **state) {
  (void)state;
  eventq q;
  setup_q(&q, 1);
  eventq_at(&q, 1, record, NULL, 1);
  eventq_at(&q, 2, record, NULL, 2);
  q.oom = 1; /* the run's stop flag */
  run(&q);
  assert_int_equal(g_log.n, 0);
  eventq_free(&q);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_events_run_in_time_order),
      cmocka_unit_test(test_same_time_runs_first_scheduled_first),
      cmocka_unit_test(test_many_times_keep_order_and_reuse_buckets),
      cmocka_unit_test(test_npu_batch_runs_whole_at_its_first_entry),
      cmocka_unit_test(test_batch_takes_work_appended_while_it_runs),
      cmocka_unit_test(test_stop_flag_ends_the_loop),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
