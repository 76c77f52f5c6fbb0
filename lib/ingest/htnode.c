/* htnode.c - one host-ET node assembled from the parser's events; see
 * htnode.h. */
#include "htnode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "../util/bigmem.h"
#include "htcapture.h"
#include "pyrepr.h"
#include "../util/vec.h"

int ht_push(hparse *p, int f) {
  if (p->depth == MAX_DEPTH) return ht_fail(p, CHAKRA_EFORMAT, "byte %llu: nesting too deep", (unsigned long long)ht_here(p));
  p->fr[p->depth++] = f;
  return 1;
}

void ht_after_value(hparse *p) {
  if (!p->depth) {
    p->want = W_DONE;
    return;
  }
  switch (p->fr[p->depth - 1]) {
    case F_NODES: p->want = W_NODE; break;
    case F_ATTRS: p->want = W_ATTR; break;
    case F_SYNC: p->want = W_SYNC_ELEM; break;
    case F_PARENTS: p->want = W_PARENT_ELEM; break;
    default: p->want = W_KEY; break;
  }
}

void ht_reset_node(hparse *p) {
  memset(&p->cur, 0, sizeof p->cur);
  p->cur.side = UINT32_MAX;
  for (int i = 0; i < HT_IO_N; i++) p->io[i].n = 0, p->io_set[i] = 0;
  p->strides[0].n = p->strides[1].n = 0;
  p->strides_set[0] = p->strides_set[1] = 0;
  p->attrs_json.n = p->others.n = 0;
  p->n_xs = 0;
  p->n_argv = p->n_argt = 0;
  if (p->cap_arg) {
    memset(p->arg_bytes, 0, p->cap_arg * sizeof *p->arg_bytes);
    memset(p->arg_tensor, 0, p->cap_arg);
  }
  p->n_targs = 0;
  p->targ_str.n = 0;
  p->n_sync = 0;
  p->has_sync = 0;
  p->n_parents = 0;
  p->has_grs = p->has_grstride = 0;
  p->n_attrs_json = 0;
}

/* Names reserved for attributes the converters write themselves. */
static int reserved_attr(const char *s, size_t n) {
  static const char *const names[] = {"is_cpu_op", "comm_type", "comm_size", "comm_src", "comm_dst",
                                      "comm_tag", "comm_priority", "pg_name", "involved_dim",
                                      "num_ops", "tensor_size", "tensor_loc", "stream", "duration_ns",
                                      "op_schema", "inputs", "outputs", "op_type", "comm_group", NULL};
  for (int i = 0; names[i]; i++)
    if (strlen(names[i]) == n && memcmp(names[i], s, n) == 0) return 1;
  for (int k = 0; k < HT_NATTR; k++)
    if (strlen(ht_attr_names[k]) == n && memcmp(ht_attr_names[k], s, n) == 0) return 1;
  return 0;
}

static int attr_index(const char *s, size_t n) {
  switch (n) {
    case 3: return memcmp(s, "tid", 3) == 0 ? HT_A_TID : -1;
    case 5: return memcmp(s, "rf_id", 5) == 0 ? HT_A_RF_ID : memcmp(s, "scope", 5) == 0 ? HT_A_SCOPE : -1;
    case 6: return memcmp(s, "seq_id", 6) == 0 ? HT_A_SEQ_ID : memcmp(s, "fw_tid", 6) == 0 ? HT_A_FW_TID : -1;
    case 9: return memcmp(s, "fw_parent", 9) == 0 ? HT_A_FW_PARENT : -1;
    default: return -1;
  }
}

static void link_attr_json(hparse *p, const char *name, const char *type, const char *val, size_t vlen,
                           int is_string) {
  strbuf *b = &p->attrs_json;
  if (p->n_attrs_json++) strbuf_putc(b, ',');
  strbuf_puts(b, "{\"name\":");
  json_str(b, (const unsigned char *)name, strlen(name));
  strbuf_puts(b, ",\"type\":");
  json_str(b, (const unsigned char *)type, strlen(type));
  strbuf_puts(b, ",\"value\":");
  if (is_string) json_str(b, (const unsigned char *)val, vlen);
  else strbuf_put(b, val, vlen);
  strbuf_putc(b, '}');
}

/* s[0..n) NUL-terminated in the pool, where it lives until the output is
 * written. */
static const char *pool_str(hparse *p, const char *s, size_t n) {
  char *d = bpool_alloc(&p->pool, n + 1);
  if (!d) return NULL;
  memcpy(d, s, n);
  d[n] = 0;
  return d;
}

/* Other scalar attributes (and unknown scalar members of a node) travel as
 * Chakra attributes of the same name, unless the converter writes that
 * name itself. They are kept as values; the writer builds the messages. */
int ht_add_extra(hparse *p, const char *nm, size_t nl, int kind, const char *v, size_t vl) {
  if (!nl || nl > MAX_EXTRA_NAME || reserved_attr(nm, nl)) return 1;
  ht_extra x = {0};
  switch (kind) {
    case AV_INT:
      if (!ht_parse_i64(v, vl, &x.v.i)) x.kind = HT_X_INT64;
      else if (!ht_parse_u64(v, vl, &x.v.u)) x.kind = HT_X_UINT64;
      else return 1; /* beyond uint64: no attribute */
      break;
    case AV_DOUBLE: x.kind = HT_X_DOUBLE, x.v.d = ht_parse_double(v, vl); break;
    case AV_BOOL: x.kind = HT_X_BOOL, x.v.b = vl == 4; break;
    case AV_STRING:
      x.kind = HT_X_STRING;
      if (!(x.v.s = pool_str(p, v, vl))) return ht_oom(p);
      break;
    default: return 1;
  }
  if (!(x.name = pool_str(p, nm, nl))) return ht_oom(p);
  ht_extra *slot = VEC_PUSH(p->xs, p->n_xs, p->cap_xs);
  if (!slot) return ht_oom(p);
  *slot = x;
  return 1;
}

/* An attrs entry {name, type, value} is complete. */
int ht_finish_attr(hparse *p) {
  if (!p->a_has_name) return ht_node_fail(p, "an entry of 'attrs' has no %s", "'name'");
  const char *nm = p->a_name.s ? p->a_name.s : "";
  size_t nl = p->a_name.n;
  const char *v = p->a_val.s ? p->a_val.s : "";
  size_t vl = p->a_val.n;
  if (p->mode == HT_MODE_LINK) {
    strbuf *b = &p->attrs_json;
    if (p->n_attrs_json++) strbuf_putc(b, ',');
    strbuf_puts(b, "{\"name\":");
    json_str(b, (const unsigned char *)nm, nl);
    if (p->a_type.n) {
      strbuf_puts(b, ",\"type\":");
      json_str(b, p->a_type.p, p->a_type.n);
    }
    strbuf_puts(b, ",\"value\":");
    if (p->a_kind == AV_STRING) json_str(b, (const unsigned char *)v, vl);
    else if (p->a_kind == AV_NONE) strbuf_puts(b, "null");
    else strbuf_put(b, v, vl);
    strbuf_putc(b, '}');
  }
  int k = attr_index(nm, nl);
  if (k >= 0) {
    int64_t iv;
    if (p->a_kind == AV_INT && !ht_parse_i64(v, vl, &iv)) {
      p->cur.a[k] = iv;
      p->cur.flags |= HT_ATTR0 << k;
    } else if (p->a_kind == AV_INT && vl && v[0] != '-') {
      uint64_t uv; /* uint64 beyond int64: keep the bits, as int64_val would */
      if (ht_parse_u64(v, vl, &uv)) return ht_node_fail(p, "attribute '%s' is not an integer", ht_attr_names[k]);
      p->cur.a[k] = (int64_t)uv;
      p->cur.flags |= HT_ATTR0 << k;
    } else {
      return ht_node_fail(p, "attribute '%s' is not an integer", ht_attr_names[k]);
    }
    return 1;
  }
  if (nl == 9 && memcmp(nm, "op_schema", 9) == 0) {
    if (p->a_kind != AV_STRING) return ht_node_fail(p, "attribute '%s' is not a string", "op_schema");
    uint32_t id = strtab_intern(&p->st, v, vl);
    if (id == STRTAB_OOM) return ht_oom(p);
    p->cur.op_schema = id;
    p->cur.flags |= HT_SCHEMA;
    return 1;
  }
  if (nl == 7 && memcmp(nm, "pg_name", 7) == 0) {
    if (p->a_kind == AV_STRING || p->a_kind == AV_INT) {
      uint32_t id = strtab_intern(&p->st, v, vl);
      if (id == STRTAB_OOM) return ht_oom(p);
      p->cur.pg_name = id;
      p->cur.flags |= HT_PG_ATTR;
    }
    return 1;
  }
  if (p->a_kind == AV_INT) {
    int64_t iv;
    if (!ht_parse_i64(v, vl, &iv)) {
      if (nl == 17 && memcmp(nm, "global_rank_start", 17) == 0) p->grs = iv, p->has_grs = 1;
      if (nl == 18 && memcmp(nm, "global_rank_stride", 18) == 0) p->grstride = iv, p->has_grstride = 1;
    }
  }
  return p->mode == HT_MODE_CONVERT ? ht_add_extra(p, nm, nl, p->a_kind, v, vl) : 1;
}

static void put_io_json(hparse *p, strbuf *b, int which) {
  static const char *const keys[3] = {"\"values\":", ",\"shapes\":", ",\"types\":"};
  strbuf_putc(b, '{');
  for (int k = 0; k < 3; k++) {
    strbuf_puts(b, keys[k]);
    strbuf *s = &p->io[which * 3 + k];
    if (p->io_set[which * 3 + k]) strbuf_put(b, s->s, s->n);
    else strbuf_put(b, "[]", 2);
  }
  if (p->strides_set[which]) {
    strbuf_puts(b, ",\"strides\":");
    strbuf_put(b, p->strides[which].s, p->strides[which].n);
  }
  strbuf_putc(b, '}');
}

static int add_side(hparse *p, ht_side **out) {
  if (VEC_ROOM(p->side, p->n_side, p->cap_side, 1)) return -1;
  ht_side *s = &p->side[p->n_side];
  memset(s, 0, sizeof *s);
  s->node = (uint32_t)p->n;
  p->cur.side = (uint32_t)p->n_side++;
  *out = s;
  return 0;
}

/* convert: the node's IOInfo texts (a missing list is "[]") and extra
 * attributes, moved into the pool (1, or 0 after an error, as a callback). */
static int keep_conv(hparse *p) {
  ht_node *c = &p->cur;
  size_t all = 0;
  for (int i = 0; i < HT_IO_N; i++) {
    if (p->io[i].oom) return ht_oom(p);
    all += (p->io_set[i] ? p->io[i].n : 2) + 1;
  }
  if (all > UINT32_MAX) return ht_node_fail(p, "%s", "node text too large (over 4 GiB)");
  char *d = bpool_alloc(&p->pool, all);
  if (!d) return ht_oom(p);
  c->blob = (const unsigned char *)d;
  c->blob_len = (uint32_t)all;
  for (int i = 0; i < HT_IO_N; i++) {
    size_t l = p->io_set[i] ? p->io[i].n : 2;
    memcpy(d, p->io_set[i] ? p->io[i].s : "[]", l);
    d[l] = 0;
    d += l + 1;
  }
  if (p->n_xs) {
    ht_extra *x = bpool_alloc8(&p->pool, p->n_xs * sizeof *x);
    if (!x) return ht_oom(p);
    memcpy(x, p->xs, p->n_xs * sizeof *x);
    c->extra = x;
    c->n_extra = (uint32_t)p->n_xs;
  }
  return 1;
}

int ht_finish_node(hparse *p) {
  ht_node *c = &p->cur;
  static const struct { uint32_t bit; const char *name; } req[] = {
      {HT_ID, "'id'"}, {HT_NAME, "'name'"}, {HT_PARENT, "'ctrl_deps' (or 'parent')"},
      {HT_INPUTS, "'inputs'"}, {HT_OUTPUTS, "'outputs'"}};
  for (size_t i = 0; i < sizeof req / sizeof *req; i++)
    if (!(c->flags & req[i].bit)) return ht_node_fail(p, "missing %s", req[i].name);
  const char *name = strtab_str(&p->st, c->name);
  size_t nlen = strtab_len(&p->st, c->name);
  if (ht_contains(name, nlen, "process_group:init")) c->flags |= HT_META;
  if (ht_contains(name, nlen, "record_param_comms")) c->flags |= HT_RPC;
  if (strcmp(name, "[pytorch|profiler|execution_trace|thread]") == 0 ||
      strcmp(name, "[pytorch|profiler|execution_graph|thread]") == 0)
    c->flags |= HT_THREAD_ROOT;
  /* bytes of the input tensors: arguments whose type names a Tensor */
  size_t nargs = p->n_argv < p->n_argt ? p->n_argv : p->n_argt;
  uint64_t bytes = 0;
  for (size_t i = 0; i < nargs; i++)
    if (p->arg_tensor[i]) bytes = p->arg_bytes[i] > UINT64_MAX - bytes ? UINT64_MAX : bytes + p->arg_bytes[i];
  c->comm_bytes = bytes;
  /* side information for the few nodes that need it */
  int want_rpc = (c->flags & HT_RPC) != 0, want_pg = (c->flags & HT_META) != 0;
  if (want_rpc || want_pg || p->has_sync || p->has_grs || p->has_grstride) {
    ht_side *s;
    if (add_side(p, &s)) return ht_oom(p);
    s->has_grs = (uint8_t)p->has_grs;
    s->grs = p->grs;
    s->has_grstride = (uint8_t)p->has_grstride;
    s->grstride = p->grstride;
    if (want_rpc) {
      /* ..., <ints>, "<collective>", <splits>, <splits>, <world size> */
      ssize_t last = -1;
      for (size_t i = 0; i < p->n_targs; i++)
        if (p->targs[i].kind == 2) last = (ssize_t)i;
      if (last >= 0) {
        targ *t = &p->targs[last];
        uint32_t id = strtab_intern(&p->st, p->targ_str.s + t->off, t->len);
        if (id == STRTAB_OOM) return ht_oom(p);
        s->coll_name = id;
        for (ssize_t i = last - 1; i >= 0 && s->n_rpc_int < 3 && p->targs[i].kind == 1; i--)
          s->rpc_int[s->n_rpc_int++] = p->targs[i].v;
      }
    }
    if (want_pg) {
      for (size_t i = 0; i < p->n_targs; i++) {
        if (p->targs[i].kind != 2) continue;
        char *js = bpool_alloc(&p->pool, p->targs[i].len + 1);
        if (!js) return ht_oom(p);
        memcpy(js, p->targ_str.s + p->targs[i].off, p->targs[i].len);
        js[p->targs[i].len] = 0;
        s->pg_json = js;
        break;
      }
    }
    if (p->has_sync) {
      uint64_t *v = bpool_alloc8(&p->pool, p->n_sync * sizeof *v);
      if (!v) return ht_oom(p);
      if (p->n_sync) memcpy(v, p->syncv, p->n_sync * sizeof *v);
      s->sync = v;
      s->n_sync = (uint32_t)p->n_sync;
    }
  }
  /* the blob */
  strbuf *b = &p->scratch;
  b->n = 0;
  if (p->mode == HT_MODE_CONVERT) {
    if (!keep_conv(p)) return 0;
  } else {
    strbuf_puts(b, "\"inputs\":");
    put_io_json(p, b, 0);
    strbuf_puts(b, ",\"outputs\":");
    put_io_json(p, b, 1);
    strbuf_puts(b, ",\"attrs\":[");
    if (c->flags & HT_FLAT) {
      static const char *const types[HT_NATTR] = {"uint64", "uint64", "int64", "uint64", "uint64", "uint64"};
      for (int k = 0; k < HT_NATTR; k++) {
        if (!(c->flags & (HT_ATTR0 << k))) continue;
        char t[24];
        int tl = snprintf(t, sizeof t, "%lld", (long long)c->a[k]);
        link_attr_json(p, ht_attr_names[k], types[k], t, (size_t)tl, 0);
      }
      if (c->flags & HT_SCHEMA)
        link_attr_json(p, "op_schema", "string", strtab_str(&p->st, c->op_schema),
                       strtab_len(&p->st, c->op_schema), 1);
    }
    strbuf_put(b, p->attrs_json.s, p->attrs_json.n);
    strbuf_putc(b, ']');
    strbuf_put(b, p->others.s, p->others.n);
    if (b->oom || p->attrs_json.oom || p->others.oom) return ht_oom(p);
    for (int i = 0; i < HT_IO_N; i++)
      if (p->io[i].oom) return ht_oom(p);
    if (b->n > UINT32_MAX) return ht_node_fail(p, "%s", "node text too large (over 4 GiB)");
    unsigned char *blob = (unsigned char *)bpool_alloc(&p->pool, b->n ? b->n : 1);
    if (!blob) return ht_oom(p);
    if (b->n) memcpy(blob, b->s, b->n);
    c->blob = blob;
    c->blob_len = (uint32_t)b->n;
  }
  if (BIGMEM_ROOM(p->nodes, p->n, p->cap, 1)) return ht_oom(p);
  p->nodes[p->n++] = *c;
  return 1;
}

/* The value that follows is IOInfo text k (HT_IO_*). */
void ht_io_capture(hparse *p, int k, int flags) {
  p->io_set[k] = 1;
  p->io[k].n = 0;
  ht_cap_start(p, &p->io[k], flags);
}

/* The value that follows is the values list of the inputs (w 0) or the
 * outputs (w 1); the inputs' arguments are also collected. */
void ht_values_capture(hparse *p, int w) {
  int repr = p->mode == HT_MODE_CONVERT ? CAP_REPR : 0;
  ht_io_capture(p, w * 3, repr | (w == 0 ? CAP_TENSORS | CAP_ARGS : 0));
  if (w == 0) p->n_argv = 0, p->n_targs = 0, p->targ_str.n = 0;
  p->want = W_IO_VALUES;
}

/* A structured attribute value: kept as JSON (link), ignored (convert). */
int ht_attr_value_open(hparse *p, int is_map) {
  p->a_kind = AV_COMPLEX;
  p->a_val.n = 0;
  p->want = W_A_OTHER;
  ht_cap_start(p, &p->a_val, 0);
  return ht_cap_open(p, is_map);
}
