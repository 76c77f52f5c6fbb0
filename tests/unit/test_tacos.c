/* test_tacos.c - pins the greedy link-chunk matcher (lib/coll/tacos.c) on
 * the topologies of the collectives spec's TACOS table: a 1 GiB All-Gather
 * (16 MiB per NPU, one chunk each, links 50 GB/s and 500 ns) must finish no
 * later than TACOS v1.3 measured and no earlier than the ingress bound, the
 * same seed must give the same schedule, and every chunk must reach every
 * NPU through links that carry one chunk at a time (a switch relays
 * store-and-forward). */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "chakra/topo.h"
#include "tacos.h"

#define MIB (1024ull * 1024ull)

typedef struct run {
  tacos_net net;
  tacos_sched sched;
  tacos_link *links;
} run;

static void synth_opts(run *r, const char *spec, uint64_t chunk_bytes, uint64_t seed, uint64_t delay, int circuit) {
  chakra_error err = {0};
  chakra_topo *t = NULL;
  if (chakra_topo_parse(&t, spec, 50, 500, &err)) fail_msg("%s: %s", spec, err.msg);
  uint64_t n = chakra_topo_links(t);
  r->links = calloc(n, sizeof *r->links);
  assert_non_null(r->links);
  for (uint64_t i = 0; i < n; i++) {
    chakra_topo_link l;
    assert_int_equal(chakra_topo_link_at(t, i, &l), 0);
    r->links[i] = (tacos_link){.src = l.src, .dst = l.dst, .bytes_per_ns = l.bytes_per_ns, .latency_ns = l.latency_ns};
  }
  tacos_graph g = {.npus = chakra_topo_npus(t), .devices = (uint32_t)chakra_topo_devices(t), .n_links = (uint32_t)n,
                   .links = r->links};
  memset(&r->net, 0, sizeof r->net);
  memset(&r->sched, 0, sizeof r->sched);
  if (tacos_net_build(&r->net, &g, chunk_bytes, &err)) fail_msg("%s: %s", spec, err.msg);
  tacos_opts o = {.chunks_per_npu = 1, .seed = seed, .forward_delay = delay, .circuit = circuit};
  if (tacos_allgather(&r->net, &o, &r->sched, &err)) fail_msg("%s: %s", spec, err.msg);
  chakra_topo_free(t);
}

static void synth(run *r, const char *spec, uint64_t chunk_bytes, uint64_t seed) {
  synth_opts(r, spec, chunk_bytes, seed, 0, 0);
}

static void done(run *r) {
  tacos_sched_free(&r->sched);
  tacos_net_free(&r->net);
  free(r->links);
}

/* Every NPU ends with every chunk, each received once, only from an NPU
 * that held it (for `delay` ns after its arrival) when the transfer
 * started, and no physical link carries two chunks at once. */
static void check_delayed(const run *r, uint64_t delay) {
  uint32_t n = r->net.npus;
  uint64_t *have = calloc((size_t)n * n, sizeof *have); /* arrival time + 1, 0 = never */
  uint64_t *busy = calloc(r->net.n_links, sizeof *busy); /* per physical link: free from */
  assert_non_null(have);
  assert_non_null(busy);
  for (uint32_t c = 0; c < n; c++) have[(size_t)c * n + c] = 1;
  for (size_t k = 0; k < r->sched.n; k++) {
    const tacos_xfer *x = &r->sched.x[k];
    const tacos_chan *ch = &r->net.chans[x->chan];
    assert_true(x->chunk < n);
    uint64_t held = have[(size_t)ch->src * n + x->chunk];
    assert_true(held != 0 && held - 1 + (x->chunk == ch->src ? 0 : delay) <= x->start);
    assert_int_equal(have[(size_t)ch->dst * n + x->chunk], 0);
    uint64_t t = x->start; /* store and forward: one link after the other */
    for (int j = 0; j < ch->n_links; j++) {
      assert_true(busy[ch->link[j]] <= t);
      t += ch->tau[j];
      busy[ch->link[j]] = t;
    }
    have[(size_t)ch->dst * n + x->chunk] = x->start + ch->total + 1;
    assert_true(x->start + ch->total + delay <= r->sched.time_ns);
  }
  for (size_t i = 0; i < (size_t)n * n; i++) assert_true(have[i] != 0);
  free(have);
  free(busy);
}

static void check_schedule(const run *r) { check_delayed(r, 0); }

typedef struct table_row {
  const char *spec;
  double tacos_us, ingress_us; /* collectives.md 5.4 */
} table_row;

static void test_no_worse_than_tacos(void **state) {
  (void)state;
  static const table_row rows[] = {
      {"mesh:8x8", 10016, 9844}, {"mesh:4x4x4", 6573, 6563}, {"torus:8x8", 5321, 4922}, {"mesh:16x16", 10064, 9961}};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    run r;
    uint32_t npus = strcmp(rows[i].spec, "mesh:16x16") == 0 ? 256 : 64;
    synth(&r, rows[i].spec, (1024 * MIB) / npus, 0);
    double us = (double)r.sched.time_ns / 1000.0;
    print_message("%s: %.1f us (TACOS %.0f, ingress bound %.0f)\n", rows[i].spec, us, rows[i].tacos_us,
                  rows[i].ingress_us);
    assert_true(us <= rows[i].tacos_us);
    assert_true(us >= rows[i].ingress_us * 0.999);
    check_schedule(&r);
    done(&r);
  }
}

static void test_seed_is_reproducible(void **state) {
  (void)state;
  run a, b;
  synth(&a, "mesh:4x4", 1 * MIB, 7);
  synth(&b, "mesh:4x4", 1 * MIB, 7);
  assert_int_equal(a.sched.n, b.sched.n);
  assert_int_equal(a.sched.time_ns, b.sched.time_ns);
  assert_memory_equal(a.sched.x, b.sched.x, a.sched.n * sizeof *a.sched.x);
  check_schedule(&a);
  done(&a);
  done(&b);
}

/* A reduce-scatter is matched as an all-gather whose chunks wait a
 * reduction before they are forwarded: nobody forwards early, and the
 * links still carry one chunk at a time. */
static void test_forward_delay(void **state) {
  (void)state;
  run r;
  synth_opts(&r, "mesh:4x4", 1 * MIB, 3, 62000, 0);
  check_delayed(&r, 62000);
  done(&r);
}

static void test_switch_relays(void **state) {
  (void)state;
  run r;
  synth(&r, "switch:8", 1 * MIB, 0);
  check_schedule(&r);
  done(&r);
}

/* As a circuit, a relayed chunk keeps both links of its channel until it
 * arrives: no link carries anything else meanwhile. */
static void test_circuit_holds_both_links(void **state) {
  (void)state;
  run r;
  synth_opts(&r, "switch:8", 1 * MIB, 5, 0, 1);
  check_schedule(&r);
  uint64_t *busy = calloc(r.net.n_links, sizeof *busy);
  assert_non_null(busy);
  for (size_t k = 0; k < r.sched.n; k++) {
    const tacos_chan *ch = &r.net.chans[r.sched.x[k].chan];
    for (int j = 0; j < ch->n_links; j++) {
      assert_true(busy[ch->link[j]] <= r.sched.x[k].start);
      busy[ch->link[j]] = r.sched.x[k].start + ch->total;
    }
  }
  /* 7 chunks leave each NPU, one at a time, 2 hops of 20,031 ns each */
  assert_true(r.sched.time_ns >= 7 * 2 * 20031);
  free(busy);
  done(&r);
}

/* ---- the ways of counting candidates agree --------------------------------- */

/* Links of an inline topology, or NULL. */
static tacos_link *links_of(const char *spec, tacos_graph *g) {
  chakra_error err = {0};
  chakra_topo *t = NULL;
  if (chakra_topo_parse(&t, spec, 50, 500, &err)) fail_msg("%s: %s", spec, err.msg);
  uint64_t n = chakra_topo_links(t);
  tacos_link *l = calloc(n, sizeof *l);
  assert_non_null(l);
  for (uint64_t i = 0; i < n; i++) {
    chakra_topo_link x;
    assert_int_equal(chakra_topo_link_at(t, i, &x), 0);
    l[i] = (tacos_link){x.src, x.dst, x.bytes_per_ns, x.latency_ns};
  }
  *g = (tacos_graph){chakra_topo_npus(t), (uint32_t)chakra_topo_devices(t), (uint32_t)n, l};
  chakra_topo_free(t);
  return l;
}

/* 9 NPUs, 2 switches every NPU reaches (two parallel paths per pair, of
 * different speeds), a slow one-way ring and one fast pair; deterministic
 * pseudo-random speeds. */
static tacos_link *odd_links(tacos_graph *g) {
  enum { N = 9, S = 2 };
  tacos_link *l = calloc(4 * N * S + 2 * N + 2, sizeof *l);
  assert_non_null(l);
  uint32_t k = 0, x = 12345;
  for (uint32_t s = 0; s < S; s++)
    for (uint32_t v = 0; v < N; v++) {
      x = x * 1103515245u + 12345u;
      double bw = 5 + (x >> 16) % 60, lat = (x >> 8) % 900;
      l[k++] = (tacos_link){v, N + s, bw, lat};
      l[k++] = (tacos_link){N + s, v, bw * (s + 1), lat / 2};
    }
  for (uint32_t v = 0; v < N; v++) l[k++] = (tacos_link){v, (v + 1) % N, 3, 2000};
  l[k++] = (tacos_link){0, 5, 400, 10};
  l[k++] = (tacos_link){5, 0, 400, 10};
  *g = (tacos_graph){N, N + S, k, l};
  return l;
}

static uint64_t sched_hash(const tacos_sched *s) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < s->n; i++) {
    uint64_t v[3] = {s->x[i].chunk, s->x[i].chan, s->x[i].start};
    for (int j = 0; j < 3; j++) h = (h ^ v[j]) * 1099511628211ull;
  }
  return h ^ s->time_ns;
}

/* One configuration, every way of counting: the same schedule. Returns its hash. */
static uint64_t agree(const tacos_graph *g, uint64_t chunk_bytes, tacos_opts o, int timed) {
  tacos_net net;
  chakra_error err = {0};
  if (tacos_net_build(&net, g, chunk_bytes, &err)) fail_msg("%s", err.msg);
  uint32_t K = g->npus * o.chunks_per_npu;
  uint64_t *release = calloc(K, sizeof *release), *link_free = calloc(g->n_links, sizeof *link_free);
  assert_non_null(release);
  assert_non_null(link_free);
  if (timed) { /* as an all-reduce's gather starts: chunks and links at scattered times */
    uint64_t x = o.seed + 99;
    for (uint32_t c = 0; c < K; c++) x = x * 6364136223846793005ull + 1, release[c] = (x >> 33) % 200000;
    for (uint32_t l = 0; l < g->n_links; l++) x = x * 6364136223846793005ull + 1, link_free[l] = (x >> 33) % 50000;
    o.release = release, o.link_free = link_free;
  }
  tacos_sched s[3];
  int ways[3] = {TACOS_COUNT_AUTO, TACOS_COUNT_AT_VISIT, TACOS_COUNT_KEPT};
  for (int w = 0; w < 3; w++) {
    o.counting = ways[w];
    if (tacos_allgather(&net, &o, &s[w], &err)) fail_msg("%s", err.msg);
  }
  for (int w = 1; w < 3; w++) {
    assert_int_equal(s[w].n, s[0].n);
    assert_int_equal(s[w].time_ns, s[0].time_ns);
    assert_memory_equal(s[w].x, s[0].x, s[0].n * sizeof *s[0].x);
  }
  uint64_t h = sched_hash(&s[0]);
  for (int w = 0; w < 3; w++) tacos_sched_free(&s[w]);
  tacos_net_free(&net);
  free(release), free(link_free);
  return h;
}

/* Candidates kept (counts per channel and per block, the pair index of
 * dense graphs), counted at each visit, or counted until that costs more:
 * the schedules are one, on rings, meshes, switches, full meshes and a
 * graph with parallel paths of mixed speeds, forwards and reversed, as a
 * circuit or not, with forward delays and scattered release times, and
 * chunk sets from one word to several blocks. */
static void test_counting_ways_agree(void **state) {
  (void)state;
  const char *specs[] = {"ring:9", "mesh:4x4", "hypercube:16", "switch:12", "fc:10", "torus:3x5", NULL};
  const uint32_t chunks[] = {1, 3, 40, 300};
  for (int i = 0; specs[i] || i == 6; i++) {
    tacos_graph g;
    tacos_link *l = specs[i] ? links_of(specs[i], &g) : odd_links(&g);
    for (size_t c = 0; c < sizeof chunks / sizeof *chunks; c++)
      for (int v = 0; v < 8; v++) {
        if (chunks[c] * g.npus > 2000 && v % 3) continue; /* the big sets: a few variants */
        tacos_opts o = {.chunks_per_npu = chunks[c], .seed = (uint64_t)v * 7 + c, .transpose = v & 1,
                        .circuit = (v >> 1) & 1, .forward_delay = v & 4 ? 3000 : 0};
        agree(&g, 65536, o, v == 5 || v == 2);
      }
    free(l);
    if (!specs[i]) break;
  }
}

/* The schedules of a few configurations, as the matcher made them before
 * its candidates were indexed (commit 99e5432: the same draws, the same
 * bytes; 299 configurations compared when the index came). */
static void test_schedules_pinned(void **state) {
  (void)state;
  static const struct {
    const char *spec;
    uint32_t chunks;
    int transpose, circuit, timed;
    uint64_t hash;
  } pins[] = {
      {"switch:12", 2, 0, 1, 0, 0x0956ee9ac8f866daull},    {"fc:10", 3, 1, 1, 0, 0x160412284d795d05ull},
      {"mesh:4x4", 5, 0, 0, 1, 0x71664e338732966dull},     {"ring:9", 40, 1, 1, 1, 0xf438654ef35012f5ull},
      {"hypercube:16", 1, 0, 1, 0, 0x15339ab8d2a40ddcull}, {NULL, 7, 0, 1, 1, 0x4ebe73f5b0d354bdull},
  };
  for (size_t i = 0; i < sizeof pins / sizeof *pins; i++) {
    tacos_graph g;
    tacos_link *l = pins[i].spec ? links_of(pins[i].spec, &g) : odd_links(&g);
    tacos_opts o = {.chunks_per_npu = pins[i].chunks, .seed = i, .transpose = pins[i].transpose,
                    .circuit = pins[i].circuit};
    uint64_t h = agree(&g, 1 << 20, o, pins[i].timed);
    print_message("%s x %u: %016llx\n", pins[i].spec ? pins[i].spec : "odd", pins[i].chunks, (unsigned long long)h);
    assert_true(h == pins[i].hash);
    free(l);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_no_worse_than_tacos),
      cmocka_unit_test(test_seed_is_reproducible),
      cmocka_unit_test(test_switch_relays),
      cmocka_unit_test(test_forward_delay),
      cmocka_unit_test(test_circuit_holds_both_links),
      cmocka_unit_test(test_counting_ways_agree),
      cmocka_unit_test(test_schedules_pinned),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
