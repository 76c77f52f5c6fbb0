/* setwrite.h - writing a trace set out: a rank as the bytes of a file of
 * its own, the set's communicator groups as a comm-group file, and every
 * rank as per-rank files (chakra_set_unshare, include/chakra/set.h)
 * (private to libchakra; chakra share writes through here too). */
#ifndef CHAKRA_TRACE_SETWRITE_H
#define CHAKRA_TRACE_SETWRITE_H

#include "bind.h"
#include "chakra/set.h"

/* rank's file, framed messages (its GlobalMetadata, then its nodes, bound
 * when the rank is a class's), into out (replaced). */
int setwrite_rank_bytes(const chakra_set *s, uint32_t rank, enc_buf *out, chakra_error *err);

/* s's groups as a comm-group file at path: a groups file's bytes as they
 * are; a grid's rules, or a source's groups, as {"NAME": [r, ...], ...}
 * with the spacing chakra synth writes. An output (temporary, then
 * renamed). */
int setwrite_groups(const chakra_set *s, const char *path, chakra_error *err);

/* Whether s has groups to write (a file, a manifest's, a source's). */
int setwrite_has_groups(const chakra_set *s);

#endif
