/* htnode.h - one host-ET node assembled from the parser's events (private
 * to the host-ET reader): frames, the node's attributes, its inputs and
 * outputs, the side information of the few nodes that need it, and the
 * record appended when the node's object closes. */
#ifndef CHAKRA_INGEST_HTNODE_H
#define CHAKRA_INGEST_HTNODE_H

#include "htparse.h"

/* Enters frame f (1, or 0 when nested too deep). */
int ht_push(hparse *p, int f);
/* What comes after a value in the current frame. */
void ht_after_value(hparse *p);
/* A new node begins. */
void ht_reset_node(hparse *p);
/* convert: a scalar attribute or unknown member kept as a Chakra
 * attribute (AV_* kind). */
int ht_add_extra(hparse *p, const char *nm, size_t nl, int kind, const char *v, size_t vl);
/* An attrs entry, a node: complete (1, or 0 after an error). */
int ht_finish_attr(hparse *p);
int ht_finish_node(hparse *p);
/* The value that follows is IOInfo text k (HT_IO_*). */
void ht_io_capture(hparse *p, int k, int flags);
/* The value that follows is the values list of the inputs (w 0) or the
 * outputs (w 1). */
void ht_values_capture(hparse *p, int w);
/* A structured attribute value begins. */
int ht_attr_value_open(hparse *p, int is_map);

#endif
