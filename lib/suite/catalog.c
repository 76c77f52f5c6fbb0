/* catalog.c - the suite versions: each a fixed table of workloads with
 * their exact generation parameters and the SHA-256 of their files. A
 * changed byte of any workload is a new version (docs/suite.md), so the
 * tables only grow by new versions; the pins are what `chakra suite make`
 * holds its output to. */
#include "chakra/suite.h"

#include <stdio.h>
#include <string.h>

#include "chakra/coll.h"
#include "chakra/sim.h"
#include "chakra/synth.h"

#define TRAIN CHAKRA_SYNTH_PHASE_TRAIN
#define PREFILL CHAKRA_SYNTH_PHASE_PREFILL
#define DECODE CHAKRA_SYNTH_PHASE_DECODE

/* A transformer: model, phase, degrees, then the model's dimensions. */
/* dims last: it is a list of designated initializers (GPT3 below) */
#define LLM_IN(ord, n, c, w, m, ph, dp_, tp_, pp_, ep_, b, mb, sha, ...)                                            \
  {.name = n, .cls = c, .what = w, .gen = CHAKRA_SUITE_SYNTH, .ranks = (dp_) * (tp_) * (pp_) * (ep_), .model = m, \
   .phase = ph, .dp = dp_, .tp = tp_, .pp = pp_, .ep = ep_, __VA_ARGS__, .batch = b, .micro_batch = mb,           \
   .sha256 = sha, .rank_order = ord}
/* STAGE's rank order (dp fastest) */
#define LLM(n, c, w, m, ph, dp_, tp_, pp_, ep_, dims, b, mb, sha) \
  LLM_IN(CHAKRA_SYNTH_RANKS_DP_FIRST, n, c, w, m, ph, dp_, tp_, pp_, ep_, b, mb, sha, dims)
/* GPT-3 175B (Brown et al. 2020): 96 layers, d 12288, 96 heads, 2048 tokens;
 * the vocabulary rounded up to 51200 so that tp divides it, as Megatron pads it. */
#define GPT3 .layers = 96, .dmodel = 12288, .dff = 49152, .head = 96, .kvhead = 96, .seq = 2048, .vocab = 51200
/* Llama-2-70B: 80 layers, d 8192, FFN 28672, 64 heads, 8 KV heads, 4096 tokens. */
#define LLAMA70 .layers = 80, .dmodel = 8192, .dff = 28672, .head = 64, .kvhead = 8, .seq = 4096, .vocab = 32000
/* Mixtral-8x7B: 32 layers, d 4096, expert FFN 14336, 32 heads, 8 KV heads, 8 experts, top-2. */
#define MIXTRAL                                                                                              \
  .layers = 32, .dmodel = 4096, .dff = 14336, .head = 32, .kvhead = 8, .seq = 4096, .vocab = 32000, .experts = 8, \
  .kexperts = 2
#define MICRO(n, c, r, s, sha)                                                                                     \
  {.name = n, .cls = "microbench", .what = "one collective on every rank", .gen = CHAKRA_SUITE_MICRO, .ranks = r, \
   .coll = c, .size = s, .sha256 = sha}
#define ALGO(n, w, c, a, r, s, sha)                                                                              \
  {.name = n, .cls = "collalgo", .what = w, .gen = CHAKRA_SUITE_COLL_GEN, .ranks = r, .coll = c, .algo = a, \
   .size = s, .sha256 = sha}
#define TACOS(n, w, c, topo, r, s, sha)                                                                     \
  {.name = n, .cls = "collalgo", .what = w, .gen = CHAKRA_SUITE_COLL_SYNTH, .ranks = r, .coll = c, .size = s, \
   .topology = topo, .sha256 = sha}
#define DLRM(n, r, sha)                                                                                            \
  {.name = n, .cls = "recommendation", .what = "DLRM step: 26 tables of 1M rows, embedding all-to-all, MLP all-reduce", \
   .gen = CHAKRA_SUITE_DLRM, .ranks = r, .batch = 65536, .tables = 26, .rows = 1000000, .emb_dim = 128, .sha256 = sha}

#define AR CHAKRA_COLL_ALLREDUCE
#define AG CHAKRA_COLL_ALLGATHER
#define RS CHAKRA_COLL_REDUCESCATTER
#define A2A CHAKRA_COLL_ALLTOALL
#define MiB (1024u * 1024u)

/* The transformer workloads of versions 1.0 and 1.1: the same parameters,
 * ranks numbered dp first in 1.0 (STAGE's: a tp group of 8 spans nodes)
 * and tp first in 1.1 (Megatron's: a tp group is one node), so two pins:
 * X(name, class, what, model, phase, dp, tp, pp, ep, batch, micro-batch,
 *   sha256 in 1.0, sha256 in 1.1, the model's dimensions). */
#define V1_LLMS(X)                                                                                                    \
  /* dense pre-training, 1F1B */                                                                                      \
  X("gpt3-175b-n512", "dense", "GPT-3 175B training, dp 4 tp 8 pp 16, 16 micro-batches",                              \
    "gpt", TRAIN, 4, 8, 16, 1, 64, 4,                                                                                 \
    "b604a361bf258b18d5654d7c9c94a33613aa1fefac94e6d67f7e6c18f7257e92",                                               \
    "2f1b414c00a4ef3069c888cbbc6f2f28d2980e31793602089b48b46f51cedeb8", GPT3)                                         \
  X("gpt3-175b-n4096", "dense", "GPT-3 175B training, dp 32 tp 8 pp 16, 16 micro-batches",                            \
    "gpt", TRAIN, 32, 8, 16, 1, 512, 32,                                                                              \
    "2ddcbdb309bbdb91945b80aabac9036678d95fdc9abd16534b1bacd071b8cd6c",                                               \
    "47f61197d0f0ddd4a6a3131a6d108329484ad8125bf8ef5021663ddc4a6a00a8", GPT3)                                         \
  X("gpt3-175b-n32768", "dense", "GPT-3 175B training, dp 256 tp 8 pp 16, 16 micro-batches",                          \
    "gpt", TRAIN, 256, 8, 16, 1, 4096, 256,                                                                           \
    "4b8d8f4e7be9a1479f73bbebd8f41ac7f53759c89dbcf497d8e2512aec3eb025",                                               \
    "c6456c135c031252ae35971a08a87ce772d6773e1b8c01f57470ef42a1898b4c", GPT3)                                         \
  X("llama70b-n512", "dense", "Llama-70B training, dp 16 tp 8 pp 4, 8 micro-batches",                                 \
    "llama", TRAIN, 16, 8, 4, 1, 128, 16,                                                                             \
    "2cadadaaa24b7b886893dc72d141ea93fb20dcd4c861de653f2e7c411ba05560",                                               \
    "16c616c1f80e389024108cff086ae935e75addc388cd983711ab9026b12060d0", LLAMA70)                                      \
  X("llama70b-n4096", "dense", "Llama-70B training, dp 128 tp 8 pp 4, 8 micro-batches",                               \
    "llama", TRAIN, 128, 8, 4, 1, 1024, 128,                                                                          \
    "4f031eedbecfc61def82b15d01dcab613312585b7f20482195e9cfa8311e2711",                                               \
    "fcaf93533f554e8588486b11df888315b96c4f7df9cd723260b4bd9789acca23", LLAMA70)                                      \
  X("llama70b-n32768", "dense", "Llama-70B training, dp 1024 tp 8 pp 4, 8 micro-batches",                             \
    "llama", TRAIN, 1024, 8, 4, 1, 8192, 1024,                                                                        \
    "a2ba65bb6cf2c5d80504d5a8ec2fa21a9963448cd9dd871c18b94a70d2308450",                                               \
    "e02c24c2d9eca1b6202ca2092e1e0f07bc0727dbdfc2d5fa3448cde649e6778a", LLAMA70)                                      \
  /* mixture of experts: experts over ep, attention over tp */                                                        \
  X("mixtral-8x7b-n512", "moe", "Mixtral-8x7B training, dp 8 tp 2 pp 4 ep 8, 8 micro-batches",                        \
    "moe", TRAIN, 8, 2, 4, 8, 64, 8,                                                                                  \
    "c9262377581efcbfa3593f1643bc3af0efc7c60c5aa9b6bb992884058a6e691b",                                               \
    "ab5c251f77c4652e8b949427c1da8fdd61194cc74f08a019779344bf825056e7", MIXTRAL)                                      \
  /* inference on one node under tensor parallelism */                                                                \
  X("llama70b-prefill-tp8", "inference", "Llama-70B prefill of 8 prompts of 4096 tokens, tp 8",                       \
    "llama", PREFILL, 1, 8, 1, 1, 8, -1,                                                                              \
    "6a3db4cdee6c6f544260d6c4e407d6799212467192bdb316fa9835e9cb01205f",                                               \
    "7bf0bfd0d4fc01068de8f4ec861cb036ea442d2bb6deaadcf7fe3d87418b7de1", LLAMA70)                                      \
  X("llama70b-decode-tp8", "inference", "Llama-70B decode step, 64 sequences, KV cache of 4096, tp 8",                \
    "llama", DECODE, 1, 8, 1, 1, 64, -1,                                                                              \
    "0610bfb2e016734273f7cdaa07e7b6da691b45b7f6ebfdb7844f060d3ee929c7",                                               \
    "dc37ccb0af791082a89a208ff7df20c23a58fb7a0afbc415193c51173ae62a17", LLAMA70)                                      \
  X("gpt3-175b-prefill-tp8", "inference", "GPT-3 175B prefill of 8 prompts of 2048 tokens, tp 8",                     \
    "gpt", PREFILL, 1, 8, 1, 1, 8, -1,                                                                                \
    "6d445128e06c61ed955e2b9731445dd87e9200812ddab3f0beb781dd7c6d4ae5",                                               \
    "47c0fb3b8bcd87af382d41c2a9e85577ef862b1c2b50129b40014454c9f1e87a", GPT3)                                         \
  X("gpt3-175b-decode-tp8", "inference", "GPT-3 175B decode step, 64 sequences, KV cache of 2048, tp 8",              \
    "gpt", DECODE, 1, 8, 1, 1, 64, -1,                                                                                \
    "724d5583ac48547d94c1c9b73e4ccc8d5154556598810de7bd8e1addc930a73c",                                               \
    "b537f11313e05546037d88a0b55e13145acf8aed21cc1b0ee7660a872948d087", GPT3)

#define V1_0(n, c, w, m, ph, dp_, tp_, pp_, ep_, b, mb, s10, s11, ...) \
  LLM_IN(CHAKRA_SYNTH_RANKS_DP_FIRST, n, c, w, m, ph, dp_, tp_, pp_, ep_, b, mb, s10, __VA_ARGS__),
#define V1_1(n, c, w, m, ph, dp_, tp_, pp_, ep_, b, mb, s10, s11, ...) \
  LLM_IN(CHAKRA_SYNTH_RANKS_TP_FIRST, n, c, w, m, ph, dp_, tp_, pp_, ep_, b, mb, s11, __VA_ARGS__),

static const chakra_suite_workload v1[] = {V1_LLMS(V1_0)
#include "rest_v1.inc"
};

static const chakra_suite_workload v1_1[] = {V1_LLMS(V1_1)
#include "rest_v1.inc"
};

/* The same classes at a few ranks each: what the tests run. */
#define GPT_TINY .layers = 4, .dmodel = 512, .dff = 2048, .head = 8, .kvhead = 8, .seq = 256, .vocab = 1024
#define LLAMA_TINY .layers = 2, .dmodel = 512, .dff = 1024, .head = 8, .kvhead = 8, .seq = 256, .vocab = 1024
#define MOE_TINY                                                                                         \
  .layers = 2, .dmodel = 256, .dff = 512, .head = 4, .kvhead = 2, .seq = 128, .vocab = 1024, .experts = 4, \
  .kexperts = 2
static const chakra_suite_workload tiny[] = {
    LLM("gpt-tiny-n8", "dense", "a 4-layer GPT, dp 2 tp 2 pp 2, 4 micro-batches", "gpt", TRAIN, 2, 2, 2, 1, GPT_TINY,
        8, 2, "86f959e590c859a613d3f68714abe1678f8c8353424f416fc0a471308f7ff401"),
    LLM("moe-tiny-n8", "moe", "a 2-layer MoE, tp 2 pp 2 ep 2, 4 micro-batches", "moe", TRAIN, 1, 2, 2, 2, MOE_TINY, 4,
        1, "36f642016c5263552293a37a3d61d8a33a2bdf49163e13b8c184de0245bf9691"),
    LLM("llama-tiny-prefill-tp8", "inference", "a 2-layer llama prefill, tp 8", "llama", PREFILL, 1, 8, 1, 1,
        LLAMA_TINY, 4, -1, "3f051e26b5423559b4e5fc02bb46c7a0a35b0b4af549368aab5ffd0a1cb5f76e"),
    LLM("llama-tiny-decode-tp8", "inference", "a 2-layer llama decode step, tp 8", "llama", DECODE, 1, 8, 1, 1,
        LLAMA_TINY, 16, -1, "d4248f21ee820af2dd71a9f84917f29f076dd566c12af280f931e6bb767e4834"),
    {.name = "dlrm-tiny-n8", .cls = "recommendation", .what = "DLRM step: 8 tables of 10000 rows",
     .gen = CHAKRA_SUITE_DLRM, .ranks = 8, .batch = 1024, .tables = 8, .rows = 10000, .emb_dim = 128, .sha256 = "909df578fb798d5b5b2576c108d691e3ccd6d2d9f199812714bf6a45e697f82d"},
    MICRO("ar-1m-n8", AR, 8, MiB, "da2b3422619e117dcdc73c152e9ca0ace795ed1969e352b7ce4b515d21a67ef9"),
    MICRO("a2a-64k-n16", A2A, 16, 65536u, "e74afed74e3c6ce1aa0f970fa3352dd670570116e407ed24f57fd03dba1c93c4"),
    ALGO("ar-ring-n8", "ring all-reduce of 1 MiB as point-to-point steps", AR, CHAKRA_ALGO_RING, 8, MiB, "28f13aa9428955579ebe185d8d2e3759dd53256edc9981c6a8b8b3099d8c7e69"),
    TACOS("ag-tacos-mesh2x4", "all-gather of 64 KiB per rank synthesised for a 2x4 mesh", AG, "mesh:2x4", 8, 65536u,
          "9bc26764eb42e5366242d74ef1c980b9b968a26e07c737894036ba01fb4a4d51"),
};

static const chakra_suite_version versions[] = {
    {"1.1", "the suite: dense LLM training to 32,768 GPUs (tp groups in a node), MoE, inference, DLRM, collectives and algorithms", v1_1,
     sizeof v1_1 / sizeof *v1_1, CHAKRA_NET_UNAWARE},
    {"1.0", "the suite: dense LLM training to 32,768 GPUs, MoE, inference, DLRM, collectives and algorithms", v1,
     sizeof v1 / sizeof *v1, CHAKRA_NET_AWARE},
    {"tiny-1.0", "every class at 8 or 16 ranks, for tests and trying the tools", tiny, sizeof tiny / sizeof *tiny,
     CHAKRA_NET_AWARE},
};

const chakra_suite_version *chakra_suite_versions(size_t *n) {
  *n = sizeof versions / sizeof *versions;
  return versions;
}

const chakra_suite_version *chakra_suite_version_find(const char *name) {
  if (!name) return &versions[0];
  for (size_t i = 0; i < sizeof versions / sizeof *versions; i++)
    if (strcmp(versions[i].name, name) == 0) return &versions[i];
  return NULL;
}

long chakra_suite_workload_find(const chakra_suite_version *v, const char *name) {
  for (size_t i = 0; i < v->n; i++)
    if (strcmp(v->workloads[i].name, name) == 0) return (long)i;
  return -1;
}

int chakra_suite_has_class(const chakra_suite_version *v, const char *cls) {
  for (size_t i = 0; i < v->n; i++)
    if (strcmp(v->workloads[i].cls, cls) == 0) return 1;
  return 0;
}

static const char *phase_word(int phase) {
  return phase == PREFILL ? "prefill" : phase == DECODE ? "decode" : "train";
}

static void synth_command(const chakra_suite_workload *w, char *out, size_t size) {
  int n = snprintf(out, size,
                   "chakra synth --phase %s --model-type %s --num-stacks %llu --dmodel %llu --dff %llu --head %llu "
                   "--kvhead %llu --seq %llu --dvocal %llu --batch %llu --micro-batch %lld --dp %u --tp %u --pp %u",
                   phase_word(w->phase), w->model, (unsigned long long)w->layers, (unsigned long long)w->dmodel,
                   (unsigned long long)w->dff, (unsigned long long)w->head, (unsigned long long)w->kvhead,
                   (unsigned long long)w->seq, (unsigned long long)w->vocab, (unsigned long long)w->batch,
                   (long long)(int64_t)w->micro_batch, w->dp, w->tp, w->pp);
  if (n < 0 || (size_t)n >= size) return;
  if (w->experts)
    n += snprintf(out + n, size - (size_t)n, " --ep %u --experts %llu --kexperts %llu", w->ep,
                  (unsigned long long)w->experts, (unsigned long long)w->kexperts);
  if (n >= 0 && (size_t)n < size)
    snprintf(out + n, size - (size_t)n, " --schedule 1f1b%s --shared -o %s",
             w->rank_order == CHAKRA_SYNTH_RANKS_TP_FIRST ? " --rank-order tp-first" : "", w->name);
}

void chakra_suite_command(const chakra_suite_workload *w, char *out, size_t size) {
  static const char *const micro[] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"};
  switch (w->gen) {
  case CHAKRA_SUITE_SYNTH:
    synth_command(w, out, size);
    break;
  case CHAKRA_SUITE_DLRM:
    snprintf(out, size, "chakra gen dlrm --npus %u --batch %llu --tables %llu --rows %llu --emb-dim %llu -o %s",
             w->ranks, (unsigned long long)w->batch, (unsigned long long)w->tables, (unsigned long long)w->rows,
             (unsigned long long)w->emb_dim, w->name);
    break;
  case CHAKRA_SUITE_MICRO:
    snprintf(out, size, "chakra gen microbench --coll %s --npus %u --size %llu -o %s (in the shared form: rank 0 as every rank)",
             micro[w->coll], w->ranks, (unsigned long long)w->size, w->name);
    break;
  case CHAKRA_SUITE_COLL_GEN:
    snprintf(out, size, "chakra coll gen --coll %s --algo %s --ranks %u --size %llu -o %s",
             chakra_coll_type_name((chakra_coll_type)w->coll), chakra_coll_algo_name((chakra_coll_algo)w->algo),
             w->ranks, (unsigned long long)w->size, w->name);
    break;
  case CHAKRA_SUITE_COLL_SYNTH:
    snprintf(out, size, "chakra coll synth --coll %s --topology %s --size %llu --seed 0 -o %s",
             chakra_coll_type_name((chakra_coll_type)w->coll), w->topology, (unsigned long long)w->size, w->name);
    break;
  }
}
