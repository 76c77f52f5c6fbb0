/* mxcheck.c - an MSCCL-IR program checked before anything is written; see
 * mxcheck.h. */
#include "mxcheck.h"

#include <stdio.h>
#include <string.h>

#include "mxparse.h"

static const mgpu *gpu_of(const mx *x, int32_t id, const mgpu **by_id) {
  (void)x;
  return by_id[id];
}

/* Where a walk over one side of a connection is: threadblock, step. */
typedef struct cursor {
  uint32_t tb, step;
} cursor;

/* The next step from c on among g's threadblocks that send to (sending)
 * or receive from peer on channel chan, and that sends (receives); NULL
 * when none is left. *tb receives its threadblock. */
static mstep *next_on(mx *x, const mgpu *g, cursor *c, int sending, int32_t peer, int32_t chan, const mtb **tb) {
  for (; c->tb < g->n; c->tb++, c->step = 0) {
    const mtb *t = &x->tbs[g->first + c->tb];
    if ((sending ? t->send : t->recv) != peer || t->chan != chan) continue;
    for (; c->step < t->n; c->step++) {
      int type = x->steps[t->first + c->step].type;
      if (sending ? st_sends(type) : st_recvs(type)) {
        *tb = t;
        return &x->steps[t->first + c->step++];
      }
    }
  }
  return NULL;
}

/* Every GPU present once, dependencies that exist, sends that match receives
 * per connection; assigns tags (channel << 16 | message index on the
 * connection, counted in program order on both sides). */
int msccl_validate(mx *x, const mgpu **by_id) {
  char pl[96];
  for (size_t i = 0; i < x->n_gpus; i++) {
    if (by_id[x->gpus[i].id]) return mx_fail(x, "gpu %d: defined twice", x->gpus[i].id);
    by_id[x->gpus[i].id] = &x->gpus[i];
  }
  for (int32_t gi = 0; gi < x->ngpus; gi++)
    if (!by_id[gi]) return mx_fail(x, "gpu %d: missing (ngpus=\"%d\")", gi, x->ngpus);
  for (size_t gi = 0; gi < x->n_gpus; gi++) {
    const mgpu *g = &x->gpus[gi];
    for (uint32_t ti = 0; ti < g->n; ti++) {
      const mtb *t = &x->tbs[g->first + ti];
      for (uint32_t j = 0; j < ti; j++)
        if (x->tbs[g->first + j].id == t->id) return mx_fail(x, "gpu %d tb %d: defined twice", g->id, t->id);
      for (uint32_t si = 0; si < t->n; si++) {
        const mstep *s = &x->steps[t->first + si];
        if (s->depid == -1) continue;
        mx_place(pl, sizeof pl, g, t, s);
        const mtb *dt = mx_tb_of(x, g, s->depid);
        if (!dt || s->deps < 0 || (uint32_t)s->deps >= dt->n)
          return mx_fail(x, "%s: depends on tb %d step %d, which does not exist", pl, s->depid, s->deps);
      }
    }
  }
  /* Connections: per (sender, receiver, channel), the k-th sending step of
   * the sender pairs with the k-th receiving step of the receiver. Counted
   * per GPU pair with a small scan: tbs are few per GPU. */
  for (size_t gi = 0; gi < x->n_gpus; gi++) {
    const mgpu *g = &x->gpus[gi];
    for (uint32_t ti = 0; ti < g->n; ti++) {
      const mtb *t = &x->tbs[g->first + ti];
      if (t->send < 0 || t->send >= x->ngpus) continue;
      /* skip if an earlier tb of g already covered this connection */
      int seen = 0;
      for (uint32_t j = 0; j < ti && !seen; j++)
        seen = x->tbs[g->first + j].send == t->send && x->tbs[g->first + j].chan == t->chan;
      if (seen) continue;
      const mgpu *peer = gpu_of(x, t->send, by_id);
      /* walk the sends of g and the receives of peer on this connection together */
      cursor sc = {0, 0}, rc = {0, 0};
      int32_t k = 0;
      for (;;) {
        const mtb *stb = NULL, *rtb = NULL;
        mstep *snd = next_on(x, g, &sc, 1, t->send, t->chan, &stb);
        mstep *rcv = next_on(x, peer, &rc, 0, g->id, t->chan, &rtb);
        if (!snd && !rcv) break;
        if (!rcv) {
          mx_place(pl, sizeof pl, g, stb, snd);
          return mx_fail(x, "%s: send #%d to gpu %d on channel %d has no matching receive", pl, k, t->send, t->chan);
        }
        if (!snd) {
          mx_place(pl, sizeof pl, peer, rtb, rcv);
          return mx_fail(x, "%s: receive #%d from gpu %d on channel %d has no matching send", pl, k, g->id, t->chan);
        }
        if (snd->cnt != rcv->cnt) {
          mx_place(pl, sizeof pl, peer, rtb, rcv);
          return mx_fail(x, "%s: receives %d chunks, but send #%d of gpu %d tb %d step %d sends %d", pl, rcv->cnt, k,
                         g->id, stb->id, snd->s, snd->cnt);
        }
        if (k > 65535) {
          mx_place(pl, sizeof pl, g, stb, snd);
          return mx_fail(x, "%s: more than 65536 messages on one connection", pl);
        }
        snd->stag = (t->chan << 16) | k;
        rcv->rtag = snd->stag;
        k++;
      }
    }
  }
  /* receives on connections nobody sends on */
  for (size_t gi = 0; gi < x->n_gpus; gi++) {
    const mgpu *g = &x->gpus[gi];
    for (uint32_t ti = 0; ti < g->n; ti++) {
      const mtb *t = &x->tbs[g->first + ti];
      if (t->recv < 0 || t->recv >= x->ngpus) continue;
      const mgpu *peer = by_id[t->recv];
      int found = 0;
      for (uint32_t j = 0; j < peer->n && !found; j++)
        found = x->tbs[peer->first + j].send == g->id && x->tbs[peer->first + j].chan == t->chan;
      if (found) continue;
      for (uint32_t si = 0; si < t->n; si++)
        if (st_recvs(x->steps[t->first + si].type)) {
          mx_place(pl, sizeof pl, g, t, &x->steps[t->first + si]);
          return mx_fail(x, "%s: receive from gpu %d on channel %d, which never sends to gpu %d", pl, t->recv, t->chan,
                         g->id);
        }
    }
  }
  return 0;
}

/* --compat reproduces a converter that cannot express fused steps, nor a
 * step after a dropped copy: refuse those instead of guessing its crash. */
int mx_compat_supported(mx *x) {
  char pl[96];
  for (size_t gi = 0; gi < x->n_gpus; gi++) {
    const mgpu *g = &x->gpus[gi];
    for (uint32_t ti = 0; ti < g->n; ti++) {
      const mtb *t = &x->tbs[g->first + ti];
      for (uint32_t si = 0; si < t->n; si++) {
        const mstep *s = &x->steps[t->first + si];
        mx_place(pl, sizeof pl, g, t, s);
        if (s->type == ST_RCS || s->type == ST_RRS || s->type == ST_RRCS)
          return mx_fail(x, "%s: compat: the 2025-04 reference converter cannot convert fused step \"%s\" (drop compat)",
                         pl, mx_step_types[s->type]);
        if ((s->type == ST_CPY || s->type == ST_RE) && si + 1 < t->n)
          return mx_fail(x, "%s: compat: the reference converter fails on a step after a dropped \"%s\" (drop compat)",
                         pl, mx_step_types[s->type]);
      }
    }
  }
  return 0;
}
