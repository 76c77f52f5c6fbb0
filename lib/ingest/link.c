/* link.c - host ET + Kineto trace -> linked host ET (chakra link); see
 * include/chakra/ingest.h, docs/link.md and link.h.
 *
 * Reads both traces, checks that they can be linked (the host ET not
 * linked already, the Kineto trace of the rank asked for), then runs the
 * steps of link.h in order. */
#include "link.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linkcpu.h"
#include "linkdev.h"
#include "linkmatch.h"
#include "linkout.h"

int link_oom(linker *L) { return chakra_error_set(L->err, CHAKRA_ENOMEM, "out of memory"); }

/* Reads both traces; refuses a host ET that is linked already and a
 * Kineto trace of another rank than the options'. */
static int read_inputs(linker *L, const char *host_path, const char *kineto_path) {
  const chakra_link_options *opt = L->opt;
  hostet_options ho = {.mode = HT_MODE_LINK, .versions = HT_VERSIONS_KNOWN, .threads = opt->threads,
                       .diag = opt->diag, .diag_ctx = opt->diag_ctx, .progress = opt->progress,
                       .progress_ctx = opt->progress_ctx};
  int rc = hostet_read(&L->h, host_path, &ho, L->err);
  if (!rc) rc = kineto_read(&L->k, kineto_path, L->err);
  if (rc) return rc;
  for (size_t i = 0; i < L->h->n; i++)
    if (L->h->nodes[i].flags & HT_GPU) {
      char where[96];
      hostet_where(L->h, i, where, sizeof where);
      return chakra_error_set(L->err, CHAKRA_EFORMAT, "%s: %s has a 'cat': this is already a linked trace",
                              host_path, where);
    }
  if (opt->rank >= 0 && L->k->has_rank && L->k->rank != opt->rank)
    rc = chakra_error_set(L->err, CHAKRA_EINVAL, "%s: the trace is of rank %lld, not of rank %lld (option rank)",
                          kineto_path, (long long)L->k->rank, (long long)opt->rank);
  L->rep->rank = opt->rank >= 0 ? opt->rank : L->k->has_rank ? L->k->rank : -1;
  return rc;
}

/* The per-host-node arrays, empty, and the Kineto names as host names. */
static int setup(linker *L) {
  L->k_of_host = malloc((L->h->n ? L->h->n : 1) * sizeof *L->k_of_host);
  L->itd = malloc((L->h->n ? L->h->n : 1) * sizeof *L->itd);
  L->kname = calloc((size_t)L->k->strings.n + 1, sizeof *L->kname);
  if (!L->k_of_host || !L->itd || !L->kname) return link_oom(L);
  for (size_t i = 0; i < L->h->n; i++) L->k_of_host[i] = LINK_NONE, L->itd[i] = LINK_NONE;
  for (uint32_t s = 1; s <= L->k->strings.n; s++)
    L->kname[s] = strtab_find(&L->h->strings, L->k->strings.str[s], L->k->strings.len[s]);
  return 0;
}

int chakra_link(const char *host_path, const char *kineto_path, const char *out_path,
                const chakra_link_options *opt, chakra_link_report *rep, chakra_error *err) {
  chakra_link_options defaults = {.rank = -1};
  chakra_link_report local;
  chakra_error err_local; /* the readers and writers below copy messages through err */
  if (!err) err = &err_local;
  if (!opt) opt = &defaults;
  if (!rep) rep = &local;
  memset(rep, 0, sizeof *rep);
  rep->rank = -1;
  linker L = {.opt = opt, .rep = rep, .err = err};
  int rc = read_inputs(&L, host_path, kineto_path);
  if (!rc) rc = setup(&L);
  if (!rc) rc = link_cpu_build(&L);
  if (!rc) rc = link_match(&L);
  if (!rc) rc = link_dev_attach(&L);
  if (!rc) link_dev_inter_thread(&L);
  if (!rc) rc = link_dev_sync(&L);
  if (!rc) rc = link_write(&L, out_path);
  free(L.cpu), free(L.thr), free(L.k_of_host), free(L.kname), free(L.gpu), free(L.itd), free(L.sync);
  kineto_free(L.k);
  hostet_free(L.h);
  return rc;
}
