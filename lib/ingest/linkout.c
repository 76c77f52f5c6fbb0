/* linkout.c - the linked host ET written by chakra link; see linkout.h.
 *
 * Two passes: the order and the new ids (host nodes by id, each followed
 * by its device ops by start; parents missing from the trace numbered
 * after everything, in order of first use), then the JSON. */
#include "linkout.h"

#include <stdlib.h>
#include <string.h>

#include "../util/jsonw.h"
#include "../util/outfile.h"
#include "../util/vec.h"
#include "../util/hmap.h"

/* The output order and its ids. */
typedef struct order {
  size_t n;           /* host nodes */
  store_kv *a;        /* (old id, host node) by old id: the output order */
  uint64_t *new_id;   /* host node -> new id */
  uint32_t *gfirst;   /* host node -> its first device op in gpu[] (sorted by host), n + 1 entries */
  uint64_t *gpu_new;  /* gpu[] index -> new id */
  uint32_t *gpu_pos;  /* gpu[] index before the sort by host -> after */
  store_kv *sy;       /* sync deps (host node, gpu[] index) by host node */
  uint64_t *miss;     /* parents that are not in the trace, in order of first use */
  size_t nmiss, capmiss;
  hmap miss_at;       /* parent -> its index in miss */
} order;

static void order_free(order *o) {
  free(o->a), free(o->new_id), free(o->gfirst), free(o->gpu_new), free(o->gpu_pos), free(o->sy), free(o->miss);
  hmap_free(&o->miss_at);
}

/* Host nodes by id; a repeated id is an error. */
static int sort_hosts(linker *L, order *o) {
  const hostet *h = L->h;
  o->n = h->n;
  o->a = malloc((o->n ? o->n : 1) * sizeof *o->a);
  if (!o->a) return link_oom(L);
  for (size_t i = 0; i < o->n; i++) o->a[i].k = h->nodes[i].id, o->a[i].v = (uint32_t)i;
  if (store_sort_kv(o->a, o->n)) return link_oom(L);
  for (size_t q = 1; q < o->n; q++)
    if (o->a[q].k == o->a[q - 1].k) {
      uint64_t o1 = h->nodes[o->a[q - 1].v].offset, o2 = h->nodes[o->a[q].v].offset;
      return chakra_error_set(L->err, CHAKRA_EFORMAT, "%s: duplicate node id %llu (bytes %llu and %llu)", h->path,
                              (unsigned long long)o->a[q].k, (unsigned long long)(o1 < o2 ? o1 : o2),
                              (unsigned long long)(o1 < o2 ? o2 : o1));
    }
  return 0;
}

static int cmp_gpu_host(const void *a, const void *b, void *ctx) {
  const kineto *k = ctx;
  const link_gpuop *x = a, *y = b;
  if (x->host != y->host) return x->host < y->host ? -1 : 1;
  const kt_event *ex = &k->ev[x->ev], *ey = &k->ev[y->ev];
  if (ex->ts != ey->ts) return ex->ts < ey->ts ? -1 : 1;
  return ex->index < ey->index ? -1 : ex->index > ey->index;
}

/* Device ops sorted by host node and start (sync pairs keep pointing at
 * the right op through gpu_pos), then new ids in output order. */
static int renumber(linker *L, order *o) {
  size_t n = o->n;
  o->new_id = malloc((n ? n : 1) * sizeof *o->new_id);
  o->gfirst = calloc(n + 1, sizeof *o->gfirst);
  o->gpu_new = malloc((L->ngpu ? L->ngpu : 1) * sizeof *o->gpu_new);
  o->gpu_pos = malloc((L->ngpu ? L->ngpu : 1) * sizeof *o->gpu_pos);
  if (!o->new_id || !o->gfirst || !o->gpu_new || !o->gpu_pos) return link_oom(L);
  for (size_t i = 0; i < L->ngpu; i++) L->gpu[i].pre_sort = (uint32_t)i;
  qsort_r(L->gpu, L->ngpu, sizeof *L->gpu, cmp_gpu_host, (void *)L->k);
  for (size_t i = 0; i < L->ngpu; i++) o->gpu_pos[L->gpu[i].pre_sort] = (uint32_t)i;
  for (size_t i = 0; i < L->ngpu; i++) o->gfirst[L->gpu[i].host + 1]++;
  for (size_t i = 0; i < n; i++) o->gfirst[i + 1] += o->gfirst[i];
  uint64_t next = 0;
  for (size_t q = 0; q < n; q++) {
    uint32_t i = o->a[q].v;
    o->new_id[i] = next++;
    for (uint32_t g = o->gfirst[i]; g < o->gfirst[i + 1]; g++) o->gpu_new[g] = next++;
  }
  return 0;
}

/* The sync deps by host node. */
static int sync_by_host(linker *L, order *o) {
  if (!L->nsync) return 0;
  o->sy = malloc(L->nsync * sizeof *o->sy);
  if (!o->sy) return link_oom(L);
  for (size_t i = 0; i < L->nsync; i++) o->sy[i].k = L->sync[i].host, o->sy[i].v = o->gpu_pos[L->sync[i].gpu];
  return store_sort_kv(o->sy, L->nsync) ? link_oom(L) : 0;
}

/* The new id of x's parent: its node's, or, as the reference does, a fresh
 * one after every node and device op for a parent not in the trace. */
static int parent_id(linker *L, order *o, const ht_node *x, uint64_t *id) {
  uint32_t p = LINK_NONE;
  if (x->flags & HT_PARENT) store_kv_find(o->a, o->n, x->parent, &p);
  if (p != LINK_NONE) {
    *id = o->new_id[p];
    return 0;
  }
  int oom = 0;
  size_t j = hmap_put_u64(&o->miss_at, x->parent, (uint32_t)o->nmiss, &oom);
  if (j == HMAP_NONE) {
    uint64_t *t = oom ? NULL : VEC_PUSH(o->miss, o->nmiss, o->capmiss);
    if (!t) return link_oom(L);
    *t = x->parent;
    j = o->nmiss - 1;
  }
  *id = (uint64_t)o->n + L->ngpu + j;
  L->rep->missing_parents++;
  return 0;
}

static void put_str(jsonw *w, const char *key, const char *s) {
  jsonw_lit(w, key);
  jsonw_string(w, s, strlen(s));
}

static const char *schema_out(const hostet *h) {
  /* the 1.0.1 layout is rewritten in the nested one */
  return strcmp(h->schema, "1.0.1") == 0 ? "1.0.2-chakra.0.0.4" : h->schema;
}

static void put_head(jsonw *w, const hostet *h) {
  const char *sc = schema_out(h);
  put_str(w, "{\"schema\":", sc);
  if (strcmp(sc, h->schema) != 0) put_str(w, ",\"source_schema\":", h->schema);
  if (h->has_pid) jsonw_lit(w, ",\"pid\":"), jsonw_i64(w, h->pid);
  if (h->has_time) put_str(w, ",\"time\":", h->time);
  if (h->has_start_ts) jsonw_lit(w, ",\"start_ts\":"), jsonw_i64(w, h->start_ts);
  if (h->top_extra_len) jsonw_char(w, ','), jsonw_raw(w, h->top_extra, h->top_extra_len);
  jsonw_lit(w, ",\"nodes\":[\n");
}

static void put_number(jsonw *w, const char *key, double v) {
  jsonw_lit(w, key);
  jsonw_number(w, v);
}

/* Host node i: its own fields (the blob), then what linking found. */
static int put_host(linker *L, order *o, jsonw *w, uint32_t i) {
  const ht_node *x = &L->h->nodes[i];
  uint64_t pid = 0;
  int rc = parent_id(L, o, x, &pid);
  if (rc) return rc;
  jsonw_lit(w, "{\"id\":");
  jsonw_u64(w, o->new_id[i]);
  put_str(w, ",\"name\":", strtab_str(&L->h->strings, x->name));
  jsonw_lit(w, ",\"ctrl_deps\":");
  jsonw_u64(w, pid);
  jsonw_char(w, ',');
  jsonw_raw(w, (const char *)x->blob, x->blob_len);
  uint32_t c = L->k_of_host[i];
  if (c != LINK_NONE) {
    const kt_event *e = link_ev(L, c);
    put_number(w, ",\"inclusive_dur\":", e->dur);
    put_number(w, ",\"exclusive_dur\":", L->cpu[c].excl);
    put_number(w, ",\"ts\":", e->ts);
    jsonw_lit(w, ",\"inter_thread_dep\":");
    if (L->itd[i] != LINK_NONE) jsonw_u64(w, o->new_id[L->itd[i]]);
    else jsonw_lit(w, "null");
  }
  size_t sp = store_kv_lower_bound(o->sy, L->nsync, i);
  if (sp < L->nsync && o->sy[sp].k == i) {
    jsonw_lit(w, ",\"sync_dep\":[");
    for (int first = 1; sp < L->nsync && o->sy[sp].k == i; sp++, first = 0) {
      if (!first) jsonw_char(w, ',');
      jsonw_u64(w, o->gpu_new[o->sy[sp].v]);
    }
    jsonw_char(w, ']');
  }
  jsonw_char(w, '}');
  return 0;
}

/* Device op g, launched by host node i: the host node's fields, then its
 * own. */
static void put_device(const linker *L, const order *o, jsonw *w, uint32_t g, uint32_t i) {
  const kineto *k = L->k;
  const ht_node *x = &L->h->nodes[i];
  const kt_event *e = &k->ev[L->gpu[g].ev];
  jsonw_lit(w, ",\n{\"id\":");
  jsonw_u64(w, o->gpu_new[g]);
  put_str(w, ",\"name\":", strtab_str(&k->strings, e->name));
  jsonw_lit(w, ",\"ctrl_deps\":");
  jsonw_u64(w, o->new_id[i]);
  jsonw_char(w, ',');
  jsonw_raw(w, (const char *)x->blob, x->blob_len);
  put_str(w, ",\"cat\":", strtab_str(&k->strings, e->cat));
  jsonw_lit(w, ",\"ph\":\"X\"");
  put_number(w, ",\"inclusive_dur\":", e->dur);
  put_number(w, ",\"exclusive_dur\":", e->dur);
  put_number(w, ",\"ts\":", e->ts);
  jsonw_lit(w, ",\"stream\":");
  jsonw_i64(w, (e->flags & KT_HAS_STREAM) ? e->stream : e->tid);
  jsonw_lit(w, ",\"device\":");
  jsonw_i64(w, (e->flags & KT_HAS_DEVICE) ? e->device : e->pid);
  if (e->pg_name) put_str(w, ",\"pg_name\":", strtab_str(&k->strings, e->pg_name));
  jsonw_char(w, '}');
}

/* The whole document into w; 0, or the first failure (of w too). */
static int put_all(linker *L, order *o, jsonw *w) {
  const hostet *h = L->h;
  put_head(w, h);
  int rc = 0;
  for (size_t q = 0; q < o->n && !rc && !w->failed; q++) {
    uint32_t i = o->a[q].v;
    if (q) jsonw_lit(w, ",\n");
    rc = put_host(L, o, w, i);
    for (uint32_t g = o->gfirst[i]; !rc && g < o->gfirst[i + 1]; g++) put_device(L, o, w, g, i);
  }
  if (rc) return rc;
  jsonw_lit(w, "\n]");
  if (h->has_finish_ts) jsonw_lit(w, ",\"finish_ts\":"), jsonw_i64(w, h->finish_ts);
  jsonw_lit(w, "}\n");
  if (jsonw_flush(w)) {
    if (L->err) *L->err = w->err;
    return w->err.code ? w->err.code : CHAKRA_EIO;
  }
  return 0;
}

/* Opens out_path, writes, and commits it, or leaves nothing. */
static int write_json(linker *L, order *o, const char *out_path) {
  outfile *f;
  int rc = outfile_open(&f, out_path, outfile_name_is_gzip(out_path), L->err);
  if (rc) return rc;
  jsonw w;
  if (jsonw_init(&w, f)) rc = link_oom(L);
  if (!rc) rc = put_all(L, o, &w);
  jsonw_free(&w);
  if (rc) {
    outfile_discard(f);
    return rc;
  }
  return outfile_commit(f, L->err);
}

int link_write(linker *L, const char *out_path) {
  order o = {0};
  int rc = sort_hosts(L, &o);
  if (!rc) rc = renumber(L, &o);
  if (!rc) rc = sync_by_host(L, &o);
  if (!rc) rc = write_json(L, &o, out_path);
  order_free(&o);
  if (!rc && L->rep->missing_parents)
    link_warnf(L, L->h->path, "%llu nodes name a parent id that is not in the trace (given fresh ids)",
               (unsigned long long)L->rep->missing_parents);
  return rc;
}
