/* canon.c - canonical forms of rank traces; see canon.h. */
#include "canon.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/vec.h"

/* Wire types and the fields the walk looks into. */
enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };
enum { NODE_ATTR = 10, ATTR_NAME = 1, ATTR_DOC = 2 };
/* The walk's own failures (apart from the reader's chakra codes). */
enum { WALK_BAD = -100, WALK_OOM = -101 };

void canon_init(canon *c) { memset(c, 0, sizeof *c); }

void canon_free(canon *c) {
  free(c->b);
  free(c->peer);
  free(c->pg);
  free(c->pg_off);
  hmap_free(&c->pidx);
  hmap_free(&c->gidx);
  memset(c, 0, sizeof *c);
}

/* ---- output ---- */

static int put(canon *c, const void *d, size_t n) {
  if (VEC_ROOM(c->b, c->n, c->cap, n)) return -1;
  memcpy(c->b + c->n, d, n);
  c->n += n;
  return 0;
}

static int put_varint(canon *c, uint64_t v) {
  uint8_t t[10];
  size_t k = 0;
  do {
    t[k] = (uint8_t)(v & 0x7f);
    v >>= 7;
    if (v) t[k] |= 0x80;
    k++;
  } while (v);
  return put(c, t, k);
}

/* ---- wire ---- */

static inline int get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
  if (*p < end && **p < 0x80) { /* most tags and lengths: one byte */
    *v = *(*p)++;
    return 0;
  }
  uint64_t x = 0;
  for (unsigned s = 0; *p < end && s < 64; s += 7) {
    uint8_t b = *(*p)++;
    x |= (uint64_t)(b & 0x7f) << s;
    if (!(b & 0x80)) {
      *v = x;
      return 0;
    }
  }
  return -1;
}

/* Steps over one field's value; *val and *vlen receive a varint's value or
 * a length-delimited field's bytes. */
static inline int get_value(const uint8_t **p, const uint8_t *end, unsigned wt, uint64_t *val, const uint8_t **data,
                     size_t *vlen) {
  switch (wt) {
    case WT_VARINT: return get_varint(p, end, val);
    case WT_I64:
      if (end - *p < 8) return -1;
      *p += 8;
      return 0;
    case WT_I32:
      if (end - *p < 4) return -1;
      *p += 4;
      return 0;
    case WT_LEN:
      if (get_varint(p, end, val) || *val > (uint64_t)(end - *p)) return -1;
      *data = *p;
      *vlen = (size_t)*val;
      *p += *vlen;
      return 0;
    default: return -1; /* groups: not in the schema */
  }
}

/* ---- roles ---- */

static const char *pg_name_of(const void *ctx, uint32_t r, size_t *len) {
  const canon *c = ctx;
  const char *s = c->pg + c->pg_off[r];
  *len = strlen(s);
  return s;
}

/* The role of peer value v, added when new; UINT32_MAX out of memory. */
static uint32_t peer_role(canon *c, int64_t v) {
  uint32_t r = hmap_get_u64(&c->pidx, (uint64_t)v);
  if (r != HMAP_NONE) return r;
  int oom = 0;
  if (VEC_ROOM(c->peer, c->n_peer, c->cap_peer, 1) || (hmap_put_u64(&c->pidx, (uint64_t)v, c->n_peer, &oom), oom))
    return UINT32_MAX;
  c->peer[c->n_peer] = v;
  return c->n_peer++;
}

static uint32_t pg_role(canon *c, const char *s, size_t n) {
  uint64_t h = hmap_hash_str(s, n);
  uint32_t r = hmap_find_str(&c->gidx, h, s, n, pg_name_of, c);
  if (r != HMAP_NONE) return r;
  if (c->pg_len + n + 1 > UINT32_MAX || VEC_ROOM(c->pg_off, c->n_pg, c->cap_pg, 1) ||
      VEC_ROOM(c->pg, c->pg_len, c->pg_cap, n + 1) || hmap_add(&c->gidx, h, c->n_pg))
    return UINT32_MAX;
  c->pg_off[c->n_pg] = (uint32_t)c->pg_len;
  memcpy(c->pg + c->pg_len, s, n);
  c->pg[c->pg_len + n] = 0;
  c->pg_len += n + 1;
  return c->n_pg++;
}

/* ---- attributes ---- */

/* What an attribute with a role-bearing name holds; ROLE_NONE: write it
 * as it is. */
enum { ROLE_NONE, ROLE_PG, ROLE_GROUP_INT, ROLE_PEER };

static int role_kind(const uint8_t *name, size_t n) {
#define IS(lit) (n == sizeof lit - 1 && memcmp(name, lit, n) == 0)
  if (IS("pg_name")) return ROLE_PG;
  if (IS("comm_group")) return ROLE_GROUP_INT;
  if (IS("comm_src") || IS("comm_dst")) return ROLE_PEER;
  return ROLE_NONE;
#undef IS
}

/* The integer an attribute's varint value field stands for, as the
 * attribute reader takes it; 0 when the field is not such a kind. */
static int attr_int(unsigned field, uint64_t v, int64_t *out) {
  switch (field) {
    case 7: *out = (int32_t)(uint32_t)v; return 1;                                 /* int32 */
    case 9: *out = (int64_t)v; return 1;                                           /* int64 */
    case 11: *out = (uint32_t)v; return 1;                                         /* uint32 */
    case 13: if (v > INT64_MAX) return 0; *out = (int64_t)v; return 1;             /* uint64 */
    case 15: *out = (int32_t)((uint32_t)v >> 1 ^ -(uint32_t)(v & 1)); return 1;    /* sint32 */
    case 17: *out = (int64_t)(v >> 1 ^ -(v & 1)); return 1;                        /* sint64 */
    default: return 0;
  }
}

/* An attribute's name (the last name field, as protobuf-c keeps it):
 * whether it is a group name or peer. */
static int attr_role_kind(const uint8_t *d, size_t len) {
  const uint8_t *p = d, *end = d + len, *name = NULL;
  size_t name_n = 0;
  while (p < end) {
    uint64_t tag, v;
    const uint8_t *data = NULL;
    size_t n = 0;
    if (get_varint(&p, end, &tag) || get_value(&p, end, (unsigned)(tag & 7), &v, &data, &n)) return -1;
    if (tag == (ATTR_NAME << 3 | WT_LEN)) name = data, name_n = n;
  }
  return name ? role_kind(name, name_n) : ROLE_NONE;
}

/* A group-name or peer attribute (kind): its role, and its other fields
 * as written in rest; WALK_BAD when its value is of an unusual kind
 * (every group name and peer becomes a role, or the file is read the
 * ordinary way: a value left as written could stand for a role
 * elsewhere). */
typedef struct attr_scan {
  unsigned vfield;
  uint32_t role;
} attr_scan;

static int scan_attr(canon *c, int kind, const uint8_t *d, size_t len, attr_scan *a, uint8_t *rest, size_t *rest_n) {
  const uint8_t *p = d, *end = d + len, *sval = NULL;
  size_t sval_n = 0;
  unsigned values = 0, vwt = 0;
  uint64_t ival = 0;
  *rest_n = 0;
  while (p < end) {
    const uint8_t *field = p;
    uint64_t tag, v = 0;
    const uint8_t *data = NULL;
    size_t n = 0;
    if (get_varint(&p, end, &tag) || get_value(&p, end, (unsigned)(tag & 7), &v, &data, &n)) return WALK_BAD;
    unsigned f = (unsigned)(tag >> 3);
    if (f == ATTR_NAME || f == ATTR_DOC) { /* kept as written */
      if ((tag & 7) != WT_LEN) return WALK_BAD;
      memcpy(rest + *rest_n, field, (size_t)(p - field));
      *rest_n += (size_t)(p - field);
      continue;
    }
    values++;
    a->vfield = f;
    vwt = (unsigned)(tag & 7);
    if (vwt == WT_LEN) sval = data, sval_n = n;
    else ival = v;
  }
  if (values != 1) return WALK_BAD;
  int64_t x;
  if (kind == ROLE_PG) {
    if (a->vfield != 29 || vwt != WT_LEN || memchr(sval, 0, sval_n)) return WALK_BAD; /* string_val without NULs */
    a->role = pg_role(c, (const char *)sval, sval_n);
  } else {
    if (vwt != WT_VARINT || !attr_int(a->vfield, ival, &x) || x < INT32_MIN || x > INT32_MAX) return WALK_BAD;
    if (kind == ROLE_PEER) {
      a->role = peer_role(c, x);
    } else { /* STAGE's comm_group: the group named by its decimal text */
      char t[24];
      int k = snprintf(t, sizeof t, "%lld", (long long)x);
      a->role = pg_role(c, t, (size_t)k);
    }
  }
  return a->role == UINT32_MAX ? WALK_OOM : 0;
}

/* ---- messages ---- */

static int put_run(canon *c, const uint8_t *from, const uint8_t *to) {
  return put_varint(c, (uint64_t)(to - from)) || put(c, from, (size_t)(to - from)) ? WALK_OOM : 0;
}

/* A node: its bytes as written, in runs, with each group-name or peer
 * attribute between two runs replaced by its role:
 *   run (1 attribute run)* 0,  run = length bytes,
 *   attribute = length, its other fields, value field number, role. */
static int canon_node(canon *c, const uint8_t *d, size_t len) {
  const uint8_t *p = d, *end = d + len, *run = d;
  uint8_t small[256], *rest = small;
  int rc = 0;
  while (p < end && !rc) {
    const uint8_t *field = p;
    uint64_t tag, v = 0;
    const uint8_t *data = NULL;
    size_t n = 0;
    if (get_varint(&p, end, &tag) || get_value(&p, end, (unsigned)(tag & 7), &v, &data, &n)) {
      rc = WALK_BAD;
      break;
    }
    if (tag != (NODE_ATTR << 3 | WT_LEN)) continue;
    int kind = attr_role_kind(data, n);
    if (kind == ROLE_NONE) continue;
    if (kind < 0) {
      rc = WALK_BAD;
      break;
    }
    if (n > sizeof small && rest == small && !(rest = malloc(len))) {
      rc = WALK_OOM;
      break;
    }
    attr_scan a = {0, 0};
    size_t rest_n;
    if ((rc = scan_attr(c, kind, data, n, &a, rest, &rest_n))) break;
    if ((rc = put_run(c, run, field))) break;
    rc = put_varint(c, 1) || put_varint(c, rest_n) || put(c, rest, rest_n) || put_varint(c, a.vfield) ||
                 put_varint(c, a.role)
             ? WALK_OOM
             : 0;
    run = p;
  }
  if (rest != small) free(rest);
  if (!rc) rc = put_run(c, run, end);
  if (!rc && put_varint(c, 0)) rc = WALK_OOM;
  return rc;
}

int canon_read(canon *c, chakra_reader *r, chakra_error *err) {
  c->n = 0;
  c->n_peer = c->n_pg = 0;
  c->pg_len = 0;
  hmap_clear(&c->pidx);
  hmap_clear(&c->gidx);
  /* The GlobalMetadata message as written, then the nodes. */
  int rc = chakra_reader_seek(r, 0, err);
  const uint8_t *d;
  size_t len;
  if (!rc && (rc = chakra_reader_next_raw(r, &d, &len, err)) == 1)
    rc = put_varint(c, len) || put(c, d, len) ? WALK_OOM : 0;
  while (rc == 0 && (rc = chakra_reader_next_raw(r, &d, &len, err)) == 1) rc = canon_node(c, d, len);
  if (rc == WALK_OOM || rc == CHAKRA_ENOMEM) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  /* A message the walk or the framing refuses: the ordinary reader says why. */
  return rc ? CANON_UNUSUAL : CANON_OK;
}

static uint64_t mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

/* A lookup key only (equal forms are found by comparing them whole):
 * the length and 64 words spread over the form. */
uint64_t canon_hash(const canon *c) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ c->n;
  if (c->n < 8) {
    for (size_t i = 0; i < c->n; i++) h = (h ^ c->b[i]) * 0x100000001b3ull;
    return mix(h);
  }
  for (size_t k = 0; k < 64; k++) {
    uint64_t w;
    memcpy(&w, c->b + (c->n - 8) * k / 63, 8);
    h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
  }
  return mix(h);
}
