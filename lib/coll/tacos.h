/* tacos.h - topology-aware collective synthesis, TACOS style (private to
 * lib/coll; the public entry points are chakra_coll_synth_*() in
 * include/chakra/coll.h, documented in docs/coll.md).
 *
 * The network is a directed link graph: NPUs 0..npus-1, then switches.
 * Chunks move over channels: an NPU-to-NPU link, or NPU -> switch -> NPU
 * (the switch relays store-and-forward; it never keeps or copies a chunk,
 * so every channel is one message between two NPUs). A channel carries one
 * chunk at a time, each of its links for latency + bytes / bandwidth ns
 * (whole ns, floored as the simulator's links do).
 *
 * tacos_allgather() is the greedy link-chunk matching over the
 * time-expanded network (collectives.md 5.2), event driven: at every time
 * a chunk lands or a link frees, each destination with a free incoming
 * channel gets, per channel, one chunk the channel's source holds and the
 * destination neither holds nor already has on the way. Chunk sets are
 * bitsets, and each channel's candidates are counted as they change, so a
 * visit costs what changed since the last, never a scan of every
 * (chunk, destination) pair; the random draws are those of the plain
 * scan, so the schedule is too. */
#ifndef CHAKRA_COLL_TACOS_H
#define CHAKRA_COLL_TACOS_H

#include <stddef.h>
#include <stdint.h>

#include "chakra/error.h"

typedef struct tacos_link {
  uint32_t src, dst;    /* devices: NPUs first, then switches */
  double bytes_per_ns;  /* > 0 */
  double latency_ns;    /* >= 0 */
} tacos_link;

typedef struct tacos_graph {
  uint32_t npus, devices, n_links;
  const tacos_link *links;
} tacos_graph;

typedef struct tacos_chan {
  uint32_t src, dst;    /* NPUs */
  uint32_t link[2];     /* the physical links in path order */
  uint64_t tau[2];      /* ns per chunk on each */
  uint64_t total;       /* start to arrival */
  uint16_t lane;        /* index among channels of the same (src, dst) */
  uint8_t n_links;      /* 1, or 2 through a switch */
} tacos_chan;

typedef struct tacos_net {
  uint32_t npus, n_links, n_chans;
  tacos_chan *chans;    /* ordered by (src, dst, lane) */
} tacos_net;

/* Channels of g for chunks of chunk_bytes. Errors: a switch-to-switch link,
 * a link that touches no NPU, a bad bandwidth. Free with tacos_net_free. */
int tacos_net_build(tacos_net *net, const tacos_graph *g, uint64_t chunk_bytes, chakra_error *err);
void tacos_net_free(tacos_net *net);

typedef struct tacos_xfer {
  uint32_t chunk, chan; /* chan indexes net->chans (the original direction) */
  uint64_t start;
} tacos_xfer;

typedef struct tacos_sched {
  tacos_xfer *x;        /* in booking order: start times never decrease */
  size_t n, cap;
  uint64_t time_ns;     /* the last arrival (+ forward_delay) */
} tacos_sched;

void tacos_sched_free(tacos_sched *s);

/* What a matching costs, estimated from the graph's shape alone
 * (docs/coll.md "Cost"): per NPU the channels into and out of it and the
 * links its incoming channels end on. */
typedef struct tacos_shape {
  uint32_t npus;
  uint32_t *in, *out, *last; /* per NPU */
} tacos_shape;

typedef struct tacos_cost {
  double steps; /* memory reads and draws, about; what the limit is on */
  int lazy;     /* cheaper to count candidates at each visit than to keep them */
} tacos_cost;

/* The shape of g's channels as a run sees them (transposed: on the
 * reversed links), from the links alone, without building the channels. */
int tacos_shape_of(tacos_shape *sh, const tacos_graph *g, int transpose);
void tacos_shape_free(tacos_shape *sh);
tacos_cost tacos_cost_of(const tacos_shape *sh, uint32_t chunks_per_npu);

/* Bytes tacos_allgather() keeps, beyond its chunk sets, to index the
 * candidates of `chans` channels among `chunks` chunks (for estimates). */
size_t tacos_index_bytes(uint32_t npus, uint64_t chans, uint64_t chunks);

enum { TACOS_COUNT_AUTO, TACOS_COUNT_AT_VISIT, TACOS_COUNT_KEPT };

typedef struct tacos_opts {
  uint32_t chunks_per_npu; /* chunk c starts at NPU c % npus */
  uint64_t seed;
  int transpose;           /* run on the reversed links (for reduce-scatter) */
  const uint64_t *release; /* per chunk: when its source holds it; NULL = 0 */
  const uint64_t *link_free; /* per link: when it is first free; NULL = 0 */
  uint64_t forward_delay;  /* ns a received chunk waits before it may leave again
                              (a reduce-scatter run backwards: its reduction) */
  int circuit;             /* a relayed chunk holds both links from its start to its
                              arrival (its sender's next chunk waits for it) */
  int counting;            /* how candidates are counted: TACOS_COUNT_AUTO (the cheaper as
                              estimated, then kept once counting costs more), or, for
                              tests, always one way; the schedule is the same */
} tacos_opts;

/* The greedy all-gather: every chunk to every NPU. Fails (naming an NPU)
 * when some NPU cannot be reached. */
int tacos_allgather(const tacos_net *net, const tacos_opts *o, tacos_sched *out, chakra_error *err);

/* The deterministic PRNG (xoshiro256**, seeded by splitmix64). */
typedef struct tacos_rng { uint64_t s[4]; } tacos_rng;
void tacos_rng_seed(tacos_rng *r, uint64_t seed);
uint64_t tacos_rng_next(tacos_rng *r);

#endif
