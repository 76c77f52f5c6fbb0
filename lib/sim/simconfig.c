/* simconfig.c - the public configuration object (chakra_sim_config): the
 * network, system, remote memory and groups, from ASTRA-sim's files or set
 * key by key in code, checked the same way; see include/chakra/sim.h. */
#include <stdlib.h>
#include <string.h>

#include "chakra/sim.h"
#include "config.h"
#include "simconfig.h"

static void params_default(chakra_sim_params *p) {
  memset(p, 0, sizeof *p);
  p->network_model = CHAKRA_NET_AWARE;
  p->queues_per_dim = 1;
  p->injection_scale = 1;
}

/* The system file's defaults (what a file without keys gives). */
static void system_default(sim_sys_config *c) {
  memset(c, 0, sizeof *c);
  c->endpoint_delay = 10;
  c->active_chunks = 1;
}

int chakra_sim_config_new(chakra_sim_config **out, const chakra_topo *topo, chakra_error *err) {
  *out = NULL;
  chakra_sim_config *c = calloc(1, sizeof *c);
  if (!c) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  int rc = chakra_topo_clone(&c->topo, topo, err); /* a link list has no dimension list to rebuild from */
  if (rc) {
    free(c);
    return rc;
  }
  system_default(&c->sys);
  c->mem.type = MEM_NONE;
  params_default(&c->params);
  *out = c;
  return CHAKRA_OK;
}

int chakra_sim_config_load(chakra_sim_config **out, const chakra_sim_files *f, chakra_diag_fn diag, void *diag_ctx,
                           chakra_error *err) {
  *out = NULL;
  if (!f->system || !f->network)
    return chakra_error_set(err, CHAKRA_EINVAL, "configuration: the system and network files are required");
  chakra_sim_config *c = calloc(1, sizeof *c);
  if (!c) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  chakra_error local;
  if (!err) err = &local;
  sim_diag d = {.fn = diag, .ctx = diag_ctx, .err = err};
  /* ASTRA-sim's YAML, a link-list file or an inline description with its
   * link bandwidth and latency (mesh:8x8@50,500): docs/topology.md. */
  int rc = chakra_topo_open(&c->topo, f->network, 0, 0, err);
  if (!rc) rc = sim_config_system(f->system, &c->sys, &d, err);
  if (!rc) rc = sim_config_memory(f->remote_memory, &c->mem, err);
  if (!rc) rc = sim_config_groups(f->comm_groups, chakra_topo_npus(c->topo), &c->groups, err);
  if (rc) {
    chakra_sim_config_free(c);
    return rc;
  }
  c->system_file = strdup(f->system);
  params_default(&c->params);
  *out = c;
  return CHAKRA_OK;
}

int chakra_sim_system_local_mem_bw(const char *system, double *gbps, chakra_diag_fn diag, void *diag_ctx,
                                   chakra_error *err) {
  chakra_error local;
  if (!err) err = &local;
  sim_diag d = {.fn = diag, .ctx = diag_ctx, .err = err};
  sim_sys_config c;
  int rc = sim_config_system(system, &c, &d, err);
  if (rc) return rc;
  *gbps = c.local_mem_bw;
  sim_config_system_free(&c);
  return 0;
}

static int is_memory_key(const char *k) {
  static const char *const keys[] = {"memory-type", "remote-mem-latency", "remote-mem-bw", "num-nodes",
                                     "num-npus-per-node"};
  for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
    if (strcmp(k, keys[i]) == 0) return 1;
  return 0;
}

int chakra_sim_config_set(chakra_sim_config *c, const char *key, const char *json_value, chakra_diag_fn diag,
                          void *diag_ctx, chakra_error *err) {
  char why[256] = "";
  yajl_val v = yajl_tree_parse(json_value, why, sizeof why);
  if (!v) return chakra_error_set(err, CHAKRA_EINVAL, "configuration: \"%s\": the value is not JSON", key);
  chakra_error local;
  if (!err) err = &local;
  sim_diag d = {.fn = diag, .ctx = diag_ctx, .err = err};
  int rc;
  if (is_memory_key(key)) {
    rc = sim_config_memory_key("configuration", key, v, &c->mem, err); /* checked as a whole by each run */
  } else {
    rc = sim_config_system_key("configuration", key, v, &c->sys, ".", &d, err);
  }
  yajl_tree_free(v);
  return rc;
}

int chakra_sim_config_add_group(chakra_sim_config *c, const char *name, const uint32_t *ranks, uint32_t n,
                                chakra_error *err) {
  uint32_t npus = chakra_topo_npus(c->topo);
  if (!name || !*name || n == 0)
    return chakra_error_set(err, CHAKRA_EINVAL, "configuration: a communicator group needs a name and members");
  for (uint32_t i = 0; i < n; i++) {
    if (ranks[i] >= npus)
      return chakra_error_set(err, CHAKRA_EINVAL, "configuration: group \"%s\": entry %u is not a rank in 0..%u", name, i, npus - 1);
    for (uint32_t k = 0; k < i; k++)
      if (ranks[k] == ranks[i])
        return chakra_error_set(err, CHAKRA_EINVAL, "configuration: group \"%s\": rank %u listed twice", name, ranks[i]);
  }
  for (int i = 0; i < c->groups.n; i++)
    if (strcmp(c->groups.v[i].name, name) == 0)
      return chakra_error_set(err, CHAKRA_EINVAL, "configuration: group \"%s\" is defined twice", name);
  return sim_groups_add(&c->groups, name, ranks, n) ? chakra_error_set(err, CHAKRA_ENOMEM, "out of memory") : 0;
}

chakra_sim_params *chakra_sim_config_params(chakra_sim_config *c) { return &c->params; }
const chakra_topo *chakra_sim_config_topo(const chakra_sim_config *c) { return c->topo; }

int chakra_sim_config_set_topo(chakra_sim_config *c, const chakra_topo *topo, chakra_error *err) {
  uint32_t npus = chakra_topo_npus(c->topo);
  if (chakra_topo_npus(topo) != npus)
    return chakra_error_set(err, CHAKRA_EINVAL, "configuration: the network has %u NPUs; a replacement needs as many, not %u",
                            npus, chakra_topo_npus(topo));
  chakra_topo *t;
  int rc = chakra_topo_clone(&t, topo, err);
  if (rc) return rc;
  chakra_topo_free(c->topo);
  c->topo = t;
  return CHAKRA_OK;
}

void chakra_sim_config_free(chakra_sim_config *c) {
  if (!c) return;
  chakra_topo_free(c->topo);
  sim_config_system_free(&c->sys);
  sim_config_groups_free(&c->groups);
  free(c->system_file);
  free(c);
}
