/* buildint.h - what the workload writer needs to know about a builder
 * (private to lib/trace). */
#ifndef CHAKRA_TRACE_BUILDINT_H
#define CHAKRA_TRACE_BUILDINT_H

#include "chakra/build.h"

/* 1 if the first message in b's buffer is a GlobalMetadata. */
int builder_first_is_meta(const chakra_builder *b);

#endif
