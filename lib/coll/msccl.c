/* msccl.c - MSCCL-IR XML to algorithm ETs (collectives.md sections 3-4);
 * see chakra_coll_from_msccl() in include/chakra/coll.h and msccl.h.
 *
 * The XML is read (mxread.c) through expat's handlers (mxparse.c) into
 * flat arrays of GPUs, thread blocks and steps. Everything is validated
 * (mxcheck.c) before anything is written, so a bad input leaves no file
 * behind; errors name file, gpu, tb and step. Then each GPU is converted
 * (mxconv.c) and written, on several threads. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "chakra/coll.h"
#include "dag.h"
#include "emit.h"
#include "msccl.h"
#include "mxcheck.h"
#include "mxconv.h"
#include "mxparse.h"
#include "mxread.h"

/* One worker's scratch: its view of the program (steps are marked while
 * converting, and each GPU's steps belong to one worker), converter state,
 * DAG and encoding. */
typedef struct mscratch {
  mx x;
  chakra_error err;
  mx_conv c;
  coll_dag d;
  enc_buf buf;
} mscratch;

typedef struct mjob {
  const mgpu **by_id;
  const coll_meta *m;
  const chakra_coll_msccl_options *o;
  mscratch *w; /* one per worker */
} mjob;

static int msccl_rank(void *ctx, unsigned worker, uint32_t gi, coll_set *set, chakra_error *err) {
  mjob *j = ctx;
  mscratch *w = &j->w[worker];
  int rc = mx_convert_gpu(&w->c, j->by_id[gi], &w->d);
  if (rc) {
    if (err) *err = w->err;
    return rc;
  }
  coll_place pl = {.self = -1, .style = j->o->compat ? COLL_STYLE_COMPAT : COLL_STYLE_CHAKRA,
                   .names = COLL_NAMES_MSCCL, .id_of = w->c.ids};
  return coll_set_write_dag(set, gi, &w->buf, j->m, &w->d, &pl, err);
}

/* from-msccl's metadata: the XML's name and digest (or its whole text). */
static void msccl_meta(coll_meta *m, const mx *x, const chakra_coll_msccl_options *o, const char *text,
                       size_t text_len, const char *hex) {
  const char *base = strrchr(x->path, '/');
  base = base ? base + 1 : x->path;
  memset(m, 0, sizeof *m);
  if (o->compat) {
    coll_meta_str(m, "schema", "1.0.2-chakra.0.0.4");
    coll_meta_str(m, "input_file", text);
    m->a[m->n - 1].len = text_len;
    coll_meta_str(m, "collective", x->coll);
    return;
  }
  m->version = "1.0.0";
  coll_meta_str(m, "producer", o->producer ? o->producer : "chakra-c coll from-msccl");
  coll_meta_str(m, "schema", "1.0.2-chakra.0.0.4");
  coll_meta_str(m, "collective", x->coll);
  coll_meta_str(m, "algorithm", x->name);
  coll_meta_int(m, "npus", x->ngpus);
  coll_meta_int(m, "size", (int64_t)o->size);
  coll_meta_str(m, "input_file", o->embed_xml ? text : base);
  if (o->embed_xml) m->a[m->n - 1].len = text_len;
  coll_meta_str(m, "input_sha256", hex);
}

int msccl_write(mx *x, const mgpu **by_id, const chakra_coll_msccl_options *o, const char *prefix,
                const coll_meta *mp, chakra_error *err) {
  mx_conv c = {.x = x, .o = o};
  int rc = mx_chunk_bytes(x, by_id[0], o, &c.chunk);
  if (rc) return rc;
  coll_set *set;
  chakra_workload_options wo = {.progress = o->progress, .progress_ctx = o->progress_ctx};
  rc = coll_set_open(&set, prefix, (uint32_t)x->ngpus, &wo, err);
  if (rc) return rc;
  unsigned nt = coll_set_threads(o->threads);
  mjob j = {by_id, mp, o, calloc(nt, sizeof *j.w)};
  if (!j.w) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (unsigned t = 0; j.w && t < nt; t++) {
    mscratch *w = &j.w[t];
    w->x = *x; /* shared, read-only program; own error and failure mark */
    w->x.err = &w->err;
    w->c = c;
    w->c.x = &w->x;
    coll_dag_init(&w->d);
  }
  if (!rc) rc = coll_set_fill(set, o->threads, msccl_rank, &j, err);
  for (unsigned t = 0; j.w && t < nt; t++) {
    coll_dag_free(&j.w[t].d);
    enc_buf_free(&j.w[t].buf);
    free(j.w[t].c.deps);
    free(j.w[t].c.work);
    free(j.w[t].c.ids);
  }
  free(j.w);
  if (rc) {
    coll_set_abort(set);
    return rc;
  }
  return coll_set_commit(set, err);
}

int chakra_coll_from_msccl(const char *xml_path, const char *prefix, const chakra_coll_msccl_options *o,
                           chakra_error *err) {
  mx x = {0};
  x.path = xml_path;
  x.err = err;
  uint8_t *data = NULL;
  size_t len = 0;
  int mapped = 0;
  char hex[65];
  int rc = o->size > CHAKRA_COLL_MAX_SIZE
               ? chakra_error_set(err, CHAKRA_EINVAL, "size %llu: at most %llu (comm_size is a 64-bit signed field)",
                                  (unsigned long long)o->size, (unsigned long long)CHAKRA_COLL_MAX_SIZE)
               : mx_map_file(&x, &data, &len, &mapped);
  if (!rc) rc = mx_parse(&x, data, len, o->threads, hex);
  const mgpu **by_id = NULL;
  if (!rc) {
    by_id = calloc((size_t)x.ngpus, sizeof *by_id);
    rc = by_id ? msccl_validate(&x, by_id) : chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  if (!rc && o->compat) rc = mx_compat_supported(&x);
  /* the text may hold NULs: its length is passed along */
  coll_meta m;
  if (!rc) msccl_meta(&m, &x, o, len ? (const char *)data : "", len, hex);
  if (!rc) rc = msccl_write(&x, by_id, o, prefix, &m, err);
  free(by_id);
  if (mapped) munmap(data, len);
  else free(data);
  msccl_free(&x);
  return rc;
}
