/* opts.c - the table-driven option parser and help generator; see opts.h. */
#include "opts.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Options of one command fit one bit mask (for "required" bookkeeping). */
#define OPTS_MAX 64
#define HELP_WIDTH 79

static char command_name[64];

void cli_set_command(const char *name) { snprintf(command_name, sizeof command_name, "%s", name); }
const char *cli_command_name(void) { return command_name; }

typedef struct parser {
  const cli_command *cmd;
  FILE *out, *err;
  uint64_t seen;
} parser;

/* ---- numbers ------------------------------------------------------------ */

/* Leading decimal digits of s into *out; returns where they end, NULL on
 * none (-1 in *rc) or overflow (-2). */
static const char *parse_digits(const char *s, uint64_t *out, int *rc) {
  uint64_t v = 0;
  const char *p = s;
  for (; *p >= '0' && *p <= '9'; p++) {
    unsigned d = (unsigned)(*p - '0');
    if (v > (UINT64_MAX - d) / 10) {
      *rc = -2;
      return NULL;
    }
    v = v * 10 + d;
  }
  if (p == s) {
    *rc = -1;
    return NULL;
  }
  *out = v;
  return p;
}

int cli_parse_count(const char *s, uint64_t *out) {
  int rc = 0;
  const char *end = parse_digits(s, out, &rc);
  if (!end) return rc;
  return *end ? -1 : 0;
}

int cli_parse_bytes(const char *s, uint64_t *out) {
  int rc = 0;
  uint64_t v;
  const char *end = parse_digits(s, &v, &rc);
  if (!end) return rc;
  static const char units[] = "KMGT";
  const char *u = *end ? strchr(units, toupper((unsigned char)*end)) : NULL;
  unsigned shift = 0;
  if (u) {
    shift = 10 * (unsigned)(u - units + 1);
    end++;
    if (*end == 'i') end++;
  }
  if (*end == 'B') end++;
  if (*end || end[-1] == 'i') return -1;
  if (shift && v > UINT64_MAX >> shift) return -2;
  *out = v << shift;
  return 0;
}

/* ---- messages ----------------------------------------------------------- */

static void fail(const parser *p, const char *opt, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void cli_vline(FILE *f, const char *head, const char *fmt, va_list ap) {
  char small[1024], *msg = small;
  va_list again;
  va_copy(again, ap);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  if (n >= (int)sizeof small && (msg = malloc((size_t)n + 1))) vsnprintf(msg, (size_t)n + 1, fmt, again);
  va_end(again);
  if (!msg) msg = small; /* out of memory: the message cut short */
  /* The whole line leaves in one write: stderr is unbuffered, and under
   * mpirun a line written piece by piece interleaves with the launcher's. */
  size_t hl = strlen(head), ml = strlen(msg), cap = hl + 4 * ml + 2;
  char lsmall[2048], *line = cap <= sizeof lsmall ? lsmall : malloc(cap);
  if (!line) { /* out of memory: unescaped, as it is */
    fprintf(f, "%s%s\n", head, msg);
    if (msg != small) free(msg);
    return;
  }
  size_t k = hl;
  memcpy(line, head, hl);
  for (const unsigned char *c = (const unsigned char *)msg; *c; c++) {
    if (*c >= 0x20 && *c != 0x7f) line[k++] = (char)*c;
    else if (*c == '\n') line[k++] = '\\', line[k++] = 'n';
    else if (*c == '\r') line[k++] = '\\', line[k++] = 'r';
    else if (*c == '\t') line[k++] = '\\', line[k++] = 't';
    else k += (size_t)snprintf(line + k, cap - k, "\\x%02x", *c);
  }
  line[k++] = '\n';
  fwrite(line, 1, k, f);
  fflush(f);
  if (line != lsmall) free(line);
  if (msg != small) free(msg);
}

void cli_line(FILE *f, const char *head, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  cli_vline(f, head, fmt, ap);
  va_end(ap);
}

static void fail(const parser *p, const char *opt, const char *fmt, ...) {
  char head[256];
  snprintf(head, sizeof head, "chakra %s: %s%s", p->cmd->name, opt ? opt : "", opt ? ": " : "");
  va_list ap;
  va_start(ap, fmt);
  cli_vline(p->err, head, fmt, ap);
  va_end(ap);
}

static const char *metavar(const cli_opt *o) {
  if (o->metavar) return o->metavar;
  switch (o->kind) {
  case CLI_OPT_COUNT: return "N";
  case CLI_OPT_SIZE: return "BYTES";
  case CLI_OPT_DOUBLE: return "X";
  default: return "VALUE";
  }
}

/* "a, b or c" of the choices into buf. */
static const char *choice_list(const cli_opt *o, const char *sep, const char *last, char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = 0;
  for (const cli_choice *c = o->choices; c->name && len < cap; c++) {
    const char *join = c == o->choices ? "" : (c[1].name ? sep : last);
    len += (size_t)snprintf(buf + len, cap - len, "%s%s", join, c->name);
  }
  return buf;
}

/* What the usage and help show for an option's value: its metavar, or for
 * a CHOICE without one the choices as a|b|c. */
static const char *value_name(const cli_opt *o, char *buf, size_t cap) {
  if (o->kind == CLI_OPT_CHOICE && !o->metavar) return choice_list(o, "|", "|", buf, cap);
  snprintf(buf, cap, "%s", metavar(o));
  return buf;
}

/* ---- values ------------------------------------------------------------- */

static void store_uint(const cli_opt *o, uint64_t v) {
  switch (o->dest_size) {
  case 1: *(uint8_t *)o->dest = (uint8_t)v; break;
  case 2: *(uint16_t *)o->dest = (uint16_t)v; break;
  case 4: *(uint32_t *)o->dest = (uint32_t)v; break;
  default: *(uint64_t *)o->dest = v; break;
  }
}

static int set_number(const parser *p, const cli_opt *o, const char *as, const char *val) {
  uint64_t v = 0, hi = o->max ? o->max : o->dest_max;
  int rc = o->kind == CLI_OPT_SIZE ? cli_parse_bytes(val, &v) : cli_parse_count(val, &v);
  const char *what = o->kind == CLI_OPT_SIZE ? "a byte count (digits, optionally K, M, G or T)" : "a whole number";
  if (rc == -1) {
    fail(p, as, "expected %s, got '%s'", what, val);
    return -1;
  }
  if (rc == -2 || v < o->min || v > hi) {
    fail(p, as, "'%s' is out of range: expected %llu to %llu", val, (unsigned long long)o->min,
         (unsigned long long)hi);
    return -1;
  }
  store_uint(o, v);
  return 0;
}

static int set_double(const parser *p, const cli_opt *o, const char *as, const char *val) {
  char *end;
  errno = 0;
  double v = strtod(val, &end);
  int positive = (o->flags & CLI_OPT_POSITIVE) != 0;
  if (!*val || isspace((unsigned char)*val) || *end || errno == ERANGE || !isfinite(v) || (positive && !(v > 0))) {
    fail(p, as, "expected a %snumber, got '%s'", positive ? "positive " : "", val);
    return -1;
  }
  *(double *)o->dest = v;
  return 0;
}

static int set_choice(const parser *p, const cli_opt *o, const char *as, const char *val) {
  for (const cli_choice *c = o->choices; c->name; c++)
    if (strcasecmp(c->name, val) == 0) {
      *(int *)o->dest = c->value;
      return 0;
    }
  char buf[256];
  fail(p, as, "expected %s, got '%s'", choice_list(o, ", ", " or ", buf, sizeof buf), val);
  return -1;
}

static int add_to_list(const parser *p, const cli_opt *o, const char *as, const char *val) {
  cli_list *l = o->dest;
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 4;
    const char **items = realloc(l->items, cap * sizeof *items);
    if (!items) {
      fail(p, as, "out of memory");
      return -1;
    }
    l->items = items, l->cap = cap;
  }
  l->items[l->n++] = val;
  return 0;
}

/* Gives option o (typed as `as`) its value. */
static int set_value(const parser *p, const cli_opt *o, const char *as, const char *val) {
  switch (o->kind) {
  case CLI_OPT_FLAG: *(int *)o->dest = o->value ? o->value : 1; return 0;
  case CLI_OPT_STRING: *(const char **)o->dest = val; return 0;
  case CLI_OPT_COUNT:
  case CLI_OPT_SIZE: return set_number(p, o, as, val);
  case CLI_OPT_DOUBLE: return set_double(p, o, as, val);
  case CLI_OPT_CHOICE: return set_choice(p, o, as, val);
  case CLI_OPT_LIST: return add_to_list(p, o, as, val);
  }
  return -1;
}

/* ---- the parse ---------------------------------------------------------- */

/* Whether the '|'-separated list names holds name[0..len). */
static int names_hold(const char *names, const char *name, size_t len) {
  for (const char *n = names; n && *n;) {
    size_t nl = strcspn(n, "|");
    if (nl == len && strncmp(n, name, len) == 0) return 1;
    n += nl + (n[nl] == '|');
  }
  return 0;
}

static const cli_opt *find_long(const cli_opt *opts, const char *name, size_t len) {
  for (const cli_opt *o = opts; o->name; o++)
    if ((strlen(o->name) == len && strncmp(o->name, name, len) == 0) || names_hold(o->alias, name, len)) return o;
  return NULL;
}

static const cli_opt *find_short(const cli_opt *opts, char c) {
  for (const cli_opt *o = opts; o->name; o++)
    if (o->short_name == c) return o;
  return NULL;
}

enum { ARG_ERROR = -1, ARG_HELP = -2 };

/* Handles argv[*i], an option; returns 0, ARG_ERROR or ARG_HELP. */
static int take_option(parser *p, int argc, char **argv, int *i) {
  const char *a = argv[*i], *inline_val = NULL;
  const cli_opt *o;
  char as[72];
  if (a[1] == '-') {
    const char *eq = strchr(a + 2, '=');
    size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
    snprintf(as, sizeof as, "--%.*s", (int)(len < 64 ? len : 64), a + 2);
    if (len == 4 && strncmp(a + 2, "help", 4) == 0 && !eq) return ARG_HELP;
    o = find_long(p->cmd->opts, a + 2, len);
    if (eq) inline_val = eq + 1;
  } else {
    snprintf(as, sizeof as, "-%c", a[1]);
    if (a[1] == 'h' && !a[2]) return ARG_HELP;
    o = find_short(p->cmd->opts, a[1]);
    if (a[2]) inline_val = a + 2;
    if (o && o->kind == CLI_OPT_FLAG && inline_val) o = NULL; /* no bundling: -qx is unknown */
  }
  if (!o) {
    if (a[1] != '-') snprintf(as, sizeof as, "%.64s", a);
    fail(p, as, "unknown option; 'chakra %s --help' lists them", p->cmd->name);
    return ARG_ERROR;
  }
  p->seen |= 1ull << (o - p->cmd->opts);
  if (o->kind == CLI_OPT_FLAG) {
    if (inline_val) {
      fail(p, as, "takes no value (got '%s')", inline_val);
      return ARG_ERROR;
    }
    return set_value(p, o, as, NULL);
  }
  const char *val = inline_val;
  if (!val) {
    if (*i + 1 >= argc) {
      char mv[256];
      fail(p, as, "expected a value (%s) after it", value_name(o, mv, sizeof mv));
      return ARG_ERROR;
    }
    val = argv[++*i];
  }
  return set_value(p, o, as, val) ? ARG_ERROR : 0;
}

static int check_required(const parser *p) {
  for (const cli_opt *o = p->cmd->opts; o->name; o++)
    if ((o->flags & CLI_OPT_REQUIRED) && !(p->seen & 1ull << (o - p->cmd->opts))) {
      char as[72], mv[256];
      snprintf(as, sizeof as, "--%s", o->name);
      fail(p, as, "required, but not given (expected %s %s)", o->short_name ? (char[]){'-', o->short_name, 0} : as,
           value_name(o, mv, sizeof mv));
      return -1;
    }
  return 0;
}

static int check_args(const parser *p, const cli_args *pos) {
  const cli_command *c = p->cmd;
  const char *want = c->args ? c->args : "no arguments";
  if (pos->n < c->min_args) {
    fail(p, NULL, "missing arguments: expected %s", want);
    return -1;
  }
  if (c->max_args >= 0 && pos->n > c->max_args) {
    fail(p, NULL, "'%s': unexpected argument (expected %s)", pos->v[c->max_args], want);
    return -1;
  }
  return 0;
}

int cli_parse_to(const cli_command *cmd, int argc, char **argv, cli_args *pos, FILE *out, FILE *err) {
  parser p = {cmd, out, err, 0};
  size_t nopts = 0;
  while (cmd->opts[nopts].name) nopts++;
  if (nopts > OPTS_MAX) {
    fail(&p, NULL, "internal error: more than %d options", OPTS_MAX);
    return 2;
  }
  pos->v = argv + 1;
  pos->n = 0;
  int only_args = 0;
  for (int i = 1; i < argc; i++) {
    char *a = argv[i];
    if (only_args || a[0] != '-' || !a[1]) {
      pos->v[pos->n++] = a; /* never ahead of i: argv is compacted in place */
      continue;
    }
    if (strcmp(a, "--") == 0) {
      only_args = 1;
      continue;
    }
    int rc = take_option(&p, argc, argv, &i);
    if (rc == ARG_HELP) {
      cli_help(cmd, out);
      return 0;
    }
    if (rc) return 2;
  }
  if (check_required(&p) || check_args(&p, pos)) return 2;
  return CLI_PROCEED;
}

void cli_list_free(cli_list *l) {
  free(l->items);
  memset(l, 0, sizeof *l);
}

/* ---- usage and help ----------------------------------------------------- */

/* "--name VALUE" or "-x VALUE" as the usage line shows an option. */
static void usage_token(const cli_command *cmd, const cli_opt *o, char *buf, size_t cap) {
  const char *br = o->flags & CLI_OPT_REQUIRED ? "" : "[";
  const char *cl = *br ? "]" : "";
  char mv[256];
  value_name(o, mv, sizeof mv);
  if (o->kind == CLI_OPT_FLAG)
    o->short_name ? snprintf(buf, cap, "%s-%c%s", br, o->short_name, cl)
                  : snprintf(buf, cap, "%s--%s%s", br, o->name, cl);
  else if (o->short_name && !cmd->show_equals)
    snprintf(buf, cap, "%s-%c %s%s", br, o->short_name, mv, cl);
  else
    snprintf(buf, cap, "%s--%s%s%s%s", br, o->name, cmd->show_equals ? "=" : " ", mv, cl);
  if (o->kind == CLI_OPT_LIST) snprintf(buf + strlen(buf), cap - strlen(buf), "...");
}

/* Writes words to f, breaking lines before `width` and indenting new lines
 * by `indent`; `col` is the column the first word starts at. Returns the
 * column after the last word. */
static size_t put_word(FILE *f, const char *w, size_t len, size_t col, size_t indent) {
  if (col > indent && col + 1 + len > HELP_WIDTH) {
    fprintf(f, "\n%*s", (int)indent, "");
    col = indent;
  } else if (col > indent) {
    fputc(' ', f);
    col++;
  }
  fwrite(w, 1, len, f);
  return col + len;
}

void cli_usage(const cli_command *cmd, FILE *f) {
  size_t indent = strlen("usage: chakra ") + strlen(cmd->name) + 1;
  fprintf(f, "usage: chakra %s", cmd->name);
  size_t col = indent;
  char tok[512];
  int first = 1;
  for (const cli_opt *o = cmd->opts; o->name; o++) {
    usage_token(cmd, o, tok, sizeof tok);
    if (first) fputc(' ', f), first = 0;
    col = put_word(f, tok, strlen(tok), col, indent);
  }
  if (cmd->args) {
    if (first) fputc(' ', f);
    put_word(f, cmd->args, strlen(cmd->args), col, indent);
  }
  fputc('\n', f);
}

/* The left column of an option's help line: "-o, --output FILE". */
static void help_left(const cli_command *cmd, const cli_opt *o, char *buf, size_t cap) {
  const char *sep = cmd->show_equals ? "=" : " ";
  char mv[256] = "";
  if (o->kind != CLI_OPT_FLAG) value_name(o, mv, sizeof mv);
  if (o->short_name) snprintf(buf, cap, "-%c, --%s%s%s", o->short_name, o->name, *mv ? sep : "", mv);
  else snprintf(buf, cap, "    --%s%s%s", o->name, *mv ? sep : "", mv);
}

/* Help text, then "(default: X)" or "(required)", wrapped at HELP_WIDTH. */
static void help_text(FILE *f, const cli_opt *o, size_t col, size_t indent) {
  char text[1024];
  const char *help = o->help ? o->help : "";
  if (o->def) snprintf(text, sizeof text, "%s (default: %s)", help, o->def);
  else if (o->flags & CLI_OPT_REQUIRED) snprintf(text, sizeof text, "%s (required)", help);
  else snprintf(text, sizeof text, "%s", help);
  if (o->kind == CLI_OPT_LIST) snprintf(text + strlen(text), sizeof text - strlen(text), "; repeatable");
  for (const char *n = o->alias; n && *n;) {
    size_t nl = strcspn(n, "|"), used = strlen(text);
    snprintf(text + used, sizeof text - used, "%s--%.*s", n == o->alias ? "; also " : ", ", (int)nl, n);
    n += nl + (n[nl] == '|');
  }
  for (const char *w = text; *w;) {
    while (*w == ' ') w++;
    size_t len = strcspn(w, " ");
    if (len) col = put_word(f, w, len, col, indent);
    w += len;
  }
  fputc('\n', f);
}

/* "Outputs: --output PREFIX.<r>.et, --xml FILE; ..." from the table's
 * file roles (tests/hardening reads it too). */
static void help_outputs(const cli_command *cmd, FILE *f) {
  char text[1024] = "Outputs:";
  size_t n = strlen(text), count = 0;
  for (const cli_opt *o = cmd->opts; o->name && n < sizeof text; o++) {
    const char *mv = metavar(o), *sep = count ? "," : "";
    if (o->file == CLI_FILE_OUT) n += (size_t)snprintf(text + n, sizeof text - n, "%s --%s %s", sep, o->name, mv);
    else if (o->file == CLI_FILE_OUT_PREFIX)
      n += (size_t)snprintf(text + n, sizeof text - n, "%s --%s %s.<r>.et", sep, o->name, mv);
    else if (o->file == CLI_FILE_OUT_OR_PREFIX)
      n += (size_t)snprintf(text + n, sizeof text - n, "%s --%s %s or %s.<r>.et", sep, o->name, mv, mv);
    else if (o->file == CLI_FILE_OUT_SHARED) /* its class templates beside it */
      n += (size_t)snprintf(text + n, sizeof text - n, "%s --%s %s.set.json", sep, o->name, mv);
    else continue;
    count++;
  }
  if (!count || n >= sizeof text) return;
  snprintf(text + n, sizeof text - n, "; each is checked against every input before any work, and they are written "
                                       "all together or not at all.");
  fputc('\n', f);
  size_t col = 0;
  for (const char *w = text; *w;) {
    while (*w == ' ') w++;
    size_t len = strcspn(w, " ");
    if (len) col = put_word(f, w, len, col, 0);
    w += len;
  }
  fputc('\n', f);
}

void cli_help(const cli_command *cmd, FILE *f) {
  cli_usage(cmd, f);
  if (cmd->about) fprintf(f, "\n%s", cmd->about);
  char left[300];
  size_t width = strlen("-h, --help");
  for (const cli_opt *o = cmd->opts; o->name; o++) {
    help_left(cmd, o, left, sizeof left);
    size_t len = strlen(left);
    if (len > width && len <= 30) width = len;
  }
  size_t indent = 2 + width + 2;
  fprintf(f, "\noptions:\n");
  static const cli_opt help_opt = {.name = "help", .short_name = 'h', .kind = CLI_OPT_FLAG, .help = "this help"};
  for (const cli_opt *o = cmd->opts;; o++) {
    const cli_opt *x = o->name ? o : &help_opt;
    help_left(cmd, x, left, sizeof left);
    size_t len = strlen(left);
    fprintf(f, "  %s", left);
    if (len > width) fprintf(f, "\n%*s", (int)indent, "");
    else fprintf(f, "%*s", (int)(width - len + 2), "");
    help_text(f, x, indent, indent);
    if (!o->name) break;
  }
  help_outputs(cmd, f);
  if (cmd->footer) fprintf(f, "\n%s", cmd->footer);
}

/* ---- modes -------------------------------------------------------------- */

int cli_run_mode(const char *group, const cli_mode *modes, size_t n, int argc, char **argv) {
  char names[256];
  size_t len = 0;
  names[0] = 0;
  for (size_t i = 0; i < n && len < sizeof names; i++)
    len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", i ? (i + 1 < n ? ", " : " or ") : "",
                            modes[i].name);
  if (argc < 2) {
    char head[80];
    snprintf(head, sizeof head, "chakra %s: ", group);
    cli_line(stderr, head, "expected %s first; 'chakra %s --help' describes them", names, group);
    return 2;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    for (size_t i = 0; i < n; i++) {
      char *help[] = {(char *)modes[i].name, "--help", NULL};
      if (i) fputc('\n', stdout);
      modes[i].run(2, help);
    }
    return 0;
  }
  for (size_t i = 0; i < n; i++)
    if (strcmp(argv[1], modes[i].name) == 0) {
      char full[64];
      snprintf(full, sizeof full, "%s %s", group, modes[i].name);
      cli_set_command(full);
      return modes[i].run(argc - 1, argv + 1);
    }
  char head[80];
  snprintf(head, sizeof head, "chakra %s: ", group);
  cli_line(stderr, head, "'%s': expected %s", argv[1], names);
  return 2;
}
