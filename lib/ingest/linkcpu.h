/* linkcpu.h - the Kineto trace's CPU ops for chakra link (private to
 * lib/ingest): per thread in start order, each with its enclosing op and
 * its exclusive duration, and the queries the later steps ask of that
 * time line. */
#ifndef CHAKRA_INGEST_LINKCPU_H
#define CHAKRA_INGEST_LINKCPU_H

#include "link.h"

/* Fills L->cpu and L->thr from L->k (and the report's CPU-op count). */
int link_cpu_build(linker *L);
/* The thread with this id, or NULL. */
const link_thread *link_cpu_thread(const linker *L, int64_t tid);
/* Last op of thread t starting at or before ts (before it when strict),
 * as a cpu[] index, or LINK_NONE. */
uint32_t link_cpu_last_before(const linker *L, const link_thread *t, double ts, int strict);
/* The innermost op of thread t running at ts (*inside = 1), else the last
 * one that started before it (the reference's rule); LINK_NONE if none. */
uint32_t link_cpu_op_at(const linker *L, const link_thread *t, double ts, int *inside);
/* The nearest enclosing op of c (c included) matched to a host op, or
 * LINK_NONE. */
uint32_t link_cpu_matched_up(const linker *L, uint32_t c);

#endif
