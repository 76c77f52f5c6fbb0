/* cmd_synth.c - chakra synth: per-rank ETs for LLM training (or inference) from a model
 * description and parallel degrees (STAGE's options, dashes for
 * underscores). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "chakra/synth.h"
#include "cli.h"
#include "progress.h"

static const char about[] =
    "Synthesises one Chakra ET per rank for transformer training (STAGE's model\n"
    "and options), or an inference step (--phase prefill|decode), and the\n"
    "communicator groups: PREFIX.<r>.et and PREFIX.json, or with --shared the shared\n"
    "form: PREFIX.set.json and one template per pipeline stage, PREFIX.class<s>.et.\n"
    "STAGE's underscore spellings (--micro_batch) are accepted too.\n";

/* STAGE reads its booleans with str_to_bool: true/t/1/yes/y. */
static const cli_choice bools[] = {{"0", 0},    {"1", 1},     {"true", 1}, {"false", 0}, {"t", 1}, {"f", 0},
                                   {"yes", 1},  {"no", 0},    {"y", 1},    {"n", 0},     {NULL, 0}};
static const cli_choice orders[] = {{"schedule", CHAKRA_SYNTH_ORDER_SCHEDULE}, {"stage", CHAKRA_SYNTH_ORDER_STAGE},
                                    {NULL, 0}};
static const cli_choice rank_orders[] = {{"dp-first", CHAKRA_SYNTH_RANKS_DP_FIRST},
                                         {"tp-first", CHAKRA_SYNTH_RANKS_TP_FIRST},
                                         {NULL, 0}};
static const cli_choice phases[] = {{"train", CHAKRA_SYNTH_PHASE_TRAIN},
                                    {"prefill", CHAKRA_SYNTH_PHASE_PREFILL},
                                    {"decode", CHAKRA_SYNTH_PHASE_DECODE},
                                    {NULL, 0}};
static const cli_choice schedules[] = {{"none", CHAKRA_SYNTH_SCHEDULE_NONE},
                                       {"gpipe", CHAKRA_SYNTH_SCHEDULE_GPIPE},
                                       {"1f1b", CHAKRA_SYNTH_SCHEDULE_1F1B},
                                       {NULL, 0}};

#define DEGREE(n, f, h)                                                                                        \
  {.name = n, .kind = CLI_OPT_COUNT, .dest = CLI_INT(&c->f), .min = 1, .max = 1 << 24, .help = h, .def = "1"}
#define WHOLE(n, al, f, h, d) {.name = n, .alias = al, .kind = CLI_OPT_COUNT, .dest = CLI_INT(&c->f), .help = h, .def = d}
#define BOOL(n, al, f, h, d)                                                                                   \
  {.name = n, .alias = al, .kind = CLI_OPT_CHOICE, .dest = &c->f, .choices = bools, .help = h, .def = d}

/* The option table, destinations in c and s. */
typedef struct synth_cli {
  const char *prefix, *micro_batch, *ranks, *out_dir, *out_name, *schema;
  int quiet, schedule, print_vram, order, phase, shared, rank_order;
} synth_cli;

static void synth_opts(chakra_synth_config *c, synth_cli *s, cli_opt *out, size_t cap) {
  const cli_opt t[] = {
      {.name = "model-type", .alias = "model_type", .kind = CLI_OPT_STRING, .dest = &c->model_type, .metavar = "T",
       .help = "gpt | dense (gpt templates) | llama | moe (llama attention, routed experts)", .def = "gpt"},
      {.name = "phase", .kind = CLI_OPT_CHOICE, .dest = &s->phase, .choices = phases,
       .help = "train (an iteration); inference: prefill (the prompt's forward pass, --seq tokens) or decode "
               "(one new token per sequence against a KV cache of --seq tokens)",
       .def = "train"},
      WHOLE("num-stacks", "num_stacks", num_stacks, "decoder blocks", "80"),
      WHOLE("dmodel", NULL, dmodel, "model width", "8192"),
      WHOLE("dff", NULL, dff, "FFN width", "28672"),
      WHOLE("head", NULL, head, "attention heads", "64"),
      WHOLE("kvhead", NULL, kvhead, "KV heads", "8"),
      WHOLE("seq", NULL, seq, "sequence length", "1024"),
      WHOLE("dvocal", NULL, dvocal, "vocabulary", "32000"),
      WHOLE("batch", NULL, batch, "global batch", "64"),
      {.name = "micro-batch", .alias = "micro_batch", .kind = CLI_OPT_STRING, .dest = &s->micro_batch,
       .metavar = "N", .help = "global micro-batch, -1 = batch", .def = "-1"},
      WHOLE("experts", NULL, experts, "MoE: experts per block, split over --ep", "8"),
      WHOLE("kexperts", NULL, kexperts, "MoE: experts each token is routed to", "2"),
      BOOL("mixed-precision", "mixed_precision", mixed_precision, "mixed precision", "0"),
      DEGREE("dp", dp, "data parallelism"),
      DEGREE("tp", tp, "tensor parallelism"),
      DEGREE("sp", sp, "context (sequence) parallelism"),
      DEGREE("pp", pp, "pipeline parallelism"),
      DEGREE("ep", ep, "expert parallelism (moe only; multiplies the ranks)"),
      BOOL("tpsp", NULL, tpsp, "tensor parallelism with sequence parallelism", "1"),
      BOOL("weight-sharded", "weight_sharded", weight_sharded, "FSDP: shard block weights over dp", "0"),
      {.name = "schedule", .kind = CLI_OPT_CHOICE, .dest = &s->schedule, .choices = schedules,
       .help = "pipeline order within each stage", .def = "1f1b; none with --stage-compat"},
      {.name = "order", .kind = CLI_OPT_CHOICE, .dest = &s->order, .choices = orders,
       .help = "node ids (the simulator's issue priority): schedule = topological, following --schedule; "
               "stage = as STAGE numbers them (see docs/synth.md)",
       .def = "schedule; stage with --stage-compat"},
      {.name = "rank-order", .kind = CLI_OPT_CHOICE, .dest = &s->rank_order, .choices = rank_orders,
       .help = "rank numbering: dp-first = STAGE's (dp fastest, then tp, sp, ep); tp-first = Megatron's (tp "
               "fastest, then sp, ep, dp: a tp group on consecutive ranks, one node); the stage is the slowest",
       .def = "dp-first"},
      {.name = "dtype-bytes", .alias = "dtype_bytes", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&c->dtype_bytes),
       .min = 1, .max = 1 << 24, .help = "bytes per element for sizes", .def = "2"},
      {.name = "peak-tflops", .alias = "peak_tflops", .kind = CLI_OPT_DOUBLE, .flags = CLI_OPT_POSITIVE,
       .dest = &c->peak_tflops, .metavar = "P", .help = "with --mem-bw: compute durations from the roofline (TFLOP/s)"},
      {.name = "mem-bw", .alias = "mem_bw", .kind = CLI_OPT_DOUBLE, .flags = CLI_OPT_POSITIVE, .dest = &c->mem_bw_gbs,
       .metavar = "B", .help = "memory bandwidth, GB/s with GB = 10^9"},
      WHOLE("seed", "tag-base|tag_base", tag_base, "first pipeline tag (tags are deterministic)", "0"),
      WHOLE("stage-tag-base", "stage_tag_base", tag_base,
            "--stage-compat: the first pipeline tag (STAGE draws it at random; give its files' to match them)", "0"),
      BOOL("activation-recompute", "activation_recompute", activation_recompute,
           "run each block's forward again before its backward (ignored with --stage-compat, as STAGE does)", "0"),
      {.name = "ranks", .kind = CLI_OPT_STRING, .dest = &s->ranks, .metavar = "LIST",
       .help = "write only these ranks, e.g. 0,4-7"},
      {.name = "stage-compat", .alias = "stage_compat", .kind = CLI_OPT_FLAG, .dest = &c->stage_compat,
       .help = "STAGE's files for the same command line (gpt/dense/llama/debug: byte for byte, ids included)"},
      {.name = "singleton-groups", .kind = CLI_OPT_FLAG, .dest = &c->singleton_groups,
       .help = "PREFIX.json lists the groups of one rank too, as STAGE does (a degree of 1 makes one per rank; "
               "always with --stage-compat)"},
      {.name = "output", .short_name = 'o', .kind = CLI_OPT_STRING, .dest = &s->prefix,
       .metavar = "PREFIX", .help = "writes PREFIX.<r>.et and PREFIX.json (required, or STAGE's two below)",
       .file = CLI_FILE_OUT_PREFIX},
      {.name = "shared", .kind = CLI_OPT_FLAG, .dest = &s->shared,
       .help = "write the shared form: PREFIX.set.json and one template per pipeline stage, PREFIX.class<s>.et "
               "(every command reads it; chakra unshare writes the per-rank files)"},
      {.name = "output_dir", .alias = "output-dir", .kind = CLI_OPT_STRING, .dest = &s->out_dir, .metavar = "DIR",
       .help = "STAGE's spelling: with --output_name, PREFIX = DIR/NAME"},
      {.name = "output_name", .alias = "output-name", .kind = CLI_OPT_STRING, .dest = &s->out_name, .metavar = "NAME",
       .help = "STAGE's spelling: NAME.%d.et (or NAME) writes NAME.<r>.et and NAME.json"},
      {.name = "print_gpu_vram", .alias = "print-gpu-vram", .kind = CLI_OPT_CHOICE, .dest = &s->print_vram,
       .choices = bools, .help = "STAGE's option, accepted and ignored", .def = "0"},
      {.name = "chakra_schema_version", .alias = "chakra-schema-version", .kind = CLI_OPT_STRING, .dest = &s->schema,
       .metavar = "V", .help = "STAGE's option, accepted and ignored (STAGE always writes 0.0.4)"},
      {.name = "threads", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&c->threads), .min = 1, .max = 256,
       .help = "write the rank files on N threads (the bytes never depend on it)", .def = "one per CPU, at most 8"},
      {.name = "quiet", .short_name = 'q', .kind = CLI_OPT_FLAG, .dest = &s->quiet, .help = "no summary line, no progress line"},
      {0}};
  memcpy(out, t, sizeof t < cap * sizeof *out ? sizeof t : cap * sizeof *out);
}

/* --micro-batch: -1 or a whole number from 1. */
static int parse_micro_batch(const char *v, int64_t *out) {
  uint64_t x;
  if (strcmp(v, "-1") == 0) return *out = -1, 0;
  if (cli_parse_count(v, &x) || x == 0 || x > INT64_MAX) {
    cli_error("--micro-batch: expected -1 or a whole number from 1, got '%s'", v);
    return -1;
  }
  *out = (int64_t)x;
  return 0;
}

/* "0,3,5-7" -> malloc'd list. */
static int parse_ranks(const char *s, uint32_t **out, size_t *n) {
  size_t cap = 16;
  uint32_t *v = malloc(cap * sizeof *v);
  *n = 0;
  while (v && *s) {
    char *end;
    unsigned long a = strtoul(s, &end, 10), b = a;
    if (end == s) break;
    s = end;
    if (*s == '-') {
      b = strtoul(s + 1, &end, 10);
      if (end == s + 1 || b < a) break;
      s = end;
    }
    for (unsigned long r = a; r <= b && r <= 0xffffffu; r++) {
      if (*n == cap) {
        uint32_t *p = realloc(v, (cap *= 2) * sizeof *v);
        if (!p) return free(v), -1;
        v = p;
      }
      v[(*n)++] = (uint32_t)r;
    }
    if (*s == ',') s++;
    else if (*s) break;
  }
  if (!v || *s || !*n) return free(v), -1;
  *out = v;
  return 0;
}

/* mkdir -p, as STAGE creates its --output_dir. */
static int make_dirs(const char *dir) {
  char p[4096];
  if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p) return -1;
  for (char *s = p + 1; *s; s++)
    if (*s == '/') {
      *s = 0;
      if (mkdir(p, 0777) && errno != EEXIST) return -1;
      *s = '/';
    }
  return mkdir(p, 0777) && errno != EEXIST ? -1 : 0;
}

/* STAGE names its output with --output_dir DIR (created if missing) and
 * --output_name NAME, files DIR/(NAME % rank), NAME without %d taken as NAME.%d.et, the groups in
 * NAME without ".%d" and with ".et" -> ".json": that is PREFIX = DIR/P for
 * NAME = P.%d.et. Other patterns have no PREFIX form and are refused. */
static int stage_output(synth_cli *s, char *buf, size_t cap) {
  if (!s->out_dir && !s->out_name) {
    if (s->prefix) return 0;
    cli_error("--output: required (or STAGE's --output_dir and --output_name)");
    return -1;
  }
  if (!s->out_dir || !s->out_name || s->prefix) {
    cli_error("--output_dir and --output_name go together, in place of -o");
    return -1;
  }
  const char *n = s->out_name, *pct = strstr(n, "%d");
  size_t len = strlen(n);
  if (pct && !(len >= 6 && pct == n + len - 5 && pct > n && pct[-1] == '.' && !strcmp(pct + 2, ".et"))) {
    cli_error("--output_name '%s': only NAME.%%d.et (or NAME) is supported (files NAME.<r>.et)", n);
    return -1;
  }
  if (make_dirs(s->out_dir)) {
    cli_error("--output_dir: %s: cannot create: %s", s->out_dir, strerror(errno));
    return -1;
  }
  size_t keep = pct ? (size_t)(pct - 1 - n) : len;
  if ((size_t)snprintf(buf, cap, "%s/%.*s", s->out_dir, (int)keep, n) >= cap) {
    cli_error("--output_dir/--output_name: too long");
    return -1;
  }
  s->prefix = buf;
  return 0;
}

int cmd_synth(int argc, char **argv) {
  chakra_synth_config c;
  chakra_synth_config_default(&c);
  synth_cli sc = {.schedule = -1, .order = -1};
  uint32_t *ranks = NULL;
  cli_opt opts[56];
  synth_opts(&c, &sc, opts, sizeof opts / sizeof *opts);
  const cli_command cmd = {.name = "synth", .max_args = 0, .about = about, .opts = opts, .check_later = 1};
  cli_args pos;
  int rc = cli_parse(&cmd, argc, argv, &pos);
  if (rc != CLI_PROCEED) return rc;
  if (sc.micro_batch && parse_micro_batch(sc.micro_batch, &c.micro_batch)) return 2;
  if (sc.ranks) {
    if (parse_ranks(sc.ranks, &ranks, &c.n_ranks)) {
      cli_error("--ranks: expected ranks and ranges, e.g. 0,4-7, got '%s'", sc.ranks);
      return 2;
    }
    c.ranks = ranks;
  }
  if (sc.order == CHAKRA_SYNTH_ORDER_SCHEDULE && c.stage_compat && !(c.model_type && !strcmp(c.model_type, "moe"))) {
    free(ranks);
    cli_error("--order schedule: --stage-compat numbers the nodes as STAGE does (--order stage)");
    return 2;
  }
  if (sc.schedule > CHAKRA_SYNTH_SCHEDULE_NONE && c.stage_compat && !(c.model_type && !strcmp(c.model_type, "moe"))) {
    free(ranks);
    cli_error("--schedule: --stage-compat writes STAGE's files, which have no pipeline schedule (none)");
    return 2;
  }
  c.phase = (chakra_synth_phase)sc.phase;
  c.rank_order = (chakra_synth_rank_order)sc.rank_order;
  if (sc.order >= 0) c.order = (chakra_synth_order)sc.order;
  if (sc.schedule >= 0) c.schedule = (chakra_synth_schedule)sc.schedule;
  else if (c.stage_compat) c.schedule = CHAKRA_SYNTH_SCHEDULE_NONE;
  char stage_prefix[4096];
  if (stage_output(&sc, stage_prefix, sizeof stage_prefix)) {
    free(ranks);
    return 2;
  }
  /* The outputs are known only now (STAGE's --output_dir/--output_name);
   * with --shared the prefix holds the shared form, and no PREFIX.json. */
  const char *label = sc.out_dir ? "--output_dir/--output_name" : "--output";
  if (sc.out_dir) cli_files_prefix(sc.prefix, label);
  if (sc.shared) cli_files_shared(sc.prefix, label);
  else cli_files_groups_of(sc.prefix);
  if (cli_outputs_begin()) {
    free(ranks);
    return CLI_EXIT_ERROR;
  }
  const char *prefix = sc.prefix;
  int quiet = sc.quiet;
  chakra_error err = {0};
  chakra_synth_stats st;
  cli_progress bar;
  c.progress = cli_progress_start(&bar, quiet, "ranks", &c.progress_ctx);
  int failed = (sc.shared ? chakra_synth_write_shared : chakra_synth_write)(&c, prefix, &st, &err);
  cli_progress_end(&bar);
  if (failed) {
    free(ranks);
    if (err.code == CHAKRA_EINVAL) {
      cli_error("%s", err.msg);
      return 2;
    }
    return cli_fail(&err);
  }
  free(ranks);
  if (!quiet) {
    if (sc.shared)
      printf("wrote %u class template%s for %u ranks (%u pipeline stage%s", st.ranks_written,
             st.ranks_written == 1 ? "" : "s", st.ranks, st.stages, st.stages == 1 ? "" : "s");
    else
      printf("wrote %u of %u ranks (%u pipeline stage%s", st.ranks_written, st.ranks, st.stages,
             st.stages == 1 ? "" : "s");
    for (uint32_t s = 0; s < st.stages && s < 8; s++) {
      fputs(s ? "/" : ", nodes per rank ", stdout);
      if (st.nodes_per_stage[s]) printf("%llu", (unsigned long long)st.nodes_per_stage[s]);
      else fputs("-", stdout); /* no rank of this stage written (--ranks) */
    }
    printf("%s), %llu nodes, %llu bytes, %s %s%s\n", st.stages > 8 ? "/..." : "",
           (unsigned long long)st.nodes_written, (unsigned long long)st.bytes_written,
           sc.shared ? "ranks and groups by rule in" : "groups in", prefix, sc.shared ? ".set.json" : ".json");
  }
  return 0;
}
