/* validsim.c - validate, then simulate (chakra_validate_set_sim, see
 * include/chakra/validate.h): a workload that passes the checks is run on a
 * simulator configuration, and each rank the simulator cannot finish is a
 * problem like the checks' own. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra/validate.h"

/* The configuration with the caller's run parameters, the groups left to
 * the set. */
static int load_config(const chakra_validate_sim *sim, int rendezvous, chakra_sim_config **out, chakra_error *err) {
  chakra_sim_files files = sim->files;
  files.comm_groups = NULL;
  int rc = chakra_sim_config_load(out, &files, sim->diag, sim->diag_ctx, err);
  if (rc) return rc;
  chakra_sim_params *p = chakra_sim_config_params(*out);
  const chakra_sim_params *given = &sim->params;
  p->network_model = given->network_model;
  p->multidim_full = given->multidim_full;
  p->custom_as_is = given->custom_as_is;
  p->symmetry = given->symmetry;
  if (given->queues_per_dim) p->queues_per_dim = given->queues_per_dim;
  if (given->injection_scale > 0) p->injection_scale = given->injection_scale;
  p->rendezvous = rendezvous;
  return CHAKRA_OK;
}

/* The rank a stuck line is about: R of its "rank R " head, written as %u
 * writes it (no sign, no leading zero); -1 for any other line. */
static int64_t stuck_rank(const char *line) {
  if (strncmp(line, "rank ", 5) != 0) return -1;
  const char *d = line + 5;
  size_t k = strspn(d, "0123456789");
  if (!k || k > 10 || d[k] != ' ' || (d[0] == '0' && k > 1)) return -1;
  uint64_t r = 0;
  for (size_t i = 0; i < k; i++) r = r * 10 + (uint64_t)(d[i] - '0');
  return r > UINT32_MAX ? -1 : (int64_t)r;
}

/* For each rank below n, its first stuck line's index in res->stuck or
 * UINT32_MAX: one walk over the lines, not one per unfinished rank (all of
 * them when the whole job deadlocks). NULL when out of memory. */
static uint32_t *stuck_index(const chakra_run_record *res, uint32_t n) {
  uint32_t *first = malloc((n ? n : 1) * sizeof *first);
  if (!first) return NULL;
  memset(first, 0xff, (n ? n : 1) * sizeof *first);
  for (uint32_t i = res->n_stuck; i-- > 0;) { /* backwards: the first line of a rank is kept */
    int64_t r = stuck_rank(res->stuck[i]);
    if (r >= 0 && r < n) first[r] = i;
  }
  return first;
}

/* The simulator's line on rank r (the nodes in flight) without its
 * "rank R ...: " head, or "" (first: stuck_index's, or NULL to scan). */
static const char *stuck_detail(const chakra_run_record *res, const uint32_t *first, uint32_t r) {
  uint32_t i = 0;
  if (first) i = first[r];
  else
    while (i < res->n_stuck && stuck_rank(res->stuck[i]) != r) i++;
  if (i >= res->n_stuck) return "";
  const char *colon = strstr(res->stuck[i], ": ");
  return colon ? colon + 2 : res->stuck[i];
}

/* One ERROR per unfinished rank of res; returns how many. */
static uint64_t report_unfinished(const chakra_validate_sim *sim, const chakra_set *set, const chakra_run_record *res,
                                  chakra_diag_fn fn, void *ctx) {
  uint64_t stuck = 0;
  uint32_t n = chakra_set_ranks(set);
  if (res->npus < n) n = res->npus;
  uint32_t *first = stuck_index(res, n);
  for (uint32_t r = 0; r < n; r++) {
    if (res->ranks[r].finished) continue;
    const char *detail = stuck_detail(res, first, r);
    char what[700];
    snprintf(what, sizeof what, "deadlock: simulated on %s and %s, this rank does not finish%s%s",
             sim->files.system ? sim->files.system : "the system", sim->files.network ? sim->files.network : "the network",
             *detail ? ": " : "", detail);
    chakra_problem p = chakra_problem_make(CHAKRA_SEV_ERROR, what);
    p.file = chakra_set_rank_name(set, r);
    if (fn) fn(ctx, &p);
    stuck++;
  }
  free(first);
  return stuck;
}

static int simulate(const chakra_set *set, const chakra_validate_sim *sim, const chakra_sim_config *given,
                    chakra_run_record *out, int rendezvous, chakra_diag_fn fn, void *ctx, uint64_t *stuck,
                    chakra_error *err) {
  if (!given && (!sim->files.system || !sim->files.network))
    return chakra_error_set(err, CHAKRA_EINVAL, "validate: simulating needs a system and a network configuration");
  uint32_t n = chakra_set_ranks(set);
  chakra_sim_config *own = NULL;
  chakra_sim_workload *w = NULL;
  chakra_run_record res;
  memset(&res, 0, sizeof res);
  int rc = given ? CHAKRA_OK : load_config(sim, rendezvous, &own, err);
  const chakra_sim_config *cfg = given ? given : own;
  if (!rc) {
    uint32_t npus = chakra_topo_npus(chakra_sim_config_topo(cfg));
    if (npus != n)
      rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: the network has %u NPUs but the workload has %u rank file(s)",
                            sim->files.network ? sim->files.network : "the network", npus, n);
  }
  if (!rc) rc = chakra_sim_workload_load_set(&w, set, 0, sim->diag, sim->diag_ctx, err);
  chakra_sim_run_options ro = {.diag = sim->diag, .diag_ctx = sim->diag_ctx};
  if (!rc) rc = chakra_sim_run(cfg, w, &ro, &res, err);
  if (!rc) *stuck = report_unfinished(sim, set, &res, fn, ctx);
  if (!rc && out) *out = res;
  else chakra_run_record_free(&res);
  chakra_sim_workload_free(w);
  chakra_sim_config_free(own);
  return rc;
}

int chakra_validate_set_sim(const chakra_set *set, const chakra_validate_options *opt, const chakra_validate_sim *sim,
                            chakra_diag_fn fn, void *ctx, chakra_validate_summary *sum, chakra_error *err) {
  int rc = chakra_validate_set(set, opt, fn, ctx, sum, err);
  if (rc || !sim || sum->errors || sum->unreadable) return rc;
  uint64_t stuck = 0;
  rc = simulate(set, sim, NULL, NULL, opt ? opt->rendezvous : 0, fn, ctx, &stuck, err);
  sum->errors += stuck;
  return rc;
}

int chakra_validate_set_sim_on(const chakra_set *set, const chakra_validate_options *opt,
                               const chakra_validate_sim *sim, const chakra_sim_config *config,
                               chakra_run_record *result, chakra_diag_fn fn, void *ctx, chakra_validate_summary *sum,
                               chakra_error *err) {
  if (result) memset(result, 0, sizeof *result);
  int rc = chakra_validate_set(set, opt, fn, ctx, sum, err);
  if (rc || sum->errors || sum->unreadable) return rc;
  uint64_t stuck = 0;
  chakra_validate_sim none = {0};
  rc = simulate(set, sim ? sim : &none, config, result, opt ? opt->rendezvous : 0, fn, ctx, &stuck, err);
  sum->errors += stuck;
  return rc;
}
