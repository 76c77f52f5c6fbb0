/* bind.c - bindings applied on the wire; see bind.h. Field numbers are
 * et_def.proto's: Node.attr 10; AttributeProto name 1 and the value kinds
 * int32_val 7, int64_val 9, uint32_val 11, uint64_val 13, sint32_val 15,
 * sint64_val 17, fixed32_val 19, fixed64_val 21, sfixed32_val 23,
 * sfixed64_val 25, string_val 29 (3..32 are the value's oneof). */
#include "bind.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bind_ref *bind_retain(bind_ref *b) {
  if (b) atomic_fetch_add(&b->refs, 1);
  return b;
}

void bind_release(bind_ref *b) {
  if (b && atomic_fetch_sub(&b->refs, 1) == 1) b->destroy(b);
}

/* ---- the wire ---- */

static int get_varint(const uint8_t *p, size_t n, size_t *at, uint64_t *v) {
  uint64_t x = 0;
  for (unsigned s = 0; s < 70 && *at < n; s += 7) {
    uint8_t b = p[(*at)++];
    x |= (uint64_t)(b & 0x7f) << s;
    if (!(b & 0x80)) {
      *v = x;
      return 0;
    }
  }
  return -1;
}

static size_t put_varint(uint8_t *o, uint64_t v) { return (size_t)(enc_varint(o, v) - o); }

/* One field: its number, wire type, and where its value's bytes are
 * (for wire type 2 without the length). */
typedef struct field {
  uint32_t num, wt;
  uint64_t key;              /* num << 3 | wt, compared whole (two halves compared apart stall the store buffer) */
  size_t start, vstart, end; /* the whole field: [start, end); the value: [vstart, end) */
} field;

#define KEY(num, wt) ((uint64_t)(num) << 3 | (wt))

static int next_field(const uint8_t *p, size_t n, size_t *at, field *f) {
  uint64_t key, len;
  f->start = *at;
  if (get_varint(p, n, at, &key) || key >> 3 == 0 || key >> 3 > UINT32_MAX) return -1;
  f->key = key;
  f->num = (uint32_t)(key >> 3), f->wt = (uint32_t)(key & 7);
  switch (f->wt) {
    case 0:
      f->vstart = *at;
      if (get_varint(p, n, at, &len)) return -1;
      break;
    case 1:
    case 5: {
      size_t w = f->wt == 1 ? 8 : 4;
      if (n - *at < w) return -1;
      f->vstart = *at, *at += w;
      break;
    }
    case 2:
      if (get_varint(p, n, at, &len) || len > n - *at) return -1;
      f->vstart = *at, *at += (size_t)len;
      break;
    default: return -1; /* groups are not in the schema */
  }
  f->end = *at;
  return 0;
}

static int put(enc_buf *b, const void *d, size_t n) {
  enc_append(b, d, n);
  return b->oom ? -1 : 0;
}

/* ---- peers in their kinds ---- */

static int64_t le(const uint8_t *p, size_t w) {
  uint64_t v = 0;
  for (size_t i = 0; i < w; i++) v |= (uint64_t)p[i] << (8 * i);
  return (int64_t)v;
}

/* The integer a value field holds; -1 when the kind is not an integer. */
static int peer_read(const uint8_t *p, const field *f, int64_t *v) {
  uint64_t u;
  size_t at = f->vstart;
  switch (f->num) {
    case 7: case 9: case 11: case 13: case 15: case 17:
      if (f->wt != 0 || get_varint(p, f->end, &at, &u)) return -1;
      if (f->num == 7) *v = (int32_t)u;
      else if (f->num == 11) *v = (uint32_t)u;
      else if (f->num == 15) *v = (int32_t)((uint32_t)u >> 1) ^ -(int32_t)(u & 1);
      else if (f->num == 17) *v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
      else *v = (int64_t)u;
      return 0;
    case 19: case 23:
      if (f->wt != 5) return -1;
      *v = f->num == 19 ? (int64_t)(uint32_t)le(p + at, 4) : (int64_t)(int32_t)(uint32_t)le(p + at, 4);
      return 0;
    case 21: case 25:
      if (f->wt != 1) return -1;
      *v = le(p + at, 8);
      return 0;
    default: return -1;
  }
}

/* The peer a double_val, float_val or bool_val holds as the readers take
 * it (chakra_attr_as_int: a whole number, a bool as 0 or 1); -1 when it
 * holds none. No binding is written back into such a kind. */
static int peer_read_other(const uint8_t *p, const field *f, int64_t *v) {
  size_t at = f->vstart;
  uint64_t u;
  double d;
  if (f->num == 27) {
    if (f->wt != 0 || get_varint(p, f->end, &at, &u)) return -1;
    return *v = u != 0, 0;
  }
  if (f->num == 3 && f->wt == 1) {
    u = (uint64_t)le(p + at, 8);
    memcpy(&d, &u, sizeof d);
  } else if (f->num == 5 && f->wt == 5) {
    uint32_t w = (uint32_t)le(p + at, 4);
    float x;
    memcpy(&x, &w, sizeof x);
    d = x;
  } else {
    return -1;
  }
  if (!(d == floor(d)) || d < -9.2e18 || d > 9.2e18) return -1;
  return *v = (int64_t)d, 0;
}

/* The value bytes of v in f's kind into o (at most 10); 0 when the kind
 * cannot hold v. */
static size_t peer_write(const field *f, int64_t v, uint8_t *o) {
  int unsigned_kind = f->num == 11 || f->num == 13 || f->num == 19 || f->num == 21;
  int narrow = f->num == 7 || f->num == 11 || f->num == 15 || f->num == 19 || f->num == 23;
  if ((unsigned_kind && v < 0) || (narrow && (v < INT32_MIN || v > (f->num == 11 || f->num == 19 ? UINT32_MAX : INT32_MAX))))
    return 0;
  if (f->num == 15) return put_varint(o, (uint32_t)(((int32_t)v << 1) ^ ((int32_t)v >> 31)));
  if (f->num == 17) return put_varint(o, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
  if (f->wt == 0) return put_varint(o, (uint64_t)v);
  size_t w = f->wt == 5 ? 4 : 8;
  for (size_t i = 0; i < w; i++) o[i] = (uint8_t)((uint64_t)v >> (8 * i));
  return w;
}

static const char *kind_name(uint32_t num) {
  static const char *names[] = {"double_val", "double_list", "float_val", "float_list", "int32_val", "int32_list",
                                "int64_val", "int64_list", "uint32_val", "uint32_list", "uint64_val", "uint64_list",
                                "sint32_val", "sint32_list", "sint64_val", "sint64_list", "fixed32_val", "fixed32_list",
                                "fixed64_val", "fixed64_list", "sfixed32_val", "sfixed32_list", "sfixed64_val",
                                "sfixed64_list", "bool_val", "bool_list", "string_val", "string_list", "bytes_val",
                                "bytes_list"};
  return num >= 3 && num <= 32 ? names[num - 3] : "no value";
}

/* ---- one attribute ---- */

enum { A_OTHER, A_PG, A_PEER };

/* What attribute [p, p+n) is: its role and the field holding its value
 * (the last of the oneof's fields, as decoders take it). */
static int classify(const uint8_t *p, size_t n, field *value, const char **name) {
  size_t at = 0;
  field f, nm = {0};
  int have_name = 0, have_value = 0;
  while (at < n) {
    if (next_field(p, n, &at, &f)) return -1;
    if (f.key == KEY(1, 2)) nm = f, have_name = 1;
    else if (f.num >= 3 && f.num <= 32) *value = f, have_value = 1;
  }
  if (!have_name || !have_value) return A_OTHER;
  size_t len = nm.end - nm.vstart;
  const char *s = (const char *)p + nm.vstart;
  if (len == 7 && memcmp(s, "pg_name", 7) == 0) return *name = "pg_name", A_PG;
  if (len == 8 && memcmp(s, "comm_src", 8) == 0) return *name = "comm_src", A_PEER;
  if (len == 8 && memcmp(s, "comm_dst", 8) == 0) return *name = "comm_dst", A_PEER;
  return A_OTHER;
}

/* The bound value bytes of a group name; *same when unchanged. */
static int bound_group(const uint8_t *p, const field *v, const bind_map *m, const char **out, size_t *olen, int *same) {
  size_t len = v->end - v->vstart;
  char local[256], *name = len < sizeof local ? local : malloc(len + 1);
  if (!name) return CHAKRA_ENOMEM;
  memcpy(name, p + v->vstart, len);
  name[len] = 0;
  const char *g = memchr(name, 0, len) ? name : m->group(m->ctx, name);
  *same = g == name || (strlen(g) == len && memcmp(g, name, len) == 0);
  *out = g, *olen = strlen(g);
  if (name != local) free(name);
  return 0;
}

/* Appends attribute [p, p+n), bound, to out as a Node.attr field when the
 * binding changes it (*changed set); else appends nothing. */
static int bind_attr(const uint8_t *p, size_t n, const bind_map *m, enc_buf *out, int *changed, chakra_error *err) {
  field v = {0};
  const char *name = NULL;
  int role = classify(p, n, &v, &name);
  uint8_t tmp[16];
  const uint8_t *val = NULL;
  size_t vlen = 0;
  int same = 1;
  if (role == A_PG && v.num == 29) {
    const char *g;
    int rc = bound_group(p, &v, m, &g, &vlen, &same);
    if (rc) return chakra_error_set(err, rc, "out of memory");
    val = (const uint8_t *)g;
  } else if (role == A_PEER) {
    int64_t old;
    if (peer_read(p, &v, &old) == 0) {
      int64_t nv = old < INT32_MIN || old > INT32_MAX ? old : m->peer(m->ctx, (int32_t)old);
      same = nv == old;
      if (!same && !(vlen = peer_write(&v, nv, tmp)))
        return chakra_error_set(err, CHAKRA_EFORMAT, "%s in a %s cannot hold the bound peer %lld", name,
                                kind_name(v.num), (long long)nv);
      val = tmp;
    } else if (peer_read_other(p, &v, &old) == 0 && old >= INT32_MIN && old <= INT32_MAX &&
               m->peer(m->ctx, (int32_t)old) != old) {
      /* the readers take it as a peer, and the rank's peer is another */
      return chakra_error_set(err, CHAKRA_EFORMAT, "%s in a %s cannot hold the bound peer %d (write it as an integer)",
                              name, kind_name(v.num), m->peer(m->ctx, (int32_t)old));
    }
  }
  if (same || !val) return 0;
  /* the attribute with its value field replaced, framed as field 10 */
  uint8_t key[10], vl[10], al[10];
  size_t klen = put_varint(key, (uint64_t)v.num << 3 | v.wt);
  size_t vllen = v.wt == 2 ? put_varint(vl, vlen) : 0;
  size_t alen = v.start + klen + vllen + vlen + (n - v.end);
  size_t allen = put_varint(al, alen);
  uint8_t tag = 10 << 3 | 2;
  if (put(out, &tag, 1) || put(out, al, allen) || put(out, p, v.start) || put(out, key, klen) || put(out, vl, vllen) ||
      put(out, val, vlen) || put(out, p + v.end, n - v.end))
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  *changed = 1;
  return 0;
}

int bind_node(const uint8_t *msg, size_t len, const bind_map *m, enc_buf *out, const uint8_t **res, size_t *rlen,
              chakra_error *err) {
  *res = msg, *rlen = len;
  out->n = 0;
  size_t at = 0, copied = 0; /* msg[0, copied) is in out; nothing is copied before the first change */
  field f;
  while (at < len && next_field(msg, len, &at, &f) == 0) {
    if (f.key != KEY(10, 2)) continue;
    size_t mark = out->n;
    if (put(out, msg + copied, f.start - copied)) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    int changed = 0;
    int rc = bind_attr(msg + f.vstart, f.end - f.vstart, m, out, &changed, err);
    if (rc) return rc;
    if (!changed) {
      out->n = mark; /* the attribute stays where it is, copied with the next run */
      continue;
    }
    copied = f.end;
  }
  /* a message that stops parsing keeps the rest as it is: its decoder says what is wrong */
  if (!copied) return 0;
  if (put(out, msg + copied, len - copied)) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  *res = out->p, *rlen = out->n;
  return 0;
}

int bind_file(const uint8_t *p, size_t n, const bind_map *m, enc_buf *scratch, enc_buf *out, chakra_error *err) {
  size_t at = 0;
  for (int first = 1; at < n; first = 0) {
    uint64_t len;
    if (get_varint(p, n, &at, &len) || len > n - at)
      return chakra_error_set(err, CHAKRA_EFORMAT, "offset %zu: a message's length runs past the end", at);
    const uint8_t *res = p + at;
    size_t rlen = (size_t)len;
    int rc = first ? 0 : bind_node(p + at, rlen, m, scratch, &res, &rlen, err);
    if (rc) return rc;
    enc_append_framed(out, res, rlen);
    at += (size_t)len;
  }
  return out->oom ? chakra_error_set(err, CHAKRA_ENOMEM, "out of memory") : 0;
}
