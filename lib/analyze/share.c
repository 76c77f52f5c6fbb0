/* share.c - chakra share: the rank classes of any trace set, written in the
 * shared form with every binding proven; see chakra_set_share() in
 * include/chakra/set.h.
 *
 * Three passes. (1) Each rank's canonical encoding: its messages with
 * every group name and peer the binder rewrites (lib/trace/bind.h)
 * replaced by its role, the index of its first appearance; its roles'
 * values are kept and the encoding is hashed. (2) Ranks with equal hashes
 * and role counts form a class, in order of first appearance, the first
 * rank its representative. (3) Each other rank is proven: the
 * representative's messages bound to the rank's roles must be the rank's
 * own, byte for byte; a rank that differs (a hash collision, an encoding
 * the binder would not reproduce) becomes a class of its own. Passes 1
 * and 3 run on threads, each rank on its own. */
#include "chakra/set.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../trace/bind.h"
#include "../trace/readerint.h"
#include "../trace/setint.h"
#include "../trace/setwrite.h"
#include "../util/outfile.h"
#include "../util/tasks.h"
#include "chakra/build.h"
#include "chakra/node.h"
#include "../util/nameidx.h"
#include "../util/vec.h"
#include "keyhash.h"

/* ---- roles: values by order of first appearance, found by hashing ---- */

typedef struct roles {
  char **groups;
  uint32_t ng, capg;
  int32_t *peers;
  uint32_t np, capp;
  nameidx gix; /* group name -> role */
  hmap pix;    /* peer -> role */
} roles;

static void roles_clear(roles *r) {
  for (uint32_t i = 0; i < r->ng; i++) free(r->groups[i]);
  r->ng = r->np = 0;
  nameidx_clear(&r->gix);
  hmap_clear(&r->pix);
}

static void roles_free(roles *r) {
  roles_clear(r);
  free(r->groups), free(r->peers);
  nameidx_free(&r->gix);
  hmap_free(&r->pix);
  memset(r, 0, sizeof *r);
}

static nameidx_recs group_recs(const roles *r) { return (nameidx_recs){r->groups, sizeof *r->groups, 0}; }

/* The role of a group name (added when add and new); -1 when absent, -2
 * when out of memory. */
static long group_role(roles *r, const char *name, int add) {
  long i = nameidx_find(&r->gix, group_recs(r), name);
  if (i >= 0 || !add) return i;
  char **g = VEC_PUSH(r->groups, r->ng, r->capg);
  if (!g) return -2;
  if ((*g = strdup(name)) && !nameidx_sync(&r->gix, group_recs(r), r->ng)) return r->ng - 1;
  free(r->groups[--r->ng]);
  return -2;
}

static long peer_role(roles *r, int32_t p, int add) {
  uint32_t i = hmap_get_u64(&r->pix, (uint32_t)p);
  if (i != HMAP_NONE || !add) return i == HMAP_NONE ? -1 : (long)i;
  int32_t *q = VEC_PUSH(r->peers, r->np, r->capp);
  if (!q) return -2;
  *q = p;
  int oom = 0;
  hmap_put_u64(&r->pix, (uint32_t)p, r->np - 1, &oom);
  return oom ? (r->np--, -2) : (long)r->np - 1;
}

/* ---- the passes ---- */

typedef struct rank_info {
  uint64_t hash;
  roles own;     /* the rank's values, its roles' order */
  uint32_t cls;
  int proven;    /* 0 not yet, 1 yes, -1 it differs */
} rank_info;

typedef struct worker {
  roles canon;    /* pass 1's roles, reset per rank */
  char token[24];
  int oom;
  enc_buf bound, mine, theirs;
} worker;

typedef struct share {
  const chakra_set *s;
  uint32_t n;
  rank_info *ranks;
  worker *w;
  uint32_t *rep;  /* per class */
  uint32_t ncls;
  pthread_mutex_t mu;
  chakra_error err;
  int64_t err_rank;
  chakra_workload_options prog; /* the set's progress callback; reads counted under mu */
  uint64_t reads;
} share;

static void job_failed(share *sh, uint32_t rank, const chakra_error *e) {
  pthread_mutex_lock(&sh->mu);
  if (sh->err_rank < 0 || rank < sh->err_rank) sh->err = *e, sh->err_rank = rank;
  pthread_mutex_unlock(&sh->mu);
}

/* One more rank file read (each is read twice: canonical, then prove). */
static int rank_read(share *sh, uint32_t rank) {
  if (!sh->prog.progress) return 0;
  pthread_mutex_lock(&sh->mu);
  int stop = sh->prog.progress(sh->prog.progress_ctx, "read", ++sh->reads, 2 * (uint64_t)sh->n);
  pthread_mutex_unlock(&sh->mu);
  if (!stop) return 0;
  chakra_error e;
  chakra_error_set(&e, CHAKRA_ECANCELED, "stopped by the progress callback");
  job_failed(sh, rank, &e);
  return CHAKRA_ECANCELED;
}

static const char *canon_group(const void *ctx, const char *name) {
  worker *w = (worker *)ctx;
  /* "" and "0" name the world (every rank's, the same everywhere): not a
   * role, so it stays as written, and the manifest, whose group roles are
   * names, never holds it */
  if (chakra_pg_is_world(name)) return name;
  long r = group_role(&w->canon, name, 1);
  if (r < 0) return w->oom = 1, name;
  snprintf(w->token, sizeof w->token, "%ld", r);
  return w->token;
}

static int32_t canon_peer(const void *ctx, int32_t p) {
  worker *w = (worker *)ctx;
  long r = peer_role(&w->canon, p, 1);
  if (r < 0) return w->oom = 1, p;
  return (int32_t)r;
}

static uint64_t hash_more(uint64_t h, const uint8_t *d, size_t n) { return hmap_mix(h ^ keyhash_fast(d, n, n)); }

/* Pass 1: rank's canonical hash and its roles. */
static int canonical(void *ctx, unsigned wi, size_t job) {
  share *sh = ctx;
  worker *w = &sh->w[wi];
  rank_info *ri = &sh->ranks[job];
  chakra_error e = {0};
  chakra_reader *r;
  int rc = chakra_set_reader(sh->s, (uint32_t)job, NULL, &r, &e);
  if (rc) return job_failed(sh, (uint32_t)job, &e), rc;
  roles_clear(&w->canon);
  w->oom = 0;
  bind_map map = {canon_group, canon_peer, w};
  size_t len;
  const uint8_t *d = reader_metadata_bytes(r, &len), *res;
  uint64_t h = hash_more(0, d, len);
  size_t rlen;
  while ((rc = chakra_reader_next_raw(r, &d, &len, &e)) == 1) {
    if ((rc = bind_node(d, len, &map, &w->bound, &res, &rlen, &e)) != 0) break;
    h = hash_more(h, res, rlen);
  }
  chakra_reader_close(r);
  if (!rc && w->oom) rc = chakra_error_set(&e, CHAKRA_ENOMEM, "out of memory");
  if (rc) return job_failed(sh, (uint32_t)job, &e), rc;
  ri->hash = hmap_mix(h ^ ((uint64_t)w->canon.ng << 32 | w->canon.np));
  /* the roles' values, kept without their tables */
  ri->own.groups = malloc((w->canon.ng ? w->canon.ng : 1) * sizeof *ri->own.groups);
  ri->own.peers = malloc((w->canon.np ? w->canon.np : 1) * sizeof *ri->own.peers);
  if (!ri->own.groups || !ri->own.peers) {
    chakra_error_set(&e, CHAKRA_ENOMEM, "out of memory");
    job_failed(sh, (uint32_t)job, &e);
    return CHAKRA_ENOMEM;
  }
  for (uint32_t i = 0; i < w->canon.ng; i++) ri->own.groups[ri->own.ng++] = w->canon.groups[i], w->canon.groups[i] = NULL;
  w->canon.ng = 0;
  if (w->canon.np) memcpy(ri->own.peers, w->canon.peers, w->canon.np * sizeof *ri->own.peers);
  ri->own.np = w->canon.np;
  ri->own.capg = ri->own.ng, ri->own.capp = ri->own.np;
  return rank_read(sh, (uint32_t)job);
}

/* Pass 2: classes by hash and role counts, in order of first appearance. */
typedef struct class_probe {
  const share *sh;
  const rank_info *ri;
} class_probe;

static int same_class(const void *ctx, uint32_t cls) {
  const class_probe *p = ctx;
  const rank_info *o = &p->sh->ranks[p->sh->rep[cls]];
  return o->hash == p->ri->hash && o->own.ng == p->ri->own.ng && o->own.np == p->ri->own.np;
}

static int assign_classes(share *sh, chakra_error *err) {
  hmap classes = {0}; /* a rank's hash -> its class */
  sh->rep = malloc((size_t)sh->n * sizeof *sh->rep);
  int rc = sh->rep ? 0 : -1;
  for (uint32_t r = 0; !rc && r < sh->n; r++) {
    rank_info *ri = &sh->ranks[r];
    class_probe p = {sh, ri};
    uint32_t cls = hmap_find(&classes, ri->hash, same_class, &p);
    if (cls == HMAP_NONE) {
      cls = sh->ncls++;
      sh->rep[cls] = r, ri->proven = 1;
      rc = hmap_add(&classes, ri->hash, cls);
    }
    ri->cls = cls;
  }
  hmap_free(&classes);
  return rc ? chakra_error_set(err, CHAKRA_ENOMEM, "out of memory") : 0;
}

typedef struct proof {
  const rank_info *rep, *me;
  roles *index; /* the representative's roles, found by value */
} proof;

static const char *proof_group(const void *ctx, const char *name) {
  const proof *p = ctx;
  long r = group_role(p->index, name, 0);
  return r >= 0 ? p->me->own.groups[r] : name;
}
static int32_t proof_peer(const void *ctx, int32_t v) {
  const proof *p = ctx;
  long r = peer_role(p->index, v, 0);
  return r >= 0 ? p->me->own.peers[r] : v;
}

/* The representative's roles with lookup tables (built once per class). */
static int index_roles(const rank_info *rep, roles *ix) {
  memset(ix, 0, sizeof *ix);
  for (uint32_t i = 0; i < rep->own.ng; i++)
    if (group_role(ix, rep->own.groups[i], 1) < 0) return -1;
  for (uint32_t i = 0; i < rep->own.np; i++)
    if (peer_role(ix, rep->own.peers[i], 1) < 0) return -1;
  return 0;
}

/* Whether rank `me`'s file is its representative's (tmpl, in memory)
 * bound to it, byte for byte. */
static int prove(share *sh, worker *w, uint32_t me, const enc_buf *tmpl, roles *ix, chakra_error *e) {
  const rank_info *ri = &sh->ranks[me];
  proof p = {&sh->ranks[sh->rep[ri->cls]], ri, ix};
  bind_map map = {proof_group, proof_peer, &p};
  int rc = setwrite_rank_bytes(sh->s, me, &w->mine, e);
  w->theirs.n = 0;
  if (!rc) rc = bind_file(tmpl->p, tmpl->n, &map, &w->bound, &w->theirs, e);
  return rc ? rc : w->mine.n == w->theirs.n && memcmp(w->mine.p, w->theirs.p, w->mine.n) == 0;
}

typedef struct prove_job {
  share *sh;
  roles *ix;     /* per class */
  enc_buf *tmpl; /* per class: its representative's file */
} prove_job;

static int prove_rank(void *ctx, unsigned wi, size_t job) {
  prove_job *pj = ctx;
  share *sh = pj->sh;
  rank_info *ri = &sh->ranks[job];
  if (ri->proven) return rank_read(sh, (uint32_t)job);
  chakra_error e = {0};
  int rc = prove(sh, &sh->w[wi], (uint32_t)job, &pj->tmpl[ri->cls], &pj->ix[ri->cls], &e);
  if (rc < 0) return job_failed(sh, (uint32_t)job, &e), rc;
  ri->proven = rc ? 1 : -1;
  return rank_read(sh, (uint32_t)job);
}

/* Pass 3, then the ranks that differ as classes of their own. */
static int prove_all(share *sh, unsigned threads, chakra_error *err) {
  uint32_t hashed = sh->ncls;
  prove_job pj = {sh, calloc(hashed, sizeof(roles)), calloc(hashed, sizeof(enc_buf))};
  int rc = pj.ix && pj.tmpl ? 0 : chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (uint32_t c = 0; !rc && c < hashed; c++)
    if (index_roles(&sh->ranks[sh->rep[c]], &pj.ix[c])) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (uint32_t c = 0; !rc && c < hashed; c++) rc = setwrite_rank_bytes(sh->s, sh->rep[c], &pj.tmpl[c], err);
  if (!rc && (rc = tasks_run_workers(sh->n, threads, prove_rank, &pj, TASKS_STOP_ON_ERROR)) != 0) *err = sh->err;
  for (uint32_t c = 0; pj.ix && c < hashed; c++) roles_free(&pj.ix[c]);
  for (uint32_t c = 0; pj.tmpl && c < hashed; c++) enc_buf_free(&pj.tmpl[c]);
  free(pj.ix), free(pj.tmpl);
  for (uint32_t r = 0; !rc && r < sh->n; r++)
    if (sh->ranks[r].proven < 0) sh->ranks[r].cls = sh->ncls, sh->rep[sh->ncls++] = r;
  return rc;
}

/* ---- writing ---- */

static const char *base_name(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

static int build_manifest(const share *sh, const char *out, const char *groups_file, chakra_manifest **m,
                          chakra_error *err) {
  int rc = chakra_manifest_new(m, CHAKRA_MANIFEST_TABLE, sh->n, err);
  for (uint32_t c = 0; !rc && c < sh->ncls; c++) {
    const rank_info *rep = &sh->ranks[sh->rep[c]];
    char *t = chakra_class_path_dup(out, c);
    rc = t ? chakra_manifest_add_class(*m, base_name(t), sh->rep[c], err) : chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    free(t);
    if (!rc)
      rc = chakra_manifest_set_roles(*m, c, (const char *const *)rep->own.groups, rep->own.ng, rep->own.peers,
                                     rep->own.np, err);
  }
  for (uint32_t r = 0; !rc && r < sh->n; r++)
    rc = chakra_manifest_set_rank(*m, r, sh->ranks[r].cls, (const char *const *)sh->ranks[r].own.groups,
                                  sh->ranks[r].own.peers, err);
  if (!rc && groups_file) rc = chakra_manifest_set_groups_file(*m, base_name(groups_file), err);
  return rc;
}

typedef struct tmpl_job {
  const share *sh;
  enc_buf *scratch;
} tmpl_job;

static int write_template(void *ctx, unsigned wi, uint32_t cls, chakra_workload_writer *w, chakra_error *err) {
  tmpl_job *j = ctx;
  enc_buf *b = &j->scratch[wi];
  int rc = setwrite_rank_bytes(j->sh->s, j->sh->rep[cls], b, err);
  return rc ? rc : chakra_workload_writer_put_framed(w, cls, b->p, b->n, err);
}

static int write_templates(const share *sh, const char *out, unsigned threads, chakra_error *err) {
  char **paths = calloc(sh->ncls, sizeof *paths);
  tmpl_job j = {sh, calloc(CHAKRA_WORKLOAD_AUTO_THREADS + threads, sizeof(enc_buf))};
  int rc = paths && j.scratch ? 0 : chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (uint32_t c = 0; !rc && c < sh->ncls; c++)
    if (!(paths[c] = chakra_class_path_dup(out, c))) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  chakra_workload_writer *w = NULL;
  chakra_workload_options wo = set_writer_options(sh->s);
  if (!rc) rc = chakra_workload_writer_open_paths(&w, (const char *const *)paths, sh->ncls, &wo, err);
  if (!rc) rc = chakra_workload_writer_put_ranks(w, threads, write_template, &j, err);
  if (!rc) rc = chakra_workload_writer_commit(w, err);
  else chakra_workload_writer_discard(w);
  for (uint32_t c = 0; paths && c < sh->ncls; c++) free(paths[c]);
  for (unsigned t = 0; j.scratch && t < CHAKRA_WORKLOAD_AUTO_THREADS + threads; t++) enc_buf_free(&j.scratch[t]);
  free(paths), free(j.scratch);
  return rc;
}

static int write_shared(const share *sh, const char *out, unsigned threads, chakra_error *err) {
  size_t plen = strlen(out) + 6;
  char *json = malloc(plen), *man = chakra_manifest_path_dup(out);
  if (!json || !man) return free(json), free(man), chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  snprintf(json, plen, "%s.json", out);
  int groups = setwrite_has_groups(sh->s);
  chakra_manifest *m = NULL;
  int rc = build_manifest(sh, out, groups ? json : NULL, &m, err);
  /* templates, manifest and groups: in place together or not at all */
  if (!rc) rc = outfile_group_begin(err);
  if (!rc) {
    if (groups) rc = setwrite_groups(sh->s, json, err);
    if (!rc) rc = write_templates(sh, out, threads, err);
    if (!rc) rc = chakra_manifest_write(m, man, err);
    int end = outfile_group_end(!rc, rc ? NULL : err);
    if (!rc) rc = end;
  }
  chakra_manifest_free(m);
  free(json), free(man);
  return rc;
}

int chakra_set_share(const chakra_set *s, const char *out, unsigned threads, uint32_t *classes, chakra_error *err) {
  unsigned workers = threads ? threads : tasks_cpus();
  share sh = {.s = s, .n = chakra_set_ranks(s), .err_rank = -1, .prog = set_writer_options(s)};
  pthread_mutex_init(&sh.mu, NULL);
  sh.ranks = calloc(sh.n, sizeof *sh.ranks);
  sh.w = calloc(workers, sizeof *sh.w);
  int rc = sh.ranks && sh.w ? 0 : chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  if (!rc && (rc = tasks_run_workers(sh.n, workers, canonical, &sh, TASKS_STOP_ON_ERROR)) != 0) *err = sh.err;
  if (!rc) rc = assign_classes(&sh, err);
  if (!rc) rc = prove_all(&sh, workers, err);
  if (!rc) rc = write_shared(&sh, out, threads, err);
  if (!rc && classes) *classes = sh.ncls;
  for (unsigned t = 0; sh.w && t < workers; t++) {
    roles_free(&sh.w[t].canon);
    enc_buf_free(&sh.w[t].bound), enc_buf_free(&sh.w[t].mine), enc_buf_free(&sh.w[t].theirs);
  }
  for (uint32_t r = 0; sh.ranks && r < sh.n; r++) {
    for (uint32_t i = 0; i < sh.ranks[r].own.ng; i++) free(sh.ranks[r].own.groups[i]);
    free(sh.ranks[r].own.groups), free(sh.ranks[r].own.peers);
  }
  free(sh.ranks), free(sh.w), free(sh.rep);
  pthread_mutex_destroy(&sh.mu);
  return rc;
}
