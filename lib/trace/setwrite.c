/* setwrite.c - a trace set written out; see setwrite.h. */
#include "setwrite.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/jsonw.h"
#include "../util/outfile.h"
#include "chakra/build.h"
#include "readerint.h"
#include "setfile.h"
#include "setint.h"

static int put_framed(enc_buf *b, const uint8_t *d, size_t n) {
  enc_append_framed(b, d, n);
  return b->oom ? -1 : 0;
}

int setwrite_rank_bytes(const chakra_set *s, uint32_t rank, enc_buf *out, chakra_error *err) {
  chakra_reader *r;
  out->n = 0;
  int rc = chakra_set_reader(s, rank, NULL, &r, err);
  if (rc) return rc;
  size_t len;
  const uint8_t *data = reader_metadata_bytes(r, &len);
  rc = put_framed(out, data, len) ? CHAKRA_ENOMEM : 1;
  while (rc == 1 && (rc = chakra_reader_next_raw(r, &data, &len, err)) == 1)
    if (put_framed(out, data, len)) rc = CHAKRA_ENOMEM;
  chakra_reader_close(r);
  if (rc == CHAKRA_ENOMEM) chakra_error_set(err, rc, "out of memory");
  return rc < 0 ? rc : 0;
}

int setwrite_has_groups(const chakra_set *s) { return chakra_set_groups_origin(s) != CHAKRA_GROUPS_NONE; }

/* One group of a comm-group file, "NAME": [a, b], after the first ", ". */
typedef struct group_out {
  jsonw w;
  int first;
} group_out;

static int put_group(void *ctx, const char *name, const uint32_t *members, uint32_t n) {
  group_out *g = ctx;
  if (!g->first) jsonw_lit(&g->w, ", ");
  g->first = 0;
  jsonw_string(&g->w, name, strlen(name));
  jsonw_lit(&g->w, ": [");
  for (uint32_t k = 0; k < n; k++) {
    if (k) jsonw_lit(&g->w, ", ");
    jsonw_u64(&g->w, members[k]);
  }
  jsonw_char(&g->w, ']');
  return g->w.failed ? CHAKRA_EIO : 0;
}

/* The groups as the set has them, in their order: a grid's by its rules
 * (streamed, never all held), others as read (a file, a source's). */
static int write_groups(const chakra_set *s, const chakra_manifest *grid, outfile *f, chakra_error *err) {
  int rc = grid ? 0 : chakra_set_load_groups(s, err);
  if (rc) return rc;
  group_out g = {.first = 1};
  if (jsonw_init(&g.w, f)) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  jsonw_char(&g.w, '{');
  if (grid) {
    rc = setfile_each_grid_group(grid, put_group, &g);
  } else {
    for (size_t i = 0; !rc && i < chakra_set_group_count(s); i++) {
      uint32_t n;
      const uint32_t *m = chakra_set_group_members(s, i, &n);
      rc = put_group(&g, chakra_set_group_name(s, i), m, n);
    }
  }
  jsonw_char(&g.w, '}');
  int flushed = jsonw_flush(&g.w);
  if (flushed) *err = g.w.err;
  else if (rc == CHAKRA_ENOMEM) chakra_error_set(err, rc, "out of memory");
  jsonw_free(&g.w);
  return flushed ? flushed : rc;
}

/* A groups file copied as it is: its bytes are the set's groups (what it
 * says is checked where the set is read, validate included). */
static int copy_groups(const char *from, outfile *f, chakra_error *err) {
  FILE *in = fopen(from, "rb");
  if (!in) return chakra_error_set(err, CHAKRA_EIO, "%s: cannot open: %s", from, strerror(errno));
  char buf[1 << 16];
  int rc = 0;
  for (size_t k; !rc && (k = fread(buf, 1, sizeof buf, in)) > 0;) rc = outfile_write(f, buf, k, err);
  if (!rc && ferror(in)) rc = chakra_error_set(err, CHAKRA_EIO, "%s: read error", from);
  fclose(in);
  return rc;
}

int setwrite_groups(const chakra_set *s, const char *path, chakra_error *err) {
  outfile *f;
  int rc = outfile_open(&f, path, 0, err);
  if (rc) return rc;
  const chakra_manifest *m = chakra_set_manifest(s);
  if (chakra_set_groups_path(s))
    rc = copy_groups(chakra_set_groups_path(s), f, err);
  else
    rc = write_groups(s, m && chakra_set_groups_origin(s) == CHAKRA_GROUPS_MANIFEST ? m : NULL, f, err);
  if (rc) {
    outfile_discard(f);
    return rc;
  }
  return outfile_commit(f, err);
}

/* ---- unshare ---- */

/* A rank's binding through the set's (chakra_set_bind_*). */
typedef struct rank_map {
  const chakra_set *s;
  uint32_t rank;
} rank_map;

static const char *map_group(const void *ctx, const char *name) {
  const rank_map *r = ctx;
  return chakra_set_bind_group(r->s, r->rank, name);
}
static int32_t map_peer(const void *ctx, int32_t p) {
  const rank_map *r = ctx;
  return chakra_set_bind_peer(r->s, r->rank, p);
}

typedef struct unshare_job {
  const chakra_set *s;
  enc_buf *out, *scratch; /* one each per worker */
  enc_buf *tmpl;          /* per class, its bytes, when ranks share classes; else NULL */
} unshare_job;

/* A rank of a shared class is bound from its template's bytes in memory:
 * each template is read once, not once per rank. */
static int write_rank(void *ctx, unsigned worker, uint32_t rank, chakra_workload_writer *w, chakra_error *err) {
  unshare_job *j = ctx;
  enc_buf *b = &j->out[worker];
  int rc;
  if (j->tmpl) {
    const enc_buf *t = &j->tmpl[chakra_set_class_of(j->s, rank)];
    rank_map rm = {j->s, rank};
    bind_map m = {map_group, map_peer, &rm};
    chakra_error e = {0};
    b->n = 0;
    if ((rc = bind_file(t->p, t->n, &m, &j->scratch[worker], b, &e)) != 0)
      return chakra_error_set(err, rc, "%s: %s", chakra_set_rank_name(j->s, rank), e.msg);
  } else if ((rc = setwrite_rank_bytes(j->s, rank, b, err)) != 0) {
    return rc;
  }
  return chakra_workload_writer_put_framed(w, rank, b->p, b->n, err);
}

static void free_bufs(enc_buf *v, size_t n) {
  for (size_t i = 0; v && i < n; i++) enc_buf_free(&v[i]);
  free(v);
}

int chakra_set_unshare(const chakra_set *s, const char *out, unsigned threads, chakra_error *err) {
  uint32_t n = chakra_set_ranks(s), classes = chakra_set_classes(s);
  unsigned workers = threads > CHAKRA_WORKLOAD_AUTO_THREADS ? threads : CHAKRA_WORKLOAD_AUTO_THREADS;
  size_t plen = strlen(out) + 6;
  char *json = malloc(plen);
  unshare_job j = {s, calloc(workers, sizeof(enc_buf)), calloc(workers, sizeof(enc_buf)),
                   classes < n ? calloc(classes, sizeof(enc_buf)) : NULL};
  int rc = json && j.out && j.scratch && (j.tmpl || classes >= n) ? 0 : chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (uint32_t c = 0; !rc && j.tmpl && c < classes; c++)
    rc = setwrite_rank_bytes(s, chakra_set_class_rep(s, c), &j.tmpl[c], err);
  if (!rc) snprintf(json, plen, "%s.json", out);
  chakra_workload_writer *w = NULL;
  /* the ranks and the groups file: in place together or not at all */
  if (!rc) rc = outfile_group_begin(err);
  if (!rc) {
    if (setwrite_has_groups(s)) rc = setwrite_groups(s, json, err);
    chakra_workload_options wo = set_writer_options(s);
    if (!rc) rc = chakra_workload_writer_open(&w, out, n, &wo, err);
    if (!rc) rc = chakra_workload_writer_put_ranks(w, threads, write_rank, &j, err);
    if (!rc) rc = chakra_workload_writer_commit(w, err);
    else chakra_workload_writer_discard(w);
    int end = outfile_group_end(!rc, rc ? NULL : err);
    if (!rc) rc = end;
  }
  free_bufs(j.out, workers), free_bufs(j.scratch, workers), free_bufs(j.tmpl, j.tmpl ? classes : 0);
  free(json);
  return rc;
}
