/* htcapture.h - the host-ET parser's captures (private to the host-ET
 * reader): a value whose text is kept is rewritten as it streams by, as
 * Python repr (convert's IOInfo texts) or compact JSON (link), while the
 * arguments of the inputs are collected and tensors
 * ([id, storage, offset, numel, elem_bytes, device]) noticed to size
 * them. */
#ifndef CHAKRA_INGEST_HTCAPTURE_H
#define CHAKRA_INGEST_HTCAPTURE_H

#include "htparse.h"

/* The value that follows goes to target (NULL: parsed, not kept). */
void ht_cap_start(hparse *p, strbuf *target, int flags);
/* yajl events inside a capture (or a capture that is a scalar); 1, or 0
 * after an error. */
int ht_cap_scalar(hparse *p, int kind, const char *s, size_t n);
int ht_cap_open(hparse *p, int is_map);
int ht_cap_close(hparse *p);
int ht_cap_key(hparse *p, const unsigned char *s, size_t n);

#endif
