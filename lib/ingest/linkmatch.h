/* linkmatch.h - host ops matched to Kineto CPU ops for chakra link
 * (private to lib/ingest): by "Record function id" when the Kineto trace
 * has them, else per thread by aligning names in start order. */
#ifndef CHAKRA_INGEST_LINKMATCH_H
#define CHAKRA_INGEST_LINKMATCH_H

#include "link.h"

/* 1 for the roots of the host ET (thread and process roots), which have
 * no Kineto op. */
int link_is_host_root(const hostet *h, size_t i);
/* Matches (L->k_of_host, L->cpu[].host), fills the report's counts and
 * fails when more than 1% of host ops are unmatched, unless the options
 * allow a partial link. */
int link_match(linker *L);

#endif
