/* htevents.c - the host-ET parser's yajl callbacks; see htevents.h. */
#include "htevents.h"

#include <stdlib.h>
#include <string.h>

#include "htcapture.h"
#include "htnode.h"
#include "pyrepr.h"
#include "../util/vec.h"

static int top_scalar(hparse *p, int kind, const char *s, size_t n) {
  int64_t v;
  hostet *h = p->h;
  switch (p->want) {
    case W_T_SCHEMA:
      if (kind != K_STR) return ht_fail(p, CHAKRA_EFORMAT, "byte %llu: 'schema' is not a string", (unsigned long long)ht_here(p));
      if (!ht_check_schema(p, (const unsigned char *)s, n)) return 0;
      free(h->schema);
      h->schema = strndup(s, n);
      if (!h->schema) return ht_oom(p);
      break;
    case W_T_TIME:
      if (kind != K_STR) return ht_fail(p, CHAKRA_EFORMAT, "byte %llu: 'time' is not a string", (unsigned long long)ht_here(p));
      free(h->time);
      h->time = strndup(s, n);
      if (!h->time) return ht_oom(p);
      h->has_time = 1;
      break;
    case W_T_PID:
    case W_T_START:
    case W_T_FINISH:
      if (kind != K_NUM || ht_parse_i64(s, n, &v)) {
        const char *k = p->want == W_T_PID ? "pid" : p->want == W_T_START ? "start_ts" : "finish_ts";
        return ht_fail(p, CHAKRA_EFORMAT, "byte %llu: '%s' is not an integer", (unsigned long long)ht_here(p), k);
      }
      if (p->want == W_T_PID) h->pid = v, h->has_pid = 1;
      else if (p->want == W_T_START) h->start_ts = v, h->has_start_ts = 1;
      else h->finish_ts = v, h->has_finish_ts = 1;
      break;
    case W_T_NODES:
      return ht_fail(p, CHAKRA_EFORMAT, "byte %llu: 'nodes' is not a list", (unsigned long long)ht_here(p));
    default: break;
  }
  ht_after_value(p);
  return 1;
}

static int node_scalar(hparse *p, int kind, const char *s, size_t n) {
  ht_node *c = &p->cur;
  uint64_t u;
  int64_t v;
  uint32_t id;
  switch (p->want) {
    case W_N_ID:
      if (kind != K_NUM || ht_parse_u64(s, n, &u)) return ht_node_fail(p, "%s is not a non-negative integer", "'id'");
      c->id = u;
      c->flags |= HT_ID;
      break;
    case W_N_PARENT:
      if (kind == K_NULL) break;
      if (kind != K_NUM || ht_parse_u64(s, n, &u))
        return ht_node_fail(p, "%s is not a node id", c->flags & HT_FLAT ? "'parent'" : "'ctrl_deps'");
      c->parent = u;
      c->flags |= HT_PARENT;
      break;
    case W_N_NAME:
    case W_N_CAT:
    case W_N_PG:
    case W_N_FLAT_SCHEMA:
      if (kind == K_NULL && p->want != W_N_NAME) break;
      if (kind != K_STR && !(p->want == W_N_PG && kind == K_NUM)) {
        static const char *const k[] = {"'name'", "'cat'", "'pg_name'", "'op_schema'"};
        int i = p->want == W_N_NAME ? 0 : p->want == W_N_CAT ? 1 : p->want == W_N_PG ? 2 : 3;
        return ht_node_fail(p, "%s is not a string", k[i]);
      }
      id = strtab_intern(&p->st, s, n);
      if (id == STRTAB_OOM) return ht_oom(p);
      if (p->want == W_N_NAME) c->name = id, c->flags |= HT_NAME;
      else if (p->want == W_N_CAT) c->cat = id, c->flags |= HT_GPU;
      else if (p->want == W_N_PG) {
        if (!(c->flags & HT_PG_ATTR)) c->pg_name = id;
      } else c->op_schema = id, c->flags |= HT_SCHEMA | HT_FLAT;
      break;
    case W_N_INCL:
    case W_N_EXCL:
    case W_N_TS:
      if (kind == K_NULL) break;
      if (kind != K_NUM) {
        const char *k = p->want == W_N_INCL ? "'inclusive_dur'" : p->want == W_N_EXCL ? "'exclusive_dur'" : "'ts'";
        return ht_node_fail(p, "%s is not a number", k);
      }
      /* inclusive_dur is only checked: nothing reads it */
      if (p->want == W_N_EXCL) c->excl = ht_parse_double(s, n), c->flags |= HT_EXCL;
      else if (p->want == W_N_TS) c->ts = ht_parse_double(s, n), c->flags |= HT_TS;
      break;
    case W_N_ITD:
      if (kind == K_NULL) break;
      if (kind != K_NUM || ht_parse_i64(s, n, &v)) return ht_node_fail(p, "%s is not a node id", "'inter_thread_dep'");
      c->itd = v;
      if (v) c->flags |= HT_ITD;
      break;
    case W_N_STREAM:
    case W_N_DEVICE:
      if (kind == K_NULL) break;
      if (kind != K_NUM || ht_parse_i64(s, n, &v))
        return ht_node_fail(p, "%s is not an integer", p->want == W_N_STREAM ? "'stream'" : "'device'");
      if (p->want == W_N_STREAM) c->stream = v;
      else c->device = (int32_t)v;
      break;
    case W_N_SYNC:
      if (kind != K_NULL) return ht_node_fail(p, "%s is not a list", "'sync_dep'");
      break;
    case W_N_INPUTS:
    case W_N_OUTPUTS:
      return ht_node_fail(p, "%s is neither an object nor a list", p->want == W_N_INPUTS ? "'inputs'" : "'outputs'");
    case W_N_ATTRS:
      if (kind == K_NULL) break;
      return ht_node_fail(p, "%s is not a list", "'attrs'");
    default:
      if (p->want >= W_N_FLAT_INT0 && p->want < W_N_FLAT_INT0 + HT_NATTR) {
        int k = p->want - W_N_FLAT_INT0;
        if (kind != K_NUM || ht_parse_i64(s, n, &v)) {
          if (kind == K_NUM && !ht_parse_u64(s, n, &u)) v = (int64_t)u;
          else return ht_node_fail(p, "'%s' is not an integer", ht_attr_names[k]);
        }
        c->a[k] = v;
        c->flags |= (HT_ATTR0 << k) | HT_FLAT;
      }
      break;
  }
  ht_after_value(p);
  return 1;
}

static int attr_scalar(hparse *p, int kind, const char *s, size_t n) {
  switch (p->want) {
    case W_A_NAME:
      if (kind != K_STR) return ht_node_fail(p, "%s", "an attribute name is not a string");
      p->a_name.n = 0;
      strbuf_put(&p->a_name, s, n);
      p->a_has_name = 1;
      break;
    case W_A_TYPE:
      p->a_type.n = 0;
      if (kind == K_STR) strbuf_put(&p->a_type, s, n);
      break;
    case W_A_VALUE:
      p->a_val.n = 0;
      if (kind == K_NUM) {
        p->a_kind = json_number_is_int(s, n) ? AV_INT : AV_DOUBLE;
        strbuf_put(&p->a_val, s, n);
      } else if (kind == K_STR) {
        p->a_kind = AV_STRING;
        strbuf_put(&p->a_val, s, n);
      } else if (kind == K_TRUE || kind == K_FALSE) {
        p->a_kind = AV_BOOL;
        strbuf_puts(&p->a_val, kind == K_TRUE ? "true" : "false");
      } else {
        p->a_kind = AV_NULL;
        strbuf_puts(&p->a_val, "null");
      }
      break;
    default: break;
  }
  ht_after_value(p);
  return 1;
}

static int on_scalar(hparse *p, int kind, const char *s, size_t n) {
  if (p->capd) return ht_cap_scalar(p, kind, s, n);
  switch (p->want) {
    case W_T_SCHEMA: case W_T_PID: case W_T_TIME: case W_T_START: case W_T_FINISH: case W_T_NODES:
      return top_scalar(p, kind, s, n);
    case W_T_OTHER: case W_N_OTHER: case W_IO_VALUES: case W_IO_SHAPES: case W_IO_TYPES:
    case W_IO_STRIDES: case W_IO_OTHER: case W_N_IN_SHAPES: case W_N_IN_TYPES: case W_N_OUT_SHAPES:
    case W_N_OUT_TYPES:
      /* a captured value that happens to be a scalar */
      ht_cap_scalar(p, kind, s, n);
      ht_after_value(p);
      return 1;
    case W_A_NAME: case W_A_TYPE: case W_A_VALUE: case W_A_OTHER:
      return attr_scalar(p, kind, s, n);
    case W_N_EXTRA: {
      int k = kind == K_NUM ? (json_number_is_int(s, n) ? AV_INT : AV_DOUBLE)
              : kind == K_STR ? AV_STRING : kind == K_NULL ? AV_NULL : AV_BOOL;
      const char *v = kind == K_TRUE ? "true" : kind == K_FALSE ? "false" : s;
      size_t vl = kind == K_TRUE ? 4 : kind == K_FALSE ? 5 : n;
      if (!ht_add_extra(p, p->a_name.s ? p->a_name.s : "", p->a_name.n, k, v, vl)) return 0;
      ht_after_value(p);
      return 1;
    }
    case W_SYNC_ELEM: {
      uint64_t u;
      if (kind != K_NUM || ht_parse_u64(s, n, &u)) return ht_node_fail(p, "%s", "'sync_dep' holds a value that is not a node id");
      uint64_t *v = VEC_PUSH(p->syncv, p->n_sync, p->cap_sync);
      if (!v) return ht_oom(p);
      *v = u;
      ht_after_value(p);
      return 1;
    }
    case W_PARENT_ELEM: {
      uint64_t u;
      if (kind != K_NUM || ht_parse_u64(s, n, &u)) return ht_node_fail(p, "%s", "'ctrl_deps' holds a value that is not a node id");
      if (p->n_parents++) return ht_node_fail(p, "%s", "'ctrl_deps' lists more than one parent");
      p->cur.parent = u;
      p->cur.flags |= HT_PARENT;
      ht_after_value(p);
      return 1;
    }
    case W_NODE:
      return ht_fail(p, CHAKRA_EFORMAT, "byte %llu: an element of 'nodes' is not an object", (unsigned long long)ht_here(p));
    case W_DOC:
      return ht_fail(p, CHAKRA_EFORMAT, "byte %llu: the document is not a JSON object", (unsigned long long)ht_here(p));
    case W_ATTR:
      return ht_node_fail(p, "%s", "an entry of 'attrs' is not an object");
    default:
      if (p->want >= W_N_ID && p->want <= W_N_OUT_TYPES) return node_scalar(p, kind, s, n);
      return ht_fail(p, CHAKRA_EFORMAT, "byte %llu: unexpected value", (unsigned long long)ht_here(p));
  }
}

static int cb_null(void *ctx) { return on_scalar(ctx, K_NULL, NULL, 0); }
static int cb_bool(void *ctx, int v) { return on_scalar(ctx, v ? K_TRUE : K_FALSE, NULL, 0); }
static int cb_number(void *ctx, const char *s, size_t n) { return on_scalar(ctx, K_NUM, s, n); }
static int cb_string(void *ctx, const unsigned char *s, size_t n) {
  return on_scalar(ctx, K_STR, (const char *)s, n);
}

#define KEY(lit) (n == sizeof(lit) - 1 && memcmp(s, lit, sizeof(lit) - 1) == 0)

static int cb_map_key(void *ctx, const unsigned char *us, size_t n) {
  hparse *p = ctx;
  if (p->capd) return ht_cap_key(p, us, n);
  const char *s = (const char *)us;
  switch (p->fr[p->depth - 1]) {
    case F_TOP:
      if (KEY("schema")) p->want = W_T_SCHEMA;
      else if (KEY("nodes")) p->want = W_T_NODES;
      else if (KEY("pid")) p->want = W_T_PID;
      else if (KEY("time")) p->want = W_T_TIME;
      else if (KEY("start_ts")) p->want = W_T_START;
      else if (KEY("finish_ts")) p->want = W_T_FINISH;
      else {
        p->want = W_T_OTHER;
        if (p->mode == HT_MODE_LINK) {
          if (p->top_extra.n) strbuf_putc(&p->top_extra, ',');
          json_str(&p->top_extra, us, n);
          strbuf_putc(&p->top_extra, ':');
          ht_cap_start(p, &p->top_extra, 0);
        } else {
          ht_cap_start(p, NULL, 0);
        }
      }
      return 1;
    case F_NODE: {
      int w = W_N_OTHER;
      static const struct { const char *k; int w; } keys[] = {
          {"id", W_N_ID}, {"name", W_N_NAME}, {"ctrl_deps", W_N_PARENT}, {"inputs", W_N_INPUTS},
          {"outputs", W_N_OUTPUTS}, {"attrs", W_N_ATTRS}, {"parent", W_N_PARENT},
          {"ts", W_N_TS}, {"cat", W_N_CAT}, {"inclusive_dur", W_N_INCL}, {"exclusive_dur", W_N_EXCL},
          {"inter_thread_dep", W_N_ITD}, {"sync_dep", W_N_SYNC}, {"stream", W_N_STREAM},
          {"device", W_N_DEVICE}, {"pg_name", W_N_PG}, {"op_schema", W_N_FLAT_SCHEMA},
          {"rf_id", W_N_FLAT_INT0 + HT_A_RF_ID}, {"fw_parent", W_N_FLAT_INT0 + HT_A_FW_PARENT},
          {"seq_id", W_N_FLAT_INT0 + HT_A_SEQ_ID}, {"scope", W_N_FLAT_INT0 + HT_A_SCOPE},
          {"tid", W_N_FLAT_INT0 + HT_A_TID}, {"fw_tid", W_N_FLAT_INT0 + HT_A_FW_TID},
          {"input_shapes", W_N_IN_SHAPES}, {"input_types", W_N_IN_TYPES},
          {"output_shapes", W_N_OUT_SHAPES}, {"output_types", W_N_OUT_TYPES}};
      for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (strlen(keys[i].k) == n && memcmp(keys[i].k, s, n) == 0) {
          w = keys[i].w;
          break;
        }
      if (KEY("parent")) p->cur.flags |= HT_FLAT;
      p->want = w;
      int repr = p->mode == HT_MODE_CONVERT ? CAP_REPR : 0;
      switch (w) {
        case W_N_IN_SHAPES: ht_io_capture(p, HT_IO_IN_SHAPES, repr); break;
        case W_N_IN_TYPES: ht_io_capture(p, HT_IO_IN_TYPES, repr | CAP_TYPES); break;
        case W_N_OUT_SHAPES: ht_io_capture(p, HT_IO_OUT_SHAPES, repr); break;
        case W_N_OUT_TYPES: ht_io_capture(p, HT_IO_OUT_TYPES, repr); break;
        case W_N_OTHER:
          if (p->mode == HT_MODE_LINK && !KEY("ph")) {
            strbuf_putc(&p->others, ',');
            json_str(&p->others, us, n);
            strbuf_putc(&p->others, ':');
            ht_cap_start(p, &p->others, 0);
          } else if (p->mode == HT_MODE_CONVERT && !KEY("ph")) {
            /* kept as an attribute if its value is a scalar */
            p->want = W_N_EXTRA;
            p->a_name.n = 0;
            strbuf_put(&p->a_name, s, n);
            ht_cap_start(p, NULL, 0);
          } else {
            ht_cap_start(p, NULL, 0);
          }
          break;
        default: break;
      }
      return 1;
    }
    case F_IO: {
      int w = p->io_which;
      int repr = p->mode == HT_MODE_CONVERT ? CAP_REPR : 0;
      if (KEY("values")) {
        ht_values_capture(p, w);
      } else if (KEY("shapes")) {
        p->want = W_IO_SHAPES;
        ht_io_capture(p, w * 3 + 1, repr);
      } else if (KEY("types")) {
        p->want = W_IO_TYPES;
        ht_io_capture(p, w * 3 + 2, repr | (w == 0 ? CAP_TYPES : 0));
        if (w == 0) p->n_argt = 0;
      } else if (KEY("strides") && p->mode == HT_MODE_LINK) {
        p->want = W_IO_STRIDES;
        p->strides_set[w] = 1, p->strides[w].n = 0;
        ht_cap_start(p, &p->strides[w], 0);
      } else {
        p->want = W_IO_OTHER;
        ht_cap_start(p, NULL, 0);
      }
      return 1;
    }
    case F_ATTR:
      if (KEY("name")) p->want = W_A_NAME;
      else if (KEY("type")) p->want = W_A_TYPE;
      else if (KEY("value")) p->want = W_A_VALUE;
      else p->want = W_A_OTHER, ht_cap_start(p, NULL, 0);
      return 1;
    default:
      return ht_fail(p, CHAKRA_EFORMAT, "byte %llu: unexpected key", (unsigned long long)ht_here(p));
  }
}

static int is_capture_want(int w) {
  return w == W_T_OTHER || w == W_N_OTHER || w == W_N_EXTRA || w == W_IO_VALUES || w == W_IO_SHAPES || w == W_IO_TYPES ||
         w == W_IO_STRIDES || w == W_IO_OTHER || w == W_N_IN_SHAPES || w == W_N_IN_TYPES ||
         w == W_N_OUT_SHAPES || w == W_N_OUT_TYPES || w == W_A_OTHER;
}

/* An object or a list (a_kind, "a list") where p->want has no place for one. */
static int misplaced(hparse *p, const char *a_kind, const char *kind) {
  if (p->want >= W_N_ID && p->want <= W_N_OUT_TYPES)
    return ht_node_fail(p, "a member holds %s where a scalar belongs", a_kind);
  if (p->want == W_DONE) return ht_fail(p, CHAKRA_EFORMAT, "byte %llu: text after the document", (unsigned long long)ht_here(p));
  return ht_fail(p, CHAKRA_EFORMAT, "byte %llu: unexpected %s", (unsigned long long)ht_here(p), kind);
}

static int cb_start_map(void *ctx) {
  hparse *p = ctx;
  if (p->capd) return ht_cap_open(p, 1);
  if (is_capture_want(p->want)) return ht_cap_open(p, 1);
  switch (p->want) {
    case W_DOC:
      p->want = W_KEY;
      return ht_push(p, F_TOP);
    case W_NODE:
      ht_reset_node(p);
      p->at_boundary = 0;
      p->cur.offset = ht_here(p) - 1;
      p->want = W_KEY;
      return ht_push(p, F_NODE);
    case W_N_INPUTS:
    case W_N_OUTPUTS:
      p->io_which = p->want == W_N_OUTPUTS;
      p->cur.flags |= p->io_which ? HT_OUTPUTS : HT_INPUTS;
      p->want = W_KEY;
      return ht_push(p, F_IO);
    case W_ATTR:
      p->a_name.n = p->a_type.n = p->a_val.n = 0;
      p->a_kind = AV_NONE;
      p->a_has_name = 0;
      p->want = W_KEY;
      return ht_push(p, F_ATTR);
    case W_A_VALUE:
      return ht_attr_value_open(p, 1);
    case W_T_NODES:
      return ht_fail(p, CHAKRA_EFORMAT, "byte %llu: 'nodes' is not a list", (unsigned long long)ht_here(p));
    case W_SEGSTART:
      return ht_fail(p, CHAKRA_EFORMAT, "internal: segment does not start a list");
    default:
      return misplaced(p, "an object", "object");
  }
}

static int cb_end_map(void *ctx) {
  hparse *p = ctx;
  if (p->capd) return ht_cap_close(p);
  int f = p->fr[--p->depth];
  switch (f) {
    case F_NODE:
      if (!ht_finish_node(p)) return 0;
      ht_after_value(p);
      p->at_boundary = 1;
      return 1;
    case F_ATTR:
      if (!ht_finish_attr(p)) return 0;
      break;
    default: break;
  }
  ht_after_value(p);
  return 1;
}

static int cb_start_array(void *ctx) {
  hparse *p = ctx;
  if (p->capd) return ht_cap_open(p, 0);
  if (is_capture_want(p->want)) return ht_cap_open(p, 0);
  switch (p->want) {
    case W_SEGSTART:
    case W_T_NODES:
      p->want = W_NODE;
      p->seen_nodes = 1;
      return ht_push(p, F_NODES);
    case W_N_INPUTS:
    case W_N_OUTPUTS: {
      /* 1.0.1: the values list itself */
      int w = p->want == W_N_OUTPUTS;
      p->cur.flags |= (w ? HT_OUTPUTS : HT_INPUTS) | HT_FLAT;
      ht_values_capture(p, w);
      return ht_cap_open(p, 0);
    }
    case W_N_ATTRS:
      p->want = W_ATTR;
      return ht_push(p, F_ATTRS);
    case W_N_SYNC:
      p->has_sync = 1;
      p->n_sync = 0;
      p->want = W_SYNC_ELEM;
      return ht_push(p, F_SYNC);
    case W_N_PARENT:
      p->want = W_PARENT_ELEM;
      return ht_push(p, F_PARENTS);
    case W_A_VALUE:
      return ht_attr_value_open(p, 0);
    case W_DOC:
      return ht_fail(p, CHAKRA_EFORMAT, "byte %llu: the document is a list, not a host ET object", (unsigned long long)ht_here(p));
    case W_NODE:
      return ht_fail(p, CHAKRA_EFORMAT, "byte %llu: an element of 'nodes' is not an object", (unsigned long long)ht_here(p));
    default:
      return misplaced(p, "a list", "list");
  }
}

static int cb_end_array(void *ctx) {
  hparse *p = ctx;
  if (p->capd) return ht_cap_close(p);
  int f = p->fr[--p->depth];
  if (f == F_NODES) {
    p->nodes_done = 1;
    p->nodes_end = ht_here(p);
    p->at_boundary = 0;
  }
  ht_after_value(p);
  return 1;
}

const yajl_callbacks ht_callbacks = {cb_null,     cb_bool,    NULL,         NULL,
                                         cb_number,   cb_string,  cb_start_map, cb_map_key,
                                         cb_end_map,  cb_start_array, cb_end_array};
