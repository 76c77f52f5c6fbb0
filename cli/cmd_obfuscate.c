/* cmd_obfuscate.c - chakra obfuscate: a trace without names, strings,
 * shapes and (optionally) exact timings, still simulating the same. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "chakra/obfuscate.h"
#include "cli.h"
#include "progress.h"

static const char about[] =
    "Writes a copy of a trace that can be shared: every node name becomes an\n"
    "op-class token and a keyed hash (comp#3f2a9c01d4e5b677, all_reduce#...),\n"
    "string attributes are dropped (or hashed), inputs/outputs (tensor shapes\n"
    "and ids) removed, the GlobalMetadata reduced to version and schema. Kept\n"
    "exactly, so that 'chakra sim' gives the same results: types, ids,\n"
    "dependencies, durations, every non-string attribute (comm_type, comm_size,\n"
    "comm_src/dst/tag, involved_dim, num_ops, tensor_size, is_cpu_op, ...),\n"
    "pg_name and the process groups of METADATA nodes. A PREFIX means every\n"
    "rank, PREFIX.0.et ... (a shared set's PREFIX.set.json too: its ranks are\n"
    "written as rank files); all ranks are written or none (-o OUT_PREFIX).\n";

static int read_key(const char *path, uint8_t key[16]) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    cli_error("%s: cannot open the key file: %s", path, strerror(errno));
    return -1;
  }
  unsigned char buf[4096];
  size_t n = fread(buf, 1, sizeof buf, f);
  int bad = ferror(f);
  fclose(f);
  if (bad || n == 0) {
    cli_error("%s: the key file is %s", path, bad ? "unreadable" : "empty");
    return -1;
  }
  chakra_obfuscate_key(buf, n, key);
  return 0;
}

typedef struct run {
  chakra_obfuscate_options opt;
  const char *in, *out, *key_file;
  int quiet;
} run;

static char *out_path(const run *r, int prefixed, int rank) {
  if (!prefixed) return strdup(r->out);
  size_t n = strlen(r->out) + 32;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s.%d.et", r->out, rank);
  return p;
}

/* All writers stay open until every rank is written, then all are put in
 * place; any failure discards them all. */
static int obfuscate_all(run *r, const chakra_set *set, int prefixed) {
  int n = (int)chakra_set_ranks(set);
  chakra_writer **w = calloc((size_t)n, sizeof *w);
  chakra_obfuscate_stats st = {0};
  chakra_error err = {0};
  int rc = w ? 0 : 2;
  cli_progress bar;
  cli_progress_init(&bar, r->quiet, "ranks");
  for (int k = 0; k < n && !rc; k++) {
    cli_progress_report(&bar, "obfuscate", (uint64_t)k, (uint64_t)n);
    char *p = out_path(r, prefixed, k);
    if (!p || chakra_writer_open(&w[k], p, 0, &err) ||
        chakra_obfuscate_set_rank(set, (uint32_t)k, w[k], &r->opt, &st, &err))
      rc = p ? cli_fail(&err) : 2;
    free(p);
  }
  cli_progress_end(&bar);
  for (int k = 0; k < n && w; k++) {
    if (!w[k]) continue;
    if (rc) chakra_writer_discard(w[k]);
    else if (chakra_writer_close(w[k], &err)) rc = cli_fail(&err);
  }
  free(w);
  if (!rc && !r->quiet) {
    char noised[64] = "";
    if (st.durations_noised)
      snprintf(noised, sizeof noised, ", %llu durations noised", (unsigned long long)st.durations_noised);
    cli_summary("obfuscated %llu nodes in %d file(s): %llu string attributes %s, %llu inputs/outputs removed%s",
                (unsigned long long)st.nodes, n, (unsigned long long)(st.attrs_dropped + st.attrs_hashed),
                r->opt.hash_strings ? "hashed or dropped" : "dropped", (unsigned long long)st.io_removed, noised);
  }
  if (!rc && st.unknown_kept)
    cli_warn("%llu nodes carry fields outside the schema; they are kept unchanged as the format requires, "
             "and may hold anything", (unsigned long long)st.unknown_kept);
  return rc;
}

/* Parses the command line into r and keep (free with cli_list_free);
 * returns CLI_PROCEED or the exit status. */
static int parse(run *r, cli_list *keep, int argc, char **argv) {
  const cli_opt opts[] = {
      {.name = "output", .short_name = 'o', .kind = CLI_OPT_STRING, .dest = &r->out, .metavar = "OUT",
       .help = "output file, or prefix when the input is a prefix", .def = "standard output",
       .file = CLI_FILE_OUT_OR_PREFIX},
      {.name = "key", .kind = CLI_OPT_STRING, .dest = &r->key_file, .metavar = "FILE",
       .help = "key for the name hashes: the same key maps the same name the same way in every rank and run "
               "(without it a random key is used: names match across ranks only)",
       .file = CLI_FILE_IN},
      {.name = "hash-strings", .kind = CLI_OPT_FLAG, .dest = &r->opt.hash_strings,
       .help = "hash string attributes instead of dropping them"},
      {.name = "keep", .kind = CLI_OPT_LIST, .dest = keep, .metavar = "ATTR", .help = "keep attribute ATTR exactly"},
      {.name = "time-noise", .kind = CLI_OPT_DOUBLE, .dest = &r->opt.time_noise_pct, .metavar = "PCT",
       .help = "scale each duration by a random factor in [1 - PCT/100, 1 + PCT/100), PCT in [0, 100) "
               "(recorded starts dropped)"},
      {.name = "seed", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&r->opt.seed), .metavar = "S",
       .help = "seed of the noise", .def = "1"},
      {.name = "quiet", .short_name = 'q', .kind = CLI_OPT_FLAG, .dest = &r->quiet,
       .help = "no summary and no progress line on standard error"},
      {0}};
  const cli_command cmd = {.name = "obfuscate", .args = "IN.et | IN_PREFIX", .min_args = 1, .max_args = 1,
                           .about = about, .opts = opts, .args_file = CLI_FILE_TRACES};
  cli_args pos;
  int st = cli_parse(&cmd, argc, argv, &pos);
  if (st != CLI_PROCEED) return st;
  r->in = pos.v[0];
  double pct = r->opt.time_noise_pct;
  if (pct < 0 || pct >= 100) {
    cli_error("--time-noise: %g is not a percentage in [0, 100)", pct);
    return CLI_EXIT_ERROR;
  }
  r->opt.keep = keep->items, r->opt.n_keep = keep->n;
  return CLI_PROCEED;
}

int cmd_obfuscate(int argc, char **argv) {
  run r = {.opt = {.seed = 1}};
  cli_list keep = {0};
  int rc = parse(&r, &keep, argc, argv);
  if (rc != CLI_PROCEED) {
    cli_list_free(&keep);
    return rc;
  }
  rc = 0;
  if (r.key_file) {
    rc = read_key(r.key_file, r.opt.key) ? 2 : 0;
  } else if (getrandom(r.opt.key, sizeof r.opt.key, 0) != (ssize_t)sizeof r.opt.key) {
    cli_error("no random key available; give --key FILE");
    rc = 2;
  }
  char *one[] = {(char *)r.in};
  chakra_set *set = rc ? NULL : cli_open_set(1, one, NULL);
  if (!rc && !set) rc = 2;
  if (!rc) {
    int prefixed = cli_names_prefix(r.in);
    if (!r.out && prefixed) {
      cli_error("a prefix needs -o OUT_PREFIX");
      rc = 2;
    } else {
      if (!r.out) r.out = "-";
      rc = obfuscate_all(&r, set, prefixed);
    }
  }
  /* after the work: a failure is its one line */
  if (!rc && !r.key_file && !r.quiet)
    cli_warn("no --key: names were hashed with a random key, so they match across these ranks only");
  chakra_set_close(set);
  cli_list_free(&keep);
  return rc;
}
