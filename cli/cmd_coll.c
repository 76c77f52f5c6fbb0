/* cmd_coll.c - chakra coll: collective algorithms as per-rank ETs
 * (generate, convert from MSCCL-IR XML, check, expand into workloads). */
#include <stdlib.h>
#include <string.h>

#include "chakra/coll.h"
#include "chakra/version.h"
#include "cli.h"

static const char usage[] =
    "usage: chakra coll gen --coll COLL --algo ALGO --ranks N --size BYTES -o PREFIX\n"
    "                       [--chunks C] [--reduce-bw GBPS]\n"
    "       chakra coll from-msccl X.xml --size BYTES -o PREFIX [--reduce-bw GBPS]\n"
    "                       [--compat] [--embed-xml]\n"
    "       chakra coll check PREFIX|FILES...\n"
    "       chakra coll expand WORKLOAD_PREFIX -o OUT_PREFIX --algo [COLL][:MIN-MAX][@PG]=ALGO ...\n"
    "                       [--comm-group-configuration GROUPS.json] [--reduce-bw GBPS] [--overlap]\n"
    "\n"
    "Collective algorithms as Chakra ETs: one file per rank, PREFIX.<r>.et, a DAG\n"
    "of COMM_SEND, COMM_RECV and COMP nodes (r = position in the communicator).\n"
    "\n"
    "gen        write a standard algorithm\n"
    "  --coll   allreduce | allgather | reducescatter | alltoall\n"
    "  --algo   ring (AR RS AG) | direct (AR RS AG A2A) | hd (AR RS AG) |\n"
    "           tree (AR) | dbt (AR); hd, tree, dbt need a power-of-two --ranks\n"
    "  --ranks  rank count (also --npus)\n"
    "  --size   bytes: the whole buffer, or the per-rank input for allgather;\n"
    "           K, M, G suffixes are binary\n"
    "  --chunks independent pipelines (tags offset by chunk * 65536), default 1\n"
    "  --reduce-bw  GB/s of reductions (COMP nodes 3 * bytes / bw ns); 0 = no\n"
    "           COMP nodes; default 50\n"
    "  -o       output prefix (also --out)\n"
    "from-msccl convert MSCCL-IR XML (every step type; deterministic tags)\n"
    "  --size   the collective's size, as for gen\n"
    "  --compat the 2025-04 reference converter's bytes exactly\n"
    "  --embed-xml  store the whole XML in every file (the reference's input_file)\n"
    "check      send/receive matching, peers, cycles, completion; exit 1 on problems\n"
    "expand     replace each COMM_COLL node by its rank's copy of an algorithm\n"
    "  --algo   a rule: ALGO is a generated algorithm's name or a prefix of\n"
    "           algorithm ETs; COLL, a comm_size range (64K-1M) and a pg_name\n"
    "           restrict it; first match wins (repeat --algo)\n"
    "  --comm-group-configuration  communicator groups (ASTRA-sim JSON); PyTorch\n"
    "           METADATA nodes are read too\n"
    "  --overlap  split each compute node that consumes an all-gather into one\n"
    "           piece per received chunk, plus the local piece and a join\n"
    "\n"
    "Details and worked examples: docs/coll.md\n";

typedef struct opts {
  int argc;
  char **argv;
  int i;
  const char *cmd;
} opts;

/* The value of option argv[i] (advancing past it), or NULL after an error. */
static const char *opt_value(opts *o) {
  if (o->i + 1 >= o->argc) {
    cli_error("coll %s: %s needs a value", o->cmd, o->argv[o->i]);
    return NULL;
  }
  return o->argv[++o->i];
}

static int opt_is(const opts *o, const char *a, const char *b) {
  const char *x = o->argv[o->i];
  return strcmp(x, a) == 0 || (b && strcmp(x, b) == 0);
}

static int parse_u64(const opts *o, const char *v, unsigned long long *out) {
  uint64_t x;
  int bad = cli_parse_bytes(v, &x);
  *out = x;
  if (bad) {
    cli_error("coll %s: %s '%s': expected a non-negative integer (K, M, G suffixes allowed)", o->cmd,
              o->argv[o->i - 1], v);
    return -1;
  }
  return 0;
}

static int parse_bw(const opts *o, const char *v, double *out) {
  char *end;
  double d = strtod(v, &end);
  if (end == v || *end || !(d >= 0) || d > 1e12) {
    cli_error("coll %s: --reduce-bw '%s': expected GB/s >= 0", o->cmd, v);
    return -1;
  }
  *out = d;
  return 0;
}

static int coll_gen(int argc, char **argv) {
  opts o = {argc, argv, 0, "gen"};
  chakra_coll_gen_options g = {.reduce_bw = CHAKRA_COLL_DEFAULT_REDUCE_BW, .chunks = 1};
  const char *prefix = NULL, *coll = NULL, *algo = NULL, *v;
  unsigned long long u;
  int have_size = 0;
  for (o.i = 1; o.i < argc; o.i++) {
    if (cli_is_help(argv[o.i])) {
      fputs(usage, stdout);
      return 0;
    } else if (opt_is(&o, "--coll", NULL)) {
      if (!(coll = opt_value(&o))) return 2;
    } else if (opt_is(&o, "--algo", NULL)) {
      if (!(algo = opt_value(&o))) return 2;
    } else if (opt_is(&o, "--ranks", "--npus")) {
      if (!(v = opt_value(&o)) || parse_u64(&o, v, &u)) return 2;
      if (u > UINT32_MAX) u = UINT32_MAX;
      g.ranks = (uint32_t)u;
    } else if (opt_is(&o, "--size", NULL)) {
      if (!(v = opt_value(&o)) || parse_u64(&o, v, &u)) return 2;
      g.size = u, have_size = 1;
    } else if (opt_is(&o, "--chunks", NULL)) {
      if (!(v = opt_value(&o)) || parse_u64(&o, v, &u)) return 2;
      if (u == 0 || u > 32767) {
        cli_error("coll gen: --chunks '%s': expected 1 to 32767", v);
        return 2;
      }
      g.chunks = (uint32_t)u;
    } else if (opt_is(&o, "--reduce-bw", NULL)) {
      if (!(v = opt_value(&o)) || parse_bw(&o, v, &g.reduce_bw)) return 2;
    } else if (opt_is(&o, "-o", "--out") || opt_is(&o, "--output", NULL)) {
      if (!(prefix = opt_value(&o))) return 2;
    } else {
      cli_error("coll gen: unexpected argument '%s'; see 'chakra coll --help'", argv[o.i]);
      return 2;
    }
  }
  if (!coll || !algo || !g.ranks || !have_size || !prefix) {
    cli_error("coll gen: --coll, --algo, --ranks, --size and -o are required; see 'chakra coll --help'");
    return 2;
  }
  int t = chakra_coll_type_parse(coll), a = chakra_coll_algo_parse(algo);
  if (t < 0) {
    cli_error("coll gen: --coll '%s': expected allreduce, allgather, reducescatter or alltoall", coll);
    return 2;
  }
  if (a < 0) {
    cli_error("coll gen: --algo '%s': expected ring, direct, hd, tree or dbt", algo);
    return 2;
  }
  g.coll = (chakra_coll_type)t;
  g.algo = (chakra_coll_algo)a;
  chakra_error err = {0};
  if (chakra_coll_gen_check(&g, &err)) {
    cli_error("coll gen: %s", err.msg);
    return 2;
  }
  if (chakra_coll_gen(prefix, &g, &err)) return cli_fail(&err);
  return 0;
}

static int coll_from_msccl(int argc, char **argv) {
  opts o = {argc, argv, 0, "from-msccl"};
  chakra_coll_msccl_options m = {.reduce_bw = CHAKRA_COLL_DEFAULT_REDUCE_BW,
                                 .producer = "chakra-c " CHAKRA_VERSION_STRING " coll from-msccl"};
  const char *xml = NULL, *prefix = NULL, *v;
  unsigned long long u;
  int have_size = 0;
  for (o.i = 1; o.i < argc; o.i++) {
    if (cli_is_help(argv[o.i])) {
      fputs(usage, stdout);
      return 0;
    } else if (opt_is(&o, "--size", "--coll-size")) {
      if (!(v = opt_value(&o)) || parse_u64(&o, v, &u)) return 2;
      m.size = u, have_size = 1;
    } else if (opt_is(&o, "--reduce-bw", NULL)) {
      if (!(v = opt_value(&o)) || parse_bw(&o, v, &m.reduce_bw)) return 2;
    } else if (opt_is(&o, "--compat", NULL)) {
      m.compat = 1;
    } else if (opt_is(&o, "--embed-xml", NULL)) {
      m.embed_xml = 1;
    } else if (opt_is(&o, "-o", "--out") || opt_is(&o, "--output", NULL)) {
      if (!(prefix = opt_value(&o))) return 2;
    } else if (argv[o.i][0] != '-' && !xml) {
      xml = argv[o.i];
    } else {
      cli_error("coll from-msccl: unexpected argument '%s'; see 'chakra coll --help'", argv[o.i]);
      return 2;
    }
  }
  if (!xml || !have_size || !prefix) {
    cli_error("coll from-msccl: the XML file, --size and -o are required; see 'chakra coll --help'");
    return 2;
  }
  chakra_error err = {0};
  if (chakra_coll_from_msccl(xml, prefix, &m, &err)) {
    cli_error("%s", err.msg);
    return err.code == CHAKRA_EIO || err.code == CHAKRA_ENOMEM ? 1 : 2;
  }
  return 0;
}

static void print_problem(void *ctx, const chakra_problem *p) {
  char line[2048];
  chakra_problem_format(p, line, sizeof line);
  fprintf((FILE *)ctx, "%s\n", line);
}

static void warn_problem(void *ctx, const chakra_problem *p) {
  (void)ctx;
  char line[2048];
  chakra_problem_format(p, line, sizeof line);
  cli_warn("%s", line);
}

static int coll_expand(int argc, char **argv) {
  opts o = {argc, argv, 0, "expand"};
  chakra_coll_expand_options x = {.reduce_bw = CHAKRA_COLL_DEFAULT_REDUCE_BW, .diag = warn_problem,
                                  .producer = "chakra-c " CHAKRA_VERSION_STRING " coll expand"};
  chakra_coll_rule *rules = calloc((size_t)argc, sizeof *rules);
  const char *in = NULL, *out = NULL, *v;
  int rc = 2;
  chakra_error err = {0};
  if (!rules) return cli_fail(&err);
  for (o.i = 1; o.i < argc; o.i++) {
    if (cli_is_help(argv[o.i])) {
      fputs(usage, stdout);
      rc = 0;
      goto done;
    } else if (opt_is(&o, "--algo", NULL)) {
      if (!(v = opt_value(&o))) goto done;
      if (chakra_coll_rule_parse(v, &rules[x.n_rules], &err)) {
        cli_error("coll expand: %s", err.msg);
        goto done;
      }
      x.n_rules++;
    } else if (opt_is(&o, "--comm-group-configuration", "--comm-groups")) {
      if (!(x.comm_groups = opt_value(&o))) goto done;
    } else if (opt_is(&o, "--reduce-bw", NULL)) {
      if (!(v = opt_value(&o)) || parse_bw(&o, v, &x.reduce_bw)) goto done;
    } else if (opt_is(&o, "--overlap", NULL)) {
      x.overlap = 1;
    } else if (opt_is(&o, "-o", "--out") || opt_is(&o, "--output", NULL)) {
      if (!(out = opt_value(&o))) goto done;
    } else if (argv[o.i][0] != '-' && !in) {
      in = argv[o.i];
    } else {
      cli_error("coll expand: unexpected argument '%s'; see 'chakra coll --help'", argv[o.i]);
      goto done;
    }
  }
  if (!in || !out || !x.n_rules) {
    cli_error("coll expand: the workload prefix, -o and at least one --algo are required; see 'chakra coll --help'");
    goto done;
  }
  x.rules = rules;
  uint64_t nodes = 0;
  if (chakra_coll_expand(in, out, &x, &nodes, &err)) {
    cli_error("%s", err.msg);
    rc = err.code == CHAKRA_EIO || err.code == CHAKRA_ENOMEM ? 1 : 2;
    goto done;
  }
  rc = 0;
done:
  free(rules);
  return rc;
}

static int coll_check(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (cli_is_help(argv[i])) {
      fputs(usage, stdout);
      return 0;
    }
    if (argv[i][0] == '-' && argv[i][1]) {
      cli_error("coll check: unexpected option '%s'; see 'chakra coll --help'", argv[i]);
      return 2;
    }
  }
  if (argc < 2) {
    cli_error("coll check: give a prefix or the rank files; see 'chakra coll --help'");
    return 2;
  }
  char **paths;
  int n = cli_expand_traces(argc - 1, argv + 1, &paths);
  if (n < 0) return 2;
  chakra_error err = {0};
  uint64_t problems = 0;
  int rc = chakra_coll_check(paths, (uint32_t)n, print_problem, stdout, &problems, &err);
  cli_free_paths(paths, n);
  if (rc) return cli_fail(&err);
  if (problems) {
    printf("%d file(s): %llu problem(s)\n", n, (unsigned long long)problems);
    return 1;
  }
  printf("%d file(s): sound (every message matched, acyclic, completes)\n", n);
  return 0;
}

int cmd_coll(int argc, char **argv) {
  if (argc < 2 || cli_is_help(argv[1])) {
    fputs(usage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (strcmp(argv[1], "gen") == 0) return coll_gen(argc - 1, argv + 1);
  if (strcmp(argv[1], "from-msccl") == 0) return coll_from_msccl(argc - 1, argv + 1);
  if (strcmp(argv[1], "expand") == 0) return coll_expand(argc - 1, argv + 1);
  if (strcmp(argv[1], "check") == 0) return coll_check(argc - 1, argv + 1);
  cli_error("coll: unknown subcommand '%s'; expected gen, from-msccl, check or expand", argv[1]);
  return 2;
}
