/* commgroups.c - communicator groups from files and METADATA nodes; see commgroups.h. */
#include "commgroups.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>
#include <yajl/yajl_tree.h>

#include "cmp.h"
#include "strbuf.h"
#include "vec.h"

/* ---- the set ---- */

static nameidx_recs recs(const cg_set *s) { return (nameidx_recs){s->v, sizeof *s->v, offsetof(cg_group, name)}; }

/* set_push keeps the index over every group (or takes the group back). */
long cg_find(const cg_set *s, const char *name) { return nameidx_find(&s->idx, recs(s), name); }

int cg_is_all(const char *name) { return !name || !*name || strcmp(name, "0") == 0; }

int cg_has(const cg_group *g, uint32_t rank) {
  if (g->n == 0) return 1;
  for (uint32_t i = 0; i < g->n; i++)
    if (g->members[i] == rank) return 1;
  return 0;
}

const char *cg_quote(const char *name, char *buf, size_t size) {
  size_t o = 0;
  for (const unsigned char *c = (const unsigned char *)name; *c && o + 8 < size; c++) {
    if (*c == '\n') o += (size_t)snprintf(buf + o, size - o, "\\n");
    else if (*c == '\t') o += (size_t)snprintf(buf + o, size - o, "\\t");
    else if (*c == '"' || *c == '\\') o += (size_t)snprintf(buf + o, size - o, "\\%c", *c);
    else if (*c < 0x20 || *c == 0x7f) o += (size_t)snprintf(buf + o, size - o, "\\x%02x", *c);
    else buf[o++] = (char)*c;
    if (o + 8 >= size && c[1]) {
      o += (size_t)snprintf(buf + o, size - o, "...");
      break;
    }
  }
  buf[o < size ? o : size - 1] = 0;
  return buf;
}

static void group_free(cg_group *g) {
  free(g->name);
  free(g->members);
}

void cg_set_free(cg_set *s) {
  for (size_t i = 0; i < s->n; i++) group_free(&s->v[i]);
  free(s->v);
  nameidx_free(&s->idx);
  memset(s, 0, sizeof *s);
}

/* Takes g over (s owns its arrays from now on, also on failure). */
static int set_push(cg_set *s, cg_group *g) {
  cg_group *v = VEC_PUSH(s->v, s->n, s->cap);
  if (!v) {
    group_free(g);
    return -1;
  }
  *v = *g;
  if (nameidx_sync(&s->idx, recs(s), s->n)) {
    group_free(&s->v[--s->n]);
    return -1;
  }
  return 0;
}

int cg_add_group(cg_set *s, const char *name, const uint32_t *members, uint32_t n) {
  cg_group g = {.name = strdup(name), .members = malloc((n ? n : 1) * sizeof *g.members), .n = n};
  if (!g.name || !g.members) {
    group_free(&g);
    return -1;
  }
  if (n) memcpy(g.members, members, n * sizeof *members);
  return set_push(s, &g);
}

/* A member listed twice, or -1 (sorts a copy; -2 when out of memory). */
static int64_t repeated(const uint32_t *m, uint32_t n) {
  if (n < 2) return -1;
  uint32_t *c = malloc(n * sizeof *c);
  if (!c) return -2;
  memcpy(c, m, n * sizeof *c);
  qsort(c, n, sizeof *c, cmp_u32);
  int64_t dup = -1;
  for (uint32_t i = 1; i < n && dup < 0; i++)
    if (c[i] == c[i - 1]) dup = c[i];
  free(c);
  return dup;
}

/* ---- the comm-group file, read event by event so that every message can
 * name its line ---- */

typedef struct fparse {
  yajl_handle h;
  const char *text, *path;
  uint32_t npus;
  cg_set got;          /* this file's groups; moved to the caller's set at the end */
  int depth;           /* 0 outside, 1 in the object, 2 in a rank list */
  int seen_object;
  cg_group cur;        /* the group being read (depth 2) */
  uint32_t cap;
  uint32_t cur_line;
  chakra_error *err;
  int failed;
  size_t counted;      /* bytes whose line breaks are in line */
  uint32_t line;
} fparse;

/* The line of the parser's position; offsets only grow (one yajl_parse
 * call over the whole text), so counting resumes where it stopped. */
static uint32_t line_at(fparse *p) {
  size_t off = yajl_get_bytes_consumed(p->h);
  for (; p->counted < off; p->counted++) p->line += p->text[p->counted] == '\n';
  return p->line;
}

/* a and b are quoted: a group name may hold line breaks. */
static int fail(fparse *p, const char *fmt, const char *a, const char *b) {
  char what[600], qa[200], qb[200];
  snprintf(what, sizeof what, fmt, cg_quote(a, qa, sizeof qa), cg_quote(b, qb, sizeof qb));
  chakra_error_set(p->err, CHAKRA_EFORMAT, "%s: line %u: %s", p->path, line_at(p), what);
  p->failed = 1;
  return 0; /* stops the parser */
}

/* "entry 3 of group \"2\"" style context for a value met where a rank or
 * list was expected; what describes the value. */
static int wrong_value(fparse *p, const char *what) {
  char ctx[300];
  if (p->depth == 2) {
    char range[64] = "non-negative integer";
    if (p->npus) snprintf(range, sizeof range, "integer 0..%u", p->npus - 1);
    snprintf(ctx, sizeof ctx, "entry %u is %s, expected a rank (%s)", p->cur.n, what, range);
    return fail(p, "group \"%s\": %s", p->cur.name, ctx);
  }
  if (p->depth == 1) return fail(p, "group \"%s\": %s, expected a list of ranks", p->cur.name, what);
  return fail(p, "%s%s, expected a JSON object of group name -> list of ranks", what, "");
}

static int on_null(void *c) { return wrong_value(c, "null"); }
static int on_bool(void *c, int v) { return wrong_value(c, v ? "true" : "false"); }
static int on_double(void *c, double v) {
  (void)v;
  return wrong_value(c, "a fraction");
}
static int on_string(void *c, const unsigned char *s, size_t n) {
  (void)s, (void)n;
  return wrong_value(c, "a string");
}

static int on_integer(void *c, long long v) {
  fparse *p = c;
  if (p->depth != 2) return wrong_value(p, "a number");
  if (v < 0 || v > UINT32_MAX || (p->npus && (uint64_t)v >= p->npus)) {
    char num[32];
    snprintf(num, sizeof num, "%lld", v);
    return wrong_value(p, num);
  }
  uint32_t *m = VEC_PUSH(p->cur.members, p->cur.n, p->cap);
  if (!m) {
    chakra_error_set(p->err, CHAKRA_ENOMEM, "%s: out of memory", p->path);
    p->failed = 1;
    return 0;
  }
  *m = (uint32_t)v;
  return 1;
}

static int on_start_map(void *c) {
  fparse *p = c;
  if (p->depth == 0 && !p->seen_object) {
    p->depth = 1;
    p->seen_object = 1;
    return 1;
  }
  return wrong_value(p, "an object");
}

static int on_map_key(void *c, const unsigned char *k, size_t n) {
  fparse *p = c;
  free(p->cur.name);
  p->cur.name = NULL;
  if (memchr(k, 0, n)) return fail(p, "a group name holds a NUL character%s%s", "", "");
  if (!(p->cur.name = strndup((const char *)k, n))) {
    chakra_error_set(p->err, CHAKRA_ENOMEM, "%s: out of memory", p->path);
    p->failed = 1;
    return 0;
  }
  long prev = cg_find(&p->got, p->cur.name);
  if (prev >= 0) {
    char first[32];
    snprintf(first, sizeof first, "%u", p->got.v[prev].line);
    return fail(p, "group \"%s\" is defined twice (first on line %s)", p->cur.name, first);
  }
  p->cur_line = line_at(p);
  return 1;
}

static int on_end_map(void *c) {
  fparse *p = c;
  p->depth = 0;
  return 1;
}

static int on_start_array(void *c) {
  fparse *p = c;
  if (p->depth != 1) return wrong_value(p, "a list");
  p->depth = 2;
  p->cur.members = NULL;
  p->cur.n = 0;
  p->cap = 0;
  return 1;
}

static int on_end_array(void *c) {
  fparse *p = c;
  p->depth = 1;
  if (p->cur.n == 0) {
    free(p->cur.members);
    p->cur.members = NULL;
    return fail(p, "group \"%s\": the list of ranks is empty%s", p->cur.name, "");
  }
  int64_t dup = repeated(p->cur.members, p->cur.n);
  if (dup != -1) {
    free(p->cur.members);
    p->cur.members = NULL;
    if (dup == -2) {
      chakra_error_set(p->err, CHAKRA_ENOMEM, "%s: out of memory", p->path);
      p->failed = 1;
      return 0;
    }
    char num[32];
    snprintf(num, sizeof num, "%lld", (long long)dup);
    return fail(p, "group \"%s\": rank %s is listed twice", p->cur.name, num);
  }
  cg_group g = {p->cur.name, p->cur.members, p->cur.n, p->cur_line};
  p->cur.name = NULL;
  p->cur.members = NULL;
  if (set_push(&p->got, &g)) {
    chakra_error_set(p->err, CHAKRA_ENOMEM, "%s: out of memory", p->path);
    p->failed = 1;
    return 0;
  }
  return 1;
}

static const yajl_callbacks file_callbacks = {
    on_null, on_bool, on_integer, on_double, NULL, on_string,
    on_start_map, on_map_key, on_end_map, on_start_array, on_end_array,
};

/* The parser's own complaint, first line only ("lexical error: invalid char"). */
static void syntax_error(fparse *p, const unsigned char *text, size_t len) {
  unsigned char *msg = yajl_get_error(p->h, 0, text, len);
  char why[200];
  snprintf(why, sizeof why, "%s", msg ? (const char *)msg : "invalid JSON");
  if (msg) yajl_free_error(p->h, msg);
  char *nl = strchr(why, '\n');
  if (nl) *nl = 0;
  fail(p, "not JSON (%s)%s", why, "");
}

int cg_parse_file(cg_set *s, const char *text, size_t len, const char *path, uint32_t npus, chakra_error *err) {
  chakra_error local;
  fparse p = {.text = text, .path = path, .npus = npus, .err = err ? err : &local, .line = 1};
  p.h = yajl_alloc(&file_callbacks, NULL, &p);
  if (!p.h) return chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", path);
  yajl_status st = yajl_parse(p.h, (const unsigned char *)text, len);
  if (st == yajl_status_ok) st = yajl_complete_parse(p.h);
  size_t lead = 0;
  while (lead < len && strchr(" \t\r\n", text[lead])) lead++;
  if (st == yajl_status_error && !p.failed && lead < len) syntax_error(&p, (const unsigned char *)text, len);
  if (!p.failed && !p.seen_object) {
    chakra_error_set(p.err, CHAKRA_EFORMAT, "%s: line 1: empty, expected a JSON object of group name -> list of ranks",
                     path);
    p.failed = 1;
  }
  yajl_free(p.h);
  free(p.cur.name);
  free(p.cur.members);
  int rc = p.failed ? p.err->code : 0;
  /* Move this file's groups over; names the set already had keep theirs. */
  for (size_t i = 0; i < p.got.n && !rc; i++) {
    if (cg_find(s, p.got.v[i].name) >= 0) continue;
    if (set_push(s, &p.got.v[i])) rc = chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", path);
    p.got.v[i].name = NULL, p.got.v[i].members = NULL;
  }
  cg_set_free(&p.got);
  return rc;
}

int cg_read_file(cg_set *s, const char *path, uint32_t npus, chakra_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f) return chakra_error_set(err, CHAKRA_EIO, "%s: cannot open the comm-group configuration", path);
  strbuf text = {0};
  int got = strbuf_read_stream(&text, f, SIZE_MAX / 2);
  fclose(f);
  int rc = got == STRBUF_EREAD ? chakra_error_set(err, CHAKRA_EIO, "%s: read error", path)
           : got ? chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", path)
                 : cg_parse_file(s, text.s, text.n, path, npus, err);
  strbuf_free(&text);
  return rc;
}

/* ---- the PyTorch process-group list ---- */

static int entry_read(yajl_val g, cg_pg_entry *e) {
  const char *pn[] = {"pg_name", NULL}, *rk[] = {"ranks", NULL}, *gs[] = {"group_size", NULL},
             *bi[] = {"backend_id", NULL};
  yajl_val name = yajl_tree_get(g, pn, yajl_t_any), ranks = yajl_tree_get(g, rk, yajl_t_array),
           size = yajl_tree_get(g, gs, yajl_t_number), bid = yajl_tree_get(g, bi, yajl_t_number);
  char buf[32];
  if (name && YAJL_IS_STRING(name)) e->name = strdup(name->u.string);
  else if (name && YAJL_IS_INTEGER(name)) snprintf(buf, sizeof buf, "%lld", YAJL_GET_INTEGER(name)), e->name = strdup(buf);
  if (name && (YAJL_IS_STRING(name) || YAJL_IS_INTEGER(name)) && !e->name) return CG_PG_ENOMEM;
  if (size && YAJL_IS_INTEGER(size)) e->size = YAJL_GET_INTEGER(size), e->has_size = 1;
  if (bid && YAJL_IS_INTEGER(bid)) e->backend_id = YAJL_GET_INTEGER(bid), e->has_backend_id = 1;
  if (!ranks) return CG_PG_OK;
  e->has_ranks = 1;
  size_t n = ranks->u.array.len;
  if (n == 0) return CG_PG_OK;
  if (!(e->ranks = malloc(n * sizeof *e->ranks))) return CG_PG_ENOMEM;
  for (size_t j = 0; j < n; j++) {
    yajl_val r = ranks->u.array.values[j];
    if (!YAJL_IS_INTEGER(r) || YAJL_GET_INTEGER(r) < 0) {
      free(e->ranks);
      e->ranks = NULL;
      e->bad_rank = 1;
      e->bad_index = j;
      return CG_PG_OK;
    }
    e->ranks[j] = YAJL_GET_INTEGER(r);
  }
  e->n_ranks = n;
  return CG_PG_OK;
}

int cg_pg_parse(const char *json, cg_pg_list *out, char *why, size_t why_size) {
  memset(out, 0, sizeof *out);
  if (why_size) why[0] = 0;
  yajl_val v = yajl_tree_parse(json, why, why_size);
  if (!v || !YAJL_IS_ARRAY(v)) {
    if (v) yajl_tree_free(v);
    return CG_PG_ENOTLIST;
  }
  int rc = CG_PG_OK;
  size_t n = v->u.array.len;
  out->v = calloc(n ? n : 1, sizeof *out->v);
  if (!out->v) rc = CG_PG_ENOMEM;
  for (size_t i = 0; i < n && !rc; i++, out->n++) rc = entry_read(v->u.array.values[i], &out->v[i]);
  yajl_tree_free(v);
  return rc;
}

void cg_pg_free(cg_pg_list *l) {
  for (size_t i = 0; i < l->n; i++) {
    free(l->v[i].name);
    free(l->v[i].ranks);
  }
  free(l->v);
  memset(l, 0, sizeof *l);
}

/* ---- METADATA nodes ---- */

/* One entry as a group; 1 = nothing to add (the world), 0 = *g filled. */
static int meta_group(const cg_pg_entry *e, size_t k, const char *where, uint32_t npus, cg_group *g,
                      chakra_error *err) {
  char qn[200];
  const char *nm = cg_quote(e->name ? e->name : "", qn, sizeof qn); /* for messages */
  if (!e->name || !e->has_ranks)
    return chakra_error_set(err, CHAKRA_EFORMAT, "%s: process group %zu: expected pg_name and ranks", where, k);
  if (e->bad_rank)
    return chakra_error_set(err, CHAKRA_EFORMAT, "%s: process group %zu (\"%s\"): entry %zu of ranks is not a non-negative integer",
                            where, k, nm, e->bad_index);
  for (size_t j = 0; j < e->n_ranks; j++)
    if (e->ranks[j] > UINT32_MAX || (npus && e->ranks[j] >= npus))
      return chakra_error_set(err, CHAKRA_EFORMAT, "%s: process group %zu (\"%s\"): rank %lld is outside 0..%u", where, k,
                              nm, (long long)e->ranks[j], npus ? npus - 1 : UINT32_MAX);
  if (cg_is_all(e->name)) {
    if (npus && e->n_ranks && e->n_ranks != npus)
      return chakra_error_set(err, CHAKRA_EFORMAT, "%s: process group %zu (\"%s\"): this name means all %u ranks, but it lists %zu",
                              where, k, nm, npus, e->n_ranks);
    return 1;
  }
  uint32_t n = e->n_ranks ? (uint32_t)e->n_ranks : npus;
  memset(g, 0, sizeof *g);
  g->name = strdup(e->name);
  g->members = malloc((n ? n : 1) * sizeof *g->members);
  if (!g->name || !g->members) {
    group_free(g);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  g->n = n;
  for (uint32_t j = 0; j < n; j++) g->members[j] = e->n_ranks ? (uint32_t)e->ranks[j] : j;
  int64_t dup = repeated(g->members, n);
  if (dup != -1) {
    group_free(g);
    return dup == -2 ? chakra_error_set(err, CHAKRA_ENOMEM, "out of memory")
                     : chakra_error_set(err, CHAKRA_EFORMAT, "%s: process group %zu (\"%s\"): rank %lld is listed twice",
                                        where, k, nm, (long long)dup);
  }
  return 0;
}

int cg_add_metadata(cg_set *s, const char *values, const char *where, uint32_t npus, chakra_error *err) {
  if (!values || !strstr(values, "pg_name")) return 0;
  size_t len = strlen(values);
  /* ASTRA-sim strips two characters from each end of the repr "['...']". */
  int repr = len > 4 && values[0] == '[' && (values[1] == '\'' || values[1] == '"');
  char *json = repr ? strndup(values + 2, len - 4) : strdup(values);
  if (!json) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  cg_pg_list l;
  char why[256];
  int rc = cg_pg_parse(json, &l, why, sizeof why);
  free(json);
  if (rc == CG_PG_ENOMEM) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  else if (rc == CG_PG_ENOTLIST) {
    char *nl = strchr(why, '\n');
    if (nl) *nl = 0;
    rc = chakra_error_set(err, CHAKRA_EFORMAT, "%s: the process groups are not a JSON list of {pg_name, ranks}%s%s",
                          where, *why ? ": " : "", why);
  }
  for (size_t k = 0; k < l.n && !rc; k++) {
    cg_group g;
    int r = meta_group(&l.v[k], k, where, npus, &g, err);
    if (r < 0) rc = r;
    else if (r == 0 && cg_find(s, g.name) >= 0) group_free(&g);
    else if (r == 0 && set_push(s, &g)) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  cg_pg_free(&l);
  return rc;
}
