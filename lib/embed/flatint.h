/* flatint.h - what flatread.c and flatwrite.c share (private to libchakra):
 * the attribute kinds' shapes and the one view of protobuf-c's list
 * messages. */
#ifndef CHAKRA_FLATINT_H
#define CHAKRA_FLATINT_H

#include "chakra/flat.h"
#include "chakra/trace.h"

/* Every XxxList message of the schema is {base, n_values, values}: read
 * and filled through this one view, the element type told by the kind. */
typedef struct flat_anylist {
  ProtobufCMessage base;
  size_t n_values;
  void *values;
} flat_anylist;

static inline int flat_kind_valid(int32_t k) { return k == CHAKRA_AV_NONE || (k >= 3 && k <= 32); }
/* The list kinds are the even field numbers. */
static inline int flat_kind_is_list(int32_t k) { return k >= 3 && k <= 32 && k % 2 == 0; }
/* The element kind of a list kind, or the kind itself. */
static inline int32_t flat_elem_kind(int32_t k) { return flat_kind_is_list(k) ? k - 1 : k; }
static inline int flat_kind_is_text(int32_t k) {
  k = flat_elem_kind(k);
  return k == CHAKRA_AV_STRING || k == CHAKRA_AV_BYTES;
}

#endif
