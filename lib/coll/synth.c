/* synth.c - topology-aware collective synthesis: All-Gather, Reduce-Scatter
 * and All-Reduce as per-rank algorithm ETs and MSCCL-IR XML; see
 * chakra_coll_synth() in include/chakra/coll.h and docs/coll.md.
 *
 * The matcher (tacos.c) gives an All-Gather schedule: which chunk crosses
 * which channel when. A Reduce-Scatter is the All-Gather of the reversed
 * links run backwards in time (each NPU's contribution to chunk c flows up
 * the tree that spread c from its owner, reduced at every NPU it passes);
 * an All-Reduce is that Reduce-Scatter, then an All-Gather matched on the
 * links as the Reduce-Scatter leaves them (chunk c released at its owner
 * when its last reduction ends).
 *
 * The schedule becomes an MSCCL program (msccl.h): per GPU one thread
 * block per incoming and one per outgoing channel, steps in schedule
 * order, and one per chunk it reduces (its reductions in arrival order:
 * they update one buffer). A thread block runs its steps in order, so a
 * channel's sends leave in the schedule's order and each waits for the
 * one before it to arrive: on the simulator's FIFO links that is the
 * matcher's model, a channel carrying one chunk at a time for latency +
 * bytes / bandwidth (through a switch the sender's up-link is chained the
 * same way across its channels). Every other dependency is a true one (a
 * send on the receive or reduction that produced its data, a reduction on
 * its receive). Steps are made in start order, a topological order of the
 * whole program, so the collective's time is evaluated in one pass as
 * they are made: that is the estimate printed, the time of the written
 * ETs. The ETs are the program converted by from-msccl's own converter,
 * so the XML read back gives the same nodes. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chakra/coll.h"
#include "chakra/topo.h"
#include "chakra/version.h"
#include "dag.h"
#include "emit.h"
#include "msccl.h"
#include "../util/outfile.h"
#include "../util/sysmem.h"
#include "tacos.h"

#define NONE UINT32_MAX

/* Calibration of the step estimate (docs/coll.md "Cost"): what making
 * and timing one message's steps costs, and the steps a second of this
 * project's VM makes on the largest syntheses (ring, mesh, torus,
 * hypercube, fc, switch and link-list graphs measured: 1-5 x 10^8 on small
 * ones, 0.5-1.5 x 10^8 on those of gigabytes). */
#define SYNTH_STEPS_PER_MESSAGE 100.0
#define SYNTH_STEPS_PER_SECOND 1e8

/* One program step, in creation order. Sides are thread blocks: 2 x
 * channel is the sending one of the channel (at its source), 2 x channel
 * + 1 the receiving one (at its destination); 2 x channels + v x K + c
 * holds NPU v's reductions into chunk c. */
typedef struct sstep {
  uint64_t done;   /* when its last node completes */
  uint32_t side, pos, dep, chunk;
  uint32_t rprev;  /* without reductions: the previous receive of its chunk at its NPU */
  uint8_t type;    /* ST_S, ST_R, ST_RE, ST_NOP */
} sstep;

typedef struct prog {
  const tacos_net *net;
  uint32_t n, C, K;        /* NPUs, chunks per NPU, chunks */
  uint32_t S_chan;         /* 2 x channels: sides below are channel ends */
  size_t S;                /* sides */
  uint64_t chunk_bytes;
  double reduce_bw;
  sstep *st;
  size_t n_st, cap_st;
  uint32_t *side_n, *side_last; /* steps per side; its last step */
  uint32_t *hold;          /* n * K: what chunk c at v waits for: a step (NONE: nothing) */
  uint32_t *link_last;     /* per link: the last send whose first link it is */
  uint64_t messages;
  int oom;
} prog;

/* What the simulator charges for a COMP node: duration_micros x 1000, 1 ns
 * when that is 0 (collectives.md section 1). */
static uint64_t comp_sim_ns(uint64_t ns) { return ns >= 1000 ? ns / 1000 * 1000 : 1; }

static uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* Appends a step to `side`; `match` is the send a receive pairs with. */
static uint32_t add_step(prog *p, uint32_t side, int type, uint32_t dep, uint32_t chunk, uint32_t match) {
  if (p->n_st >= NONE - 1 || COLL_ROOM(p->st, p->n_st, p->cap_st)) {
    p->oom = 1;
    return NONE;
  }
  sstep *v = p->st;
  uint32_t i = (uint32_t)p->n_st++, prev = p->side_last[side];
  uint64_t ready = max64(prev == NONE ? 0 : v[prev].done, dep == NONE ? 0 : v[dep].done), done = ready;
  if (type == ST_S) done = ready + p->net->chans[side / 2].total;
  else if (type == ST_R) done = max64(ready, v[match].done);
  else if (type == ST_RE) done = ready + comp_sim_ns(coll_comp_ns(COLL_REDUCE, p->chunk_bytes, p->reduce_bw));
  v[i] = (sstep){done, side, p->side_n[side]++, dep, chunk, NONE, (uint8_t)type};
  p->side_last[side] = i;
  return i;
}

/* A send of chunk c over channel ci after dep and the receives chained
 * to it through rprev: one dependency fits a step, so the others go on
 * nops just before it. Then its receive, which is returned. */
static uint32_t add_transfer(prog *p, uint32_t ci, uint32_t c, uint32_t dep) {
  uint32_t side = 2 * ci, l0 = p->net->chans[ci].link[0], up = p->link_last[l0];
  /* An up-link to a switch is shared by the channels to every peer: its
   * sends go one at a time, in the schedule's order (the matcher holds it
   * until the chunk arrives: tacos_opts.circuit). */
  if (p->net->chans[ci].n_links == 2 && up != NONE && p->st[up].side != side) add_step(p, side, ST_NOP, up, c, NONE);
  while (dep != NONE && p->st[dep].rprev != NONE) {
    add_step(p, side, ST_NOP, dep, c, NONE);
    dep = p->st[dep].rprev;
  }
  uint32_t s = add_step(p, side, ST_S, dep, c, NONE);
  if (s == NONE) return NONE;
  p->link_last[l0] = s;
  p->messages++;
  return add_step(p, side + 1, ST_R, NONE, c, s);
}

/* All-Gather transfers in schedule order; hold[] says what a chunk's
 * source waits for (an All-Reduce's owners: the reduce-scatter's end). */
static int emit_allgather(prog *p, const tacos_sched *s) {
  for (size_t k = 0; k < s->n && !p->oom; k++) {
    const tacos_xfer *x = &s->x[k];
    const tacos_chan *ch = &p->net->chans[x->chan];
    uint32_t c = x->chunk, src_dep = p->hold[(size_t)ch->src * p->K + c];
    uint32_t r = add_transfer(p, x->chan, c, src_dep);
    if (r == NONE) break;
    p->hold[(size_t)ch->dst * p->K + c] = r;
  }
  return p->oom ? -1 : 0;
}

typedef struct rs_order { uint64_t key; uint32_t k; } rs_order;

static int rs_cmp(const void *a, const void *b) {
  const rs_order *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->k < y->k ? 1 : x->k > y->k ? -1 : 0;
}

/* Reduce-Scatter: the reversed-link All-Gather s run backwards. Transfer
 * (c, channel, start) of s moved c from the channel's destination to its
 * source; reversed it carries the partial sum of c the other way, starting
 * at time - start - total. */
static int emit_reducescatter(prog *p, const tacos_sched *s) {
  rs_order *o = malloc((s->n ? s->n : 1) * sizeof *o);
  if (!o) return -1;
  for (size_t k = 0; k < s->n; k++) {
    const tacos_xfer *x = &s->x[k];
    o[k] = (rs_order){s->time_ns - x->start - p->net->chans[x->chan].total, (uint32_t)k};
  }
  qsort(o, s->n, sizeof *o, rs_cmp);
  int reduce = p->reduce_bw > 0;
  for (size_t k = 0; k < s->n && !p->oom; k++) {
    const tacos_xfer *x = &s->x[o[k].k];
    const tacos_chan *ch = &p->net->chans[x->chan];
    uint32_t c = x->chunk;
    uint32_t *hs = &p->hold[(size_t)ch->src * p->K + c], *hd = &p->hold[(size_t)ch->dst * p->K + c];
    /* with reductions the last one stands for all (they are chained in
     * their block); without, the send waits for every receive of c */
    uint32_t r = add_transfer(p, x->chan, c, *hs);
    if (r == NONE) break;
    if (reduce) {
      r = add_step(p, p->S_chan + (uint32_t)(hd - p->hold), ST_RE, r, c, NONE);
    } else {
      p->st[r].rprev = *hd;
    }
    *hd = r;
  }
  free(o);
  return p->oom ? -1 : 0;
}

/* ---- the program as MSCCL: thread blocks, XML ---------------------------- */

/* Thread-block ids per side (NONE for an empty side), ordered per GPU by
 * (send, recv, chan) as msccl-tools orders them: reduction blocks (send
 * and recv -1) by chunk, receiving blocks (send -1) by source, then
 * sending blocks by destination. */
typedef struct layout {
  uint32_t *tb_id, *tb_first; /* per side */
  uint32_t *gpu_sides, *gpu_off; /* sides of GPU g: gpu_sides[gpu_off[g] .. gpu_off[g+1]) in tb order */
  uint32_t lanes;
} layout;

static void layout_free(layout *l) { free(l->tb_id), free(l->tb_first), free(l->gpu_sides), free(l->gpu_off); }

/* The NPU whose thread block a side is. */
static uint32_t side_gpu(const prog *p, size_t side) {
  if (side >= p->S_chan) return (uint32_t)((side - p->S_chan) / p->K);
  const tacos_chan *ch = &p->net->chans[side / 2];
  return side & 1 ? ch->dst : ch->src;
}

static int layout_build(layout *l, const prog *p) {
  const tacos_net *net = p->net;
  size_t S = p->S;
  uint32_t n = p->n;
  memset(l, 0, sizeof *l);
  l->tb_id = malloc(((size_t)S + 1) * sizeof *l->tb_id);
  l->tb_first = malloc(((size_t)S + 1) * sizeof *l->tb_first);
  l->gpu_sides = malloc(((size_t)S + 1) * sizeof *l->gpu_sides);
  l->gpu_off = calloc((size_t)n + 1, sizeof *l->gpu_off);
  uint32_t *fill = calloc((size_t)n + 1, sizeof *fill);
  if (!l->tb_id || !l->tb_first || !l->gpu_sides || !l->gpu_off || !fill) return free(fill), -1;
  for (uint32_t ci = 0; ci < net->n_chans; ci++)
    if (net->chans[ci].lane + 1u > l->lanes) l->lanes = net->chans[ci].lane + 1u;
  for (size_t side = 0; side < S; side++)
    if (p->side_n[side]) l->gpu_off[side_gpu(p, side) + 1]++;
  for (uint32_t g = 0; g < n; g++) l->gpu_off[g + 1] += l->gpu_off[g];
  for (size_t side = p->S_chan; side < S; side++) /* by (NPU, chunk) */
    if (p->side_n[side]) l->gpu_sides[l->gpu_off[side_gpu(p, side)] + fill[side_gpu(p, side)]++] = (uint32_t)side;
  /* channels are sorted by (src, dst, lane): receiving sides come out in
   * (source, lane) order per destination, sending sides in (dst, lane) */
  for (int pass = 1; pass >= 0; pass--)
    for (uint32_t ci = 0; ci < net->n_chans; ci++) {
      uint32_t side = 2 * ci + (uint32_t)pass;
      if (!p->side_n[side]) continue;
      uint32_t g = pass ? net->chans[ci].dst : net->chans[ci].src;
      l->gpu_sides[l->gpu_off[g] + fill[g]++] = side;
    }
  free(fill);
  uint32_t first = 0;
  for (size_t side = 0; side < S; side++) l->tb_id[side] = NONE;
  for (uint32_t g = 0; g < n; g++)
    for (uint32_t k = l->gpu_off[g]; k < l->gpu_off[g + 1]; k++) {
      uint32_t side = l->gpu_sides[k];
      l->tb_id[side] = k - l->gpu_off[g];
      l->tb_first[side] = first;
      first += p->side_n[side];
    }
  return 0;
}

static const char *xml_coll(chakra_coll_type t) {
  return t == CHAKRA_COLL_ALLGATHER ? "allgather" : t == CHAKRA_COLL_REDUCESCATTER ? "reduce_scatter" : "allreduce";
}

static void chunks_io(const prog *p, chakra_coll_type t, int32_t *in, int32_t *out) {
  *in = (int32_t)(t == CHAKRA_COLL_ALLGATHER ? p->C : p->K);
  *out = (int32_t)(t == CHAKRA_COLL_REDUCESCATTER ? p->C : p->K);
}

/* The program in from-msccl's arrays. */
static int to_mx(mx *x, const prog *p, const layout *l, chakra_coll_type t, chakra_error *err) {
  memset(x, 0, sizeof *x);
  x->path = "coll synth";
  x->err = err;
  x->ngpus = (int32_t)p->n;
  x->name = strdup("synth");
  x->coll = strdup(xml_coll(t));
  uint32_t n_tbs = l->gpu_off[p->n];
  x->gpus = calloc(p->n, sizeof *x->gpus);
  x->tbs = calloc(n_tbs ? n_tbs : 1, sizeof *x->tbs);
  x->steps = calloc(p->n_st ? p->n_st : 1, sizeof *x->steps);
  if (!x->name || !x->coll || !x->gpus || !x->tbs || !x->steps) return -1;
  x->n_gpus = x->cap_gpus = p->n;
  x->n_tbs = x->cap_tbs = n_tbs;
  x->n_steps = x->cap_steps = p->n_st;
  int32_t in, out;
  chunks_io(p, t, &in, &out);
  for (uint32_t g = 0; g < p->n; g++)
    x->gpus[g] = (mgpu){(int32_t)g, in, out, l->gpu_off[g], l->gpu_off[g + 1] - l->gpu_off[g]};
  for (size_t side = 0; side < p->S; side++) {
    if (l->tb_id[side] == NONE) continue;
    mtb *tb = &x->tbs[l->gpu_off[side_gpu(p, side)] + l->tb_id[side]];
    *tb = (mtb){(int32_t)l->tb_id[side], -1, -1, 0, l->tb_first[side], p->side_n[side]};
    if (side >= p->S_chan) continue;
    const tacos_chan *ch = &p->net->chans[side / 2];
    tb->chan = ch->lane;
    if (side & 1) tb->recv = (int32_t)ch->src;
    else tb->send = (int32_t)ch->dst;
  }
  for (size_t i = 0; i < p->n_st; i++) {
    const sstep *s = &p->st[i];
    mstep *m = &x->steps[l->tb_first[s->side] + s->pos];
    m->s = (int32_t)s->pos;
    m->type = s->type;
    m->cnt = s->type == ST_NOP ? 0 : 1;
    m->depid = s->dep == NONE ? -1 : (int32_t)l->tb_id[p->st[s->dep].side];
    m->deps = s->dep == NONE ? -1 : (int32_t)p->st[s->dep].pos;
  }
  return 0;
}

typedef struct xbuf {
  outfile *f;
  char *b;
  size_t n;
  int rc;
  chakra_error *err;
} xbuf;

static void xput(xbuf *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void xput(xbuf *w, const char *fmt, ...) {
  if (w->rc) return;
  if (w->n > (1u << 20) - 512) {
    w->rc = outfile_write(w->f, w->b, w->n, w->err);
    w->n = 0;
  }
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(w->b + w->n, (1u << 20) - w->n, fmt, ap);
  va_end(ap);
  if (k > 0) w->n += (size_t)k;
}

static const char *const xml_types[] = {"s", "r", "rcs", "rrs", "rrc", "rrcs", "cpy", "re", "nop"};

/* MSCCL-IR XML of the program (collectives.md section 3): chunk c of
 * owner c mod n sits at offset owner x C + c / n of the gathered (or
 * reduced) buffer. */
static int write_xml(const char *path, const prog *p, const layout *l, const mx *x, chakra_coll_type t,
                     chakra_error *err) {
  uint8_t *hasdep = calloc(p->n_st ? p->n_st : 1, 1);
  xbuf w = {.b = malloc(1u << 20), .err = err};
  if (!hasdep || !w.b) {
    free(hasdep), free(w.b);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < p->n_st; i++)
    if (p->st[i].dep != NONE) hasdep[l->tb_first[p->st[p->st[i].dep].side] + p->st[p->st[i].dep].pos] = 1;
  int rc = outfile_open(&w.f, path, 0, err);
  if (rc) {
    free(hasdep), free(w.b);
    return rc;
  }
  /* the steps by program position, to find each one's chunk */
  uint32_t *by_pos = malloc((p->n_st ? p->n_st : 1) * sizeof *by_pos);
  if (!by_pos) w.rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (size_t i = 0; by_pos && i < p->n_st; i++) by_pos[l->tb_first[p->st[i].side] + p->st[i].pos] = (uint32_t)i;
  int32_t in, out;
  chunks_io(p, t, &in, &out);
  const char *buf = t == CHAKRA_COLL_ALLGATHER ? "o" : "i";
  xput(&w,
       "<algo name=\"synth\" proto=\"Simple\" nchannels=\"%u\" nchunksperloop=\"%u\" ngpus=\"%u\" coll=\"%s\" "
       "inplace=\"1\" outofplace=\"0\" minBytes=\"0\" maxBytes=\"0\">\n",
       l->lanes ? l->lanes : 1, p->K, p->n, xml_coll(t));
  for (uint32_t g = 0; g < p->n && !w.rc; g++) {
    const mgpu *gp = &x->gpus[g];
    xput(&w, "  <gpu id=\"%u\" i_chunks=\"%d\" o_chunks=\"%d\" s_chunks=\"0\">\n", g, in, out);
    for (uint32_t ti = 0; ti < gp->n; ti++) {
      const mtb *tb = &x->tbs[gp->first + ti];
      xput(&w, "    <tb id=\"%d\" send=\"%d\" recv=\"%d\" chan=\"%d\">\n", tb->id, tb->send, tb->recv, tb->chan);
      for (uint32_t si = 0; si < tb->n; si++) {
        const mstep *s = &x->steps[tb->first + si];
        uint32_t c = p->st[by_pos[tb->first + si]].chunk;
        int64_t off = s->type == ST_NOP ? -1 : (int64_t)(c % p->n) * p->C + c / p->n;
        xput(&w,
             "      <step s=\"%d\" type=\"%s\" srcbuf=\"%s\" srcoff=\"%lld\" dstbuf=\"%s\" dstoff=\"%lld\" cnt=\"%d\" "
             "depid=\"%d\" deps=\"%d\" hasdep=\"%d\"/>\n",
             s->s, xml_types[s->type], buf, (long long)off, buf, (long long)off, s->cnt, s->depid, s->deps,
             hasdep[tb->first + si]);
      }
      xput(&w, "    </tb>\n");
    }
    xput(&w, "  </gpu>\n");
  }
  xput(&w, "</algo>\n");
  if (!w.rc && w.n) w.rc = outfile_write(w.f, w.b, w.n, err);
  free(hasdep), free(w.b), free(by_pos);
  if (w.rc) {
    outfile_discard(w.f);
    return w.rc;
  }
  return outfile_commit(w.f, err);
}

/* ---- the entry point -------------------------------------------------------- */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int chakra_coll_synth_check(const chakra_coll_synth_options *o, chakra_error *err) {
  if (o->coll != CHAKRA_COLL_ALLGATHER && o->coll != CHAKRA_COLL_REDUCESCATTER && o->coll != CHAKRA_COLL_ALLREDUCE)
    return chakra_error_set(err, CHAKRA_EINVAL, "synthesis makes allgather, reducescatter or allreduce, not %s",
                            chakra_coll_type_name(o->coll));
  if (!o->topology || !*o->topology) return chakra_error_set(err, CHAKRA_EINVAL, "no topology given");
  if (o->reduce_bw < 0 || !isfinite(o->reduce_bw))
    return chakra_error_set(err, CHAKRA_EINVAL, "reduce_bw must be a finite number >= 0");
  if (o->size == 0) return chakra_error_set(err, CHAKRA_EINVAL, "size must be at least 1 byte");
  return 0;
}

/* ---- what a synthesis costs, known before it starts ------------------------ */

/* The capacity COLL_ROOM reaches for n elements. */
static double grown(double n) { return n <= COLL_MIN_CAP ? COLL_MIN_CAP : exp2(ceil(log2(n))); }

/* Channels of t without building them: a link between NPUs is one, an
 * NPU -> switch link one per link out of that switch (an upper bound: the
 * way back to the sender is not one). */
static double channels_of(const chakra_topo *t) {
  uint64_t n = chakra_topo_links(t);
  uint32_t npus = chakra_topo_npus(t), devs = (uint32_t)chakra_topo_devices(t);
  double *in = calloc(devs > npus ? devs - npus : 1, sizeof *in), *out = calloc(devs > npus ? devs - npus : 1, sizeof *out);
  double direct = 0, relayed = 0;
  for (uint64_t i = 0; in && out && i < n; i++) {
    chakra_topo_link l;
    if (chakra_topo_link_at(t, i, &l)) continue;
    if (l.src < npus && l.dst < npus) direct++;
    else if (l.dst >= npus && l.dst < devs) in[l.dst - npus]++;
    else if (l.src >= npus && l.src < devs) out[l.src - npus]++;
  }
  for (uint32_t s = 0; in && out && s + npus < devs; s++) relayed += in[s] * out[s];
  if (!in || !out) relayed = (double)n * (double)n; /* unknown: assume the worst */
  free(in), free(out);
  return direct + relayed;
}

/* Bytes a synthesis of n NPUs x C chunks over `chans` channels needs at its
 * peak, from the structures it allocates (measured on ring, fc, switch,
 * hypercube and mesh topologies; docs/coll.md "Cost"): per message its
 * schedule entry and its send and receive steps, per reduction a step, per
 * link the topology's and the matcher's copies, per channel its
 * description (twice) and indexes, per (NPU, chunk) pair the
 * wait list and the chunk sets; writing adds the MSCCL program per step and,
 * per writer thread, one rank's nodes while it is encoded. */
static double synth_bytes(const chakra_coll_synth_options *o, uint32_t n, uint32_t C, double links, double chans,
                          int writing) {
  double per = (double)n * (n - 1) * C, phases = o->coll == CHAKRA_COLL_ALLREDUCE ? 2 : 1;
  double reductions = o->coll != CHAKRA_COLL_ALLGATHER && o->reduce_bw > 0 ? per : 0;
  double steps = 2 * per * phases + reductions, K = (double)n * C;
  double bytes = 32.0 * (1 << 20) + grown(steps) * sizeof(sstep) + grown(per) * sizeof(tacos_xfer);
  bytes += links * 64 + chans * sizeof(tacos_chan) + (double)tacos_index_bytes(n, (uint64_t)chans, (uint64_t)K) +
           (double)n * K * (sizeof(uint32_t) + 0.25) + K * 48;
  if (writing) {
    double threads = o->threads ? o->threads : CHAKRA_WORKLOAD_AUTO_THREADS;
    bytes += steps * 64 + (threads < n ? threads : n) * (steps / n) * 256;
  }
  return bytes;
}

/* Refuses, before any work, a synthesis that cannot fit the memory this
 * process may use (o->max_memory when set). */
static int check_cost(const chakra_topo *t, const chakra_coll_synth_options *o, uint32_t n, uint32_t C, int writing,
                      chakra_error *err) {
  const char *what = "--max-memory";
  uint64_t limit = o->max_memory ? o->max_memory : sysmem_usable(&what);
  double chans = channels_of(t), need = synth_bytes(o, n, C, (double)chakra_topo_links(t), chans, writing);
  if (need <= (double)limit) return 0;
  double msgs = (double)n * (n - 1) * C * (o->coll == CHAKRA_COLL_ALLREDUCE ? 2 : 1);
  return chakra_error_set(err, CHAKRA_EINVAL,
                          "%u NPUs x %u chunks per NPU over %.0f channels: %.0f messages need about %.2f GiB, more "
                          "than the %.2f GiB of %s; use fewer NPUs or chunks per NPU%s",
                          n, C, chans, msgs, need / 1073741824.0, (double)limit / 1073741824.0, what,
                          o->max_memory ? "" : " (or set --max-memory)");
}

/* Refuses chunks whose times could add up beyond 2^63 ns: no chain of
 * steps is longer than all of them, each costing at most the slowest
 * channel or a reduction (and, backwards, its forwarding delay). */
static int check_times(const tacos_net *net, const chakra_coll_synth_options *o, uint32_t C, uint64_t chunk_bytes,
                       chakra_error *err) {
  uint64_t slowest = 0, red = o->coll != CHAKRA_COLL_ALLGATHER && o->reduce_bw > 0
                                  ? comp_sim_ns(coll_comp_ns(COLL_REDUCE, chunk_bytes, o->reduce_bw))
                                  : 0;
  for (uint32_t i = 0; i < net->n_chans; i++) slowest = max64(slowest, net->chans[i].total);
  double per = (double)net->npus * (net->npus - 1) * C, steps = 4 * per + per + 1;
  if (((double)slowest + 2.0 * (double)red) * steps < 0x1p63) return 0;
  return chakra_error_set(err, CHAKRA_EINVAL,
                          "chunks of %llu bytes take up to %llu ns on a channel and %llu ns to reduce: %.0f steps in a "
                          "row could end beyond 2^63 ns; use a smaller size or faster links",
                          (unsigned long long)chunk_bytes, (unsigned long long)slowest, (unsigned long long)red, steps);
}

/* Steps of the whole synthesis: each matching (the reduce-scatter's on
 * the reversed links) as tacos_cost_of() estimates it from the links, and
 * per message what making the program and timing it cost. */
static int synth_steps(const tacos_graph *g, const chakra_coll_synth_options *o, uint32_t C, double *steps) {
  *steps = 0;
  for (int reversed = 0; reversed < 2; reversed++) {
    if (reversed ? o->coll == CHAKRA_COLL_ALLGATHER : o->coll == CHAKRA_COLL_REDUCESCATTER) continue;
    tacos_shape sh;
    if (tacos_shape_of(&sh, g, reversed)) return -1;
    *steps += tacos_cost_of(&sh, C).steps + SYNTH_STEPS_PER_MESSAGE * (double)g->npus * (g->npus - 1) * C;
    tacos_shape_free(&sh);
  }
  return 0;
}

/* Refuses, before any work, a synthesis estimated to take more steps than
 * o->max_steps (CHAKRA_COLL_SYNTH_MAX_STEPS when 0): what fits in memory
 * can still take days. */
static int check_steps(const tacos_graph *g, const chakra_coll_synth_options *o, uint32_t C, chakra_error *err) {
  double steps, limit = o->max_steps ? (double)o->max_steps : (double)CHAKRA_COLL_SYNTH_MAX_STEPS;
  if (synth_steps(g, o, C, &steps)) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  if (steps <= limit) return 0;
  double s = steps / SYNTH_STEPS_PER_SECOND;
  const char *unit = s < 120 ? "seconds" : s < 7200 ? "minutes" : s < 172800 ? "hours" : "days";
  double in_unit = s < 120 ? s : s < 7200 ? s / 60 : s < 172800 ? s / 3600 : s / 86400;
  return chakra_error_set(err, CHAKRA_EINVAL,
                          "%u NPUs x %u chunks per NPU over %u links: the synthesis is estimated at %.3g steps (about "
                          "%.0f %s), more than the %.3g %s; use fewer NPUs or chunks per NPU, or raise --max-steps",
                          g->npus, C, g->n_links, steps, in_unit, unit, limit,
                          o->max_steps ? "--max-steps allows" : "allowed by default (about 100 seconds)");
}

/* The links of t as the matcher's graph. */
static int graph_of(const chakra_topo *t, tacos_graph *g, tacos_link **links, chakra_error *err) {
  uint64_t n = chakra_topo_links(t);
  if (n > UINT32_MAX / 4) return chakra_error_set(err, CHAKRA_EINVAL, "%llu links: too many", (unsigned long long)n);
  *links = malloc((n ? n : 1) * sizeof **links);
  if (!*links) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (uint64_t i = 0; i < n; i++) {
    chakra_topo_link l;
    if (chakra_topo_link_at(t, i, &l)) return chakra_error_set(err, CHAKRA_EINVAL, "link %llu: missing", (unsigned long long)i);
    (*links)[i] = (tacos_link){l.src, l.dst, l.bytes_per_ns, l.latency_ns};
  }
  *g = (tacos_graph){chakra_topo_npus(t), (uint32_t)chakra_topo_devices(t), (uint32_t)n, *links};
  return 0;
}

static int prog_init(prog *p, const tacos_net *net, uint32_t C, uint64_t chunk_bytes, double reduce_bw,
                     int reduce_sides) {
  memset(p, 0, sizeof *p);
  p->net = net;
  p->n = net->npus;
  p->C = C;
  p->K = p->n * C;
  p->chunk_bytes = chunk_bytes;
  p->reduce_bw = reduce_bw;
  size_t H = (size_t)p->n * p->K;
  p->S_chan = 2 * net->n_chans;
  p->S = p->S_chan + (reduce_sides ? H : 0);
  size_t S = p->S;
  p->side_n = calloc(S + 1, sizeof *p->side_n);
  p->side_last = malloc((S + 1) * sizeof *p->side_last);
  p->hold = malloc((H + 1) * sizeof *p->hold);
  p->link_last = malloc(((size_t)net->n_links + 1) * sizeof *p->link_last);
  if (!p->side_n || !p->side_last || !p->hold || !p->link_last) return -1;
  memset(p->link_last, 0xff, ((size_t)net->n_links + 1) * sizeof *p->link_last);
  memset(p->side_last, 0xff, (S + 1) * sizeof *p->side_last);
  memset(p->hold, 0xff, (H + 1) * sizeof *p->hold);
  return 0;
}

static void prog_free(prog *p) { free(p->st), free(p->side_n), free(p->side_last), free(p->hold), free(p->link_last); }

/* When an All-Reduce's gather may start: chunk c at its owner when its
 * reduce-scatter ends there, each link when its last reduce-scatter
 * transfer has left it. */
static int ar_release(const prog *p, uint64_t **release, uint64_t **link_free) {
  *release = calloc(p->K, sizeof **release);
  *link_free = calloc((size_t)p->net->n_links + 1, sizeof **link_free);
  if (!*release || !*link_free) return -1;
  for (uint32_t c = 0; c < p->K; c++) {
    uint32_t i = p->hold[(size_t)(c % p->n) * p->K + c];
    for (; i != NONE; i = p->st[i].rprev) (*release)[c] = max64((*release)[c], p->st[i].done);
  }
  for (size_t i = 0; i < p->n_st; i++) {
    const sstep *s = &p->st[i];
    if (s->type != ST_S) continue;
    const tacos_chan *ch = &p->net->chans[s->side / 2];
    uint64_t start = s->done - ch->total;
    (*link_free)[ch->link[0]] = max64((*link_free)[ch->link[0]], start + ch->tau[0]);
    if (ch->n_links == 2) (*link_free)[ch->link[1]] = max64((*link_free)[ch->link[1]], s->done);
  }
  return 0;
}

static int synth_program(prog *p, const tacos_net *net, const chakra_coll_synth_options *o, uint32_t C,
                         uint64_t chunk_bytes, chakra_error *err) {
  int reduce_sides = o->coll != CHAKRA_COLL_ALLGATHER && o->reduce_bw > 0;
  if (prog_init(p, net, C, chunk_bytes, o->reduce_bw, reduce_sides))
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  tacos_sched s = {0};
  int rc = 0;
  /* progress: the transfers each matching pass books, the all-reduce's two passes in turn */
  uint64_t transfers = (uint64_t)net->npus * (net->npus - 1) * C, passes = o->coll == CHAKRA_COLL_ALLREDUCE ? 2 : 1;
  if (o->coll != CHAKRA_COLL_ALLGATHER) {
    /* backwards, the time between a chunk's arrival and its forwarding is
     * the time a reduction needs before the partial sum may leave */
    uint64_t red = o->reduce_bw > 0 ? comp_sim_ns(coll_comp_ns(COLL_REDUCE, chunk_bytes, o->reduce_bw)) : 0;
    tacos_opts to = {.chunks_per_npu = C, .seed = o->seed, .transpose = 1, .forward_delay = red,
                     .circuit = 1, .progress = o->progress, .progress_ctx = o->progress_ctx,
                     .progress_total = transfers * passes};
    if ((rc = tacos_allgather(net, &to, &s, err))) return rc;
    rc = emit_reducescatter(p, &s);
    tacos_sched_free(&s);
    if (rc) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  if (o->coll == CHAKRA_COLL_REDUCESCATTER) return 0;
  uint64_t *release = NULL, *link_free = NULL;
  tacos_opts to = {.chunks_per_npu = C, .seed = o->seed, .circuit = 1, .progress = o->progress,
                   .progress_ctx = o->progress_ctx, .progress_base = transfers * (passes - 1),
                   .progress_total = transfers * passes};
  if (o->coll == CHAKRA_COLL_ALLREDUCE) {
    if (ar_release(p, &release, &link_free)) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    to.release = release;
    to.link_free = link_free;
  }
  if (!rc) rc = tacos_allgather(net, &to, &s, err);
  if (!rc && emit_allgather(p, &s))
    rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  tacos_sched_free(&s);
  free(release), free(link_free);
  return rc;
}

static int write_outputs(const char *prefix, const prog *p, const chakra_coll_synth_options *o,
                         const chakra_coll_synth_result *r, chakra_error *err) {
  layout l;
  mx x;
  memset(&x, 0, sizeof x);
  const mgpu **by_id = NULL;
  int rc = 0;
  if (layout_build(&l, p) || to_mx(&x, p, &l, o->coll, err) || !(by_id = calloc(p->n, sizeof *by_id))) {
    rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    goto out;
  }
  for (uint32_t g = 0; g < p->n; g++)
    if (l.gpu_off[g + 1] - l.gpu_off[g] > 65536) {
      rc = chakra_error_set(err, CHAKRA_EINVAL,
                            "NPU %u needs %u thread blocks (one per channel end and per chunk it reduces): MSCCL allows "
                            "65,536; use fewer chunks per NPU",
                            g, l.gpu_off[g + 1] - l.gpu_off[g]);
      goto out;
    }
  if ((rc = msccl_validate(&x, by_id))) goto out;
  /* the XML and the ranks: all in place or none */
  if ((rc = outfile_group_begin(err))) goto out;
  if (o->xml_path) rc = write_xml(o->xml_path, p, &l, &x, o->coll, err);
  if (!rc && prefix) {
    /* the bytes the chunks move: size rounded down to whole chunk bytes */
    uint64_t moved = r->chunk_bytes * (o->coll == CHAKRA_COLL_ALLGATHER ? p->C : p->K);
    chakra_coll_msccl_options mo = {.size = moved, .reduce_bw = o->reduce_bw, .threads = o->threads,
                                    .progress = o->progress, .progress_ctx = o->progress_ctx};
    coll_meta m = {.version = "1.0.0"};
    coll_meta_str(&m, "producer", o->producer ? o->producer : "chakra-c coll synth");
    coll_meta_str(&m, "collective", chakra_coll_type_name(o->coll));
    coll_meta_str(&m, "algorithm", "synth");
    coll_meta_int(&m, "npus", p->n);
    coll_meta_int(&m, "size", (int64_t)moved);
    if (moved != o->size) coll_meta_int(&m, "requested_size", (int64_t)o->size);
    coll_meta_int(&m, "chunks", (int64_t)p->C);
    coll_meta_str(&m, "topology", o->topology);
    coll_meta_int(&m, "seed", (int64_t)o->seed);
    coll_meta_int(&m, "collective_time_ns", (int64_t)r->collective_time_ns);
    rc = msccl_write(&x, by_id, &mo, prefix, &m, err);
  }
  int end = outfile_group_end(!rc, rc ? NULL : err);
  if (!rc) rc = end;
out:
  free(by_id);
  msccl_free(&x);
  layout_free(&l);
  return rc;
}

int chakra_coll_synth(const char *prefix, const chakra_coll_synth_options *o, chakra_coll_synth_result *r,
                      chakra_error *err) {
  memset(r, 0, sizeof *r);
  int rc = chakra_coll_synth_check(o, err);
  if (rc) return rc;
  double t0 = now_s();
  chakra_topo *t = NULL;
  if ((rc = chakra_topo_open(&t, o->topology, o->bandwidth_gbps > 0 ? o->bandwidth_gbps : 50,
                             o->latency_ns >= 0 ? o->latency_ns : 500, err)))
    return rc;
  uint32_t n = chakra_topo_npus(t), C = o->chunks_per_npu ? o->chunks_per_npu : 1;
  uint64_t in = o->coll == CHAKRA_COLL_ALLGATHER ? C : (uint64_t)n * C;
  if (n < 2) rc = chakra_error_set(err, CHAKRA_EINVAL, "topology '%s': synthesis needs at least 2 NPUs", o->topology);
  else if ((uint64_t)n * C > (1u << 26) || (uint64_t)n * n * C > (1ull << 31))
    rc = chakra_error_set(err, CHAKRA_EINVAL, "%u NPUs x %u chunks per NPU: at most %u chunks in all and 2^31 (chunk, NPU) pairs",
                          n, C, 1u << 26);
  else if (o->size < in) /* TACOS rounds chunk bytes down, but not to nothing */
    rc = chakra_error_set(err, CHAKRA_EINVAL, "size %llu is smaller than the %llu chunks %s (%s%u chunk%s per NPU): "
                          "each chunk needs at least 1 byte", (unsigned long long)o->size, (unsigned long long)in,
                          o->coll == CHAKRA_COLL_ALLGATHER ? "of each NPU's input" : "of the buffer",
                          o->coll == CHAKRA_COLL_ALLGATHER ? "" : "NPUs x ", C, C == 1 ? "" : "s");
  if (!rc) rc = check_cost(t, o, n, C, prefix != NULL || o->xml_path != NULL, err);
  tacos_link *links = NULL;
  tacos_graph g;
  tacos_net net = {0};
  prog p;
  memset(&p, 0, sizeof p);
  if (!rc) rc = graph_of(t, &g, &links, err);
  if (!rc) rc = check_steps(&g, o, C, err);
  if (!rc && o->size / in > INT64_MAX)
    rc = chakra_error_set(err, CHAKRA_EINVAL, "chunks of %llu bytes: an ET's comm_size holds at most 2^63 - 1",
                          (unsigned long long)(o->size / in));
  if (!rc) rc = tacos_net_build(&net, &g, o->size / in, err);
  if (!rc) rc = check_times(&net, o, C, o->size / in, err);
  if (!rc) rc = synth_program(&p, &net, o, C, o->size / in, err);
  if (!rc) {
    for (size_t i = 0; i < p.n_st; i++) r->collective_time_ns = max64(r->collective_time_ns, p.st[i].done);
    r->synthesis_seconds = now_s() - t0;
    r->npus = n;
    r->chunks = p.K;
    r->chunk_bytes = o->size / in;
    r->messages = p.messages;
    r->links = g.n_links;
    if (prefix || o->xml_path) rc = write_outputs(prefix, &p, o, r, err);
  }
  prog_free(&p);
  tacos_net_free(&net);
  free(links);
  chakra_topo_free(t);
  return rc;
}
