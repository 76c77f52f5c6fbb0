/* htcapture.c - the host-ET parser's captures; see htcapture.h. */
#include "htcapture.h"

#include <stdlib.h>
#include <string.h>

#include "htnode.h"
#include "pyrepr.h"
#include "../util/vec.h"

void ht_cap_start(hparse *p, strbuf *target, int flags) {
  p->ct = target;
  p->cflags = flags;
}

/* Separator and bookkeeping before a value inside the captured container;
 * returns the element's position in its list. */
static uint32_t cap_elem(hparse *p) {
  clevel *L = &p->cl[p->capd - 1];
  if (L->is_map) return 0;
  if (!L->first && p->ct) {
    if (p->cflags & CAP_REPR) strbuf_put(p->ct, ", ", 2);
    else strbuf_putc(p->ct, ',');
  }
  L->first = 0;
  return L->count++;
}

static int grow_args(hparse *p, size_t need) {
  if (need <= p->cap_arg) return 0;
  size_t cap = vec_next_cap(p->cap_arg, need, 64, sizeof *p->arg_bytes, SIZE_MAX);
  if (!cap || vec_resize(&p->arg_bytes, cap, sizeof *p->arg_bytes) || vec_resize(&p->arg_tensor, cap, 1)) return -1;
  memset(p->arg_bytes + p->cap_arg, 0, (cap - p->cap_arg) * sizeof *p->arg_bytes);
  memset(p->arg_tensor + p->cap_arg, 0, cap - p->cap_arg);
  p->cap_arg = cap;
  return 0;
}

/* Argument pos of the top-level list is counted (CAP_TENSORS). */
static int note_arg(hparse *p, uint32_t pos) {
  if (!(p->cflags & CAP_TENSORS) || p->n_argv > pos) return 0;
  if (grow_args(p, pos + 1)) return -1;
  p->n_argv = pos + 1;
  return 0;
}

/* Whether argument pos is a tensor (CAP_TYPES). */
static int note_type(hparse *p, uint32_t pos, int is_tensor) {
  if (!(p->cflags & CAP_TYPES)) return 0;
  if (grow_args(p, pos + 1)) return -1;
  if (p->n_argt <= pos) p->n_argt = pos + 1;
  p->arg_tensor[pos] = (uint8_t)is_tensor;
  return 0;
}

static int add_targ(hparse *p, int kind, int64_t v, const unsigned char *s, size_t n) {
  targ *t = VEC_PUSH(p->targs, p->n_targs, p->cap_targs);
  if (!t) return -1;
  t->kind = kind;
  t->v = v;
  t->off = (uint32_t)p->targ_str.n;
  t->len = (uint32_t)n;
  if (n) strbuf_put(&p->targ_str, s, n);
  return 0;
}

/* A scalar inside a capture (capd > 0) or a capture that is a scalar. */
int ht_cap_scalar(hparse *p, int kind, const char *s, size_t n) {
  strbuf *b = p->ct;
  if (p->capd) {
    uint32_t pos = cap_elem(p);
    clevel *L = &p->cl[p->capd - 1];
    if (!L->is_map) {
      if (p->capd == 1) {
        /* an argument of the top-level list */
        if (note_arg(p, pos)) return ht_oom(p);
        if (p->cflags & CAP_ARGS) {
          int64_t v = 0;
          int tk = kind == K_STR ? 2 : (kind == K_NUM && json_number_is_int(s, n) && !ht_parse_i64(s, n, &v)) ? 1 : 0;
          if (add_targ(p, tk, v, (const unsigned char *)s, tk == 2 ? n : 0)) return ht_oom(p);
        }
        if (note_type(p, pos, kind == K_STR && ht_contains(s, n, "Tensor"))) return ht_oom(p);
      } else if (L->tens_ok) {
        if (pos < 5) {
          uint64_t v;
          if (kind != K_NUM || ht_parse_u64(s, n, &v)) L->tens_ok = 0;
          else if (pos == 3) L->e3 = v;
          else if (pos == 4) L->e4 = v;
        } else if (pos != 5 || kind != K_STR) {
          L->tens_ok = 0;
        }
      }
    }
  }
  if (b) {
    int repr = p->cflags & CAP_REPR;
    switch (kind) {
      case K_NUM:
        if (repr) pyrepr_number(b, s, n);
        else strbuf_put(b, s, n);
        break;
      case K_STR:
        if (repr) pyrepr_str(b, (const unsigned char *)s, n);
        else json_str(b, (const unsigned char *)s, n);
        break;
      case K_TRUE: strbuf_puts(b, repr ? "True" : "true"); break;
      case K_FALSE: strbuf_puts(b, repr ? "False" : "false"); break;
      default: strbuf_puts(b, repr ? "None" : "null"); break;
    }
  }
  return 1;
}

int ht_cap_open(hparse *p, int is_map) {
  if (p->capd) {
    uint32_t pos = cap_elem(p);
    clevel *L = &p->cl[p->capd - 1];
    if (!L->is_map) {
      if (p->capd == 1) {
        if (note_arg(p, pos) || ((p->cflags & CAP_ARGS) && add_targ(p, 0, 0, NULL, 0)) || note_type(p, pos, 0))
          return ht_oom(p);
      } else {
        L->tens_ok = 0;
      }
    }
  }
  if (p->capd == MAX_CAP_DEPTH) {
    char where[96];
    ht_node_label(p, where, sizeof where);
    return ht_fail(p, CHAKRA_EFORMAT, "%s: values nested deeper than %d levels", where, MAX_CAP_DEPTH);
  }
  clevel *N = &p->cl[p->capd++];
  N->is_map = (uint8_t)is_map;
  N->first = 1;
  N->tens_ok = !is_map;
  N->count = 0;
  N->e3 = N->e4 = 0;
  if (p->ct) strbuf_putc(p->ct, is_map ? '{' : '[');
  return 1;
}

int ht_cap_close(hparse *p) {
  clevel *L = &p->cl[--p->capd];
  if (p->ct) strbuf_putc(p->ct, L->is_map ? '}' : ']');
  if (!L->is_map && L->tens_ok && L->count == 6 && p->capd >= 1 && (p->cflags & CAP_TENSORS)) {
    /* a tensor inside argument cl[0].count - 1 */
    uint32_t arg = p->cl[0].count ? p->cl[0].count - 1 : 0;
    if (arg < p->n_argv) {
      uint64_t add = L->e3 && L->e4 > UINT64_MAX / L->e3 ? UINT64_MAX : L->e3 * L->e4;
      p->arg_bytes[arg] = add > UINT64_MAX - p->arg_bytes[arg] ? UINT64_MAX : p->arg_bytes[arg] + add;
    }
  }
  if (p->capd == 0) ht_after_value(p);
  return 1;
}

int ht_cap_key(hparse *p, const unsigned char *s, size_t n) {
  clevel *L = &p->cl[p->capd - 1];
  if (p->ct) {
    int repr = p->cflags & CAP_REPR;
    if (!L->first) {
      if (repr) strbuf_put(p->ct, ", ", 2);
      else strbuf_putc(p->ct, ',');
    }
    if (repr) pyrepr_str(p->ct, s, n), strbuf_put(p->ct, ": ", 2);
    else json_str(p->ct, s, n), strbuf_putc(p->ct, ':');
  }
  L->first = 0;
  return 1;
}
