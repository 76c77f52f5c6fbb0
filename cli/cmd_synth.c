/* cmd_synth.c - chakra synth: per-rank ETs for LLM training from a model
 * description and parallel degrees (STAGE's options, dashes for
 * underscores). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "chakra/synth.h"
#include "cli.h"

static const char usage[] =
    "usage: chakra synth [OPTIONS] -o PREFIX\n"
    "\n"
    "Synthesises one Chakra ET per rank for transformer training (STAGE's model\n"
    "and options) and the communicator groups: PREFIX.<r>.et and PREFIX.json.\n"
    "\n"
    "model (STAGE's defaults):\n"
    "  --model-type T        gpt | dense (gpt templates) [gpt]\n"
    "  --num-stacks N        decoder blocks [80]\n"
    "  --dmodel N --dff N --head N --kvhead N --seq N --dvocal N\n"
    "                        [8192 28672 64 8 1024 32000]\n"
    "  --batch N             global batch [64]\n"
    "  --micro-batch N       global micro-batch, -1 = batch [-1]\n"
    "  --experts N --kexperts N   MoE experts and experts per token [8 2]\n"
    "  --mixed-precision 0|1\n"
    "parallelism:\n"
    "  --dp N --tp N --sp N --pp N --ep N   degrees [1]; --sp is context parallelism\n"
    "  --tpsp 0|1            tensor parallelism with sequence parallelism [1]\n"
    "  --weight-sharded 0|1  FSDP: shard block weights over dp [0]\n"
    "ours:\n"
    "  --schedule none|gpipe|1f1b   pipeline order within each stage [1f1b;\n"
    "                        none with --stage-compat]\n"
    "  --dtype-bytes N       bytes per element for sizes [2]\n"
    "  --peak-tflops P --mem-bw B   write compute durations from the roofline\n"
    "                        (TFLOP/s, GB/s with GB = 10^9)\n"
    "  --seed N              first pipeline tag (tags are deterministic) [0]\n"
    "  --activation-recompute 0|1   run each block's forward again before its\n"
    "                        backward (ignored with --stage-compat, as STAGE does)\n"
    "  --ranks LIST          write only these ranks, e.g. 0,4-7\n"
    "  --stage-compat        STAGE's output: elements, MACs, per-micro-batch dp\n"
    "                        reduction, STAGE's attributes\n"
    "  -o, --output PREFIX   output prefix (required)\n"
    "  -q, --quiet           no summary line\n";

typedef struct num_opt {
  const char *name;
  int kind; /* 0 u32 degree, 1 u64, 2 bool, 3 i64 */
  size_t off;
} num_opt;

#define OFF(f) offsetof(chakra_synth_config, f)
static const num_opt num_opts[] = {
    {"dp", 0, OFF(dp)}, {"tp", 0, OFF(tp)}, {"sp", 0, OFF(sp)}, {"pp", 0, OFF(pp)}, {"ep", 0, OFF(ep)},
    {"dtype-bytes", 0, OFF(dtype_bytes)},
    {"num-stacks", 1, OFF(num_stacks)}, {"dmodel", 1, OFF(dmodel)}, {"dff", 1, OFF(dff)},
    {"head", 1, OFF(head)}, {"kvhead", 1, OFF(kvhead)}, {"seq", 1, OFF(seq)}, {"dvocal", 1, OFF(dvocal)},
    {"batch", 1, OFF(batch)}, {"experts", 1, OFF(experts)}, {"kexperts", 1, OFF(kexperts)},
    {"seed", 1, OFF(tag_base)}, {"tag-base", 1, OFF(tag_base)},
    {"weight-sharded", 2, OFF(weight_sharded)}, {"tpsp", 2, OFF(tpsp)},
    {"mixed-precision", 2, OFF(mixed_precision)}, {"activation-recompute", 2, OFF(activation_recompute)},
    {"micro-batch", 3, OFF(micro_batch)},
};

static int set_num(chakra_synth_config *c, const num_opt *o, const char *v) {
  char *end;
  errno = 0;
  long long x = strtoll(v, &end, 10);
  if (errno || end == v || *end) goto bad;
  char *p = (char *)c + o->off;
  switch (o->kind) {
  case 0:
    if (x < 1 || x > 1 << 24) goto bad;
    *(uint32_t *)p = (uint32_t)x;
    return 0;
  case 1:
    if (x < 0) goto bad;
    *(uint64_t *)p = (uint64_t)x;
    return 0;
  case 2:
    if (x != 0 && x != 1) goto bad;
    *(int *)p = (int)x;
    return 0;
  default:
    if (x < -1 || x == 0) goto bad;
    *(int64_t *)p = x;
    return 0;
  }
bad:
  cli_error("synth: --%s '%s': expected %s", o->name, v,
            o->kind == 0 ? "a whole number from 1 to 16777216" : o->kind == 1 ? "a whole number"
            : o->kind == 2 ? "0 or 1" : "a positive whole number or -1");
  return 2;
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

int cmd_synth(int argc, char **argv) {
  chakra_synth_config c;
  chakra_synth_config_default(&c);
  const char *prefix = NULL;
  int quiet = 0, have_schedule = 0, rc = 0;
  uint32_t *ranks = NULL;
  double peak = 0, bw = 0;
  for (int i = 1; i < argc && !rc; i++) {
    char name[64];
    const char *a = argv[i], *v = NULL;
    if (cli_is_help(a)) {
      fputs(usage, stdout);
      free(ranks);
      return 0;
    }
    if (strcmp(a, "--stage-compat") == 0) {
      c.stage_compat = 1;
      continue;
    }
    if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
      quiet = 1;
      continue;
    }
    if (strcmp(a, "-o") == 0) a = "--output";
    if (strncmp(a, "--", 2) != 0) {
      cli_error("synth: unexpected argument '%s' (see 'chakra synth --help')", a);
      rc = 2;
      break;
    }
    const char *eq = strchr(a, '=');
    size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
    if (len >= sizeof name) len = sizeof name - 1;
    memcpy(name, a + 2, len), name[len] = 0;
    for (char *p = name; *p; p++)
      if (*p == '_') *p = '-'; /* STAGE spells options with underscores */
    v = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
    if (!v) {
      cli_error("synth: --%s needs a value", name);
      rc = 2;
      break;
    }
    const num_opt *o = NULL;
    for (size_t k = 0; k < sizeof num_opts / sizeof *num_opts; k++)
      if (strcmp(num_opts[k].name, name) == 0) o = &num_opts[k];
    if (o) {
      rc = set_num(&c, o, v);
    } else if (strcmp(name, "model-type") == 0) {
      c.model_type = v;
    } else if (strcmp(name, "output") == 0) {
      prefix = v;
    } else if (strcmp(name, "schedule") == 0) {
      have_schedule = 1;
      if (strcmp(v, "none") == 0) c.schedule = CHAKRA_SYNTH_SCHEDULE_NONE;
      else if (strcmp(v, "gpipe") == 0) c.schedule = CHAKRA_SYNTH_SCHEDULE_GPIPE;
      else if (strcmp(v, "1f1b") == 0) c.schedule = CHAKRA_SYNTH_SCHEDULE_1F1B;
      else cli_error("synth: --schedule '%s': expected none, gpipe or 1f1b", v), rc = 2;
    } else if (strcmp(name, "peak-tflops") == 0 || strcmp(name, "mem-bw") == 0) {
      char *end;
      double d = strtod(v, &end);
      if (end == v || *end || !(d > 0)) cli_error("synth: --%s '%s': expected a positive number", name, v), rc = 2;
      *(name[0] == 'p' ? &peak : &bw) = d;
    } else if (strcmp(name, "ranks") == 0) {
      free(ranks);
      ranks = NULL;
      if (parse_ranks(v, &ranks, &c.n_ranks))
        cli_error("synth: --ranks '%s': expected ranks and ranges, e.g. 0,4-7", v), rc = 2;
      c.ranks = ranks;
    } else if (strcmp(name, "output-dir") == 0 || strcmp(name, "output-name") == 0) {
      cli_error("synth: --%s: use -o PREFIX (files PREFIX.<r>.et and PREFIX.json)", name);
      rc = 2;
    } else {
      cli_error("synth: unknown option --%s (see 'chakra synth --help')", name);
      rc = 2;
    }
  }
  if (!rc && !prefix) cli_error("synth: -o PREFIX is required\n%s", usage), rc = 2;
  if (rc) {
    free(ranks);
    return rc;
  }
  c.peak_tflops = peak, c.mem_bw_gbs = bw;
  if (c.stage_compat && !have_schedule) c.schedule = CHAKRA_SYNTH_SCHEDULE_NONE;
  chakra_error err = {0};
  chakra_synth_stats st;
  if (chakra_synth_write(&c, prefix, &st, &err)) {
    free(ranks);
    if (err.code == CHAKRA_EINVAL) {
      cli_error("synth: %s", err.msg);
      return 2;
    }
    return cli_fail(&err);
  }
  free(ranks);
  if (!quiet) {
    printf("wrote %u of %u ranks (%u pipeline stage%s", st.ranks_written, st.ranks, st.stages,
           st.stages == 1 ? "" : "s");
    for (uint32_t s = 0; s < st.stages && s < 8; s++) {
      fputs(s ? "/" : ", nodes per rank ", stdout);
      if (st.nodes_per_stage[s]) printf("%llu", (unsigned long long)st.nodes_per_stage[s]);
      else fputs("-", stdout); /* no rank of this stage written (--ranks) */
    }
    printf("%s), %llu nodes, %llu bytes, groups in %s.json\n", st.stages > 8 ? "/..." : "",
           (unsigned long long)st.nodes_written, (unsigned long long)st.bytes_written, prefix);
  }
  return 0;
}
