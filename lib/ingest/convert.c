/* convert.c - PyTorch host ET or linked trace -> Chakra ET (chakra convert
 * pytorch); see include/chakra/ingest.h, docs/convert.md and convert.h.
 *
 * Two policies share the steps: --compat reproduces the reference
 * converter (mlcommons/chakra) byte for byte, including its dependency
 * rules; the default applies the fixes of spec section 5 (GPU ops ordered
 * per stream, synchronisation honoured, send/recv peers and tags,
 * order-independent control deps, stream only on device ops). */
#include "convert.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/bigmem.h"
#include "../util/outset.h"
#include "convdeps.h"
#include "convgroups.h"
#include "convindex.h"
#include "convorder.h"
#include "convtype.h"
#include "convwrite.h"

const char *conv_nname(const conv *c, uint32_t i) { return strtab_str(&c->h->strings, c->h->nodes[i].name); }

int conv_node_err(conv *c, uint32_t i, const char *fmt, ...) {
  char node[96], where[4400];
  hostet_where(c->h, i, node, sizeof node);
  snprintf(where, sizeof where, "%s: %s '%.200s'", c->h->path, node, conv_nname(c, i));
  va_list ap;
  va_start(ap, fmt);
  int rc = chakra_diag_failv(c->err, CHAKRA_EFORMAT, where, fmt, ap);
  va_end(ap);
  return rc;
}

int conv_oom(conv *c) { return chakra_error_set(c->err, CHAKRA_ENOMEM, "out of memory"); }

/* Phases are reported to opt->progress as they begin (done 0) and end
 * (done = total = 1); the CLI times them with it. A nonzero answer when a
 * phase begins cancels the conversion; once the output is written (the
 * "free" phase) it no longer can be. */
static int phase(const chakra_convert_options *opt, const char *name, uint64_t done, chakra_error *err) {
  if (!opt->progress || !opt->progress(opt->progress_ctx, name, done, 1) || done || strcmp(name, "free") == 0)
    return 0;
  return chakra_error_set(err, CHAKRA_ECANCELED, "conversion canceled before its %s phase", name);
}


/* --compat refuses what the reference would crash on, with an error. */
static int compat_checks(conv *c) {
  const hostet *h = c->h;
  const char *miss = !h->has_pid ? "pid" : !h->has_time ? "time" : !h->has_start_ts ? "start_ts"
                     : !h->has_finish_ts ? "finish_ts" : NULL;
  if (miss)
    return chakra_error_set(c->err, CHAKRA_EFORMAT,
                            "%s: no top-level '%s' (the reference converter requires schema, pid, time, "
                            "start_ts and finish_ts)", h->path, miss);
  if (h->pid < 0 || h->start_ts < 0 || h->finish_ts < 0)
    return chakra_error_set(c->err, CHAKRA_EFORMAT, "%s: pid, start_ts and finish_ts must not be negative", h->path);
  for (size_t i = 0; i < c->n; i++) {
    if (!c->sel[i]) continue;
    const ht_node *x = &h->nodes[i];
    for (int k = 0; k < HT_NATTR; k++)
      if (!(x->flags & (HT_ATTR0 << k)))
        return conv_node_err(c, (uint32_t)i, "no attribute '%s' (the reference converter requires rf_id, fw_parent, "
                                        "seq_id, scope, tid, fw_tid and op_schema)", ht_attr_names[k]);
    if (!(x->flags & HT_SCHEMA)) return conv_node_err(c, (uint32_t)i, "no attribute 'op_schema'");
    if (x->excl < 0) return conv_node_err(c, (uint32_t)i, "negative exclusive_dur");
  }
  return 0;
}

static void conv_free(conv *c) {
  bigmem_free(c->sid), bigmem_free(c->sidx), bigmem_free(c->direct), bigmem_free(c->parent), bigmem_free(c->child_off);
  bigmem_free(c->children), bigmem_free(c->sel), bigmem_free(c->out), bigmem_free(c->gpu), bigmem_free(c->type);
  bigmem_free(c->comm_type), bigmem_free(c->peer), bigmem_free(c->tag), bigmem_free(c->pg), bigmem_free(c->dep_start);
  bigmem_free(c->dep_cnt), bigmem_free(c->deps), bigmem_free(c->order);
  for (size_t j = 0; j < c->n_pgs; j++) free(c->pgs[j].name), free(c->pgs[j].ranks);
  free(c->pgs);
}

static int convert_loaded(conv *c, const conv_dest *to) {
  int rc = phase(c->opt, "index", 0, c->err);
  if (!rc) rc = conv_build_index(c);
  if (!rc) rc = conv_build_tree(c);
  if (!rc) rc = conv_select(c);
  if (!rc && c->compat) rc = compat_checks(c);
  if (!rc) rc = conv_parse_groups(c);
  if (!rc) {
    c->dep_start = bigmem_calloc((c->n ? c->n : 1) * sizeof *c->dep_start);
    c->dep_cnt = bigmem_calloc((c->n ? c->n : 1) * sizeof *c->dep_cnt);
    if (!c->dep_start || !c->dep_cnt) rc = conv_oom(c);
  }
  if (!rc) rc = phase(c->opt, "index", 1, c->err);
  if (!rc) rc = phase(c->opt, "deps", 0, c->err);
  if (!rc) rc = conv_type_nodes(c);
  if (!rc) rc = c->compat ? conv_deps_compat(c) : conv_deps_default(c);
  if (!rc) rc = conv_prune_and_order(c);
  if (!rc) rc = phase(c->opt, "deps", 1, c->err);
  if (!rc) rc = phase(c->opt, "write", 0, c->err);
  if (!rc) rc = conv_write_et(c, to);
  if (!rc && c->opt->comm_groups_path) rc = conv_write_groups(c, c->opt->comm_groups_path);
  if (!rc) rc = phase(c->opt, "write", 1, c->err);
  return rc;
}

/* Parse, then convert and write (chakra_convert_pytorch after linking). */
static int convert_input(const chakra_input *in, const conv_dest *to, const chakra_convert_options *opt,
                         chakra_convert_report *rep, chakra_error *err) {
  hostet_options ho = {.mode = HT_MODE_CONVERT,
                       .versions = opt->compat ? HT_VERSIONS_REFERENCE : HT_VERSIONS_NEWER_OK,
                       .threads = opt->threads,
                       .diag = opt->diag,
                       .diag_ctx = opt->diag_ctx,
                       .progress = opt->progress,
                       .progress_ctx = opt->progress_ctx};
  hostet *h = NULL;
  int rc = phase(opt, "parse", 0, err);
  if (!rc) rc = hostet_read_input(&h, in, &ho, err);
  if (!rc) rc = phase(opt, "parse", 1, err);
  if (!rc) {
    conv c = {.opt = opt, .rep = rep, .err = err, .h = h, .n = h->n, .compat = opt->compat};
    rep->nodes_in = h->n;
    rc = convert_loaded(&c, to);
    rep->node_table_bytes = hostet_memory(h);
    if (!rc) phase(opt, "free", 0, err);
    conv_free(&c);
  }
  hostet_free(h);
  if (!rc) phase(opt, "free", 1, err);
  return rc;
}

int chakra_convert_pytorch(const char *in_path, const char *kineto_path, const char *out_path,
                           const chakra_convert_options *opt, chakra_convert_report *rep, chakra_error *err) {
  chakra_convert_options defaults = {0};
  chakra_convert_report local;
  chakra_error err_local; /* the readers and writers below copy messages through err */
  if (!err) err = &err_local;
  if (!opt) opt = &defaults;
  if (!rep) rep = &local;
  memset(rep, 0, sizeof *rep);
  outfile *linked = NULL;
  if (kineto_path) {
    /* link into a scratch file beside the output, then convert it: read
     * back at once, never one of the program's outputs, removed on every
     * way out (an interrupt included) */
    chakra_link_options lo = {.rank = -1, .threads = opt->threads, .diag = opt->diag, .diag_ctx = opt->diag_ctx};
    int rc = outfile_scratch(&linked, out_path, err);
    if (!rc) rc = phase(opt, "link", 0, err);
    outset_scratch_begin();
    if (!rc) rc = chakra_link(in_path, kineto_path, outfile_path(linked), &lo, NULL, err);
    outset_scratch_end();
    if (!rc) rc = phase(opt, "link", 1, err);
    if (rc) {
      outfile_discard(linked);
      return rc;
    }
    in_path = outfile_path(linked);
  }
  chakra_input in = {.path = in_path};
  conv_dest to = {.path = out_path};
  int rc = convert_input(&in, &to, opt, rep, err);
  outfile_discard(linked);
  return rc;
}

int chakra_convert_pytorch_io(const chakra_input *in, const chakra_sink *out, const chakra_convert_options *opt,
                              chakra_convert_report *rep, chakra_error *err) {
  chakra_convert_options defaults = {0};
  chakra_convert_report local;
  chakra_error err_local;
  if (!err) err = &err_local;
  conv_dest to = {.sink = out};
  if (!rep) rep = &local;
  memset(rep, 0, sizeof *rep);
  return convert_input(in, &to, opt ? opt : &defaults, rep, err);
}
