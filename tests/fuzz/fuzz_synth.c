/* fuzz_synth.c - libFuzzer target for chakra synth's option space.
 *
 * The input is text, one option a line, "name value" as on the command
 * line without the dashes ("num-stacks 4294967297", "model-type moe",
 * "micro-batch -1", "phase 2" for decode); unknown lines are ignored, numbers are read whole
 * (any 64-bit value, cut to the field's width as the library's callers
 * would not: the cut is part of what is tried). Properties:
 *   - chakra_synth_check() accepts, or refuses with CHAKRA_EINVAL and one
 *     non-empty line naming an option ("--..."), never in a template's
 *     internal form (issue 26: "template: mb0.in_emb.dw@0: input '$dout'
 *     not found");
 *   - a configuration it accepts whose workload is small (at most 64 block
 *     copies per stage, at most 4096 ranks) is written (two ranks), or
 *     refused only for the tag limit (--seed, --stage-tag-base with
 *     --stage-compat); every rank file written loads
 *     in the graph loader, with every comm_size and tensor_size at most
 *     2^63 - 1 and every comm_tag from 0 (nothing wrapped). */
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra/graph.h"
#include "chakra/synth.h"
#include "fuzz_common.h"

static void violated(const char *what, const char *detail) {
  fprintf(stderr, "fuzz property violated: %s: %s\n", what, detail);
  abort();
}

/* "name value" into the configuration; strings point into text. */
static void set_option(chakra_synth_config *c, char *name, char *value) {
  static const struct { const char *name; size_t offset, width; } nums[] = {
#define U64(n, f) {n, offsetof(chakra_synth_config, f), sizeof(uint64_t)}
#define U32(n, f) {n, offsetof(chakra_synth_config, f), sizeof(uint32_t)}
#define INT(n, f) {n, offsetof(chakra_synth_config, f), sizeof(int)}
      U64("num-stacks", num_stacks), U64("dmodel", dmodel), U64("dff", dff), U64("head", head),
      U64("kvhead", kvhead), U64("seq", seq), U64("dvocal", dvocal), U64("batch", batch),
      U64("experts", experts), U64("kexperts", kexperts), U64("seed", tag_base), U64("stage-tag-base", tag_base), U32("dp", dp), U32("tp", tp),
      U32("sp", sp), U32("pp", pp), U32("ep", ep), U32("dtype-bytes", dtype_bytes), INT("tpsp", tpsp),
      INT("weight-sharded", weight_sharded), INT("mixed-precision", mixed_precision),
      INT("activation-recompute", activation_recompute), INT("stage-compat", stage_compat)};
  if (strcmp(name, "model-type") == 0) {
    c->model_type = value;
    return;
  }
  unsigned long long v = strtoull(value, NULL, 10);
  if (strcmp(name, "micro-batch") == 0) {
    c->micro_batch = value[0] == '-' ? -1 : (int64_t)v;
    return;
  }
  if (strcmp(name, "schedule") == 0) {
    c->schedule = (chakra_synth_schedule)(v % 3);
    return;
  }
  if (strcmp(name, "order") == 0) {
    c->order = (chakra_synth_order)(v % 2);
    return;
  }
  if (strcmp(name, "phase") == 0) { /* out of the enum's range too: refused */
    c->phase = (chakra_synth_phase)(int)v;
    return;
  }
  for (size_t i = 0; i < sizeof nums / sizeof *nums; i++) {
    if (strcmp(name, nums[i].name)) continue;
    char *at = (char *)c + nums[i].offset;
    if (nums[i].width == sizeof(uint64_t)) *(uint64_t *)at = v;
    else if (nums[i].width == sizeof(uint32_t)) *(uint32_t *)at = (uint32_t)v;
    else *(int *)at = (int)(v & 1);
  }
}

static void parse(chakra_synth_config *c, char *text) {
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    while (*line == '-' || isspace((unsigned char)*line)) line++;
    char *sp = strpbrk(line, " =\t");
    if (!sp) continue;
    *sp = 0;
    char *value = sp + 1;
    while (isspace((unsigned char)*value)) value++;
    value[strcspn(value, " \t\r")] = 0;
    set_option(c, line, value);
  }
}

static void expect_one_line_naming_an_option(const chakra_error *err, const char *what) {
  if (err->code == CHAKRA_ENOMEM) return; /* the machine's limit, not the option's */
  if (err->code != CHAKRA_EINVAL) violated(what, "refused with a code other than CHAKRA_EINVAL");
  if (!err->msg[0] || strchr(err->msg, '\n')) violated(what, "the message is empty or not one line");
  if (!strstr(err->msg, "--")) violated(what, err->msg); /* names no option */
  /* The internal forms ("template: mb0.in_emb.dw@0: ...", "template row
   * mha.qkv: size expression: ...") start so; a value echoed may hold the word. */
  if (!strncmp(err->msg, "template", 8) || !strncmp(err->msg, "size expression", 15)) violated(what, err->msg);
}

static int is_moe(const chakra_synth_config *c) { return c->model_type && strcmp(c->model_type, "moe") == 0; }

/* The ranks of an accepted configuration: ep multiplies them for moe, and
 * always in STAGE's files (--stage-compat on the other models). */
static uint64_t ranks_of(const chakra_synth_config *c) {
  return (uint64_t)c->dp * c->tp * c->sp * c->pp * (is_moe(c) || c->stage_compat ? c->ep : 1);
}

/* Block copies per stage and ranks of an accepted configuration. */
static int small(const chakra_synth_config *c) {
  uint64_t mb = c->micro_batch < 0 ? c->batch : (uint64_t)c->micro_batch;
  uint64_t copies = c->num_stacks * (c->batch / mb) * (is_moe(c) ? c->experts / c->ep + 1 : 1);
  return copies <= 64 && ranks_of(c) <= 4096;
}

static void expect_sane_rank(const char *path) {
  chakra_graph *g;
  chakra_error err;
  if (chakra_graph_load(&g, path, NULL, &err)) violated("a rank synth wrote does not load", err.msg);
  for (size_t i = 0; i < g->n; i++) {
    const chakra_gnode *n = &g->nodes[i];
    if (n->size > (uint64_t)INT64_MAX) violated("a size wrapped", path);
    if ((n->present & CHAKRA_HAS_COMM_TAG) && n->comm_tag < 0) violated("a comm_tag wrapped", path);
  }
  chakra_graph_free(g);
}

static void write_two_ranks(chakra_synth_config *c) {
  uint64_t ranks = ranks_of(c);
  uint32_t list[2] = {0, (uint32_t)(ranks - 1)};
  c->ranks = list;
  c->n_ranks = ranks > 1 ? 2 : 1;
  const char *prefix = fuzz_out("s");
  chakra_error err = {0};
  if (chakra_synth_write(c, prefix, NULL, &err)) {
    if (err.code == CHAKRA_ENOMEM) return;
    expect_one_line_naming_an_option(&err, "chakra_synth_write refused what chakra_synth_check accepted");
    if (!strstr(err.msg, "--seed") && !strstr(err.msg, "--stage-tag-base")) violated("chakra_synth_write refused what chakra_synth_check accepted", err.msg);
    return;
  }
  char path[700];
  for (size_t k = 0; k < c->n_ranks; k++) {
    if (snprintf(path, sizeof path, "%s.%u.et", prefix, list[k]) >= (int)sizeof path) abort();
    expect_sane_rank(path);
    unlink(path);
  }
  if (snprintf(path, sizeof path, "%s.json", prefix) >= (int)sizeof path) abort();
  unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096) return 0;
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = 0;
  chakra_synth_config c;
  chakra_synth_config_default(&c);
  c.num_stacks = 2, c.dmodel = 64, c.dff = 128, c.head = 8, c.kvhead = 8, c.seq = 32, c.dvocal = 64, c.batch = 4;
  c.threads = 1; /* the files are the same on any number */
  parse(&c, text);
  chakra_error err = {0};
  if (chakra_synth_check(&c, &err)) expect_one_line_naming_an_option(&err, "chakra_synth_check");
  else if (small(&c)) write_two_ranks(&c);
  free(text);
  return 0;
}
