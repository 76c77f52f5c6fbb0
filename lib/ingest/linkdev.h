/* linkdev.h - device ops and dependencies for chakra link (private to
 * lib/ingest): every GPU kernel, memcpy and memset attached to the host op
 * around its launch (correlation id, else the ac2g flow arrow, then the
 * time window on the launching thread); inter-thread dependencies from
 * the time line; synchronisation calls made to wait for the device op they
 * waited for. */
#ifndef CHAKRA_INGEST_LINKDEV_H
#define CHAKRA_INGEST_LINKDEV_H

#include "link.h"

/* Fills L->gpu (and the report's device-op counts, with warnings for the
 * ops left out). */
int link_dev_attach(linker *L);
/* Fills L->itd: the host op each group of a thread's ops waits for. */
void link_dev_inter_thread(linker *L);
/* Fills L->sync: (host op, device op) pairs. */
int link_dev_sync(linker *L);

#endif
