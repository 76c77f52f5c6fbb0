/* diffreport.c - summary figures and the text and JSON forms of a trace
 * comparison; see include/chakra/diff.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra/attr.h"
#include "chakra/diff.h"
#include "../util/textout.h"
#include "../util/vec.h"

typedef struct figures {
  chakra_diff_figure *v;
  size_t n, cap;
  int failed;
} figures;

static chakra_diff_figure *fig_next(figures *f) {
  chakra_diff_figure *x = VEC_PUSH(f->v, f->n, f->cap);
  if (!x) {
    f->failed = 1;
    return NULL;
  }
  memset(x, 0, sizeof *x);
  return x;
}

static void fig(figures *f, uint64_t a, uint64_t b, const char *fmt, const char *arg) {
  if (a == b) return;
  chakra_diff_figure *x = fig_next(f);
  if (!x) return;
  snprintf(x->label, sizeof x->label, fmt, arg);
  x->a = a, x->b = b;
}

static void fig_text(figures *f, const char *label, const char *a, const char *b) {
  if (strcmp(a ? a : "", b ? b : "") == 0) return;
  chakra_diff_figure *x = fig_next(f);
  if (!x) return;
  snprintf(x->label, sizeof x->label, "%s", label);
  x->text_a = a ? a : "", x->text_b = b ? b : "";
}

static const chakra_group_stats *group(const chakra_rank_stats *s, const char *name) {
  for (uint64_t i = 0; i < s->n_groups; i++)
    if (strcmp(s->groups[i].name, name) == 0) return &s->groups[i];
  return NULL;
}

static void groups(figures *f, const chakra_rank_stats *a, const chakra_rank_stats *b) {
  static const chakra_group_stats none = {0};
  for (int side = 0; side < 2; side++) {
    const chakra_rank_stats *s = side ? b : a, *o = side ? a : b;
    for (uint64_t i = 0; i < s->n_groups; i++) {
      const chakra_group_stats *x = &s->groups[i], *y = group(o, x->name);
      if (side && y) continue; /* already compared from a's side */
      if (!y) y = &none;
      const chakra_group_stats *ga = side ? y : x, *gb = side ? x : y;
      const char *name = x->name[0] ? x->name : "(all ranks)";
      fig(f, ga->ops, gb->ops, "group %s ops", name);
      fig(f, ga->bytes, gb->bytes, "group %s bytes", name);
    }
  }
}

long chakra_diff_summary(const chakra_rank_stats *a, const chakra_rank_stats *b, chakra_diff_figure **out) {
  figures f = {0};
  fig_text(&f, "version", a->version, b->version);
  fig_text(&f, "schema", a->schema, b->schema);
  fig(&f, a->nodes, b->nodes, "nodes%s", "");
  for (int t = 0; t < CHAKRA_STATS_TYPES; t++) {
    const char *name = t < 8 ? chakra_node_type_name(t) : "UNKNOWN_TYPE";
    fig(&f, a->by_type[t], b->by_type[t], "nodes %s", name);
  }
  for (int c = 0; c < CHAKRA_STATS_COLLS; c++) {
    const char *name = c < 10 ? chakra_comm_type_name(c) : "UNSPECIFIED";
    fig(&f, a->coll_ops[c], b->coll_ops[c], "collective %s ops", name);
    fig(&f, a->coll_bytes[c], b->coll_bytes[c], "collective %s bytes", name);
  }
  groups(&f, a, b);
  fig(&f, a->send_ops, b->send_ops, "send ops%s", "");
  fig(&f, a->send_bytes, b->send_bytes, "send bytes%s", "");
  fig(&f, a->recv_ops, b->recv_ops, "recv ops%s", "");
  fig(&f, a->recv_bytes, b->recv_bytes, "recv bytes%s", "");
  fig(&f, a->mem_ops, b->mem_ops, "remote memory ops%s", "");
  fig(&f, a->mem_bytes, b->mem_bytes, "remote memory bytes%s", "");
  fig(&f, a->gpu_ops, b->gpu_ops, "GPU compute nodes%s", "");
  fig(&f, a->gpu_us, b->gpu_us, "GPU compute us%s", "");
  fig(&f, a->cpu_ops, b->cpu_ops, "CPU compute nodes%s", "");
  fig(&f, a->cpu_us, b->cpu_us, "CPU compute us%s", "");
  fig(&f, a->num_ops, b->num_ops, "num_ops%s", "");
  fig(&f, a->tensor_bytes, b->tensor_bytes, "tensor bytes%s", "");
  fig(&f, a->data_deps, b->data_deps, "data deps%s", "");
  fig(&f, a->ctrl_deps, b->ctrl_deps, "ctrl deps%s", "");
  fig(&f, a->critical_path_us, b->critical_path_us, "critical path us%s", "");
  fig(&f, a->unordered, b->unordered, "nodes on cycles%s", "");
  if (f.failed) {
    free(f.v);
    return -1;
  }
  *out = f.v;
  return (long)f.n;
}

int chakra_diff_set_equal(const chakra_diff_set *s) {
  if (s->ranks_a != s->ranks_b) return 0;
  for (size_t r = 0; r < s->ranks_a; r++)
    if (!chakra_diff_rank_equal(&s->ranks[r])) return 0;
  return 1;
}

/* ---- text ---- */

/* Names are shown in quotes with control characters escaped, so that one
 * change is one line. */
static void text_name(jsonw *w, const char *s) {
  jsonw_string(w, s ? s : "", s ? strlen(s) : 0);
}

static void text_rank(jsonw *w, const chakra_diff_set *s, size_t r, const chakra_diff_figure *f, long nf) {
  const chakra_diff_rank *d = &s->ranks[r];
  textout_printf(w, "rank %zu: %s vs %s: ", r, s->paths_a[r], s->paths_b[r]);
  if (chakra_diff_rank_equal(d)) {
    textout_printf(w, "equal (%llu nodes)\n", (unsigned long long)d->nodes_a);
    return;
  }
  textout_printf(w, "%llu vs %llu nodes: %llu added, %llu removed, %llu changed, %llu same%s\n",
        (unsigned long long)d->nodes_a, (unsigned long long)d->nodes_b, (unsigned long long)d->added,
        (unsigned long long)d->removed, (unsigned long long)d->changed, (unsigned long long)d->same,
        d->metadata_differs ? "; GlobalMetadata differs" : "");
  if (d->changed) {
    jsonw_lit(w, "  changed:");
    for (int b = 0; b < CHAKRA_DIFF_FIELDS; b++)
      if (d->changed_fields[b]) textout_printf(w, " %s %llu", chakra_diff_field_name(b), (unsigned long long)d->changed_fields[b]);
    jsonw_char(w, '\n');
  }
  for (long i = 0; i < nf; i++) {
    if (f[i].text_a) textout_printf(w, "  %s: \"%s\" -> \"%s\"\n", f[i].label, f[i].text_a, f[i].text_b);
    else textout_printf(w, "  %s: %llu -> %llu\n", f[i].label, (unsigned long long)f[i].a, (unsigned long long)f[i].b);
  }
  for (size_t k = 0; k < d->n_listed; k++) {
    const chakra_diff_node *n = &d->listed[k];
    const char *type = chakra_node_type_name(n->type);
    if (n->kind == CHAKRA_DIFF_ADDED) textout_printf(w, "  + node %llu ", (unsigned long long)n->id_b);
    else if (n->kind == CHAKRA_DIFF_REMOVED) textout_printf(w, "  - node %llu ", (unsigned long long)n->id_a);
    else if (s->by_name) textout_printf(w, "  ~ node %llu (was %llu) ", (unsigned long long)n->id_b, (unsigned long long)n->id_a);
    else textout_printf(w, "  ~ node %llu ", (unsigned long long)n->id_b);
    text_name(w, n->name);
    textout_printf(w, " %s", type ? type : "UNKNOWN");
    if (n->details) textout_printf(w, ": %s", n->details);
    jsonw_char(w, '\n');
  }
  uint64_t total = d->added + d->removed + d->changed;
  if (total > d->n_listed)
    textout_printf(w, "  ... %llu more node changes (--limit 0 lists all)\n", (unsigned long long)(total - d->n_listed));
}

/* ---- JSON ---- */

static void key(jsonw *w, const char *k, int *first) {
  if (!*first) jsonw_char(w, ',');
  *first = 0;
  jsonw_char(w, '"');
  jsonw_lit(w, k);
  jsonw_lit(w, "\":");
}

static void key_u64(jsonw *w, const char *k, uint64_t v, int *first) {
  key(w, k, first);
  jsonw_u64(w, v);
}

static void key_str(jsonw *w, const char *k, const char *v, int *first) {
  key(w, k, first);
  jsonw_string(w, v, strlen(v));
}

static void json_node(jsonw *w, const chakra_diff_node *n) {
  static const char *const kinds[] = {"", "added", "removed", "changed"};
  int first = 1;
  const char *type = chakra_node_type_name(n->type);
  jsonw_char(w, '{');
  key_str(w, "change", kinds[n->kind], &first);
  if (n->kind != CHAKRA_DIFF_ADDED) key_u64(w, "id_a", n->id_a, &first);
  if (n->kind != CHAKRA_DIFF_REMOVED) key_u64(w, "id_b", n->id_b, &first);
  key_str(w, "name", n->name ? n->name : "", &first);
  key_str(w, "type", type ? type : "UNKNOWN", &first);
  if (n->kind == CHAKRA_DIFF_CHANGED) {
    key(w, "what", &first);
    jsonw_char(w, '[');
    int f1 = 1;
    for (int b = 0; b < CHAKRA_DIFF_FIELDS; b++) {
      if (!((n->what >> b) & 1)) continue;
      if (!f1) jsonw_char(w, ',');
      f1 = 0;
      jsonw_string(w, chakra_diff_field_name(b), strlen(chakra_diff_field_name(b)));
    }
    jsonw_char(w, ']');
    if (n->details) key_str(w, "details", n->details, &first);
  }
  jsonw_char(w, '}');
}

static void json_rank(jsonw *w, const chakra_diff_set *s, size_t r, const chakra_diff_figure *f, long nf) {
  const chakra_diff_rank *d = &s->ranks[r];
  int first = 1;
  jsonw_char(w, '{');
  key_u64(w, "rank", r, &first);
  key_str(w, "a", s->paths_a[r], &first);
  key_str(w, "b", s->paths_b[r], &first);
  key(w, "equal", &first);
  jsonw_lit(w, chakra_diff_rank_equal(d) ? "true" : "false");
  key_u64(w, "nodes_a", d->nodes_a, &first);
  key_u64(w, "nodes_b", d->nodes_b, &first);
  key_u64(w, "added", d->added, &first);
  key_u64(w, "removed", d->removed, &first);
  key_u64(w, "changed", d->changed, &first);
  key_u64(w, "same", d->same, &first);
  key(w, "metadata_differs", &first);
  jsonw_lit(w, d->metadata_differs ? "true" : "false");
  key(w, "changed_fields", &first);
  jsonw_char(w, '{');
  int f1 = 1;
  for (int b = 0; b < CHAKRA_DIFF_FIELDS; b++)
    if (d->changed_fields[b]) key_u64(w, chakra_diff_field_name(b), d->changed_fields[b], &f1);
  jsonw_char(w, '}');
  key(w, "summary", &first);
  jsonw_char(w, '[');
  for (long i = 0; i < nf; i++) {
    int f2 = 1;
    jsonw_lit(w, i ? ",{" : "{");
    key_str(w, "figure", f[i].label, &f2);
    if (f[i].text_a) key_str(w, "a", f[i].text_a, &f2), key_str(w, "b", f[i].text_b, &f2);
    else key_u64(w, "a", f[i].a, &f2), key_u64(w, "b", f[i].b, &f2);
    jsonw_char(w, '}');
  }
  jsonw_char(w, ']');
  key(w, "nodes", &first);
  jsonw_char(w, '[');
  for (size_t k = 0; k < d->n_listed; k++) {
    if (k) jsonw_char(w, ',');
    jsonw_lit(w, "\n  ");
    json_node(w, &d->listed[k]);
  }
  jsonw_lit(w, "]}");
}

int chakra_diff_write(const chakra_diff_set *s, const char *path, int json, chakra_error *err) {
  textout t;
  int rc = textout_open(&t, path, err);
  if (rc) return rc;
  jsonw *w = &t.w;
  size_t n = s->ranks_a < s->ranks_b ? s->ranks_a : s->ranks_b;
  if (json) {
    jsonw_lit(w, "{\"equal\":");
    jsonw_lit(w, chakra_diff_set_equal(s) ? "true" : "false");
    jsonw_lit(w, ",\"by\":");
    jsonw_lit(w, s->by_name ? "\"name\"" : "\"id\"");
    jsonw_lit(w, ",\"ranks_a\":");
    jsonw_u64(w, s->ranks_a);
    jsonw_lit(w, ",\"ranks_b\":");
    jsonw_u64(w, s->ranks_b);
    jsonw_lit(w, ",\"ranks\":[");
  } else if (s->ranks_a != s->ranks_b) {
    textout_printf(w, "ranks: %zu vs %zu (only the first %zu compared)\n", s->ranks_a, s->ranks_b, n);
  }
  for (size_t r = 0; r < n && !rc; r++) {
    chakra_diff_figure *fg = NULL;
    long nf = chakra_diff_summary(&s->ranks[r].stats_a, &s->ranks[r].stats_b, &fg);
    if (nf < 0) {
      rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
      break;
    }
    if (json) {
      if (r) jsonw_char(w, ',');
      jsonw_char(w, '\n');
      json_rank(w, s, r, fg, nf);
    } else {
      text_rank(w, s, r, fg, nf);
    }
    free(fg);
  }
  if (json) jsonw_lit(w, "\n]}\n");
  return textout_close(&t, rc, err);
}
