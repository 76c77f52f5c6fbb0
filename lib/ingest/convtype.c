/* convtype.c - what each node becomes in chakra convert pytorch; see
 * convtype.h. */
#include "convtype.h"

#include <stdlib.h>
#include <string.h>

#include "../util/bigmem.h"
#include "chakra/et_def.pb-c.h"
#include "convgroups.h"
#include "../util/vec.h"

/* CollectiveCommType from a kernel name, as the reference: lower case, '_'
 * and '-' removed, first known word; -1 if none. */
static int coll_from_name(const char *name) {
  size_t n = strlen(name);
  char *t = malloc(n + 1);
  if (!t) return -2;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    char ch = name[i];
    if (ch == '_' || ch == '-') continue;
    t[k++] = ch >= 'A' && ch <= 'Z' ? (char)(ch + 32) : ch;
  }
  t[k] = 0;
  int r = -1;
  static const struct { const char *w; int t; } words[] = {
      {"allreduce", CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_REDUCE},
      {"alltoall", CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_TO_ALL},
      {"allgather", CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_GATHER},
      {"reducescatter", CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__REDUCE_SCATTER},
      {"broadcast", CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__BROADCAST}};
  for (size_t w = 0; w < sizeof words / sizeof *words && r < 0; w++)
    if (strstr(t, words[w].w)) r = words[w].t;
  free(t);
  if (r < 0 && strstr(name, "ncclDevKernel_SendRecv")) r = CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_TO_ALL;
  return r;
}

/* "nccl:send 0->1" / "nccl:recv 1<-0": the peer after the arrow, or -1. */
static int64_t peer_from_name(const char *s) {
  const char *p = strstr(s, "nccl:send ");
  const char *arrow = "->";
  if (!p) {
    p = strstr(s, "nccl:recv ");
    arrow = "<-";
  }
  if (!p) return -1;
  const char *a = strstr(p, arrow);
  if (!a) return -1;
  char *end;
  long long v = strtoll(a + 2, &end, 10);
  return end == a + 2 || v < 0 ? -1 : v;
}

/* A send/recv's peer (global rank) and process group (default mode). */
static int resolve_p2p(conv *c, uint32_t g, int64_t *peer_out, uint32_t *pg_out) {
  const ht_node *nodes = c->h->nodes;
  uint32_t rpc = CONV_NONE;
  int64_t peer = -1;
  for (uint32_t a = c->parent[g], depth = 0; a != CONV_NONE && depth < 8; a = c->parent[a], depth++) {
    if (peer < 0) peer = peer_from_name(conv_nname(c, a));
    if (rpc == CONV_NONE && (nodes[a].flags & HT_RPC) && nodes[a].side != UINT32_MAX &&
        c->h->side[nodes[a].side].coll_name)
      rpc = a;
    if (rpc != CONV_NONE && peer >= 0) break;
  }
  const ht_side *rs = rpc != CONV_NONE ? &c->h->side[nodes[rpc].side] : NULL;
  if (rs && rs->n_rpc_int >= 1 && rs->rpc_int[0] >= 0) peer = rs->rpc_int[0];
  if (peer < 0) return -1;
  /* the process group */
  const pgroup *pg = NULL;
  uint32_t pgname = nodes[g].pg_name;
  if (!pgname && rpc != CONV_NONE) pgname = nodes[rpc].pg_name;
  if (pgname) pg = conv_pg_by_name(c, strtab_str(&c->h->strings, pgname));
  if (!pg && rs && rs->n_rpc_int >= 2) {
    pg = conv_pg_by_backend(c, rs->rpc_int[1]);
    if (pg && !pgname) {
      uint32_t id = strtab_intern(&c->h->strings, pg->name, strlen(pg->name));
      if (id != STRTAB_OOM) pgname = id;
    }
  }
  int64_t global = peer;
  if (pg && pg->ranks) {
    if ((uint64_t)peer >= pg->n_ranks) return -2;
    global = pg->ranks[peer];
  } else if (rs && rs->has_grs) {
    global = rs->grs + peer * (rs->has_grstride ? rs->grstride : 1);
  }
  if (global > INT32_MAX) return -2;
  *peer_out = global;
  *pg_out = pgname;
  return 0;
}

/* pg_name of a collective: its own, else the enclosing record_param_comms'
 * (by attribute, or by the process-group id among its arguments). */
static uint32_t coll_pg(conv *c, uint32_t g) {
  const ht_node *nodes = c->h->nodes;
  if (nodes[g].pg_name) return nodes[g].pg_name;
  for (uint32_t a = c->parent[g], depth = 0; a != CONV_NONE && depth < 8; a = c->parent[a], depth++) {
    if (!(nodes[a].flags & HT_RPC)) continue;
    if (nodes[a].pg_name) return nodes[a].pg_name;
    if (nodes[a].side != UINT32_MAX) {
      const ht_side *s = &c->h->side[nodes[a].side];
      if (s->n_rpc_int >= 2) {
        const pgroup *pg = conv_pg_by_backend(c, s->rpc_int[1]);
        if (pg) {
          uint32_t id = strtab_intern(&c->h->strings, pg->name, strlen(pg->name));
          return id == STRTAB_OOM ? 0 : id;
        }
      }
    }
    break;
  }
  return 0;
}

int conv_type_nodes(conv *c) {
  size_t n = c->n;
  const ht_node *nodes = c->h->nodes;
  c->type = bigmem_calloc(n ? n : 1);
  c->comm_type = bigmem_alloc(n ? n : 1);
  c->peer = bigmem_alloc((n ? n : 1) * sizeof *c->peer);
  c->tag = bigmem_alloc((n ? n : 1) * sizeof *c->tag);
  c->pg = bigmem_calloc((n ? n : 1) * sizeof *c->pg);
  if (!c->type || !c->comm_type || !c->peer || !c->tag || !c->pg) return conv_oom(c);
  for (size_t i = 0; i < n; i++) {
    c->comm_type[i] = -1;
    c->peer[i] = -1;
    c->tag[i] = 0;
    if (!c->sel[i]) continue;
    const ht_node *x = &nodes[i];
    if (x->flags & HT_META) {
      c->type[i] = CONV_T_METADATA;
      continue;
    }
    c->type[i] = CONV_T_COMP;
    if (!c->gpu[i]) continue;
    const char *name = conv_nname(c, (uint32_t)i);
    uint32_t p = c->parent[i];
    if (conv_has(name, "ncclDevKernel_SendRecv")) {
      const char *keyword = conv_nname(c, p);
      if (strcmp(keyword, "record_param_comms") == 0) {
        uint32_t gp = c->parent[p];
        if (gp == CONV_NONE) {
          if (c->compat)
            return conv_node_err(c, (uint32_t)i, "its launcher record_param_comms has no parent in the trace "
                                            "(the reference converter fails here)");
          keyword = "";
        } else {
          keyword = conv_nname(c, gp);
        }
        if (c->compat && nodes[p].pg_name) c->pg[i] = nodes[p].pg_name;
      }
      if (conv_has(keyword, "send")) c->type[i] = CONV_T_SEND;
      else if (conv_has(keyword, "recv")) c->type[i] = CONV_T_RECV;
      else c->type[i] = CONV_T_COLL; /* a SendRecv kernel is an NCCL kernel, nccl:all_to_all or not */
    } else if (conv_has(name, "ncclKernel") || conv_has(name, "ncclDevKernel")) {
      c->type[i] = CONV_T_COLL;
    }
    if (c->compat) {
      if (!c->pg[i]) c->pg[i] = x->pg_name;
    } else if (c->type[i] == CONV_T_COLL) {
      c->pg[i] = coll_pg(c, (uint32_t)i);
    }
    if (c->type[i] == CONV_T_COLL) {
      int t = coll_from_name(name);
      if (t == -2) return conv_oom(c);
      if (t < 0) {
        if (c->compat || c->opt->unknown_coll != CHAKRA_UNKNOWN_COLL_COMP)
          return conv_node_err(c, (uint32_t)i, "cannot tell which collective this NCCL kernel runs (no allreduce, "
                                          "alltoall, allgather, reducescatter or broadcast in its name)%s",
                          c->compat ? "" : "; option unknown_coll = comp converts such kernels to compute nodes");
        c->type[i] = CONV_T_COMP;
        c->rep->unknown_colls++;
        conv_warnf(c, c->h->path, "node %llu '%.100s': unknown collective kernel converted to a compute node",
              (unsigned long long)x->id, name);
        continue;
      }
      c->comm_type[i] = (int8_t)t;
    } else if ((c->type[i] == CONV_T_SEND || c->type[i] == CONV_T_RECV) && !c->compat) {
      int64_t peer;
      uint32_t pg = 0;
      int r = resolve_p2p(c, (uint32_t)i, &peer, &pg);
      if (r) {
        if (c->opt->p2p_missing == CHAKRA_P2P_MISSING_DROP) {
          c->type[i] = CONV_T_COMP;
          c->rep->p2p_dropped++;
          continue;
        }
        return conv_node_err(c, (uint32_t)i,
                        r == -2 ? "the peer rank of this %s lies outside its process group"
                                : "cannot tell the peer rank of this %s: no record_param_comms with a rank "
                                  "argument and no 'nccl:send a->b' name among its launcher's ancestors "
                                  "(option p2p_missing = drop converts it to a compute node)",
                        c->type[i] == CONV_T_SEND ? "send" : "receive");
      }
      c->peer[i] = (int32_t)peer;
      c->pg[i] = pg ? pg : x->pg_name;
    }
  }
  if (c->rep->p2p_dropped)
    conv_warnf(c, c->h->path, "%llu send/recv kernels without a known peer converted to compute nodes",
          (unsigned long long)c->rep->p2p_dropped);
  if (c->compat) return 0;
  /* comm_tag: the index of the message among those of the same (group,
   * direction, peer), in program order on both sides */
  typedef struct tagkey { uint32_t pg; int send; int32_t peer; int32_t next; } tagkey;
  tagkey *keys = NULL;
  size_t nk = 0, ck = 0;
  for (size_t k = 0; k < n; k++) {
    uint32_t i = c->sidx[k];
    if (c->type[i] != CONV_T_SEND && c->type[i] != CONV_T_RECV) continue;
    int snd = c->type[i] == CONV_T_SEND;
    size_t j = 0;
    for (; j < nk; j++)
      if (keys[j].pg == c->pg[i] && keys[j].send == snd && keys[j].peer == c->peer[i]) break;
    if (j == nk) {
      tagkey *t = VEC_PUSH(keys, nk, ck);
      if (!t) {
        free(keys);
        return conv_oom(c);
      }
      *t = (tagkey){c->pg[i], snd, c->peer[i], 0};
    }
    c->tag[i] = keys[j].next++;
  }
  free(keys);
  return 0;
}
