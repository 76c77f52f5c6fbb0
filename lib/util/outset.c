/* outset.c - a program's set of outputs: declared with its inputs, checked
 * once before any work, held and committed together; see chakra/output.h
 * and outset.h. */
#include "outset.h"

#include "chakra/output.h"
#include "vec.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { DECL_FILE, DECL_TRACES, DECL_PREFIX, DECL_MKDIR, DECL_SHARED };

typedef struct decl {
  char *path;  /* a file, or a prefix */
  char *label; /* how messages name an output, or NULL */
  int kind;    /* DECL_* */
} decl;

typedef struct decls {
  decl *v;
  size_t n, cap;
} decls;

struct chakra_output_set {
  decls in, out;
  int oom;
};

chakra_output_set *chakra_output_set_new(void) { return calloc(1, sizeof(chakra_output_set)); }

static void decls_free(decls *d) {
  for (size_t i = 0; i < d->n; i++) free(d->v[i].path), free(d->v[i].label);
  free(d->v);
}

void chakra_output_set_free(chakra_output_set *s) {
  if (!s) return;
  decls_free(&s->in);
  decls_free(&s->out);
  free(s);
}

static int add(chakra_output_set *s, decls *d, const char *path, const char *label, int kind) {
  if (!path) return CHAKRA_OK;
  if (VEC_ROOM(d->v, d->n, d->cap, 1)) return s->oom = 1, CHAKRA_ENOMEM;
  decl x = {strdup(path), label ? strdup(label) : NULL, kind};
  if (!x.path || (label && !x.label)) {
    free(x.path), free(x.label);
    return s->oom = 1, CHAKRA_ENOMEM;
  }
  d->v[d->n++] = x;
  return CHAKRA_OK;
}

int chakra_output_set_input(chakra_output_set *s, const char *path) { return add(s, &s->in, path, NULL, DECL_FILE); }

int chakra_output_set_input_traces(chakra_output_set *s, const char *arg) {
  return add(s, &s->in, arg, NULL, DECL_TRACES);
}

int chakra_output_set_output(chakra_output_set *s, const char *path, const char *label) {
  return add(s, &s->out, path, label, DECL_FILE);
}

int chakra_output_set_output_prefix(chakra_output_set *s, const char *prefix, const char *label) {
  return add(s, &s->out, prefix, label, DECL_PREFIX);
}

int chakra_output_set_output_shared(chakra_output_set *s, const char *prefix, const char *label) {
  /* a prefix already declared (a command's -o) now holds the shared form */
  for (size_t i = 0; prefix && i < s->out.n; i++)
    if (s->out.v[i].kind == DECL_PREFIX && strcmp(s->out.v[i].path, prefix) == 0) {
      s->out.v[i].kind = DECL_SHARED;
      return CHAKRA_OK;
    }
  return add(s, &s->out, prefix, label, DECL_SHARED);
}

int chakra_output_set_output_mkdir(chakra_output_set *s, const char *path, const char *label) {
  return add(s, &s->out, path, label, DECL_MKDIR);
}

/* ---- names of a prefix ------------------------------------------------------ */

/* A prefix's files: its ranks "<base>.<r>.et" as chakra_rank_path() writes
 * them (no sign, no leading zero) and, in the shared form (chakra/set.h),
 * its manifest "<base>.set.json" and class templates "<base>.class<k>.et".
 * member() returns the rank r, MEMBER_MANIFEST, MEMBER_CLASS - k, or
 * MEMBER_NONE (also what entries of plain files carry). */
enum { MEMBER_NONE = -1, MEMBER_MANIFEST = -2, MEMBER_CLASS = -3 };

static long long member(const char *name, const char *base, size_t blen) {
  if (strncmp(name, base, blen) != 0 || name[blen] != '.') return MEMBER_NONE;
  const char *p = name + blen + 1, *q;
  if (strcmp(p, "set.json") == 0) return MEMBER_MANIFEST;
  int cls = strncmp(p, "class", 5) == 0;
  p += cls ? 5 : 0;
  for (q = p; *q >= '0' && *q <= '9'; q++) {}
  if (q == p || (*p == '0' && q > p + 1) || q - p > 10 || strcmp(q, ".et") != 0) return MEMBER_NONE;
  long long r = 0;
  for (; p < q; p++) r = r * 10 + (*p - '0');
  if (r > UINT32_MAX) return MEMBER_NONE;
  return cls ? MEMBER_CLASS - r : r;
}

/* Folder and base name of a prefix (or of a file). */
static void split(const char *path, char dir[PATH_MAX], const char **base) {
  const char *slash = strrchr(path, '/');
  if (!slash) snprintf(dir, PATH_MAX, ".");
  else snprintf(dir, PATH_MAX, "%.*s", slash == path ? 1 : (int)(slash - path), path);
  *base = slash ? slash + 1 : path;
}

typedef int (*member_fn)(void *ctx, const char *path, long long rank);

/* fn for every existing PREFIX.<r>.et, in folder order. */
static int each_member(const char *prefix, member_fn fn, void *ctx) {
  char dir[PATH_MAX];
  const char *base;
  split(prefix, dir, &base);
  size_t blen = strlen(base), plen = strlen(prefix) - blen;
  DIR *d = opendir(dir);
  if (!d) return 0;
  int rc = 0;
  for (struct dirent *e; !rc && (e = readdir(d)) != NULL;) {
    long long r = member(e->d_name, base, blen);
    if (r == MEMBER_NONE) continue;
    char *p = malloc(plen + strlen(e->d_name) + 1);
    if (!p) {
      rc = CHAKRA_ENOMEM;
      break;
    }
    memcpy(p, prefix, plen);
    strcpy(p + plen, e->d_name);
    rc = fn(ctx, p, r);
    free(p);
  }
  closedir(d);
  return rc;
}

/* ---- the check -------------------------------------------------------------- */

typedef struct fid {
  dev_t dev;
  ino_t ino;
} fid;

static int fid_cmp(fid a, fid b) {
  if (a.dev != b.dev) return a.dev < b.dev ? -1 : 1;
  return a.ino < b.ino ? -1 : a.ino > b.ino;
}

typedef struct input {
  fid id;
  char *path;
} input;

/* One file an output declaration writes (or, for a prefix, may write). */
typedef struct entry {
  size_t decl;
  long long rank; /* a prefix's member (member()); MEMBER_NONE for a file */
  char *path;
  fid dir;        /* the folder of the final target */
  char *name;     /* the final target's name */
  int exists;
  fid id;
} entry;

typedef struct check {
  const chakra_output_set *s;
  input *in;
  size_t n_in, cap_in;
  entry *e;
  size_t n_e, cap_e;
  fid *pdir;      /* per output declaration: a prefix's folder */
  chakra_error *err;
} check;

static void check_free(check *c) {
  for (size_t i = 0; i < c->n_in; i++) free(c->in[i].path);
  for (size_t i = 0; i < c->n_e; i++) free(c->e[i].path), free(c->e[i].name);
  free(c->in), free(c->e), free(c->pdir);
}

static int oom(check *c) { return chakra_error_set(c->err, CHAKRA_ENOMEM, "out of memory"); }

static int add_input(void *ctx, const char *path, long long rank) {
  (void)rank;
  check *c = ctx;
  struct stat st;
  if (stat(path, &st) != 0 || S_ISDIR(st.st_mode)) return 0;
  if (VEC_ROOM(c->in, c->n_in, c->cap_in, 1)) return oom(c);
  input x = {{st.st_dev, st.st_ino}, strdup(path)};
  if (!x.path) return oom(c);
  c->in[c->n_in++] = x;
  return 0;
}

static int input_cmp(const void *a, const void *b) { return fid_cmp(((const input *)a)->id, ((const input *)b)->id); }

static int gather_inputs(check *c) {
  const decls *d = &c->s->in;
  int rc = 0;
  for (size_t i = 0; i < d->n && !rc; i++) {
    const char *p = d->v[i].path;
    struct stat st;
    if (strcmp(p, "-") == 0) continue;
    if (d->v[i].kind == DECL_FILE || (stat(p, &st) == 0 && !S_ISDIR(st.st_mode))) rc = add_input(c, p, MEMBER_NONE);
    else rc = each_member(p, add_input, c);
  }
  if (!rc && c->n_in) qsort(c->in, c->n_in, sizeof *c->in, input_cmp);
  return rc;
}

/* The folder that will hold path's final target: it must exist and be
 * writable; its identity into *id. what names path in messages. */
static int usable_folder(check *c, const char *target, const char *what, fid *id) {
  char dir[PATH_MAX];
  const char *base;
  split(target, dir, &base);
  struct stat ds;
  if (stat(dir, &ds) != 0 || !S_ISDIR(ds.st_mode))
    return chakra_error_set(c->err, CHAKRA_EIO, "%s: folder %s does not exist", what, dir);
  if (access(dir, W_OK | X_OK) != 0)
    return chakra_error_set(c->err, CHAKRA_EIO, "%s: folder %s is not writable: %s", what, dir, strerror(errno));
  *id = (fid){ds.st_dev, ds.st_ino};
  return 0;
}

typedef struct adding {
  check *c;
  size_t decl;
} adding;

/* An entry for path (rank MEMBER_NONE: a file output). Special files and
 * standard streams are written in place and take no part. */
static int add_entry(void *ctx, const char *path, long long rank) {
  adding *a = ctx;
  check *c = a->c;
  struct stat st;
  int exists = stat(path, &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) {
    if (rank != MEMBER_NONE) return 0; /* not a trace file; writing over it fails at that rank */
    return chakra_error_set(c->err, CHAKRA_EINVAL, "%s: is a directory, expected a file", path);
  }
  if (exists && (!S_ISREG(st.st_mode) || outfile_is_std_stream(&st))) return 0;
  char *target = outfile_final_target(path);
  if (!target) return chakra_error_set(c->err, CHAKRA_EIO, "%s: cannot resolve the symbolic link (a loop?)", path);
  entry x = {.decl = a->decl, .rank = rank, .exists = exists};
  if (exists) x.id = (fid){st.st_dev, st.st_ino};
  int rc = usable_folder(c, target, path, &x.dir);
  const char *base = strrchr(target, '/');
  x.name = rc ? NULL : strdup(base ? base + 1 : target);
  x.path = rc ? NULL : strdup(path);
  free(target);
  if (!rc && (!x.name || !x.path)) rc = oom(c);
  if (!rc && VEC_ROOM(c->e, c->n_e, c->cap_e, 1)) rc = oom(c);
  if (rc) {
    free(x.name), free(x.path);
    return rc;
  }
  c->e[c->n_e++] = x;
  return 0;
}

/* Declaration order, ranks ascending: the first problem found is the one
 * a user expects to read about. */
static int entry_order(const void *a, const void *b) {
  const entry *x = a, *y = b;
  if (x->decl != y->decl) return x->decl < y->decl ? -1 : 1;
  return (x->rank > y->rank) - (x->rank < y->rank);
}

static int gather_outputs(check *c) {
  const decls *d = &c->s->out;
  c->pdir = calloc(d->n ? d->n : 1, sizeof *c->pdir);
  if (!c->pdir) return oom(c);
  int rc = 0;
  for (size_t i = 0; i < d->n && !rc; i++) {
    const char *p = d->v[i].path;
    adding a = {c, i};
    if (d->v[i].kind == DECL_MKDIR) {
      char dir[PATH_MAX];
      const char *base;
      struct stat st;
      split(p, dir, &base);
      if (stat(dir, &st) == 0) rc = add_entry(&a, p, MEMBER_NONE); /* else nothing there can be an input */
      continue;
    }
    if (d->v[i].kind == DECL_FILE) {
      if (!*p) return chakra_error_set(c->err, CHAKRA_EINVAL, "output path is empty");
      if (strcmp(p, "-") != 0) rc = add_entry(&a, p, MEMBER_NONE);
      continue;
    }
    if (!*p) return chakra_error_set(c->err, CHAKRA_EINVAL, "output prefix is empty");
    char first[PATH_MAX + 32];
    snprintf(first, sizeof first, "%s.0.et", p);
    rc = usable_folder(c, p, first, &c->pdir[i]);
    if (!rc) rc = each_member(p, add_entry, &a);
  }
  if (!rc && c->n_e) qsort(c->e, c->n_e, sizeof *c->e, entry_order);
  return rc;
}

/* "--output gpt, rank 3", "--xml" or "an output", for messages. */
static const char *describe(const check *c, size_t which, long long rank, char *buf, size_t cap) {
  const decl *d = &c->s->out.v[which];
  const char *label = d->label ? d->label : "an output";
  if (d->kind != DECL_PREFIX && d->kind != DECL_SHARED) snprintf(buf, cap, "%s", label);
  else if (rank >= 0) snprintf(buf, cap, "%s %s, rank %lld", label, d->path, rank);
  else if (rank == MEMBER_MANIFEST) snprintf(buf, cap, "%s %s, its manifest", label, d->path);
  else snprintf(buf, cap, "%s %s, class %lld", label, d->path, MEMBER_CLASS - rank);
  return buf;
}

static int twice(const check *c, const char *path, size_t d1, long long r1, size_t d2, long long r2) {
  char a[PATH_MAX + 80], b[PATH_MAX + 80];
  return chakra_error_set(c->err, CHAKRA_EINVAL, "%s: written twice, as %s and as %s; give the outputs different names",
                          path, describe(c, d1, r1, a, sizeof a), describe(c, d2, r2, b, sizeof b));
}

static int against_inputs(const check *c) {
  for (size_t i = 0; i < c->n_e; i++) {
    const entry *e = &c->e[i];
    if (!e->exists || !c->n_in) continue;
    input key = {e->id, NULL};
    const input *in = bsearch(&key, c->in, c->n_in, sizeof *c->in, input_cmp);
    if (!in) continue;
    char d[PATH_MAX + 80];
    return chakra_error_set(c->err, CHAKRA_EINVAL,
                            "%s: is the same file as the input %s; writing it (%s) would destroy the input", e->path,
                            in->path, describe(c, e->decl, e->rank, d, sizeof d));
  }
  return 0;
}

static int by_name(const void *a, const void *b) {
  const entry *x = *(const entry *const *)a, *y = *(const entry *const *)b;
  int k = fid_cmp(x->dir, y->dir);
  return k ? k : strcmp(x->name, y->name);
}

static int by_id(const void *a, const void *b) {
  const entry *x = *(const entry *const *)a, *y = *(const entry *const *)b;
  if (x->exists != y->exists) return x->exists - y->exists;
  return x->exists ? fid_cmp(x->id, y->id) : 0;
}

/* Two declarations writing one file: the same final name, or two names
 * of one existing file (hard links). */
static int against_each_other(const check *c) {
  if (c->n_e < 2) return 0;
  const entry **v = malloc(c->n_e * sizeof *v);
  if (!v) return chakra_error_set(c->err, CHAKRA_ENOMEM, "out of memory");
  for (size_t i = 0; i < c->n_e; i++) v[i] = &c->e[i];
  int rc = 0;
  for (int pass = 0; pass < 2 && !rc; pass++) {
    int (*cmp)(const void *, const void *) = pass ? by_id : by_name;
    qsort(v, c->n_e, sizeof *v, cmp);
    for (size_t i = 1; i < c->n_e && !rc; i++)
      if (v[i]->decl != v[i - 1]->decl && (pass == 0 || v[i]->exists) && cmp(&v[i], &v[i - 1]) == 0)
        rc = twice(c, v[i - 1]->path, v[i - 1]->decl, v[i - 1]->rank, v[i]->decl, v[i]->rank);
  }
  free(v);
  return rc;
}

/* Files a prefix will write that do not exist yet: another output named
 * like one of them, or the same prefix declared twice. */
static int against_prefixes(const check *c) {
  const decls *d = &c->s->out;
  for (size_t p = 0; p < d->n; p++) {
    if (d->v[p].kind != DECL_PREFIX && d->v[p].kind != DECL_SHARED) continue;
    const char *base;
    char dir[PATH_MAX];
    split(d->v[p].path, dir, &base);
    size_t blen = strlen(base);
    for (size_t i = 0; i < c->n_e; i++) {
      const entry *e = &c->e[i];
      long long r = e->decl == p ? MEMBER_NONE : member(e->name, base, blen);
      if (r != MEMBER_NONE && fid_cmp(e->dir, c->pdir[p]) == 0) return twice(c, e->path, e->decl, e->rank, p, r);
    }
    for (size_t q = p + 1; q < d->n; q++) {
      const char *qbase;
      split(d->v[q].path, dir, &qbase);
      if ((d->v[q].kind == DECL_PREFIX || d->v[q].kind == DECL_SHARED) && fid_cmp(c->pdir[q], c->pdir[p]) == 0 &&
          strcmp(qbase, base) == 0) {
        char first[PATH_MAX + 32];
        snprintf(first, sizeof first, "%s.0.et", d->v[q].path);
        return twice(c, first, p, 0, q, 0);
      }
    }
  }
  return 0;
}

/* A set in both forms at one prefix: a reader could not tell which of the
 * two is the set (chakra/set.h), so a shared set written where rank files
 * are, and rank files written where a shared set (its manifest, named as
 * member() knows it) is, are refused before anything is written. */
static int against_other_form(const check *c) {
  const decls *d = &c->s->out;
  for (size_t i = 0; i < d->n; i++) {
    if (d->v[i].kind != DECL_PREFIX && d->v[i].kind != DECL_SHARED) continue;
    int shared = d->v[i].kind == DECL_SHARED;
    char other[PATH_MAX + 32];
    struct stat st;
    snprintf(other, sizeof other, shared ? "%s.0.et" : "%s.set.json", d->v[i].path);
    if (stat(other, &st) != 0 || S_ISDIR(st.st_mode)) continue;
    if (shared)
      return chakra_error_set(c->err, CHAKRA_EINVAL,
                              "%s: rank files are there; writing the shared form of %s (%s) beside them would leave "
                              "a set in both forms: remove them or choose another prefix",
                              other, d->v[i].path, d->v[i].label ? d->v[i].label : "an output");
    return chakra_error_set(c->err, CHAKRA_EINVAL,
                            "%s: a shared trace set is there; writing rank files beside it would leave %s in both "
                            "forms: remove it or choose another prefix",
                            other, d->v[i].path);
  }
  return 0;
}

int chakra_output_set_check(const chakra_output_set *s, chakra_error *err) {
  if (s->oom) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  check c = {.s = s, .err = err};
  int rc = gather_inputs(&c);
  if (!rc) rc = gather_outputs(&c);
  if (!rc) rc = against_inputs(&c);
  if (!rc) rc = against_each_other(&c);
  if (!rc) rc = against_prefixes(&c);
  if (!rc) rc = against_other_form(&c);
  check_free(&c);
  return rc;
}

int chakra_output_check(const char *path, const char *const *inputs, size_t n, chakra_error *err) {
  if (!path || !*path) return chakra_error_set(err, CHAKRA_EINVAL, "output path is empty");
  chakra_output_set *s = chakra_output_set_new();
  if (!s) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  chakra_output_set_output(s, path, NULL);
  for (size_t i = 0; i < n; i++) chakra_output_set_input(s, inputs[i]);
  int rc = chakra_output_set_check(s, err);
  chakra_output_set_free(s);
  return rc;
}

/* ---- the active set ------------------------------------------------------------ */

static pthread_mutex_t tx_mu = PTHREAD_MUTEX_INITIALIZER;
static chakra_output_set *tx;   /* the active set */
static outfile **tx_held;
static size_t tx_n, tx_cap;
static int tx_whole = 1;         /* no output lost, none failed to be held */
static char tx_lost[512];        /* the first output lost */
static _Thread_local int scratch_depth;

void outset_scratch_begin(void) { scratch_depth++; }
void outset_scratch_end(void) { scratch_depth--; }

/* Whether path is one of s's outputs, by the name the library opens. */
static int declares(const chakra_output_set *s, const char *path) {
  for (size_t i = 0; i < s->out.n; i++) {
    const decl *d = &s->out.v[i];
    if (d->kind != DECL_PREFIX && d->kind != DECL_SHARED) {
      if (strcmp(d->path, path) == 0) return 1;
      continue;
    }
    size_t n = strlen(d->path);
    if (strncmp(path, d->path, n) == 0 && member(path + n, "", 0) != MEMBER_NONE) return 1;
  }
  return 0;
}

int outset_claims(const char *path, chakra_error *err) {
  if (scratch_depth) return 0;
  pthread_mutex_lock(&tx_mu);
  int active = tx != NULL, ours = active && declares(tx, path);
  pthread_mutex_unlock(&tx_mu);
  if (!active || ours) return ours;
  return chakra_error_set(err, CHAKRA_EINVAL,
                          "%s: not among the outputs checked before the work began (an internal error; please "
                          "report it)",
                          path);
}

void outset_hold(outfile *f) {
  pthread_mutex_lock(&tx_mu);
  int ok = tx != NULL;
  if (ok && VEC_ROOM(tx_held, tx_n, tx_cap, 1)) ok = 0;
  if (ok) tx_held[tx_n++] = f;
  else if (tx) tx_whole = 0, snprintf(tx_lost, sizeof tx_lost, "%s", outfile_path(f));
  pthread_mutex_unlock(&tx_mu);
  if (!ok) outfile_discard(f);
}

void outset_lost(const char *path) {
  pthread_mutex_lock(&tx_mu);
  if (tx && tx_whole) tx_whole = 0, snprintf(tx_lost, sizeof tx_lost, "%s", path);
  pthread_mutex_unlock(&tx_mu);
}

/* Ends the active set: its held outputs into *v (n of them). */
static chakra_output_set *take(outfile ***v, size_t *n, int *whole, char lost[512]) {
  pthread_mutex_lock(&tx_mu);
  chakra_output_set *s = tx;
  *v = tx_held, *n = tx_n, *whole = tx_whole;
  memcpy(lost, tx_lost, 512);
  tx = NULL, tx_held = NULL, tx_n = tx_cap = 0, tx_whole = 1, tx_lost[0] = 0;
  pthread_mutex_unlock(&tx_mu);
  return s;
}

static void discard_all(outfile **v, size_t n) {
  for (size_t i = 0; i < n; i++) outfile_discard(v[i]);
  free(v);
}

void chakra_output_set_abort(void) {
  outfile **v;
  size_t n;
  int whole;
  char lost[512];
  chakra_output_set_free(take(&v, &n, &whole, lost));
  discard_all(v, n);
}

int chakra_output_set_commit(chakra_error *err) {
  outfile **v;
  size_t n;
  int whole;
  char lost[512];
  chakra_output_set *s = take(&v, &n, &whole, lost);
  if (!s) return CHAKRA_OK;
  chakra_output_set_free(s);
  if (!whole) {
    discard_all(v, n);
    return chakra_error_set(err, CHAKRA_EIO, "%s: not written completely, so none of the outputs was written", lost);
  }
  int rc = n ? outfile_commit_held(v, n, err) : CHAKRA_OK;
  free(v);
  return rc;
}

static void abort_at_exit(void) { chakra_output_set_abort(); }
static void register_at_exit(void) { atexit(abort_at_exit); }

int chakra_output_set_begin(chakra_output_set *s, chakra_error *err) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  int rc = chakra_output_set_check(s, err);
  pthread_mutex_lock(&tx_mu);
  if (!rc && tx) rc = chakra_error_set(err, CHAKRA_EINVAL, "another set of outputs is already being written");
  if (!rc) tx = s;
  pthread_mutex_unlock(&tx_mu);
  if (rc) {
    chakra_output_set_free(s);
    return rc;
  }
  pthread_once(&once, register_at_exit);
  return CHAKRA_OK;
}
