/* graph.c - loading one rank into compact arrays; see include/chakra/graph.h. */
#include "chakra/graph.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/idmap.h"
#include "../util/toposort.h"
#include "graphint.h"
#include "nodekind.h"
#include "../util/diag.h"
#include "../util/vec.h"
#include "readerint.h"


typedef struct loader {
  chakra_graph *g;
  const chakra_graph_options *opt;
  chakra_error *err;
  uint64_t *dep_ids;      /* raw ids, resolved to indexes later */
  size_t n_dep_ids, cap_dep_ids, cap_nodes;
  uint64_t cur_id, cur_offset;
  int failed;             /* an error was reported (validate mode keeps going) */
  bind_ref *bind;         /* the rank's binding of a class template, or NULL */
} loader;

static int problem(loader *L, chakra_severity sev, uint64_t id, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int tolerant(const loader *L) { return L->opt && L->opt->tolerant; }

static void diag(const loader *L, const chakra_problem *p) {
  if (L->opt && L->opt->diag) L->opt->diag(L->opt->diag_ctx, p);
}

/* Reports a problem of node id at off; returns nonzero when loading must stop. */
static int problem(loader *L, chakra_severity sev, uint64_t id, uint64_t off, const char *fmt, ...) {
  int stop = !tolerant(L) && sev >= CHAKRA_SEV_ERROR;
  va_list ap;
  va_start(ap, fmt);
  if (stop) {
    char at[4200];
    snprintf(at, sizeof at, "%s: node %llu at offset %llu", L->g->path, (unsigned long long)id,
             (unsigned long long)off);
    chakra_diag_failv(L->err, CHAKRA_EGRAPH, at, fmt, ap);
  } else {
    chakra_problem p = chakra_diag_on(sev, L->g->path);
    p.has_node = p.has_offset = 1;
    p.node_id = id;
    p.offset = off;
    chakra_diag_emitv(L->opt ? L->opt->diag : NULL, L->opt ? L->opt->diag_ctx : NULL, p, fmt, ap);
  }
  va_end(ap);
  if (sev >= CHAKRA_SEV_ERROR) L->failed = 1;
  return stop;
}

/* Unreadable attributes matter to validate; loading itself only needs the
 * values, so they are reported in tolerant mode only. */
static void attr_problem(void *ctx, const chakra_problem *ap) {
  loader *L = ctx;
  if (!tolerant(L)) return;
  chakra_problem p = *ap;
  p.file = L->g->path;
  p.has_offset = 1;
  p.offset = L->cur_offset;
  diag(L, &p);
  if (p.severity >= CHAKRA_SEV_ERROR) L->failed = 1;
}

static uint32_t intern_pg(chakra_graph *g, const char *name) {
  for (size_t i = 1; i < g->n_pg_names; i++)
    if (strcmp(g->pg_names[i], name) == 0) return (uint32_t)i;
  char **np = VEC_APPEND(g->pg_names, g->n_pg_names);
  if (!np) return 0;
  if ((*np = strdup(name))) return (uint32_t)(g->n_pg_names - 1);
  g->n_pg_names--;
  return 0;
}

/* Gives every per-node array room for nc nodes (dep_off for nc + 1). */
static int grow_nodes(loader *L, size_t nc) {
  chakra_graph *g = L->g;
  if (vec_resize(&g->nodes, nc, sizeof *g->nodes) || vec_resize(&g->n_data, nc, sizeof *g->n_data) ||
      vec_resize(&g->dep_off, nc + 1, sizeof *g->dep_off))
    return -1;
  L->cap_nodes = nc;
  return 0;
}

/* Makes room for node number g->n in every per-node array. */
static int reserve_node(loader *L) {
  if (L->g->n < L->cap_nodes) return 0;
  return grow_nodes(L, L->cap_nodes ? L->cap_nodes * 2 : 1024);
}

static int reserve_deps(loader *L, size_t need) { return VEC_RESERVE(L->dep_ids, L->cap_dep_ids, need); }

static int add_node(loader *L, const chakra_node *nd, uint64_t offset) {
  chakra_graph *g = L->g;
  if (g->n >= UINT32_MAX - 1)
    return chakra_error_set(L->err, CHAKRA_EINVAL, "%s: more than 4 billion nodes", g->path);
  size_t need = L->n_dep_ids + nd->n_data_deps + nd->n_ctrl_deps;
  if (need > UINT32_MAX)
    return chakra_error_set(L->err, CHAKRA_EINVAL, "%s: more than 4 billion dependencies", g->path);
  if (reserve_node(L) || reserve_deps(L, need))
    return chakra_error_set(L->err, CHAKRA_ENOMEM, "%s: out of memory", g->path);
  L->cur_id = nd->id;
  L->cur_offset = offset;
  chakra_std_attrs a;
  int arc = chakra_std_attrs_resolve(nd, &a, attr_problem, L);
  chakra_gnode *n = &g->nodes[g->n];
  nodekind_fill(n, nd, &a, offset, arc != 0);
  if (a.pg_name && a.pg_name[0] && !(n->pg = intern_pg(g, a.pg_name)))
    return chakra_error_set(L->err, CHAKRA_ENOMEM, "%s: out of memory", g->path);
  g->dep_off[g->n] = (uint32_t)L->n_dep_ids;
  /* Empty lists are NULL: memcpy must not see them. */
  if (nd->n_data_deps)
    memcpy(L->dep_ids + L->n_dep_ids, nd->data_deps, nd->n_data_deps * sizeof(uint64_t));
  L->n_dep_ids += nd->n_data_deps;
  if (nd->n_ctrl_deps)
    memcpy(L->dep_ids + L->n_dep_ids, nd->ctrl_deps, nd->n_ctrl_deps * sizeof(uint64_t));
  L->n_dep_ids += nd->n_ctrl_deps;
  g->n_data[g->n] = (uint32_t)nd->n_data_deps;
  g->raw_data_deps += nd->n_data_deps;
  g->raw_ctrl_deps += nd->n_ctrl_deps;
  g->n++;
  return 0;
}

static int copy_metadata(chakra_graph *g, const chakra_metadata *m) {
  size_t len = protobuf_c_message_get_packed_size(&m->base);
  uint8_t *buf = malloc(len ? len : 1);
  if (!buf) return -1;
  protobuf_c_message_pack(&m->base, buf);
  g->metadata = chakra_proto_msg__global_metadata__unpack(NULL, len, buf);
  free(buf);
  return g->metadata ? 0 : -1;
}

/* Gives back what doubling reserved beyond the last node (up to half of
 * the per-node arrays); a failed shrink keeps the larger block. */
static void shrink_nodes(loader *L) {
  chakra_graph *g = L->g;
  size_t n = g->n ? g->n : 1;
  if (L->cap_nodes <= n) return;
  (void)vec_resize(&g->nodes, n, sizeof *g->nodes);
  (void)vec_resize(&g->n_data, n, sizeof *g->n_data);
  (void)vec_resize(&g->dep_off, g->n + 1, sizeof *g->dep_off);
}

/* Sizes the per-node arrays for a plain file's node count (a fifth of a
 * simulator load was their doubling, measured on 8 x 100k nodes). */
static int presize_nodes(loader *L, chakra_reader *r, const char *path) {
  size_t n;
  int rc = reader_count_rest(r, &n, L->err);
  if (rc || n < 1024) return rc;
  return grow_nodes(L, n) ? chakra_error_set(L->err, CHAKRA_ENOMEM, "%s: out of memory", path) : 0;
}

static int read_nodes(loader *L, const chakra_input *in) {
  const char *path = chakra_input_name(in);
  chakra_reader *r;
  int rc = chakra_reader_open_input(&r, in, NULL, L->err);
  if (rc) return rc;
  reader_bind(r, L->bind);
  if ((rc = presize_nodes(L, r, path)) != 0) {
    chakra_reader_close(r);
    return rc;
  }
  if (copy_metadata(L->g, chakra_reader_metadata(r))) {
    chakra_reader_close(r);
    return chakra_error_set(L->err, CHAKRA_ENOMEM, "%s: out of memory", path);
  }
  chakra_node *nd;
  while ((rc = chakra_reader_next(r, &nd, L->err)) == 1)
    if ((rc = add_node(L, nd, chakra_reader_message_offset(r))) != 0) break;
  chakra_reader_close(r);
  if (rc < 0) return rc;
  /* dep_off always has one entry more than the capacity; an empty file has none. */
  if (!L->cap_nodes && grow_nodes(L, 1)) return chakra_error_set(L->err, CHAKRA_ENOMEM, "%s: out of memory", path);
  L->g->dep_off[L->g->n] = (uint32_t)L->n_dep_ids;
  shrink_nodes(L);
  return 0;
}

static int map_ids(loader *L) {
  chakra_graph *g = L->g;
  g->idmap_ = malloc(sizeof *g->idmap_);
  if (!g->idmap_ || idmap_init(g->idmap_, g->n, g->nodes, sizeof *g->nodes))
    return chakra_error_set(L->err, CHAKRA_ENOMEM, "%s: out of memory", g->path);
  for (uint32_t i = 0; i < g->n; i++) {
    uint32_t prev = idmap_insert(g->idmap_, i);
    if (prev != IDMAP_NONE &&
        problem(L, CHAKRA_SEV_ERROR, g->nodes[i].id, g->nodes[i].offset,
                "duplicate node id (first defined at offset %llu)",
                (unsigned long long)g->nodes[prev].offset))
      return CHAKRA_EGRAPH;
  }
  return 0;
}

/* Turns raw dep ids into indexes, in place: drops missing ctrl deps (they
 * are common in real traces), fails or drops missing data deps, removes
 * duplicates (a ctrl dep that is also a data dep counts once). stamp[] is
 * scratch marking the deps already kept for the current node. */
static int resolve_deps(loader *L) {
  chakra_graph *g = L->g;
  uint32_t *stamp = malloc((g->n ? g->n : 1) * sizeof *stamp);
  /* seen_as[j]: bit 0 the current node lists j in data_deps, bit 1 in
   * ctrl_deps (valid where stamp[j] says "current node"). */
  uint8_t *seen_as = malloc(g->n ? g->n : 1);
  /* 32-bit indexes overwrite the 64-bit ids in place: index w is written
   * at byte 4w, never past the id at k >= w still to be read. */
  unsigned char *out = (unsigned char *)L->dep_ids;
  if (!stamp || !seen_as) {
    free(stamp);
    free(seen_as);
    return chakra_error_set(L->err, CHAKRA_ENOMEM, "%s: out of memory", g->path);
  }
  memset(stamp, 0xff, (g->n ? g->n : 1) * sizeof *stamp);
  size_t w = 0;
  int rc = 0;
  for (uint32_t i = 0; i < g->n && !rc; i++) {
    size_t b = g->dep_off[i], e = g->dep_off[i + 1], nd = g->n_data[i];
    g->dep_off[i] = (uint32_t)w;
    uint32_t kept_data = 0;
    for (size_t k = b; k < e; k++) {
      int is_data = k - b < nd;
      if (!is_data && L->opt && L->opt->ignore_ctrl_deps) break;
      uint64_t id = L->dep_ids[k];
      uint32_t j = idmap_find(g->idmap_, id);
      if (j == IDMAP_NONE) {
        if (!is_data) {
          g->missing_ctrl_deps++;
        } else if (L->opt && L->opt->drop_missing_data_deps) {
          g->missing_data_deps_dropped++;
        } else if (problem(L, CHAKRA_SEV_ERROR, g->nodes[i].id, g->nodes[i].offset,
                           "data dep %llu not found", (unsigned long long)id)) {
          rc = CHAKRA_EGRAPH;
          break;
        }
        continue;
      }
      if (j == i && !is_data) {
        g->self_ctrl_deps++; /* older converters emit these; nothing to wait for */
        continue;
      }
      if (j == i) {
        if (problem(L, CHAKRA_SEV_ERROR, g->nodes[i].id, g->nodes[i].offset,
                    "data dep on itself")) {
          rc = CHAKRA_EGRAPH;
          break;
        }
        continue;
      }
      if (stamp[j] == i) {
        /* A parent in both lists is how PyTorch converters say "data flows
         * from it and it runs first": legal, merged, not a defect. */
        if (!is_data && seen_as[j] == 1) g->ctrl_also_data++;
        else g->duplicate_deps++;
        seen_as[j] |= is_data ? 1 : 2;
        continue;
      }
      stamp[j] = i;
      seen_as[j] = is_data ? 1 : 2;
      if (j > i) g->forward_deps++;
      memcpy(out + 4 * w++, &j, sizeof j);
      kept_data += is_data;
    }
    g->n_data[i] = kept_data;
  }
  g->dep_off[g->n] = (uint32_t)w;
  free(stamp);
  free(seen_as);
  if (rc) return rc;
  g->deps = realloc(L->dep_ids, (w ? w : 1) * sizeof *g->deps);
  if (!g->deps) g->deps = (uint32_t *)out;
  L->dep_ids = NULL;
  return 0;
}

static int build_children(loader *L) {
  chakra_graph *g = L->g;
  size_t m = g->dep_off[g->n];
  g->child_off = calloc(g->n + 1, sizeof *g->child_off);
  g->children = malloc((m ? m : 1) * sizeof *g->children);
  if (!g->child_off || !g->children)
    return chakra_error_set(L->err, CHAKRA_ENOMEM, "%s: out of memory", g->path);
  for (size_t k = 0; k < m; k++) g->child_off[g->deps[k] + 1]++;
  for (size_t i = 0; i < g->n; i++) g->child_off[i + 1] += g->child_off[i];
  uint32_t *fill = malloc((g->n ? g->n : 1) * sizeof *fill);
  if (!fill) return chakra_error_set(L->err, CHAKRA_ENOMEM, "%s: out of memory", g->path);
  memcpy(fill, g->child_off, g->n * sizeof *fill);
  for (uint32_t i = 0; i < g->n; i++)
    for (uint32_t k = g->dep_off[i]; k < g->dep_off[i + 1]; k++) g->children[fill[g->deps[k]]++] = i;
  free(fill);
  return 0;
}

/* Writers emit nodes by ascending id after their deps, and then file
 * order is already the canonical order: the smallest unplaced id always has
 * all its deps placed. Checking costs one pass instead of a heap. */
static int file_order_is_canonical(const chakra_graph *g) {
  if (g->forward_deps) return 0;
  for (size_t i = 1; i < g->n; i++)
    if (g->nodes[i].id <= g->nodes[i - 1].id) return 0;
  return 1;
}

/* Kahn's algorithm with ties broken by ascending id (util/topo) gives the
 * canonical order writers use. */
static int order_topo(loader *L) {
  chakra_graph *g = L->g;
  size_t n = g->n;
  g->topo = malloc((n ? n : 1) * sizeof *g->topo);
  if (!g->topo) return chakra_error_set(L->err, CHAKRA_ENOMEM, "%s: out of memory", g->path);
  if (file_order_is_canonical(g)) {
    for (uint32_t i = 0; i < n; i++) g->topo[i] = i;
    return 0;
  }
  uint32_t *indeg = malloc((n ? n : 1) * sizeof *indeg);
  topo_graph tg = {.n = n, .dep_off = g->dep_off, .deps = g->deps, .child_off = g->child_off,
                   .children = g->children, .keys = &g->nodes[0].id, .stride = sizeof *g->nodes};
  size_t done = 0;
  if (!indeg || topo_sort(&tg, g->topo, &done, indeg)) {
    free(indeg);
    return chakra_error_set(L->err, CHAKRA_ENOMEM, "%s: out of memory", g->path);
  }
  int rc = 0;
  g->unordered = n - done;
  if (done < n) {
    uint32_t start = 0;
    while (indeg[start] == 0) start++;
    uint32_t c = topo_cycle_node(&tg, indeg, start);
    if (problem(L, CHAKRA_SEV_ERROR, g->nodes[c].id, g->nodes[c].offset,
                "dependency cycle through this node (%zu nodes cannot be ordered)", n - done))
      rc = CHAKRA_EGRAPH;
    /* Append the unordered rest so topo still lists every node once. */
    for (uint32_t i = 0; i < n; i++)
      if (indeg[i]) g->topo[done++] = i;
  }
  free(indeg);
  return rc;
}

static void summary_line(loader *L, uint64_t count, const char *what) {
  if (count && L->opt)
    chakra_diag_warnf(L->opt->diag, L->opt->diag_ctx, L->g->path, "%llu %s", (unsigned long long)count, what);
}

/* What the load ignored is told once per kind, in both modes (validate and
 * coll check read these lines from here). */
static void summarise(loader *L) {
  chakra_graph *g = L->g;
  summary_line(L, g->missing_ctrl_deps, "control deps on absent ids ignored");
  summary_line(L, g->self_ctrl_deps, "control deps of nodes on themselves ignored");
  summary_line(L, g->duplicate_deps, "duplicate deps removed");
  summary_line(L, g->missing_data_deps_dropped, "data deps on absent ids dropped");
}

int chakra_graph_load(chakra_graph **out, const char *path, const chakra_graph_options *opt,
                      chakra_error *err) {
  chakra_input in = {.path = path};
  return chakra_graph_load_input(out, &in, opt, err);
}

/* What chakra_graph_read_node() re-reads: a FILE* (from where it was
 * when loading began) or a buffer; a file is reopened by its path. */
typedef struct graph_input {
  chakra_input in;
  int64_t start;
  char path[]; /* in.path's copy */
} graph_input;

/* Every graph is allocated as a box, so what only this file needs stays
 * out of the public struct (whose size is part of the ABI). */
typedef struct graph_box {
  chakra_graph g;
  graph_input *input;
  bind_ref *bind;
} graph_box;

static graph_input **input_of(const chakra_graph *g) { return &((graph_box *)g)->input; }

/* A file named otherwise than by its path (a class template read as one of
 * its ranks) is re-read by its path. */
static int keep_input(chakra_graph *g, const chakra_input *in) {
  if (in->path && (!in->name || strcmp(in->name, in->path) == 0)) return 0;
  graph_input *k = malloc(sizeof *k + (in->path ? strlen(in->path) + 1 : 0));
  if (!k) return -1;
  if (in->path) strcpy(k->path, in->path);
  k->in = (chakra_input){.path = in->path ? k->path : NULL, .file = in->file, .data = in->data, .size = in->size, .name = g->path};
  k->start = in->file ? ftello(in->file) : 0;
  *input_of(g) = k;
  return 0;
}

static int reopen(const chakra_graph *g, chakra_reader **r, chakra_error *err) {
  chakra_input file = {.path = g->path};
  const graph_input *k = *input_of(g);
  if (k && k->in.file && (k->start < 0 || fseeko(k->in.file, (off_t)k->start, SEEK_SET) != 0))
    return chakra_error_set(err, CHAKRA_EINVAL, "%s: the stream cannot be read again (not seekable)", g->path);
  int rc = chakra_reader_open_input(r, k ? &k->in : &file, NULL, err);
  if (!rc) reader_bind(*r, ((const graph_box *)g)->bind);
  return rc;
}

int chakra_graph_load_input(chakra_graph **out, const chakra_input *in, const chakra_graph_options *opt,
                            chakra_error *err) {
  return graph_load_bound(out, in, opt, NULL, err);
}

int graph_open_reader(const chakra_graph *g, chakra_reader **r, chakra_error *err) { return reopen(g, r, err); }

int graph_load_bound(chakra_graph **out, const chakra_input *in, const chakra_graph_options *opt, bind_ref *bind,
                     chakra_error *err) {
  *out = NULL;
  const char *path = chakra_input_name(in);
  chakra_graph *g = calloc(1, sizeof(graph_box));
  if (!g) return chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", path);
  ((graph_box *)g)->bind = bind_retain(bind);
  g->path = strdup(in->path && strcmp(in->path, "-") == 0 && !in->name ? "<stdin>" : path);
  char **none = VEC_APPEND(g->pg_names, g->n_pg_names); /* pg 0: none */
  if (none) *none = NULL;
  loader L = {.g = g, .opt = opt, .err = err, .bind = bind};
  int rc = !g->path || !g->pg_names || keep_input(g, in) ? chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", path)
                                                         : read_nodes(&L, in);
  if (!rc) rc = map_ids(&L);
  if (!rc) rc = resolve_deps(&L);
  if (!rc) rc = build_children(&L);
  if (!rc) rc = order_topo(&L);
  free(L.dep_ids);
  if (rc) {
    chakra_graph_free(g);
    return rc;
  }
  summarise(&L);
  *out = g;
  return 0;
}

void chakra_graph_free(chakra_graph *g) {
  if (!g) return;
  free(g->nodes);
  free(g->dep_off);
  free(g->n_data);
  free(g->deps);
  free(g->child_off);
  free(g->children);
  free(g->topo);
  for (size_t i = 1; i < g->n_pg_names; i++) free(g->pg_names[i]);
  free(g->pg_names);
  if (g->metadata) protobuf_c_message_free_unpacked(&g->metadata->base, NULL);
  if (g->idmap_) idmap_free(g->idmap_);
  free(g->idmap_);
  free(*input_of(g));
  bind_release(((graph_box *)g)->bind);
  free(g->path);
  free(g);
}

uint32_t chakra_graph_find(const chakra_graph *g, uint64_t id) {
  return idmap_find(g->idmap_, id);
}

int chakra_graph_read_node(const chakra_graph *g, uint32_t i, chakra_node **out, chakra_error *err) {
  *out = NULL;
  chakra_reader *r;
  int rc = reopen(g, &r, err);
  if (rc) return rc;
  const uint8_t *data;
  size_t len;
  rc = chakra_reader_seek(r, g->nodes[i].offset, err);
  if (!rc) rc = chakra_reader_next_raw(r, &data, &len, err);
  if (rc == 1) {
    *out = chakra_node_decode(data, len);
    rc = *out ? 0 : chakra_error_set(err, CHAKRA_EFORMAT, "%s: node at offset %llu no longer decodes",
                                     g->path, (unsigned long long)g->nodes[i].offset);
  } else if (rc == 0) {
    rc = chakra_error_set(err, CHAKRA_EIO, "%s: file changed since it was loaded", g->path);
  }
  chakra_reader_close(r);
  return rc;
}

uint64_t chakra_graph_critical_path(const chakra_graph *g, uint32_t *end) {
  *end = UINT32_MAX;
  if (!g->n) return 0;
  uint64_t *dist = malloc(g->n * sizeof *dist);
  if (!dist) return 0;
  uint64_t best = 0;
  for (size_t t = 0; t < g->n; t++) {
    uint32_t v = g->topo[t];
    uint64_t d = 0;
    for (uint32_t k = g->dep_off[v]; k < g->dep_off[v + 1]; k++)
      if (dist[g->deps[k]] > d) d = dist[g->deps[k]];
    uint64_t dur = g->nodes[v].duration_micros;
    dist[v] = d > UINT64_MAX - dur ? UINT64_MAX : d + dur; /* saturates, never wraps */
    if (*end == UINT32_MAX || dist[v] > best) best = dist[v], *end = v;
  }
  free(dist);
  return best;
}

size_t chakra_graph_memory(const chakra_graph *g) {
  size_t m = g->n * (sizeof(chakra_gnode) + 4 * sizeof(uint32_t)) + 2 * sizeof(uint32_t);
  m += 2 * (size_t)g->dep_off[g->n] * sizeof(uint32_t);
  m += idmap_memory(g->idmap_);
  return m;
}
