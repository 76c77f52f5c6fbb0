/* textwl.c - ASTRA-sim 1.0 text workloads -> Chakra ETs (chakra convert
 * text); see include/chakra/ingest.h and docs/convert.md.
 *
 * The graph of each parallelism kind is built exactly as the reference
 * text converter builds it (same nodes, names, dependency order), into
 * arrays; references to "the node of layer L" are array indexes. By
 * default a NONE communication creates no node: whatever would have waited
 * for it waits for the node it would have waited for. --compat keeps the
 * reference's all-reduce nodes for NONE and its ids counting on across the
 * NPU files. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/instream.h"
#include "../util/utf8.h"
#include "chakra/build.h"
#include "chakra/ingest.h"
#include "../util/strbuf.h"
#include "../util/diag.h"
#include "../util/vec.h"

enum { T_COMP = 4, T_COLL = 7 };
enum { K_MICRO, K_DATA, K_MODEL, K_HDM, K_HMD, K_DLRM };

typedef struct layer {
  char *name;
  int64_t fwd_comp, fwd_size, ig_comp, ig_size, wg_comp, wg_size;
  char *fwd_type, *ig_type, *wg_type;
  /* node references of the pass being built (-1 = none) */
  int fwd_comp_n, fwd_comm_n, ig_comp_n, ig_comm_n, wg_comp_n, wg_comm_n;
} layer;

typedef struct tnode {
  char *name;
  int type;
  uint64_t dur;
  int64_t comm_type, comm_size;
  uint32_t dep_off, ndeps;
} tnode;

typedef struct tgraph {
  int compat;
  tnode *v;
  size_t n, cap;
  int *deps; /* node indexes */
  size_t ndeps, capdeps;
  int oom;
} tgraph;

static int g_new(tgraph *g, const char *name, int type) {
  if (VEC_ROOM(g->v, g->n, g->cap, 1)) {
    g->oom = 1;
    return -1;
  }
  tnode *x = &g->v[g->n];
  memset(x, 0, sizeof *x);
  x->name = strdup(name);
  x->type = type;
  x->dep_off = (uint32_t)g->ndeps;
  if (!x->name) g->oom = 1;
  return (int)g->n++;
}

/* Deps of a node are appended while it is the newest one, so each node's
 * list is contiguous. */
static void g_dep(tgraph *g, int child, int parent) {
  if (child < 0 || parent < 0) return;
  tnode *x = &g->v[child];
  if (!g->compat)
    for (uint32_t k = 0; k < x->ndeps; k++)
      if (g->deps[x->dep_off + k] == parent) return;
  int *d = VEC_PUSH(g->deps, g->ndeps, g->capdeps);
  if (!d) {
    g->oom = 1;
    return;
  }
  *d = parent;
  x->ndeps++;
}

static int comp(tgraph *g, const layer *l, const char *phase, int64_t t) {
  char name[512];
  snprintf(name, sizeof name, "COMP_NODE_%s_%s", l->name, phase);
  int i = g_new(g, name, T_COMP);
  if (i >= 0) g->v[i].dur = (uint64_t)t;
  return i;
}

static int comm_type_of(const char *t) {
  if (strcmp(t, "ALLREDUCE") == 0) return 0;
  if (strcmp(t, "ALLTOALL") == 0) return 6;
  if (strcmp(t, "ALLGATHER") == 0) return 2;
  if (strcmp(t, "REDUCESCATTER") == 0) return 7;
  return 0; /* the reference's default, NONE included */
}

/* A collective node depending on `after`. For NONE (default mode) there is
 * no node: the returned reference is `after` itself. */
static int comm(tgraph *g, const char *lname, const char *type, int64_t size, int after) {
  if (!g->compat && strcmp(type, "NONE") == 0) return after;
  char name[512];
  snprintf(name, sizeof name, "COMM_COLL_NODE_%s_%s", lname, type);
  int i = g_new(g, name, T_COLL);
  if (i < 0) return -1;
  g->v[i].comm_type = comm_type_of(type);
  g->v[i].comm_size = size;
  g_dep(g, i, after);
  return i;
}

static void reset_pass_state(layer *L, size_t n) {
  for (size_t i = 0; i < n; i++)
    L[i].fwd_comp_n = L[i].fwd_comm_n = L[i].ig_comp_n = L[i].ig_comm_n = L[i].wg_comp_n = L[i].wg_comm_n = -1;
}

static void build_micro(tgraph *g, layer *L, size_t n, uint32_t passes) {
  for (uint32_t p = 0; p < passes; p++)
    for (size_t i = 0; i < n; i++) comm(g, L[i].name, L[i].wg_type, L[i].wg_size, -1);
}

static void build_data(tgraph *g, layer *L, size_t n, uint32_t passes) {
  for (uint32_t p = 0; p < passes; p++) {
    int fwd = -1;
    for (size_t i = 0; i < n; i++) {
      fwd = comp(g, &L[i], "FWD", L[i].fwd_comp);
      if (i) g_dep(g, fwd, L[i - 1].fwd_comp_n);
      g_dep(g, fwd, L[i].wg_comm_n);
      L[i].fwd_comp_n = fwd;
    }
    for (size_t r = 0; r < n; r++) {
      layer *l = &L[n - 1 - r];
      int wg = comp(g, l, "BWD_WG", l->wg_comp);
      if (r == 0) g_dep(g, wg, fwd);
      else g_dep(g, wg, L[n - r].ig_comp_n);
      l->wg_comm_n = comm(g, l->name, l->wg_type, l->wg_size, wg);
      if (r != n - 1) {
        int ig = comp(g, l, "BWD_IG", l->ig_comp);
        g_dep(g, ig, wg);
        l->ig_comp_n = ig;
      }
    }
  }
}

/* The input-gradient compute of layer n - 1 - r on the way back (model
 * and hybrid parallelism): after the forward pass's last collective for
 * the first, after the layer above's weight gradient and input-gradient
 * collective for the others. */
static int input_grad(tgraph *g, layer *L, size_t n, size_t r, int fcomm) {
  layer *l = &L[n - 1 - r];
  int ig = comp(g, l, "BWD_IG", l->ig_comp);
  if (r == 0) {
    g_dep(g, ig, fcomm);
  } else {
    g_dep(g, ig, L[n - r].wg_comp_n);
    g_dep(g, ig, L[n - r].ig_comm_n);
  }
  return ig;
}

static void build_model(tgraph *g, layer *L, size_t n, uint32_t passes, int64_t num_layers) {
  for (uint32_t p = 0; p < passes; p++) {
    int fcomm = -1;
    for (size_t i = 0; i < n; i++) {
      int fwd = comp(g, &L[i], "FWD", L[i].fwd_comp);
      if (i) g_dep(g, fwd, L[i - 1].fwd_comm_n);
      g_dep(g, fwd, L[i].wg_comp_n);
      L[i].fwd_comp_n = fwd;
      fcomm = comm(g, L[i].name, L[i].fwd_type, L[i].fwd_size, fwd);
      L[i].fwd_comm_n = fcomm;
    }
    for (size_t r = 0; r < n; r++) {
      layer *l = &L[n - 1 - r];
      int ig = input_grad(g, L, n, r, fcomm);
      if ((int64_t)r != num_layers - 1) l->ig_comm_n = comm(g, l->name, l->ig_type, l->ig_size, ig);
      int wg = comp(g, l, "BWD_WG", l->wg_comp);
      g_dep(g, wg, ig);
      l->wg_comp_n = wg;
    }
  }
}

/* HYBRID_DATA_MODEL and HYBRID_MODEL_DATA differ only in the name of the
 * input-gradient collective (the reference appends "_IG_COMM_" for the
 * first). */
static void build_hybrid(tgraph *g, layer *L, size_t n, uint32_t passes, int64_t num_layers, int ig_suffix) {
  for (uint32_t p = 0; p < passes; p++) {
    int fcomm = -1;
    for (size_t i = 0; i < n; i++) {
      int fwd = comp(g, &L[i], "FWD", L[i].fwd_comp);
      g_dep(g, fwd, L[i].wg_comm_n);
      if (i) g_dep(g, fwd, L[i - 1].fwd_comm_n);
      fcomm = comm(g, L[i].name, L[i].fwd_type, L[i].fwd_size, fwd);
      L[i].fwd_comm_n = fcomm;
    }
    for (size_t r = 0; r < n; r++) {
      layer *l = &L[n - 1 - r];
      int ig = input_grad(g, L, n, r, fcomm);
      if ((int64_t)r != num_layers - 1) {
        char nm[300];
        snprintf(nm, sizeof nm, "%s%s", l->name, ig_suffix ? "_IG_COMM_" : "");
        l->ig_comm_n = comm(g, nm, l->ig_type, l->ig_size, ig);
      }
      int wg = comp(g, l, "BWD_WG", l->wg_comp);
      g_dep(g, wg, ig);
      l->wg_comp_n = wg;
      l->wg_comm_n = comm(g, l->name, l->wg_type, l->wg_size, wg);
    }
  }
}

static void build_dlrm(tgraph *g, layer *L, size_t n, uint32_t passes, int64_t last_bottom) {
  for (uint32_t p = 0; p < passes; p++) {
    int fwd = -1;
    for (size_t i = 0; i < n; i++) {
      fwd = comp(g, &L[i], "FWD", L[i].fwd_comp);
      if (L[i].wg_comm_n >= 0) g_dep(g, fwd, L[i].wg_comm_n);
      else if (L[i].wg_comp_n >= 0) g_dep(g, fwd, L[i].wg_comp_n);
      if (i) g_dep(g, fwd, L[i - 1].fwd_comp_n);
      if ((int64_t)i == last_bottom) g_dep(g, fwd, L[0].fwd_comm_n);
      L[i].fwd_comp_n = fwd;
      if (strcmp(L[i].fwd_type, "ALLTOALL") == 0) L[i].fwd_comm_n = comm(g, L[i].name, L[i].fwd_type, L[i].fwd_size, fwd);
    }
    for (size_t r = 0; r < n; r++) {
      layer *l = &L[n - 1 - r];
      int wg = comp(g, l, "BWD_WG", l->wg_comp);
      if (r == 0) {
        g_dep(g, wg, fwd);
      } else {
        if (L[n - r].ig_comp_n >= 0) g_dep(g, wg, L[n - r].ig_comp_n);
        if (L[n - r - 1].ig_comm_n >= 0) g_dep(g, wg, L[n - r - 1].ig_comm_n);
      }
      l->wg_comp_n = wg;
      if (strcmp(l->wg_type, "NONE") != 0) l->wg_comm_n = comm(g, l->name, l->wg_type, l->wg_size, wg);
      int ig = -1;
      if (r != n - 1) {
        ig = comp(g, l, "BWD_IG", l->ig_comp);
        g_dep(g, ig, wg);
        l->ig_comp_n = ig;
      }
      if ((int64_t)(n - r - 1) == last_bottom + 1) {
        /* the first layer's input-gradient collective, after this layer */
        int c = comm(g, L[0].name, L[0].ig_type, L[0].ig_size, ig);
        L[0].ig_comm_n = c;
      }
    }
  }
}

/* ----------------------------------------------------------------- input */

typedef struct tparse {
  const char *path;
  chakra_error *err;
  char *text;
  size_t len;
  int kind;
  char kind_name[32];
  int64_t num_layers, last_bottom;
  layer *L;
  size_t n;
} tparse;

static int perr(tparse *t, size_t line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int perr(tparse *t, size_t line, const char *fmt, ...) {
  char at[4200];
  snprintf(at, sizeof at, "%s: line %zu", t->path, line);
  va_list ap;
  va_start(ap, fmt);
  int rc = chakra_diag_failv(t->err, CHAKRA_EFORMAT, at, fmt, ap);
  va_end(ap);
  return rc;
}

static int parse_int(const char *s, int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || end == s || *end) return -1;
  *out = v;
  return 0;
}

static int split(char *line, char **col, int max) {
  int n = 0;
  for (char *tok = strtok(line, " \t\r\v\f"); tok && n < max; tok = strtok(NULL, " \t\r\v\f")) col[n++] = tok;
  return n;
}

/* The reference reads the file as Python text: "\r\n" and a lone "\r" end
 * a line like "\n", and the text it stores in input_file has plain line
 * feeds. Done in place; returns the new length. */
static size_t universal_newlines(char *s, size_t n) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] != '\r') s[k++] = s[i];
    else if (i + 1 < n && s[i + 1] == '\n') continue;
    else s[k++] = '\n';
  }
  s[k] = 0;
  return k;
}

/* Names and input_file become proto3 strings, which must be UTF-8 (other
 * decoders refuse the file otherwise); the reference's Python read fails on
 * such input too, so it is refused with the place. */
static int check_utf8(tparse *t) {
  const unsigned char *u = (const unsigned char *)t->text;
  size_t line = 1;
  for (size_t i = 0; i < t->len;) {
    if (u[i] < 0x80) {
      line += u[i++] == '\n';
      continue;
    }
    uint32_t cp;
    size_t k = utf8_decode(u + i, t->len - i, &cp);
    if (!k)
      return chakra_error_set(t->err, CHAKRA_EFORMAT, "%s: line %zu (byte %zu): invalid UTF-8 (0x%02x); a text workload must be UTF-8",
                              t->path, line, i, u[i]);
    i += k;
  }
  return 0;
}

static int read_text(tparse *t) {
  instream *in;
  int rc = instream_open(&in, t->path, t->err);
  if (rc) return rc;
  strbuf b = {0};
  for (;;) {
    uint8_t *d = strbuf_room(&b, 65536);
    if (!d) {
      rc = chakra_error_set(t->err, CHAKRA_ENOMEM, "out of memory");
      break;
    }
    ssize_t n = instream_read(in, d, 65536, t->err);
    if (n < 0) {
      rc = (int)n;
      break;
    }
    if (n == 0) break;
    b.n += (size_t)n;
  }
  instream_close(in);
  if (!rc && !strbuf_cstr(&b)) rc = chakra_error_set(t->err, CHAKRA_ENOMEM, "out of memory");
  if (rc) {
    strbuf_free(&b);
    return rc;
  }
  t->text = b.s;
  t->len = b.n;
  if (strlen(t->text) != t->len) return chakra_error_set(t->err, CHAKRA_EFORMAT, "%s: binary data (a NUL byte) in a text workload", t->path);
  t->len = universal_newlines(t->text, t->len);
  return check_utf8(t);
}

static const char *const kinds[] = {"MICRO", "DATA", "MODEL", "HYBRID_DATA_MODEL", "HYBRID_MODEL_DATA", "HYBRID_DLRM",
                                    "HYBRID_DLRM_ENHANCED", NULL};

static int parse_text(tparse *t) {
  char *copy = strdup(t->text);
  if (!copy) return chakra_error_set(t->err, CHAKRA_ENOMEM, "out of memory");
  int rc = 0;
  size_t lineno = 0, cap = 0;
  char *save = NULL;
  int state = 0;
  for (char *line = copy; line && !rc; line = save) {
    char *nl = strchr(line, '\n');
    save = nl ? nl + 1 : NULL;
    if (nl) *nl = 0;
    lineno++;
    if (!nl && !*line) break; /* end of text */
    char *col[16];
    int nc = split(line, col, 16);
    if (state == 0) {
      if (!nc) {
        rc = perr(t, lineno, "empty: expected the parallelism (e.g. DATA)");
        break;
      }
      int k = -1;
      for (int i = 0; kinds[i]; i++)
        if (strcmp(col[0], kinds[i]) == 0) k = i;
      if (k < 0) {
        rc = perr(t, lineno, "parallelism '%.40s' is not supported (supported: MICRO, DATA, MODEL, HYBRID_DATA_MODEL, "
                             "HYBRID_MODEL_DATA, HYBRID_DLRM, HYBRID_DLRM_ENHANCED; HYBRID_TRANSFORMER and "
                             "HYBRID_CUSTOMIZED, with a per-layer parallelism column, are not)", col[0]);
        break;
      }
      snprintf(t->kind_name, sizeof t->kind_name, "%s", col[0]);
      t->kind = k == 6 ? K_DLRM : k;
      if (t->kind == K_DLRM) {
        if (nc < 2 || parse_int(col[1], &t->last_bottom)) {
          rc = perr(t, lineno, "%s needs the index of the last bottom layer after it", col[0]);
          break;
        }
      }
      state = 1;
      continue;
    }
    if (state == 1) {
      if (nc != 1 || parse_int(col[0], &t->num_layers) || t->num_layers < 0) {
        rc = perr(t, lineno, "expected the number of layers");
        break;
      }
      state = 2;
      continue;
    }
    if (!nc) continue; /* blank lines between or after layers */
    if (nc < 12) {
      rc = perr(t, lineno, "a layer needs 12 columns (name, reserved, fwd time, type, size, input-gradient time, "
                           "type, size, weight-gradient time, type, size, update time); this line has %d", nc);
      break;
    }
    if (VEC_ROOM(t->L, t->n, cap, 1)) {
      rc = chakra_error_set(t->err, CHAKRA_ENOMEM, "out of memory");
      break;
    }
    layer *l = &t->L[t->n];
    memset(l, 0, sizeof *l);
    int64_t *ints[6] = {&l->fwd_comp, &l->fwd_size, &l->ig_comp, &l->ig_size, &l->wg_comp, &l->wg_size};
    static const int cols[6] = {2, 4, 5, 7, 8, 10};
    static const char *const what[6] = {"forward time", "forward size", "input-gradient time",
                                        "input-gradient size", "weight-gradient time", "weight-gradient size"};
    for (int q = 0; q < 6 && !rc; q++) {
      if (parse_int(col[cols[q]], ints[q]))
        rc = perr(t, lineno, "column %d (%s) '%.40s' is not an integer", cols[q] + 1, what[q], col[cols[q]]);
      else if (*ints[q] < 0)
        rc = perr(t, lineno, "column %d (%s) is negative", cols[q] + 1, what[q]);
    }
    if (rc) break;
    l->name = strdup(col[0]);
    l->fwd_type = strdup(col[3]);
    l->ig_type = strdup(col[6]);
    l->wg_type = strdup(col[9]);
    t->n++;
    if (!l->name || !l->fwd_type || !l->ig_type || !l->wg_type) rc = chakra_error_set(t->err, CHAKRA_ENOMEM, "out of memory");
  }
  if (!rc && state < 2) rc = perr(t, lineno, "the file ends before the number of layers");
  if (!rc && t->n == 0) rc = perr(t, lineno, "no layers");
  free(copy);
  return rc;
}

/* ---------------------------------------------------------------- output */

static int put_meta(chakra_builder *b, const tparse *t, int compat, chakra_error *err) {
  chakra_builder_metadata(b, compat ? NULL : "1.0.0");
  chakra_builder_string(b, "schema", "1.0.2-chakra.1.0.0");
  chakra_builder_string(b, "input_file", t->text); /* read_text() refuses NUL bytes */
  if (!compat) chakra_builder_string(b, "producer", "chakra-c " CHAKRA_VERSION " convert text");
  return chakra_builder_put(b, err);
}

/* One node; deps holds the ids of its x->ndeps data deps. */
static int put_node(chakra_builder *b, const tnode *x, uint64_t id, const uint64_t *deps, chakra_error *err) {
  chakra_builder_node(b, id, x->name, x->type);
  chakra_builder_data_deps(b, deps, x->ndeps);
  chakra_builder_duration(b, x->dur);
  if (x->type == T_COLL) {
    chakra_builder_int64(b, "comm_type", x->comm_type);
    chakra_builder_int64(b, "comm_size", x->comm_size);
  }
  return chakra_builder_put(b, err);
}

/* One NPU's file into b: the metadata, then the nodes with ids from id_base. */
static int encode(const tgraph *g, uint64_t id_base, chakra_builder *b, const tparse *t, int compat,
                  chakra_error *err) {
  uint64_t *deps = malloc((g->ndeps ? g->ndeps : 1) * sizeof *deps);
  if (!deps) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (size_t k = 0; k < g->ndeps; k++) deps[k] = id_base + (uint64_t)g->deps[k];
  int rc = put_meta(b, t, compat, err);
  for (size_t i = 0; i < g->n && !rc; i++) rc = put_node(b, &g->v[i], id_base + i, deps + g->v[i].dep_off, err);
  free(deps);
  return rc;
}

static void free_graph(tgraph *g) {
  for (size_t i = 0; i < g->n; i++) free(g->v[i].name);
  free(g->v);
  free(g->deps);
  memset(g, 0, sizeof *g);
}

static int build(tgraph *g, tparse *t, uint32_t passes) {
  reset_pass_state(t->L, t->n);
  switch (t->kind) {
    case K_MICRO: build_micro(g, t->L, t->n, passes); break;
    case K_DATA: build_data(g, t->L, t->n, passes); break;
    case K_MODEL: build_model(g, t->L, t->n, passes, t->num_layers); break;
    case K_HDM: build_hybrid(g, t->L, t->n, passes, t->num_layers, 1); break;
    case K_HMD: build_hybrid(g, t->L, t->n, passes, t->num_layers, 0); break;
    default: build_dlrm(g, t->L, t->n, passes, t->last_bottom); break;
  }
  return g->oom ? -1 : 0;
}

/* Writing the ranks: one shared encoding (read by every worker), or with
 * compat one builder per worker, each rank's ids offset by its number. */
typedef struct tjob {
  const tgraph *g;
  const tparse *t;
  int compat;
  chakra_builder *shared;
  chakra_builder *own[CHAKRA_WORKLOAD_AUTO_THREADS];
} tjob;

static int text_rank(void *ctx, unsigned worker, uint32_t r, chakra_workload_writer *w, chakra_error *err) {
  tjob *j = ctx;
  chakra_builder *b = j->shared;
  if (j->compat) {
    b = j->own[worker];
    chakra_builder_clear(b);
    int rc = encode(j->g, (uint64_t)r * j->g->n, b, j->t, 1, err);
    if (rc) return rc;
  }
  return chakra_workload_writer_put_built(w, r, b, err);
}

int chakra_convert_text(const char *in_path, const char *out_prefix, const chakra_text_options *opt,
                        chakra_text_report *rep, chakra_error *err) {
  chakra_text_options defaults = {0};
  chakra_text_report local;
  chakra_error err_local; /* the readers and writers below copy messages through err */
  if (!err) err = &err_local;
  if (!opt) opt = &defaults;
  if (!rep) rep = &local;
  memset(rep, 0, sizeof *rep);
  uint32_t npus = opt->npus ? opt->npus : 1, passes = opt->passes ? opt->passes : 1;
  tparse t = {.path = in_path, .err = err};
  int rc = read_text(&t);
  if (!rc) rc = parse_text(&t);
  tgraph g = {.compat = opt->compat};
  if (!rc && build(&g, &t, passes)) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  if (!rc) {
    snprintf(rep->parallelism, sizeof rep->parallelism, "%s", t.kind_name);
    rep->layers = (uint32_t)t.n;
    rep->nodes_per_npu = g.n;
  }
  /* the writer keeps a few files open whatever the NPU count and renames
   * them all at the end, or removes them all; ranks are written on worker
   * threads (the same rank once encoded, or one per rank with compat ids) */
  chakra_workload_writer *w = NULL;
  chakra_builder *b = NULL;
  tjob j = {&g, &t, opt->compat, NULL, {NULL}};
  if (!rc && chakra_builder_new(&b)) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  if (!rc && !opt->compat) rc = encode(&g, 0, b, &t, 0, err);
  j.shared = b;
  for (unsigned k = 0; !rc && opt->compat && k < CHAKRA_WORKLOAD_AUTO_THREADS; k++)
    if (chakra_builder_new(&j.own[k])) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  if (!rc) rc = chakra_workload_writer_open(&w, out_prefix, npus, NULL, err);
  if (!rc) rc = chakra_workload_writer_put_ranks(w, 0, text_rank, &j, err);
  if (rc) chakra_workload_writer_discard(w);
  else rc = chakra_workload_writer_commit(w, err);
  for (unsigned k = 0; k < CHAKRA_WORKLOAD_AUTO_THREADS; k++) chakra_builder_free(j.own[k]);
  chakra_builder_free(b);
  free_graph(&g);
  for (size_t i = 0; i < t.n; i++) free(t.L[i].name), free(t.L[i].fwd_type), free(t.L[i].ig_type), free(t.L[i].wg_type);
  free(t.L);
  free(t.text);
  return rc;
}
