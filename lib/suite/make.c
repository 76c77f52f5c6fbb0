/* make.c - `chakra suite make`: each workload written by its generator's
 * library call into the suite folder, each file hashed, the workload's hash
 * held to the version's pin, and the manifest (suite.json) written last, so
 * a folder without one is an unfinished make; and the folder opened again
 * for a run or a check, every file re-hashed against the manifest and the
 * pins. */
#include "make.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "chakra/coll.h"
#include "chakra/gen.h"
#include "chakra/set.h"
#include "chakra/synth.h"
#include "chakra/version.h"
#include "suitesys.h"
#include "../util/commgroups.h"
#include "../util/jsonw.h"
#include "../util/sha256.h"
#include "../util/outfile.h"

char *make_path(const char *dir, const char *name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s/%s", dir, name);
  return p;
}

/* ---- generating ---- */

static int gen_synth(const chakra_suite_workload *w, const char *prefix, unsigned threads, chakra_error *err) {
  chakra_synth_config c;
  chakra_synth_config_default(&c);
  c.model_type = w->model;
  c.phase = (chakra_synth_phase)w->phase;
  c.dp = w->dp, c.tp = w->tp, c.pp = w->pp, c.ep = w->ep, c.sp = 1;
  c.num_stacks = w->layers, c.dmodel = w->dmodel, c.dff = w->dff, c.head = w->head, c.kvhead = w->kvhead;
  c.seq = w->seq, c.dvocal = w->vocab, c.batch = w->batch, c.micro_batch = (int64_t)w->micro_batch;
  if (w->experts) c.experts = w->experts, c.kexperts = w->kexperts;
  c.schedule = CHAKRA_SYNTH_SCHEDULE_1F1B;
  c.rank_order = (chakra_synth_rank_order)w->rank_order;
  c.threads = threads;
  return chakra_synth_write_shared(&c, prefix, NULL, err);
}

static int gen_dlrm(const chakra_suite_workload *w, const char *prefix, unsigned threads, chakra_error *err) {
  chakra_gen_dlrm_config c;
  chakra_gen_dlrm_config_default(&c);
  c.npus = w->ranks, c.batch = w->batch, c.tables = w->tables, c.rows = w->rows, c.emb_dim = w->emb_dim;
  c.threads = threads;
  return chakra_gen_dlrm(&c, prefix, NULL, err);
}

/* Every rank runs the same collective: the shared form, two files
 * whatever the rank count. */
static int gen_micro(const chakra_suite_workload *w, const char *prefix, chakra_error *err) {
  static const int comm[] = {CHAKRA_ALL_REDUCE, CHAKRA_ALL_GATHER, CHAKRA_REDUCE_SCATTER, CHAKRA_ALL_TO_ALL};
  return chakra_gen_microbench_shared(prefix, comm[w->coll], w->ranks, w->size, err);
}

static int gen_coll(const chakra_suite_workload *w, const char *prefix, unsigned threads, chakra_error *err) {
  if (w->gen == CHAKRA_SUITE_COLL_GEN) {
    chakra_coll_gen_options o = {.coll = (chakra_coll_type)w->coll, .algo = (chakra_coll_algo)w->algo,
                                 .ranks = w->ranks, .size = w->size, .chunks = 1, .reduce_bw = 50,
                                 .threads = threads, .producer = "chakra-c coll gen"};
    return chakra_coll_gen(prefix, &o, err);
  }
  chakra_coll_synth_options o = {.coll = (chakra_coll_type)w->coll, .topology = w->topology, .latency_ns = -1,
                                 .size = w->size, .chunks_per_npu = 1, .reduce_bw = 50, .threads = threads};
  chakra_coll_synth_result r;
  return chakra_coll_synth(prefix, &o, &r, err);
}

static int generate(const chakra_suite_workload *w, const char *dir, unsigned threads, chakra_error *err) {
  char *prefix = make_path(dir, w->name);
  if (!prefix) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  int rc;
  switch (w->gen) {
  case CHAKRA_SUITE_SYNTH: rc = gen_synth(w, prefix, threads, err); break;
  case CHAKRA_SUITE_DLRM: rc = gen_dlrm(w, prefix, threads, err); break;
  case CHAKRA_SUITE_MICRO: rc = gen_micro(w, prefix, err); break;
  default: rc = gen_coll(w, prefix, threads, err); break;
  }
  free(prefix);
  if (rc) chakra_error_prefix(err, "workload %s: ", w->name);
  return rc;
}

/* ---- the files of a workload ---- */

typedef struct wfile {
  char *name;
  uint64_t bytes;
  char sha[65];
} wfile;

typedef struct wfiles {
  wfile *v;
  size_t n;
  char sha[65]; /* the workload's: over "HEX  NAME\n" lines in name order */
} wfiles;

static void wfiles_free(wfiles *f) {
  for (size_t i = 0; i < f->n; i++) free(f->v[i].name);
  free(f->v);
  memset(f, 0, sizeof *f);
}

static int is_shared(const chakra_suite_workload *w) {
  return w->gen == CHAKRA_SUITE_SYNTH || w->gen == CHAKRA_SUITE_MICRO;
}

static int add_name(wfiles *f, const char *name, chakra_error *err) {
  wfile *v = realloc(f->v, (f->n + 1) * sizeof *v);
  if (!v) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  f->v = v;
  memset(&v[f->n], 0, sizeof *v);
  if (!(v[f->n].name = strdup(name))) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  f->n++;
  return CHAKRA_OK;
}

/* The names the generator wrote: the manifest and its templates (shared
 * form) or one file per rank, and PREFIX.json when there is one. */
static int list_names(const chakra_suite_workload *w, const char *dir, wfiles *f, chakra_error *err) {
  char name[512];
  int rc = CHAKRA_OK;
  if (is_shared(w)) {
    snprintf(name, sizeof name, "%s.set.json", w->name);
    char *mpath = make_path(dir, name);
    chakra_manifest *m = NULL;
    rc = mpath ? chakra_manifest_read(&m, mpath, err) : chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    free(mpath);
    if (!rc) rc = add_name(f, name, err);
    for (uint32_t k = 0; !rc && k < chakra_manifest_classes(m); k++) {
      snprintf(name, sizeof name, "%s.class%u.et", w->name, k);
      rc = add_name(f, name, err);
    }
    chakra_manifest_free(m);
  } else
    for (uint32_t r = 0; !rc && r < w->ranks; r++) {
      snprintf(name, sizeof name, "%s.%u.et", w->name, r);
      rc = add_name(f, name, err);
    }
  snprintf(name, sizeof name, "%s.json", w->name);
  char *groups = make_path(dir, name);
  struct stat st;
  if (!rc && groups && stat(groups, &st) == 0) rc = add_name(f, name, err);
  free(groups);
  return rc;
}

static int cmp_file(const void *a, const void *b) {
  return strcmp(((const wfile *)a)->name, ((const wfile *)b)->name);
}

/* One file's line of the workload hash: "HEX  NAME\n", as sha256sum. */
static void fold(sha256 *all, const wfile *f) {
  sha256_update(all, f->sha, 64);
  sha256_update(all, "  ", 2);
  sha256_update(all, f->name, strlen(f->name));
  sha256_update(all, "\n", 1);
}

static void dir_problem(chakra_diag_fn diag, void *ctx, const char *file, const char *what, uint64_t *problems) {
  chakra_problem p = chakra_problem_make(CHAKRA_SEV_ERROR, what);
  p.file = file;
  if (diag) diag(ctx, &p);
  ++*problems;
}

/* Hashes f's files in dir and the workload. A file that cannot be hashed
 * fails it (making), or, with problems (checking a folder), is one problem
 * through diag and hashes as zeros, so the checks after it still run. */
static int hash_files(wfiles *f, const char *dir, chakra_diag_fn diag, void *ctx, uint64_t *problems,
                      chakra_error *err) {
  qsort(f->v, f->n, sizeof *f->v, cmp_file);
  sha256 all;
  sha256_init(&all);
  for (size_t i = 0; i < f->n; i++) {
    char *p = make_path(dir, f->v[i].name);
    if (!p) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    struct stat st;
    chakra_error e = {0}, *to = problems ? &e : err;
    int rc = stat(p, &st) ? chakra_error_set(to, CHAKRA_EIO, "%s: missing", p) : chakra_suite_sha256_file(p, f->v[i].sha, to);
    if (rc && problems) {
      dir_problem(diag, ctx, p, "missing or unreadable", problems);
      memset(f->v[i].sha, '0', 64);
    } else if (rc)
      return free(p), rc;
    else
      f->v[i].bytes = (uint64_t)st.st_size;
    free(p);
    fold(&all, &f->v[i]);
  }
  sha256_hex(&all, f->sha);
  return CHAKRA_OK;
}

/* ---- the manifest ---- */

static void put_workload(jsonw *j, const chakra_suite_workload *w, const wfiles *f, int first) {
  char cmd[1024];
  chakra_suite_command(w, cmd, sizeof cmd);
  jsonw_lit(j, first ? "\n  {\"name\": " : ",\n  {\"name\": ");
  jsonw_string(j, w->name, strlen(w->name));
  jsonw_lit(j, ", \"class\": ");
  jsonw_string(j, w->cls, strlen(w->cls));
  jsonw_lit(j, ", \"ranks\": ");
  jsonw_u64(j, w->ranks);
  jsonw_lit(j, is_shared(w) ? ", \"form\": \"shared\", \"sha256\": \"" : ", \"form\": \"ranks\", \"sha256\": \"");
  jsonw_raw(j, f->sha, 64);
  jsonw_lit(j, "\",\n   \"command\": ");
  jsonw_string(j, cmd, strlen(cmd));
  jsonw_lit(j, ",\n   \"files\": [");
  for (size_t i = 0; i < f->n; i++) {
    jsonw_lit(j, i ? ",\n    {\"name\": " : "\n    {\"name\": ");
    jsonw_string(j, f->v[i].name, strlen(f->v[i].name));
    jsonw_lit(j, ", \"bytes\": ");
    jsonw_u64(j, f->v[i].bytes);
    jsonw_lit(j, ", \"sha256\": \"");
    jsonw_raw(j, f->v[i].sha, 64);
    jsonw_lit(j, "\"}");
  }
  jsonw_lit(j, "]}");
}

static int write_manifest(const chakra_suite_version *v, const size_t *which, const wfiles *files, size_t n,
                          const char *dir, chakra_error *err) {
  char *path = make_path(dir, CHAKRA_SUITE_MANIFEST);
  if (!path) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  outfile *out = NULL;
  int rc = outfile_open(&out, path, 0, err);
  free(path);
  if (rc) return rc;
  jsonw j;
  if ((rc = jsonw_init(&j, out))) {
    outfile_discard(out);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  jsonw_lit(&j, "{\"chakra_suite\": 1, \"suite_version\": ");
  jsonw_string(&j, v->name, strlen(v->name));
  jsonw_lit(&j, ", \"tool_version\": \"chakra-c " CHAKRA_VERSION_STRING "\",\n \"workloads\": [");
  for (size_t i = 0; i < n; i++) put_workload(&j, &v->workloads[which[i]], &files[i], i == 0);
  jsonw_lit(&j, "\n]}\n");
  rc = jsonw_flush(&j);
  if (rc) *err = j.err;
  jsonw_free(&j);
  if (rc) outfile_discard(out);
  else rc = outfile_commit(out, err);
  return rc;
}

static int make_dir(const char *dir, chakra_error *err) {
  struct stat st;
  if (stat(dir, &st) == 0) {
    if (!S_ISDIR(st.st_mode)) return chakra_error_set(err, CHAKRA_EINVAL, "%s: not a folder", dir);
    return CHAKRA_OK;
  }
  if (mkdir(dir, 0777)) return chakra_error_set(err, CHAKRA_EIO, "%s: cannot create the folder", dir);
  return CHAKRA_OK;
}

/* The manifest an earlier make left goes before anything is written, so
 * that a make that fails leaves a folder that reads as unfinished. */
static int drop_manifest(const char *dir, chakra_error *err) {
  char *path = make_path(dir, CHAKRA_SUITE_MANIFEST);
  if (!path) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  int rc = unlink(path) == 0 || errno == ENOENT
               ? CHAKRA_OK
               : chakra_error_set(err, CHAKRA_EIO, "%s: cannot remove the earlier make's manifest: %s", path,
                                  strerror(errno));
  free(path);
  return rc;
}

/* Generates and hashes workload w, held to its pin. */
static int make_one(const chakra_suite_workload *w, const char *dir, unsigned threads, wfiles *f, chakra_error *err) {
  int rc = generate(w, dir, threads, err);
  if (!rc) rc = list_names(w, dir, f, err);
  if (!rc) rc = hash_files(f, dir, NULL, NULL, NULL, err);
  if (!rc && (!w->sha256 || strcmp(w->sha256, f->sha) != 0))
    rc = chakra_error_set(err, CHAKRA_EINVAL,
                          "workload %s: its files hash to %s, not to the suite version's %s: the generators no "
                          "longer write this version's bytes",
                          w->name, f->sha, w->sha256 ? w->sha256 : "(none pinned)");
  return rc;
}

int chakra_suite_make(const chakra_suite_version *v, const char *cls, const char *dir, unsigned threads,
                      chakra_progress_fn progress, void *ctx, chakra_error *err) {
  size_t *which = calloc(v->n, sizeof *which), n = 0;
  wfiles *files = calloc(v->n, sizeof *files);
  int rc = which && files ? make_dir(dir, err) : chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (size_t i = 0; !rc && i < v->n; i++)
    if (!cls || strcmp(v->workloads[i].cls, cls) == 0) which[n++] = i;
  if (!rc && n == 0) rc = chakra_error_set(err, CHAKRA_EINVAL, "suite %s has no class \"%s\"", v->name, cls);
  if (!rc) rc = drop_manifest(dir, err);
  for (size_t i = 0; !rc && i < n; i++) {
    rc = make_one(&v->workloads[which[i]], dir, threads, &files[i], err);
    if (!rc && progress && progress(ctx, "make", i + 1, n)) rc = chakra_error_set(err, CHAKRA_ECANCELED, "stopped");
  }
  if (!rc) rc = write_manifest(v, which, files, n, dir, err);
  for (size_t i = 0; files && i < n; i++) wfiles_free(&files[i]);
  free(files);
  free(which);
  return rc;
}

/* ---- opening a suite folder ---- */


static const char *get_str(yajl_val o, const char *key) {
  const char *path[] = {key, NULL};
  yajl_val v = yajl_tree_get(o, path, yajl_t_string);
  return v ? YAJL_GET_STRING(v) : NULL;
}

/* Re-hashes one workload's files against the manifest's entry and the pin. */
static int check_workload(const chakra_suite_workload *w, yajl_val entry, const char *dir, const char *mpath,
                          size_t at, chakra_diag_fn diag, void *ctx, uint64_t *problems, chakra_error *err) {
  char what[1200], q[96];
  const char *sha = get_str(entry, "sha256");
  if (!sha || !w->sha256 || strcmp(sha, w->sha256) != 0) {
    snprintf(what, sizeof what, "workloads[%zu] (%s): sha256 %s is not the suite version's %s", at, w->name,
             sha ? cg_quote(sha, q, sizeof q) : "(missing)", w->sha256 ? w->sha256 : "(none)");
    dir_problem(diag, ctx, mpath, what, problems);
  }
  wfiles f = {0};
  int rc = list_names(w, dir, &f, err);
  if (rc) {
    snprintf(what, sizeof what, "workload %s: %s", w->name, err->msg);
    dir_problem(diag, ctx, mpath, what, problems);
    wfiles_free(&f);
    return CHAKRA_OK;
  }
  if ((rc = hash_files(&f, dir, diag, ctx, problems, err))) return wfiles_free(&f), rc;
  if (!w->sha256 || strcmp(f.sha, w->sha256) != 0) {
    /* name the files that changed: the manifest's own hashes say which */
    const char *fp[] = {"files", NULL};
    yajl_val list = yajl_tree_get(entry, fp, yajl_t_array);
    for (size_t i = 0; list && i < list->u.array.len; i++) {
      const char *fn = get_str(list->u.array.values[i], "name"), *fs = get_str(list->u.array.values[i], "sha256");
      for (size_t k = 0; fn && fs && k < f.n; k++)
        if (strcmp(f.v[k].name, fn) == 0 && strcmp(f.v[k].sha, fs) != 0) {
          char *p = make_path(dir, fn);
          snprintf(what, sizeof what, "sha256 %s, the manifest says %s: changed since make", f.v[k].sha, fs);
          dir_problem(diag, ctx, p ? p : fn, what, problems);
          free(p);
        }
    }
    snprintf(what, sizeof what, "workload %s: its files hash to %s, not to the suite version's %s", w->name, f.sha,
             w->sha256 ? w->sha256 : "(none)");
    dir_problem(diag, ctx, mpath, what, problems);
  }
  wfiles_free(&f);
  return CHAKRA_OK;
}

static int read_manifest(const char *mpath, yajl_val *root, chakra_error *err) {
  char *text = NULL;
  int rc = suitesys_read(mpath, &text, NULL, err);
  if (rc) return rc;
  char why[256] = "";
  *root = yajl_tree_parse(text, why, sizeof why);
  free(text);
  if (!*root) {
    for (char *p = why; *p; p++)
      if (*p == '\n' || *p == '\r') *p = ' ';
    return chakra_error_set(err, CHAKRA_EFORMAT, "%s: not JSON: %s", mpath, why);
  }
  return CHAKRA_OK;
}

static int open_entries(chakra_suite_dir *d, yajl_val root, const char *mpath, chakra_diag_fn diag, void *ctx,
                        uint64_t *problems, chakra_error *err) {
  const char *vname = get_str(root, "suite_version");
  char q[96];
  if (!vname) return chakra_error_set(err, CHAKRA_EFORMAT, "%s: suite_version: expected a string", mpath);
  if (!(d->version = chakra_suite_version_find(vname)))
    return chakra_error_set(err, CHAKRA_EFORMAT, "%s: suite_version: \"%s\" is not a version this tool knows", mpath,
                            cg_quote(vname, q, sizeof q));
  const char *wp[] = {"workloads", NULL};
  yajl_val list = yajl_tree_get(root, wp, yajl_t_array);
  if (!list || !list->u.array.len)
    return chakra_error_set(err, CHAKRA_EFORMAT, "%s: workloads: expected a list of workloads", mpath);
  if (!(d->index = calloc(list->u.array.len, sizeof *d->index)))
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (size_t i = 0; i < list->u.array.len; i++) {
    const char *name = get_str(list->u.array.values[i], "name");
    long at = name ? chakra_suite_workload_find(d->version, name) : -1;
    if (at < 0)
      return chakra_error_set(err, CHAKRA_EFORMAT, "%s: workloads[%zu].name: %s%s%s is not a workload of suite %s",
                              mpath, i, name ? "\"" : "", name ? cg_quote(name, q, sizeof q) : "(missing)",
                              name ? "\"" : "", vname);
    for (size_t k = 0; k < d->n; k++)
      if (d->index[k] == (size_t)at)
        return chakra_error_set(err, CHAKRA_EFORMAT, "%s: workloads[%zu]: %s listed twice", mpath, i, name);
    d->index[d->n++] = (size_t)at;
    int rc = check_workload(&d->version->workloads[at], list->u.array.values[i], d->path, mpath, i, diag, ctx,
                            problems, err);
    if (rc) return rc;
  }
  return CHAKRA_OK;
}

int chakra_suite_dir_open(chakra_suite_dir *d, const char *dir, chakra_diag_fn diag, void *ctx, uint64_t *problems,
                          chakra_error *err) {
  memset(d, 0, sizeof *d);
  *problems = 0;
  char *mpath = make_path(dir, CHAKRA_SUITE_MANIFEST);
  if (!mpath || !(d->path = strdup(dir))) {
    free(mpath);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  yajl_val root = NULL;
  int rc = read_manifest(mpath, &root, err);
  if (!rc) rc = open_entries(d, root, mpath, diag, ctx, problems, err);
  if (root) yajl_tree_free(root);
  free(mpath);
  if (rc) chakra_suite_dir_free(d);
  return rc;
}

void chakra_suite_dir_free(chakra_suite_dir *d) {
  free(d->path);
  free(d->index);
  memset(d, 0, sizeof *d);
}
