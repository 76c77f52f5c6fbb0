/* fuzz_collsynth.c - libFuzzer target for chakra coll synth: topologies and
 * sizes (docs/coll.md, "coll synth").
 *
 * The input is one line of options, then the topology:
 *
 *   coll=allreduce size=1048576 chunks=3 seed=7 reduce=50 bw=50 lat=500 mem=268435456
 *   mesh:4x4@50,500                      (one line: an inline topology)
 *   npus 4\n0 <-> 1 50 500\n...          (anything else: a link-list file)
 *
 * Unknown or missing options keep their defaults (allgather, 1 MiB, one
 * chunk, seed 0, reductions at 50 GB/s, 50 GB/s, 500 ns, 256 MiB). The
 * memory limit (mem) is always given, so the cost estimate decides what may
 * run; syntheses of more than a few thousand messages are skipped to keep
 * each run short. Properties: a refusal is one non-empty line; an accepted
 * synthesis has chunk bytes = size / chunks rounded down, exactly
 * n x (n - 1) x C messages per all-gather phase (every chunk reaches every
 * other NPU once), ETs that coll check calls sound, and an MSCCL-IR XML
 * that from-msccl turns back into the same nodes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chakra/coll.h"
#include "chakra/graph.h"
#include "chakra/topo.h"
#include "fuzz_common.h"

#define MAX_MESSAGES 4000

static void violated(const char *what, const char *detail) {
  fprintf(stderr, "fuzz property violated: %s (%s)\n", what, detail);
  abort();
}

static void ignore(void *ctx, const chakra_problem *p) { (void)ctx, (void)p; }

/* CHAKRA_FUZZ_VERBOSE=1 says what each input did (to check that seeds
 * reach the synthesis). */
static void tell(const char *what, const char *detail) {
  if (getenv("CHAKRA_FUZZ_VERBOSE")) fprintf(stderr, "fuzz_collsynth: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
}

/* key=value words of the first line into o (strings point into line). */
static void parse_options(char *line, chakra_coll_synth_options *o) {
  for (char *w = strtok(line, " \t"); w; w = strtok(NULL, " \t")) {
    char *eq = strchr(w, '=');
    if (!eq) continue;
    *eq = 0;
    const char *k = w, *v = eq + 1;
    if (strcmp(k, "coll") == 0) o->coll = (chakra_coll_type)chakra_coll_type_parse(v);
    else if (strcmp(k, "size") == 0) o->size = strtoull(v, NULL, 0);
    else if (strcmp(k, "chunks") == 0) o->chunks_per_npu = (uint32_t)strtoul(v, NULL, 0);
    else if (strcmp(k, "seed") == 0) o->seed = strtoull(v, NULL, 0);
    else if (strcmp(k, "reduce") == 0) o->reduce_bw = strtod(v, NULL);
    else if (strcmp(k, "bw") == 0) o->bandwidth_gbps = strtod(v, NULL);
    else if (strcmp(k, "lat") == 0) o->latency_ns = strtod(v, NULL);
    else if (strcmp(k, "mem") == 0) o->max_memory = strtoull(v, NULL, 0);
  }
}

/* Whether the synthesis is small enough to run here. */
static int small_enough(const chakra_coll_synth_options *o) {
  chakra_topo *t;
  chakra_error err;
  if (chakra_topo_open(&t, o->topology, o->bandwidth_gbps > 0 ? o->bandwidth_gbps : 50,
                       o->latency_ns >= 0 ? o->latency_ns : 500, &err))
    return 1; /* synth refuses it too: that refusal is checked */
  double n = chakra_topo_npus(t), c = o->chunks_per_npu ? o->chunks_per_npu : 1;
  chakra_topo_free(t);
  return n * (n - 1) * c * 2 <= MAX_MESSAGES;
}

static char *rank_path(const char *prefix, uint32_t r) {
  size_t len = strlen(prefix) + 24;
  char *p = malloc(len);
  if (p) snprintf(p, len, "%s.%u.et", prefix, r);
  return p;
}

/* Rank r of a and of b hold the same nodes (ids, types, sizes, peers,
 * tags, durations, dependencies); the metadata may differ. */
static void same_nodes(const char *a, const char *b) {
  chakra_graph *x, *y;
  chakra_error err;
  if (chakra_graph_load(&x, a, NULL, &err)) violated("a synthesised rank does not load", err.msg);
  if (chakra_graph_load(&y, b, NULL, &err)) violated("a rank read back from the XML does not load", err.msg);
  int same = x->n == y->n && x->dep_off[x->n] == y->dep_off[y->n];
  for (size_t i = 0; same && i < x->n; i++) {
    const chakra_gnode *p = &x->nodes[i], *q = &y->nodes[i];
    same = p->id == q->id && p->type == q->type && p->size == q->size && p->comm_src == q->comm_src &&
           p->comm_dst == q->comm_dst && p->comm_tag == q->comm_tag && p->duration_micros == q->duration_micros &&
           x->dep_off[i + 1] == y->dep_off[i + 1];
  }
  for (uint32_t k = 0; same && k < x->dep_off[x->n]; k++) same = x->deps[k] == y->deps[k];
  if (!same) violated("the XML read back by from-msccl gives other nodes than the ETs", a);
  chakra_graph_free(x);
  chakra_graph_free(y);
}

static void check_accepted(const chakra_coll_synth_options *o, const chakra_coll_synth_result *r,
                           const char *prefix, const char *xml) {
  uint64_t n = r->npus, C = o->chunks_per_npu ? o->chunks_per_npu : 1;
  uint64_t in = o->coll == CHAKRA_COLL_ALLGATHER ? C : n * C;
  uint64_t phases = o->coll == CHAKRA_COLL_ALLREDUCE ? 2 : 1;
  char detail[160];
  snprintf(detail, sizeof detail, "%llu NPUs, %llu chunks per NPU, size %llu: %llu-byte chunks, %llu messages",
           (unsigned long long)n, (unsigned long long)C, (unsigned long long)o->size,
           (unsigned long long)r->chunk_bytes, (unsigned long long)r->messages);
  if (r->chunk_bytes != o->size / in || r->chunk_bytes == 0) violated("chunk bytes other than size / chunks", detail);
  if (r->messages != n * (n - 1) * C * phases) violated("a chunk that does not reach every NPU once", detail);
  char **paths = calloc(n, sizeof *paths);
  for (uint32_t k = 0; paths && k < n; k++)
    if (!(paths[k] = rank_path(prefix, k))) violated("out of memory in the target", detail);
  uint64_t problems = 0;
  chakra_error err;
  if (!paths || chakra_coll_check(paths, (uint32_t)n, ignore, NULL, &problems, &err) || problems)
    violated("coll check does not call the synthesised ETs sound", detail);
  const char *back = fuzz_out("b");
  uint64_t moved = r->chunk_bytes * in;
  chakra_coll_msccl_options mo = {.size = moved, .reduce_bw = o->reduce_bw, .threads = 1};
  if (chakra_coll_from_msccl(xml, back, &mo, &err)) violated("from-msccl refuses the synthesised XML", err.msg);
  for (uint32_t k = 0; k < n; k++) {
    char *b = rank_path(back, k);
    same_nodes(paths[k], b);
    unlink(paths[k]);
    unlink(b);
    free(b);
    free(paths[k]);
  }
  free(paths);
  unlink(xml);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *nl = memchr(data, '\n', size);
  if (!nl || memchr(data, 0, (size_t)(nl - data))) return 0;
  char *line = malloc((size_t)(nl - data) + 1), spec[256];
  if (!line) return 0;
  memcpy(line, data, (size_t)(nl - data));
  line[nl - data] = 0;
  chakra_coll_synth_options o = {.coll = CHAKRA_COLL_ALLGATHER, .size = 1 << 20, .chunks_per_npu = 1,
                                 .reduce_bw = 50, .bandwidth_gbps = 50, .latency_ns = 500,
                                 .max_memory = 256u << 20, .threads = 1};
  parse_options(line, &o);
  free(line);
  const uint8_t *rest = nl + 1;
  size_t left = size - (size_t)(rest - data);
  char path[64];
  int fd = -1;
  const uint8_t *end = memchr(rest, '\n', left);
  size_t one = end ? (size_t)(end - rest) : left;
  if (one < sizeof spec && (!end || (size_t)(end - rest) + 1 == left) && !memchr(rest, 0, one) &&
      memchr(rest, ':', one)) {
    memcpy(spec, rest, one); /* one line with a colon: inline */
    spec[one] = 0;
    o.topology = spec;
  } else {
    fd = fuzz_input_file(rest, left, path, sizeof path);
    o.topology = path;
  }
  const char *prefix = fuzz_out("s"), *xml = fuzz_out("s.xml");
  o.xml_path = xml;
  chakra_coll_synth_result r;
  chakra_error err = {0};
  if (chakra_coll_synth_check(&o, &err) == 0 && small_enough(&o)) {
    if (chakra_coll_synth(prefix, &o, &r, &err) == 0) {
      check_accepted(&o, &r, prefix, xml);
      tell("synthesised, checked, read back", o.topology);
    } else {
      if (!err.msg[0] || strchr(err.msg, '\n')) violated("a refusal that is not one line", err.msg);
      tell("refused", err.msg);
    }
  } else {
    if (err.msg[0] && strchr(err.msg, '\n')) violated("a refusal that is not one line", err.msg);
    tell(err.msg[0] ? "refused before synthesis" : "skipped (too large)", err.msg);
  }
  if (fd >= 0) close(fd);
  return 0;
}
