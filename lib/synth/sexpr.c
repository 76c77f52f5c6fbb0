/* sexpr.c - size expressions: compile to postfix, evaluate exactly. */
#include "sexpr.h"

#include <ctype.h>
#include <string.h>

enum { SX_OP_PUSH, SX_OP_SYM, SX_OP_ADD, SX_OP_SUB, SX_OP_MUL, SX_OP_DIV, SX_OP_POW, SX_OP_NEG };

static const char *const sym_names[SX_NSYM] = {
    "Batch", "MicroBatch", "Seq", "Dmodel", "Dff", "Head", "KVHead", "Dvocal",
    "Experts", "KExperts", "dp", "tp", "cp", "ep", "fsdp", "Ctx"};

int sx_symbol(const char *name, unsigned len) {
  for (int i = 0; i < SX_NSYM; i++)
    if (strlen(sym_names[i]) == len && memcmp(sym_names[i], name, len) == 0) return i;
  return -1;
}

const char *sx_symbol_name(int sym) { return sym >= 0 && sym < SX_NSYM ? sym_names[sym] : "?"; }

const char *sx_symbol_option(int sym) {
  static const char *const opts[SX_NSYM] = {"--batch",   "--micro-batch", "--seq",  "--dmodel", "--dff",
                                            "--head",    "--kvhead",      "--dvocal", "--experts", "--kexperts",
                                            "--dp",      "--tp",          "--sp",   "--ep",     "--dp",
                                            "--seq"};
  return sym >= 0 && sym < SX_NSYM ? opts[sym] : "?";
}

typedef struct parser {
  const char *s, *text;
  sx_expr *e;
  chakra_error *err;
  int failed;
} parser;

static void skip_ws(parser *p) {
  while (*p->s == ' ') p->s++;
}

static void emit(parser *p, int op, int64_t arg) {
  if (p->failed) return;
  if (p->e->n >= SX_MAXCODE) {
    p->failed = 1;
    chakra_error_set(p->err, CHAKRA_EINVAL, "size expression '%s' is too long", p->text);
    return;
  }
  p->e->code[p->e->n] = (uint8_t)op;
  p->e->arg[p->e->n++] = arg;
}

static void fail(parser *p, const char *what) {
  if (!p->failed)
    chakra_error_set(p->err, CHAKRA_EINVAL, "size expression '%s' at offset %d: %s", p->text,
                     (int)(p->s - p->text), what);
  p->failed = 1;
}

static void parse_sum(parser *p);

/* atom := number | symbol | '(' sum ')' | '-' atom;  power := atom ['**' power] */
static void parse_power(parser *p) {
  skip_ws(p);
  if (*p->s == '(') {
    p->s++;
    parse_sum(p);
    skip_ws(p);
    if (*p->s != ')') {
      fail(p, "expected ')'");
      return;
    }
    p->s++;
  } else if (*p->s == '-') {
    p->s++;
    parse_power(p);
    emit(p, SX_OP_NEG, 0);
    return;
  } else if (isdigit((unsigned char)*p->s)) {
    int64_t v = 0;
    while (isdigit((unsigned char)*p->s)) {
      if (v > (INT64_MAX - 9) / 10) {
        fail(p, "number too large");
        return;
      }
      v = v * 10 + (*p->s++ - '0');
    }
    emit(p, SX_OP_PUSH, v);
  } else if (isalpha((unsigned char)*p->s)) {
    const char *b = p->s;
    while (isalnum((unsigned char)*p->s) || *p->s == '_') p->s++;
    int sym = sx_symbol(b, (unsigned)(p->s - b));
    if (sym < 0) {
      fail(p, "unknown symbol");
      return;
    }
    p->e->syms |= 1u << sym;
    emit(p, SX_OP_SYM, sym);
  } else {
    fail(p, "expected a number, a symbol or '('");
    return;
  }
  skip_ws(p);
  if (p->s[0] == '*' && p->s[1] == '*') {
    p->s += 2;
    parse_power(p);
    emit(p, SX_OP_POW, 0);
  }
}

static void parse_product(parser *p) {
  parse_power(p);
  for (;;) {
    skip_ws(p);
    if (*p->s == '*' && p->s[1] != '*') {
      p->s++;
      parse_power(p);
      emit(p, SX_OP_MUL, 0);
    } else if (*p->s == '/') {
      p->s++;
      parse_power(p);
      emit(p, SX_OP_DIV, 0);
    } else {
      return;
    }
  }
}

static void parse_sum(parser *p) {
  parse_product(p);
  for (;;) {
    skip_ws(p);
    if (*p->s == '+' || *p->s == '-') {
      int op = *p->s++ == '+' ? SX_OP_ADD : SX_OP_SUB;
      parse_product(p);
      emit(p, op, 0);
    } else {
      return;
    }
  }
}

int sx_compile(sx_expr *e, const char *text, chakra_error *err) {
  memset(e, 0, sizeof *e);
  if (!text || !*text) {
    e->n = 1;
    e->code[0] = SX_OP_PUSH;
    e->arg[0] = 1;
    return 0;
  }
  parser p = {text, text, e, err, 0};
  parse_sum(&p);
  skip_ws(&p);
  if (!p.failed && *p.s) fail(&p, "unexpected character");
  return p.failed ? CHAKRA_EINVAL : 0;
}

/* Products of two int64 values are exact in 128 bits (GCC/Clang on 64-bit targets). */
__extension__ typedef __int128 sx_wide;

static int rat_make(sx_wide num, sx_wide den, sx_rat *out) {
  if (den == 0) return -1;
  if (den < 0) num = -num, den = -den;
  sx_wide a = num < 0 ? -num : num, b = den;
  while (b) {
    sx_wide t = a % b;
    a = b;
    b = t;
  }
  if (a > 1) num /= a, den /= a;
  if (num > INT64_MAX || num < -INT64_MAX || den > INT64_MAX) return -2;
  out->num = (int64_t)num;
  out->den = (int64_t)den;
  return 0;
}

static int apply(int op, sx_rat a, sx_rat b, sx_rat *r) {
  switch (op) {
  case SX_OP_ADD: return rat_make((sx_wide)a.num * b.den + (sx_wide)b.num * a.den, (sx_wide)a.den * b.den, r);
  case SX_OP_SUB: return rat_make((sx_wide)a.num * b.den - (sx_wide)b.num * a.den, (sx_wide)a.den * b.den, r);
  case SX_OP_MUL: return rat_make((sx_wide)a.num * b.num, (sx_wide)a.den * b.den, r);
  case SX_OP_DIV: return rat_make((sx_wide)a.num * b.den, (sx_wide)a.den * b.num, r);
  default: { /* POW: integer exponents only */
    if (b.den != 1 || b.num < 0 || b.num > 64) return -3;
    sx_rat acc = {1, 1};
    for (int64_t i = 0; i < b.num; i++)
      if (rat_make((sx_wide)acc.num * a.num, (sx_wide)acc.den * a.den, &acc)) return -2;
    *r = acc;
    return 0;
  }
  }
}

int sx_eval(const sx_expr *e, const sx_rat *vals, sx_rat *out, chakra_error *err) {
  sx_rat st[SX_MAXCODE];
  int sp = 0;
  for (int i = 0; i < e->n; i++) {
    int op = e->code[i];
    if (op == SX_OP_PUSH) {
      st[sp].num = e->arg[i], st[sp++].den = 1;
    } else if (op == SX_OP_SYM) {
      st[sp++] = vals[e->arg[i]];
    } else if (op == SX_OP_NEG) {
      st[sp - 1].num = -st[sp - 1].num;
    } else {
      sp--;
      int rc = apply(op, st[sp - 1], st[sp], &st[sp - 1]);
      if (rc == -2) return SX_ETOOLARGE;
      if (rc)
        return chakra_error_set(err, CHAKRA_EINVAL, "size expression: %s", rc == -1 ? "division by zero" : "bad exponent");
    }
  }
  *out = st[0];
  return 0;
}

int sx_eval_int(const sx_expr *e, const sx_rat *vals, uint64_t *out, chakra_error *err) {
  sx_rat r;
  int rc = sx_eval(e, vals, &r, err);
  if (rc) return rc;
  if (r.den != 1 || r.num < 0)
    return chakra_error_set(err, CHAKRA_EINVAL, "size expression is not a whole number (%lld/%lld)",
                            (long long)r.num, (long long)r.den);
  *out = (uint64_t)r.num;
  return 0;
}

int sx_rat_mul(sx_rat a, sx_rat b, sx_rat *out) { return apply(SX_OP_MUL, a, b, out) ? -1 : 0; }
