/* nodescan.c - walking Node messages on the wire; see nodescan.h. */
#include "nodescan.h"

#include "../trace/graphint.h"

#include <string.h>

#include "chakra/trace.h"
#include "keyhash.h"

static int varint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
  uint64_t r = 0;
  for (int s = 0; s < 64 && *p < end; s += 7) {
    uint8_t b = *(*p)++;
    r |= (uint64_t)(b & 0x7f) << s;
    if (!(b & 0x80)) {
      *v = r;
      return 0;
    }
  }
  return -1;
}

/* Skips a field of wire type wt; *body and *blen receive a length-delimited payload. */
static int skip(const uint8_t **p, const uint8_t *end, unsigned wt, const uint8_t **body, size_t *blen) {
  uint64_t v;
  switch (wt) {
    case 0: return varint(p, end, &v);
    case 1: if (end - *p < 8) return -1; *p += 8; return 0;
    case 5: if (end - *p < 4) return -1; *p += 4; return 0;
    case 2:
      if (varint(p, end, &v) || v > (uint64_t)(end - *p)) return -1;
      *body = *p, *blen = (size_t)v;
      *p += v;
      return 0;
    default: return -1;
  }
}

/* Adds the dependency ids of one occurrence (packed or single) to an
 * order-free hash and a count. */
static int deps(const uint8_t *body, size_t blen, unsigned wt, uint64_t single, uint64_t *h, uint32_t *n) {
  if (wt == 0) {
    *h += hmap_mix(single + 1);
    (*n)++;
    return 0;
  }
  const uint8_t *q = body, *e = body + blen;
  while (q < e) {
    uint64_t v;
    if (varint(&q, e, &v)) return -1;
    *h += hmap_mix(v + 1);
    (*n)++;
  }
  return 0;
}

int nodescan_parse(const uint8_t *p, size_t len, nodescan *o, int want) {
  memset(o, 0, sizeof *o);
  const uint8_t *end = p + len;
  while (p < end) {
    uint64_t tag, v = 0;
    if (varint(&p, end, &tag)) return -1;
    unsigned field = (unsigned)(tag >> 3), wt = (unsigned)(tag & 7);
    const uint8_t *start = p, *body = NULL;
    size_t blen = 0;
    if (wt == 0) {
      if (varint(&p, end, &v)) return -1;
    } else if (skip(&p, end, wt, &body, &blen)) {
      return -1;
    }
    switch (field) {
      case 1: o->id = v; break;
      case 2: if (wt == 2) o->name = (const char *)body, o->name_len = blen; break;
      case 3: o->type = v; break;
      case 4: if (want && deps(body, blen, wt, v, &o->h_ctrl, &o->n_ctrl)) return -1; break;
      case 5: if (want && deps(body, blen, wt, v, &o->h_data, &o->n_data)) return -1; break;
      case 6: o->start_time = v; break;
      case 7: o->duration = v; break;
      case 8: case 9:
        if (want) o->h_io = keyhash_fast(start, (size_t)(p - start), o->h_io + field);
        break;
      case 10:
        o->n_attr++;
        if (want) o->h_attr = keyhash_fast(start, (size_t)(p - start), o->h_attr + 1);
        break;
      default:
        if (want) o->h_other = keyhash_fast(start, (size_t)(p - start), o->h_other + tag);
        break;
    }
  }
  return 0;
}

int nodescan_file(const char *path, int want, nodescan_fn fn, void *ctx, chakra_error *err) {
  chakra_reader *r;
  int rc = chakra_reader_open(&r, path, NULL, err);
  return rc ? rc : nodescan_reader(r, want, fn, ctx, err);
}

int nodescan_graph(const chakra_graph *g, int want, nodescan_fn fn, void *ctx, chakra_error *err) {
  chakra_reader *r;
  int rc = graph_open_reader(g, &r, err);
  return rc ? rc : nodescan_reader(r, want, fn, ctx, err);
}

int nodescan_reader(chakra_reader *r, int want, nodescan_fn fn, void *ctx, chakra_error *err) {
  const char *path = chakra_reader_path(r);
  int rc;
  const uint8_t *data;
  size_t len;
  uint32_t i = 0;
  nodescan n;
  while ((rc = chakra_reader_next_raw(r, &data, &len, err)) == 1) {
    if (nodescan_parse(data, len, &n, want)) {
      rc = chakra_error_set(err, CHAKRA_EFORMAT, "%s: node at offset %llu does not parse", path,
                            (unsigned long long)chakra_reader_message_offset(r));
      break;
    }
    if ((rc = fn(ctx, i++, &n, data, len)) != 0) break;
  }
  chakra_reader_close(r);
  return rc;
}
