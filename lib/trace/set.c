/* set.c - trace sets from rank files or sources; see include/chakra/set.h. */
#include "chakra/set.h"

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../util/commgroups.h"
#include "bind.h"
#include "chakra/build.h"
#include "graphint.h"
#include "readerint.h"
#include "setfile.h"
#include "setint.h"
#include "../util/vec.h"

struct chakra_set {
  uint32_t n;
  char **paths;             /* per-rank files, or NULL for a source */
  char *prefix;             /* the one PREFIX the files come from, or NULL */
  int has_src;
  chakra_set_source src;
  void *ctx;
  char **names;             /* a source's default rank names, made when asked */
  pthread_mutex_t lock;     /* a source's callbacks; names; loading the groups */
  /* groups */
  chakra_groups_origin origin;
  char *groups_path;
  int groups_loaded, groups_rc;
  chakra_error groups_err;
  cg_set groups;
  chakra_manifest *man;     /* a shared set's manifest, or NULL */
  char *man_path;
  char **cls_paths;         /* a shared set's templates, resolved */
  chakra_progress_fn progress; /* chakra_set_options' */
  void *progress_ctx;
  pthread_mutex_t plock;    /* loads counted for it, one call at a time */
  uint64_t loaded;
};

chakra_workload_options set_writer_options(const chakra_set *s) {
  return (chakra_workload_options){.progress = s->progress, .progress_ctx = s->progress_ctx};
}

/* ---- rank files ---- */

/* Anything but a directory: pipes and process substitution are traces too. */
static int is_file(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && !S_ISDIR(st.st_mode);
}

static int push_path(chakra_set *s, size_t *cap, char *p) {
  if (!p) return -1;
  if (s->n == *cap && vec_room_by(&s->paths, cap, s->n, 1, sizeof *s->paths, VEC_MIN_CAP, UINT32_MAX, realloc)) {
    free(p);
    return -1;
  }
  s->paths[s->n++] = p;
  return 0;
}

/* Rank files PREFIX.<r>.et beyond the `found` contiguous ones, by a scan
 * of the prefix's folder: a set cut short by a gap (0, 1, 16, 63) must not
 * quietly become a 2-rank workload. Returns how many there are and the
 * lowest such rank in *first (UINT64_MAX when none). */
static size_t ranks_after_gap(const char *prefix, size_t found, uint64_t *first) {
  const char *slash = strrchr(prefix, '/');
  char dir[4096];
  snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - prefix) : 1, slash ? prefix : ".");
  if (slash == prefix) snprintf(dir, sizeof dir, "/");
  const char *base = slash ? slash + 1 : prefix;
  size_t blen = strlen(base), extra = 0;
  *first = UINT64_MAX;
  DIR *d = opendir(dir);
  if (!d) return 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    const char *nm = e->d_name;
    if (strncmp(nm, base, blen) != 0 || nm[blen] != '.') continue;
    const char *q = nm + blen + 1;
    char *end;
    if (*q < '0' || *q > '9') continue;
    unsigned long long r = strtoull(q, &end, 10);
    if (strcmp(end, ".et") != 0 || r < found) continue;
    extra++;
    if (r < *first) *first = r;
  }
  closedir(d);
  return extra;
}

/* PREFIX.0.et, PREFIX.1.et, ... while they exist; a later one after the
 * gap is an error. */
static int probe_prefix(chakra_set *s, size_t *cap, const char *prefix, chakra_error *err) {
  size_t found = 0;
  for (;; found++) {
    char *p = chakra_rank_path_dup(prefix, (uint32_t)found);
    if (!p) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    if (!is_file(p)) {
      free(p);
      break;
    }
    if (push_path(s, cap, p)) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  if (!found) return chakra_error_set(err, CHAKRA_EIO, "%s: no such file, and no %s.0.et for a rank prefix", prefix, prefix);
  uint64_t first;
  size_t extra = ranks_after_gap(prefix, found, &first);
  if (extra)
    return chakra_error_set(err, CHAKRA_EFORMAT,
                            "%s: ranks 0..%zu exist, then %s.%zu.et is missing but %zu later rank file(s) exist "
                            "(first: %s.%llu.et); a workload's ranks must be numbered without gaps",
                            prefix, found - 1, prefix, found, extra, prefix, (unsigned long long)first);
  return 0;
}

/* Exactly n ranks: each file exists, and the next one does not (unless
 * the first n of a larger set are wanted). */
static int expect_prefix(chakra_set *s, size_t *cap, const char *prefix, uint32_t n, const char *reason,
                         int first_only, chakra_error *err) {
  char why[200];
  snprintf(why, sizeof why, "%s", reason ? reason : "");
  if (!reason) snprintf(why, sizeof why, "the set has %u ranks", n);
  for (uint32_t r = 0; r < n; r++) {
    char *p = chakra_rank_path_dup(prefix, r);
    if (!p) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    if (!is_file(p)) {
      int rc = chakra_error_set(err, CHAKRA_EIO, "workload file %s does not exist (%s, so ranks 0..%u are needed)", p,
                                why, n - 1);
      free(p);
      return rc;
    }
    if (push_path(s, cap, p)) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  if (first_only) return 0;
  char *extra = chakra_rank_path_dup(prefix, n);
  if (!extra) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  int rc = is_file(extra) ? chakra_error_set(err, CHAKRA_EINVAL,
                                             "%s: the workload has more rank files than the %u expected (%s); its "
                                             "ranks %u and above would be ignored",
                                             extra, n, why, n)
                          : 0;
  free(extra);
  return rc;
}

static chakra_set *set_new(const chakra_set_options *opt) {
  chakra_set *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  pthread_mutex_init(&s->lock, NULL);
  pthread_mutex_init(&s->plock, NULL);
  if (opt) s->progress = opt->progress, s->progress_ctx = opt->progress_ctx;
  if (opt && opt->comm_groups) {
    s->origin = CHAKRA_GROUPS_GIVEN;
    if (!(s->groups_path = strdup(opt->comm_groups))) {
      chakra_set_close(s);
      return NULL;
    }
  }
  return s;
}

/* Whether path starts as a comm-group file does: an object whose first
 * member is a list of ranks ({"1": [0, 1], ...}), or no member. Other JSON
 * there (a report or sweep table written as PREFIX.json) is not the set's
 * groups. */
static int looks_like_groups(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  char buf[4096];
  size_t n = fread(buf, 1, sizeof buf, f), i = 0;
  fclose(f);
  int state = 0; /* 0 before '{', 1 before the key, 2 in it, 3 before ':', 4 before the value, 5 in the list */
  for (; i < n; i++) {
    char c = buf[i];
    if (state == 2) {
      if (c == '\\') i++;
      else if (c == '"') state = 3;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    if (state == 0 && c == '{') state = 1;
    else if (state == 1 && c == '"') state = 2;
    else if (state == 1 && c == '}') return 1;
    else if (state == 3 && c == ':') state = 4;
    else if (state == 4 && c == '[') state = 5;
    else return state == 5 && ((c >= '0' && c <= '9') || c == ']');
  }
  return 0;
}

/* PREFIX.json beside the traces, when no file was given and it is one. */
static int default_groups(chakra_set *s, const chakra_set_options *opt) {
  if (s->origin != CHAKRA_GROUPS_NONE || !s->prefix || (opt && opt->no_default_groups)) return 0;
  size_t len = strlen(s->prefix) + 6;
  char *p = malloc(len);
  if (!p) return -1;
  snprintf(p, len, "%s.json", s->prefix);
  if (!is_file(p) || !looks_like_groups(p)) {
    free(p);
    return 0;
  }
  s->groups_path = p;
  s->origin = CHAKRA_GROUPS_BESIDE;
  return 0;
}

static int finish_open(chakra_set **out, chakra_set *s, const chakra_set_options *opt, int rc, chakra_error *err) {
  if (!rc && s->n == 0) rc = chakra_error_set(err, CHAKRA_EINVAL, "a trace set needs at least one rank");
  if (!rc && default_groups(s, opt)) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  if (rc) {
    chakra_set_close(s);
    return rc;
  }
  *out = s;
  return 0;
}

/* ---- the shared form: PREFIX.set.json and its templates ---- */

/* The rank count: the manifest's, checked against the one expected. */
static int shared_ranks(chakra_set *s, const chakra_set_options *opt, chakra_error *err) {
  uint32_t have = chakra_manifest_ranks(s->man), want = opt ? opt->ranks : 0;
  s->n = have;
  if (!want || want == have || (want < have && opt->first_ranks)) {
    if (want) s->n = want;
    return 0;
  }
  char why[200];
  snprintf(why, sizeof why, "%s", opt->ranks_reason ? opt->ranks_reason : "");
  if (!opt->ranks_reason) snprintf(why, sizeof why, "the set has %u ranks", want);
  return chakra_error_set(err, want > have ? CHAKRA_EIO : CHAKRA_EINVAL,
                          "%s: the shared trace set has %u rank(s), %u expected (%s)", s->man_path, have, want, why);
}

/* Templates resolved and present; the manifest's groups, unless given. */
static int shared_files(chakra_set *s, const chakra_set_options *opt, chakra_error *err) {
  uint32_t k = chakra_manifest_classes(s->man);
  if (!(s->cls_paths = calloc(k, sizeof *s->cls_paths))) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (uint32_t c = 0; c < k; c++) {
    if (!(s->cls_paths[c] = setfile_resolve(s->man_path, chakra_manifest_template(s->man, c))))
      return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    if (!is_file(s->cls_paths[c]))
      return chakra_error_set(err, CHAKRA_EIO, "%s: classes[%u].template: %s does not exist", s->man_path, c,
                              s->cls_paths[c]);
  }
  if (s->origin != CHAKRA_GROUPS_NONE || (opt && opt->no_default_groups)) return 0;
  const char *gf = chakra_manifest_groups_file(s->man);
  if (gf && !(s->groups_path = setfile_resolve(s->man_path, gf))) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  if (gf || chakra_manifest_group_rules(s->man)) s->origin = CHAKRA_GROUPS_MANIFEST;
  return 0;
}

static int open_shared(chakra_set *s, const chakra_set_options *opt, chakra_error *err) {
  char *first = chakra_rank_path_dup(s->prefix, 0);
  if (!first) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  int both = is_file(first);
  int rc = both ? chakra_error_set(err, CHAKRA_EINVAL,
                                   "%s: both a shared trace set (%s) and rank files (%s) are there; remove the one "
                                   "that is out of date",
                                   s->prefix, s->man_path, first)
                : chakra_manifest_read(&s->man, s->man_path, err);
  free(first);
  if (!rc) rc = shared_ranks(s, opt, err);
  if (!rc) rc = shared_files(s, opt, err);
  return rc;
}

int chakra_set_open(chakra_set **out, const char *prefix, const chakra_set_options *opt, chakra_error *err) {
  *out = NULL;
  chakra_set *s = set_new(opt);
  if (!s || !(s->prefix = strdup(prefix)) || !(s->man_path = chakra_manifest_path_dup(prefix))) {
    chakra_set_close(s);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  if (is_file(s->man_path)) return finish_open(out, s, opt, open_shared(s, opt, err), err);
  free(s->man_path);
  s->man_path = NULL;
  size_t cap = 0;
  int rc = opt && opt->ranks ? expect_prefix(s, &cap, prefix, opt->ranks, opt->ranks_reason, opt->first_ranks, err)
                             : probe_prefix(s, &cap, prefix, err);
  return finish_open(out, s, opt, rc, err);
}

/* "X.set.json" named as a file is the shared set X. */
static int names_manifest(const char *arg) {
  size_t n = strlen(arg);
  return n > 9 && strcmp(arg + n - 9, ".set.json") == 0 && is_file(arg);
}

int chakra_set_open_files(chakra_set **out, const char *const *paths, uint32_t n, const chakra_set_options *opt,
                          chakra_error *err) {
  *out = NULL;
  chakra_set *s = set_new(opt);
  if (!s) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  size_t cap = 0;
  int rc = 0;
  for (uint32_t r = 0; r < n && !rc; r++)
    if (push_path(s, &cap, strdup(paths[r]))) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  return finish_open(out, s, opt, rc, err);
}

int chakra_set_open_args(chakra_set **out, const char *const *args, uint32_t n, const chakra_set_options *opt,
                         chakra_error *err) {
  if (n == 1 && names_manifest(args[0])) {
    char *prefix = strndup(args[0], strlen(args[0]) - 9);
    if (!prefix) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    int rc = chakra_set_open(out, prefix, opt, err);
    free(prefix);
    return rc;
  }
  if (n == 1 && strcmp(args[0], "-") != 0 && !is_file(args[0])) return chakra_set_open(out, args[0], opt, err);
  *out = NULL;
  chakra_set *s = set_new(opt);
  if (!s) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  size_t cap = 0;
  int rc = 0;
  for (uint32_t i = 0; i < n && !rc; i++) {
    if (names_manifest(args[i])) {
      rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: a shared trace set is given alone, not among other traces", args[i]);
    } else if (strcmp(args[i], "-") == 0 || is_file(args[i])) {
      if (push_path(s, &cap, strdup(args[i]))) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    } else {
      char *man = chakra_manifest_path_dup(args[i]);
      rc = !man ? chakra_error_set(err, CHAKRA_ENOMEM, "out of memory")
           : is_file(man) ? chakra_error_set(err, CHAKRA_EINVAL, "%s: is a shared trace set (%s), given alone, not among other traces", args[i], man)
                          : probe_prefix(s, &cap, args[i], err);
      free(man);
    }
  }
  return finish_open(out, s, opt, rc, err);
}

int chakra_set_from_source(chakra_set **out, const chakra_set_source *src, void *ctx, const chakra_set_options *opt,
                           chakra_error *err) {
  *out = NULL;
  chakra_set *s = set_new(opt);
  if (!s) {
    if (src->close) src->close(ctx);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  s->has_src = 1;
  s->src = *src;
  s->ctx = ctx;
  s->n = src->ranks;
  int rc = 0;
  if (!src->input) rc = chakra_error_set(err, CHAKRA_EINVAL, "a trace-set source needs an input callback");
  else if (src->class_of && (!src->classes || !src->class_rep))
    rc = chakra_error_set(err, CHAKRA_EINVAL, "a trace-set source with classes needs their count and class_rep");
  if (!rc && s->origin == CHAKRA_GROUPS_NONE && src->groups) s->origin = CHAKRA_GROUPS_SOURCE;
  return finish_open(out, s, opt, rc, err);
}

void chakra_set_close(chakra_set *s) {
  if (!s) return;
  if (s->has_src && s->src.close) s->src.close(s->ctx);
  for (uint32_t r = 0; s->paths && r < s->n; r++) free(s->paths[r]);
  for (uint32_t r = 0; s->names && r < s->n; r++) free(s->names[r]);
  for (uint32_t c = 0; s->cls_paths && c < chakra_manifest_classes(s->man); c++) free(s->cls_paths[c]);
  free(s->cls_paths);
  free(s->man_path);
  free(s->paths);
  free(s->names);
  free(s->prefix);
  free(s->groups_path);
  cg_set_free(&s->groups);
  chakra_manifest_free(s->man);
  pthread_mutex_destroy(&s->lock);
  pthread_mutex_destroy(&s->plock);
  free(s);
}

uint32_t chakra_set_ranks(const chakra_set *s) { return s->n; }
const chakra_manifest *chakra_set_manifest(const chakra_set *s) { return s->man; }
const char *chakra_set_prefix(const chakra_set *s) { return s->prefix; }
const char *chakra_set_rank_path(const chakra_set *s, uint32_t rank) { return s->paths ? s->paths[rank] : NULL; }

static chakra_set *unconst(const chakra_set *s) { return (chakra_set *)s; }

const char *chakra_set_rank_name(const chakra_set *s, uint32_t rank) {
  if (s->paths) return s->paths[rank];
  uint32_t cls = chakra_set_class_of(s, rank);
  chakra_set *m = unconst(s);
  pthread_mutex_lock(&m->lock);
  const char *name = s->man ? NULL : s->src.name ? s->src.name(s->ctx, cls) : NULL;
  if (s->man && !m->names) m->names = calloc(s->n, sizeof *m->names);
  if (s->man && m->names && !m->names[rank]) {
    size_t len = strlen(s->cls_paths[cls]) + 32;
    if ((m->names[rank] = malloc(len)) != NULL) snprintf(m->names[rank], len, "%s (rank %u)", s->cls_paths[cls], rank);
  }
  if (!name && !m->names) m->names = calloc(s->n, sizeof *m->names);
  if (!name && m->names && !m->names[rank]) {
    char buf[64];
    if (chakra_set_class_of(s, rank) == rank) snprintf(buf, sizeof buf, "<rank %u>", rank);
    else snprintf(buf, sizeof buf, "<class %u (rank %u)>", cls, rank);
    m->names[rank] = strdup(buf);
  }
  if (!name) name = m->names && m->names[rank] ? m->names[rank] : "<rank>";
  pthread_mutex_unlock(&m->lock);
  return name;
}

/* ---- classes ---- */

static int has_classes(const chakra_set *s) { return s->man || (s->has_src && s->src.class_of); }

uint32_t chakra_set_classes(const chakra_set *s) {
  return s->man ? chakra_manifest_classes(s->man) : has_classes(s) ? s->src.classes : s->n;
}
uint32_t chakra_set_class_of(const chakra_set *s, uint32_t rank) {
  return s->man ? chakra_manifest_class_of(s->man, rank) : has_classes(s) ? s->src.class_of(s->ctx, rank) : rank;
}
uint32_t chakra_set_class_rep(const chakra_set *s, uint32_t cls) {
  return s->man ? chakra_manifest_rep(s->man, cls) : has_classes(s) ? s->src.class_rep(s->ctx, cls) : cls;
}
const char *chakra_set_bind_group(const chakra_set *s, uint32_t rank, const char *template_pg) {
  if (s->man) return chakra_manifest_bind_group(s->man, rank, template_pg);
  if (!has_classes(s) || !s->src.bind_group || !template_pg || !*template_pg) return template_pg;
  return s->src.bind_group(s->ctx, rank, template_pg);
}
int32_t chakra_set_bind_peer(const chakra_set *s, uint32_t rank, int32_t template_peer) {
  if (s->man) return chakra_manifest_bind_peer(s->man, rank, template_peer);
  if (!has_classes(s) || !s->src.bind_peer) return template_peer;
  return s->src.bind_peer(s->ctx, rank, template_peer);
}

/* ---- a rank's binding, for its readers and graphs ---- */

typedef struct set_bind {
  bind_ref base;
  chakra_manifest *man; /* held: the graph may outlive the set */
  const chakra_set *s;  /* a source's classes: the set must outlive the graph */
  uint32_t rank;
} set_bind;

static const char *sb_group(const void *ctx, const char *name) {
  const set_bind *b = ctx;
  return b->man ? chakra_manifest_bind_group(b->man, b->rank, name) : chakra_set_bind_group(b->s, b->rank, name);
}
static int32_t sb_peer(const void *ctx, int32_t p) {
  const set_bind *b = ctx;
  return b->man ? chakra_manifest_bind_peer(b->man, b->rank, p) : chakra_set_bind_peer(b->s, b->rank, p);
}
static void sb_destroy(bind_ref *r) {
  set_bind *b = (set_bind *)r;
  chakra_manifest_free(b->man);
  free(b);
}

/* rank's binding, or NULL when it has none (its own class, a class's
 * representative in a shared set). */
static int rank_binding(const chakra_set *s, uint32_t rank, bind_ref **out, chakra_error *err) {
  *out = NULL;
  if (!has_classes(s) || (s->man && setfile_is_rep(s->man, rank))) return 0;
  set_bind *b = calloc(1, sizeof *b);
  if (!b) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  atomic_init(&b->base.refs, 1);
  b->base.map = (bind_map){sb_group, sb_peer, b};
  b->base.destroy = sb_destroy;
  b->man = s->man ? setfile_ref(s->man) : NULL;
  b->s = s, b->rank = rank;
  *out = &b->base;
  return 0;
}

/* rank's input: its class's bytes, under the rank's name when the class
 * is shared. */
static int rank_input(const chakra_set *s, uint32_t rank, chakra_input *in, chakra_error *err) {
  if (rank >= s->n) return chakra_error_set(err, CHAKRA_EINVAL, "trace set: rank %u does not exist (%u ranks)", rank, s->n);
  int rc = chakra_set_input(s, chakra_set_class_of(s, rank), in, err);
  if (!rc && has_classes(s)) in->name = chakra_set_rank_name(s, rank);
  return rc;
}

/* ---- reading ---- */

int chakra_set_input(const chakra_set *s, uint32_t cls, chakra_input *in, chakra_error *err) {
  memset(in, 0, sizeof *in);
  if (cls >= chakra_set_classes(s))
    return chakra_error_set(err, CHAKRA_EINVAL, "trace set: class %u does not exist (%u classes)", cls, chakra_set_classes(s));
  if (s->paths || s->man) {
    in->path = s->man ? s->cls_paths[cls] : s->paths[cls];
    return 0;
  }
  chakra_set *m = unconst(s);
  pthread_mutex_lock(&m->lock);
  int rc = s->src.input(s->ctx, cls, in, err);
  pthread_mutex_unlock(&m->lock);
  if (!rc && !in->path && !in->file && !in->data && in->size)
    rc = chakra_error_set(err, CHAKRA_EINVAL, "trace set: the source gave class %u no path, stream or bytes", cls);
  if (!rc && !in->name && !in->path) in->name = chakra_set_rank_name(s, chakra_set_class_rep(s, cls));
  return rc;
}

int chakra_set_load_class(const chakra_set *s, uint32_t cls, const chakra_graph_options *opt, chakra_graph **out,
                          chakra_error *err) {
  *out = NULL;
  chakra_input in;
  int rc = chakra_set_input(s, cls, &in, err);
  return rc ? rc : chakra_graph_load_input(out, &in, opt, err);
}

/* One more rank loaded, told to the set's progress callback ("load", of
 * the set's ranks; a rank loaded twice counts twice). The count is the
 * set's own bookkeeping, not its contents: hence the cast. */
static int count_load(const chakra_set *s, chakra_graph **g, chakra_error *err) {
  chakra_set *m = (chakra_set *)s;
  pthread_mutex_lock(&m->plock);
  m->loaded = m->loaded % s->n + 1; /* a second pass over the ranks counts from 1 again */
  int stop = s->progress(s->progress_ctx, "load", m->loaded, s->n);
  pthread_mutex_unlock(&m->plock);
  if (!stop) return 0;
  chakra_graph_free(*g);
  *g = NULL;
  return chakra_error_set(err, CHAKRA_ECANCELED, "loading stopped by the progress callback");
}

int chakra_set_load_rank(const chakra_set *s, uint32_t rank, const chakra_graph_options *opt, chakra_graph **out,
                         chakra_error *err) {
  *out = NULL;
  chakra_input in;
  bind_ref *b = NULL;
  int rc = rank_input(s, rank, &in, err);
  if (!rc) rc = rank_binding(s, rank, &b, err);
  if (!rc) rc = graph_load_bound(out, &in, opt, b, err);
  bind_release(b);
  if (!rc && s->progress) rc = count_load(s, out, err);
  return rc;
}

int chakra_set_reader(const chakra_set *s, uint32_t rank, const chakra_reader_options *opt, chakra_reader **out,
                      chakra_error *err) {
  *out = NULL;
  chakra_input in;
  bind_ref *b = NULL;
  int rc = rank_input(s, rank, &in, err);
  if (!rc) rc = rank_binding(s, rank, &b, err);
  if (!rc) rc = chakra_reader_open_input(out, &in, opt, err);
  if (!rc) reader_bind(*out, b);
  bind_release(b);
  return rc;
}

/* ---- groups ---- */

const char *set_group_range_text(const cg_group *g, uint32_t member, uint32_t ranks, char *buf, size_t size) {
  char qn[200];
  snprintf(buf, size, "line %u: group \"%s\" names rank %u, but the workload has %u rank(s) (0..%u): a groups file "
           "for another rank count?",
           g->line, cg_quote(g->name, qn, sizeof qn), member, ranks, ranks - 1);
  return buf;
}

static int add_rule_group(void *ctx, const char *name, const uint32_t *members, uint32_t n) {
  return cg_add_group(ctx, name, members, n) ? CHAKRA_ENOMEM : 0;
}

static int load_groups(chakra_set *s, chakra_error *err) {
  if (s->groups_path) return cg_read_file(&s->groups, s->groups_path, 0, err);
  if (s->origin == CHAKRA_GROUPS_MANIFEST)
    return setfile_each_grid_group(s->man, add_rule_group, &s->groups) ? chakra_error_set(err, CHAKRA_ENOMEM, "out of memory") : 0;
  if (s->origin == CHAKRA_GROUPS_SOURCE) return s->src.groups(s->ctx, s, err);
  return 0;
}

int set_groups_load(const chakra_set *cs, chakra_error *err) {
  chakra_set *s = unconst(cs);
  pthread_mutex_lock(&s->lock);
  if (!s->groups_loaded) {
    s->groups_rc = load_groups(s, &s->groups_err);
    s->groups_loaded = 1;
  }
  int rc = s->groups_rc;
  if (rc && err) *err = s->groups_err;
  pthread_mutex_unlock(&s->lock);
  return rc;
}

const cg_set *set_groups(const chakra_set *s) { return &s->groups; }

int chakra_set_load_groups(const chakra_set *s, chakra_error *err) {
  int rc = set_groups_load(s, err);
  for (size_t i = 0; !rc && i < s->groups.n; i++) {
    const cg_group *g = &s->groups.v[i];
    for (uint32_t k = 0; k < g->n; k++)
      if (g->members[k] >= s->n) {
        char what[400];
        set_group_range_text(g, g->members[k], s->n, what, sizeof what);
        return chakra_error_set(err, CHAKRA_EINVAL, "%s: %s", s->groups_path ? s->groups_path : "groups", what);
      }
  }
  return rc;
}

chakra_groups_origin chakra_set_groups_origin(const chakra_set *s) { return s->origin; }
const char *chakra_set_groups_path(const chakra_set *s) { return s->groups_path; }
size_t chakra_set_group_count(const chakra_set *s) { return s->groups.n; }
const char *chakra_set_group_name(const chakra_set *s, size_t i) { return s->groups.v[i].name; }
const uint32_t *chakra_set_group_members(const chakra_set *s, size_t i, uint32_t *n) {
  *n = s->groups.v[i].n;
  return s->groups.v[i].members;
}
long chakra_set_group_find(const chakra_set *s, const char *name) { return cg_find(&s->groups, name); }

int chakra_set_add_group(chakra_set *s, const char *name, const uint32_t *ranks, uint32_t n, chakra_error *err) {
  if (!name) return chakra_error_set(err, CHAKRA_EINVAL, "trace set: a group needs a name");
  char qn[200];
  if (cg_find(&s->groups, name) >= 0)
    return chakra_error_set(err, CHAKRA_EINVAL, "trace set: group \"%s\" is defined twice", cg_quote(name, qn, sizeof qn));
  for (uint32_t k = 0; k < n; k++)
    if (ranks[k] >= s->n)
      return chakra_error_set(err, CHAKRA_EINVAL, "trace set: group \"%s\" names rank %u, but the set has %u rank(s)",
                              cg_quote(name, qn, sizeof qn), ranks[k], s->n);
  return cg_add_group(&s->groups, name, ranks, n) ? chakra_error_set(err, CHAKRA_ENOMEM, "out of memory") : 0;
}
