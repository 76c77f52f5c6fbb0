/* canon.h - a rank's trace with its group names and peers replaced by
 * roles (private): what makes two ranks run the same graph.
 *
 * The ranks of one pipeline stage write the same nodes and differ only in
 * the groups they name (pg_name, or STAGE's legacy comm_group) and in the
 * ranks they talk to (comm_src, comm_dst). A role is one distinct value of
 * those attributes, numbered in order of first appearance in the file
 * (group names and peers separately). The canonical form is every message
 * of the file as written, except that each such attribute's value is
 * replaced by its role number: two ranks with equal canonical forms have
 * the same graph, and each runs it with the roles bound to its own
 * values. The form is read from the raw messages at I/O speed (a wire
 * walk, no decoding): the simulator classifies tens of thousands of rank
 * files with it. Anything the walk does not understand (malformed or
 * unusual wire data) is reported as such, and the caller then reads that
 * file the ordinary way, which explains what is wrong with it. */
#ifndef CHAKRA_CANON_H
#define CHAKRA_CANON_H

#include <stddef.h>
#include <stdint.h>

#include "chakra/error.h"
#include "chakra/trace.h"
#include "../util/hmap.h"

typedef struct canon {
  uint8_t *b;              /* the canonical form */
  size_t n, cap;
  int64_t *peer;           /* peer roles: their values */
  uint32_t n_peer, cap_peer;
  char *pg;                /* group roles: their names, each NUL-terminated, in order */
  size_t pg_len, pg_cap;
  uint32_t *pg_off;        /* where role i's name starts in pg */
  uint32_t n_pg, cap_pg;
  hmap pidx, gidx;         /* value -> role */
} canon;

void canon_init(canon *c);
void canon_free(canon *c);

enum { CANON_OK = 0, CANON_UNUSUAL = 1 };
/* Reads every message of r (just opened) into c, emptied first. Returns
 * CANON_OK, CANON_UNUSUAL when the bytes hold something the walk does not
 * understand, or a negative chakra error (reading, memory) with err set. */
int canon_read(canon *c, chakra_reader *r, chakra_error *err);

/* 64-bit hash of the canonical form (a lookup key; equality is memcmp). */
uint64_t canon_hash(const canon *c);

/* Group role i's name (i < c->n_pg). */
static inline const char *canon_pg(const canon *c, uint32_t i) { return c->pg + c->pg_off[i]; }

#endif
