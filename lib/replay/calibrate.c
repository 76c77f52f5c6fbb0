/* calibrate.c - chakra_replay_calibrate(): measure the job's ranks
 * (point-to-point and replayed microbenchmark collectives) and fit the
 * bandwidth and latency of a one-dimension ASTRA-sim network whose
 * simulation reproduces them; see chakra/replay.h. */
#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../util/jsonw.h"
#include "agree.h"
#include "../util/outfile.h"
#include "../util/outset.h"
#include "../util/strbuf.h"
#include "chakra/gen.h"
#include "chakra/replay.h"
#include "chakra/sim.h"
#include "chakra/sweep.h"
#include "../util/cmp.h"

#include <yajl/yajl_tree.h>

/* The collectives the microbenchmarks (and the simulator) have, as
 * CollectiveCommType values. */
static const int calib_colls[] = {0 /* ALL_REDUCE */, 2 /* ALL_GATHER */, 7 /* REDUCE_SCATTER */, 6 /* ALL_TO_ALL */};
static const char *const calib_names[] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"};
#define CALIB_NCOLL 4

typedef struct calib {
  const chakra_replay_calibrate_options *o;
  int me, size;
  char dir[4096];            /* this rank's folder of microbenchmarks */
  char net[4200];            /* rank 0: the network file every fit simulation starts from */
  yajl_val system;           /* rank 0, with system_output: the system file */
  uint64_t *sizes;
  uint32_t n_sizes;
  chakra_replay_calibration *cal;
  chakra_sim_workload **w;   /* rank 0: per collective point */
  rp_peers peers;
} calib;

/* Every rank's status; the lowest failing rank's message on all. Rank 0
 * fits alone for as long as the fit takes, so the wait is not bounded. */
static int calib_agree(calib *c, int rc, chakra_error *err) {
  return rp_agree(&c->peers, rc, "the other ranks", err);
}

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static double median(double *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- point-to-point ---- */

/* Ranks 0 and 1 ping-pong `reps` times; the median one-way time. */
static double pingpong(calib *c, char *buf, uint64_t bytes, int reps, double *t) {
  int peer = c->me == 0 ? 1 : 0;
  for (int i = -2; i < reps; i++) { /* two rounds warm the path */
    double t0 = now_ns();
    if (c->me == 0) {
      MPI_Send(buf, (int)bytes, MPI_BYTE, peer, 7, MPI_COMM_WORLD);
      MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, (int)bytes, MPI_BYTE, peer, 7, MPI_COMM_WORLD);
    }
    if (i >= 0) t[i] = (now_ns() - t0) / 2;
  }
  return median(t, (size_t)reps);
}

/* Least squares y = a + b x over n points, weighted by 1 / y^2 (relative
 * errors), so small messages count as much as large ones. */
static void fit_line(const double *x, const double *y, size_t n, double *a, double *b) {
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < n; i++) {
    double w = 1 / (y[i] * y[i]);
    sw += w, sx += w * x[i], sy += w * y[i], sxx += w * x[i] * x[i], sxy += w * x[i] * y[i];
  }
  double det = sw * sxx - sx * sx;
  *b = det > 0 ? (sw * sxy - sx * sy) / det : 0;
  *a = det > 0 ? (sy - *b * sx) / sw : (n ? y[0] : 0);
}

static int p2p_sweep(calib *c, chakra_error *err) {
  uint64_t top = c->sizes[c->n_sizes - 1];
  char *buf = c->me <= 1 ? calloc(1, top) : NULL;
  double *t = malloc(200 * sizeof *t), *x = calloc(c->n_sizes, sizeof *x), *y = calloc(c->n_sizes, sizeof *y);
  int rc = (c->me <= 1 && !buf) || !t || !x || !y ? chakra_error_set(err, CHAKRA_ENOMEM, "out of memory") : 0;
  rc = calib_agree(c, rc, err);
  for (uint32_t i = 0; !rc && i < c->n_sizes && c->me <= 1; i++) {
    uint64_t s = c->sizes[i];
    int reps = s <= (1u << 16) ? 200 : s <= (1u << 20) ? 50 : 11;
    x[i] = (double)s;
    y[i] = pingpong(c, buf, s, reps, t);
  }
  if (!rc && c->me == 0) {
    double a, b;
    fit_line(x, y, c->n_sizes, &a, &b);
    c->cal->p2p_latency_ns = a > 0 ? a : 0;
    c->cal->p2p_bandwidth_gbps = b > 0 ? 1 / b * 1e9 / (1 << 30) : 1e6;
    for (uint32_t i = 0; i < c->n_sizes; i++) {
      chakra_replay_calibrate_point *p = &c->cal->points[c->cal->n_points++];
      p->coll = -1, p->bytes = c->sizes[i], p->measured_ns = y[i], p->predicted_ns = a + b * x[i];
    }
  }
  free(buf), free(t), free(x), free(y);
  return rc;
}

/* ---- collectives ---- */

static void micro_prefix(const calib *c, char *out, size_t cap, int k, uint64_t bytes) {
  snprintf(out, cap, "%s/%s_%llu", c->dir, calib_names[k], (unsigned long long)bytes);
}

/* Every rank writes every rank's file into its own folder, so the ranks
 * need no shared file system and rank 0 can simulate them. They are
 * scratch, read back at once: not among the program's outputs. */
static int write_micro(calib *c, chakra_error *err) {
  char p[4200];
  int rc = 0;
  outset_scratch_begin();
  for (int k = 0; k < CALIB_NCOLL && !rc; k++)
    for (uint32_t i = 0; i < c->n_sizes && !rc; i++) {
      micro_prefix(c, p, sizeof p, k, c->sizes[i]);
      rc = chakra_gen_microbench(p, calib_colls[k], (uint32_t)c->size, c->sizes[i], NULL, err);
    }
  outset_scratch_end();
  return rc;
}

static void remove_micro(calib *c) {
  if (!c->dir[0]) return;
  char p[4200], f[4300];
  for (int k = 0; k < CALIB_NCOLL; k++)
    for (uint32_t i = 0; i < c->n_sizes; i++) {
      micro_prefix(c, p, sizeof p, k, c->sizes[i]);
      for (int r = 0; r < c->size; r++) {
        snprintf(f, sizeof f, "%s.%d.et", p, r);
        unlink(f);
      }
    }
  snprintf(f, sizeof f, "%s/net.yml", c->dir);
  unlink(f);
  rmdir(c->dir);
}

/* Replays one microbenchmark; rank 0 gets the median makespan. */
static int replay_micro(calib *c, int k, uint64_t bytes, double *ns, chakra_error *err) {
  char p[4200];
  micro_prefix(c, p, sizeof p, k, bytes);
  chakra_replay_options ro = {.workload = p, .compute = CHAKRA_REPLAY_SKIP, .no_validate = 1, .timeout_s = 60,
                              .iterations = c->o->iterations ? c->o->iterations : 5,
                              .warmup = c->o->warmup ? c->o->warmup : 1};
  chakra_replay_result res;
  int rc = chakra_replay_run(&ro, &res, NULL, NULL, err);
  if (res.must_abort) c->cal->must_abort = res.must_abort;
  if (!rc && res.must_abort) {
    rc = chakra_error_set(err, CHAKRA_EIO, "calibration: the %s of %llu bytes stalled", calib_names[k],
                          (unsigned long long)bytes);
  }
  if (!rc && c->me == 0) {
    double v[1024];
    uint32_t n = res.run.iterations < 1024 ? res.run.iterations : 1024;
    for (uint32_t i = 0; i < n; i++) v[i] = (double)res.run.makespan_ns[i];
    *ns = median(v, n);
  }
  chakra_replay_result_free(&res);
  return rc;
}

/* ---- the fit (rank 0) ----
 *
 * A microbenchmark's simulated time is affine in the latency x, in
 * y = 1 / bandwidth (ns per byte) and, when the system is fitted too, in
 * z = 1 / local-mem-bw (the reductions' memory time), for a given
 * implementation of its collective. Simulations at two values of each
 * give the coefficients; the parameters minimise a Huber loss on the log
 * ratios of predicted to measured time (impl_cost), each collective taking
 * the implementation that fits it best. */

#define CALIB_MAX_IMPL 4
static const char *const calib_impls[CALIB_NCOLL][CALIB_MAX_IMPL + 1] = {
    {"ring", "direct", "halvingDoubling", "doubleBinaryTree", NULL},
    {"ring", "direct", "halvingDoubling", NULL},
    {"ring", "direct", "halvingDoubling", NULL},
    {"ring", "direct", NULL}};
static const char *const calib_impl_keys[CALIB_NCOLL] = {"all-reduce-implementation", "all-gather-implementation",
                                                         "reduce-scatter-implementation", "all-to-all-implementation"};

/* The coefficients of one point under one implementation: k0 + k1 x +
 * k2 y + k3 z. */
typedef struct calib_coef {
  double k[4];
} calib_coef;

typedef struct calib_model {
  uint32_t n_sizes, fitted_from; /* sizes below index fitted_from are not fitted */
  int n_impl[CALIB_NCOLL];
  calib_coef *coef;              /* [coll][impl][size] */
  const double *measured;        /* [coll][size] */
} calib_model;

static calib_coef *model_coef(const calib_model *m, int k, int impl, uint32_t size) {
  return &m->coef[((size_t)k * CALIB_MAX_IMPL + (size_t)impl) * m->n_sizes + size];
}

static int fit_system(const calib *c) { return c->o->system_output != NULL; }

/* "key=v0" or "key=v0,v1". */
static void sweep_axis(char *out, size_t cap, const char *key, const double *v, int n) {
  if (n == 1) snprintf(out, cap, "%s=%.17g", key, v[0]);
  else snprintf(out, cap, "%s=%.17g,%.17g", key, v[0], v[1]);
}

/* The sweep's axes for collective k: bandwidths, latencies, (local-mem-bw
 * values,) the implementation, the network model. */
static int calib_sweep(calib *c, int k, const double *bw, const double *lat, const double *mem, int n,
                       const char *impl, chakra_sweep **out, chakra_error *err) {
  char v_bw[96], v_lat[96], v_mem[96], v_impl[96];
  const char *vary[5];
  int nv = 0;
  sweep_axis(v_bw, sizeof v_bw, "bandwidth", bw, n);
  sweep_axis(v_lat, sizeof v_lat, "latency", lat, n);
  vary[nv++] = v_bw, vary[nv++] = v_lat;
  if (mem) {
    sweep_axis(v_mem, sizeof v_mem, "local-mem-bw", mem, n);
    vary[nv++] = v_mem;
  }
  if (impl) {
    snprintf(v_impl, sizeof v_impl, "%s=%s", calib_impl_keys[k], impl);
    vary[nv++] = v_impl;
  }
  vary[nv++] = c->o->network_model == CHAKRA_NET_UNAWARE ? "network-model=unaware" : "network-model=aware";
  return chakra_sweep_new(out, vary, nv, err);
}

/* The one-dimension network the sweeps vary (bandwidth and latency are
 * set by every sweep point). */
static int write_net(calib *c, chakra_error *err) {
  snprintf(c->net, sizeof c->net, "%s/net.yml", c->dir);
  FILE *f = fopen(c->net, "w");
  if (!f) return chakra_error_set(err, CHAKRA_EIO, "%s: cannot write", c->net);
  fprintf(f, "topology: [ %s ]\nnpus_count: [ %d ]\nbandwidth: [ 1 ]\nlatency: [ 1 ]\n",
          chakra_topo_kind_name((chakra_topo_kind)c->o->topology), c->size);
  if (fclose(f)) return chakra_error_set(err, CHAKRA_EIO, "%s: cannot write", c->net);
  return 0;
}

/* Simulated max finish of collective k's points at every combination of
 * the n values of each parameter (last varies fastest):
 * t[size][combination]. mem NULL: the system file's local-mem-bw. */
static int simulate(calib *c, int k, const double *bw, const double *lat, const double *mem, int n,
                    const char *impl, double (*t)[8], chakra_error *err) {
  chakra_sweep *s = NULL;
  int rc = calib_sweep(c, k, bw, lat, mem, n, impl, &s, err);
  if (rc) return rc;
  chakra_sim_files files = {.system = c->o->system, .network = c->net};
  size_t pts[8] = {0, 1, 2, 3, 4, 5, 6, 7}, np = (size_t)n * (size_t)n * (mem ? (size_t)n : 1);
  chakra_sweep_row rows[8];
  for (uint32_t i = 0; !rc && i < c->n_sizes; i++) {
    rc = chakra_sweep_run(s, &files, c->w[(uint32_t)k * c->n_sizes + i], pts, np, 0, rows, NULL, NULL, err);
    for (size_t q = 0; !rc && q < np; q++) {
      if (rows[q].status != CHAKRA_SWEEP_OK)
        rc = chakra_error_set(err, CHAKRA_EINVAL, "calibration: simulating the microbenchmarks: %s",
                              rows[q].error[0] ? rows[q].error : "ranks did not finish");
      t[i][q] = (double)rows[q].max_finish_ns;
    }
  }
  chakra_sweep_free(s);
  return rc;
}

/* The cost of collective k with implementation impl at (x, y, z): log
 * ratios of predicted to measured, so a factor of 2 too high weighs as
 * much as 2 too low, squared up to 25% and linear beyond (Huber): a point
 * that no affine model reaches (reduce-scatter's jump at 16 MiB on this
 * machine's Open MPI) then pulls far less on the points it could fit. */
#define CALIB_HUBER 0.22314355131420976 /* log(1.25) */
static double impl_cost(const calib_model *m, int k, int impl, double x, double y, double z) {
  double sum = 0;
  for (uint32_t i = m->fitted_from; i < m->n_sizes; i++) {
    const double *q = model_coef(m, k, impl, i)->k;
    double pred = q[0] + q[1] * x + q[2] * y + q[3] * z;
    if (pred <= 0) return INFINITY;
    double l = fabs(log(pred / m->measured[(uint32_t)k * m->n_sizes + i]));
    sum += l <= CALIB_HUBER ? l * l : CALIB_HUBER * (2 * l - CALIB_HUBER);
  }
  return sum;
}

/* The whole cost; best[k] receives each collective's best implementation. */
static double model_cost(const calib_model *m, double x, double y, double z, int *best) {
  double sum = 0;
  for (int k = 0; k < CALIB_NCOLL; k++) {
    double low = INFINITY;
    for (int j = 0; j < m->n_impl[k]; j++) {
      double v = impl_cost(m, k, j, x, y, z);
      if (v < low) low = v, best[k] = j;
    }
    sum += low;
  }
  return sum;
}

/* Minimises the cost over latency x >= 0, y > 0 and (when fit_z) z >= 0:
 * log-spaced grids, then finer grids around the best cell (the cost is
 * smooth, not always convex, and cheap: the model is affine). */
static void fit_grid(const calib_model *m, int fit_z, double *x, double *y, double *z, int *impl) {
  double lo[3] = {0, -7, -5}, hi[3] = {8, 3, 3}; /* log10: ns; ns per byte; 1 / (GB/s) */
  double best = INFINITY, b[3] = {0, 1, *z};
  int choice[CALIB_NCOLL] = {0};
  const int g = fit_z ? 30 : 60;
  for (int round = 0; round < (fit_z ? 5 : 4); round++) {
    for (int i = -1; i <= g; i++)   /* -1: the value 0 */
      for (int j = 0; j <= g; j++)
        for (int l = fit_z ? -1 : 0; l <= (fit_z ? g : 0); l++) {
          double v[3] = {i < 0 ? 0 : pow(10, lo[0] + (hi[0] - lo[0]) * i / g), pow(10, lo[1] + (hi[1] - lo[1]) * j / g),
                         !fit_z ? *z : l < 0 ? 0 : pow(10, lo[2] + (hi[2] - lo[2]) * l / g)};
          double cost = model_cost(m, v[0], v[1], v[2], choice);
          if (cost < best) {
            best = cost;
            memcpy(b, v, sizeof b);
            memcpy(impl, choice, sizeof choice);
          }
        }
    for (int d = 0; d < 3; d++) {
      double w = (hi[d] - lo[d]) / 10, centre = b[d] > 0 ? log10(b[d]) : lo[d];
      lo[d] = centre - w, hi[d] = centre + w;
    }
  }
  *x = b[0], *y = b[1], *z = b[2];
}

/* GB/s (2^30) <-> ns per byte. */
static double per_byte(double gbps) { return 1e9 / (gbps * (1u << 30)); }
static double gbps_of(double ns_per_byte) { return 1e9 / (ns_per_byte * (1u << 30)); }

/* Reads the system file as a JSON object into c->system (with
 * system_output: its keys are kept and its local-mem-bw starts the fit). */
static int read_system(calib *c, chakra_error *err) {
  FILE *f = fopen(c->o->system, "rb");
  if (!f) return chakra_error_set(err, CHAKRA_EIO, "%s: cannot open: %s", c->o->system, strerror(errno));
  strbuf text = {0};
  char why[256] = "";
  int got = strbuf_read_stream(&text, f, SIZE_MAX - 1); /* a read error leaves what was read, refused below */
  fclose(f);
  if (got == STRBUF_ENOMEM || !strbuf_cstr(&text)) return free(text.s), chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  c->system = text.n ? yajl_tree_parse(text.s, why, sizeof why) : NULL;
  free(text.s);
  if (YAJL_IS_OBJECT(c->system)) return 0;
  return chakra_error_set(err, CHAKRA_EFORMAT, "%s: expected a JSON object (%s)", c->o->system,
                          why[0] ? why : "not an object");
}

/* The system file's local-mem-bw (GB/s), or 0 when it has none. */
static double system_mem_bw(const calib *c) {
  const char *path[] = {"local-mem-bw", NULL};
  yajl_val v = yajl_tree_get(c->system, path, yajl_t_number);
  double bw = v ? YAJL_GET_DOUBLE(v) : 0;
  return bw > 0 && isfinite(bw) ? bw : 0;
}

/* Linearises every point around (bw, lat, mem) for every implementation. */
static int linearise(calib *c, calib_model *m, double bw, double lat, double mem, chakra_error *err) {
  double bws[2] = {bw, bw * 0.5}, lats[2] = {lat, lat + (lat > 1000 ? lat : 1000)}, mems[2] = {mem, mem * 0.5};
  int fz = fit_system(c);
  double (*t)[8] = calloc(c->n_sizes, sizeof *t);
  if (!t) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  int rc = 0;
  for (int k = 0; !rc && k < CALIB_NCOLL; k++)
    for (int j = 0; !rc && j < m->n_impl[k]; j++) {
      rc = simulate(c, k, bws, lats, fz ? mems : NULL, 2, fz ? calib_impls[k][j] : NULL, t, err);
      for (uint32_t i = 0; !rc && i < c->n_sizes; i++) {
        /* combinations (b, l[, m]) in order, the last fastest */
        double t0 = t[i][0], tl = t[i][fz ? 2 : 1], tb = t[i][fz ? 4 : 2], tm = fz ? t[i][1] : t0;
        double *q = model_coef(m, k, j, i)->k;
        q[1] = (tl - t0) / (lats[1] - lats[0]);
        q[2] = (tb - t0) / (per_byte(bws[1]) - per_byte(bws[0]));
        q[3] = fz ? (tm - t0) / (1 / mems[1] - 1 / mems[0]) : 0;
        q[0] = t0 - q[1] * lats[0] - q[2] * per_byte(bws[0]) - q[3] * (fz ? 1 / mems[0] : 0);
      }
    }
  free(t);
  return rc;
}

/* The final prediction of every point with the fitted values. */
static int predict(calib *c, const double *measured, uint64_t fit_min, chakra_error *err) {
  chakra_replay_calibration *cal = c->cal;
  double (*t)[8] = calloc(c->n_sizes, sizeof *t);
  if (!t) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  int rc = 0, fz = fit_system(c);
  for (int k = 0; !rc && k < CALIB_NCOLL; k++) {
    double bw = cal->bandwidth_gbps, lat = cal->latency_ns, mem = cal->local_mem_bw;
    rc = simulate(c, k, &bw, &lat, fz && mem > 0 ? &mem : NULL, 1, fz ? cal->implementation[k] : NULL, t, err);
    for (uint32_t i = 0; !rc && i < c->n_sizes; i++) {
      chakra_replay_calibrate_point *p = &cal->points[cal->n_points++];
      p->coll = calib_colls[k];
      p->bytes = c->sizes[i];
      p->measured_ns = measured[(uint32_t)k * c->n_sizes + i];
      p->predicted_ns = t[i][0];
      p->fitted = p->bytes >= fit_min;
    }
  }
  free(t);
  return rc;
}

static int fit(calib *c, const double *measured, chakra_error *err) {
  uint64_t fit_min = c->o->fit_min_bytes ? c->o->fit_min_bytes : 64 << 10;
  calib_model m = {.n_sizes = c->n_sizes, .measured = measured};
  while (m.fitted_from < c->n_sizes && c->sizes[m.fitted_from] < fit_min) m.fitted_from++;
  if (m.fitted_from == c->n_sizes)
    return chakra_error_set(err, CHAKRA_EINVAL, "calibration: no size at or above the fit's minimum of %llu bytes",
                            (unsigned long long)fit_min);
  int fz = fit_system(c);
  if (fz) {
    int rc = read_system(c, err);
    if (rc) return rc;
  }
  for (int k = 0; k < CALIB_NCOLL; k++) {
    m.n_impl[k] = 1;
    if (fz)
      while (m.n_impl[k] < CALIB_MAX_IMPL && calib_impls[k][m.n_impl[k]]) m.n_impl[k]++;
  }
  if (!(m.coef = calloc((size_t)CALIB_NCOLL * CALIB_MAX_IMPL * c->n_sizes, sizeof *m.coef)))
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  double bw = c->cal->p2p_bandwidth_gbps, lat = c->cal->p2p_latency_ns, mem = fz ? system_mem_bw(c) : 0;
  if (mem <= 0) mem = 50;
  int impl[CALIB_NCOLL] = {0}, rc = 0;
  for (int round = 0; !rc && round < 3; round++) {
    rc = linearise(c, &m, bw, lat, mem, err);
    double x, y, z = 1 / mem;
    if (!rc) fit_grid(&m, fz, &x, &y, &z, impl);
    /* z = 0 (reductions free) is written as a bandwidth no reduction notices */
    if (!rc) bw = gbps_of(y), lat = x, mem = z > 1e-9 ? 1 / z : 1e9;
  }
  free(m.coef);
  /* The values as the files write them, so the table is what chakra sim
   * then gives with those files. */
  char text[64];
  snprintf(text, sizeof text, "%.6f", bw), bw = strtod(text, NULL);
  snprintf(text, sizeof text, "%.3f", lat), lat = strtod(text, NULL);
  snprintf(text, sizeof text, "%.6g", mem), mem = strtod(text, NULL);
  c->cal->bandwidth_gbps = bw;
  c->cal->latency_ns = lat;
  c->cal->local_mem_bw = fz ? mem : 0;
  for (int k = 0; k < CALIB_NCOLL; k++) c->cal->implementation[k] = fz ? calib_impls[k][impl[k]] : NULL;
  return rc ? rc : predict(c, measured, fit_min, err);
}

/* Rank 0: the microbenchmarks as simulator workloads, and the network file
 * every fit simulation starts from. */
static int load_workloads(calib *c, chakra_error *err) {
  uint32_t n = CALIB_NCOLL * c->n_sizes;
  if (!(c->w = calloc(n, sizeof *c->w))) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  char p[4200];
  for (uint32_t i = 0; i < n; i++) {
    micro_prefix(c, p, sizeof p, (int)(i / c->n_sizes), c->sizes[i % c->n_sizes]);
    int rc = chakra_sim_workload_load(&c->w[i], p, (uint32_t)c->size, 1, NULL, NULL, err);
    if (rc) return rc;
  }
  return write_net(c, err);
}

/* ---- the network file ---- */

static int write_yaml(calib *c, chakra_error *err) {
  const chakra_replay_calibrate_options *o = c->o;
  const chakra_replay_calibration *k = c->cal;
  char text[2048];
  int n = snprintf(text, sizeof text,
                   "# chakra replay --calibrate: %u ranks; collectives fitted with %s (%s network model)\n"
                   "# point-to-point, ranks 0 and 1: latency %.1f ns, bandwidth %.3f GB/s\n"
                   "topology: [ %s ]\nnpus_count: [ %u ]\nbandwidth: [ %.6f ]\nlatency: [ %.3f ]\n",
                   k->npus, o->system, o->network_model == CHAKRA_NET_UNAWARE ? "unaware" : "aware",
                   k->p2p_latency_ns, k->p2p_bandwidth_gbps, chakra_topo_kind_name((chakra_topo_kind)o->topology),
                   k->npus, k->bandwidth_gbps, k->latency_ns);
  if (n < 0 || n >= (int)sizeof text) return chakra_error_set(err, CHAKRA_EINVAL, "%s: the system path is too long", o->output);
  outfile *f;
  int rc = outfile_open(&f, o->output, 0, err);
  if (rc) return rc;
  rc = outfile_write(f, text, (size_t)n, err);
  if (rc) {
    outfile_discard(f);
    return rc;
  }
  return outfile_commit(f, err);
}

/* ---- the system file (with system_output) ---- */

/* A parsed JSON value back to text (numbers as written). */
static void json_value(jsonw *w, yajl_val v) {
  if (YAJL_IS_STRING(v)) jsonw_string(w, v->u.string, strlen(v->u.string));
  else if (YAJL_IS_NUMBER(v)) jsonw_lit(w, v->u.number.r);
  else if (YAJL_IS_TRUE(v)) jsonw_lit(w, "true");
  else if (YAJL_IS_FALSE(v)) jsonw_lit(w, "false");
  else if (YAJL_IS_ARRAY(v)) {
    jsonw_char(w, '[');
    for (size_t i = 0; i < v->u.array.len; i++) {
      if (i) jsonw_lit(w, ", ");
      json_value(w, v->u.array.values[i]);
    }
    jsonw_char(w, ']');
  } else if (YAJL_IS_OBJECT(v)) {
    jsonw_char(w, '{');
    for (size_t i = 0; i < v->u.object.len; i++) {
      if (i) jsonw_lit(w, ", ");
      jsonw_string(w, v->u.object.keys[i], strlen(v->u.object.keys[i]));
      jsonw_lit(w, ": ");
      json_value(w, v->u.object.values[i]);
    }
    jsonw_char(w, '}');
  } else jsonw_lit(w, "null");
}

/* A top-level member: its key, then the caller writes the value. */
static void json_key(jsonw *w, int *first, const char *key) {
  jsonw_lit(w, *first ? "\n  " : ",\n  ");
  *first = 0;
  jsonw_string(w, key, strlen(key));
  jsonw_lit(w, ": ");
}

/* The fitted value of a top-level key as JSON text in text[64], or NULL
 * when the key is not fitted. */
static const char *fitted_text(const chakra_replay_calibration *k, const char *key, char *text) {
  if (strcmp(key, "local-mem-bw") == 0) return snprintf(text, 64, "%.6g", k->local_mem_bw), text;
  for (int i = 0; i < CALIB_NCOLL; i++)
    if (strcmp(key, calib_impl_keys[i]) == 0) return snprintf(text, 64, "[\"%s\"]", k->implementation[i]), text;
  return NULL;
}

/* The system file with the fitted keys replaced (or added) and the rest
 * as it was. */
static int write_system(calib *c, chakra_error *err) {
  const yajl_val root = c->system;
  outfile *f;
  int rc = outfile_open(&f, c->o->system_output, 0, err);
  if (rc) return rc;
  jsonw w;
  if (jsonw_init(&w, f)) {
    outfile_discard(f);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  int first = 1, seen[CALIB_NCOLL + 1] = {0};
  jsonw_char(&w, '{');
  char text[64];
  for (size_t i = 0; i < root->u.object.len; i++) {
    const char *key = root->u.object.keys[i], *fitted = fitted_text(c->cal, key, text);
    for (int k = 0; k < CALIB_NCOLL; k++) seen[k] |= strcmp(key, calib_impl_keys[k]) == 0;
    seen[CALIB_NCOLL] |= strcmp(key, "local-mem-bw") == 0;
    json_key(&w, &first, key);
    if (fitted) jsonw_lit(&w, fitted);
    else json_value(&w, root->u.object.values[i]);
  }
  for (int k = 0; k <= CALIB_NCOLL; k++) {
    const char *key = k < CALIB_NCOLL ? calib_impl_keys[k] : "local-mem-bw";
    if (seen[k]) continue;
    json_key(&w, &first, key);
    jsonw_lit(&w, fitted_text(c->cal, key, text));
  }
  jsonw_lit(&w, "\n}\n");
  if (jsonw_flush(&w)) rc = chakra_error_set(err, w.err.code ? w.err.code : CHAKRA_EIO, "%s", w.err.msg);
  jsonw_free(&w);
  if (rc) {
    outfile_discard(f);
    return rc;
  }
  return outfile_commit(f, err);
}

/* ---- the whole ---- */

static int make_sizes(calib *c, chakra_error *err) {
  uint64_t lo = c->o->min_bytes ? c->o->min_bytes : 4 << 10, hi = c->o->max_bytes ? c->o->max_bytes : 16 << 20;
  if (lo > hi || hi > (1u << 30))
    return chakra_error_set(err, CHAKRA_EINVAL, "calibration: sizes from %llu to %llu bytes: expected min <= max <= 1 GiB",
                            (unsigned long long)lo, (unsigned long long)hi);
  if (!(c->sizes = calloc(64, sizeof *c->sizes))) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (uint64_t s = lo; s <= hi && c->n_sizes < 64; s *= 4) c->sizes[c->n_sizes++] = s;
  return 0;
}

static int measure_and_fit(calib *c, chakra_error *err) {
  uint32_t n = CALIB_NCOLL * c->n_sizes;
  double *measured = calloc(n, sizeof *measured);
  c->cal->points = c->me == 0 ? calloc(n + c->n_sizes, sizeof *c->cal->points) : NULL;
  int rc = !measured || (c->me == 0 && !c->cal->points) ? chakra_error_set(err, CHAKRA_ENOMEM, "out of memory") : 0;
  rc = calib_agree(c, rc, err);
  if (!rc) rc = p2p_sweep(c, err);
  if (!rc) {
    snprintf(c->dir, sizeof c->dir, "%s/chakra-calibrate.%d.XXXXXX", c->o->workdir ? c->o->workdir : ".", c->me);
    if (!mkdtemp(c->dir)) {
      rc = chakra_error_set(err, CHAKRA_EIO, "%s: cannot make a folder for the microbenchmarks", c->dir);
      c->dir[0] = 0;
    }
    if (!rc) rc = write_micro(c, err);
    rc = calib_agree(c, rc, err);
  }
  for (uint32_t i = 0; !rc && i < n; i++) rc = replay_micro(c, (int)(i / c->n_sizes), c->sizes[i % c->n_sizes], &measured[i], err);
  if (!rc && c->me == 0) rc = load_workloads(c, err);
  if (!rc && c->me == 0) rc = fit(c, measured, err);
  if (!rc && c->me == 0) rc = write_yaml(c, err);
  if (!rc && c->me == 0 && c->o->system_output) rc = write_system(c, err);
  free(measured);
  return rc;
}

int chakra_replay_calibrate(const chakra_replay_calibrate_options *o, chakra_replay_calibration *cal,
                            chakra_error *err) {
  memset(cal, 0, sizeof *cal);
  calib c = {.o = o, .cal = cal};
  rp_peers_init(&c.peers, MPI_COMM_WORLD, 0);
  c.me = c.peers.me;
  c.size = c.peers.size;
  cal->npus = (uint32_t)c.size;
  int rc = c.size < 2 ? chakra_error_set(err, CHAKRA_EINVAL, "calibration needs at least 2 processes (mpirun -np 2 or more)")
           : !o->system || !o->output ? chakra_error_set(err, CHAKRA_EINVAL, "calibration needs a system file and an output")
                                      : 0;
  if (!rc) rc = make_sizes(&c, err);
  if (!rc) rc = measure_and_fit(&c, err);
  if (cal->must_abort) return rc;
  rc = calib_agree(&c, rc, err);
  double v[4] = {cal->bandwidth_gbps, cal->latency_ns, cal->p2p_bandwidth_gbps, cal->p2p_latency_ns};
  if (!rc) MPI_Bcast(v, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  cal->bandwidth_gbps = v[0], cal->latency_ns = v[1], cal->p2p_bandwidth_gbps = v[2], cal->p2p_latency_ns = v[3];
  if (c.w)
    for (uint32_t i = 0; i < CALIB_NCOLL * c.n_sizes; i++) chakra_sim_workload_free(c.w[i]);
  free(c.w);
  yajl_tree_free(c.system);
  remove_micro(&c);
  free(c.sizes);
  return rc;
}

void chakra_replay_calibration_free(chakra_replay_calibration *cal) {
  free(cal->points);
  memset(cal, 0, sizeof *cal);
}
