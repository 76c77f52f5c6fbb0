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
      uint32_t sa = 0, ra = 0; /* tb cursors */
      uint32_t ss = 0, rs = 0; /* step cursors */
      int32_t k = 0;
      for (;;) {
        mstep *snd = NULL, *rcv = NULL;
        const mtb *stb = NULL, *rtb = NULL;
        for (; sa < g->n && !snd; sa++, ss = 0) {
          stb = &x->tbs[g->first + sa];
          if (stb->send != t->send || stb->chan != t->chan) continue;
          for (; ss < stb->n; ss++)
            if (st_sends(x->steps[stb->first + ss].type)) break;
          if (ss < stb->n) {
            snd = &x->steps[stb->first + ss++];
            break;
          }
        }
        for (; ra < peer->n && !rcv; ra++, rs = 0) {
          rtb = &x->tbs[peer->first + ra];
          if (rtb->recv != g->id || rtb->chan != t->chan) continue;
          for (; rs < rtb->n; rs++)
            if (st_recvs(x->steps[rtb->first + rs].type)) break;
          if (rs < rtb->n) {
            rcv = &x->steps[rtb->first + rs++];
            break;
          }
        }
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
