/* dot.c - Graphviz DOT and GraphML views of one rank; see include/chakra/views.h.
 *
 * A view is built in three steps over the graph's arrays, all linear:
 * select graph nodes (all, a neighbourhood, the critical path), fold
 * selected compute nodes into boxes (optional), then collect the edges
 * between the drawn nodes, deduplicated. Names are read back from the file
 * only for the nodes drawn on their own. */
#include "chakra/views.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/utf8.h"
#include "../util/xmltext.h"
#include "chakra/attr.h"
#include "chakra/node.h"
#include "nodescan.h"
#include "../util/textout.h"
#include "../util/cmp.h"
#include "../util/vec.h"

#define NONE UINT32_MAX
#define NAME_MAX_CHARS 60

enum { VN_CRIT = 1, VN_FOCUS = 2, VN_BOX = 4 };
enum { VE_DATA = 1, VE_CTRL = 2, VE_CRIT = 4 };

typedef struct vnode {
  uint32_t rep;        /* graph index of the node, or of a box's first member */
  uint32_t count;      /* graph nodes folded into it */
  uint64_t total_us, min_id, max_id;
  uint8_t flags;
} vnode;

typedef struct view {
  const chakra_graph *g;
  const chakra_view_options *opt;
  uint8_t *sel;        /* graph index -> selected */
  uint8_t *crit;       /* graph index -> on the critical path (or NULL) */
  uint32_t *pred;      /* critical path predecessor (or NULL) */
  uint32_t *vof;       /* graph index -> view node, or NONE */
  vnode *vn;
  size_t nv;
  uint64_t *edges;     /* from << 32 | to, sorted, unique */
  uint8_t *eflags;
  size_t ne;
  char **names;        /* per view node drawn on its own, else NULL */
  uint64_t critical_us;
  chakra_error *err;
} view;

static int oom(view *v) { return chakra_error_set(v->err, CHAKRA_ENOMEM, "%s: out of memory", v->g->path); }

static int kind_of(const chakra_gnode *n) {
  chakra_node_class c;
  chakra_node_classify(n, 0, 0, &c);
  return c.kind;
}

static int is_comm(const chakra_gnode *n) {
  int k = kind_of(n);
  return k == CHAKRA_KIND_COLL || k == CHAKRA_KIND_SEND || k == CHAKRA_KIND_RECV;
}

/* Compute nodes, GPU or CPU, fold into boxes. */
static int foldable(const chakra_gnode *n) {
  int k = kind_of(n);
  return k == CHAKRA_KIND_COMPUTE || k == CHAKRA_KIND_CPU;
}

/* ---- selection ---- */

/* Marks nodes within depth hops of start, following deps (up) or children
 * (down); queue is scratch for n entries, dist too. */
static void bfs(const chakra_graph *g, uint32_t start, uint32_t depth, int up, uint8_t *sel, uint32_t *queue,
                uint32_t *dist) {
  size_t head = 0, tail = 0;
  queue[tail++] = start;
  dist[start] = 0;
  sel[start] = 1;
  const uint32_t *off = up ? g->dep_off : g->child_off, *adj = up ? g->deps : g->children;
  while (head < tail) {
    uint32_t x = queue[head++];
    if (dist[x] >= depth) continue;
    for (uint32_t k = off[x]; k < off[x + 1]; k++) {
      uint32_t y = adj[k];
      if (dist[y] != NONE) continue;
      dist[y] = dist[x] + 1;
      sel[y] = 1;
      queue[tail++] = y;
    }
  }
}

static int select_around(view *v) {
  const chakra_graph *g = v->g;
  uint32_t f = chakra_graph_find(g, v->opt->around_id);
  if (f == NONE)
    return chakra_error_set(v->err, CHAKRA_EINVAL, "%s: no node with id %llu", g->path,
                            (unsigned long long)v->opt->around_id);
  uint32_t *queue = malloc(g->n * sizeof *queue), *dist = malloc(g->n * sizeof *dist);
  if (!queue || !dist) {
    free(queue);
    free(dist);
    return oom(v);
  }
  for (int up = 0; up < 2; up++) {
    memset(dist, 0xff, g->n * sizeof *dist);
    bfs(g, f, v->opt->depth, up, v->sel, queue, dist);
  }
  free(queue);
  free(dist);
  return 0;
}

/* The longest duration_micros path, remembered through predecessors; the
 * graph's own critical_path() gives only its end. */
static int find_critical(view *v) {
  const chakra_graph *g = v->g;
  if (g->unordered)
    return chakra_error_set(v->err, CHAKRA_EINVAL,
                            "%s: the critical path is undefined: %zu nodes are on dependency cycles "
                            "(try --ignore-ctrl-deps)", g->path, g->unordered);
  uint64_t *dist = malloc((g->n ? g->n : 1) * sizeof *dist);
  v->pred = malloc((g->n ? g->n : 1) * sizeof *v->pred);
  v->crit = calloc(g->n ? g->n : 1, 1);
  if (!dist || !v->pred || !v->crit) {
    free(dist);
    return oom(v);
  }
  uint32_t end = NONE;
  uint64_t best = 0;
  for (size_t t = 0; t < g->n; t++) {
    uint32_t x = g->topo[t], p = NONE;
    uint64_t d = 0;
    for (uint32_t k = g->dep_off[x]; k < g->dep_off[x + 1]; k++)
      if (p == NONE || dist[g->deps[k]] > d) d = dist[g->deps[k]], p = g->deps[k];
    dist[x] = d + g->nodes[x].duration_micros;
    v->pred[x] = p;
    /* ties go to the later node, so zero-time sinks stay on the path */
    if (end == NONE || dist[x] >= best) best = dist[x], end = x;
  }
  free(dist);
  v->critical_us = best;
  for (uint32_t x = end; x != NONE; x = v->pred[x]) v->crit[x] = 1;
  return 0;
}

static void select_critical(view *v) {
  const chakra_graph *g = v->g;
  for (uint32_t x = 0; x < g->n; x++) {
    if (!v->crit[x]) continue;
    v->sel[x] = 1;
    for (uint32_t k = g->dep_off[x]; k < g->dep_off[x + 1]; k++) v->sel[g->deps[k]] = 1;
    for (uint32_t k = g->child_off[x]; k < g->child_off[x + 1]; k++) v->sel[g->children[k]] = 1;
  }
}

static int select_nodes(view *v) {
  const chakra_view_options *o = v->opt;
  if (!o->around && !o->critical_path) {
    memset(v->sel, 1, v->g->n);
    return 0;
  }
  int rc = o->around ? select_around(v) : 0;
  if (!rc && o->critical_path) select_critical(v);
  return rc;
}

/* ---- folding ---- */

static uint32_t uf_find(uint32_t *parent, uint32_t x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

/* Compute nodes fold together when an edge joins them and they follow the
 * same number of communication nodes on their longest incoming path
 * (level). Every edge keeps or raises the level, and raises it when it
 * leaves a communication node, so the folded graph has no cycle when the
 * trace has none. */
static int fold(view *v, uint32_t *root) {
  const chakra_graph *g = v->g;
  uint32_t *level = calloc(g->n ? g->n : 1, sizeof *level);
  if (!level) return oom(v);
  for (size_t t = 0; t < g->n; t++) {
    uint32_t x = g->topo[t], l = 0;
    for (uint32_t k = g->dep_off[x]; k < g->dep_off[x + 1]; k++) {
      uint32_t d = g->deps[k], ld = level[d] + (uint32_t)is_comm(&g->nodes[d]);
      if (ld > l) l = ld;
    }
    level[x] = l;
  }
  for (uint32_t x = 0; x < g->n; x++) root[x] = x;
  for (uint32_t x = 0; x < g->n; x++) {
    if (!v->sel[x] || !foldable(&g->nodes[x])) continue;
    for (uint32_t k = g->dep_off[x]; k < g->dep_off[x + 1]; k++) {
      uint32_t d = g->deps[k];
      if (!v->sel[d] || !foldable(&g->nodes[d]) || level[d] != level[x]) continue;
      uint32_t a = uf_find(root, x), b = uf_find(root, d);
      if (a != b) root[a < b ? b : a] = a < b ? a : b;
    }
  }
  free(level);
  return 0;
}

/* Gives every selected node its view node, in topological order so that
 * the file reads top to bottom. */
static int make_vnodes(view *v) {
  const chakra_graph *g = v->g;
  uint32_t *root = NULL;
  if (v->opt->collapse && !(root = malloc((g->n ? g->n : 1) * sizeof *root))) return oom(v);
  int rc = root ? fold(v, root) : 0;
  size_t cap = 0;
  if (rc || VEC_RESERVE(v->vn, cap, 1024)) {
    free(root);
    return rc ? rc : oom(v);
  }
  for (size_t t = 0; t < g->n; t++) {
    uint32_t x = g->topo[t];
    if (!v->sel[x]) continue;
    uint32_t r = root ? uf_find(root, x) : x;
    const chakra_gnode *gn = &g->nodes[x];
    if (root && v->vof[r] != NONE) {
      vnode *b = &v->vn[v->vof[r]];
      v->vof[x] = v->vof[r];
      b->count++;
      b->total_us += gn->duration_micros;
      if (gn->id < b->min_id) b->min_id = gn->id;
      if (gn->id > b->max_id) b->max_id = gn->id;
      b->flags |= VN_BOX | (v->crit && v->crit[x] ? VN_CRIT : 0);
      continue;
    }
    if (VEC_ROOM(v->vn, v->nv, cap, 1)) {
      free(root);
      return oom(v);
    }
    vnode *b = &v->vn[v->nv];
    *b = (vnode){.rep = x, .count = 1, .total_us = gn->duration_micros, .min_id = gn->id, .max_id = gn->id};
    if (v->crit && v->crit[x]) b->flags |= VN_CRIT;
    if (v->opt->around && gn->id == v->opt->around_id) b->flags |= VN_FOCUS;
    v->vof[x] = (uint32_t)v->nv;
    if (r != x) v->vof[r] = (uint32_t)v->nv; /* the root comes later in topo order */
    v->nv++;
  }
  free(root);
  return 0;
}

/* ---- edges ---- */

/* Edge flags ride in the low bits of a copy of the key while sorting. */
static int make_edges(view *v) {
  const chakra_graph *g = v->g;
  size_t cap = 0;
  for (uint32_t x = 0; x < g->n; x++)
    if (v->sel[x]) cap += g->dep_off[x + 1] - g->dep_off[x];
  uint64_t *e = malloc((cap ? cap : 1) * sizeof *e);
  if (!e) return oom(v);
  size_t n = 0;
  for (uint32_t x = 0; x < g->n; x++) {
    if (!v->sel[x]) continue;
    uint32_t to = v->vof[x];
    for (uint32_t k = g->dep_off[x]; k < g->dep_off[x + 1]; k++) {
      uint32_t d = g->deps[k];
      if (!v->sel[d] || v->vof[d] == to) continue;
      uint64_t f = k - g->dep_off[x] < g->n_data[x] ? VE_DATA : VE_CTRL;
      if (v->crit && v->crit[x] && v->pred[x] == d) f |= VE_CRIT;
      /* view node indexes < 2^29 leave room for three flag bits */
      e[n++] = ((uint64_t)v->vof[d] << 35) | ((uint64_t)to << 3) | f;
    }
  }
  qsort(e, n, sizeof *e, cmp_u64);
  v->eflags = malloc(n ? n : 1);
  if (!v->eflags) {
    free(e);
    return oom(v);
  }
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t key = e[i] >> 3;
    if (m && e[m - 1] == key) {
      v->eflags[m - 1] |= (uint8_t)(e[i] & 7);
      continue;
    }
    uint8_t f = (uint8_t)(e[i] & 7);
    e[m] = key;
    v->eflags[m++] = f;
  }
  v->edges = e;
  v->ne = m;
  return 0;
}

/* ---- names ---- */

static int keep_name(void *ctx, uint32_t i, const nodescan *n, const uint8_t *raw, size_t len) {
  (void)raw, (void)len;
  view *v = ctx;
  if (i >= v->g->n) return 0;
  uint32_t k = v->vof[i];
  if (k == NONE || (v->vn[k].flags & VN_BOX) || v->vn[k].rep != i) return 0;
  if (!(v->names[k] = malloc(n->name_len + 1))) return CHAKRA_ENOMEM;
  if (n->name_len) memcpy(v->names[k], n->name, n->name_len);
  v->names[k][n->name_len] = 0;
  return 0;
}

static int read_names(view *v) {
  if (!(v->names = calloc(v->nv ? v->nv : 1, sizeof *v->names))) return oom(v);
  int rc = nodescan_graph(v->g, 0, keep_name, v, v->err);
  return rc == CHAKRA_ENOMEM ? oom(v) : rc;
}

/* ---- text output ---- */

static const char *short_type(int32_t t) {
  static const char *const names[] = {"INVALID", "METADATA", "MEM_LOAD", "MEM_STORE",
                                      "COMP", "SEND", "RECV", "COLL"};
  return t >= 0 && t < 8 ? names[t] : "UNKNOWN";
}

static const char *fill_colour(const chakra_gnode *n) {
  switch (kind_of(n)) {
    case CHAKRA_KIND_CPU: return "#deebf7";
    case CHAKRA_KIND_COMPUTE: return "#9ecae1";
    case CHAKRA_KIND_COLL: return "#fdae6b";
    case CHAKRA_KIND_SEND: return "#a1d99b";
    case CHAKRA_KIND_RECV: return "#c7e9c0";
    case CHAKRA_KIND_MEM_LOAD:
    case CHAKRA_KIND_MEM_STORE: return "#bcbddc";
    case CHAKRA_KIND_METADATA: return "#d9d9d9";
    default: return "#ffffff";
  }
}

/* Human text of a node's cost and communication, e.g. "ALL_REDUCE 8.2 MB". */
static void describe(const chakra_graph *g, const vnode *b, char *out, size_t size) {
  const chakra_gnode *n = &g->nodes[b->rep];
  if (b->flags & VN_BOX) {
    snprintf(out, size, "%u compute nodes\n%llu us\nids %llu..%llu", b->count, (unsigned long long)b->total_us,
             (unsigned long long)b->min_id, (unsigned long long)b->max_id);
    return;
  }
  int len = snprintf(out, size, "#%llu %s", (unsigned long long)n->id, short_type(n->type));
  if (len < 0 || (size_t)len >= size) return;
  char *p = out + len;
  size_t left = size - (size_t)len;
  int kind = kind_of(n);
  if (kind == CHAKRA_KIND_COLL && (n->comm_type >= 0 || n->size)) {
    const char *ct = n->comm_type >= 0 ? chakra_comm_type_name(n->comm_type) : NULL;
    snprintf(p, left, " %s %llu B%s%s", ct ? ct : "?", (unsigned long long)n->size, n->pg ? " pg " : "",
             chakra_node_pg(g, n));
  } else if (kind == CHAKRA_KIND_SEND) {
    snprintf(p, left, " to %d, %llu B, tag %d", n->comm_dst, (unsigned long long)n->size, n->comm_tag);
  } else if (kind == CHAKRA_KIND_RECV) {
    snprintf(p, left, " from %d, %llu B, tag %d", n->comm_src, (unsigned long long)n->size, n->comm_tag);
  } else if (n->duration_micros || foldable(n)) {
    snprintf(p, left, " %llu us%s", (unsigned long long)n->duration_micros, n->flags & CHAKRA_GNODE_CPU ? " cpu" : "");
  }
}

/* Valid UTF-8 of at most max_chars characters (an ellipsis marks a cut);
 * returns a malloc'd string or NULL. */
static char *clean_text(const char *s, size_t max_chars) {
  size_t n = strlen(s);
  char *u = malloc(3 * n + 4);
  if (!u) return NULL;
  size_t len = utf8_sanitize((const unsigned char *)s, n, u), chars = 0;
  for (size_t i = 0; i < len; i++) {
    if (((unsigned char)u[i] & 0xc0) == 0x80) continue;
    if (max_chars && chars++ == max_chars) {
      memcpy(u + i, "\xe2\x80\xa6", 3); /* U+2026 */
      len = i + 3;
      break;
    }
  }
  u[len] = 0;
  return u;
}

/* Graphviz's scanner refuses a quoted string longer than 16384 bytes
 * ("longer than 16384?"), so a longer text is written as pieces joined by
 * DOT's '+' (one string to Graphviz), each cut between characters. */
#define DOT_PIECE 4096

/* A DOT double-quoted string: quote and backslash escaped (so "\N" and the
 * like stay literal), newline as \n, other control characters as spaces. */
static void dot_string(jsonw *w, const char *s) {
  size_t piece = 0;
  jsonw_char(w, '"');
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (piece >= DOT_PIECE && (c & 0xc0) != 0x80) {
      jsonw_lit(w, "\" + \"");
      piece = 0;
    }
    if (c == '"' || c == '\\') jsonw_char(w, '\\'), jsonw_char(w, (char)c), piece += 2;
    else if (c == '\n') jsonw_lit(w, "\\n"), piece += 2;
    else jsonw_char(w, c < 0x20 || c == 0x7f ? ' ' : (char)c), piece++;
  }
  jsonw_char(w, '"');
}

static char *node_label(const view *v, size_t k) {
  char desc[256];
  describe(v->g, &v->vn[k], desc, sizeof desc);
  char *name = clean_text(v->names[k] ? v->names[k] : "", NAME_MAX_CHARS);
  if (!name) return NULL;
  size_t n = strlen(name) + strlen(desc) + 2;
  char *label = malloc(n);
  if (label) snprintf(label, n, "%s%s%s", name, *name ? "\n" : "", desc);
  free(name);
  return label;
}

static int write_dot(const view *v, jsonw *w, const char *title) {
  jsonw_lit(w, "digraph chakra {\n  graph [rankdir=TB, labelloc=t, fontname=\"Helvetica\", label=");
  dot_string(w, title);
  jsonw_lit(w, "];\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n"
               "  edge [color=\"#555555\", arrowsize=0.6];\n");
  for (size_t k = 0; k < v->nv; k++) {
    const vnode *b = &v->vn[k];
    char *label = node_label(v, k);
    if (!label) return CHAKRA_ENOMEM;
    jsonw_lit(w, "  n");
    jsonw_u64(w, k);
    jsonw_lit(w, " [label=");
    dot_string(w, label);
    free(label);
    jsonw_lit(w, ", fillcolor=\"");
    jsonw_lit(w, b->flags & VN_BOX ? "#c6dbef" : fill_colour(&v->g->nodes[b->rep]));
    jsonw_char(w, '"');
    if (b->flags & VN_BOX) jsonw_lit(w, ", shape=box3d, style=filled");
    else if (is_comm(&v->g->nodes[b->rep])) jsonw_lit(w, ", shape=ellipse, style=filled");
    if (b->flags & VN_CRIT) jsonw_lit(w, ", color=\"#d62728\", penwidth=2.5");
    if (b->flags & VN_FOCUS) jsonw_lit(w, ", peripheries=2, penwidth=2");
    jsonw_lit(w, "];\n");
  }
  for (size_t i = 0; i < v->ne; i++) {
    jsonw_lit(w, "  n");
    jsonw_u64(w, v->edges[i] >> 32);
    jsonw_lit(w, " -> n");
    jsonw_u64(w, v->edges[i] & 0xffffffffu);
    uint8_t f = v->eflags[i];
    if (!(f & VE_DATA)) jsonw_lit(w, " [style=dashed]");
    if (f & VE_CRIT) jsonw_lit(w, " [color=\"#d62728\", penwidth=2.5]");
    jsonw_lit(w, ";\n");
  }
  jsonw_lit(w, "}\n");
  return 0;
}

static void xml_data(jsonw *w, const char *key, const char *value) {
  jsonw_lit(w, "<data key=\"");
  jsonw_lit(w, key);
  jsonw_lit(w, "\">");
  xmltext_put(w, value);
  jsonw_lit(w, "</data>");
}

static void xml_data_u64(jsonw *w, const char *key, uint64_t value) {
  char buf[24];
  snprintf(buf, sizeof buf, "%llu", (unsigned long long)value);
  xml_data(w, key, buf);
}

static int write_graphml(const view *v, jsonw *w) {
  static const char *const keys[][4] = {
      {"name", "node", "name", "string"},        {"type", "node", "type", "string"},
      {"node_id", "node", "node_id", "long"},     {"duration_us", "node", "duration_us", "long"},
      {"count", "node", "count", "long"},         {"label", "node", "label", "string"},
      {"critical", "node", "critical", "boolean"}, {"kind", "edge", "kind", "string"},
      {"on_critical", "edge", "critical", "boolean"}};
  jsonw_lit(w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n");
  for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
    jsonw_lit(w, "<key id=\"");
    jsonw_lit(w, keys[i][0]);
    jsonw_lit(w, "\" for=\"");
    jsonw_lit(w, keys[i][1]);
    jsonw_lit(w, "\" attr.name=\"");
    jsonw_lit(w, keys[i][2]);
    jsonw_lit(w, "\" attr.type=\"");
    jsonw_lit(w, keys[i][3]);
    jsonw_lit(w, "\"/>\n");
  }
  jsonw_lit(w, "<graph id=\"G\" edgedefault=\"directed\">\n");
  for (size_t k = 0; k < v->nv; k++) {
    const vnode *b = &v->vn[k];
    const chakra_gnode *n = &v->g->nodes[b->rep];
    char *label = node_label(v, k), *name = v->names[k] ? clean_text(v->names[k], 0) : NULL;
    if (!label || (v->names[k] && !name)) {
      free(label);
      return CHAKRA_ENOMEM;
    }
    jsonw_lit(w, "<node id=\"n");
    jsonw_u64(w, k);
    jsonw_lit(w, "\">");
    if (name) xml_data(w, "name", name);
    xml_data(w, "type", b->flags & VN_BOX ? "COMPUTE_GROUP" : short_type(n->type));
    if (!(b->flags & VN_BOX)) xml_data_u64(w, "node_id", n->id);
    xml_data_u64(w, "duration_us", b->total_us);
    xml_data_u64(w, "count", b->count);
    xml_data(w, "label", label);
    xml_data(w, "critical", b->flags & VN_CRIT ? "true" : "false");
    jsonw_lit(w, "</node>\n");
    free(label);
    free(name);
  }
  for (size_t i = 0; i < v->ne; i++) {
    jsonw_lit(w, "<edge source=\"n");
    jsonw_u64(w, v->edges[i] >> 32);
    jsonw_lit(w, "\" target=\"n");
    jsonw_u64(w, v->edges[i] & 0xffffffffu);
    jsonw_lit(w, "\">");
    xml_data(w, "kind", v->eflags[i] & VE_DATA ? "data" : "ctrl");
    xml_data(w, "on_critical", v->eflags[i] & VE_CRIT ? "true" : "false");
    jsonw_lit(w, "</edge>\n");
  }
  jsonw_lit(w, "</graph>\n</graphml>\n");
  return 0;
}

static int write_file(const view *v, const char *path, chakra_error *err) {
  textout t;
  int rc = textout_open(&t, path, err);
  if (rc) return rc;
  const char *slash = strrchr(v->g->path, '/');
  const char *title = v->opt->title ? v->opt->title : slash ? slash + 1 : v->g->path;
  char *clean_title = clean_text(title, 0);
  rc = !clean_title ? CHAKRA_ENOMEM
       : v->opt->format == CHAKRA_VIEW_GRAPHML ? write_graphml(v, &t.w) : write_dot(v, &t.w, clean_title);
  free(clean_title);
  if (rc) chakra_error_set(err, rc, "out of memory");
  return textout_close(&t, rc, err);
}

static void view_free(view *v) {
  free(v->sel);
  free(v->crit);
  free(v->pred);
  free(v->vof);
  free(v->vn);
  free(v->edges);
  free(v->eflags);
  for (size_t k = 0; v->names && k < v->nv; k++) free(v->names[k]);
  free(v->names);
}

static int too_many(const view *v) {
  const chakra_view_options *o = v->opt;
  return chakra_error_set(v->err, CHAKRA_EINVAL,
                          "%s: the view has %zu nodes, more than the limit of %llu; narrow it with "
                          "%s%s--critical-path, or raise --max-nodes (0 = no limit; layouts of thousands of "
                          "nodes take dot minutes)", v->g->path, v->nv, (unsigned long long)o->max_nodes,
                          o->collapse ? "" : "--collapse, ", o->around ? "a smaller --depth, " : "--around ID --depth K, ");
}

int chakra_view_write(const chakra_graph *g, const char *out_path, const chakra_view_options *opt,
                      chakra_view_info *info, chakra_error *err) {
  view v = {.g = g, .opt = opt, .err = err};
  size_t n = g->n ? g->n : 1;
  if (g->n >= (1u << 29))
    return chakra_error_set(err, CHAKRA_EINVAL, "%s: views are limited to 2^29 nodes", g->path);
  v.sel = calloc(n, 1);
  v.vof = malloc(n * sizeof *v.vof);
  int rc = !v.sel || !v.vof ? oom(&v) : 0;
  if (!rc) memset(v.vof, 0xff, n * sizeof *v.vof);
  if (!rc && opt->critical_path) rc = find_critical(&v);
  if (!rc) rc = select_nodes(&v);
  if (!rc) rc = make_vnodes(&v);
  if (!rc && opt->max_nodes && v.nv > opt->max_nodes) rc = too_many(&v);
  if (!rc) rc = make_edges(&v);
  if (!rc) rc = read_names(&v);
  if (!rc) rc = write_file(&v, out_path, err);
  if (!rc && info) {
    memset(info, 0, sizeof *info);
    info->nodes = v.nv;
    info->edges = v.ne;
    for (uint32_t x = 0; x < g->n; x++) info->graph_nodes += v.sel[x];
    for (size_t k = 0; k < v.nv; k++) info->boxes += (v.vn[k].flags & VN_BOX) != 0;
    info->critical_us = v.critical_us;
  }
  view_free(&v);
  return rc;
}
