/* stage.c - STAGE's files for --stage-compat, node ids and order included;
 * see stage.h. The steps follow STAGE's: tensors in its order (stagetpl.c),
 * bucketed per pipeline stage with a shadow per remote input, one compute
 * node per tensor and collective nodes per re-layout numbered by one
 * counter, then send/receive pairs, data dependencies, and the round-wise
 * deletion of compute nodes without work. */
#include "stage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/jsonw.h"
#include "sexpr.h"
#include "sgraph.h"
#include "stagetpl.h"
#include "../util/hmap.h"
#include "../util/vec.h"

#define BAD(...) chakra_error_set(err, CHAKRA_EINVAL, __VA_ARGS__)
#define OOM() chakra_error_set(err, CHAKRA_ENOMEM, "out of memory")
#define ULL(x) (unsigned long long)(x)
#define NPAR 4 /* STAGE's spatial dimensions: dp, tp, cp (, ep for its debug model) */
#define MAXCHAIN NPAR

enum { M_BLOCK, M_IN, M_OUT, M_BLOCK_W, M_IN_W, M_OUT_W, M_COUNT };
enum { K_COMP, K_COLL, K_SEND, K_RECV };
enum { CT_ALL_REDUCE = 0, CT_ALL_GATHER = 2, CT_ALL_TO_ALL = 6, CT_REDUCE_SCATTER = 7 };

/* ---- configuration ------------------------------------------------------------------------- */

static int is_moe(const chakra_synth_config *c) { return c->model_type && !strcmp(c->model_type, "moe"); }

int stage_applies(const chakra_synth_config *c) { return c->stage_compat && !is_moe(c); }

int stage_is_debug(const chakra_synth_config *c) { return c->model_type && !strcmp(c->model_type, "debug"); }

uint32_t stage_tp(const chakra_synth_config *c) {
  return stage_applies(c) && !stage_is_debug(c) ? c->tp * c->ep : c->tp;
}

/* STAGE: gpt, and dense/llama without mixed precision, build the GPT graph
 * (TP-only or TP+SP); dense/llama with it the llama graph, always TP+SP. */
static int pick_model(const chakra_synth_config *c) {
  const char *m = c->model_type ? c->model_type : "gpt";
  if (stage_is_debug(c)) return STG_DEBUG;
  if (strcmp(m, "gpt") && c->mixed_precision) return STG_LLAMA;
  return c->tpsp ? STG_TPSP_GPT : STG_TP_GPT;
}

int stage_check(const chakra_synth_config *c, chakra_error *err) {
  const char *m = c->model_type ? c->model_type : "gpt";
  if (strcmp(m, "gpt") && strcmp(m, "dense") && strcmp(m, "llama") && strcmp(m, "debug"))
    return BAD("--model-type '%s': expected gpt, dense, llama, moe or (with --stage-compat) debug", m);
  if (stage_is_debug(c) && c->pp != 1) return BAD("--model-type debug: --pp must be 1 (as STAGE asserts)");
  if (!c->dp || !c->tp || !c->sp || !c->pp || !c->ep)
    return BAD("parallel degrees (--dp --tp --sp --pp --ep) must be at least 1");
  if (!c->num_stacks || !c->dmodel || !c->dff || !c->head || !c->kvhead || !c->seq || !c->dvocal || !c->batch)
    return BAD("--num-stacks, --dmodel, --dff, --head, --kvhead, --seq, --dvocal and --batch must be at least 1");
  uint64_t mb = c->micro_batch < 0 ? c->batch : (uint64_t)c->micro_batch;
  if (mb == 0 || c->batch % mb)
    return BAD("--batch %llu is not a multiple of --micro-batch %llu (the number of micro-batches must be whole)",
               ULL(c->batch), ULL(mb));
  if (c->pp > c->num_stacks)
    return BAD("--pp %u exceeds --num-stacks %llu (every pipeline stage needs a block)", c->pp, ULL(c->num_stacks));
  uint64_t ranks = (uint64_t)c->dp * c->tp * c->ep * c->sp * c->pp;
  if (ranks > (1u << 24)) return BAD("dp*tp*ep*sp*pp = %llu ranks: at most 16777216", ULL(ranks));
  if (c->batch / mb > (1u << 20) / c->num_stacks) return BAD("--num-stacks x micro-batches is too large");
  for (size_t i = 0; i < c->n_ranks; i++)
    if (c->ranks[i] >= ranks)
      return BAD("--ranks: rank %u does not exist (the configuration has %llu ranks)", c->ranks[i], ULL(ranks));
  return 0;
}

/* ---- rows compiled for the configuration ---------------------------------------------------- */

typedef struct srow {
  const stg_row *r;
  char *y;                        /* printed output shape */
  sx_expr dims[SG_MAXDIM];        /* output dims */
  sx_expr xdims[2][SG_MAXDIM];    /* declared input dims */
  uint32_t hid, xhid[2];          /* symbols in the hidden dims (output, declared inputs) */
  uint8_t ndims, nxdims[2];
  uint8_t ident;                  /* op I: STAGE shows its input in "inputs"/"outputs" */
  double elems, ops;
} srow;

typedef struct sx {
  const chakra_synth_config *c;
  chakra_error *err;
  sx_rat vals[SX_NSYM];
  uint32_t deg[NPAR];
  int fsdp, mixed, fsdp_on, debug;
  uint32_t nmb, nblocks, pp, out_stage, *block_stage;
  srow *rows;
  uint32_t nrows, first[M_COUNT], count[M_COUNT];
} sx;

/* '|' marks the block's flat weight size, divided by dp under FSDP. */
static char *spell(const char *t, int fsdp) {
  size_t n = strlen(t) + 8;
  char *s = malloc(n);
  if (!s) return NULL;
  if (t[0] == '|') snprintf(s, n, fsdp ? "(%s)/dp" : "%s", t + 1);
  else snprintf(s, n, "%s", t);
  return s;
}

/* Exact product of the dims, then one rounding to a double (STAGE
 * evaluates the product expression and converts it to float). */
__extension__ typedef __int128 wide;

static int product(sx *x, const sx_expr *d, int n, double *out) {
  wide num = 1, den = 1;
  for (int i = 0; i < n; i++) {
    sx_rat v;
    int rc = sx_eval(&d[i], x->vals, &v, x->err);
    if (rc) return rc;
    num *= v.num, den *= v.den;
    wide a = num < 0 ? -num : num, b = den;
    while (b) {
      wide t = a % b;
      a = b, b = t;
    }
    if (a > 1) num /= a, den /= a;
    if (num > ((wide)1 << 100) || den > ((wide)1 << 100))
      return chakra_error_set(x->err, CHAKRA_EINVAL, "tensor size overflows");
  }
  *out = (double)num / (double)den;
  return 0;
}

static int syms_of(const char *text, int fsdp, uint32_t *mask, chakra_error *err) {
  sx_expr d[SG_MAXDIM];
  uint8_t n;
  char *t = spell(text, fsdp);
  if (!t) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  int rc = sg_compile_shape(t, d, &n, err);
  free(t);
  *mask = 0;
  for (int i = 0; !rc && i < n; i++) *mask |= d[i].syms;
  return rc;
}

static int compile_one(sx *x, const stg_row *r, srow *o) {
  memset(o, 0, sizeof *o);
  o->r = r;
  o->ident = !strcmp(r->op, "I");
  chakra_error *err = x->err;
  o->y = spell(r->y, x->fsdp);
  if (!o->y) return OOM();
  int rc = sg_compile_shape(o->y, o->dims, &o->ndims, err);
  if (!rc) rc = syms_of(r->yh, x->fsdp, &o->hid, err);
  const char *xs[2] = {r->x1s, r->x2s}, *xh[2] = {r->x1h, r->x2h};
  for (int k = 0; !rc && k < 2; k++) {
    if (!xs[k]) continue;
    char *t = spell(xs[k], x->fsdp);
    if (!t) return OOM();
    rc = sg_compile_shape(t, o->xdims[k], &o->nxdims[k], err);
    free(t);
    if (!rc) rc = syms_of(xh[k], x->fsdp, &o->xhid[k], err);
  }
  if (!rc) rc = product(x, o->dims, o->ndims, &o->elems);
  if (!rc && r->ops) {
    char *t = spell(r->ops, x->fsdp);
    sx_expr e;
    sx_rat v;
    if (!t) return OOM();
    rc = sx_compile(&e, t, err);
    free(t);
    if (!rc) rc = sx_eval(&e, x->vals, &v, err);
    if (!rc) o->ops = (double)v.num / (double)v.den;
  }
  if (rc) {
    char why[sizeof err->msg];
    snprintf(why, sizeof why, "%s", err ? err->msg : "");
    return chakra_error_set(err, rc, "stage template row %s: %s", r->name, why);
  }
  return 0;
}

static int compile_rows(sx *x, const stg_model *m) {
  const stg_rows *tabs[M_COUNT] = {&m->block, &m->in, &m->out, &m->block_w, &m->in_w, &m->out_w};
  uint32_t total = 0;
  for (int k = 0; k < M_COUNT; k++) total += tabs[k]->n;
  x->rows = calloc(total, sizeof *x->rows);
  if (!x->rows) return chakra_error_set(x->err, CHAKRA_ENOMEM, "out of memory");
  for (int k = 0; k < M_COUNT; k++) {
    x->first[k] = x->nrows, x->count[k] = tabs[k]->n;
    for (unsigned i = 0; i < tabs[k]->n; i++) {
      int rc = compile_one(x, &tabs[k]->rows[i], &x->rows[x->nrows]);
      x->nrows++;
      if (rc) return rc;
    }
  }
  return 0;
}

/* ---- tensors ---------------------------------------------------------------------------------- */

typedef struct stt {
  size_t name;        /* STAGE's tensor id: offset into the names */
  int32_t row, stage, mod, mb, block;
  int32_t x[2];       /* inputs, after shadows replaced remote ones */
  uint32_t extra_off, nextra;
  int32_t remote;     /* a shadow: the tensor it stands for; else -1 */
  int32_t comp, chain[2][MAXCHAIN], recv, first_send, last_send;
  uint8_t nchain[2];
} stt;

typedef struct snode {
  uint8_t kind, comm_type, dim, edge, alive;
  int32_t tensor, peer_stage, next_send;
  uint32_t tag;
  uint64_t id;
  int32_t *deps;
  uint32_t ndeps, capdeps;
} snode;

typedef struct sgraph_ {
  sx *x;
  stt *t;
  uint32_t nt, capt;
  int32_t *extras;
  uint32_t nextras, capextras;
  hmap by_name; /* tensor name -> the first tensor of that name */
  char *names;
  size_t nnames, capnames;
  snode *n;
  uint32_t nn, capn;
  int32_t **bucket;   /* per stage: tensors in STAGE's order, shadows last */
  uint32_t *nbucket, *capbucket;
  uint64_t next_id;
} sgraph_;

#define TN(g, i) ((g)->names + (g)->t[i].name)

static int oom(sgraph_ *g) { return chakra_error_set(g->x->err, CHAKRA_ENOMEM, "out of memory"); }


/* Names are offsets into one buffer until every tensor exists. */
static int64_t add_name(sgraph_ *g, const char *s) {
  size_t n = strlen(s) + 1;
  if (VEC_ROOM(g->names, g->nnames, g->capnames, n)) return -1;
  memcpy(g->names + g->nnames, s, n);
  g->nnames += n;
  return (int64_t)(g->nnames - n);
}

static const char *tensor_name(const void *ctx, uint32_t t, size_t *len) {
  const char *s = TN((const sgraph_ *)ctx, t);
  *len = strlen(s);
  return s;
}

static int32_t lookup(const sgraph_ *g, const char *name) {
  size_t n = strlen(name);
  uint32_t t = hmap_find_str(&g->by_name, hmap_hash_str(name, n), name, n, tensor_name, g);
  return t == HMAP_NONE ? -1 : (int32_t)t;
}

static void prefix_of(char *out, size_t cap, int mod, int mb, int b) {
  if (mod == M_BLOCK) snprintf(out, cap, "mb%d.transformer.%d.", mb, b);
  else if (mod == M_IN || mod == M_OUT) snprintf(out, cap, "mb%d.", mb);
  else if (mod == M_BLOCK_W) snprintf(out, cap, "transformer.%d.", b);
  else out[0] = 0;
}

static int add_tensor(sgraph_ *g, int mod, uint32_t row, int mb, int b, int32_t stage) {
  if (VEC_ROOM(g->t, g->nt, g->capt, 1)) return -1;
  char name[256], pre[64];
  prefix_of(pre, sizeof pre, mod, mb, b);
  snprintf(name, sizeof name, "%s%s", pre, g->x->rows[row].r->name);
  int64_t off = add_name(g, name);
  if (off < 0) return -1;
  stt *t = &g->t[g->nt++];
  memset(t, 0, sizeof *t);
  t->name = (size_t)off;
  t->row = (int32_t)row, t->stage = stage, t->mod = mod, t->mb = mb, t->block = b;
  t->x[0] = t->x[1] = t->remote = t->comp = t->recv = t->first_send = t->last_send = -1;
  return 0;
}

static int add_module(sgraph_ *g, int mod, int mb, int b, int32_t stage) {
  for (uint32_t i = 0; i < g->x->count[mod]; i++)
    if (add_tensor(g, mod, g->x->first[mod] + i, mb, b, stage)) return -1;
  return 0;
}

/* STAGE's order: per micro-batch the blocks, the input embedding, the
 * output embedding and loss; then per weight the micro-batch merges of the
 * gradients, the weights, their updates (blocks first). */
static int add_all(sgraph_ *g) {
  sx *x = g->x;
  if (x->debug) { /* one layer, named without prefix, no micro-batch copies */
    for (uint32_t i = 0; i < x->count[M_IN]; i++)
      if (add_tensor(g, M_IN_W, x->first[M_IN] + i, -1, -1, 0)) return -1;
    return 0;
  }
  for (uint32_t m = 0; m < x->nmb; m++) {
    for (uint32_t b = 0; b < x->nblocks; b++)
      if (add_module(g, M_BLOCK, (int)m, (int)b, (int32_t)x->block_stage[b])) return -1;
    if (add_module(g, M_IN, (int)m, -1, 0) || add_module(g, M_OUT, (int)m, -1, (int32_t)x->out_stage)) return -1;
  }
  for (uint32_t k = 0; k < 3; k++) {
    for (uint32_t b = 0; b < x->nblocks; b++)
      if (add_tensor(g, M_BLOCK_W, x->first[M_BLOCK_W] + k, -1, (int)b, (int32_t)x->block_stage[b])) return -1;
    if (add_tensor(g, M_IN_W, x->first[M_IN_W] + k, -1, -1, 0) ||
        add_tensor(g, M_OUT_W, x->first[M_OUT_W] + k, -1, -1, (int32_t)x->out_stage))
      return -1;
  }
  return 0;
}

/* A reference of tensor t (stagetpl.h) as a full name; mb: for "/mb+." */
static void ref_name(const sgraph_ *g, const stt *t, const char *ref, int mb, char *out, size_t cap) {
  int last = (int)g->x->nblocks - 1;
  if (!strcmp(ref, "$in")) {
    if (t->mod == M_OUT) snprintf(out, cap, "mb%d.transformer.%d.ffn_res.y@0", t->mb, last);
    else if (t->block == 0) snprintf(out, cap, "mb%d.in_emb.y@0", t->mb);
    else snprintf(out, cap, "mb%d.transformer.%d.ffn_res.y@0", t->mb, t->block - 1);
  } else if (!strcmp(ref, "$dout")) {
    if (t->mod == M_IN) snprintf(out, cap, "mb%d.transformer.0.input_norm.dx@0", t->mb);
    else if (t->block == last) snprintf(out, cap, "mb%d.out_emb.dx@0", t->mb);
    else snprintf(out, cap, "mb%d.transformer.%d.input_norm.dx@0", t->mb, t->block + 1);
  } else if (ref[0] == '/') {
    const char *r = ref + 1;
    size_t k = 0;
    if (!strncmp(r, "mb+.", 4) || !strncmp(r, "mb0.", 4)) k = (size_t)snprintf(out, cap, "mb%d.", mb), r += 4;
    for (; *r && k + 12 < cap; r++) {
      if (r[0] == '%' && r[1] == 'b') k += (size_t)snprintf(out + k, cap - k, "%d", t->block), r++;
      else out[k++] = *r;
    }
    out[k] = 0;
  } else {
    char pre[64];
    prefix_of(pre, sizeof pre, t->mod, t->mb, t->block);
    snprintf(out, cap, "%s%s", pre, ref);
  }
}

static int32_t resolve(sgraph_ *g, const stt *t, const char *ref, int mb) {
  char name[256];
  ref_name(g, t, ref, mb, name, sizeof name);
  int32_t r = lookup(g, name);
  if (r < 0)
    chakra_error_set(g->x->err, CHAKRA_EINVAL, "stage template: %s: input %s not found", g->names + t->name, name);
  return r;
}

static int link_all(sgraph_ *g) {
  for (uint32_t i = 0; i < g->nt; i++) {
    const stg_row *r = g->x->rows[g->t[i].row].r;
    const char *in[2] = {r->x1, r->x2};
    for (int k = 0; k < 2; k++)
      if (in[k] && (g->t[i].x[k] = resolve(g, &g->t[i], in[k], 0)) < 0) return CHAKRA_EINVAL;
    g->t[i].extra_off = g->nextras;
    for (const char *s = r->extra; s && *s;) {
      char ref[160];
      size_t len = strcspn(s, " ");
      snprintf(ref, sizeof ref, "%.*s", (int)len, s);
      s += len + (s[len] == ' ');
      int every = !strncmp(ref, "/mb+.", 5);
      for (uint32_t m = every ? 1 : 0; m < (every ? g->x->nmb : 1); m++) {
        int32_t e = resolve(g, &g->t[i], ref, (int)m);
        if (e < 0) return CHAKRA_EINVAL;
        if (VEC_ROOM(g->extras, g->nextras, g->capextras, 1)) return oom(g);
        g->extras[g->nextras++] = e;
      }
    }
    g->t[i].nextra = g->nextras - g->t[i].extra_off;
  }
  return 0;
}

static int index_names(sgraph_ *g) {
  /* Sized once: a table that grew could reorder the tensors of one name
   * (rehashing walks slots, not probe order), and the first must win. */
  if (hmap_reserve(&g->by_name, g->nt)) return oom(g);
  for (uint32_t i = 0; i < g->nt; i++) {
    const char *s = TN(g, i);
    if (hmap_add(&g->by_name, hmap_hash_str(s, strlen(s)), i)) return oom(g);
  }
  return 0;
}

/* ---- stages and shadows ----------------------------------------------------------------------- */

static int bucket_push(sgraph_ *g, uint32_t s, int32_t t) {
  int32_t *slot = VEC_PUSH(g->bucket[s], g->nbucket[s], g->capbucket[s]);
  if (!slot) return oom(g);
  *slot = t;
  return 0;
}

/* STAGE replaces an input produced on another stage by one shadow per
 * remote tensor, appended to the stage in the order of first use. */
static int distribute(sgraph_ *g) {
  uint32_t pp = g->x->pp;
  g->bucket = calloc(pp, sizeof *g->bucket);
  g->nbucket = calloc(pp, sizeof *g->nbucket);
  g->capbucket = calloc(pp, sizeof *g->capbucket);
  if (!g->bucket || !g->nbucket || !g->capbucket) return oom(g);
  uint32_t real = g->nt;
  for (uint32_t i = 0; i < real; i++)
    if (bucket_push(g, (uint32_t)g->t[i].stage, (int32_t)i)) return CHAKRA_ENOMEM;
  int32_t *shadow_of = malloc((size_t)real * sizeof *shadow_of);
  if (!shadow_of) return oom(g);
  for (uint32_t s = 0; s < pp; s++) {
    for (uint32_t i = 0; i < real; i++) shadow_of[i] = -1;
    uint32_t n = g->nbucket[s];
    for (uint32_t j = 0; j < n; j++) {
      int32_t ti = g->bucket[s][j];
      for (int k = 0; k < 2; k++) {
        int32_t p = g->t[ti].x[k];
        if (p < 0 || g->t[p].stage == (int32_t)s) continue;
        if (shadow_of[p] < 0) {
          char name[300];
          snprintf(name, sizeof name, "shadow_%s", TN(g, p));
          int64_t off = add_name(g, name);
          if (off < 0 || VEC_ROOM(g->t, g->nt, g->capt, 1)) return free(shadow_of), oom(g);
          stt *sh = &g->t[g->nt];
          memset(sh, 0, sizeof *sh);
          sh->name = (size_t)off;
          sh->row = g->t[p].row, sh->stage = (int32_t)s, sh->mod = -1, sh->remote = p;
          sh->x[0] = sh->x[1] = sh->comp = sh->recv = sh->first_send = sh->last_send = -1;
          shadow_of[p] = (int32_t)g->nt++;
          if (bucket_push(g, s, shadow_of[p])) return free(shadow_of), CHAKRA_ENOMEM;
        }
        g->t[ti].x[k] = shadow_of[p];
      }
      for (uint32_t e = 0; e < g->t[ti].nextra; e++)
        if (g->t[g->extras[g->t[ti].extra_off + e]].stage != (int32_t)s)
          return free(shadow_of), chakra_error_set(g->x->err, CHAKRA_EINVAL,
                                                   "stage template: %s depends on another pipeline stage", TN(g, ti));
    }
  }
  free(shadow_of);
  return 0;
}

/* ---- collectives (STAGE's matcher) ------------------------------------------------------------ */

enum { ST_DUP, ST_PART, ST_PSUM };

static int par_state(const sx_expr *dims, int n, uint32_t hid, int sym, int *dim) {
  for (int i = 0; i < n; i++)
    if (dims[i].syms & (1u << sym)) return *dim = i, ST_PART;
  *dim = -1;
  return hid & (1u << sym) ? ST_PSUM : ST_DUP;
}

/* STAGE keeps a partitioned dimension when the two dims are the same
 * expression once the other parallel symbols are set to 1; equal values
 * at two unrelated assignments of primes decide that. */
static int same_dim(const sx_expr *a, const sx_expr *b, int sym) {
  static const int64_t primes[2][SX_NSYM] = {{3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53},
                                             {59, 61, 67, 71, 73, 79, 83, 89, 97, 101, 103, 107, 109, 113, 127}};
  for (int k = 0; k < 2; k++) {
    sx_rat v[SX_NSYM], ra, rb;
    for (int i = 0; i < SX_NSYM; i++)
      v[i].num = i >= SX_PAR_FIRST && i != sym ? 1 : primes[k][i], v[i].den = 1;
    if (sx_eval(a, v, &ra, NULL) || sx_eval(b, v, &rb, NULL)) return 0;
    if (ra.num != rb.num || ra.den != rb.den) return 0;
  }
  return 1;
}

/* The collectives STAGE inserts on input k of tensor t, in dp, tp, cp order. */
static int match(sgraph_ *g, int32_t t, int k, uint8_t type[MAXCHAIN], uint8_t dim[MAXCHAIN], int *n) {
  sx *x = g->x;
  const srow *cons = &x->rows[g->t[t].row];
  const srow *prod = &x->rows[g->t[g->t[t].x[k]].row];
  *n = 0;
  for (int p = 0; p < NPAR; p++) {
    if (x->deg[p] <= 1) continue;
    int sym = SX_PAR_FIRST + p, pd, cd;
    int ps = par_state(prod->dims, prod->ndims, prod->hid, sym, &pd);
    int cs = par_state(cons->xdims[k], cons->nxdims[k], cons->xhid[k], sym, &cd);
    int ty = -1;
    if (cs == ST_PSUM && ps != ST_PSUM)
      return chakra_error_set(x->err, CHAKRA_EINVAL, "stage template: %s input %d cannot become a partial sum over %s",
                              TN(g, t), k + 1, sx_symbol_name(sym));
    if (cs == ST_PART && ps == ST_PART && !same_dim(&prod->dims[pd], &cons->xdims[k][cd], sym)) ty = CT_ALL_TO_ALL;
    else if (cs == ST_PART && ps == ST_PSUM) ty = CT_REDUCE_SCATTER;
    else if (cs == ST_DUP && ps == ST_PART) ty = CT_ALL_GATHER;
    else if (cs == ST_DUP && ps == ST_PSUM) ty = CT_ALL_REDUCE;
    if (ty >= 0) type[*n] = (uint8_t)ty, dim[*n] = (uint8_t)p, ++*n;
  }
  return 0;
}

/* ---- nodes ------------------------------------------------------------------------------------- */

static int32_t new_node(sgraph_ *g, uint8_t kind, int32_t t) {
  if (VEC_ROOM(g->n, g->nn, g->capn, 1)) return -1;
  snode *n = &g->n[g->nn];
  memset(n, 0, sizeof *n);
  n->kind = kind, n->tensor = t, n->alive = 1, n->peer_stage = -1, n->next_send = -1;
  n->id = g->next_id++;
  return (int32_t)g->nn++;
}

static int add_dep(sgraph_ *g, int32_t node, int32_t dep) {
  snode *n = &g->n[node];
  if (VEC_ROOM(n->deps, n->ndeps, n->capdeps, 1)) return oom(g);
  n->deps[n->ndeps++] = dep;
  return 0;
}

/* A compute node for every tensor, then the collectives of its first and
 * second input, each chain linked in order and feeding the compute node. */
static int make_nodes(sgraph_ *g, uint32_t s) {
  for (uint32_t j = 0; j < g->nbucket[s]; j++) {
    int32_t t = g->bucket[s][j];
    int32_t c = new_node(g, K_COMP, t);
    if (c < 0) return oom(g);
    g->t[t].comp = c;
    for (int k = 0; k < 2; k++) {
      if (g->t[t].x[k] < 0 || g->t[t].remote >= 0) continue;
      uint8_t type[MAXCHAIN], dim[MAXCHAIN];
      int n, rc = match(g, t, k, type, dim, &n);
      if (rc) return rc;
      for (int i = 0; i < n; i++) {
        int32_t v = new_node(g, K_COLL, t);
        if (v < 0) return oom(g);
        g->n[v].comm_type = type[i], g->n[v].dim = dim[i], g->n[v].edge = (uint8_t)k;
        g->t[t].chain[k][i] = v;
        if (i && add_dep(g, v, g->t[t].chain[k][i - 1])) return CHAKRA_ENOMEM;
      }
      g->t[t].nchain[k] = (uint8_t)n;
      if (n && add_dep(g, c, g->t[t].chain[k][n - 1])) return CHAKRA_ENOMEM;
    }
  }
  return 0;
}

/* A send on the producer's stage (after its compute node) and a receive on
 * the shadow's, per shadow in stage order, tags counting up. */
static int make_pairs(sgraph_ *g) {
  uint64_t pairs = 0, base = g->x->c->tag_base;
  for (uint32_t s = 0; s < g->x->pp; s++)
    for (uint32_t j = 0; j < g->nbucket[s]; j++) pairs += g->t[g->bucket[s][j]].remote >= 0;
  const uint64_t tags = (uint64_t)INT32_MAX + 1; /* comm_tag is int32: tags 0 .. 2^31 - 1 */
  if (pairs > tags)
    return chakra_error_set(g->x->err, CHAKRA_EINVAL,
                            "--pp %u, --num-stacks and --batch/--micro-batch make %llu pipeline tags: comm_tag, a "
                            "32-bit signed field, holds at most %llu",
                            g->x->pp, ULL(pairs), ULL(tags));
  if (pairs && base > tags - pairs)
    return chakra_error_set(g->x->err, CHAKRA_EINVAL,
                            "--stage-tag-base %llu: this workload uses %llu pipeline tags (--stage-tag-base .. "
                            "--stage-tag-base + %llu), and comm_tag is a 32-bit signed field: at most %llu",
                            ULL(base), ULL(pairs), ULL(pairs - 1), ULL(tags - pairs));
  uint32_t tag = (uint32_t)base;
  for (uint32_t s = 0; s < g->x->pp; s++)
    for (uint32_t j = 0; j < g->nbucket[s]; j++) {
      int32_t sh = g->bucket[s][j], p = g->t[sh].remote;
      if (p < 0) continue;
      int32_t snd = new_node(g, K_SEND, p);
      if (snd < 0 || add_dep(g, snd, g->t[p].comp)) return oom(g);
      int32_t rcv = new_node(g, K_RECV, sh);
      if (rcv < 0) return oom(g);
      g->n[snd].tag = g->n[rcv].tag = tag++;
      g->n[snd].peer_stage = (int32_t)s, g->n[rcv].peer_stage = g->t[p].stage;
      if (g->t[p].last_send >= 0) g->n[g->t[p].last_send].next_send = snd;
      else g->t[p].first_send = snd;
      g->t[p].last_send = snd;
      g->t[sh].recv = rcv;
    }
  return 0;
}

static int32_t output_node(const sgraph_ *g, int32_t t) { return g->t[t].recv >= 0 ? g->t[t].recv : g->t[t].comp; }

/* Each input's producer feeds the input's first collective, or the compute
 * node; CUSTOM ops' further dependencies feed the compute node. */
static int connect(sgraph_ *g, uint32_t s) {
  for (uint32_t j = 0; j < g->nbucket[s]; j++) {
    int32_t t = g->bucket[s][j];
    const stt *T = &g->t[t];
    for (int k = 0; k < 2; k++)
      if (T->x[k] >= 0 && add_dep(g, T->nchain[k] ? T->chain[k][0] : T->comp, output_node(g, T->x[k])))
        return CHAKRA_ENOMEM;
    for (uint32_t e = 0; e < T->nextra; e++)
      if (add_dep(g, T->comp, output_node(g, g->extras[T->extra_off + e]))) return CHAKRA_ENOMEM;
  }
  return 0;
}

/* The stage's live nodes in STAGE's file order: per tensor its compute
 * node, collectives of x1 then x2, sends, receive. */
static uint32_t stage_order(const sgraph_ *g, uint32_t s, int32_t *out) {
  uint32_t n = 0;
  for (uint32_t j = 0; j < g->nbucket[s]; j++) {
    const stt *T = &g->t[g->bucket[s][j]];
    if (T->comp >= 0 && g->n[T->comp].alive) out[n++] = T->comp;
    for (int k = 0; k < 2; k++)
      for (int i = 0; i < T->nchain[k]; i++) out[n++] = T->chain[k][i];
    for (int32_t v = T->first_send; v >= 0; v = g->n[v].next_send) out[n++] = v;
    if (T->recv >= 0) out[n++] = T->recv;
  }
  return n;
}

/* A shadow stands for a remote tensor and does no work itself. */
static int is_empty(const sgraph_ *g, int32_t v) {
  const stt *t = &g->t[g->n[v].tensor];
  return g->n[v].kind == K_COMP && (t->remote >= 0 || g->x->rows[t->row].ops == 0.0);
}

static int remove_dep(snode *n, int32_t dep) {
  for (uint32_t i = 0; i < n->ndeps; i++)
    if (n->deps[i] == dep) {
      memmove(n->deps + i, n->deps + i + 1, (n->ndeps - i - 1) * sizeof *n->deps);
      n->ndeps--;
      return 0;
    }
  return -1;
}

/* STAGE's deletion of compute nodes without work, round by round: a node
 * with such a node among its parents waits for a later round; the children
 * of a deleted node (as linked when the round began) lose it and take its
 * parents, appended in order, duplicates included. */
static int clean(sgraph_ *g, uint32_t s) {
  uint32_t N = g->nn;
  int32_t *order = malloc((N + 1) * sizeof *order), *kids = NULL;
  uint32_t *start = malloc((N + 1) * sizeof *start), *pos = malloc((N + 1) * sizeof *pos), capk = 0;
  uint8_t *mark = calloc(N + 1, 1);
  int rc = order && start && pos && mark ? 0 : oom(g);
  while (!rc) {
    uint32_t n = stage_order(g, s, order), ne = 0, total = 0;
    for (uint32_t i = 0; i < n; i++) ne += mark[order[i]] = (uint8_t)is_empty(g, order[i]);
    if (!ne) break;
    for (uint32_t i = 0; i < n; i++) pos[order[i]] = 0;
    for (uint32_t i = 0; i < n; i++)
      for (uint32_t d = 0; d < g->n[order[i]].ndeps; d++) pos[g->n[order[i]].deps[d]]++, total++;
    /* every parent of a live node is live and of this stage (in order) */
    for (uint32_t i = 0, acc = 0; i < n; i++) start[order[i]] = acc, acc += pos[order[i]], pos[order[i]] = start[order[i]];
    if (VEC_RESERVE(kids, capk, total + 1)) {
      rc = oom(g);
      break;
    }
    for (uint32_t i = 0; i < n; i++)
      for (uint32_t d = 0; d < g->n[order[i]].ndeps; d++) kids[pos[g->n[order[i]].deps[d]]++] = order[i];
    for (uint32_t i = 0; !rc && i < n; i++) {
      int32_t e = order[i];
      if (!mark[e]) continue;
      int wait = 0;
      for (uint32_t d = 0; d < g->n[e].ndeps && !wait; d++) wait = mark[g->n[e].deps[d]];
      if (wait) continue;
      g->n[e].alive = 0;
      for (uint32_t k = start[e]; !rc && k < pos[e]; k++) {
        int32_t u = kids[k];
        if (remove_dep(&g->n[u], e)) rc = chakra_error_set(g->x->err, CHAKRA_EINVAL, "internal: lost a dependency");
        for (uint32_t d = 0; !rc && d < g->n[e].ndeps; d++) rc = add_dep(g, u, g->n[e].deps[d]);
      }
    }
  }
  free(order), free(kids), free(start), free(pos), free(mark);
  return rc;
}

/* ---- encoding ----------------------------------------------------------------------------------- */

typedef struct io {
  char name[2][768], size[2][40];
  const char *v[4];
} io;

/* STAGE's memory heuristic: elements, plus 4 per element of optimizer
 * state for weights; with mixed precision 6 (weights, then the state
 * added as a float) or 2 (others, an integer) per element; under FSDP 0
 * for transient buffers and gradients, told apart by name. */
static void io_size(const sgraph_ *g, int32_t t, const char *name, char *out) {
  const sx *x = g->x;
  const srow *r = &x->rows[g->t[t].row];
  int rg = g->t[t].remote < 0 && r->r->rg;
  if (x->fsdp_on) {
    char low[768];
    size_t i = 0;
    for (; name[i] && i + 1 < sizeof low; i++) low[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] + 32 : name[i]);
    low[i] = 0;
    const char *last = strrchr(low, '.');
    last = last ? last + 1 : low;
    if (strstr(name, "_assembled_weight") || strstr(name, "_assembled_grad") || strstr(low, "_backward") ||
        last[0] == 'd') {
      strcpy(out, "0");
      return;
    }
  }
  double e = r->elems, opt = rg ? e * 4 : 0;
  if (x->mixed && e != 0) {
    long long v = rg ? (long long)(e * 1.5) * 4 : (long long)(e * 0.5) * 4;
    if (!rg) {
      snprintf(out, 40, "%lld", v);
      return;
    }
    e = (double)v;
  }
  out[jsonw_format_pyfloat(out, e + opt)] = 0;
}

/* An input or output as STAGE lists it: an identity shows its input. */
static void io_of(const sgraph_ *g, int32_t t, io *o, int slot) {
  if (g->t[t].remote < 0 && g->x->rows[g->t[t].row].ident && g->t[t].x[0] >= 0) t = g->t[t].x[0];
  snprintf(o->name[slot], sizeof o->name[slot], "%s%s", TN(g, t), g->x->rows[g->t[t].row].y);
  io_size(g, t, o->name[slot], o->size[slot]);
  o->v[2 * slot] = o->name[slot], o->v[2 * slot + 1] = o->size[slot];
}

static void put_io(emit_stage *es, const sgraph_ *g, const char *attr, int32_t a, int32_t b) {
  io o;
  size_t n = 0;
  if (a >= 0) io_of(g, a, &o, 0), n = 2;
  if (b >= 0) io_of(g, b, &o, n / 2), n += 2;
  if (n) emit_attr_strlist(es, attr, o.v, n);
  else emit_attr_empty(es, attr);
}

static int encode_node(const sgraph_ *g, emit_stage *es, int32_t v, uint64_t **ids, uint32_t *cap) {
  static const char *const sfx[] = {"_COMP", "_X1COMM", "_Y_SEND", "_Y_RECV"};
  static const int type[] = {4, 7, 5, 6};
  const snode *n = &g->n[v];
  const stt *T = &g->t[n->tensor];
  const srow *r = &g->x->rows[T->row];
  emit_node_begin(es, n->id, TN(g, n->tensor), n->kind == K_COLL && n->edge ? "_X2_COMM" : sfx[n->kind], type[n->kind]);
  if (VEC_RESERVE(*ids, *cap, n->ndeps + 1)) return CHAKRA_ENOMEM;
  uint32_t nd = 0;
  for (uint32_t i = 0; i < n->ndeps; i++) {
    uint64_t id = g->n[n->deps[i]].id;
    int dup = 0;
    for (uint32_t j = 0; j < nd && !dup; j++) dup = (*ids)[j] == id;
    if (!dup) (*ids)[nd++] = id;
  }
  emit_node_deps(es, NULL, 0, *ids, nd);
  switch (n->kind) {
  case K_COMP:
    put_io(es, g, "inputs", T->x[0], T->x[1]);
    put_io(es, g, "outputs", n->tensor, -1);
    emit_attr_i64(es, "num_ops", (int64_t)r->ops);
    emit_attr_u64(es, "tensor_size", (uint64_t)r->elems);
    emit_attr_str(es, "op_type", r->r->op);
    break;
  case K_COLL:
    put_io(es, g, "inputs", T->x[n->edge], -1);
    emit_attr_empty(es, "outputs");
    emit_attr_i64(es, "comm_size", (int64_t)g->x->rows[g->t[T->x[n->edge]].row].elems);
    emit_attr_i64(es, "comm_type", n->comm_type);
    emit_attr_hole(es, EMIT_HOLE_PG, n->dim);
    emit_attr_i32(es, "is_cpu_op", 0);
    break;
  default:
    put_io(es, g, "inputs", n->kind == K_SEND ? n->tensor : -1, -1);
    put_io(es, g, "outputs", n->kind == K_RECV ? n->tensor : -1, -1);
    emit_attr_i64(es, "comm_size", (int64_t)r->elems);
    emit_attr_i32(es, "comm_tag", (int32_t)n->tag);
    emit_attr_hole(es, n->kind == K_SEND ? EMIT_HOLE_DST : EMIT_HOLE_SRC, n->peer_stage);
    emit_attr_i32(es, "is_cpu_op", 0);
  }
  emit_node_end(es);
  return 0;
}

static int encode_stage(sgraph_ *g, uint32_t s, emit_stage **out) {
  int32_t *order = malloc((g->nn + 1) * sizeof *order);
  emit_stage *es = emit_stage_new();
  uint64_t *ids = NULL;
  uint32_t cap = 0;
  int rc = order && es ? 0 : CHAKRA_ENOMEM;
  uint32_t n = rc ? 0 : stage_order(g, s, order);
  for (uint32_t i = 0; !rc && i < n; i++) rc = encode_node(g, es, order[i], &ids, &cap);
  if (!rc && emit_stage_failed(es)) rc = CHAKRA_ENOMEM;
  free(order), free(ids);
  if (rc) {
    emit_stage_free(es);
    return oom(g);
  }
  *out = es;
  return 0;
}

/* ---- entry point -------------------------------------------------------------------------------- */

static void graph_free(sgraph_ *g) {
  for (uint32_t i = 0; i < g->nn; i++) free(g->n[i].deps);
  for (uint32_t s = 0; g->bucket && s < g->x->pp; s++) free(g->bucket[s]);
  free(g->t), free(g->extras), hmap_free(&g->by_name), free(g->names), free(g->n);
  free(g->bucket), free(g->nbucket), free(g->capbucket);
}

static int setup(sx *x, const chakra_synth_config *c, int model, chakra_error *err) {
  memset(x, 0, sizeof *x);
  x->c = c, x->err = err;
  uint64_t mb = c->micro_batch < 0 ? c->batch : (uint64_t)c->micro_batch;
  uint32_t tp = stage_tp(c);
  uint64_t v[SX_NSYM] = {c->batch, mb, c->seq, c->dmodel, c->dff, c->head, c->kvhead, c->dvocal, c->experts,
                         c->kexperts, c->dp, tp, c->sp, c->ep, c->weight_sharded ? c->dp : 1};
  for (int i = 0; i < SX_NSYM; i++) {
    if (v[i] > INT64_MAX) return BAD("%s is too large", sx_symbol_name(i));
    x->vals[i].num = (int64_t)v[i], x->vals[i].den = 1;
  }
  x->debug = model == STG_DEBUG;
  x->deg[0] = c->dp, x->deg[1] = tp, x->deg[2] = c->sp, x->deg[3] = x->debug ? c->ep : 1;
  x->fsdp = c->weight_sharded, x->fsdp_on = c->weight_sharded && c->dp > 1;
  x->mixed = c->mixed_precision && !x->debug; /* the debug path does not pass it on */
  x->nmb = (uint32_t)(c->batch / mb), x->nblocks = (uint32_t)c->num_stacks, x->pp = c->pp;
  /* STAGE: the output embedding and loss go to stage (num_stacks-1) % pp,
   * to the last stage on the mixed-precision (llama) path */
  x->out_stage = model == STG_LLAMA ? c->pp - 1 : (uint32_t)((c->num_stacks - 1) % c->pp);
  x->block_stage = malloc(x->nblocks * sizeof *x->block_stage);
  if (!x->block_stage) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  uint32_t per = x->nblocks / c->pp, extra = x->nblocks % c->pp, b = 0;
  for (uint32_t s = 0; s < c->pp; s++)
    for (uint32_t k = 0; k < per + (s < extra); k++) x->block_stage[b++] = s;
  return compile_rows(x, stg_model_get(model));
}

static void sx_free(sx *x) {
  for (uint32_t i = 0; x->rows && i < x->nrows; i++) free(x->rows[i].y);
  free(x->rows), free(x->block_stage);
}

int stage_encode(const chakra_synth_config *c, const uint8_t *need, emit_stage **stages, chakra_error *err) {
  sx x;
  sgraph_ g;
  memset(&x, 0, sizeof x);
  memset(&g, 0, sizeof g);
  g.x = &x, g.next_id = 1;
  int rc = stage_check(c, err);
  if (!rc) rc = setup(&x, c, pick_model(c), err);
  if (!rc) rc = add_all(&g) ? oom(&g) : 0;
  if (!rc) rc = index_names(&g);
  if (!rc) rc = link_all(&g);
  if (!rc) rc = distribute(&g);
  for (uint32_t s = 0; !rc && s < x.pp; s++) rc = make_nodes(&g, s);
  if (!rc) rc = make_pairs(&g);
  for (uint32_t s = 0; !rc && s < x.pp; s++) rc = connect(&g, s);
  for (uint32_t s = 0; !rc && s < x.pp; s++)
    if (need[s]) rc = clean(&g, s);
  for (uint32_t s = 0; !rc && s < x.pp; s++)
    if (need[s]) rc = encode_stage(&g, s, &stages[s]);
  graph_free(&g);
  sx_free(&x);
  return rc;
}

/* ---- STAGE's tensor order for the default mode's --order stage -------------------------------- */

struct stage_pos {
  sx x;
  sgraph_ g;
};

stage_pos *stage_pos_new(const chakra_synth_config *c, int model, chakra_error *err) {
  stage_pos *p = calloc(1, sizeof *p);
  if (!p) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory"), NULL;
  p->g.x = &p->x;
  int rc = setup(&p->x, c, model, err);
  if (!rc) rc = add_all(&p->g) ? oom(&p->g) : 0;
  if (!rc) rc = index_names(&p->g);
  if (rc) return stage_pos_free(p), NULL;
  return p;
}

int64_t stage_pos_find(const stage_pos *p, const char *tensor) { return lookup(&p->g, tensor); }

void stage_pos_free(stage_pos *p) {
  if (!p) return;
  graph_free(&p->g);
  sx_free(&p->x);
  free(p);
}
