/* calibrate.c - chakra_replay_calibrate(): measure the job's ranks
 * (point-to-point and replayed microbenchmark collectives) and fit the
 * bandwidth and latency of a one-dimension ASTRA-sim network whose
 * simulation reproduces them; see chakra/replay.h. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../util/outfile.h"
#include "chakra/gen.h"
#include "chakra/replay.h"
#include "chakra/sim.h"
#include "chakra/sweep.h"

/* The collectives the microbenchmarks (and the simulator) have, as
 * CollectiveCommType values. */
static const int calib_colls[] = {0 /* ALL_REDUCE */, 2 /* ALL_GATHER */, 7 /* REDUCE_SCATTER */, 6 /* ALL_TO_ALL */};
static const char *const calib_names[] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"};
#define CALIB_NCOLL 4

typedef struct calib {
  const chakra_replay_calibrate_options *o;
  int me, size;
  char dir[4096];            /* this rank's folder of microbenchmarks */
  uint64_t *sizes;
  uint32_t n_sizes;
  chakra_replay_calibration *cal;
  chakra_sim_workload **w;   /* rank 0: per collective point */
} calib;

/* Every rank's status; the lowest failing rank's message on all. */
static int calib_agree(calib *c, int rc, chakra_error *err) {
  int mine = rc ? c->me : c->size, first;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first == c->size) return 0;
  chakra_error m = {0};
  if (c->me == first && err) m = *err;
  if (c->me == first && !m.code) m.code = rc;
  MPI_Bcast(&m, (int)sizeof m, MPI_BYTE, first, MPI_COMM_WORLD);
  if (err) *err = m;
  return m.code ? m.code : CHAKRA_EINVAL;
}

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
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
 * need no shared file system and rank 0 can simulate them. */
static int write_micro(calib *c, chakra_error *err) {
  char p[4200];
  for (int k = 0; k < CALIB_NCOLL; k++)
    for (uint32_t i = 0; i < c->n_sizes; i++) {
      micro_prefix(c, p, sizeof p, k, c->sizes[i]);
      int rc = chakra_gen_microbench(p, calib_colls[k], (uint32_t)c->size, c->sizes[i], err);
      if (rc) return rc;
    }
  return 0;
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
  if (!rc && res.must_abort) {
    c->cal->must_abort = 1;
    rc = chakra_error_set(err, CHAKRA_EIO, "calibration: the %s of %llu bytes stalled", calib_names[k],
                          (unsigned long long)bytes);
  }
  if (!rc && c->me == 0) {
    double v[1024];
    uint32_t n = res.iterations < 1024 ? res.iterations : 1024;
    for (uint32_t i = 0; i < n; i++) v[i] = (double)res.makespan_ns[i];
    *ns = median(v, n);
  }
  chakra_replay_result_free(&res);
  return rc;
}

/* ---- the fit (rank 0) ---- */

/* Simulated max finish of every collective point at (bandwidth, latency)
 * pairs: the sweep of the two values each. t[point][4]:
 * (b0,l0) (b0,l1) (b1,l0) (b1,l1). */
static int simulate(calib *c, const double *bw, const double *lat, int n, double (*t)[4], chakra_error *err) {
  char net[4200], v_bw[96], v_lat[96];
  snprintf(net, sizeof net, "%s/net.yml", c->dir);
  FILE *f = fopen(net, "w");
  if (!f) return chakra_error_set(err, CHAKRA_EIO, "%s: cannot write", net);
  fprintf(f, "topology: [ %s ]\nnpus_count: [ %d ]\nbandwidth: [ 1 ]\nlatency: [ 1 ]\n",
          chakra_topo_kind_name((chakra_topo_kind)c->o->topology), c->size);
  if (fclose(f)) return chakra_error_set(err, CHAKRA_EIO, "%s: cannot write", net);
  if (n == 1) snprintf(v_bw, sizeof v_bw, "bandwidth=%.17g", bw[0]);
  else snprintf(v_bw, sizeof v_bw, "bandwidth=%.17g,%.17g", bw[0], bw[1]);
  if (n == 1) snprintf(v_lat, sizeof v_lat, "latency=%.17g", lat[0]);
  else snprintf(v_lat, sizeof v_lat, "latency=%.17g,%.17g", lat[0], lat[1]);
  const char *model = c->o->network_model == CHAKRA_NET_UNAWARE ? "network-model=unaware" : "network-model=aware";
  const char *vary[] = {v_bw, v_lat, model};
  chakra_sweep *s;
  int rc = chakra_sweep_new(&s, vary, 3, err);
  if (rc) return rc;
  chakra_sim_files files = {.system = c->o->system, .network = net};
  size_t pts[4] = {0, 1, 2, 3}, np = (size_t)n * (size_t)n;
  chakra_sweep_row rows[4];
  for (uint32_t i = 0; !rc && i < CALIB_NCOLL * c->n_sizes; i++) {
    rc = chakra_sweep_run(s, &files, c->w[i], pts, np, 0, rows, NULL, NULL, err);
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

/* The fit's cost at latency x and y = 1 / bandwidth: squared log ratios
 * of predicted to measured, so a factor of 2 too high weighs as much as
 * 2 too low and no single noisy point pulls the line to zero. */
static double log_cost(const double (*k)[3], const double *m, size_t n, double x, double y) {
  double sum = 0;
  for (size_t i = 0; i < n; i++) {
    double pred = k[i][0] + k[i][1] * x + k[i][2] * y;
    if (pred <= 0) return INFINITY;
    double l = log(pred / m[i]);
    sum += l * l;
  }
  return sum;
}

/* Minimises log_cost over latency x >= 0 and y > 0: a log-spaced grid,
 * then finer grids around the best cell (the cost is smooth, not always
 * convex, and cheap: the model is affine). */
static void fit_affine(const double (*k)[3], const double *m, size_t n, double *x, double *y) {
  double lx0 = 0, lx1 = 8, ly0 = -7, ly1 = 3; /* log10: 1 ns .. 100 ms; 1e-7 .. 1e3 ns per byte */
  double best = INFINITY, bx = 0, by = 1;
  for (int round = 0; round < 4; round++) {
    const int g = 60;
    for (int i = -1; i <= g; i++)   /* i = -1: latency 0 */
      for (int j = 0; j <= g; j++) {
        double xv = i < 0 ? 0 : pow(10, lx0 + (lx1 - lx0) * i / g), yv = pow(10, ly0 + (ly1 - ly0) * j / g);
        double cost = log_cost(k, m, n, xv, yv);
        if (cost < best) best = cost, bx = xv, by = yv;
      }
    double wx = (lx1 - lx0) / 10, wy = (ly1 - ly0) / 10, cx = bx > 0 ? log10(bx) : lx0, cy = log10(by);
    lx0 = cx - wx, lx1 = cx + wx, ly0 = cy - wy, ly1 = cy + wy;
  }
  *x = bx, *y = by;
}

/* GB/s (2^30) <-> ns per byte. */
static double per_byte(double gbps) { return 1e9 / (gbps * (1u << 30)); }
static double gbps_of(double ns_per_byte) { return 1e9 / (ns_per_byte * (1u << 30)); }

static int fit(calib *c, const double *measured, chakra_error *err) {
  uint32_t n = CALIB_NCOLL * c->n_sizes, nf = 0;
  double (*t)[4] = calloc(n, sizeof *t), (*k)[3] = calloc(n, sizeof *k), *m = calloc(n, sizeof *m);
  if (!t || !k || !m) return free(t), free(k), free(m), chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  double bw = c->cal->p2p_bandwidth_gbps, lat = c->cal->p2p_latency_ns;
  int rc = 0;
  uint64_t fit_min = c->o->fit_min_bytes ? c->o->fit_min_bytes : 64 << 10;
  for (int round = 0; !rc && round < 3; round++) {
    /* linearise around (bw, lat): steps large enough to be seen in integer ns */
    double bws[2] = {bw, bw * 0.5}, lats[2] = {lat, lat + (lat > 1000 ? lat : 1000)};
    rc = simulate(c, bws, lats, 2, t, err);
    nf = 0;
    for (uint32_t i = 0; !rc && i < n; i++) {
      double c1 = (t[i][1] - t[i][0]) / (lats[1] - lats[0]);
      double c2 = (t[i][2] - t[i][0]) / (per_byte(bws[1]) - per_byte(bws[0]));
      if (c->sizes[i % c->n_sizes] < fit_min) continue;
      k[nf][0] = t[i][0] - c1 * lats[0] - c2 * per_byte(bws[0]);
      k[nf][1] = c1, k[nf][2] = c2;
      m[nf++] = measured[i];
    }
    if (!rc && nf == 0)
      rc = chakra_error_set(err, CHAKRA_EINVAL, "calibration: no size at or above the fit's minimum of %llu bytes",
                            (unsigned long long)fit_min);
    double x, y;
    if (!rc) fit_affine((const double (*)[3])k, m, nf, &x, &y);
    if (!rc) bw = gbps_of(y), lat = x;
  }
  if (!rc) {
    double bws[1] = {bw}, lats[1] = {lat};
    rc = simulate(c, bws, lats, 1, t, err);
  }
  for (uint32_t i = 0; !rc && i < n; i++) {
    chakra_replay_calibrate_point *p = &c->cal->points[c->cal->n_points++];
    p->coll = calib_colls[i / c->n_sizes];
    p->bytes = c->sizes[i % c->n_sizes];
    p->measured_ns = measured[i];
    p->predicted_ns = t[i][0];
    p->fitted = p->bytes >= fit_min;
  }
  c->cal->bandwidth_gbps = bw;
  c->cal->latency_ns = lat;
  free(t), free(k), free(m);
  return rc;
}

static int load_workloads(calib *c, chakra_error *err) {
  uint32_t n = CALIB_NCOLL * c->n_sizes;
  if (!(c->w = calloc(n, sizeof *c->w))) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  char p[4200];
  for (uint32_t i = 0; i < n; i++) {
    micro_prefix(c, p, sizeof p, (int)(i / c->n_sizes), c->sizes[i % c->n_sizes]);
    int rc = chakra_sim_workload_load(&c->w[i], p, (uint32_t)c->size, 1, NULL, NULL, err);
    if (rc) return rc;
  }
  return 0;
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
  free(measured);
  return rc;
}

int chakra_replay_calibrate(const chakra_replay_calibrate_options *o, chakra_replay_calibration *cal,
                            chakra_error *err) {
  memset(cal, 0, sizeof *cal);
  calib c = {.o = o, .cal = cal};
  MPI_Comm_rank(MPI_COMM_WORLD, &c.me);
  MPI_Comm_size(MPI_COMM_WORLD, &c.size);
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
  remove_micro(&c);
  free(c.sizes);
  return rc;
}

void chakra_replay_calibration_free(chakra_replay_calibration *cal) {
  free(cal->points);
  memset(cal, 0, sizeof *cal);
}
