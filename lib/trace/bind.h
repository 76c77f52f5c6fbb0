/* bind.h - a rank's bindings applied to its class template's nodes, on the
 * wire (private to libchakra).
 *
 * A class template is stored once for many ranks (include/chakra/set.h);
 * a rank's node is the template's with its group names (pg_name) and
 * peers (comm_src, comm_dst) replaced by the rank's own. The replacement
 * is made on the encoded message, field by field, so that everything
 * else keeps its bytes: a rank read through its binding is byte for byte
 * what a per-rank writer writes for it (chakra unshare), and a per-rank
 * file whose bytes are its class's template bound to it is proven to
 * belong to the class (chakra share). Readers, graphs and the converters
 * all bind here, so they cannot disagree about what a binding changes:
 *  - every attribute named pg_name whose value is a string_val;
 *  - every attribute named comm_src or comm_dst whose value is an integer
 *    kind (int32, int64, uint32, uint64, sint32, sint64 and the fixed
 *    kinds), re-encoded in its own kind.
 * A binding that would change a value its kind cannot hold (a peer in a
 * double_val, a negative peer in a uint32_val) is an error, never a
 * silent non-change. */
#ifndef CHAKRA_TRACE_BIND_H
#define CHAKRA_TRACE_BIND_H

#include <stddef.h>
#include <stdint.h>

#include <stdatomic.h>

#include "chakra/error.h"
#include "encode.h"

typedef struct bind_map {
  /* The rank's group for a template group name (NUL-terminated; may hold
   * no NUL of its own); return name itself to keep it. */
  const char *(*group)(const void *ctx, const char *name);
  /* The rank's peer for a template peer. */
  int32_t (*peer)(const void *ctx, int32_t peer);
  const void *ctx;
} bind_map;

/* Binds one Node message (len bytes at msg): *res and *rlen receive the
 * bound message, which is msg itself when nothing changed, else out's
 * bytes (out: scratch the caller keeps and frees, enc_buf_free). Returns 0, CHAKRA_ENOMEM, or CHAKRA_EFORMAT with err saying
 * which attribute could not take its bound value (the caller adds the
 * file and offset). A message that does not parse is returned unchanged:
 * its decoder reports it. */
int bind_node(const uint8_t *msg, size_t len, const bind_map *m, enc_buf *out, const uint8_t **res, size_t *rlen,
              chakra_error *err);

/* A whole file's framed messages [p, p + n) (its GlobalMetadata first, as
 * it is; then its nodes, each bound) appended to out, framed; scratch is
 * bind_node's. A frame that does not parse is CHAKRA_EFORMAT. */
int bind_file(const uint8_t *p, size_t n, const bind_map *m, enc_buf *scratch, enc_buf *out, chakra_error *err);

/* A binding shared by the readers and graphs of one rank (each keeps its
 * own scratch): reference-counted, released by the last holder. */
typedef struct bind_ref {
  _Atomic long refs;
  bind_map map;
  void (*destroy)(struct bind_ref *b);
} bind_ref;

bind_ref *bind_retain(bind_ref *b);
void bind_release(bind_ref *b); /* NULL is allowed */

#endif
