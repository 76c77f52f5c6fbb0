/* validsim.c - validate, then simulate (chakra_validate_set_sim, see
 * include/chakra/validate.h): a workload that passes the checks is run on a
 * simulator configuration, and each rank the simulator cannot finish is a
 * problem like the checks' own. */
#include <stdio.h>
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

/* The simulator's line on rank r (the nodes in flight) without its
 * "rank R ...: " head, or "". */
static const char *stuck_detail(const chakra_sim_result *res, uint32_t r) {
  char head[32];
  int hl = snprintf(head, sizeof head, "rank %u ", r);
  for (uint32_t i = 0; i < res->n_stuck; i++)
    if (strncmp(res->stuck[i], head, (size_t)hl) == 0) {
      const char *colon = strstr(res->stuck[i], ": ");
      return colon ? colon + 2 : res->stuck[i];
    }
  return "";
}

/* One ERROR per unfinished rank of res; returns how many. */
static uint64_t report_unfinished(const chakra_validate_sim *sim, const chakra_set *set, const chakra_sim_result *res,
                                  chakra_diag_fn fn, void *ctx) {
  uint64_t stuck = 0;
  uint32_t n = chakra_set_ranks(set);
  for (uint32_t r = 0; r < res->npus && r < n; r++) {
    if (res->ranks[r].finished) continue;
    const char *detail = stuck_detail(res, r);
    char what[700];
    snprintf(what, sizeof what, "deadlock: simulated on %s and %s, this rank does not finish%s%s", sim->files.system,
             sim->files.network, *detail ? ": " : "", detail);
    chakra_problem p = chakra_problem_make(CHAKRA_SEV_ERROR, what);
    p.file = chakra_set_rank_name(set, r);
    if (fn) fn(ctx, &p);
    stuck++;
  }
  return stuck;
}

static int simulate(const chakra_set *set, const chakra_validate_sim *sim, int rendezvous, chakra_diag_fn fn,
                    void *ctx, uint64_t *stuck, chakra_error *err) {
  if (!sim->files.system || !sim->files.network)
    return chakra_error_set(err, CHAKRA_EINVAL, "validate: simulating needs a system and a network configuration");
  uint32_t n = chakra_set_ranks(set);
  chakra_sim_config *cfg = NULL;
  chakra_sim_workload *w = NULL;
  chakra_sim_result res;
  memset(&res, 0, sizeof res);
  int rc = load_config(sim, rendezvous, &cfg, err);
  if (!rc) {
    uint32_t npus = chakra_topo_npus(chakra_sim_config_topo(cfg));
    if (npus != n)
      rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: the network has %u NPUs but the workload has %u rank file(s)",
                            sim->files.network, npus, n);
  }
  if (!rc) rc = chakra_sim_workload_load_set(&w, set, 0, sim->diag, sim->diag_ctx, err);
  chakra_sim_run_options ro = {.diag = sim->diag, .diag_ctx = sim->diag_ctx};
  if (!rc) rc = chakra_sim_run(cfg, w, &ro, &res, err);
  if (!rc) *stuck = report_unfinished(sim, set, &res, fn, ctx);
  chakra_sim_result_free(&res);
  chakra_sim_workload_free(w);
  chakra_sim_config_free(cfg);
  return rc;
}

int chakra_validate_set_sim(const chakra_set *set, const chakra_validate_options *opt, const chakra_validate_sim *sim,
                            chakra_diag_fn fn, void *ctx, chakra_validate_summary *sum, chakra_error *err) {
  int rc = chakra_validate_set(set, opt, fn, ctx, sum, err);
  if (rc || !sim || sum->errors || sum->unreadable) return rc;
  uint64_t stuck = 0;
  rc = simulate(set, sim, opt ? opt->rendezvous : 0, fn, ctx, &stuck, err);
  sum->errors += stuck;
  return rc;
}
