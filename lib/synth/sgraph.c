/* sgraph.c - instantiating templates into tensors and nodes; see sgraph.h. */
#include "sgraph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shard.h"
#include "../util/vec.h"

/* Room for need more elements, or returns the error from the function. */
#define GROW(ptr, n, cap, need) \
  do { \
    if (VEC_ROOM(ptr, n, cap, need)) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory"); \
  } while (0)

/* ---- rows: compiled once per configuration --------------------------------------------- */

int sg_compile_shape(const char *text, sx_expr *dims, uint8_t *n, chakra_error *err) {
  char part[256];
  *n = 0;
  const char *s = text;
  while (*s) {
    int depth = 0;
    size_t k = 0;
    while (*s && (depth || *s != ',')) {
      depth += *s == '(' ? 1 : *s == ')' ? -1 : 0;
      if (k + 1 >= sizeof part) return chakra_error_set(err, CHAKRA_EINVAL, "template shape '%s' too long", text);
      part[k++] = *s++;
    }
    part[k] = 0;
    if (*n >= SG_MAXDIM) return chakra_error_set(err, CHAKRA_EINVAL, "template shape '%s': too many dimensions", text);
    int rc = sx_compile(&dims[(*n)++], part, err);
    if (rc) return rc;
    if (*s == ',') s++;
  }
  return 0;
}

/* Decode: the product of the dimensions, each possibly a fraction (one
 * token per sequence, split over tp), which must come out whole. */
static int elems_exact(const sg_config *c, const sx_expr *dims, int n, uint64_t *out, chakra_error *err) {
  sx_rat p = {1, 1};
  for (int i = 0; i < n; i++) {
    sx_rat v;
    int rc = sx_eval(&dims[i], c->vals, &v, err);
    if (rc) return rc;
    if (sx_rat_mul(p, v, &p)) return SX_ETOOLARGE;
  }
  if (p.den != 1 || p.num < 0)
    return chakra_error_set(err, CHAKRA_EINVAL, "size is not a whole number (%lld/%lld)", (long long)p.num,
                            (long long)p.den);
  *out = (uint64_t)p.num;
  return 0;
}

/* Product of the dimensions; SX_ETOOLARGE past INT64_MAX. */
static int elems_of(const sg_config *c, const sx_expr *dims, int n, uint64_t *out, chakra_error *err) {
  if (c->decode) return elems_exact(c, dims, n, out, err);
  uint64_t p = 1;
  for (int i = 0; i < n; i++) {
    uint64_t v;
    int rc = sx_eval_int(&dims[i], c->vals, &v, err);
    if (rc) return rc;
    if (v && p > (uint64_t)INT64_MAX / v) return SX_ETOOLARGE;
    p *= v;
  }
  *out = p;
  return 0;
}

static int row_included(const sg_config *c, unsigned f) {
  if (c->infer ? (f & (SR_BWD | SR_TRAIN)) != 0 : (f & SR_INFER) != 0) return 0;
  if ((f & SR_COMPAT) && !c->compat) return 0;
  if ((f & SR_OURS) && c->compat) return 0;
  if ((f & SR_FSDP) && !c->fsdp) return 0;
  if ((f & SR_NOFSDP) && c->fsdp) return 0;
  return 1;
}

/* A row whose sizes do not fit: the options its expressions read, with
 * their values, and the limit every size must keep. */
static int too_large(const sg_config *c, const synth_row *r, uint32_t syms, chakra_error *err) {
  char opts[512] = "";
  size_t len = 0;
  if (c->mb_is_batch && (syms & 1u << SX_MICROBATCH)) syms = (syms & ~(1u << SX_MICROBATCH)) | 1u << SX_BATCH;
  /* --seq sets Ctx; outside a decode step Seq too, while a decode step's
   * Seq is its one new token, set by no option. */
  if (c->decode) syms &= ~(1u << SX_SEQ);
  else if (syms & 1u << SX_CTX) syms = (syms & ~(1u << SX_CTX)) | 1u << SX_SEQ;
  for (int i = 0; i < SX_NSYM; i++)
    if ((i < SX_PAR_FIRST || i == SX_CTX) && (syms & (1u << i)))
      len += (size_t)snprintf(opts + len, len < sizeof opts ? sizeof opts - len : 0, "%s%s %lld", len ? ", " : "",
                              sx_symbol_option(i), (long long)c->vals[i].num);
  if (len >= sizeof opts) len = sizeof opts - 1;
  if (c->elem_bytes > 1) snprintf(opts + len, sizeof opts - len, ", --dtype-bytes %u", c->elem_bytes);
  return chakra_error_set(err, CHAKRA_EINVAL,
                          "%s: too large for tensor %s (every tensor's bytes, elements x --dtype-bytes, and its "
                          "FLOPs must be at most 9223372036854775807)",
                          opts, r->name);
}

/* The symbols a row's sizes and FLOPs read. */
static uint32_t row_syms(const sg_rowinfo *ri, const sx_expr *ops, int attn) {
  uint32_t m = ops ? ops->syms : 0;
  for (int i = 0; i < ri->ndims; i++) m |= ri->dims[i].syms;
  if (attn) m |= 1u << SX_MICROBATCH | 1u << SX_SEQ | 1u << SX_CTX | 1u << SX_DMODEL;
  return m;
}

/* FLOPs as counted by ours: 2 x (MACs + the attention-score term), or
 * SX_ETOOLARGE. */
static int ours_flops(const sg_config *c, const synth_row *r, uint64_t ops, uint64_t *out, chakra_error *err) {
  /* The attention-score term the fused-kernel count leaves out: S =
   * b*s*Ctx*Dmodel/tp MACs per QK^T or PV product (the local queries
   * against all keys: Ctx = Seq but in a decode step). */
  uint64_t units = r->flags & SR_ATTN_F ? 2 : r->flags & SR_ATTN_DQ ? 2 : r->flags & SR_ATTN_DKV ? 1 : 0;
  uint64_t extra = 0;
  if (units && c->attn_term) {
    sx_expr x;
    int rc = sx_compile(&x, "MicroBatch/dp*Seq/cp*Ctx*Dmodel/tp", err);
    if (!rc) rc = sx_eval_int(&x, c->vals, &extra, err);
    if (rc) return rc;
  }
  const uint64_t max = INT64_MAX;
  if (extra > max / 2 || ops > max - units * extra) return SX_ETOOLARGE;
  uint64_t sum = ops + units * extra;
  if (!(r->flags & SR_MAC || units)) return *out = ops, 0;
  if (sum > max / 2) return SX_ETOOLARGE;
  *out = 2 * sum;
  return 0;
}

static int compile_row(const sg_config *c, const synth_row *r, sg_rowinfo *ri, chakra_error *err) {
  memset(ri, 0, sizeof *ri);
  ri->row = r;
  int rc = sg_compile_shape(r->shape, ri->dims, &ri->ndims, err);
  if (!rc) rc = sx_compile(&ri->hidden, r->hidden, err);
  const synth_edge *e[2] = {&r->x1, &r->x2};
  for (int k = 0; !rc && k < 2; k++)
    if (e[k]->shape) {
      rc = sg_compile_shape(e[k]->shape, ri->ddims[k], &ri->nddims[k], err);
      if (!rc) rc = sx_compile(&ri->dhidden[k], e[k]->hidden, err);
    }
  if (rc) return rc;
  sx_expr x = {0};
  rc = elems_of(c, ri->dims, ri->ndims, &ri->elems, err);
  if (!rc && ri->elems > (uint64_t)INT64_MAX / (c->elem_bytes ? c->elem_bytes : 1)) rc = SX_ETOOLARGE;
  uint64_t ops = 0;
  if (!rc && r->ops) {
    rc = sx_compile(&x, r->ops, err);
    if (!rc) rc = sx_eval_int(&x, c->vals, &ops, err);
  }
  if (!rc) rc = ours_flops(c, r, ops, &ri->ops_ours, err);
  int attn = (r->flags & (SR_ATTN_F | SR_ATTN_DQ | SR_ATTN_DKV)) && c->attn_term;
  if (rc == SX_ETOOLARGE) return too_large(c, r, row_syms(ri, &x, attn), err);
  if (rc) {
    char why[sizeof err->msg];
    snprintf(why, sizeof why, "%s", err ? err->msg : "");
    return chakra_error_set(err, rc, "template row %s: %s", r->name, why);
  }
  ri->ops_compat = ops;
  return 0;
}

/* ---- names ------------------------------------------------------------------------------- */

static const char *tensor_name(const void *ctx, uint32_t t, size_t *len) {
  const char *s = ((const sg_graph *)ctx)->t[t].name;
  *len = strlen(s);
  return s;
}

static int32_t find_name(const sg_graph *g, uint64_t h, const char *name) {
  uint32_t t = hmap_find_str(&g->names_, h, name, strlen(name), tensor_name, g);
  return t == HMAP_NONE ? -1 : (int32_t)t;
}

static int32_t lookup(const sg_graph *g, const char *name) {
  return find_name(g, hmap_hash_str(name, strlen(name)), name);
}

static int hash_insert(sg_graph *g, int32_t t, chakra_error *err) {
  const char *name = g->t[t].name;
  uint64_t h = hmap_hash_str(name, strlen(name));
  if (find_name(g, h, name) >= 0)
    return chakra_error_set(err, CHAKRA_EINVAL, "template: tensor %s defined twice", name);
  if (hmap_add(&g->names_, h, (uint32_t)t)) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  return 0;
}

/* Names live in chunks that never move (tensors point into them). */
typedef struct name_chunk {
  struct name_chunk *next;
  size_t used;
  char data[1 << 16];
} name_chunk;

static const char *intern(sg_graph *g, const char *s) {
  size_t n = strlen(s) + 1;
  name_chunk *c = (name_chunk *)g->names;
  if (!c || c->used + n > sizeof c->data) {
    name_chunk *nc = malloc(sizeof *nc);
    if (!nc) return NULL;
    nc->next = c, nc->used = 0;
    g->names = (char *)nc;
    c = nc;
  }
  char *p = c->data + c->used;
  memcpy(p, s, n);
  c->used += n;
  return p;
}

/* Expands %m, %b and %e of a reference; appends @0 without a version. */
static void expand(char *out, size_t cap, const char *prefix, const char *ref, int mb, int block, int expert) {
  size_t k = 0;
  if (prefix) k = (size_t)snprintf(out, cap, "%s", prefix);
  for (const char *s = ref; *s && k + 12 < cap; s++) {
    if (s[0] == '%' && (s[1] == 'm' || s[1] == 'b' || s[1] == 'e')) {
      k += (size_t)snprintf(out + k, cap - k, "%d", s[1] == 'm' ? mb : s[1] == 'b' ? block : expert);
      s++;
    } else {
      out[k++] = *s;
    }
  }
  out[k] = 0;
  if (!strchr(out, '@') && k + 3 < cap) strcpy(out + k, "@0");
}

/* ---- instantiation ------------------------------------------------------------------------ */

enum { MOD_BLOCK_MB, MOD_BLOCK_W, MOD_IN_MB, MOD_IN_W, MOD_OUT_MB, MOD_OUT_W, MOD_EXPERT_MB, MOD_COUNT };

/* Work of one micro-batch in one block (what recompute repeats). */
static int in_block_mb(int mod) { return mod == MOD_BLOCK_MB || mod == MOD_EXPERT_MB; }

typedef struct inst_ctx {
  int mod, mb, block;
} inst_ctx;

static void module_prefix(char *out, size_t cap, int mod, int mb, int block, int expert) {
  switch (mod) {
  case MOD_BLOCK_MB: snprintf(out, cap, "mb%d.transformer.%d.", mb, block); break;
  case MOD_EXPERT_MB: snprintf(out, cap, "mb%d.transformer.%d.moe.%d.", mb, block, expert); break;
  case MOD_BLOCK_W: snprintf(out, cap, "transformer.%d.", block); break;
  case MOD_IN_MB:
  case MOD_OUT_MB: snprintf(out, cap, "mb%d.", mb); break;
  default: out[0] = 0;
  }
}

static int add_tensors(sg_graph *g, const synth_rows *rows, int mod, int mb, int block, int expert,
                       chakra_error *err) {
  char prefix[64], outer[64], name[256];
  module_prefix(prefix, sizeof prefix, mod, mb, block, expert);
  module_prefix(outer, sizeof outer, MOD_BLOCK_MB, mb, block, expert);
  /* Compiled rows keep table order: the table's rows that are part of this
   * configuration are consecutive, starting at g->table_first[mod]. */
  uint32_t k = g->table_first[mod];
  for (uint32_t i = 0; i < rows->n; i++) {
    if (k >= g->nrows || g->rows[k].row != &rows->rows[i]) continue; /* not part of this configuration */
    int32_t ri = (int32_t)k++;
    if ((rows->rows[i].flags & SR_CHAIN) && expert == 0) continue; /* n experts, n-1 adds */
    GROW(g->t, g->nt, g->capt, 1);
    sg_tensor *t = &g->t[g->nt];
    memset(t, 0, sizeof *t);
    const char *rn = rows->rows[i].name;
    if (rn[0] == '^') expand(name, sizeof name, outer, rn + 1, mb, block, expert);
    else expand(name, sizeof name, prefix, rn, mb, block, expert);
    t->name = intern(g, name);
    if (!t->name) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    t->row = ri;
    t->mb = mb, t->block = block, t->expert = expert;
    t->stage = mod == MOD_BLOCK_MB || mod == MOD_BLOCK_W || mod == MOD_EXPERT_MB ? (int32_t)g->cfg.block_stage[block]
               : mod == MOD_IN_MB || mod == MOD_IN_W    ? 0
                                                        : (int32_t)g->cfg.out_stage;
    t->phase = mb < 0 ? SG_UPDATE : rows->rows[i].flags & SR_BWD ? SG_BWD : SG_FWD;
    t->src[0] = t->src[1] = t->disp[0] = t->disp[1] = -1;
    t->comp = t->chain_first[0] = t->chain_first[1] = -1;
    t->mod = (uint8_t)mod;
    g->nt++;
  }
  return 0;
}

/* The sum of the local experts' outputs (y) or input gradients (dx) after
 * expert upto (>= 1): the chain's add, or expert 0's own. */
static void expert_sum(char *name, size_t cap, int mb, int b, int dx, int upto) {
  if (upto <= 0) snprintf(name, cap, "mb%d.transformer.%d.moe.0.ldis.%s@0", mb, b, dx ? "dx" : "y");
  else snprintf(name, cap, "mb%d.transformer.%d.moe.%s_r%d@0", mb, b, dx ? "dxrouted" : "yrouted", upto);
}

static int32_t resolve(const sg_graph *g, const sg_tensor *t, const char *ref, int mb_override) {
  char name[256], prefix[64];
  int mod = t->mod, mb = mb_override >= 0 ? mb_override : t->mb, b = t->block;
  int last = (int)g->cfg.nblocks - 1;
  if (strcmp(ref, "$ysum") == 0 || strcmp(ref, "$dxsum") == 0) {
    expert_sum(name, sizeof name, mb, b, ref[1] == 'd', (int)g->cfg.nexperts - 1);
  } else if (strcmp(ref, "$yprev") == 0 || strcmp(ref, "$dxprev") == 0) {
    expert_sum(name, sizeof name, mb, b, ref[1] == 'd', t->expert - 1);
  } else if (strcmp(ref, "$in") == 0) {
    if (mod == MOD_OUT_MB) snprintf(name, sizeof name, "mb%d.transformer.%d.ffn_res.y@0", mb, last);
    else if (b == 0) snprintf(name, sizeof name, "mb%d.in_emb.y@0", mb);
    else snprintf(name, sizeof name, "mb%d.transformer.%d.ffn_res.y@0", mb, b - 1);
  } else if (strcmp(ref, "$dout") == 0) {
    if (mod == MOD_IN_MB) snprintf(name, sizeof name, "mb%d.transformer.0.input_norm.dx@0", mb);
    else if (b == last) snprintf(name, sizeof name, "mb%d.out_emb.dx@0", mb);
    else snprintf(name, sizeof name, "mb%d.transformer.%d.input_norm.dx@0", mb, b + 1);
  } else if (ref[0] == '/') {
    expand(name, sizeof name, NULL, ref + 1, mb, b, t->expert);
  } else if (ref[0] == '^') {
    module_prefix(prefix, sizeof prefix, MOD_BLOCK_MB, mb, b, t->expert);
    expand(name, sizeof name, prefix, ref + 1, mb, b, t->expert);
  } else {
    module_prefix(prefix, sizeof prefix, mod, mb, b, t->expert);
    expand(name, sizeof name, prefix, ref, mb, b, t->expert);
  }
  return lookup(g, name);
}

static int link_tensors(sg_graph *g, chakra_error *err) {
  for (uint32_t i = 0; i < g->nt; i++) {
    sg_tensor *t = &g->t[i];
    const synth_row *r = g->rows[t->row].row;
    const synth_edge *e[2] = {&r->x1, &r->x2};
    for (int k = 0; k < 2; k++) {
      if (!e[k]->src) continue;
      t->src[k] = resolve(g, t, e[k]->src, -1);
      if (t->src[k] < 0)
        return chakra_error_set(err, CHAKRA_EINVAL, "template: %s: input '%s' not found", t->name, e[k]->src);
      t->disp[k] = t->src[k];
      if (e[k]->disp && e[k]->disp[0] == '<') t->disp[k] = -2; /* resolved below */
    }
    t->extra_off = g->nextras;
    for (const char *s = r->extra; s && *s;) {
      while (*s == ' ') s++;
      const char *b = s;
      while (*s && *s != ' ') s++;
      if (s == b) break;
      char ref[160];
      size_t len = (size_t)(s - b) < sizeof ref - 1 ? (size_t)(s - b) : sizeof ref - 1;
      memcpy(ref, b, len), ref[len] = 0;
      char *star = strstr(ref, "mb*"), *every = strstr(ref, "%*");
      uint32_t copies = star ? g->cfg.nmb : every ? g->cfg.nexperts : 1;
      for (uint32_t m = 0; m < copies; m++) {
        int32_t x;
        if (star || every) {
          char one[200];
          if (star) snprintf(one, sizeof one, "%.*smb%u%s", (int)(star - ref), ref, m, star + 3);
          else snprintf(one, sizeof one, "%.*s%u%s", (int)(every - ref), ref, m, every + 2);
          x = resolve(g, t, one, -1);
        } else {
          x = resolve(g, t, ref, -1);
        }
        if (x < 0) return chakra_error_set(err, CHAKRA_EINVAL, "template: %s: extra input '%s' not found", t->name, ref);
        GROW(g->extras, g->nextras, g->capextras, 1);
        g->extras[g->nextras++] = x;
      }
    }
    g->t[i].nextra = g->nextras - g->t[i].extra_off;
  }
  for (uint32_t i = 0; i < g->nt; i++)
    for (int k = 0; k < 2; k++)
      if (g->t[i].disp[k] == -2) {
        int32_t s = g->t[i].src[k];
        g->t[i].disp[k] = g->t[s].src[0] >= 0 ? g->t[s].src[0] : s;
      }
  return 0;
}

/* ---- nodes --------------------------------------------------------------------------------- */

static int new_node(sg_graph *g, uint8_t kind, int32_t tensor, int32_t stage, chakra_error *err) {
  GROW(g->nodes, g->nn, g->capn, 1);
  sg_node *n = &g->nodes[g->nn];
  memset(n, 0, sizeof *n);
  n->kind = kind;
  n->tensor = tensor;
  n->stage = stage;
  n->mb = g->t[tensor].mb;
  n->phase = g->t[tensor].phase;
  n->peer_stage = -1;
  g->nn++;
  return 0;
}

/* Inference: the elements a compute node reads and writes, its
 * tensor_size, so the roofline times memory-bound work (a decode step's
 * matmuls read their weights; its attention reads the KV cache) by its
 * bytes. A slice or lookup reads what it writes; other ops read each input
 * whole, as laid out for them (after its collectives), and write their
 * output; the attention kernel reads K and V (kv_elems) besides Q. */
static int traffic(const sg_graph *g, int32_t ti, uint64_t *out, chakra_error *err) {
  const sg_tensor *t = &g->t[ti];
  const sg_rowinfo *ri = &g->rows[t->row];
  const char *op = ri->row->op;
  uint64_t part[4] = {ri->elems, ri->elems, 0, 0};
  if (strcmp(op, "SLICE") && strcmp(op, "GATHER")) {
    part[1] = ri->kv_elems;
    for (int k = 0; k < 2; k++)
      if (t->src[k] >= 0) part[2 + k] = ri->nddims[k] ? ri->in_elems[k] : g->rows[g->t[t->src[k]].row].elems;
  }
  uint64_t total = 0, max = (uint64_t)INT64_MAX / (g->cfg.elem_bytes ? g->cfg.elem_bytes : 1);
  for (int k = 0; k < 4; k++) {
    if (part[k] > max - total)
      return chakra_error_set(err, CHAKRA_EINVAL, "tensor %s: the bytes it reads and writes must fit int64", t->name);
    total += part[k];
  }
  *out = total;
  return 0;
}

static int create_nodes(sg_graph *g, chakra_error *err) {
  for (uint32_t i = 0; i < g->nt; i++) {
    sg_tensor *t = &g->t[i];
    const sg_rowinfo *ri = &g->rows[t->row];
    for (int k = 0; k < 2; k++) {
      if (t->src[k] < 0) continue;
      const synth_edge *e = k ? &ri->row->x2 : &ri->row->x1;
      if (!e->shape) continue;
      shard_coll c[4];
      int n;
      const sg_rowinfo *prod = &g->rows[g->t[t->src[k]].row];
      int rc = shard_edge(&g->cfg, prod, ri, k, t->name, c, &n, err);
      if (rc) return rc;
      t = &g->t[i];
      t->chain_first[k] = n ? (int32_t)g->nn : -1;
      t->chain_len[k] = (uint8_t)n;
      for (int j = 0; j < n; j++) {
        rc = new_node(g, SN_COLL, (int32_t)i, t->stage, err);
        if (rc) return rc;
        sg_node *nd = &g->nodes[g->nn - 1];
        nd->comm_type = c[j].comm_type;
        nd->dim = c[j].dim;
        nd->edge = (uint8_t)k;
        nd->size = prod->elems;
      }
    }
    uint64_t ops = g->cfg.compat ? ri->ops_compat : ri->ops_ours;
    /* STAGE's expert-sum chain: only the last add counts a whole pass */
    if ((ri->row->flags & SR_CHAIN) && (uint32_t)t->expert + 1 != g->cfg.nexperts) ops = 0;
    if (ops) {
      int rc = new_node(g, SN_COMP, (int32_t)i, t->stage, err);
      if (!rc && g->cfg.infer) rc = traffic(g, (int32_t)i, &g->nodes[g->nn - 1].size, err);
      if (rc) return rc;
      g->t[i].comp = (int32_t)g->nn - 1;
    }
  }
  return 0;
}

static int compute_out(sg_graph *g, int32_t ti, chakra_error *err);

/* The receive node on stage for tensor ti (created with its send). */
static int ensure_recv(sg_graph *g, int32_t ti, int32_t stage, int32_t *out, chakra_error *err) {
  uint64_t key = (uint64_t)ti << 32 | (uint32_t)stage;
  uint32_t known = hmap_get_u64(&g->recvs, key);
  if (known != HMAP_NONE) {
    *out = (int32_t)known;
    return 0;
  }
  int rc = compute_out(g, ti, err);
  if (rc) return rc;
  uint32_t tag = (uint32_t)g->cfg.tag_base + g->next_tag++;
  int32_t src_stage = g->t[ti].stage;
  rc = new_node(g, SN_RECV, ti, stage, err);
  if (rc) return rc;
  int32_t recv = (int32_t)g->nn - 1;
  rc = new_node(g, SN_SEND, ti, src_stage, err);
  if (rc) return rc;
  sg_node *s = &g->nodes[g->nn - 1], *r = &g->nodes[recv];
  r->peer_stage = src_stage, s->peer_stage = stage;
  r->tag = s->tag = tag;
  r->size = s->size = g->rows[g->t[ti].row].elems;
  GROW(g->deps, g->ndeps, g->capdeps, g->t[ti].nout);
  s = &g->nodes[g->nn - 1];
  s->dep_off = g->ndeps;
  for (uint32_t k = 0; k < g->t[ti].nout; k++) g->deps[g->ndeps++] = g->outs[g->t[ti].out_off + k];
  s->ndep = g->t[ti].nout;
  int oom = 0;
  hmap_put_u64(&g->recvs, key, (uint32_t)recv, &oom);
  if (oom) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  *out = recv;
  return 0;
}

/* Makes sure what a consumer on stage needs from producer p is computed. */
static int prepare_src(sg_graph *g, int32_t p, int32_t stage, chakra_error *err) {
  int32_t r;
  return g->t[p].stage == stage ? compute_out(g, p, err) : ensure_recv(g, p, stage, &r, err);
}

/* Appends (deduplicated from start) the nodes a consumer on stage depends on for producer p. */
static int append_src(sg_graph *g, int32_t **vec, uint32_t *n, uint32_t *cap, uint32_t start, int32_t p,
                      int32_t stage, chakra_error *err) {
  int32_t one = -1;
  uint32_t off = 0, cnt = 1;
  if (g->t[p].stage == stage) {
    off = g->t[p].out_off, cnt = g->t[p].nout;
  } else {
    int rc = ensure_recv(g, p, stage, &one, err);
    if (rc) return rc;
  }
  for (uint32_t k = 0; k < cnt; k++) {
    /* by index: *vec may be g->outs, which GROW moves */
    int32_t item = one >= 0 ? one : g->outs[off + k];
    int dup = 0;
    for (uint32_t j = start; j < *n && !dup; j++) dup = (*vec)[j] == item;
    if (dup) continue;
    GROW(*vec, *n, *cap, 1);
    (*vec)[(*n)++] = item;
  }
  return 0;
}

static int append_one(int32_t **vec, uint32_t *n, uint32_t *cap, uint32_t start, int32_t v, chakra_error *err) {
  for (uint32_t j = start; j < *n; j++)
    if ((*vec)[j] == v) return 0;
  GROW(*vec, *n, *cap, 1);
  (*vec)[(*n)++] = v;
  return 0;
}

/* Inputs of tensor ti as its COMP (or, without one, its dependents) see them. */
static int prepare_inputs(sg_graph *g, int32_t ti, chakra_error *err) {
  for (int k = 0; k < 2; k++)
    if (g->t[ti].src[k] >= 0 && !g->t[ti].chain_len[k]) {
      int rc = prepare_src(g, g->t[ti].src[k], g->t[ti].stage, err);
      if (rc) return rc;
    }
  for (uint32_t k = 0; k < g->t[ti].nextra; k++) {
    int rc = prepare_src(g, g->extras[g->t[ti].extra_off + k], g->t[ti].stage, err);
    if (rc) return rc;
  }
  return 0;
}

static int append_inputs(sg_graph *g, int32_t ti, int32_t **vec, uint32_t *n, uint32_t *cap, chakra_error *err) {
  uint32_t start = *n;
  const sg_tensor *t = &g->t[ti];
  for (int k = 0; k < 2; k++) {
    if (t->src[k] < 0) continue;
    int rc = t->chain_len[k]
                 ? append_one(vec, n, cap, start, t->chain_first[k] + t->chain_len[k] - 1, err)
                 : append_src(g, vec, n, cap, start, t->src[k], t->stage, err);
    if (rc) return rc;
  }
  for (uint32_t k = 0; k < t->nextra; k++) {
    int rc = append_src(g, vec, n, cap, start, g->extras[t->extra_off + k], t->stage, err);
    if (rc) return rc;
  }
  return 0;
}

static int compute_out(sg_graph *g, int32_t ti, chakra_error *err) {
  sg_tensor *t = &g->t[ti];
  if (t->out_state == 2) return 0;
  if (t->out_state == 1)
    return chakra_error_set(err, CHAKRA_EINVAL, "template: dependency cycle through %s", t->name);
  t->out_state = 1;
  if (t->comp < 0) {
    int rc = prepare_inputs(g, ti, err);
    if (rc) return rc;
  }
  t = &g->t[ti];
  t->out_off = g->nouts;
  if (t->comp >= 0) {
    GROW(g->outs, g->nouts, g->capouts, 1);
    g->outs[g->nouts++] = t->comp;
  } else {
    int rc = append_inputs(g, ti, &g->outs, &g->nouts, &g->capouts, err);
    if (rc) return rc;
  }
  t = &g->t[ti];
  t->nout = g->nouts - t->out_off;
  t->out_state = 2;
  return 0;
}

static int wire_nodes(sg_graph *g, chakra_error *err) {
  uint32_t created = g->nn;
  for (uint32_t ni = 0; ni < created; ni++) {
    sg_node *n = &g->nodes[ni];
    int32_t ti = n->tensor;
    int rc = 0;
    if (n->kind == SN_COLL) {
      const sg_tensor *t = &g->t[ti];
      if ((int32_t)ni != t->chain_first[n->edge]) {
        GROW(g->deps, g->ndeps, g->capdeps, 1);
        g->nodes[ni].dep_off = g->ndeps, g->nodes[ni].ndep = 1;
        g->deps[g->ndeps++] = (int32_t)ni - 1;
        continue;
      }
      int32_t p = t->src[n->edge];
      rc = prepare_src(g, p, t->stage, err);
      if (rc) return rc;
      uint32_t start = g->ndeps;
      rc = append_src(g, &g->deps, &g->ndeps, &g->capdeps, start, p, g->t[ti].stage, err);
      if (rc) return rc;
      g->nodes[ni].dep_off = start, g->nodes[ni].ndep = g->ndeps - start;
    } else if (n->kind == SN_COMP) {
      rc = prepare_inputs(g, ti, err);
      if (rc) return rc;
      uint32_t start = g->ndeps;
      rc = append_inputs(g, ti, &g->deps, &g->ndeps, &g->capdeps, err);
      if (rc) return rc;
      g->nodes[ni].dep_off = start, g->nodes[ni].ndep = g->ndeps - start;
    }
  }
  return 0;
}

/* ---- activation recompute ------------------------------------------------------------------ */

static int in_block_fwd(const sg_graph *g, const sg_node *n) {
  const sg_tensor *t = &g->t[n->tensor];
  return in_block_mb(t->mod) && t->phase == SG_FWD && (n->kind == SN_COMP || n->kind == SN_COLL);
}

static int same_unit(const sg_graph *g, int32_t a, int32_t b) {
  const sg_tensor *x = &g->t[g->nodes[a].tensor], *y = &g->t[g->nodes[b].tensor];
  return x->mb == y->mb && x->block == y->block && in_block_mb(x->mod) && in_block_mb(y->mod);
}

/* Each block's forward nodes run again right before its backward: copies
 * (phase backward) wired to the copies of their in-block parents, their
 * roots started by the block's incoming gradient; the backward then reads
 * the recomputed activations. */
static int add_recompute(sg_graph *g, chakra_error *err) {
  uint32_t n0 = g->nn;
  int32_t *copy = malloc((n0 + 1) * sizeof *copy);
  if (!copy) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  int rc = 0;
  for (uint32_t i = 0; i < n0; i++) copy[i] = -1;
  for (uint32_t i = 0; !rc && i < n0; i++) {
    if (!in_block_fwd(g, &g->nodes[i])) continue;
    GROW(g->nodes, g->nn, g->capn, 1);
    g->nodes[g->nn] = g->nodes[i];
    g->nodes[g->nn].recompute = 1;
    g->nodes[g->nn].phase = SG_BWD;
    copy[i] = (int32_t)g->nn++;
  }
  char name[128];
  for (uint32_t i = 0; !rc && i < n0; i++) {
    if (copy[i] < 0) continue;
    const sg_node *o = &g->nodes[i];
    const sg_tensor *t = &g->t[o->tensor];
    uint32_t start = g->ndeps, ndep = o->ndep, off = o->dep_off;
    int root = 1;
    for (uint32_t k = 0; k < ndep && !rc; k++) {
      int32_t d = g->deps[off + k];
      int inside = copy[d] >= 0 && same_unit(g, d, (int32_t)i);
      root &= !inside;
      GROW(g->deps, g->ndeps, g->capdeps, 1);
      g->deps[g->ndeps++] = inside ? copy[d] : d;
    }
    if (root) { /* start when the block's gradient arrives */
      snprintf(name, sizeof name, "mb%d.transformer.%d.ffn_res.dy@0", t->mb, t->block);
      int32_t dy = lookup(g, name);
      if (dy < 0) return free(copy), chakra_error_set(err, CHAKRA_EINVAL, "template: %s not found", name);
      if ((rc = compute_out(g, dy, err))) break;
      for (uint32_t k = 0; k < g->t[dy].nout; k++) {
        GROW(g->deps, g->ndeps, g->capdeps, 1);
        g->deps[g->ndeps++] = g->outs[g->t[dy].out_off + k];
      }
    }
    g->nodes[copy[i]].dep_off = start, g->nodes[copy[i]].ndep = g->ndeps - start;
  }
  /* The block's backward reads the recomputed activations. */
  for (uint32_t i = 0; !rc && i < n0; i++) {
    const sg_node *o = &g->nodes[i];
    if (o->phase != SG_BWD || !in_block_mb(g->t[o->tensor].mod)) continue;
    for (uint32_t k = 0; k < o->ndep; k++) {
      int32_t d = g->deps[o->dep_off + k];
      if (copy[d] >= 0 && same_unit(g, d, (int32_t)i)) g->deps[o->dep_off + k] = copy[d];
    }
  }
  free(copy);
  return rc;
}

/* ---- entry points ------------------------------------------------------------------------- */

double sg_mem_size(const sg_graph *g, const sg_tensor *t) {
  const sg_rowinfo *ri = &g->rows[t->row];
  unsigned f = ri->row->flags;
  if ((f & SR_TRANSIENT) && g->cfg.fsdp) return 0;
  double e = (double)ri->elems;
  if (f & SR_WEIGHT) return e * (g->cfg.mixed ? 6 : 5);
  return g->cfg.mixed ? e * 2 : e;
}

/* Inference: the elements of each declared input layout, and for the
 * attention kernel the K and V it reads: 2*b*Ctx*(Dmodel/Head)*(KV heads/tp),
 * all the cached keys and values of a decode step. */
static int infer_sizes(const sg_config *c, const synth_template *tpl, sg_rowinfo *ri, chakra_error *err) {
  for (int k = 0; k < 2; k++)
    if (ri->nddims[k] && elems_of(c, ri->ddims[k], ri->nddims[k], &ri->in_elems[k], err))
      return chakra_error_set(err, CHAKRA_EINVAL, "tensor %s: its input %d is too large (its elements must fit int64)",
                              ri->row->name, k + 1);
  if (!(ri->row->flags & SR_ATTN_F)) return 0;
  char text[96];
  snprintf(text, sizeof text, "2*MicroBatch/dp*Ctx*Dmodel/Head*%s/tp", tpl->kvheads);
  sx_expr x;
  if (sx_compile(&x, text, err) || sx_eval_int(&x, c->vals, &ri->kv_elems, err))
    return chakra_error_set(err, CHAKRA_EINVAL,
                            "--seq %lld: the keys and values the attention reads (2 x micro-batch/dp x --seq x "
                            "--dmodel/--head x KV heads/--tp elements) must fit int64",
                            (long long)c->vals[SX_CTX].num);
  return 0;
}

static int compile_rows(sg_graph *g, const synth_template *tpl, chakra_error *err) {
  const synth_rows *tabs[MOD_COUNT] = {&tpl->block_mb, &tpl->block_w, &tpl->in_mb,    &tpl->in_w,
                                       &tpl->out_mb,   &tpl->out_w,   &tpl->expert_mb};
  uint32_t total = 1;
  for (int k = 0; k < MOD_COUNT; k++) total += tabs[k]->n;
  g->rows = calloc(total, sizeof *g->rows);
  if (!g->rows) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (int k = 0; k < MOD_COUNT; k++) {
    g->table_first[k] = g->nrows; /* tabs[] is in MOD_* order */
    for (uint32_t i = 0; i < tabs[k]->n; i++) {
      if (!row_included(&g->cfg, tabs[k]->rows[i].flags)) continue;
      int rc = compile_row(&g->cfg, &tabs[k]->rows[i], &g->rows[g->nrows], err);
      if (!rc && g->cfg.infer) rc = infer_sizes(&g->cfg, tpl, &g->rows[g->nrows], err);
      if (rc) return rc;
      g->nrows++;
    }
  }
  return 0;
}

static int instantiate(sg_graph *g, const synth_template *tpl, chakra_error *err) {
  int rc = 0;
  for (uint32_t m = 0; !rc && m < g->cfg.nmb; m++) {
    rc = add_tensors(g, &tpl->in_mb, MOD_IN_MB, (int)m, -1, 0, err);
    for (uint32_t b = 0; !rc && b < g->cfg.nblocks; b++) {
      rc = add_tensors(g, &tpl->block_mb, MOD_BLOCK_MB, (int)m, (int)b, 0, err);
      for (uint32_t e = 0; !rc && tpl->expert_mb.n && e < g->cfg.nexperts; e++)
        rc = add_tensors(g, &tpl->expert_mb, MOD_EXPERT_MB, (int)m, (int)b, (int)e, err);
    }
    if (!rc) rc = add_tensors(g, &tpl->out_mb, MOD_OUT_MB, (int)m, -1, 0, err);
  }
  for (uint32_t b = 0; !rc && b < g->cfg.nblocks; b++)
    rc = add_tensors(g, &tpl->block_w, MOD_BLOCK_W, -1, (int)b, 0, err);
  if (!rc) rc = add_tensors(g, &tpl->in_w, MOD_IN_W, -1, -1, 0, err);
  if (!rc) rc = add_tensors(g, &tpl->out_w, MOD_OUT_W, -1, -1, 0, err);
  if (rc) return rc;
  if (hmap_reserve(&g->names_, g->nt) || hmap_reserve(&g->recvs, (size_t)g->cfg.nmb * g->cfg.nblocks * 4))
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (uint32_t i = 0; i < g->nt; i++)
    if ((rc = hash_insert(g, (int32_t)i, err))) return rc;
  return 0;
}

int sg_check_sizes(const synth_template *tpl, const sg_config *cfg, chakra_error *err) {
  sg_graph g;
  memset(&g, 0, sizeof g);
  g.cfg = *cfg;
  int rc = compile_rows(&g, tpl, err);
  free(g.rows);
  return rc;
}

int sg_build(sg_graph *g, const synth_template *tpl, const sg_config *cfg, chakra_error *err) {
  memset(g, 0, sizeof *g);
  g->cfg = *cfg;
  int rc = compile_rows(g, tpl, err);
  if (!rc) rc = instantiate(g, tpl, err);
  if (!rc) rc = link_tensors(g, err);
  if (!rc) rc = create_nodes(g, err);
  if (!rc) rc = wire_nodes(g, err);
  if (!rc && cfg->recompute) rc = add_recompute(g, err);
  if (rc) sg_free(g);
  return rc;
}

void sg_free(sg_graph *g) {
  free(g->rows), free(g->t), free(g->nodes), free(g->deps), free(g->outs), free(g->extras);
  hmap_free(&g->names_), hmap_free(&g->recvs), free(g->cfg.block_stage);
  name_chunk *c = (name_chunk *)g->names;
  while (c) {
    name_chunk *n = c->next;
    free(c);
    c = n;
  }
  memset(g, 0, sizeof *g);
}
