/* cmd_gen.c - chakra gen: generate workloads. */
#include "chakra/et_def.pb-c.h"
#include "chakra/build.h"
#include "chakra/coll.h"
#include "chakra/gen.h"
#include "cli.h"
#include "progress.h"

#include <string.h>

static const char about[] =
    "One collective per rank, as ASTRA-sim's microbenchmarks: writes\n"
    "PREFIX.0.et .. PREFIX.<N-1>.et.\n";
static const char about_dlrm[] =
    "One training step of a DLRM-like recommendation model per rank: data-parallel\n"
    "MLPs (gradients all-reduced), embedding tables sharded over the ranks (the\n"
    "pooled embeddings and their gradients exchanged all-to-all). Writes\n"
    "PREFIX.0.et .. PREFIX.<N-1>.et (docs/gen.md).\n";

static int gen_microbench(int argc, char **argv) {
  /* chakra_coll_type -> the schema's collective: the spellings coll gen takes. */
  static const int proto_coll[CHAKRA_COLL_TYPES] = {
      [CHAKRA_COLL_ALLREDUCE] = CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_REDUCE,
      [CHAKRA_COLL_ALLGATHER] = CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_GATHER,
      [CHAKRA_COLL_REDUCESCATTER] = CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__REDUCE_SCATTER,
      [CHAKRA_COLL_ALLTOALL] = CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_TO_ALL};
  const char *coll_name = NULL;
  const char *prefix = NULL;
  uint32_t npus = 0;
  uint64_t size = 0;
  int quiet = 0;
  const cli_opt opts[] = {
      {.name = "coll", .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED, .dest = &coll_name, .metavar = "COLL",
       .help = "all_reduce, all_gather, reduce_scatter or all_to_all; any case, with '_', '-' or nothing between "
               "the words (allreduce), or ar, ag, rs, a2a, as coll gen takes"},
      {.name = "npus", .kind = CLI_OPT_COUNT, .flags = CLI_OPT_REQUIRED, .dest = CLI_INT(&npus), .min = 1,
       .max = 1000000, .help = "number of ranks"},
      {.name = "size", .kind = CLI_OPT_SIZE, .flags = CLI_OPT_REQUIRED, .dest = CLI_INT(&size),
       .help = "bytes per rank (all_gather: the per-rank input); K, M, G suffixes are binary (1M = 1048576)"},
      {.name = "output", .short_name = 'o', .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED, .dest = &prefix,
       .metavar = "PREFIX", .help = "output prefix", .file = CLI_FILE_OUT_PREFIX},
      {.name = "quiet", .short_name = 'q', .kind = CLI_OPT_FLAG, .dest = &quiet, .help = "no progress line"},
      {0}};
  const cli_command cmd = {.name = "gen microbench", .max_args = 0, .about = about, .opts = opts};
  cli_args pos;
  int st = cli_parse(&cmd, argc, argv, &pos);
  if (st != CLI_PROCEED) return st;
  int t = chakra_coll_type_parse(coll_name);
  if (t < 0 || t >= CHAKRA_COLL_TYPES) {
    cli_error("--coll: expected all_reduce, all_gather, reduce_scatter or all_to_all (or allreduce, ar, ...), got '%s'",
              coll_name);
    return 2;
  }
  chakra_error err = {0};
  cli_progress bar;
  chakra_microbench_options mo = {0};
  mo.progress = cli_progress_start(&bar, quiet, "ranks", &mo.progress_ctx);
  int rc = chakra_gen_microbench(prefix, proto_coll[t], npus, size, &mo, &err);
  cli_progress_end(&bar);
  return rc ? cli_fail(&err) : 0;
}

/* "512-256-128" -> widths; 0 or -1 after printing the error. */
static int parse_widths(const char *opt, const char *v, uint64_t *out, size_t *n) {
  char part[32];
  *n = 0;
  for (const char *s = v;;) {
    size_t len = strcspn(s, "-");
    uint64_t x;
    if (*n == CHAKRA_GEN_DLRM_MAX_LAYERS || !len || len >= sizeof part ||
        (memcpy(part, s, len), part[len] = 0, cli_parse_count(part, &x)) || !x) {
      cli_error("%s: expected 1 to %d layer widths of at least 1 joined by '-' (512-256-128), got '%s'", opt,
                CHAKRA_GEN_DLRM_MAX_LAYERS, v);
      return -1;
    }
    out[(*n)++] = x;
    if (!s[len]) return 0;
    s += len + 1;
  }
}

static int gen_dlrm(int argc, char **argv) {
  chakra_gen_dlrm_config c;
  chakra_gen_dlrm_config_default(&c);
  const char *prefix = NULL, *bottom = NULL, *top = NULL;
  int quiet = 0;
  const cli_opt opts[] = {
      {.name = "npus", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&c.npus), .min = 1, .max = 1 << 24,
       .help = "ranks: the data-parallel degree and the table shards", .def = "8"},
      {.name = "batch", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&c.batch), .min = 1, .max = INT64_MAX,
       .help = "global batch (samples), split evenly over the ranks", .def = "65536"},
      {.name = "tables", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&c.tables), .min = 1, .max = UINT32_MAX,
       .help = "embedding tables, sharded table-wise (the remainder to the first ranks)", .def = "26"},
      {.name = "rows", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&c.rows), .min = 1, .max = INT64_MAX,
       .help = "rows per table (the update writes at most this many per table)", .def = "1000000"},
      {.name = "emb-dim", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&c.emb_dim), .min = 1, .max = INT64_MAX,
       .help = "embedding width (the bottom MLP's last width)", .def = "128"},
      {.name = "lookups", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&c.lookups), .min = 1, .max = INT64_MAX,
       .help = "rows pooled (summed) per table and sample", .def = "1"},
      {.name = "dense-features", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&c.dense_features), .min = 1,
       .max = INT64_MAX, .help = "the bottom MLP's input width", .def = "13"},
      {.name = "bottom-mlp", .kind = CLI_OPT_STRING, .dest = &bottom, .metavar = "W-W-..",
       .help = "the bottom MLP's layer widths", .def = "512-256-128"},
      {.name = "top-mlp", .kind = CLI_OPT_STRING, .dest = &top, .metavar = "W-W-..",
       .help = "the top MLP's layer widths (its input: emb-dim + tables*(tables+1)/2)", .def = "1024-1024-512-256-1"},
      {.name = "dtype-bytes", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&c.dtype_bytes), .min = 1, .max = 1 << 24,
       .help = "bytes per element for sizes", .def = "4"},
      {.name = "peak-tflops", .kind = CLI_OPT_DOUBLE, .flags = CLI_OPT_POSITIVE, .dest = &c.peak_tflops,
       .metavar = "P", .help = "with --mem-bw: compute durations from the roofline (TFLOP/s)"},
      {.name = "mem-bw", .kind = CLI_OPT_DOUBLE, .flags = CLI_OPT_POSITIVE, .dest = &c.mem_bw_gbs, .metavar = "B",
       .help = "memory bandwidth, GB/s with GB = 10^9"},
      {.name = "threads", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&c.threads), .min = 1, .max = 256,
       .help = "write the rank files on N threads (the bytes never depend on it)", .def = "one per CPU, at most 8"},
      {.name = "output", .short_name = 'o', .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED, .dest = &prefix,
       .metavar = "PREFIX", .help = "output prefix", .file = CLI_FILE_OUT_PREFIX},
      {.name = "quiet", .short_name = 'q', .kind = CLI_OPT_FLAG, .dest = &quiet, .help = "no summary line, no progress line"},
      {0}};
  const cli_command cmd = {.name = "gen dlrm", .max_args = 0, .about = about_dlrm, .opts = opts};
  cli_args pos;
  int st = cli_parse(&cmd, argc, argv, &pos);
  if (st != CLI_PROCEED) return st;
  uint64_t bw[CHAKRA_GEN_DLRM_MAX_LAYERS], tw[CHAKRA_GEN_DLRM_MAX_LAYERS];
  if (bottom && parse_widths("--bottom-mlp", bottom, bw, &c.n_bottom)) return CLI_EXIT_ERROR;
  if (top && parse_widths("--top-mlp", top, tw, &c.n_top)) return CLI_EXIT_ERROR;
  if (bottom) c.bottom_mlp = bw;
  if (top) c.top_mlp = tw;
  chakra_error err = {0};
  chakra_gen_dlrm_stats s;
  cli_progress bar;
  c.progress = cli_progress_start(&bar, quiet, "ranks", &c.progress_ctx);
  int failed = chakra_gen_dlrm(&c, prefix, &s, &err);
  cli_progress_end(&bar);
  if (failed) {
    if (err.code != CHAKRA_EINVAL) return cli_fail(&err);
    cli_error("%s", err.msg);
    return CLI_EXIT_ERROR;
  }
  if (!quiet)
    printf("wrote %u ranks (%llu nodes per rank), %llu nodes, %llu bytes; embedding tables: at most %llu per rank, "
           "%llu bytes\n",
           c.npus, (unsigned long long)s.nodes_per_rank, (unsigned long long)s.nodes, (unsigned long long)s.bytes,
           (unsigned long long)s.tables_per_rank, (unsigned long long)s.table_bytes);
  return 0;
}

int cmd_gen(int argc, char **argv) {
  static const cli_mode modes[] = {{"microbench", gen_microbench}, {"dlrm", gen_dlrm}};
  return cli_run_mode("gen", modes, sizeof modes / sizeof *modes, argc, argv);
}
