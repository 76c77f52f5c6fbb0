/* cmd_obfuscate.c - chakra obfuscate: a trace without names, strings,
 * shapes and (optionally) exact timings, still simulating the same. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "chakra/obfuscate.h"
#include "cli.h"
#include "viewargs.h"

static const char usage[] =
    "usage: chakra obfuscate IN.et [-o OUT.et] | IN_PREFIX -o OUT_PREFIX [--key FILE]\n"
    "                        [--hash-strings] [--keep ATTR]... [--time-noise PCT --seed S] [-q]\n"
    "\n"
    "Writes a copy of a trace that can be shared: every node name becomes an\n"
    "op-class token and a keyed hash (comp#3f2a9c01d4e5b677, all_reduce#...),\n"
    "string attributes are dropped (or hashed), inputs/outputs (tensor shapes\n"
    "and ids) removed, the GlobalMetadata reduced to version and schema. Kept\n"
    "exactly, so that 'chakra sim' gives the same results: types, ids,\n"
    "dependencies, durations, every non-string attribute (comm_type, comm_size,\n"
    "comm_src/dst/tag, involved_dim, num_ops, tensor_size, is_cpu_op, ...),\n"
    "pg_name and the process groups of METADATA nodes. A PREFIX means every\n"
    "rank, PREFIX.0.et ...; all ranks are written or none.\n"
    "\n"
    "  -o, --output OUT    output file (default: standard output), or prefix\n"
    "                      when the input is a prefix\n"
    "  --key FILE          key for the name hashes: the same key maps the same\n"
    "                      name the same way in every rank and run (without it a\n"
    "                      random key is used: names match across ranks only)\n"
    "  --hash-strings      hash string attributes instead of dropping them\n"
    "  --keep ATTR         keep attribute ATTR exactly (repeatable)\n"
    "  --time-noise PCT    scale each duration by a random factor in\n"
    "                      [1 - PCT/100, 1 + PCT/100) (recorded starts dropped)\n"
    "  --seed S            seed of the noise (default 1)\n"
    "  -q, --quiet         no summary on standard error\n";

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
static int obfuscate_all(run *r, char **paths, int n, int prefixed) {
  chakra_writer **w = calloc((size_t)n, sizeof *w);
  chakra_obfuscate_stats st = {0};
  chakra_error err = {0};
  int rc = w ? 0 : 2;
  for (int k = 0; k < n && !rc; k++) {
    char *p = out_path(r, prefixed, k);
    if (!p || chakra_writer_open(&w[k], p, 0, &err) ||
        chakra_obfuscate_stream(paths[k], w[k], (uint32_t)k, &r->opt, &st, &err))
      rc = p ? cli_fail(&err) : 2;
    free(p);
  }
  for (int k = 0; k < n && w; k++) {
    if (!w[k]) continue;
    if (rc) chakra_writer_discard(w[k]);
    else if (chakra_writer_close(w[k], &err)) rc = cli_fail(&err);
  }
  free(w);
  if (!rc && !r->quiet) {
    fprintf(stderr, "chakra: obfuscated %llu nodes in %d file(s): %llu string attributes %s, %llu inputs/outputs removed",
            (unsigned long long)st.nodes, n, (unsigned long long)(st.attrs_dropped + st.attrs_hashed),
            r->opt.hash_strings ? "hashed or dropped" : "dropped", (unsigned long long)st.io_removed);
    if (st.durations_noised) fprintf(stderr, ", %llu durations noised", (unsigned long long)st.durations_noised);
    fputc('\n', stderr);
  }
  if (!rc && st.unknown_kept)
    cli_warn("%llu nodes carry fields outside the schema; they are kept unchanged as the format requires, "
             "and may hold anything", (unsigned long long)st.unknown_kept);
  return rc;
}

static int parse(run *r, int argc, char **argv, const char **keep) {
  const char *v;
  int got;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (cli_is_help(a)) {
      fputs(usage, stdout);
      return 1;
    } else if (strcmp(a, "--hash-strings") == 0) {
      r->opt.hash_strings = 1;
    } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
      r->quiet = 1;
    } else if ((got = viewargs_value(argc, argv, &i, "--key", &v)) != 0) {
      if (got < 0) return 2;
      r->key_file = v;
    } else if ((got = viewargs_value(argc, argv, &i, "--keep", &v)) != 0) {
      if (got < 0) return 2;
      keep[r->opt.n_keep++] = v;
    } else if ((got = viewargs_value(argc, argv, &i, "--time-noise", &v)) != 0) {
      if (got < 0 || viewargs_double("--time-noise", v, &r->opt.time_noise_pct)) return 2;
      if (r->opt.time_noise_pct < 0 || r->opt.time_noise_pct >= 100) {
        cli_error("--time-noise: %s is not a percentage in [0, 100)", v);
        return 2;
      }
    } else if ((got = viewargs_value(argc, argv, &i, "--seed", &v)) != 0) {
      if (got < 0 || viewargs_u64("--seed", v, &r->opt.seed)) return 2;
    } else if ((got = viewargs_value(argc, argv, &i, "--output", &v)) != 0 ||
               (got = viewargs_value(argc, argv, &i, "-o", &v)) != 0) {
      if (got < 0) return 2;
      r->out = v;
    } else if (a[0] == '-' && a[1]) {
      cli_error("obfuscate: unknown option '%s'\n%s", a, usage);
      return 2;
    } else if (!r->in) {
      r->in = a;
    } else {
      cli_error("obfuscate: one input only ('%s')", a);
      return 2;
    }
  }
  if (!r->in) {
    cli_error("obfuscate: no input\n%s", usage);
    return 2;
  }
  return 0;
}

int cmd_obfuscate(int argc, char **argv) {
  run r = {.opt = {.seed = 1}};
  const char **keep = calloc((size_t)argc, sizeof *keep);
  if (!keep) return 2;
  r.opt.keep = keep;
  int rc = parse(&r, argc, argv, keep);
  if (rc) {
    free(keep);
    return rc == 1 ? 0 : rc;
  }
  if (r.key_file) {
    rc = read_key(r.key_file, r.opt.key) ? 2 : 0;
  } else if (getrandom(r.opt.key, sizeof r.opt.key, 0) != (ssize_t)sizeof r.opt.key) {
    cli_error("obfuscate: no random key available; give --key FILE");
    rc = 2;
  } else if (!r.quiet) {
    cli_warn("no --key: names were hashed with a random key, so they match across these ranks only");
  }
  char **paths = NULL;
  char *one[] = {(char *)r.in};
  int n = rc ? 0 : cli_expand_traces(1, one, &paths);
  if (n < 0) rc = 2;
  if (!rc) {
    FILE *probe = strcmp(r.in, "-") == 0 ? NULL : fopen(r.in, "rb");
    int prefixed = !probe && strcmp(r.in, "-") != 0;
    if (probe) fclose(probe);
    if (!r.out && prefixed) {
      cli_error("obfuscate: a prefix needs -o OUT_PREFIX");
      rc = 2;
    } else {
      if (!r.out) r.out = "-";
      rc = obfuscate_all(&r, paths, n, prefixed);
    }
  }
  if (n > 0) cli_free_paths(paths, n);
  free(keep);
  return rc;
}
